"""Control flow: `tenzr.while`, `tenzr.case` and their StableHLO twins (`stablehlo.while`,
`stablehlo.case`, as JAX exports `fori_loop`, `scan`, `while_loop`, `cond`, `switch`).

The lowering moves the regions into the StableHLO op. The VJP rules differentiate a region
through the driver's region API: the region becomes a function, the driver derives its VJP,
and the rule inlines it into the adjoint.

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

from collections.abc import Sequence

from tenzr.dialect import ops as T
from tenzr.dialect.context import captured_values
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.opdef import Op
from tenzr.dialect.types import INT_TYPES, TensorSpec, spec_of
from tenzr.passes import stablehlo as sh
from tenzr.passes.rules import Cotangents, lowers, vjp

TAPE_SLOTS = 1024
"""Carries a loop with a data-dependent trip count keeps for its adjoint (one more slot
takes the iterations that are not stored)."""

I32 = TensorSpec((), "i32")


# --------------------------------------------------------------------------- lowering


def _terminator(block: ir.Block) -> ir.Operation:
    operations = block.operations
    return operations[len(operations) - 1].operation


def _end_with_return(block: ir.Block) -> None:
    """Turns the block's tenzr.yield (or a yield already lowered) into stablehlo.return."""
    last = _terminator(block)
    if last.name == T.yield_.name:
        with last.location, ir.InsertionPoint(last):
            ir.Operation.create("stablehlo.return", results=[], operands=list(last.operands))
        last.erase()


@lowers(T.yield_)
def _lower_yield(op: Op) -> list[Value]:
    assert op.operation is not None
    ir.Operation.create("stablehlo.return", results=[], operands=list(op.operands))
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


def _constant_int(value: Value) -> int | None:
    """The integer a scalar constant holds, if `value` is one."""
    owner = sh.producer(value)
    if owner is not None and owner.name in (T.convert.name, sh.convert.op_name):
        owner = sh.producer(owner.operands[0])
    if owner is None or owner.name not in (T.constant.name, sh.constant.op_name):
        return None
    attribute = ir.DenseElementsAttr(owner.attributes["value"])
    if not attribute.is_splat or spec_of(value).dtype not in INT_TYPES:
        return None
    return ir.IntegerAttr(attribute.get_splat_value()).value


def _is_compare(op: ir.Operation, direction: str) -> bool:
    if op.name == T.compare.name:
        return ir.StringAttr(op.attributes["direction"]).value == direction.lower()
    if op.name == sh.compare.op_name:
        return str(op.attributes["comparison_direction"]).endswith(f" {direction}>")
    return False


def static_trip_count(loop: ir.Operation) -> int | None:
    """The number of iterations, when the loop counts: its condition is `x_j < bound` with
    x_j starting at a constant and growing by the constant 1, and the bound a constant (or
    a carry that starts at one and does not change)."""
    cond, body = (region.blocks[0] for region in loop.regions)
    test = sh.producer(_terminator(cond).operands[0])
    if test is None or not _is_compare(test, "LT"):
        return None
    counter, bound = test.operands
    arguments = list(cond.arguments)
    if counter not in arguments:
        return None
    j = arguments.index(counter)
    if bound in arguments:
        k = arguments.index(bound)
        if _terminator(body).operands[k] != body.arguments[k]:
            return None
        bound = loop.operands[k]
    start, stop = _constant_int(loop.operands[j]), _constant_int(bound)
    step = sh.producer(_terminator(body).operands[j])
    if start is None or stop is None or step is None or step.name not in (T.add.name, sh.add.op_name):
        return None
    a, b = step.operands
    other = b if a == body.arguments[j] else a if b == body.arguments[j] else None
    if other is None or _constant_int(other) != 1:
        return None
    return max(stop - start, 0)


# --------------------------------------------------------------------------- loops


def _induction_step(body: ir.Block, j: int) -> int | None:
    """c, when the body yields carry j as `x_j + c` for an integer constant c."""
    argument = body.arguments[j]
    if spec_of(argument).dtype not in INT_TYPES:
        return None
    step = sh.producer(_terminator(body).operands[j])
    if step is None or step.name not in (T.add.name, sh.add.op_name):
        return None
    a, b = step.operands
    other = b if a == argument else a if b == argument else None
    return None if other is None else _constant_int(other)


def _i32(value: int) -> Value:
    return sh.full(I32, value)


def _row(tape: Value, index: Value, spec: TensorSpec) -> Value:
    """tape[index] (a slot of a tape of `spec` values)."""
    zero = [_i32(0)] * spec.rank
    return sh.reshape(sh.dynamic_slice(tape, [index, *zero], (1, *spec.shape)), spec.shape)


def _store(tape: Value, index: Value, value: Value) -> Value:
    s = spec_of(value)
    return sh.dynamic_update_slice(tape, sh.reshape(value, (1, *s.shape)), [index, *[_i32(0)] * s.rank])


def _count_up(i: Value) -> Value:
    return sh.add(i, _i32(1))


@vjp(T.while_, sh.while_loop, adjoint="an adjoint loop running the iterations backwards, each recomputed from its "
     "carries (stored per iteration; every s-th of them when the trip count depends on data) and swept through "
     "by the body's VJP")
def _while(op: Op, ct: Value | tuple[Value, ...]) -> Cotangents:
    cts = list(ct) if isinstance(ct, tuple) else [ct]
    loop, driver = op.operation, op.driver
    assert loop is not None and driver is not None
    captured = captured_values(loop)
    n, m = len(op.operands), len(captured)
    cond_fn = driver.region_function(loop.regions[0], captured)
    body_fn = driver.region_function(loop.regions[1], captured)
    body_block = loop.regions[1].blocks[0]
    yielded = list(_terminator(body_block).operands)
    invariant = [yielded[j] == body_block.arguments[j] for j in range(n)]
    steps = {j: step for j in range(n) if (step := _induction_step(body_block, j)) is not None}
    # (A counter's value at iteration k is init + k·step: it needs no tape, and reading it
    # back from one would cost IREE a device-to-host copy per iteration where it indexes.)
    specs = list(op.specs)
    floats = [j for j in range(n) if specs[j].is_float]
    float_captured = [k for k in range(m) if spec_of(captured[k]).is_float]
    wrt = [*floats, *(n + k for k in float_captured)]
    body_vjp = driver.vjp_of(body_fn, wrt)
    trip_count = static_trip_count(loop)
    unread = driver.unused_arguments(body_vjp) if trip_count is not None else set()
    # (With a known trip count the pullback reads its carries from the tape; a carry only
    # the forward reads, such as scan's stacked outputs, is not stored. Recomputing from
    # every s-th iteration needs them all.)
    varying = [j for j in range(n) if not invariant[j] and j not in unread and j not in steps]
    init = list(op.operands)
    with ir.InsertionPoint(loop), loop.location:
        # (A known trip count is a constant in each loop, not a carry: IREE then keeps the
        # loop's control on the host instead of reading a condition back every iteration,
        # 145 ms against 25 for 1,000 iterations of a 64-wide tanh RNN.)
        count: int | Value
        if trip_count is not None:
            count, stride = trip_count, None
            results, tapes = _taped_forward(init, captured, varying, specs, body_fn, driver, trip_count, None, count)
        else:
            results, count = _counted_forward(init, captured, cond_fn, body_fn, driver)
            stride = sh.maximum(sh.divide(sh.add(count, _i32(TAPE_SLOTS - 1)), _i32(TAPE_SLOTS)), _i32(1))
            _, tapes = _taped_forward(init, captured, varying, specs, body_fn, driver, TAPE_SLOTS + 1, stride,
                                      count)
    for old, new in zip(loop.results, results, strict=True):
        old.replace_all_uses_with(new)

    # The adjoint loop: (m, cotangents of the float carries, of the float captured values,
    # then what it reads: the tapes, the invariant carries, the captured values, N, s).
    carried_cts = [cts[j] for j in floats]
    captured_cts = [sh.zeros(spec_of(captured[k])) for k in float_captured]
    invariants = [j for j in range(n) if invariant[j] or j in steps]
    reads = [*tapes, *(init[j] for j in invariants), *captured]
    if stride is not None:
        reads += [count, stride]
    n_ct, n_cc, n_tapes = len(carried_cts), len(captured_cts), len(tapes)

    at_count = 1 + n_ct + n_cc + n_tapes + len(invariants) + m

    def cond(xs: list[Value]) -> Value:
        return sh.compare(xs[0], _i32(count) if isinstance(count, int) else xs[at_count], "LT")

    def body(xs: list[Value]) -> list[Value]:
        step, ct_x, ct_c = xs[0], xs[1:1 + n_ct], xs[1 + n_ct:1 + n_ct + n_cc]
        rest = xs[1 + n_ct + n_cc:]
        tape_values, rest = rest[:n_tapes], rest[n_tapes:]
        invariant_values, rest = rest[:len(invariants)], rest[len(invariants):]
        captured_values_, rest = rest[:m], rest[m:]
        count_, stride_ = (_i32(count), None) if isinstance(count, int) else (rest[0], rest[1])
        k = sh.subtract(sh.subtract(count_, step), _i32(1))
        slot = k if stride_ is None else sh.divide(k, stride_)
        stored = dict(zip(varying, (_row(t, slot, specs[j]) for t, j in zip(tape_values, varying, strict=True)),
                          strict=True))
        fixed = dict(zip(invariants, invariant_values, strict=True))
        at = k if stride_ is None else sh.multiply(slot, stride_)  # (the iteration the stored carries start)
        for j, step_ in steps.items():
            fixed[j] = sh.add(fixed[j], sh.multiply(sh.convert(at, specs[j].dtype), sh.full(specs[j], step_)))
        carry = [stored[j] if j in stored else fixed[j] if j in fixed else sh.zeros(specs[j]) for j in range(n)]
        if stride_ is not None:
            carry = _recompute(carry, captured_values_, sh.subtract(k, at), body_fn, driver)
        seeds = [sh.zeros(specs[j]) for j in range(n)]
        for j, c in zip(floats, ct_x, strict=True):
            seeds[j] = c
        grads = driver.call_inline(body_vjp, [*carry, *captured_values_, *seeds])
        new_ct_x, new_ct_c = grads[:n_ct], grads[n_ct:]
        summed = [accumulate(a, b) for a, b in zip(ct_c, new_ct_c, strict=True)]
        return [_count_up(step), *new_ct_x, *summed, *tape_values, *invariant_values, *captured_values_, *rest]

    final = sh.while_loop([_i32(0), *carried_cts, *captured_cts, *reads], cond, body)
    for k, c in zip(float_captured, final[1 + n_ct:1 + n_ct + n_cc], strict=True):
        driver.accumulate(captured[k], c, loop.name)
    driver.forget(body_vjp, body_fn, cond_fn)
    grads: list[Value | None] = [None] * n
    for j, c in zip(floats, final[1:1 + n_ct], strict=True):
        grads[j] = c
    return grads


def accumulate(total: Value, ct: Value) -> Value:
    """total + ct. A cotangent written into zeros at one place (a scanned input's, from
    its dynamic slice) is added there only, not over the whole tensor each iteration."""
    update = sh.producer(ct)
    if update is not None and update.name == sh.dynamic_update_slice.op_name and _is_zero(update.operands[0]):
        window, starts = update.operands[1], list(update.operands)[2:]
        here = sh.dynamic_slice(total, starts, spec_of(window).shape)
        return sh.dynamic_update_slice(total, sh.add(here, window), starts)
    return sh.add(total, ct)


def _is_zero(value: Value) -> bool:
    owner = sh.producer(value)
    if owner is None or owner.name not in (T.constant.name, sh.constant.op_name):
        return False
    attribute = ir.DenseElementsAttr(owner.attributes["value"])
    return attribute.is_splat and str(attribute.get_splat_value()).split(":")[0].strip() in ("0.000000e+00", "0")


def _counted_forward(init: Sequence[Value], captured: Sequence[Value], cond_fn: ir.Operation, body_fn: ir.Operation,
                     driver) -> tuple[list[Value], Value]:
    """The loop as it is, counting its iterations: (its results, the count)."""
    n, m = len(init), len(captured)

    def cond(xs: list[Value]) -> Value:
        return driver.call_inline(cond_fn, xs[:n + m])[0]

    def body(xs: list[Value]) -> list[Value]:
        return [*driver.call_inline(body_fn, xs[:n + m]), *xs[n:n + m], _count_up(xs[n + m])]

    out = sh.while_loop([*init, *captured, _i32(0)], cond, body)
    return out[:n], out[n + m]


def _taped_forward(init: Sequence[Value], captured: Sequence[Value], varying: Sequence[int],
                   specs: Sequence[TensorSpec], body_fn: ir.Operation, driver, slots: int,
                   stride: Value | None, count: int | Value) -> tuple[list[Value], list[Value]]:
    """`count` iterations of the loop, storing the varying carries at the start of
    iteration i in slot i (every `stride`-th iteration in slot i / stride, the others in the
    last slot, when a stride is given): (its results, the tapes)."""
    n, m, t = len(init), len(captured), len(varying)
    tapes = [sh.zeros(specs[j].with_shape((slots, *specs[j].shape))) for j in varying]
    extra = [] if isinstance(count, int) else [count, stride]

    def cond(xs: list[Value]) -> Value:
        return sh.compare(xs[0], _i32(count) if isinstance(count, int) else xs[1 + n + t + m], "LT")

    def body(xs: list[Value]) -> list[Value]:
        i, carry, tape_values = xs[0], xs[1:1 + n], xs[1 + n:1 + n + t]
        captured_values_, rest = xs[1 + n + t:1 + n + t + m], xs[1 + n + t + m:]
        if stride is None:
            slot = i
        else:
            stride_ = rest[1]
            quotient = sh.divide(i, stride_)
            on_stride = sh.compare(sh.multiply(quotient, stride_), i, "EQ")
            slot = sh.select(on_stride, quotient, _i32(slots - 1))
        stored = [_store(tape, slot, carry[j]) for tape, j in zip(tape_values, varying, strict=True)]
        return [_count_up(i), *driver.call_inline(body_fn, [*carry, *captured_values_]), *stored, *captured_values_,
                *rest]

    out = sh.while_loop([_i32(0), *init, *tapes, *captured, *extra], cond, body)
    return out[1:1 + n], out[1 + n:1 + n + t]


def _recompute(carry: list[Value], captured: Sequence[Value], steps: Value, body_fn: ir.Operation,
               driver) -> list[Value]:
    """The carry after `steps` more iterations of the body."""
    n, m = len(carry), len(captured)

    def cond(xs: list[Value]) -> Value:
        return sh.compare(xs[0], xs[1 + n + m], "LT")

    def body(xs: list[Value]) -> list[Value]:
        return [_count_up(xs[0]), *driver.call_inline(body_fn, xs[1:1 + n + m]), *xs[1 + n:1 + n + m],
                xs[1 + n + m]]

    return sh.while_loop([_i32(0), *carry, *captured, steps], cond, body)[1:1 + n]


# --------------------------------------------------------------------------- conditionals


@vjp(T.case, sh.case, adjoint="a case on the same index whose branch b is branch b's VJP (each recomputes its "
     "branch's forward)")
def _case(op: Op, ct: Value | tuple[Value, ...]) -> Cotangents:
    cts = list(ct) if isinstance(ct, tuple) else [ct]
    case, driver = op.operation, op.driver
    assert case is not None and driver is not None
    captured = captured_values(case)
    inputs = list(op.operands[1:])
    values = [*inputs, *captured]
    wrt = [i for i, v in enumerate(values) if spec_of(v).is_float]
    functions = [driver.region_function(region, captured) for region in case.regions]
    vjps = [driver.vjp_of(f, wrt) for f in functions]

    def branch(vjp_fn: ir.Operation):
        return lambda: driver.call_inline(vjp_fn, [*values, *cts])

    grads = sh.case(op.operands[0], [spec_of(values[i]) for i in wrt], [branch(f) for f in vjps]) if wrt else []
    driver.forget(*vjps, *functions)
    by_value = dict(zip(wrt, grads, strict=True))
    for i in range(len(inputs), len(values)):
        if i in by_value:
            driver.accumulate(values[i], by_value[i], case.name)
    return [None, *(by_value.get(i) for i in range(len(inputs)))]
