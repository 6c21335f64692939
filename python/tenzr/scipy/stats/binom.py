"""`tz.scipy.stats.binom`: successes in `n` trials of probability `p` (shifted by `loc`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.scipy import special

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Array:
    """log P(K = k) = log C(n, y) + y log p + (n - y) log(1 - p) with y = k - loc, -inf
    outside [loc, loc + n] (k is read as a real number, as in JAX). Exactly 0 where the outcome
    is certain (n = 0, or p at 0 or 1 with y at that end), where log C(n, y) would round."""
    k, n, p, loc = promote(tnp._float(k), n, p, loc)
    y = k - loc
    combinations = special.gammaln(n + 1) - special.gammaln(y + 1) - special.gammaln(n - y + 1)
    linear = special.xlogy(y, p) + special.xlog1py(n - y, -p)
    out = tnp.where(((y == 0) & (n == 0)) | (linear == 0), 0.0, combinations + linear)
    return tnp.where((y >= 0) & (y < n + 1), out, -np.inf)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Array:
    """P(K = k)."""
    return tnp.exp(logpmf(k, n, p, loc))


check_arguments(globals(), "tz.scipy.stats.binom.")
