"""`tz.scipy`: JAX's `jax.scipy` names (`integrate`, `linalg`, `signal`, `special`, `stats`)."""

from tenzr.scipy import integrate, linalg, signal, special, stats

__all__ = ["integrate", "linalg", "signal", "special", "stats"]
