"""`tenzr-barrier-constant-reductions`: a reduction of a value computed from constants alone
(no argument reaches it) reads it through an optimization barrier.

IREE 3.13 folds an elementwise op of a splat constant into a computation with no input,
fuses that into the reduction, and then reduces over one element of the folded dims: the
sum of `exp(zeros(7))` was 1, of `sqrt(full((5, 4), 4.0))` along its last axis 2 instead
of 8, and `grad` of `(exp(zeros(5)) * y).sum()` in y 1 instead of 5 (the sum of a splat
itself is right, and so are sums of iotas and of non-splat constants). Behind a barrier the
value is computed by a dispatch of its own and the reduction reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named
from tenzr.dialect.ir_imports import Value, ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register


def _from_constants_alone(value: Value, known: dict[ir.Operation, bool]) -> bool:
    """Whether no argument reaches `value`: every op it is computed by (reductions aside, none
    with a region) has no operand that an argument reaches."""
    root = sh.producer(value)
    if root is None:
        return False
    pending = [root]
    while pending:
        op = pending[-1]
        if op in known:
            pending.pop()
            continue
        if op.regions and op.name != sh.reduce.op_name:
            known[op] = False
            pending.pop()
            continue
        producers = [sh.producer(v) for v in op.operands]
        if any(p is None or known.get(p) is False for p in producers):
            known[op] = False
            pending.pop()
        elif all(p in known for p in producers):
            known[op] = True
            pending.pop()
        else:
            pending += [p for p in producers if p is not None and p not in known]
    return known[root]


def barrier_constant_reductions(module: ir.Operation) -> None:
    known: dict[ir.Operation, bool] = {}
    for op in ops_named(module, {sh.reduce.op_name}):
        count = len(op.operands) // 2
        for i, value in enumerate(list(op.operands)[:count]):
            made = sh.producer(value)
            if made is None or made.name in (sh.constant.op_name, sh.optimization_barrier.op_name):
                continue
            if _from_constants_alone(value, known):
                with op.location, ir.InsertionPoint(op):
                    op.operands[i] = sh.optimization_barrier(value)[0]


@register
@dataclass
class TenzrBarrierConstantReductions(Pass):
    flag: ClassVar[str] = "tenzr-barrier-constant-reductions"
    summary: ClassVar[str] = ("Reduce values computed from constants alone through an optimization barrier (IREE "
                              "3.13 reduces a folded elementwise op of a splat over one element).")

    def run(self, module: ir.Operation) -> None:
        barrier_constant_reductions(module)
