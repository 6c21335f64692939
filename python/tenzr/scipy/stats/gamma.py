"""`tz.scipy.stats.gamma`: the gamma distribution with shape `a`, shifted by `loc` and
stretched by `scale`."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.scipy import special

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


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


def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X <= x): the regularized lower incomplete gamma function of the standardized x."""
    x, a, loc, scale = promote(tnp._float(x), a, loc, scale)
    return special.gammainc(a, tnp.maximum((x - loc) / scale, 0.0))


def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X > x), computed directly (accurate in the upper tail)."""
    x, a, loc, scale = promote(tnp._float(x), a, loc, scale)
    return special.gammaincc(a, tnp.maximum((x - loc) / scale, 0.0))


def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log P(X <= x)."""
    return tnp.log(cdf(x, a, loc, scale))


def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log P(X > x)."""
    return tnp.log(sf(x, a, loc, scale))


check_arguments(globals(), "tz.scipy.stats.gamma.")
