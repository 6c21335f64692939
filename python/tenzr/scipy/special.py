"""`tz.scipy.special`: SciPy's special functions, with `jax.scipy.special`'s arguments.

Each is differentiable; the error function, its inverse, log-gamma and digamma are tenzr
ops (lowered to CHLO's), the rest are built from them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, emit, promote
from tenzr.dialect import ops as T
from tenzr.neural import log_softmax, logsumexp, sigmoid, softmax

__all__ = ["betaln", "digamma", "entr", "erf", "erfc", "erfinv", "expit", "gamma", "gammaln", "log_ndtr",
           "log_softmax", "logit", "logsumexp", "ndtr", "ndtri", "softmax", "xlog1py", "xlogy"]


def erf(x: Any) -> Array:
    """The error function, 2/sqrt(pi) * integral from 0 to x of exp(-t^2)."""
    return emit(T.erf, tnp._float(x))


def erfc(x: Any) -> Array:
    """1 - erf(x)."""
    return 1.0 - erf(x)


def erfinv(x: Any) -> Array:
    """The inverse of erf on (-1, 1)."""
    return emit(T.erf_inv, tnp._float(x))


def gammaln(x: Any) -> Array:
    """log |Gamma(x)|."""
    return emit(T.lgamma, tnp._float(x))


def digamma(x: Any) -> Array:
    """d/dx log Gamma(x)."""
    return emit(T.digamma, tnp._float(x))


def gamma(x: Any) -> Array:
    """Gamma(x) for x > 0 (exp of gammaln)."""
    return tnp.exp(gammaln(x))


def betaln(a: Any, b: Any) -> Array:
    """log |B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)."""
    a, b = promote(tnp._float(a), b)
    return gammaln(a) + gammaln(b) - gammaln(a + b)


def expit(x: Any) -> Array:
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    return sigmoid(x)


def logit(x: Any) -> Array:
    """log(x / (1 - x)), the inverse of expit."""
    x = tnp._float(x)
    return tnp.log(x) - tnp.log1p(-x)


def xlogy(x: Any, y: Any) -> Array:
    """x * log(y), and 0 where x == 0 (also for y == 0); its gradients there are finite."""
    x, y = promote(tnp._float(x), y)
    zero = x == 0
    return tnp.where(zero, 0.0, x * tnp.log(tnp.where(zero, 1.0, y)))


def xlog1py(x: Any, y: Any) -> Array:
    """x * log1p(y), and 0 where x == 0."""
    x, y = promote(tnp._float(x), y)
    zero = x == 0
    return tnp.where(zero, 0.0, x * tnp.log1p(tnp.where(zero, 0.0, y)))


def entr(x: Any) -> Array:
    """-x log x for x > 0, 0 at 0, -inf below."""
    x = tnp._float(x)
    return tnp.where(x < 0, -np.inf, -xlogy(x, x))


def ndtr(x: Any) -> Array:
    """The standard normal cumulative distribution function."""
    x = tnp._float(x)
    return 0.5 * (1.0 + erf(x * (1 / np.sqrt(2))))


def ndtri(p: Any) -> Array:
    """The inverse of ndtr."""
    return np.sqrt(2) * erfinv(2.0 * tnp._float(p) - 1.0)


def log_ndtr(x: Any) -> Array:
    """log(ndtr(x))."""
    return tnp.log(ndtr(x))


check_arguments(globals(), "tz.scipy.special.")
