"""`tz.scipy.stats.laplace`: the Laplace (double exponential) distribution about `loc`."""

from __future__ import annotations

from typing import Any

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """-|z| - log(2 scale)."""
    x, loc, scale = promote(tnp._float(x), loc, scale)
    return -tnp.abs((x - loc) / scale) - tnp.log(2 * scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The density at x."""
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X <= x): exp(z)/2 for z <= 0, 1 - exp(-z)/2 above; each side sees z only where it is
    taken (JAX's select gives a NaN gradient where the other side's exp overflows)."""
    x, loc, scale = promote(tnp._float(x), loc, scale)
    z = (x - loc) / scale
    lower = z <= 0
    return tnp.where(lower, 0.5 * tnp.exp(tnp.where(lower, z, 0.0)), 1 - 0.5 * tnp.exp(-tnp.where(lower, 0.0, z)))


check_arguments(globals(), "tz.scipy.stats.laplace.")
