"""`tz.scipy.stats.logistic`: the logistic distribution, CDF expit((x - loc) / scale)."""

from __future__ import annotations

from typing import Any

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote
from tenzr.scipy import special

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]


def _standard(x: Any, loc: Any, scale: Any) -> tuple[Array, Array]:
    x, loc, scale = promote(tnp._float(x), loc, scale)
    return (x - loc) / scale, scale


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """-2 logaddexp(z/2, -z/2) - log(scale), finite however large |z|."""
    z, scale = _standard(x, loc, scale)
    return -2 * tnp.logaddexp(z / 2, -z / 2) - tnp.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The density at x."""
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X <= x) = expit(z)."""
    return special.expit(_standard(x, loc, scale)[0])


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """P(X > x) = expit(-z)."""
    return special.expit(-_standard(x, loc, scale)[0])


def ppf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The quantile loc + scale logit(x) (JAX names the probability x)."""
    x, loc, scale = promote(tnp._float(x), loc, scale)
    return loc + scale * special.logit(x)


def isf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The value exceeded with probability x: loc - scale logit(x)."""
    x, loc, scale = promote(tnp._float(x), loc, scale)
    return loc - scale * special.logit(x)


check_arguments(globals(), "tz.scipy.stats.logistic.")
