"""`tz.scipy.stats.nbinom`: failures before the `n`-th success in trials of probability `p`
(shifted by `loc`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.scipy import special

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Array:
    """log P(K = k) = log C(y + n - 1, n - 1) + n log p + y log(1 - p) with y = k - loc, -inf
    below loc (k and n are read as real numbers, as in JAX)."""
    k, n, p, loc = promote(tnp._float(k), n, p, loc)
    y = k - loc
    combinations = special.gammaln(y + n) - special.gammaln(n) - special.gammaln(y + 1)
    out = combinations + special.xlogy(n, p) + special.xlog1py(y, -p)
    return tnp.where(k < loc, -np.inf, out)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Array:
    """P(K = k)."""
    return tnp.exp(logpmf(k, n, p, loc))


check_arguments(globals(), "tz.scipy.stats.nbinom.")
