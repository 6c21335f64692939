"""`tz.scipy.stats`: JAX's `jax.scipy.stats` distributions (densities and mass functions;
the cumulative functions and quantiles that JAX has), and `rankdata` and `sem`."""

from tenzr.scipy.stats import (
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    gennorm,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multivariate_normal,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
    wrapcauchy,
)
from tenzr.scipy.stats._core import rankdata, sem

__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma", "gennorm",
           "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "multivariate_normal", "nbinom", "norm", "pareto",
           "poisson", "rankdata", "sem", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy"]
