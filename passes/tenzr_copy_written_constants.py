"""`tenzr-copy-written-constants`: the constant operand an op updates (a sort's, a scatter's
or a dynamic_update_slice's) passes through an optimization barrier, which IREE 3.13 copies.
A constant here is a value that depends on no argument (`ones(...)` converted to float64 is
one), which IREE evaluates once into a global.

IREE 3.13 updates such operands in place, and may not write a global:
`tz.sort` of an array a jitted function closes over failed ("write affecting operations on
global resources are restricted to workgroup distributed contexts"), and so did two updates
of one constant (`tz.lax.dynamic_update_slice(z, ...)` twice of one `tz.ones`, under any
flags; a scatter-multiply's jvp, under aggressive fusion): "'stream.yield' op used resource
not listed in explicit captures"; and with IREE's serial schedule (targets.SERIAL_STREAM) a
scatter-multiply's gradient came back wrong, two scatters writing one constant's buffer.

A sort's literal constants get a barrier wherever the sort is; a scatter's or a
dynamic_update_slice's constants only in a function's own block: a barrier in a loop on a
constant from outside it is invariant, IREE hoists it, and a dynamic_update_slice then
updated the one copy in place at every iteration (the gradients of JAX's scans came back
wrong); and a sort of an iota behind a barrier gave a wrong jvp of a sort with a payload
(the forward's and the jvp's sorts of one iota, whose barriers CSE makes one)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named
from tenzr.dialect.ir_imports import ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register

_UPDATED_OPERANDS = {sh.sort.op_name: lambda n: range(n),  # (all of a sort's operands are sorted)
                     sh.scatter.op_name: lambda n: range(n // 2),  # (targets, indices, updates)
                     sh.dynamic_update_slice.op_name: lambda n: range(1)}
"""Per op, which of its `n` operands IREE updates in place."""


def copy_written_constants(module: ir.Operation) -> None:
    memo: dict[ir.Operation, bool] = {}
    for op in ops_named(module, set(_UPDATED_OPERANDS)):
        literal_only = op.name == sh.sort.op_name
        if not literal_only and op.parent.name != "func.func":
            continue
        for i in _UPDATED_OPERANDS[op.name](len(op.operands)):
            made_by = sh.producer(op.operands[i])
            if made_by is None:
                continue
            if made_by.name == sh.constant.op_name if literal_only else sh.is_constant(made_by, memo):
                with op.location, ir.InsertionPoint(op):
                    op.operands[i] = sh.optimization_barrier(op.operands[i])[0]


@register
@dataclass
class TenzrCopyWrittenConstants(Pass):
    flag: ClassVar[str] = "tenzr-copy-written-constants"
    summary: ClassVar[str] = ("Pass the constant operand a sort, scatter or dynamic_update_slice updates through an "
                              "optimization barrier (IREE 3.13 updates it in place, and may not write a constant's "
                              "global).")

    def run(self, module: ir.Operation) -> None:
        copy_written_constants(module)
