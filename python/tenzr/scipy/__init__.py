"""`tz.scipy`: JAX's `jax.scipy` names (`special`, `stats`)."""

from tenzr.scipy import special, stats

__all__ = ["special", "stats"]
