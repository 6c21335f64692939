"""`tz.scipy.stats`: JAX's `jax.scipy.stats` distributions."""

from tenzr.scipy.stats import norm

__all__ = ["norm"]
