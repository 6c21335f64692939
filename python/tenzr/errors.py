"""`tz.errors`, with JAX's names: the errors code may catch."""

from tenzr.core import ConcretizationTypeError
from tenzr.dialect.diagnostics import TenzrError

__all__ = ["ConcretizationTypeError", "TenzrError"]
