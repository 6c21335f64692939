"""`tz.scipy.stats.uniform`: the uniform distribution on [loc, loc + scale]."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """-log(scale) on [loc, loc + scale], -inf outside."""
    x, loc, scale = promote(tnp._float(x), loc, scale)
    return tnp.where((x < loc) | (x > loc + scale), -np.inf, -tnp.log(scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The density at x."""
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X <= x): (x - loc) / scale clipped to [0, 1] (NaN stays NaN)."""
    x, loc, scale = promote(tnp._float(x), loc, scale)
    return tnp.where(x < loc, 0.0, tnp.where(x > loc + scale, 1.0, (x - loc) / scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The quantile loc + scale q (NaN outside [0, 1])."""
    q, loc, scale = promote(tnp._float(q), loc, scale)
    return tnp.where(tnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc + scale * q)


check_arguments(globals(), "tz.scipy.stats.uniform.")
