"""`tz.scipy.stats.beta`: the beta distribution with shapes `a`, `b` on [loc, loc + scale]."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.scipy import special

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


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


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X <= x): the regularized incomplete beta function of the standardized x."""
    x, a, b, loc, scale = promote(tnp._float(x), a, b, loc, scale)
    return special.betainc(a, b, tnp.clip((x - loc) / scale, 0.0, 1.0))


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X > x) = I_{1-y}(b, a)."""
    x, a, b, loc, scale = promote(tnp._float(x), a, b, loc, scale)
    return special.betainc(b, a, 1 - tnp.clip((x - loc) / scale, 0.0, 1.0))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log P(X <= x)."""
    return tnp.log(cdf(x, a, b, loc, scale))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log P(X > x)."""
    return tnp.log(sf(x, a, b, loc, scale))


check_arguments(globals(), "tz.scipy.stats.beta.")
