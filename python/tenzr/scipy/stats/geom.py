"""`tz.scipy.stats.geom`: the trial of the first success, each of probability `p` (shifted
by `loc`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.scipy import special

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Array:
    """log P(K = k) = (y - 1) log(1 - p) + log p with y = k - loc, -inf for y <= 0."""
    k, p, loc = promote(tnp._float(k), p, loc)
    y = k - loc
    return tnp.where(y <= 0, -np.inf, special.xlog1py(y - 1, -p) + tnp.log(p))


def pmf(k: Any, p: Any, loc: Any = 0) -> Array:
    """P(K = k)."""
    return tnp.exp(logpmf(k, p, loc))


check_arguments(globals(), "tz.scipy.stats.geom.")
