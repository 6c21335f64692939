"""`tz.scipy.stats.gumbel_l`: the Gumbel (minimum) distribution, CDF 1 - exp(-exp(z)) with
z = (x - loc) / scale: the mirror image of gumbel_r; NaN for scale <= 0, as JAX's."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.scipy.stats import gumbel_r

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _mirrored(x: Any, loc: Any) -> tuple[Array, Array]:
    x, loc = promote(tnp._float(x), loc)
    return -x, -loc


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """z - exp(z) - log(scale)."""
    return gumbel_r.logpdf(*_mirrored(x, loc), scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The density at x."""
    return tnp.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log P(X <= x) = log1mexp(exp(z))."""
    return gumbel_r.logsf(*_mirrored(x, loc), scale)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X <= x) = -expm1(-exp(z))."""
    return gumbel_r.sf(*_mirrored(x, loc), scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log P(X > x) = -exp(z)."""
    return gumbel_r.logcdf(*_mirrored(x, loc), scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X > x) = exp(-exp(z))."""
    return tnp.exp(logsf(x, loc, scale))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The quantile loc + scale log(-log1p(-p)), NaN outside (0, 1)."""
    p, loc, scale = promote(tnp._float(p), loc, scale)
    inside = (p > 0) & (p < 1)
    return tnp.where(inside, loc + scale * tnp.log(-tnp.log1p(-tnp.where(inside, p, 0.5))), np.nan)


check_arguments(globals(), "tz.scipy.stats.gumbel_l.")
