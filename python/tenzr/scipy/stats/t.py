"""`tz.scipy.stats.t`: Student's t distribution with `df` degrees of freedom."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.scipy import special

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the density at x."""
    x, df, loc, scale = promote(tnp._float(x), df, loc, scale)
    y = (x - loc) / scale
    return (special.gammaln((df + 1) / 2) - special.gammaln(df / 2) - 0.5 * tnp.log(df * np.pi)
            - (df + 1) / 2 * tnp.log1p(y * y / df) - tnp.log(scale))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The density at x."""
    return tnp.exp(logpdf(x, df, loc, scale))


check_arguments(globals(), "tz.scipy.stats.t.")
