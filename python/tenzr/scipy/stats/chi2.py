"""`tz.scipy.stats.chi2`: the chi-squared distribution with `df` degrees of freedom (a gamma
distribution with shape df / 2 and scale 2)."""

from __future__ import annotations

from typing import Any

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.scipy.stats import gamma

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the density at x (-inf below loc)."""
    x, df, loc, scale = promote(tnp._float(x), df, loc, scale)
    return gamma.logpdf(x, df / 2, loc, 2 * scale)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The density at x."""
    return tnp.exp(logpdf(x, df, loc, scale))


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X <= x)."""
    x, df, loc, scale = promote(tnp._float(x), df, loc, scale)
    return gamma.cdf(x, df / 2, loc, 2 * scale)


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X > x)."""
    x, df, loc, scale = promote(tnp._float(x), df, loc, scale)
    return gamma.sf(x, df / 2, loc, 2 * scale)


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log P(X <= x)."""
    return tnp.log(cdf(x, df, loc, scale))


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log P(X > x)."""
    return tnp.log(sf(x, df, loc, scale))


check_arguments(globals(), "tz.scipy.stats.chi2.")
