"""`tz.scipy.stats.truncnorm`: the normal distribution with mean `loc` and deviation `scale`
cut to [a, b] (in deviations from loc); NaN where a >= b."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.neural import log1mexp
from tenzr.numpy_lib import broadcast_arrays
from tenzr.scipy import special
from tenzr.scipy.stats import norm

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _log_gauss_mass(a: Array, b: Array) -> Array:
    """log(ndtr(b) - ndtr(a)) for a <= b: for an interval on one side of 0, from the log_ndtr
    of its ends mirrored into the lower tail (where they keep their precision); for one across
    0, as log1p(-ndtr(a) - ndtr(-b)) (SciPy's split). Each form sees a and b only where it is
    taken: the other's logs of 0 made the gradient NaN. (One log_ndtr and one ndtr of both
    ends stacked: each is a long continued fraction, and IREE took minutes over four.)"""
    right, central = a > 0, (a <= 0) & (b > 0)
    low = tnp.where(central, -2.0, tnp.where(right, -b, a))
    high = tnp.where(central, -1.0, tnp.where(right, -a, b))
    log_high, log_low = special.log_ndtr(tnp.stack([high, low]))
    tail = log_high + log1mexp(log_high - log_low)
    below_a, above_b = special.ndtr(tnp.stack([tnp.where(central, a, -1.0), -tnp.where(central, b, 1.0)]))
    return tnp.where(central, tnp.log1p(-below_a - above_b), tail)


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The normal's log density less the log of its mass on [a, b]; -inf outside."""
    x, a, b, loc, scale = promote(tnp._float(x), a, b, loc, scale)
    a, b = broadcast_arrays(a, b)
    out = norm.logpdf(x, loc, scale) - _log_gauss_mass(a, b)
    z = (x - loc) / scale
    return tnp.where(a >= b, np.nan, tnp.where((z < a) | (z > b), -np.inf, out))


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The density at x."""
    return tnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log P(X <= x): the mass on [a, z] over that on [a, b], or, where that is near 1
    (above -0.1, SciPy's switch), log1mexp of the mass on [z, b]'s."""
    x, a, b, loc, scale = promote(tnp._float(x), a, b, loc, scale)
    z, a, b = broadcast_arrays((x - loc) / scale, a, b)
    # (z itself strictly inside (a, b), else a point there: a mass of an empty interval is
    # log 0, whose slope made the gradient NaN where the `where`s below do not take it)
    finite_a, finite_b = tnp.isfinite(a), tnp.isfinite(b)
    middle = tnp.where(finite_a, tnp.where(finite_b, (a + b) / 2, a + 1), tnp.where(finite_b, b - 1, 0.0))
    inner = tnp.where((z > a) & (z < b), z, middle)
    below, above, whole = _log_gauss_mass(tnp.stack([a, inner, a]), tnp.stack([inner, b, b]))
    below, above = below - whole, above - whole
    near_one = below > -0.1
    out = tnp.where(near_one, log1mexp(-tnp.where(near_one, above, -1.0)), below)
    out = tnp.where(z >= b, 0.0, tnp.where(z <= a, -np.inf, out))
    return tnp.where(a >= b, np.nan, out)


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X <= x)."""
    return tnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log P(X > x): logcdf of the mirrored distribution at -x."""
    x, a, b, loc, scale = promote(tnp._float(x), a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X > x)."""
    return tnp.exp(logsf(x, a, b, loc, scale))


check_arguments(globals(), "tz.scipy.stats.truncnorm.")
