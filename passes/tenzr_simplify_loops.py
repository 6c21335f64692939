"""`tenzr-simplify-loops`: counters of one loop that start at the same number and step by
the same number become one (so do carried values that never change and start as the same
value), and carried values nothing needs are dropped with what computes them.

A loop's adjoint adds a counter of its own for the tape beside the one a `scan` or
`fori_loop` already counts with. IREE 3.13 turns the counter its loop compares into the
loop's induction variable but keeps the other on the device, and a slice indexed by it then
reads it back to the host every iteration, which waits for all the work before it: the
gradient of a 1,000-step RNN (hidden 64) took 11.9 ms on IREE's task system, 6.0 ms with one
counter (same process).

What a loop carries but nothing needs, IREE computes all the same: that RNN's gradient
stacked the scan's outputs in the forward loop (only their cotangents are needed) and
summed the cotangent of the scanned inputs in the adjoint loop (the gradient is taken with
respect to the weights only): 22 of the 49 dispatches and copies of every eight steps.
Without them, 5.9 -> 3.7 ms on the synchronous driver.

A carried buffer whose final value nothing reads, of which each iteration reads rows and then
writes the same rows, rows no other iteration reads, keeps its reads and loses its write: the
adjoint loop of a scan that stacks its outputs reads their cotangent row by row and zeroes
each row behind it (the transpose of the stacking). IREE 3.13 copies every buffer a loop
carries and changes each iteration (tenzr_block_loop_writes), so the gradient of a 1,000-step
scan stacking 256 float64s took 107-118 ms with the write and 33 ms without it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import captured_values, ops_named, region_terminator
from tenzr.dialect.ir_imports import ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.regions import dce, has_uses, is_pure
from tenzr.passes.registry import Pass, register
from tenzr.passes.rules.control import constant_int, induction_step, row_writes


def _progression(loop: ir.Operation, j: int) -> tuple | None:
    """What determines carried value j's every iteration, when two could share it: the
    value itself when the loop returns it unchanged; (type, start, step) when it starts at a
    constant and each iteration adds a constant to it."""
    body = loop.regions[1].blocks[0]
    start = loop.operands[j]
    if region_terminator(body).operands[j] == body.arguments[j]:
        return ("unchanged", start)
    first, step = constant_int(start), induction_step(body, j)
    return None if first is None or step is None else (str(start.type), first, step)


def _live(loop: ir.Operation) -> set[int]:
    """The carried values something needs: those whose result is read after the loop or
    whose argument the condition reads, and those the body reads to compute them (or reads
    in an op that does more than compute its results)."""
    cond, body = (r.blocks[0] for r in loop.regions)
    returned = list(region_terminator(body).operands)
    position = {argument: j for j, argument in enumerate(body.arguments)}
    ops = [o.operation for o in body.operations][:-1]
    live = {j for j in range(len(returned)) if has_uses(loop.results[j]) or has_uses(cond.arguments[j])}
    while True:
        needed = {returned[j] for j in live}
        for op in reversed(ops):
            if not is_pure(op) or any(r in needed for r in op.results):
                needed.update(op.operands)
                needed.update(captured_values(op))
        more = live | {position[v] for v in needed if v in position}
        if more == live:
            return live
        live = more


def _merge_counters(loop: ir.Operation) -> None:
    cond, body = (r.blocks[0] for r in loop.regions)
    first: dict[tuple, int] = {}
    for j in range(len(loop.operands)):
        key = _progression(loop, j)
        if key is None:
            continue
        i = first.setdefault(key, j)
        if i != j:
            body.arguments[j].replace_all_uses_with(body.arguments[i])
            cond.arguments[j].replace_all_uses_with(cond.arguments[i])
            loop.results[j].replace_all_uses_with(loop.results[i])


def _drop(loop: ir.Operation, kept: list[int]) -> None:
    """Rebuilds `loop` with the carried values `kept` only, and erases what computed the others."""
    body_end = region_terminator(loop.regions[1].blocks[0])
    with body_end.location, ir.InsertionPoint(body_end):
        sh.return_(*[body_end.operands[j] for j in kept])
    body_end.erase()
    dce([o.operation for o in loop.regions[1].blocks[0].operations][:-1])
    with loop.location, ir.InsertionPoint(loop):
        new = ir.Operation.create(sh.while_loop.op_name, results=[loop.results[j].type for j in kept],
                                  operands=[loop.operands[j] for j in kept],
                                  attributes=dict(loop.attributes.items()), regions=2)
        for old_region, region in zip(loop.regions, new.regions, strict=True):
            old = old_region.blocks[0]
            block = region.blocks.append(*[old.arguments[j].type for j in kept])
            for j, argument in zip(kept, block.arguments, strict=True):
                old.arguments[j].replace_all_uses_with(argument)
            for op in [o.operation for o in old.operations]:
                block.append(op)
    for j, result in zip(kept, new.results, strict=True):
        loop.results[j].replace_all_uses_with(result)
    loop.erase()


def _drop_unread_writes(loop: ir.Operation) -> None:
    """A carried buffer whose final value nothing reads, of which each iteration reads some
    rows and then writes the same rows (rows no other iteration reads), needs no write: the
    cotangent of a scan's stacked outputs in its adjoint loop, read row by row and zeroed
    behind (the transpose of the stacking), which IREE copied whole every iteration."""
    end = region_terminator(loop.regions[1].blocks[0])
    for w in row_writes(loop):
        if not has_uses(loop.results[w.m]) and abs(w.a) >= w.rows:
            end.operands[w.m] = w.write.operands[0]
            w.write.erase()


def simplify_loops(module: ir.Operation) -> None:
    for loop in reversed(ops_named(module, {sh.while_loop.op_name})):  # (inner loops first)
        _drop_unread_writes(loop)
        _merge_counters(loop)
        live = _live(loop)
        if len(live) < len(loop.operands):
            _drop(loop, sorted(live))


@register
@dataclass
class TenzrSimplifyLoops(Pass):
    flag: ClassVar[str] = "tenzr-simplify-loops"
    summary: ClassVar[str] = ("Loops: counters that start and step alike become one, carried values nothing needs "
                              "are dropped (IREE reads a second counter back to the host every iteration, and computes "
                              "what a loop carries whether needed or not), and so are writes of rows no later "
                              "iteration or use reads (an adjoint zeroing each row of a cotangent it has read).")

    def run(self, module: ir.Operation) -> None:
        simplify_loops(module)
