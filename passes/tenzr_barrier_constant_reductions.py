"""`tenzr-barrier-constant-reductions`: a reduction of a value computed from constants alone
(no argument reaches it) reads it through an optimization barrier, and a loop with a
reduction inside starts from each splat constant it starts from computed anew (its number
behind a barrier, broadcast).

IREE 3.13 folds an elementwise op of a splat constant into a computation with no input,
fuses that into the reduction, and then reduces over one element of the folded dims: the
sum of `exp(zeros(7))` was 1, of `sqrt(full((5, 4), 4.0))` along its last axis 2 instead
of 8, and `grad` of `(exp(zeros(5)) * y).sum()` in y 1 instead of 5 (the sum of a splat
itself is right, and so are sums of iotas and of non-splat constants). Behind a barrier the
value is computed by a dispatch of its own and the reduction reads it. IREE also runs a
loop's single trip, or its first test, outside the loop, where the start values are
constants to fold: three steps of `s + 0.1 * exp(0.1 * s).sum()` from zeros gave 0.92
instead of 1.25, and a loop testing `any(s != 4)` of 100,000 zeros failed to compile
("exceeded stack allocation limit"). Only splats are made anew: copies of every constant start
gave wrong values in a QR's complete Q (a loop from an identity matrix).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named
from tenzr.dialect.ir_imports import Value, ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.views import splat_value


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


def _barrier(op: ir.Operation, i: int) -> None:
    with op.location, ir.InsertionPoint(op):
        op.operands[i] = sh.optimization_barrier(op.operands[i])[0]


def _copy(op: ir.Operation, i: int) -> None:
    """A loop's splat start computed in a buffer of its own: its number behind a barrier,
    broadcast. (Behind a bare barrier, IREE 3.13 carried two loops from one constant in one
    buffer: an svd and an eigh of one matrix, the svd's result wrong. `sh.copy`, the whole
    splat behind a barrier and reversed twice, compiled a two-layer LSTM's gradient in
    5.56/5.28 s of CPU against 5.07/4.95 for this and 4.61/4.53 with neither; steps alike.)"""
    start = op.operands[i]
    spec = sh.spec(start)
    with op.location, ir.InsertionPoint(op):
        number = sh.optimization_barrier(sh.constant(splat_value(start), spec.with_shape(())))[0]
        op.operands[i] = sh.broadcast_in_dim(number, spec.shape, [])


def barrier_constant_reductions(module: ir.Operation) -> None:
    known: dict[ir.Operation, bool] = {}
    for op in ops_named(module, {sh.reduce.op_name, sh.while_loop.op_name}):
        if op.name == sh.while_loop.op_name:
            # (IREE runs a loop's first test, or a single trip, outside the loop, where its
            # start values are constants to fold: a loop of sums from zeros gave wrong values)
            if ops_named(op, {sh.reduce.op_name}):
                for i, value in enumerate(op.operands):
                    if splat_value(value) is not None and sh.spec(value).rank:
                        _copy(op, i)
            continue
        for i, value in enumerate(list(op.operands)[:len(op.operands) // 2]):
            made = sh.producer(value)
            if made is not None and made.name not in (sh.constant.op_name, sh.optimization_barrier.op_name) and \
                    _from_constants_alone(value, known):
                _barrier(op, i)


@register
@dataclass
class TenzrBarrierConstantReductions(Pass):
    flag: ClassVar[str] = "tenzr-barrier-constant-reductions"
    summary: ClassVar[str] = ("Reduce values computed from constants alone through an optimization barrier, and start "
                              "loops with reductions from their splat starts made anew behind one (IREE 3.13 reduces a "
                              "folded elementwise op of a splat over one element).")

    def run(self, module: ir.Operation) -> None:
        barrier_constant_reductions(module)
