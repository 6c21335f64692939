"""`tz.scipy.integrate`: `jax.scipy.integrate`'s quadrature (`trapezoid`)."""

from tenzr.numpy_lib import trapezoid

__all__ = ["trapezoid"]
