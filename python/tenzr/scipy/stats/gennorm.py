"""`tz.scipy.stats.gennorm`: the generalized normal distribution, density proportional to
exp(-|x|^beta) (beta = 2: a normal, 1: a Laplace)."""

from __future__ import annotations

from typing import Any

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.scipy import special

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x: Any, beta: Any) -> Array:
    """log(beta / 2) - gammaln(1 / beta) - |x|^beta."""
    x, beta = promote(tnp._float(x), beta)
    return tnp.log(0.5 * beta) - special.gammaln(1 / beta) - tnp.abs(x) ** beta


def pdf(x: Any, beta: Any) -> Array:
    """The density at x."""
    return tnp.exp(logpdf(x, beta))


def cdf(x: Any, beta: Any) -> Array:
    """P(X <= x) = (1 + sign(x) P(1/beta, |x|^beta)) / 2, the lower tail as Q(1/beta, |x|^beta)/2,
    to its relative precision (JAX's cancels there)."""
    x, beta = promote(tnp._float(x), beta)
    a, y = 1 / beta, tnp.abs(x) ** beta
    return tnp.where(x < 0, 0.5 * special.gammaincc(a, y), 0.5 + 0.5 * special.gammainc(a, y))


check_arguments(globals(), "tz.scipy.stats.gennorm.")
