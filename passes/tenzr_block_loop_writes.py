"""`tenzr-block-loop-writes`: a counted loop that writes each iteration's rows into a large
buffer it carries (a scan's stacked outputs, an adjoint's tape) writes them into a small
block instead, and the block into the buffer once every k iterations.

IREE 3.13 copies every buffer a loop carries on each iteration: its stream conversion
moves each loop-carried value to the device with a transfer that it does not elide, so a
`dynamic_update_slice` of one row into a carried (T, ...) buffer copies all T rows. A scan
of 256 steps stacking 4,096 float64s each took 51 ms where the same loop without the stack
took 3.8 ms (Zen 4), and a gradient's tape of every carry costs the same. So the loop
becomes two: an outer one over blocks of k iterations, whose body runs an inner loop of k
iterations writing their rows into a block of k rows (carried by the outer loop, so the
inner loop never starts from a constant made inside it), then writes the block into the
buffer. Each iteration then copies k rows and each block the buffer once: about 2·T^1.5
rows copied instead of T², with k near √T (a divisor of T where one is near, so that no
iterations are left over; otherwise the original loop runs the rest).

The loop qualifies when it counts (a counter from a constant to a constant bound, stepping
by 1) at least MIN_TRIPS times and each such buffer is only written, by one
`dynamic_update_slice` whose rows start at a·i + b for the counter i, with |a| the rows it
writes (consecutive iterations fill consecutive rows, in either direction) and every start
in range; the buffers so written hold at least MIN_BYTES.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.types import ITEM_BYTES, TensorSpec, spec_of
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.rules.control import RowWrite, constant_int, counter_of, row_writes, static_trip_count

MIN_TRIPS = 16
MIN_BYTES = 128 * 1024


def _writes(loop: ir.Operation, start: int, trips: int) -> list[RowWrite]:
    """The carried buffers the loop only writes, consecutive iterations filling consecutive
    rows (|a| the rows written), every start in range."""
    found = []
    for w in row_writes(loop):
        buffer = spec_of(loop.operands[w.m])
        first, last = w.a * start + w.b, w.a * (start + trips - 1) + w.b
        in_range = min(first, last) >= 0 and max(first, last) + w.rows <= buffer.shape[0]
        if not w.reads and abs(w.a) == w.rows and in_range:
            found.append(w)
    return found


def _block_length(trips: int) -> int:
    """Iterations per block: a divisor of `trips` near √trips if there is one within a
    factor of two, else √trips rounded."""
    root = math.sqrt(trips)
    divisors = [k for k in range(max(2, math.ceil(root / 2)), math.floor(2 * root) + 1) if trips % k == 0]
    return min(divisors, key=lambda k: abs(k - root)) if divisors else max(2, round(root))


def _as(index: Value, dtype: str) -> Value:
    """An i32 index as the loop's indices are typed."""
    return index if dtype == "i32" else sh.convert(index, dtype)


def _block(loop: ir.Operation) -> None:
    c = counter_of(loop)
    trips = static_trip_count(loop)
    if c is None or trips is None or trips < MIN_TRIPS:
        return
    start = constant_int(loop.operands[c])
    assert start is not None  # (static_trip_count checked it)
    writes = _writes(loop, start, trips)
    if sum(spec_of(loop.operands[w.m]).size * ITEM_BYTES[spec_of(loop.operands[w.m]).dtype] for w in writes) \
            < MIN_BYTES:
        return
    k = _block_length(trips)
    blocks, left = divmod(trips, k)
    n = len(loop.operands)
    by_m = {w.m: w for w in writes}
    i32 = TensorSpec((), "i32")

    counter_dtype = spec_of(loop.operands[c]).dtype

    def inner(values: list[Value]) -> list[Value]:
        """k iterations of the loop's body, writing into the blocks (values: the carries
        with the blocks for the buffers, the block's first iteration, the inner counter j).
        The body's counter is read as first + j: a counter the loop does not compare IREE
        3.13 keeps on the device and reads back to the host wherever it indexes a slice."""
        copy = loop.clone()
        body = copy.regions[1].blocks[0]
        first, j = values[n], values[n + 1]
        here = ir.BlockArgument(j).owner
        local = {}  # each buffer's first row in its block: the iteration's place in the block
        for w in writes:
            row = sh.multiply(j if w.a > 0 else sh.subtract(sh.full(i32, k - 1), j), sh.full(i32, w.rows))
            local[w.m] = _as(row, spec_of(w.write.operands[2]).dtype)
        counter = sh.add(first, _as(j, counter_dtype))
        for i, (argument, value) in enumerate(zip(body.arguments, values[:n], strict=True)):
            argument.replace_all_uses_with(counter if i == c else value)
        operations = [op.operation for op in body.operations]
        for op in operations[:-1]:
            here.append(op)
        returned = list(operations[-1].operands)
        copy.erase()
        for w in writes:
            update = sh.producer(returned[w.m])
            assert update is not None
            update.operands[2] = local[w.m]
            update.results[0].set_type(values[w.m].type)  # (it writes the block now)
        return [*returned, first, sh.add(j, sh.full(i32, 1))]

    def outer(values: list[Value]) -> list[Value]:
        carries, held, b = values[:n], values[n:n + len(writes)], values[-1]
        blocked = [held[writes.index(by_m[j])] if j in by_m else v for j, v in enumerate(carries)]
        first = sh.add(sh.full(i32, start), sh.multiply(b, sh.full(i32, k)))  # the block's first iteration
        out = sh.while_loop([*blocked, _as(first, counter_dtype), sh.full(i32, 0)],
                            lambda ys: sh.compare(ys[n + 1], sh.full(i32, k), "LT"), inner)
        new = list(out[:n])
        for w in writes:
            dtype = spec_of(w.write.operands[2]).dtype
            at = first if w.a > 0 else sh.add(first, sh.full(i32, k - 1))  # (the iteration writing the block's top)
            row = sh.add(sh.multiply(at, sh.full(i32, w.a)), sh.full(i32, w.b))
            starts = [_as(row, dtype), *[sh.full(TensorSpec((), dtype), 0)] * (spec_of(carries[w.m]).rank - 1)]
            new[w.m] = sh.dynamic_update_slice(carries[w.m], out[w.m], starts)
        return [*new, *(out[w.m] for w in writes), sh.add(b, sh.full(i32, 1))]

    with loop.location, ir.InsertionPoint(loop):
        empty = [sh.zeros(spec_of(loop.operands[w.m]).with_shape((k * w.rows, *spec_of(loop.operands[w.m]).shape[1:])))
                 for w in writes]
        results = sh.while_loop([*loop.operands, *empty, sh.full(i32, 0)],
                                lambda xs: sh.compare(xs[-1], sh.full(i32, blocks), "LT"), outer)[:n]
    if left:
        for j, value in enumerate(results):
            loop.operands[j] = value
        return
    for old, value in zip(loop.results, results, strict=True):
        old.replace_all_uses_with(value)
    loop.erase()


def block_loop_writes(module: ir.Operation) -> None:
    for loop in reversed(ops_named(module, {sh.while_loop.op_name})):  # (inner loops first)
        _block(loop)


@register
@dataclass
class TenzrBlockLoopWrites(Pass):
    flag: ClassVar[str] = "tenzr-block-loop-writes"
    summary: ClassVar[str] = ("Counted loops that write each iteration's rows into a large carried buffer (a scan's "
                              "outputs, a tape) write them into a block of about √T iterations, and the block into the "
                              "buffer once per block: IREE 3.13 copies every carried buffer each iteration.")

    def run(self, module: ir.Operation) -> None:
        block_loop_writes(module)
