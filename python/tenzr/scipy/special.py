"""`tz.scipy.special`: SciPy's special functions, with `jax.scipy.special`'s arguments.

Each is differentiable; the error function, its inverse, log-gamma and digamma are tenzr
ops (lowered to CHLO's), the rest are built from them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, emit, promote, user_location
from tenzr.dialect import ops as T
from tenzr.dialect.diagnostics import TenzrError
from tenzr.neural import log_softmax, logsumexp, sigmoid, softmax

__all__ = ["beta", "betaln", "digamma", "entr", "erf", "erfc", "erfcinv", "erfinv", "expit", "gamma", "gammaln",
           "gammasgn", "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "psi",
           "rgamma", "softmax", "xlog1py", "xlogy"]


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


psi = digamma


def gammasgn(x: Any) -> Array:
    """The sign of Gamma(x): 1 for x > 0; below, -1 on (-1, 0), 1 on (-2, -1), and so on."""
    x = tnp._float(x)
    return tnp.where((x > 0) | (tnp.floor(x) % 2 == 0), 1.0, -1.0).astype(x.dtype)


def gamma(x: Any) -> Array:
    """Gamma(x): gammasgn(x) exp(gammaln(x))."""
    return gammasgn(x) * tnp.exp(gammaln(x))


def rgamma(x: Any) -> Array:
    """1 / Gamma(x), which is 0 at the poles (0, -1, -2, ...)."""
    return gammasgn(x) * tnp.exp(-gammaln(x))


def betaln(a: Any, b: Any) -> Array:
    """log |B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)."""
    a, b = promote(tnp._float(a), b)
    return gammaln(a) + gammaln(b) - gammaln(a + b)


def beta(a: Any, b: Any) -> Array:
    """B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)."""
    a, b = promote(tnp._float(a), b)
    return gammasgn(a) * gammasgn(b) * gammasgn(a + b) * tnp.exp(betaln(a, b))


def multigammaln(a: Any, d: int) -> Array:
    """The log of the multivariate gamma function of dimension d:
    d (d - 1) / 4 log(pi) + sum over j < d of gammaln(a - j / 2)."""
    a = tnp._float(a)
    if not isinstance(d, (int, np.integer)) or d < 1:
        raise TenzrError(f"multigammaln: d must be a positive int, got {d!r}", user_location())
    return d * (d - 1) / 4 * np.log(np.pi) + sum(gammaln(a - j / 2) for j in range(int(d)))


def erfcinv(x: Any) -> Array:
    """The inverse of erfc on (0, 2): erfinv(1 - x)."""
    return erfinv(1.0 - tnp._float(x))


def expit(x: Any) -> Array:
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    return sigmoid(x)


def logit(x: Any) -> Array:
    """log(x / (1 - x)), the inverse of expit."""
    x = tnp._float(x)
    return tnp.log(x) - tnp.log1p(-x)


def xlogy(x: Any, y: Any) -> Array:
    """x * log(y), and 0 where x == 0 (also for y == 0). Its derivative in x is log(y) even
    at x == 0 (where the density of, say, a gamma with shape 1 needs it)."""
    x, y = promote(tnp._float(x), y)
    both = (x == 0) & (y == 0)
    return tnp.where(both, 0.0, x * tnp.log(tnp.where(both, 1.0, y)))


def xlog1py(x: Any, y: Any) -> Array:
    """x * log1p(y), and 0 where x == 0 (also for y == -1); d/dx is log1p(y), as xlogy's."""
    x, y = promote(tnp._float(x), y)
    both = (x == 0) & (y == -1)
    return tnp.where(both, 0.0, x * tnp.log1p(tnp.where(both, 0.0, y)))


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
