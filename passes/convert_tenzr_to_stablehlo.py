"""`convert-tenzr-to-stablehlo`: rewrites every tenzr op into StableHLO.

Ops are lowered in program order, each through its rule in `rules.LOWERINGS`, at its
own location; uses are redirected to the new values and the tenzr op is erased. The result
verifies and contains no `tenzr.` op.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ir_imports import ir
from tenzr.dialect.verify import tenzr_ops
from tenzr.passes.registry import Pass, register
from tenzr.passes.rules import LOWERINGS
from tenzr.passes.views import view


def lower_operation(operation: ir.Operation) -> None:
    """Replaces one (verified) tenzr op by its StableHLO lowering."""
    op = view(operation)
    with operation.location, ir.InsertionPoint(operation):
        out = LOWERINGS[operation.name](op)
    values = [out] if isinstance(out, ir.Value) else list(out)
    if len(values) != len(op.results):
        raise TenzrError(f"lowering of '{operation.name}' gave {len(values)} values for {len(op.results)} results",
                         operation.location)
    for result, value in zip(op.outputs, values, strict=True):
        if result.type != value.type:
            raise TenzrError(f"lowering of '{operation.name}' gave {value.type} for result type {result.type}",
                             operation.location)
        result.replace_all_uses_with(value)
    operation.erase()


def lower_module(module: ir.Operation) -> None:
    for operation in tenzr_ops(module):
        lower_operation(operation)


@register
@dataclass
class ConvertTenzrToStablehlo(Pass):
    flag: ClassVar[str] = "convert-tenzr-to-stablehlo"
    summary: ClassVar[str] = "Lower every tenzr op to StableHLO, making NumPy broadcasting explicit."
    example_input: ClassVar[str] = """\
func.func @f(%x: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "tenzr.add"(%x, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
"""

    def run(self, module: ir.Operation) -> None:
        lower_module(module)
