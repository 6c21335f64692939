"""`tz.scipy.stats.norm`: the normal distribution with mean `loc` and deviation `scale`."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.scipy import special

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _standard(x: Any, loc: Any, scale: Any) -> tuple[Array, Array]:
    x, loc, scale = promote(tnp._float(x), loc, scale)
    return (x - loc) / scale, scale


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the density at x."""
    z, scale = _standard(x, loc, scale)
    return -0.5 * (z * z) - tnp.log(scale) - 0.5 * np.log(2 * np.pi)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The density at x."""
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X <= x)."""
    return special.ndtr(_standard(x, loc, scale)[0])


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log P(X <= x)."""
    return special.log_ndtr(_standard(x, loc, scale)[0])


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X > x)."""
    return special.ndtr(-_standard(x, loc, scale)[0])


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log P(X > x)."""
    return special.log_ndtr(-_standard(x, loc, scale)[0])


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The quantile: x with P(X <= x) = q."""
    q, loc, scale = promote(tnp._float(q), loc, scale)
    return special.ndtri(q) * scale + loc


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """x with P(X > x) = q."""
    return ppf(1.0 - tnp._float(q), loc, scale)


check_arguments(globals(), "tz.scipy.stats.norm.")
