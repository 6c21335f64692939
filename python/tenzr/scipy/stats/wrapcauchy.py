"""`tz.scipy.stats.wrapcauchy`: the wrapped Cauchy distribution on [0, 2 pi] with shape
`c` in (0, 1)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, c: Any) -> Array:
    """log((1 - c²) / (2 pi (1 + c² - 2c cos x))), the denominator as (1 - c)² + 4c sin²(x/2),
    which does not cancel near x = 0 as c nears 1; -inf outside [0, 2 pi], NaN for c outside
    (0, 1)."""
    x, c = promote(tnp._float(x), c)
    half = tnp.sin(x / 2)
    out = tnp.log1p(-c * c) - np.log(2 * np.pi) - tnp.log((1 - c) ** 2 + 4 * c * half * half)
    out = tnp.where((x >= 0) & (x <= 2 * np.pi), out, -np.inf)
    return tnp.where((c > 0) & (c < 1), out, np.nan)


def pdf(x: Any, c: Any) -> Array:
    """The density at x."""
    return tnp.exp(logpdf(x, c))


check_arguments(globals(), "tz.scipy.stats.wrapcauchy.")
