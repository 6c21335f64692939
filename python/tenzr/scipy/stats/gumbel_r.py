"""`tz.scipy.stats.gumbel_r`: the Gumbel (maximum) distribution, CDF exp(-exp(-z)) with
z = (x - loc) / scale; NaN for scale <= 0, as JAX's."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.neural import log1mexp

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _standard(x: Any, loc: Any, scale: Any) -> tuple[Array, Array]:
    """(z, scale), with z NaN where scale <= 0."""
    x, loc, scale = promote(tnp._float(x), loc, scale)
    return tnp.where(scale > 0, (x - loc) / scale, np.nan), scale


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """-(z + exp(-z)) - log(scale)."""
    z, scale = _standard(x, loc, scale)
    return -(z + tnp.exp(-z)) - tnp.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The density at x."""
    return tnp.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log P(X <= x) = -exp(-z)."""
    return -tnp.exp(-_standard(x, loc, scale)[0])


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X <= x)."""
    return tnp.exp(logcdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X > x) = -expm1(-exp(-z)), to its relative precision in the upper tail (JAX's
    1 - exp(-exp(-z)) is 0 from z = 17 in float32)."""
    return -tnp.expm1(-tnp.exp(-_standard(x, loc, scale)[0]))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log P(X > x) = log1mexp(exp(-z))."""
    return log1mexp(tnp.exp(-_standard(x, loc, scale)[0]))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The quantile loc - scale log(-log p), NaN outside (0, 1)."""
    p, loc, scale = promote(tnp._float(p), loc, scale)
    inside = (p > 0) & (p < 1)
    return tnp.where(inside, loc - scale * tnp.log(-tnp.log(tnp.where(inside, p, 0.5))), np.nan)


check_arguments(globals(), "tz.scipy.stats.gumbel_r.")
