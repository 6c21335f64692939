"""`tz.example_libraries`: JAX's `jax.example_libraries` (`optimizers`, `stax`), so code
written against them runs with only its imports changed."""

from tenzr.example_libraries import optimizers, stax

__all__ = ["optimizers", "stax"]
