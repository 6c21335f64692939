"""`tz.scipy.stats`: JAX's `jax.scipy.stats` distributions."""

from tenzr.scipy.stats import multivariate_normal, norm

__all__ = ["multivariate_normal", "norm"]
