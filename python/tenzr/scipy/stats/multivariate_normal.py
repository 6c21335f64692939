"""`tz.scipy.stats.multivariate_normal`: the normal distribution of vectors with mean `mean`
and covariance `cov` (through its Cholesky factor)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, check_arguments, promote, user_location
from tenzr.dialect.diagnostics import TenzrError
from tenzr.linalg import cholesky, solve_triangular
from tenzr.numpy_lib import diagonal

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, mean: Any, cov: Any, allow_singular: None = None) -> Array:
    """The log density at x [..., d] (mean [d], cov [d, d] positive definite)."""
    if allow_singular is not None:
        raise TenzrError("multivariate_normal.logpdf: allow_singular is not supported (as in JAX)", user_location())
    x, mean, cov = promote(tnp._float(x), mean, cov)
    d = mean.shape[-1] if mean.ndim else 1
    if cov.shape != (d, d):
        raise TenzrError(f"multivariate_normal.logpdf: cov must be [{d}, {d}] for a mean of {d}, got "
                         f"{list(cov.shape)}", user_location())
    factor = cholesky(cov)
    centered = tnp.reshape(x - mean, (-1, d))
    whitened = solve_triangular(factor, tnp.transpose(centered), lower=True)
    distance = tnp.sum(whitened * whitened, axis=0)
    log_det = 2.0 * tnp.sum(tnp.log(diagonal(factor)))
    out = -0.5 * (distance + log_det + d * np.log(2 * np.pi))
    return tnp.reshape(out, x.shape[:-1])


def pdf(x: Any, mean: Any, cov: Any) -> Array:
    """The density at x."""
    return tnp.exp(logpdf(x, mean, cov))


check_arguments(globals(), "tz.scipy.stats.multivariate_normal.")
