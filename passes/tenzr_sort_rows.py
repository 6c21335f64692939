"""`tenzr-sort-rows`: a rank-1 sort of several operands, sorted as one row of a rank-2
one (IREE 3.13's Vulkan compiler crashes on the first). A sort along a dim of one element is
its operands. (tenzr-copy-in-place-operands gives a sort's constant operands and slices of
arguments copies of their own.)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register


def sort_rows(module: ir.Operation) -> None:
    for op in ops_named(module, {sh.sort.op_name}):
        if sh.spec(op.operands[0]).shape[ir.IntegerAttr(op.attributes["dimension"]).value] <= 1:
            replace_op(op, list(op.operands))  # (one element per row: nothing to sort)
            continue
        specs = [sh.spec(v) for v in op.operands]
        if specs[0].rank != 1 or len(specs) < 2:
            continue
        with op.location, ir.InsertionPoint(op):
            rows = [sh.reshape(v, (1, *s.shape)) for v, s in zip(op.operands, specs, strict=True)]
            stable = "is_stable" in op.attributes and ir.BoolAttr(op.attributes["is_stable"]).value
            sorted_rows = sh.sort_with(rows, 1, op.regions[0].blocks[0], stable)
            replace_op(op, [sh.reshape(v, s.shape) for v, s in zip(sorted_rows, specs, strict=True)])


@register
@dataclass
class TenzrSortRows(Pass):
    flag: ClassVar[str] = "tenzr-sort-rows"
    summary: ClassVar[str] = ("Sort a rank-1 sort of several operands as one row of rank 2 (IREE 3.13's Vulkan "
                              "compiler crashes on the first); drop a sort along a dim of one element.")

    def run(self, module: ir.Operation) -> None:
        sort_rows(module)
