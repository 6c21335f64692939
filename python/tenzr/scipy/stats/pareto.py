"""`tz.scipy.stats.pareto`: the Pareto distribution with tail index `b`, from loc + scale."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.neural import log1mexp

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _log_standard(x: Any, b: Any, loc: Any, scale: Any) -> tuple[Array, Array, Array, Array]:
    """(log z with z = (x - loc) / scale, held at 0 below 1; b; scale; z < 1)."""
    x, b, loc, scale = promote(tnp._float(x), b, loc, scale)
    below = x < loc + scale
    return tnp.log(tnp.where(below, 1.0, (x - loc) / scale)), b, scale, below


def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log(b / scale) - (b + 1) log z, -inf below loc + scale."""
    log_z, b, scale, below = _log_standard(x, b, loc, scale)
    return tnp.where(below, -np.inf, tnp.log(b / scale) - (b + 1) * log_z)


def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The density at x."""
    return tnp.exp(logpdf(x, b, loc, scale))


def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log P(X > x) = -b log z (0 below loc + scale)."""
    log_z, b, _, _ = _log_standard(x, b, loc, scale)
    return -b * log_z


def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X > x) = z^-b."""
    return tnp.exp(logsf(x, b, loc, scale))


def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X <= x) = -expm1(-b log z): to its relative precision near loc + scale (1 - z^-b is
    not)."""
    return -tnp.expm1(logsf(x, b, loc, scale))


def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log P(X <= x) = log1mexp(b log z), -inf below loc + scale."""
    log_z, b, _, below = _log_standard(x, b, loc, scale)
    return tnp.where(below, -np.inf, log1mexp(tnp.where(below, 1.0, b * log_z)))


def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The quantile loc + scale (1 - q)^(-1/b) (NaN outside [0, 1])."""
    q, b, loc, scale = promote(tnp._float(q), b, loc, scale)
    out = loc + scale * tnp.exp(-tnp.log1p(-q) / b)
    return tnp.where(tnp.isnan(q) | (q < 0) | (q > 1), np.nan, out)


check_arguments(globals(), "tz.scipy.stats.pareto.")
