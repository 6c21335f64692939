"""`tz.scipy.stats.betabinom`: successes in `n` trials whose probability is drawn from
Beta(`a`, `b`) (shifted by `loc`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.scipy import special

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Array:
    """log P(K = k) = log C(n, y) + log B(y + a, n - y + b) - log B(a, b) with y = floor(k) - loc;
    -inf outside [0, n], NaN for n < 0, a <= 0 or b <= 0 (JAX's conditions)."""
    k, n, a, b, loc = promote(tnp._float(k), n, a, b, loc)
    y = tnp.floor(k) - loc
    combinations = -(tnp.log1p(n) + special.betaln(n - y + 1, y + 1))
    out = combinations + special.betaln(y + a, n - y + b) - special.betaln(a, b)
    out = tnp.where((y == 0) & (n == 0), 0.0, out)
    out = tnp.where((y < -loc) | (y > n) | (y + a <= 0), -np.inf, out)
    return tnp.where((n < 0) | (a <= 0) | (b <= 0), np.nan, out)


def pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Array:
    """P(K = k)."""
    return tnp.exp(logpmf(k, n, a, b, loc))


check_arguments(globals(), "tz.scipy.stats.betabinom.")
