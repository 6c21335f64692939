"""The one place that imports the MLIR Python bindings shipped in `iree-base-compiler`.

Everything else in Tenzr writes `from tenzr.dialect.ir_imports import ir`, so a change of
binding package touches this file only.
"""

from iree.compiler import ir, passmanager
from iree.compiler.dialects import func as func_d

__all__ = ["func_d", "ir", "passmanager"]
