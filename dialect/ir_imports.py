"""The one place that imports the MLIR Python bindings shipped in `iree-base-compiler`.

Everything else in Tenzr writes `from tenzr.dialect.ir_imports import ir`, so a change of
binding package touches this file only.
"""

from typing import TYPE_CHECKING, Any

from iree.compiler import ir, passmanager
from iree.compiler._mlir_libs._mlir import globals as _binding_globals
from iree.compiler.dialects import func as func_d

_binding_globals.append_dialect_search_prefix("tenzr.dialect.op_views")  # see op_views/__init__.py

if TYPE_CHECKING:
    Value = Any  # the bindings carry no type information, so a type checker sees Any
else:
    Value = ir.Value

__all__ = ["Value", "func_d", "ir", "passmanager"]
