"""`tz.scipy.stats`: JAX's `jax.scipy.stats` distributions (densities; the cumulative
functions where they need no incomplete gamma or beta function)."""

from tenzr.scipy.stats import beta, chi2, dirichlet, gamma, multivariate_normal, norm, poisson, t

__all__ = ["beta", "chi2", "dirichlet", "gamma", "multivariate_normal", "norm", "poisson", "t"]
