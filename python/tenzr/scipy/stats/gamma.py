"""`tz.scipy.stats.gamma`: the gamma distribution with shape `a`, shifted by `loc` and
stretched by `scale`."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.scipy import special

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the density at x (-inf below loc)."""
    x, a, loc, scale = promote(tnp._float(x), a, loc, scale)
    y = (x - loc) / scale
    inside = y >= 0
    safe = tnp.where(inside, y, 1.0)
    out = special.xlogy(a - 1, safe) - safe - special.gammaln(a) - tnp.log(scale)
    return tnp.where(inside, out, -np.inf)


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The density at x."""
    return tnp.exp(logpdf(x, a, loc, scale))


check_arguments(globals(), "tz.scipy.stats.gamma.")
