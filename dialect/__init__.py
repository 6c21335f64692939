"""The `tenzr` dialect: op definitions, builders, the verifier and the context factory."""

from tenzr.dialect.context import make_context, module_body, parse_module
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.types import TensorSpec, spec_of

__all__ = ["TensorSpec", "TenzrError", "make_context", "module_body", "parse_module", "spec_of"]
