"""`tz.scipy.stats.expon`: the exponential distribution from `loc` with mean `scale`."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.neural import log1mexp

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _standard(x: Any, loc: Any, scale: Any) -> tuple[Array, Array, Array]:
    """(z, scale, x < loc), with z = 0 below loc."""
    x, loc, scale = promote(tnp._float(x), loc, scale)
    below = x < loc
    return tnp.where(below, 0.0, (x - loc) / scale), scale, below


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """-z - log(scale), -inf below loc."""
    z, scale, below = _standard(x, loc, scale)
    return tnp.where(below, -np.inf, -z - tnp.log(scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The density at x."""
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X <= x) = -expm1(-z)."""
    return -tnp.expm1(-_standard(x, loc, scale)[0])


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log1mexp(z): to its relative precision near loc too (JAX's log1p(-sf) is not); -inf
    below loc."""
    z, _, below = _standard(x, loc, scale)
    return tnp.where(below, -np.inf, log1mexp(tnp.where(below, 1.0, z)))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log P(X > x) = -z."""
    return -_standard(x, loc, scale)[0]


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X > x) = exp(-z)."""
    return tnp.exp(logsf(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The quantile loc - scale log1p(-q) (NaN outside [0, 1])."""
    q, loc, scale = promote(tnp._float(q), loc, scale)
    return tnp.where(tnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc - scale * tnp.log1p(-q))


check_arguments(globals(), "tz.scipy.stats.expon.")
