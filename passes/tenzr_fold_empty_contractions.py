"""`tenzr-fold-empty-contractions`: a dot_general or convolution with an empty operand is
zeros (an empty sum), and a scatter of no updates is its input (the gradient of a gather of
nothing). IREE 3.13 crashes compiling them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register


def fold_empty_contractions(module: ir.Operation) -> None:
    names = {sh.dot_general.op_name, sh.convolution.op_name}
    for op in ops_named(module, names):
        if any(sh.spec(v).size == 0 for v in op.operands):
            with op.location, ir.InsertionPoint(op):
                replace_op(op, [sh.zeros(sh.spec(op.results[0]))])
    for op in ops_named(module, {sh.scatter.op_name}):
        n = len(op.results)
        if any(sh.spec(v).size == 0 for v in list(op.operands)[n + 1:]):
            replace_op(op, list(op.operands)[:n])


@register
@dataclass
class TenzrFoldEmptyContractions(Pass):
    flag: ClassVar[str] = "tenzr-fold-empty-contractions"
    summary: ClassVar[str] = ("Replace dot_generals and convolutions of empty operands by zeros, and scatters of "
                              "no updates by their inputs (IREE 3.13 crashes).")

    def run(self, module: ir.Operation) -> None:
        fold_empty_contractions(module)
