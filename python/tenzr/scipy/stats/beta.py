"""`tz.scipy.stats.beta`: the beta distribution with shapes `a`, `b` on [loc, loc + scale]."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.scipy import special

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the density at x (-inf outside the support)."""
    x, a, b, loc, scale = promote(tnp._float(x), a, b, loc, scale)
    y = (x - loc) / scale
    inside = (y > 0) & (y < 1)
    safe = tnp.where(inside, y, 0.5)
    out = special.xlogy(a - 1, safe) + special.xlog1py(b - 1, -safe) - special.betaln(a, b) - tnp.log(scale)
    return tnp.where(inside, out, -np.inf)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The density at x."""
    return tnp.exp(logpdf(x, a, b, loc, scale))


check_arguments(globals(), "tz.scipy.stats.beta.")
