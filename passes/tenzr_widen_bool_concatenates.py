"""`tenzr-widen-bool-concatenates`: a concatenation of booleans is made of int32 elements
and compared with zero after. IREE 3.13 writes two concatenations of i1 that share an
operand into one buffer, each in place (`flow.tensor.update` of the shared prefix): with
`[true, a]` and `[true, b]` in one program, the first came out all false and held the
second's values (CPU, with or without aggressive fusion); the same of int8, int32 or float
elements runs right.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.views import view

WIDE = "i32"


def widen_bool_concatenates(module: ir.Operation) -> None:
    for op in ops_named(module, {sh.concatenate.op_name}):
        if sh.spec(op.results[0]).dtype != "i1":
            continue
        with op.location, ir.InsertionPoint(op):
            joined = sh.concatenate([sh.convert(x, WIDE) for x in op.operands], view(op)["dimension"])
            replace_op(op, [sh.compare(joined, sh.constant(0, sh.spec(joined)), "NE")])


@register
@dataclass
class TenzrWidenBoolConcatenates(Pass):
    flag: ClassVar[str] = "tenzr-widen-bool-concatenates"
    summary: ClassVar[str] = ("Concatenate booleans as int32 and compare with zero (IREE 3.13 gives wrong values "
                              "for two concatenations of booleans sharing an operand).")

    def run(self, module: ir.Operation) -> None:
        widen_bool_concatenates(module)
