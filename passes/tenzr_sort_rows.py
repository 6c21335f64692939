"""`tenzr-sort-rows`: a rank-1 sort of several operands, sorted as one row of a rank-2
one (IREE 3.13's Vulkan compiler crashes on the first); and a constant operand of a sort
passed through an optimization barrier (IREE 3.13 sorts in place, and a constant is a global
it may not write: "write affecting operations on global resources are restricted to
workgroup distributed contexts", from `tz.sort` of an array a jitted function closes over),
a slice of an argument copied (the same error, from `tz.sort(x[:2])`). A sort along a dim
of one element is its operands."""

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
        _operands_of_their_own(op)
        specs = [sh.spec(v) for v in op.operands]
        if specs[0].rank != 1 or len(specs) < 2:
            continue
        with op.location, ir.InsertionPoint(op):
            rows = [sh.reshape(v, (1, *s.shape)) for v, s in zip(op.operands, specs, strict=True)]
            stable = "is_stable" in op.attributes and ir.BoolAttr(op.attributes["is_stable"]).value
            sorted_rows = sh.sort_with(rows, 1, op.regions[0].blocks[0], stable)
            replace_op(op, [sh.reshape(v, s.shape) for v, s in zip(sorted_rows, specs, strict=True)])


def _operands_of_their_own(op: ir.Operation) -> None:
    """The sort's constant operands behind barriers, its slices of arguments copied: IREE
    sorts in place, and may write neither."""
    for i, value in enumerate(op.operands):
        made_by = sh.producer(value)
        if made_by is not None and made_by.name == sh.constant.op_name:
            with op.location, ir.InsertionPoint(op):
                op.operands[i] = sh.optimization_barrier(value)[0]
        elif made_by is not None and made_by.name == sh.slice_.op_name and isinstance(made_by.operands[0],
                                                                                       ir.BlockArgument):
            # IREE 3.13 sorts a slice of an argument in the argument's buffer, which it may not
            # write (the same error); a barrier alone would let the sort write what other ops
            # read as the slice.
            with op.location, ir.InsertionPoint(op):
                op.operands[i] = sh.copy(value)


@register
@dataclass
class TenzrSortRows(Pass):
    flag: ClassVar[str] = "tenzr-sort-rows"
    summary: ClassVar[str] = ("Sort a rank-1 sort of several operands as one row of rank 2 (IREE 3.13's Vulkan "
                              "compiler crashes on the first), and sort a constant behind an optimization barrier and "
                              "a slice of an argument copied (IREE 3.13 sorts in place and may not write a "
                              "constant's global or an argument).")

    def run(self, module: ir.Operation) -> None:
        sort_rows(module)
