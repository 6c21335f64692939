"""`tenzr-verify`: checks every op against the dialect contract (DESIGN section 3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.diagnostics import TenzrErrors
from tenzr.dialect.ir_imports import ir
from tenzr.dialect.verify import verify_module
from tenzr.passes.registry import Pass, register


@register
@dataclass
class TenzrVerify(Pass):
    flag: ClassVar[str] = "tenzr-verify"
    summary: ClassVar[str] = "Check every tenzr op against its rules; report each broken rule at its op."
    example_input: ClassVar[str] = """\
func.func @f(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "tenzr.transpose"(%x) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
"""

    def run(self, module: ir.Operation) -> None:
        errors = verify_module(module)
        if errors:
            raise TenzrErrors(errors)
