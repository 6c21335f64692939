"""`tenzr-reverse-before-strided-slice`: reverse(slice(x)) of a strided slice, as
slice(reverse(x)). IREE 3.13 fails to compile a strided slice feeding a reverse directly
("LLVM Translation failed for ...unrealized_conversion_cast")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.views import view


def reverse_before_strided_slice(module: ir.Operation) -> None:
    for op in ops_named(module, {sh.reverse.op_name}):
        sliced = sh.producer(op.operands[0])
        if sliced is None or sliced.name != sh.slice_.op_name:
            continue
        cut = view(sliced)
        strides = list(cut["strides"])
        if all(st == 1 for st in strides):
            continue
        source = sliced.operands[0]
        shape = sh.spec(source).shape
        start, limit = list(cut["start_indices"]), list(cut["limit_indices"])
        dims = view(op)["dimensions"]
        for d in dims:
            count = -(-(limit[d] - start[d]) // strides[d])
            last = start[d] + (count - 1) * strides[d]
            start[d], limit[d] = shape[d] - 1 - last, shape[d] - start[d]
        with op.location, ir.InsertionPoint(op):
            replace_op(op, [sh.slice_(sh.reverse(source, dims), start, limit, strides)])


@register
@dataclass
class TenzrReverseBeforeStridedSlice(Pass):
    flag: ClassVar[str] = "tenzr-reverse-before-strided-slice"
    summary: ClassVar[str] = ("Rewrite the reverse of a strided slice as the slice of a reverse (IREE 3.13 cannot "
                              "compile the first).")

    def run(self, module: ir.Operation) -> None:
        reverse_before_strided_slice(module)
