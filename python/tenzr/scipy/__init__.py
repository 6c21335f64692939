"""`tz.scipy`: JAX's `jax.scipy` names (`linalg`, `special`, `stats`)."""

from tenzr.scipy import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
