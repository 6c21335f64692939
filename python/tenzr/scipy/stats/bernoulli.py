"""`tz.scipy.stats.bernoulli`: 1 with probability `p`, else 0 (shifted by `loc`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.scipy import special

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Array:
    """log P(K = k): xlogy(k, p) + xlog1py(1 - k, -p) on [loc, loc + 1], -inf outside (k is
    read as a real number, as in JAX)."""
    k, p, loc = promote(tnp._float(k), p, loc)
    x = k - loc
    out = special.xlogy(x, p) + special.xlog1py(1 - x, -p)
    return tnp.where((x < 0) | (x > 1), -np.inf, out)


def pmf(k: Any, p: Any, loc: Any = 0) -> Array:
    """P(K = k)."""
    return tnp.exp(logpmf(k, p, loc))


def cdf(k: Any, p: Any) -> Array:
    """P(K <= k): 0 below 0, 1 - p on [0, 1), 1 from 1 (NaN for p outside [0, 1])."""
    k, p = promote(tnp._float(k), p)
    out = tnp.where(k < 0, 0.0, tnp.where(k < 1, 1 - p, 1.0))
    return tnp.where(tnp.isnan(k) | tnp.isnan(p) | (p < 0) | (p > 1), np.nan, out)


def ppf(q: Any, p: Any) -> Array:
    """The least k with P(K <= k) >= q: 0 for q <= 1 - p, else 1 (NaN outside [0, 1])."""
    q, p = promote(tnp._float(q), p)
    bad = tnp.isnan(q) | tnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    return tnp.where(bad, np.nan, tnp.where(q <= 1 - p, tnp.zeros_like(q), tnp.ones_like(q)))


check_arguments(globals(), "tz.scipy.stats.bernoulli.")
