"""`tz.scipy.stats.cauchy`: the Cauchy distribution with median `loc` and half-width `scale`."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _standard(x: Any, loc: Any, scale: Any) -> tuple[Array, Array]:
    x, loc, scale = promote(tnp._float(x), loc, scale)
    return (x - loc) / scale, scale


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """-log(pi scale (1 + z²)); beyond |z| = 1 as 2 log|z| + log1p(1/z²), which z² would
    overflow (from |z| = 2e19 in float32)."""
    z, scale = _standard(x, loc, scale)
    far = tnp.abs(z) > 1
    big, small = tnp.where(far, z, 2.0), tnp.where(far, 0.0, z)  # (each branch sees z where taken)
    log_square = tnp.where(far, 2 * tnp.log(tnp.abs(big)) + tnp.log1p(1 / (big * big)), tnp.log1p(small * small))
    return -log_square - tnp.log(np.pi * scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The density at x."""
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X <= x) = atan2(1, -z) / pi: 1/2 + atan(z)/pi, to its relative precision in the lower
    tail too (where 1/2 + atan(z)/pi cancels; JAX's does)."""
    z, _ = _standard(x, loc, scale)
    return tnp.arctan2(tnp.ones_like(z), -z) / np.pi


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log P(X <= x)."""
    return tnp.log(cdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X > x) = atan2(1, z) / pi."""
    z, _ = _standard(x, loc, scale)
    return tnp.arctan2(tnp.ones_like(z), z) / np.pi


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log P(X > x)."""
    return tnp.log(sf(x, loc, scale))


def _standard_ppf(q: Array) -> Array:
    """tan(pi (q - 1/2)), with the tails as cotangents of pi q and pi (1 - q): near 0 and 1,
    q - 1/2 keeps too few of q's digits, and tan near its pole magnifies the error."""
    low, high = q < 0.25, q > 0.75
    cot = 1 / tnp.tan(np.pi * tnp.where(low, q, tnp.where(high, 1 - q, 0.25)))
    middle = tnp.tan(np.pi * (tnp.where(low | high, 0.5, q) - 0.5))
    return tnp.where(low, -cot, tnp.where(high, cot, middle))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The quantile: loc + scale tan(pi (q - 1/2))."""
    q, loc, scale = promote(tnp._float(q), loc, scale)
    return _standard_ppf(q) * scale + loc


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """x with P(X > x) = q: loc - scale tan(pi (q - 1/2))."""
    q, loc, scale = promote(tnp._float(q), loc, scale)
    return loc - _standard_ppf(q) * scale


check_arguments(globals(), "tz.scipy.stats.cauchy.")
