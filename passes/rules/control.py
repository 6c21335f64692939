"""Control flow: `tenzr.while`, `tenzr.case` and their StableHLO twins (`stablehlo.while`,
`stablehlo.case`, as JAX exports `fori_loop`, `scan`, `while_loop`, `cond`, `switch`).

The lowering moves the regions into the StableHLO op. The VJP, JVP and batching rules
transform a region through the driver's region API: the region becomes a function, the
driver derives its VJP (JVP, batched version), and the rule inlines it into the new op.

A loop's adjoint runs its iterations backwards. It needs the carried values at the start of
each iteration; the forward loop stores them on a tape (loop-invariant carries once), and
each adjoint step recomputes its iteration from them and sweeps back through it (so the
forward keeps only the carries, as under `checkpoint`). A loop whose trip count is known
(a counter compared with a bound, as `fori_loop` and `scan` write it) has one tape slot per
iteration. Otherwise (a `while_loop` whose condition depends on data) a first loop counts
the iterations N, a second stores every s-th carry on a tape of `TAPE_SLOTS` slots
(s = ⌈N / TAPE_SLOTS⌉), and the adjoint step k recomputes its carry from slot ⌊k / s⌋: any
trip count is exact, at (s - 1) / 2 extra iterations per step once N exceeds the slots.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tenzr.dialect import ops as T
from tenzr.dialect.context import captured_values, region_terminator
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.opdef import Op
from tenzr.dialect.types import INT_TYPES, TensorSpec, spec_of
from tenzr.passes import stablehlo as sh
from tenzr.passes.regions import has_uses
from tenzr.passes.rules import Cotangents, Tangents, batch, jvp, lowers, vjp
from tenzr.passes.rules.batching import Batched, materialized
from tenzr.passes.views import splat_value

TAPE_SLOTS = 1024
"""Carries a loop with a data-dependent trip count keeps for its adjoint (one more slot
takes the iterations that are not stored)."""
CHECKPOINT_EVERY = "tenzr.checkpoint_every"
"""An i64 attribute of a loop of known trip count: its adjoint keeps every k-th carry and
runs each segment of k iterations again (memory for T/k + k carries, one more forward
pass). `tz.lax.scan(..., checkpoint_every=k)` sets it. IREE 3.13 fails at run time on some
such adjoints ("indirect buffer reference slot 0 is out range of the declared binding
capacity of the command buffer": a null buffer reaches a copy), fewer without memoized
command buffers (compiler.NO_MEMOIZATION)."""

I32 = TensorSpec((), "i32")
REGION_OPS = frozenset({T.while_.name, T.case.name, sh.while_loop.op_name, sh.case.op_name, sh.if_.op_name})
"""The ops whose rules transform their regions (and the values those capture)."""


# --------------------------------------------------------------------------- lowering


def _end_with_return(block: ir.Block) -> None:
    """Turns the block's tenzr.yield (or a yield already lowered) into stablehlo.return."""
    last = region_terminator(block)
    if last.name == T.yield_.name:
        with last.location, ir.InsertionPoint(last):
            sh.return_(*last.operands)
        last.erase()


@lowers(T.yield_)
def _lower_yield(op: Op) -> list[Value]:
    assert op.operation is not None
    sh.return_(*op.operands)
    return []


@lowers(T.while_)
def _lower_while(op: Op) -> list[Value]:
    assert op.operation is not None
    loop = sh.create(sh.while_loop.op_name, op.results, op.operands, regions=2)
    for source, target in zip(op.operation.regions, loop.regions, strict=True):
        block = source.blocks[0]
        block.append_to(target)
        _end_with_return(block)
    return list(loop.results)


@lowers(T.case)
def _lower_case(op: Op) -> list[Value]:
    assert op.operation is not None
    index, operands = op.operands[0], op.operands[1:]
    out = sh.create(sh.case.op_name, op.results, [index], regions=len(op.operation.regions))
    for source, target in zip(op.operation.regions, out.regions, strict=True):
        block = source.blocks[0]
        for argument, operand in zip(block.arguments, operands, strict=True):
            argument.replace_all_uses_with(operand)
        branch = target.blocks.append()
        for inner in [o.operation for o in block.operations]:
            branch.append(inner)
        _end_with_return(branch)
    return list(out.results)


# --------------------------------------------------------------------------- trip counts


def constant_int(value: Value) -> int | None:
    """The integer a splat constant holds (converted or not), if `value` is one."""
    if spec_of(value).dtype not in INT_TYPES:
        return None
    owner = sh.producer(value)
    if owner is not None and owner.name in (T.convert.name, sh.convert.op_name):
        value = owner.operands[0]
    number = splat_value(value)
    return number if isinstance(number, int) and not isinstance(number, bool) else None


def _is_compare(op: ir.Operation, direction: str) -> bool:
    if op.name == T.compare.name:
        return ir.StringAttr(op.attributes["direction"]).value == direction.lower()
    if op.name == sh.compare.op_name:
        return str(op.attributes["comparison_direction"]).endswith(f" {direction}>")
    return False


def induction_step(body: ir.Block, j: int) -> int | None:
    """c, when the body yields carry j as `x_j + c` for an integer constant c."""
    argument = body.arguments[j]
    if spec_of(argument).dtype not in INT_TYPES:
        return None
    step = sh.producer(region_terminator(body).operands[j])
    if step is None or step.name not in (T.add.name, sh.add.op_name):
        return None
    a, b = step.operands
    other = b if a == argument else a if b == argument else None
    return None if other is None else constant_int(other)


def counter_of(loop: ir.Operation) -> int | None:
    """Which carried value the loop's condition tests with `x_j < bound`."""
    cond = loop.regions[0].blocks[0]
    test = sh.producer(region_terminator(cond).operands[0])
    if test is None or not _is_compare(test, "LT") or test.operands[0] not in list(cond.arguments):
        return None
    return list(cond.arguments).index(test.operands[0])


def static_trip_count(loop: ir.Operation) -> int | None:
    """The number of iterations, when the loop counts: its condition is `x_j < bound` with
    x_j (`counter_of`) starting at a constant and growing by the constant 1, and the bound a
    constant (or a carry that starts at one and does not change)."""
    j = counter_of(loop)
    if j is None:
        return None
    cond, body = (region.blocks[0] for region in loop.regions)
    test = sh.producer(region_terminator(cond).operands[0])
    assert test is not None  # (counter_of found it)
    bound, arguments = test.operands[1], list(cond.arguments)
    if bound in arguments:
        k = arguments.index(bound)
        if region_terminator(body).operands[k] != body.arguments[k]:
            return None
        bound = loop.operands[k]
    start, stop = constant_int(loop.operands[j]), constant_int(bound)
    if start is None or stop is None or induction_step(body, j) != 1:
        return None
    return max(stop - start, 0)


def affine_in_counter(value: Value, loop: ir.Operation, c: int) -> tuple[int, int] | None:
    """(a, b) when `value`, in the loop's body, is a·x_c + b for its carried value c (through
    adds, subtracts, products with constants, integer conversions, and carried values that
    start as a constant and never change), else None."""
    body = loop.regions[1].blocks[0]
    arguments = list(body.arguments)
    returned = list(region_terminator(body).operands)

    def of(v: Value) -> tuple[int, int] | None:
        if v in arguments:
            j = arguments.index(v)
            if j == c:
                return 1, 0
            start = constant_int(loop.operands[j])
            return (0, start) if start is not None and returned[j] == v else None
        number = constant_int(v)
        if number is not None:
            return 0, number
        op = sh.producer(v)
        if op is None or spec_of(v).dtype not in INT_TYPES:
            return None
        if op.name == sh.convert.op_name:
            return of(op.operands[0])
        if op.name not in (sh.add.op_name, sh.subtract.op_name, sh.multiply.op_name):
            return None
        left, right = of(op.operands[0]), of(op.operands[1])
        if left is None or right is None:
            return None
        (a1, b1), (a2, b2) = left, right
        if op.name == sh.add.op_name:
            return a1 + a2, b1 + b2
        if op.name == sh.subtract.op_name:
            return a1 - a2, b1 - b2
        return None if a1 and a2 else (a1 * b2 + a2 * b1, b1 * b2)

    return of(value)


@dataclass
class RowWrite:
    """A carried buffer of a counted loop that each iteration writes rows of: one
    dynamic_update_slice of `rows` rows starting at a·i + b for the counter i, whose result
    the body yields and nothing else reads, after `reads` of the same rows (dynamic_slices at
    the same starts) and no other use of the buffer."""

    m: int
    write: ir.Operation
    reads: list[ir.Operation]
    a: int
    b: int
    rows: int


def row_writes(loop: ir.Operation) -> list[RowWrite]:
    """The loop's carried buffers written a block of rows per iteration (`RowWrite`); none
    unless the loop counts (`static_trip_count`)."""
    c = counter_of(loop)
    if c is None or static_trip_count(loop) is None:
        return []
    cond, body = (r.blocks[0] for r in loop.regions)
    returned = list(region_terminator(body).operands)
    found = []
    for m, argument in enumerate(body.arguments):
        if m == c or has_uses(cond.arguments[m]):
            continue
        uses = [(u.owner, u.operand_number) for u in argument.uses]
        writes = [o for o, k in uses if o.name == sh.dynamic_update_slice.op_name and k == 0]
        if len(writes) != 1 or returned[m] != writes[0].results[0] or len(list(writes[0].results[0].uses)) != 1 \
                or any(k != 0 for _, k in uses):
            continue
        write = writes[0]
        buffer, rows, starts = spec_of(argument), spec_of(write.operands[1]), list(write.operands)[2:]
        reads = [o for o, _ in uses if o is not write]
        if buffer.rank == 0 or rows.shape[0] == 0 or rows.shape[1:] != buffer.shape[1:] \
                or not all(o.name == sh.dynamic_slice.op_name and list(o.operands)[1:] == starts
                           and spec_of(o.results[0]).shape == rows.shape for o in reads):
            continue
        affine = affine_in_counter(starts[0], loop, c)
        if affine is not None:
            found.append(RowWrite(m, write, reads, *affine, rows.shape[0]))
    return found


# --------------------------------------------------------------------------- loops


def _i32(value: int) -> Value:
    return sh.full(I32, value)


def row(tape: Value, index: Value, spec: TensorSpec) -> Value:
    """tape[index] (a slot of a tape of `spec` values)."""
    zero = [_i32(0)] * spec.rank
    return sh.reshape(sh.dynamic_slice(tape, [index, *zero], (1, *spec.shape)), spec.shape)


def store(tape: Value, index: Value, value: Value) -> Value:
    s = spec_of(value)
    return sh.dynamic_update_slice(tape, sh.reshape(value, (1, *s.shape)), [index, *[_i32(0)] * s.rank])


def _count_up(i: Value) -> Value:
    return sh.add(i, _i32(1))


def _groups(state: Sequence[Sequence[Value]], cond: Callable[[list[list[Value]]], Value],
            body: Callable[[list[list[Value]]], Sequence[Sequence[Value]]]) -> list[list[Value]]:
    """sh.while_loop over groups of carried values (the builders see and return groups)."""
    sizes = [len(g) for g in state]

    def split(values: Sequence[Value]) -> list[list[Value]]:
        out, at = [], 0
        for size in sizes:
            out.append(list(values[at:at + size]))
            at += size
        return out

    def flat_body(xs: list[Value]) -> list[Value]:
        groups = body(split(xs))
        assert [len(g) for g in groups] == sizes
        return [v for g in groups for v in g]

    return split(sh.while_loop([v for g in state for v in g], lambda xs: cond(split(xs)), flat_body))


def _as_value(n: int | Value) -> Value:
    return _i32(n) if isinstance(n, int) else n


@dataclass
class _Env:
    """The values a loop's adjoint reads besides its tapes: the initial values of the
    carries that are loop-invariant or counters, and the values the loop captures. Inside
    a loop built here they are that loop's block arguments."""

    fixed: dict[int, Value]
    captured: list[Value]

    def values(self) -> list[Value]:
        return [*self.fixed.values(), *self.captured]

    def rebuilt(self, values: Sequence[Value]) -> _Env:
        return _Env(dict(zip(self.fixed, values[:len(self.fixed)], strict=True)), list(values[len(self.fixed):]))


@dataclass
class _Loop:
    """One while loop under differentiation, as its adjoint sees it."""

    driver: Any
    specs: list[TensorSpec]
    body_fn: ir.Operation
    pullback: ir.Operation
    floats: list[int]
    """Carries with cotangents."""
    steps: dict[int, int]
    """Counters: carry j is init_j + iteration · steps[j]."""
    taped: list[int]
    """Carries stored on tapes: those the adjoint needs that change, counters aside."""
    rerun_fn: ir.Operation
    """The body computing the taped carries only: what runs again in the adjoint (a
    scan's stacked outputs, say, are not written again)."""

    def carry_at(self, stored: dict[int, Value], env: _Env, iteration: Value) -> list[Value]:
        """The full carry at the start of `iteration`: taped values, counters, and the
        initial values of the others (invariants, and carries nothing needs)."""
        carry = []
        for j, spec in enumerate(self.specs):
            if j in stored:
                carry.append(stored[j])
            elif j in self.steps:
                step = sh.multiply(sh.convert(iteration, spec.dtype), sh.full(spec, self.steps[j]))
                carry.append(sh.add(env.fixed[j], step))
            else:
                carry.append(env.fixed[j])
        return carry

    def step(self, carry: Sequence[Value], env: _Env) -> list[Value]:
        return self.driver.call_inline(self.body_fn, [*carry, *env.captured])

    def rerun(self, taped: Sequence[Value], env: _Env, iteration: Value) -> list[Value]:
        """The taped carries after `iteration`, from those before it."""
        carry = self.carry_at(dict(zip(self.taped, taped, strict=True)), env, iteration)
        return self.driver.call_inline(self.rerun_fn, [*carry, *env.captured])

    def tapes(self, slots: int) -> list[Value]:
        return [sh.zeros(self.specs[j].with_shape((slots, *self.specs[j].shape))) for j in self.taped]

    def forward(self, start: Sequence[Value], env: _Env, count: int | Value, slots: int,
                stride: int | Value | None, tapes: Sequence[Value] | None = None,
                first: int | Value | None = None) -> tuple[list[Value], list[Value]]:
        """`count` iterations from `start`: (the carry after them, the tapes, new or
        `tapes` written over). The taped carries of iteration i go to slot i, or with a
        stride, of every stride-th iteration to slot i / stride (the others to the last
        slot, which nothing reads). With `first` (the loop's iteration `start` is at), the
        iterations are reruns: `start` and the result are the taped carries only."""
        tapes = self.tapes(slots) if tapes is None else list(tapes)
        bounds = [v for v in (count, stride, first) if not isinstance(v, int) and v is not None]

        def cond(g: list[list[Value]]) -> Value:
            return sh.compare(g[0][0], _as_value(count) if isinstance(count, int) else g[4][0], "LT")

        def body(g: list[list[Value]]) -> list[list[Value]]:
            (i,), carry, tape_values, env_values, bound_values = g
            bound = iter(bound_values[1:] if not isinstance(count, int) else bound_values)
            every = None if stride is None else _as_value(stride) if isinstance(stride, int) else next(bound)
            if every is None:
                slot = i
            else:
                quotient = sh.divide(i, every)
                slot = sh.select(sh.compare(sh.multiply(quotient, every), i, "EQ"), quotient, _i32(slots - 1))
            inner = reads.rebuilt(env_values)
            if first is None:
                stored = [store(tape, slot, carry[j]) for tape, j in zip(tape_values, self.taped, strict=True)]
                return [[_count_up(i)], self.step(carry, inner), stored, env_values, bound_values]
            stored = [store(tape, slot, c) for tape, c in zip(tape_values, carry, strict=True)]
            at = sh.add(_as_value(first) if isinstance(first, int) else next(bound), i)
            return [[_count_up(i)], self.rerun(carry, inner, at), stored, env_values, bound_values]

        reads = env if first is not None else _Env({}, env.captured)  # (the whole body reads no carry's init)
        out = _groups([[_i32(0)], list(start), tapes, reads.values(), bounds], cond, body)
        return out[1], out[2]

    def backward(self, tapes: Sequence[Value], env: _Env, count: int | Value, stride: int | Value | None,
                 first: int | Value, cts: Sequence[Value], captured_cts: Sequence[Value]
                 ) -> tuple[list[Value], list[Value]]:
        """The adjoint of `count` iterations (the first of them iteration `first` of the
        loop) from the tapes `forward` wrote: the cotangents of the float carries before
        them, and those of the captured values summed over them."""
        bounds = [v for v in (count, stride, first) if not isinstance(v, int) and v is not None]

        def cond(g: list[list[Value]]) -> Value:
            return sh.compare(g[0][0], _as_value(count) if isinstance(count, int) else g[5][0], "LT")

        def body(g: list[list[Value]]) -> list[list[Value]]:
            (done,), ct_x, ct_c, tape_values, env_values, bound_values = g
            bound = iter(bound_values)
            count_ = _as_value(count) if isinstance(count, int) else next(bound)
            stride_ = None if stride is None else _as_value(stride) if isinstance(stride, int) else next(bound)
            first_ = _as_value(first) if isinstance(first, int) else next(bound)
            inner = env.rebuilt(env_values)
            k = sh.subtract(sh.subtract(count_, done), _i32(1))
            slot = k if stride_ is None else sh.divide(k, stride_)
            stored = {j: row(t, slot, self.specs[j]) for t, j in zip(tape_values, self.taped, strict=True)}
            base = k if stride_ is None else sh.multiply(slot, stride_)
            if stride_ is not None:
                taped = self.recompute([stored[j] for j in self.taped], inner, sh.subtract(k, base),
                                       sh.add(first_, base))
                stored = dict(zip(self.taped, taped, strict=True))
            carry = self.carry_at(stored, inner, sh.add(first_, k))
            seeds = [sh.zeros(s) for s in self.specs]
            for j, c in zip(self.floats, ct_x, strict=True):
                seeds[j] = c
            grads = self.driver.call_inline(self.pullback, [*carry, *inner.captured, *seeds])
            new_ct_x, new_ct_c = grads[:len(ct_x)], grads[len(ct_x):]
            summed = [accumulate(a, b) for a, b in zip(ct_c, new_ct_c, strict=True)]
            return [[_count_up(done)], new_ct_x, summed, tape_values, env_values, bound_values]

        out = _groups([[_i32(0)], list(cts), list(captured_cts), list(tapes), env.values(), bounds], cond, body)
        return out[1], out[2]

    def recompute(self, taped: list[Value], env: _Env, steps: Value, first: Value) -> list[Value]:
        """The taped carries after `steps` reruns from iteration `first`."""
        def cond(g: list[list[Value]]) -> Value:
            return sh.compare(g[0][0], g[3][0], "LT")

        def body(g: list[list[Value]]) -> list[list[Value]]:
            (i,), xs, env_values, (steps_, first_) = g
            at = sh.add(first_, i)
            return [[_count_up(i)], self.rerun(xs, env.rebuilt(env_values), at), env_values, [steps_, first_]]

        return _groups([[_i32(0)], taped, env.values(), [steps, first]], cond, body)[1]

    def segmented_backward(self, tapes: Sequence[Value], env: _Env, count: int, every: int, cts: Sequence[Value],
                           captured_cts: Sequence[Value]) -> tuple[list[Value], list[Value]]:
        """The adjoint from a tape of every `every`-th carry: segment by segment, last
        first, the segment's iterations are run again from its stored carry (their carries
        kept on a tape of `every` slots) and swept back through."""
        segments = -(-count // every)
        # (One set of segment buffers, carried through and written over by each segment:
        # made in the loop's body, they would be constants that start inner loops, on
        # which IREE 3.13 fails at run time. Filled with the first stored carry rather
        # than zeros: from a constant, IREE failed at run time on three of eight RNN
        # gradients, from this on one.)
        buffers0 = [sh.broadcast_in_dim(row(tape, _i32(0), self.specs[t]), (every, *self.specs[t].shape),
                                        list(range(1, 1 + self.specs[t].rank)))
                    for tape, t in zip(tapes, self.taped, strict=True)]

        def cond(g: list[list[Value]]) -> Value:
            return sh.compare(g[0][0], _i32(segments), "LT")

        def body(g: list[list[Value]]) -> list[list[Value]]:
            (done,), ct_x, ct_c, tape_values, env_values, buffer_values = g
            inner = env.rebuilt(env_values)
            j = sh.subtract(_i32(segments - 1), done)
            start = sh.multiply(j, _i32(every))
            length = sh.minimum(_i32(every), sh.subtract(_i32(count), start))
            taped = [row(tape, j, self.specs[t]) for tape, t in zip(tape_values, self.taped, strict=True)]
            _, buffers = self.forward(taped, inner, length, every, None, buffer_values, first=start)
            new_ct_x, new_ct_c = self.backward(buffers, inner, length, None, start, ct_x, ct_c)
            return [[_count_up(done)], new_ct_x, new_ct_c, tape_values, env_values, buffers]

        out = _groups([[_i32(0)], list(cts), list(captured_cts), list(tapes), env.values(), buffers0], cond, body)
        return out[1], out[2]


def checkpoint_every(loop: ir.Operation, trip_count: int | None) -> int | None:
    """The segment length of a loop whose adjoint keeps every k-th carry only: its
    `tenzr.checkpoint_every` attribute, for a known trip count (1 or 0: every carry)."""
    if trip_count is None or CHECKPOINT_EVERY not in loop.attributes:
        return None
    every = ir.IntegerAttr(loop.attributes[CHECKPOINT_EVERY]).value
    return every if 1 < every < trip_count else None


def _dependencies(func: ir.Operation) -> list[set[int]]:
    """For each result of `func`, the arguments it depends on: one sweep over its body in
    order (a recursion along the uses overflowed Python's stack on a body a thousand ops deep,
    as a long scan body unrolled)."""
    block = func.regions[0].blocks[0]
    deps: dict[Value, frozenset[int]] = {a: frozenset([i]) for i, a in enumerate(block.arguments)}
    none: frozenset[int] = frozenset()
    for op in block.operations:
        found = none.union(*(deps.get(v, none) for v in [*op.operands, *captured_values(op)]))
        for r in op.results:
            deps[r] = found
    return [set(deps.get(v, none)) for v in region_terminator(block).operands]


@vjp(T.while_, sh.while_loop, adjoint="an adjoint loop running the iterations backwards, each recomputed from its "
     "carries (stored per iteration; every s-th of them when the trip count depends on data, or under "
     "checkpointing) and swept through by the body's VJP")
def _while(op: Op, ct: Value | tuple[Value, ...]) -> Cotangents:
    cts = list(ct) if isinstance(ct, tuple) else [ct]
    loop, driver = op.operation, op.driver
    assert loop is not None and driver is not None
    captured = captured_values(loop)
    n, specs, init = len(op.operands), list(op.specs), list(op.operands)
    body_fn = driver.region_function(loop.regions[1], captured)
    body_block = loop.regions[1].blocks[0]
    yielded = list(region_terminator(body_block).operands)
    invariant = {j for j in range(n) if yielded[j] == body_block.arguments[j]}
    steps = {j: step for j in range(n) if (step := induction_step(body_block, j)) is not None}
    # (A counter's value at iteration k is init + k·step: it needs no tape, and reading it
    # back from one would cost IREE a device-to-host copy per iteration where it indexes.)
    floats = [j for j in range(n) if specs[j].is_inexact]
    float_captured = [k for k in range(len(captured)) if spec_of(captured[k]).is_inexact]
    pullback = driver.vjp_of(body_fn, [*floats, *(n + k for k in float_captured)])
    # The carries the adjoint needs: those the pullback reads, and those they are
    # recomputed from (a scan's stacked outputs are neither).
    needed = {j for j in range(n) if j not in driver.unused_arguments(pullback)}
    dependencies = _dependencies(body_fn)
    while True:
        more = needed | {d for j in needed for d in dependencies[j] if d < n}
        if more == needed:
            break
        needed = more
    taped = [j for j in range(n) if j in needed and j not in invariant and j not in steps]
    rerun_fn = driver.restricted(body_fn, taped)
    info = _Loop(driver, specs, body_fn, pullback, floats, steps, taped, rerun_fn)
    # (A carry nothing needs is read as its initial value: IREE 3.13 fails at run time,
    # "indirect buffer reference slot 0 is out range", on inner loops that start from a
    # constant made in an outer loop's body, as zeros would be.)
    env = _Env({j: init[j] for j in range(n) if j not in taped}, captured)
    trip_count = static_trip_count(loop)
    every = checkpoint_every(loop, trip_count)
    with ir.InsertionPoint(loop), loop.location:
        # (A known trip count is a constant in each loop, not a carry: IREE then keeps the
        # loop's control on the host instead of reading a condition back every iteration,
        # 145 ms against 25 for 1,000 iterations of a 64-wide tanh RNN.)
        if trip_count is not None and every is None:
            results, tapes = info.forward(init, env, trip_count, trip_count, None)
        elif trip_count is not None:
            assert every is not None
            results, tapes = info.forward(init, env, trip_count, -(-trip_count // every) + 1, every)
        else:
            cond_fn = driver.region_function(loop.regions[0], captured)
            results, count = _counted_forward(init, captured, cond_fn, body_fn, driver)
            driver.forget(cond_fn)
            stride = sh.maximum(sh.divide(sh.add(count, _i32(TAPE_SLOTS - 1)), _i32(TAPE_SLOTS)), _i32(1))
            _, tapes = info.forward([init[j] for j in taped], env, count, TAPE_SLOTS + 1, stride, first=0)
    for old, new in zip(loop.results, results, strict=True):
        old.replace_all_uses_with(new)
    carried_cts = [cts[j] for j in floats]
    captured_cts = [sh.zeros(spec_of(captured[k])) for k in float_captured]
    if trip_count is not None and every is None:
        ct_x, ct_c = info.backward(tapes, env, trip_count, None, 0, carried_cts, captured_cts)
    elif trip_count is not None:
        assert every is not None
        ct_x, ct_c = info.segmented_backward(tapes, env, trip_count, every, carried_cts, captured_cts)
    else:
        ct_x, ct_c = info.backward(tapes, env, count, stride, 0, carried_cts, captured_cts)
    for k, c in zip(float_captured, ct_c, strict=True):
        driver.accumulate(captured[k], c, loop.name)
    driver.forget(rerun_fn, pullback, body_fn)
    grads: list[Value | None] = [None] * n
    for j, c in zip(floats, ct_x, strict=True):
        grads[j] = c
    return grads


@jvp(T.while_, sh.while_loop)
def _while_jvp(op: Op, tangents: Tangents) -> Tangents:
    """The loop carrying the tangents of the carries that vary (those given one, and those
    the body computes from varying values) beside its values, its body the body's JVP."""
    loop, driver = op.operation, op.driver
    assert loop is not None and driver is not None
    captured = captured_values(loop)
    n, specs, init = len(op.operands), list(op.specs), list(op.operands)
    outer = [driver.tangent(v) for v in captured]
    body_fn = driver.region_function(loop.regions[1], captured)
    dependencies = _dependencies(body_fn)
    moving = {n + k for k, t in enumerate(outer) if t is not None}
    carried = {j for j in range(n) if tangents[j] is not None}
    while True:
        more = carried | {j for j in range(n) if specs[j].is_inexact and dependencies[j] & (carried | moving)}
        if more == carried:
            break
        carried = more
    order = sorted(carried)
    push = driver.jvp_of(body_fn, [*order, *sorted(moving)])
    cond_fn = driver.region_function(loop.regions[0], captured)
    given = [outer[k - n] for k in sorted(moving)]

    def cond(g: list[list[Value]]) -> Value:
        return driver.call_inline(cond_fn, [*g[0], *captured])[0]

    def body(g: list[list[Value]]) -> list[list[Value]]:
        out = driver.call_inline(push, [*g[0], *captured, *g[1], *given])
        return [out[:n], [out[n + j] for j in order]]

    values, dots = _groups([init, [tangents[j] or sh.zeros(specs[j]) for j in order]], cond, body)
    driver.replace(list(loop.results), values)
    driver.forget(push, cond_fn, body_fn)
    by_carry = dict(zip(order, dots, strict=True))
    return [by_carry.get(j) for j in range(n)]


def accumulate(total: Value, ct: Value) -> Value:
    """total + ct. A cotangent written into zeros at one place (a scanned input's, from
    its dynamic slice) is added there only, not over the whole tensor each iteration."""
    update = sh.producer(ct)
    if update is not None and update.name == sh.dynamic_update_slice.op_name and splat_value(update.operands[0]) == 0:
        window, starts = update.operands[1], list(update.operands)[2:]
        here = sh.dynamic_slice(total, starts, spec_of(window).shape)
        return sh.dynamic_update_slice(total, sh.add(here, window), starts)
    return sh.add(total, ct)


def _counted_forward(init: Sequence[Value], captured: Sequence[Value], cond_fn: ir.Operation, body_fn: ir.Operation,
                     driver: Any) -> tuple[list[Value], Value]:
    """The loop as it is, counting its iterations: (its results, the count)."""
    def cond(g: list[list[Value]]) -> Value:
        return driver.call_inline(cond_fn, [*g[0], *g[1]])[0]

    def body(g: list[list[Value]]) -> list[list[Value]]:
        return [driver.call_inline(body_fn, [*g[0], *g[1]]), g[1], [_count_up(g[2][0])]]

    out = _groups([list(init), list(captured), [_i32(0)]], cond, body)
    return out[0], out[2][0]


# --------------------------------------------------------------------------- conditionals


@vjp(T.case, sh.case, sh.if_, adjoint="a case (an if) on the same index (predicate) whose branch b is branch b's "
     "VJP (each recomputes its branch's forward)")
def _case(op: Op, ct: Value | tuple[Value, ...]) -> Cotangents:
    cts = list(ct) if isinstance(ct, tuple) else [ct]
    case, driver = op.operation, op.driver
    assert case is not None and driver is not None
    captured = captured_values(case)
    inputs = list(op.operands[1:])
    index = op.operands[0]
    if case.name == sh.if_.op_name:  # (its regions: then, else; a case's index 0 runs the first)
        index = sh.convert(sh.not_(index), "i32")
    values = [*inputs, *captured]
    wrt = [i for i, v in enumerate(values) if spec_of(v).is_inexact]
    functions = [driver.region_function(region, captured) for region in case.regions]
    vjps = [driver.vjp_of(f, wrt) for f in functions]

    def branch(vjp_fn: ir.Operation):
        return lambda: driver.call_inline(vjp_fn, [*values, *cts])

    grads = sh.case(index, [spec_of(values[i]) for i in wrt], [branch(f) for f in vjps]) if wrt else []
    driver.forget(*vjps, *functions)
    by_value = dict(zip(wrt, grads, strict=True))
    for i in range(len(inputs), len(values)):
        if i in by_value:
            driver.accumulate(values[i], by_value[i], case.name)
    return [None, *(by_value.get(i) for i in range(len(inputs)))]


@jvp(T.case, sh.case, sh.if_)
def _case_jvp(op: Op, tangents: Tangents) -> Tangents:
    """A case (an if) on the same index (predicate) whose branch b is branch b's JVP."""
    case, driver = op.operation, op.driver
    assert case is not None and driver is not None
    captured = captured_values(case)
    index = op.operands[0]
    if case.name == sh.if_.op_name:
        index = sh.convert(sh.not_(index), "i32")
    values = [*op.operands[1:], *captured]
    given = [*tangents[1:], *(driver.tangent(v) for v in captured)]
    wrt = [i for i, t in enumerate(given) if t is not None]
    functions = [driver.region_function(region, captured) for region in case.regions]
    pushes = [driver.jvp_of(f, wrt) for f in functions]
    m = len(op.results)
    floats = [r for r in range(m) if op.results[r].is_inexact]

    def branch(push: ir.Operation) -> Callable[[], list[Value]]:
        def run() -> list[Value]:
            out = driver.call_inline(push, [*values, *(given[i] for i in wrt)])
            return [*out[:m], *(out[m + r] for r in floats)]
        return run

    out = sh.case(index, [*op.results, *(op.results[r] for r in floats)], [branch(p) for p in pushes])
    driver.replace(list(case.results), out[:m])
    driver.forget(*pushes, *functions)
    by_result = dict(zip(floats, out[m:], strict=True))
    return [by_result.get(r) for r in range(m)]


# --------------------------------------------------------------------------- batching


def _along_batch(flags: Value, like: Value) -> Value:
    """A [batch] predicate broadcast to a batched value's shape."""
    return sh.broadcast_in_dim(flags, spec_of(like).shape, [0])


@batch(T.while_, sh.while_loop)
def _while_batch(op: Op, batched: Batched) -> list[Value]:
    """The loop over the batched body. The carries that vary with the batch (those given
    batched, and those the body computes from varying values) carry it; the others stay as
    they are, so a counter still counts. A condition that varies with the batch runs the
    loop while any element's holds, each element's carries kept once its own fails."""
    loop, driver = op.operation, op.driver
    assert loop is not None and driver is not None
    captured = captured_values(loop)
    n, init = len(op.operands), list(op.operands)
    outer = [driver.batched.get(v) for v in captured]
    body_fn = driver.region_function(loop.regions[1], captured)
    cond_fn = driver.region_function(loop.regions[0], captured)
    dependencies = _dependencies(body_fn)
    moving = {n + k for k, b in enumerate(outer) if b is not None}
    carried = {j for j in range(n) if batched[j] is not None}
    while True:
        more = carried | {j for j in range(n) if dependencies[j] & (carried | moving)}
        if more == carried:
            break
        carried = more
    varies = bool(_dependencies(cond_fn)[0] & (carried | moving))
    if varies:
        carried = set(range(n))
    flags = [j in carried for j in range(n)] + [b is not None for b in outer]
    body_b = driver.batch_of(body_fn, flags, [0 if j in carried else None for j in range(n)])
    cond_b = driver.batch_of(cond_fn, flags, [0 if varies else None])
    extra = [v if b is None else b for v, b in zip(captured, outer, strict=True)]

    def cond(xs: list[Value]) -> Value:
        holds = driver.call_inline(cond_b, [*xs, *extra])[0]
        return sh.reduce(holds, False, [0], "or") if varies else holds

    def body(xs: list[Value]) -> list[Value]:
        new = driver.call_inline(body_b, [*xs, *extra])
        if not varies:
            return new
        holds = driver.call_inline(cond_b, [*xs, *extra])[0]
        return [sh.select(_along_batch(holds, a), a, b) for a, b in zip(new, xs, strict=True)]

    start = [materialized(op, batched, j) if j in carried else init[j] for j in range(n)]
    out = sh.while_loop(start, cond, body)
    driver.forget(body_b, cond_b, body_fn, cond_fn)
    return out


@batch(T.case, sh.case, sh.if_)
def _case_batch(op: Op, batched: Batched) -> list[Value]:
    """An unbatched index: a case (an if) on it whose branches are the batched branches. A
    batched one: every branch batched, each element's result selected by its index (out of
    range, the last branch, as StableHLO's case)."""
    case, driver = op.operation, op.driver
    assert case is not None and driver is not None
    captured = captured_values(case)
    values = [*op.operands[1:], *captured]
    given = [*batched[1:], *(driver.batched.get(v) for v in captured)]
    flags = [b is not None for b in given]
    operands = [v if b is None else b for v, b in zip(values, given, strict=True)]
    m, size = len(op.results), driver.size
    functions = [driver.region_function(region, captured) for region in case.regions]
    branches = [driver.batch_of(f, flags, [0] * m) for f in functions] if any(flags) else functions
    stacked = [s.with_shape((size, *s.shape)) for s in op.results]

    def run(branch: ir.Operation) -> list[Value]:
        out = driver.call_inline(branch, operands)
        if any(flags):
            return out
        return [sh.broadcast_in_dim(v, s.shape, range(1, s.rank)) for v, s in zip(out, stacked, strict=True)]

    index = batched[0]
    if index is None:
        index = op.operands[0]
        if case.name == sh.if_.op_name:  # (its regions: then, else; a case's index 0 runs the first)
            index = sh.convert(sh.not_(index), "i32")
        out = sh.case(index, stacked, [lambda b=b: run(b) for b in branches])
    else:
        if case.name == sh.if_.op_name:
            index = sh.convert(sh.not_(index), "i32")
        s, last = sh.spec(index), len(branches) - 1
        inside = sh.and_(sh.compare(index, sh.zeros(s), "GE"), sh.compare(index, sh.full(s, last), "LE"))
        index = sh.select(inside, index, sh.full(s, last))
        outs = [run(b) for b in branches]
        out = outs[last]
        for k in reversed(range(last)):
            chosen = sh.compare(index, sh.full(s, k), "EQ")
            out = [sh.select(_along_batch(chosen, a), a, b) for a, b in zip(outs[k], out, strict=True)]
    driver.forget(*(branches if any(flags) else []), *functions)
    return out
