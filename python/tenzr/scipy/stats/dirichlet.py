"""`tz.scipy.stats.dirichlet`: the Dirichlet distribution with concentrations `alpha` [k]
over points x [k, ...] of the simplex."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote, user_location
from tenzr.dialect.diagnostics import TenzrError
from tenzr.scipy import special

__all__ = ["logpdf", "pdf", "rvs"]


def logpdf(x: Any, alpha: Any) -> Array:
    """The log of the density at x (-inf off the simplex: a negative entry, or entries
    that do not sum to 1 within 1e-6, as in JAX)."""
    x, alpha = promote(tnp._float(x), alpha)
    if alpha.ndim != 1 or x.ndim < 1 or x.shape[0] != alpha.shape[0]:
        raise TenzrError(f"dirichlet.logpdf: alpha must be [k] and x [k, ...], got {list(alpha.shape)} and "
                         f"{list(x.shape)}", user_location())
    a = tnp.reshape(alpha, alpha.shape + (1,) * (x.ndim - 1))
    normalizer = tnp.sum(special.gammaln(alpha)) - special.gammaln(tnp.sum(alpha))
    out = tnp.sum(special.xlogy(a - 1, x), axis=0) - normalizer
    on_simplex = (tnp.min(x, axis=0) >= 0) & (tnp.abs(tnp.sum(x, axis=0) - 1) < 1e-6)
    return tnp.where(on_simplex, out, -np.inf)


def pdf(x: Any, alpha: Any) -> Array:
    """The density at x."""
    return tnp.exp(logpdf(x, alpha))


check_arguments(globals(), "tz.scipy.stats.dirichlet.")


def rvs(alpha: Any, size: Any = 1, random_state: Any = None) -> np.ndarray:
    """SciPy's sampler, for set-up code: NumPy draws of concrete values (`random_state` a
    seed, a NumPy generator, or None for NumPy's global one), never traced; inside traced
    code use tz.random."""
    if random_state is None:
        source: Any = np.random.mtrand._rand
    elif hasattr(random_state, "dirichlet"):
        source = random_state
    else:
        source = np.random.RandomState(random_state)
    return source.dirichlet(np.asarray(alpha), size)
