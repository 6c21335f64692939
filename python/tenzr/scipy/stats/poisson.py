"""`tz.scipy.stats.poisson`: the Poisson distribution with mean `mu`, shifted by `loc`."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.scipy import special

__all__ = ["cdf", "logpmf", "pmf"]


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Array:
    """log P(K = k): k log mu - log k! - mu for k >= loc (-inf below; k is read as a real
    number, as in JAX, so the result is differentiable in mu)."""
    k, mu, loc = promote(tnp._float(k), mu, loc)
    n = k - loc
    inside = n >= 0
    safe = tnp.where(inside, n, 0.0)
    out = special.xlogy(safe, mu) - special.gammaln(safe + 1) - mu
    return tnp.where(inside, out, -np.inf)


def pmf(k: Any, mu: Any, loc: Any = 0) -> Array:
    """P(K = k)."""
    return tnp.exp(logpmf(k, mu, loc))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Array:
    """P(K <= k) = Q(floor(k - loc) + 1, mu), the regularized upper incomplete gamma
    function (0 below loc)."""
    k, mu, loc = promote(tnp._float(k), mu, loc)
    n = tnp.floor(k - loc)
    inside = n >= 0
    return tnp.where(inside, special.gammaincc(tnp.where(inside, n, 0.0) + 1, mu), 0.0)


check_arguments(globals(), "tz.scipy.stats.poisson.")
