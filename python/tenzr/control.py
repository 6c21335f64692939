"""Loops and conditionals, with JAX's names and signatures: `fori_loop`, `scan`, `map`,
`while_loop`, `cond`, `switch` (in `tz.lax`, as in `jax.lax`).

Each traces its Python functions once, into functions of the module being traced, and
emits one region op (`tenzr.while`, `tenzr.case`) whose regions hold their bodies: a loop
is never unrolled whole (a scan runs `unroll` steps per iteration), and every
transformation (`grad`, `vjp`, `jit`) differentiates or compiles the op itself. Arrays the
functions close over are read from the regions directly.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tenzr.batching import vmap
from tenzr.core import Array, ShapeDtype, array, asarray, current_trace, user_location
from tenzr.dialect import ops as T
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.functions import inline_call
from tenzr.dialect.ir_imports import ir
from tenzr.dialect.types import INT_TYPES, TensorSpec, ir_type, numpy_dtype
from tenzr.flags import config, disable_jit
from tenzr.numpy_api import clip, concatenate, stack
from tenzr.passes.rules.control import CHECKPOINT_EVERY
from tenzr.pytree import TreeDef, flatten, unflatten
from tenzr.transforms import Traced, jit, trace_into
from tenzr.tree_util import tree_map


def _traced(fn: Callable, args: tuple, name: str, wrap: Callable[[Any], Any] | None = None) -> Traced:
    trace = current_trace()
    assert trace is not None
    return trace_into(trace, fn, args, name, wrap)


def _inline(traced: Traced, operands: Sequence[ir.Value]) -> list[ir.Value]:
    """`traced`'s body, emitted here on `operands` (and the arrays it closed over)."""
    call = ir.Operation.create("func.call", results=traced.result_types,
                               operands=[*operands, *(a.value for a in traced.captures)],
                               attributes={"callee": ir.FlatSymbolRefAttr.get(traced.name)})
    return inline_call(call, traced.func)


def _region_op(name: str, operands: Sequence[ir.Value], results: Sequence[ir.Type],
               regions: Sequence[tuple[Sequence[ir.Type], Callable[[list[ir.Value]], Sequence[ir.Value]]]]
               ) -> ir.Operation:
    """Creates op `name` here; region r gets a block of `regions[r][0]`-typed arguments,
    filled by `regions[r][1](arguments)`, which returns what the block yields."""
    with user_location():
        op = ir.Operation.create(name, results=list(results), operands=list(operands), regions=len(regions))
        for region, (types, build) in zip(op.regions, regions, strict=True):
            block = region.blocks.append(*types)
            with ir.InsertionPoint(block):
                out = build(list(block.arguments))
                ir.Operation.create(T.yield_.name, results=[], operands=list(out))
    return op


def _erase(*traced: Traced) -> None:
    for t in traced:
        t.func.erase()


def _leaves(tree: Any) -> tuple[list[Array], TreeDef]:
    leaves, treedef = flatten(tree)
    return [asarray(leaf) for leaf in leaves], treedef


def _types(arrays: Sequence[Array]) -> list[ir.Type]:
    return [a.value.type for a in arrays]


def _specs(arrays: Sequence[Array]) -> list[TensorSpec]:
    return [a.spec for a in arrays]


def _avals(tree: TreeDef, leaves: Sequence[Array]) -> Any:
    """The abstract values a region traces from: `leaves`' shapes and types, weakly typed
    where they are (a Python number's carry takes the type the body gives it, as in JAX)."""
    return unflatten(tree, [ShapeDtype(a.shape, a.dtype, weak_type=a.weak) for a in leaves])


def _weakly_promoted(init_val: Any, carry: Sequence[Array], got: Sequence[TensorSpec]) -> list[Array] | None:
    """The carry with its Python-number leaves converted to the types the body gave them
    (`(x, 0.0)` with x float64: the 0.0 carries float64), as JAX promotes weakly typed
    carries and traces the body again; None when nothing changes."""
    raw = flatten(init_val)[0]
    if len(got) != len(carry):
        return None
    changed = False
    out = list(carry)
    for i, (leaf, a, spec) in enumerate(zip(raw, carry, got, strict=True)):
        weak = leaf.weak if isinstance(leaf, Array) else isinstance(leaf, (int, float)) and not isinstance(leaf, bool)
        if weak and spec != a.spec and spec.shape == a.spec.shape:
            out[i] = a.astype(numpy_dtype(spec.dtype))
            changed = True
    return out if changed else None


def _check_same(what: str, got_tree: TreeDef, got: Sequence[TensorSpec], want_tree: TreeDef,
                want: Sequence[TensorSpec]) -> None:
    if got_tree != want_tree or list(got) != list(want):
        raise TenzrError(f"{what} must have the same structure and types as the carried value: got "
                         f"{_shown(got_tree, got)}, expected {_shown(want_tree, want)}", user_location())


def _shown(tree: TreeDef, specs: Sequence[TensorSpec]) -> str:
    return str(unflatten(tree, [str(s) for s in specs])).replace("'", "")


def _eager(fn: Callable, *args: Any, unjitted: Callable[[], Any]) -> Any:
    """Outside a trace, a control-flow call is compiled and run on its own; under
    `tz.disable_jit`, `unjitted` runs it as Python's control flow would."""
    return unjitted() if config.jax_disable_jit else jit(fn)(*args)


def _python_while(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], val: Any) -> Any:
    val = tree_map(array, val)  # (as JAX's: a Python number starts a float32 or int32 carry)
    while bool(np.asarray(cond_fun(val))):
        val = body_fun(val)
    return val


def _python_scan(f: Callable[[Any, Any], Any], carry: Any, xs: Any, length: int | None, reverse: bool) -> Any:
    leaves, tree = flatten(xs)
    steps = int(np.shape(leaves[0])[0]) if leaves else length
    if steps is None:
        raise TenzrError("tz.lax.scan: without xs, length must be given", user_location())
    if steps == 0:  # (no step to stack: the compiled scan knows the stacked outputs' types)
        with disable_jit(False):
            return jit(lambda c, x: scan(f, c, x, length))(carry, xs)
    ys = []
    for i in reversed(range(steps)) if reverse else range(steps):
        carry, y = f(carry, unflatten(tree, [leaf[i] for leaf in leaves]) if leaves else None)
        ys.append(y)
    return carry, tree_map(lambda *rows: stack(rows), *(ys[::-1] if reverse else ys))


# --------------------------------------------------------------------------- loops


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any) -> Any:
    """`while cond_fun(val): val = body_fun(val)`, from `init_val` (a pytree), as
    `jax.lax.while_loop`. Unlike JAX, reverse mode differentiates it, whatever the trip
    count (see `tenzr.passes.rules.control`)."""
    if current_trace() is None:
        return _eager(lambda v: while_loop(cond_fun, body_fun, v), init_val,
                      unjitted=lambda: _python_while(cond_fun, body_fun, init_val))
    init, tree = _leaves(init_val)
    specs = _specs(init)
    avals = _avals(tree, init)

    def predicate(out: Any) -> Any:
        p = asarray(out)
        if p.shape != () or p.spec.dtype != "i1":
            raise TenzrError(f"tz.lax.while_loop: cond_fun must return a boolean scalar, got {p.spec}",
                             user_location())
        return p

    body = _traced(body_fun, (avals,), "while_body")
    promoted = _weakly_promoted(init_val, init, body.result_specs)
    if promoted is not None:
        _erase(body)
        init, specs = promoted, _specs(promoted)
        avals = _avals(tree, init)
        body = _traced(body_fun, (avals,), "while_body")
    cond = _traced(cond_fun, (avals,), "while_cond", predicate)
    _check_same("tz.lax.while_loop: body_fun's output", body.out_tree, body.result_specs, tree, specs)
    types = _types(init)
    op = _region_op(T.while_.name, [a.value for a in init], types, [
        (types, lambda xs: _inline(cond, xs)),
        (types, lambda xs: _inline(body, xs)),
    ])
    _erase(cond, body)
    return unflatten(tree, [Array(r) for r in op.results])


def _int_scalar(value: Any) -> Array:
    x = asarray(np.int32(value) if isinstance(value, (int, np.integer)) else value)
    if x.shape != () or x.spec.dtype not in INT_TYPES:
        raise TenzrError(f"loop bounds and indices must be integer scalars, got {x.spec}", user_location())
    return x if x.spec.dtype == "i32" else x.astype(np.int32)


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any, *,
              unroll: int | bool | None = None) -> Any:
    """`for i in range(lower, upper): val = body_fun(i, val)`, as `jax.lax.fori_loop`;
    with Python int bounds it is a `scan` (its trip count known, a small body unrolled, or
    `unroll` steps per iteration as scan's), otherwise a while loop."""
    if current_trace() is None:
        return _eager(lambda v: fori_loop(lower, upper, body_fun, v, unroll=unroll), init_val,
                      unjitted=lambda: functools.reduce(lambda v, i: body_fun(array(i), v),
                                                        range(int(lower), int(upper)), init_val))
    if all(isinstance(b, (int, np.integer)) for b in (lower, upper)):  # (as JAX: a scan, unrolled as scan's)
        start_at = int(lower)
        return _scan(lambda i, v, _: (body_fun(i + start_at, v), None), init_val, None, max(int(upper) - start_at, 0),
                     False, 1 if unroll is None else unroll, indexed=True,
                     what="tz.lax.fori_loop: body_fun's output")[0]
    if unroll is not None:
        raise TenzrError("tz.lax.fori_loop: unroll needs Python int bounds (a trip count known while tracing), "
                         "as in JAX", user_location())
    init, tree = _leaves(init_val)
    specs = _specs(init)
    avals = _avals(tree, init)
    start = _int_scalar(lower)
    stop = upper if isinstance(upper, (int, np.integer)) else _int_scalar(upper)
    body = _traced(body_fun, (ShapeDtype((), np.int32), avals), "fori_body")
    promoted = _weakly_promoted(init_val, init, body.result_specs)
    if promoted is not None:
        _erase(body)
        init, specs = promoted, _specs(promoted)
        avals = _avals(tree, init)
        body = _traced(body_fun, (ShapeDtype((), np.int32), avals), "fori_body")
    _check_same("tz.lax.fori_loop: body_fun's output", body.out_tree, body.result_specs, tree, specs)

    def cond(xs: list[ir.Value]) -> list[ir.Value]:
        return [(Array(xs[0]) < (stop if isinstance(stop, Array) else int(stop))).value]

    def step(xs: list[ir.Value]) -> list[ir.Value]:
        return [(Array(xs[0]) + 1).value, *_inline(body, xs)]

    types = [start.value.type, *_types(init)]
    op = _region_op(T.while_.name, [start.value, *(a.value for a in init)], types, [(types, cond), (types, step)])
    _erase(body)
    return unflatten(tree, [Array(r) for r in list(op.results)[1:]])


AUTO_UNROLL = 8
AUTO_UNROLL_OPS = 512
"""Steps per loop iteration `scan` chooses when left at unroll=1: as many as keep the unrolled
body within AUTO_UNROLL_OPS ops, at most AUTO_UNROLL, rounded down to a power of two (8 for
bodies of up to 64 ops, 4 up to 128, 2 up to 256). IREE spends about 8 us on each loop
iteration, and each write into a loop-carried buffer copies it: the gradient of a 1,000-step,
64-wide RNN takes 122 ms one step per iteration, 23 ms eight (15 ms 25). For larger bodies
(value_and_grad, 2-core Zen 4, medians of 20 steps): a two-layer LSTM step of 66 ops (500
steps, hidden 64) 86.6 ms at unroll 1, 50.6 at 4, for 2.7 -> 4.9 s of compile CPU (its
forward 13.7 -> 11.2 ms); a four-layer one of about 130 ops 168 -> 123 ms at 2 (2.9 -> 4.1 s);
a 152-op elementwise step stacking a 4,096-wide carry 248 -> 157 ms at 2 (0.65 -> 0.81 s).
At 8 the two-layer LSTM took 9 s to compile and ran no faster than at 4."""
AUTO_UNROLL_BRANCHING = 4
"""The most steps per iteration `scan` chooses for a body with a conditional: the gradient of a
16-step scan over `cond(i < 1, x @ x, x)` unrolled 7 or 8 times failed to compile on IREE
3.13 ("failed to solve for timepoint coverage"), and 2-6 times compiled."""


def scan(f: Callable[[Any, Any], Any], init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int | bool = 1, *, checkpoint_every: int | None = None) -> tuple[Any, Any]:
    """`jax.lax.scan`: carry = init; for each x along xs' leading axis, (carry, y) = f(carry, x);
    returns (carry, ys stacked). `reverse` scans from the end. `unroll` steps run in each
    iteration of the loop (True: all of them); left at 1, a body of up to 256 ops gets 2-8
    (AUTO_UNROLL_OPS).

    The gradient stores the carry of every iteration and recomputes its steps. With
    `checkpoint_every=k` (Tenzr's own; JAX has no such option) it stores the carry of every
    k-th step only (k rounded to whole iterations of `unroll` steps) and runs each segment
    of k steps again before sweeping back through it: memory for T/k + k carries instead of
    T, for one more forward pass; k near sqrt(T) keeps O(sqrt(T)). IREE 3.13 still fails at
    run time on some such gradients (an error naming "indirect buffer reference slot 0": of
    eight RNN gradients tried, the one of 1,000 steps, hidden 64, from a zero state, every
    16 steps); the plain gradient is then the way."""
    if current_trace() is None:
        return _eager(lambda c, x: scan(f, c, x, length, reverse, unroll, checkpoint_every=checkpoint_every),
                      init, xs, unjitted=lambda: _python_scan(f, init, xs, length, reverse))
    return _scan(f, init, xs, length, reverse, unroll, indexed=False, what="tz.lax.scan: f's carry output",
                 checkpoint_every=checkpoint_every)


def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001 (JAX's name)
    """`jax.lax.map`: f applied to each slice of xs along its leading axis, the results
    stacked; a scan with no carry. With `batch_size`, each step runs f vmapped over that
    many slices (the slices left over in one vmapped call after the loop), as JAX's."""
    if batch_size is None:
        return scan(lambda carry, x: (carry, f(x)), (), xs)[1]
    if not isinstance(batch_size, (int, np.integer)) or isinstance(batch_size, bool) or batch_size < 1:
        raise TenzrError(f"tz.lax.map: batch_size must be a positive int, got {batch_size!r}", user_location())
    leaves, tree = flatten(xs)
    arrays = [leaf if isinstance(leaf, Array) else np.asarray(leaf) for leaf in leaves]
    lengths = {a.shape[0] if a.ndim else -1 for a in arrays}
    if len(lengths) != 1 or -1 in lengths:
        raise TenzrError("tz.lax.map: every leaf of xs needs one leading axis length to map over, got shapes "
                         f"{[a.shape for a in arrays]}", user_location())
    steps, left = divmod(lengths.pop(), int(batch_size))
    batched = vmap(f)
    parts = []
    if steps:
        blocks = unflatten(tree, [a[:steps * batch_size].reshape(steps, batch_size, *a.shape[1:]) for a in arrays])
        stacked = scan(lambda carry, x: (carry, batched(x)), (), blocks)[1]
        parts.append(tree_map(lambda y: y.reshape(steps * batch_size, *y.shape[2:]), stacked))
    if left:
        parts.append(batched(unflatten(tree, [a[steps * batch_size:] for a in arrays])))
    if len(parts) == 1:
        return parts[0]
    return tree_map(lambda a, b: concatenate([a, b]), *parts)


def _scan(f: Callable[..., Any], init: Any, xs: Any, length: int | None, reverse: bool, unroll: int | bool,
          indexed: bool, what: str, checkpoint_every: int | None = None) -> tuple[Any, Any]:
    """`scan`; with `indexed`, f also takes the step's index first: f(i, carry, x). `what`
    names f's carry output in errors."""
    if checkpoint_every is not None and (not isinstance(checkpoint_every, (int, np.integer)) or checkpoint_every < 1):
        raise TenzrError(f"tz.lax.scan: checkpoint_every must be a positive int, got {checkpoint_every!r}",
                         user_location())
    carry, tree = _leaves(init)
    x_leaves, x_tree = _leaves(xs) if xs is not None else ([], flatten(None)[1])
    if any(not a.shape for a in x_leaves):
        raise TenzrError("tz.lax.scan: every leaf of xs needs a leading axis to scan over", user_location())
    lengths = {a.shape[0] for a in x_leaves}
    if length is not None:
        lengths.add(int(length))
    if len(lengths) != 1:
        raise TenzrError("tz.lax.scan: " + ("pass length= when xs is None" if not lengths else
                         f"the leading axes of xs and length disagree: {sorted(lengths)}"), user_location())
    steps = lengths.pop()
    specs = _specs(carry)
    avals = _avals(tree, carry)
    x_avals = unflatten(x_tree, [ShapeDtype(a.shape[1:], a.dtype) for a in x_leaves])
    out_box: list[TreeDef] = []

    def pair(out: Any) -> Any:
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TenzrError("tz.lax.scan: f must return a pair (carry, y)", user_location())
        new_carry, y = out
        c_leaves, c_tree = flatten(new_carry)
        y_leaves, y_tree = flatten(y)
        out_box.extend([c_tree, y_tree])
        return [*c_leaves, *y_leaves]

    def trace() -> Traced:
        out_box.clear()
        return _traced(f, (ShapeDtype((), np.int32), avals, x_avals) if indexed else (avals, x_avals), "scan_body",
                       pair)

    body = trace()
    n = len(carry)
    promoted = _weakly_promoted(init, carry, body.result_specs[:n])
    if promoted is not None:
        _erase(body)
        carry, specs = promoted, _specs(promoted)
        avals = _avals(tree, carry)
        body = trace()
    out_specs = body.result_specs
    _check_same(what, out_box[0], out_specs[:n], tree, specs)
    y_specs = out_specs[n:]
    per = _unroll_factor(unroll, steps, body)
    loops, rest = divmod(steps, per)
    zero = asarray(np.int32(0))

    def rows(block_start: Array, count: int) -> list[list[ir.Value]]:
        """xs' rows for `count` steps from processing position `block_start`, in order."""
        first = (steps - count - block_start) if reverse else block_start
        out = []
        for a in x_leaves:
            block = T.dynamic_slice(a.value, first.value, *[zero.value] * (a.ndim - 1), sizes=(count, *a.shape[1:]))
            order = range(count - 1, -1, -1) if reverse else range(count)
            out.append([T.reshape(_row(block, r, a.spec), result=a.spec.with_shape(a.shape[1:])) for r in order])
        return [[leaf[r] for leaf in out] for r in range(count)]

    def run(state: list[ir.Value], block_start: Array, count: int, buffers: list[ir.Value]) -> list[ir.Value]:
        """`count` steps from position `block_start`: the new carry, then the buffers with
        the steps' outputs written in."""
        outs: list[list[ir.Value]] = []
        for r, x_t in enumerate(rows(block_start, count)):
            position = (steps - 1 - r - block_start) if reverse else (block_start + r)
            index = [position.astype(np.int32).value] if indexed else []  # (the body was traced with an i32 index)
            out = _inline(body, [*index, *state, *x_t])
            state, outs = out[:n], [*outs, out[n:]]
        first = (steps - count - block_start) if reverse else block_start
        written = []
        for k, (buf, s) in enumerate(zip(buffers, y_specs, strict=True)):
            parts = [T.reshape(o[k], result=s.with_shape((1, *s.shape))) for o in outs]
            parts = parts[::-1] if reverse else parts
            block = parts[0] if count == 1 else T.concatenate(*parts, axis=0)
            written.append(T.dynamic_update_slice(buf, block, first.value, *[zero.value] * s.rank))
        return [*state, *written]

    buffers = [asarray(np.zeros((steps, *s.shape), dtype=numpy_dtype(s.dtype))).value for s in y_specs]
    state = [a.value for a in carry]
    if loops:
        def cond(values: list[ir.Value]) -> list[ir.Value]:
            return [(Array(values[0]) < loops).value]

        def step(values: list[ir.Value]) -> list[ir.Value]:
            i = Array(values[0])
            return [(i + 1).value, *run(values[1:1 + n], i * per, per, values[1 + n:])]

        types = [zero.value.type, *(v.type for v in state), *(b.type for b in buffers)]
        op = _region_op(T.while_.name, [zero.value, *state, *buffers], types, [(types, cond), (types, step)])
        if checkpoint_every is not None:
            every = max(round(checkpoint_every / per), 1)
            op.attributes[CHECKPOINT_EVERY] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), every)
        state, buffers = list(op.results)[1:1 + n], list(op.results)[1 + n:]
    if rest:
        with user_location():
            out = run(state, asarray(np.int32(loops * per)), rest, buffers)
        state, buffers = out[:n], out[n:]
    _erase(body)
    return unflatten(tree, [Array(v) for v in state]), unflatten(out_box[1], [Array(b) for b in buffers])


def _unroll_factor(unroll: int | bool, steps: int, body: Traced) -> int:
    if isinstance(unroll, bool):
        return max(steps, 1) if unroll else 1
    if not isinstance(unroll, (int, np.integer)) or unroll < 1:
        raise TenzrError(f"tz.lax.scan: unroll must be a positive int or a bool, got {unroll!r}", user_location())
    if unroll == 1:
        count, branches = _op_count(body.func)
        most = min(AUTO_UNROLL_BRANCHING if branches else AUTO_UNROLL, max(AUTO_UNROLL_OPS // max(count, 1), 1))
        unroll = 1 << (most.bit_length() - 1)  # (a power of two)
    return max(min(int(unroll), steps), 1)


def _op_count(func: ir.Operation) -> tuple[int, bool]:
    """How many ops `func` has, and whether one is a conditional."""
    count, branches = 0, False

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal count, branches
        count += 1
        branches = branches or op.name == T.case.name
        return ir.WalkResult.ADVANCE

    func.walk(visit)
    return count, branches


def _row(block: ir.Value, r: int, spec: TensorSpec) -> ir.Value:
    """Row r of `block` (a static slice along its first axis)."""
    start = [r, *[0] * (spec.rank - 1)]
    stop = [r + 1, *spec.shape[1:]]
    return T.slice_(block, start=start, stop=stop, step=[1] * spec.rank)


# --------------------------------------------------------------------------- conditionals


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """`branches[index](*operands)`, with `index` clamped into range, as `jax.lax.switch`;
    every branch must return the same structure and types."""
    if not branches:
        raise TenzrError("tz.lax.switch needs at least one branch", user_location())
    if current_trace() is None:
        return _eager(lambda i, *ops: switch(i, branches, *ops), index, *operands,
                      unjitted=lambda: branches[min(max(int(index), 0), len(branches) - 1)](*operands))
    return _case("tz.lax.switch", clip(_int_scalar(index), 0, len(branches) - 1), list(branches), operands)


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any], *operands: Any) -> Any:
    """`true_fun(*operands) if pred else false_fun(*operands)`, as `jax.lax.cond`: both are
    traced, the one `pred` picks runs."""
    if current_trace() is None:
        return _eager(lambda p, *ops: cond(p, true_fun, false_fun, *ops), pred, *operands,
                      unjitted=lambda: (true_fun if bool(np.asarray(pred)) else false_fun)(*operands))
    p = asarray(pred)
    if p.shape != ():
        raise TenzrError(f"tz.lax.cond: pred must be a scalar, got {p.spec}", user_location())
    index = (p != 0) if p.spec.dtype != "i1" else p
    return _case("tz.lax.cond", index.astype(np.int32), [false_fun, true_fun], operands, ("false_fun", "true_fun"))


def _case(what: str, index: Array, branches: list[Callable[..., Any]], operands: tuple,
          names: Sequence[str] | None = None) -> Any:
    """The region op running `branches[index]`; an error names the branches `names` (else
    "branch 0", ...)."""
    leaves, tree = _leaves(operands)
    avals = _avals(tree, leaves)
    traced = [_traced(branch, avals, f"branch{b}") for b, branch in enumerate(branches)]
    named = list(names) if names else [f"branch {b}" for b in range(len(branches))]
    first = traced[0]
    for b, t in enumerate(traced[1:], 1):
        if t.out_tree != first.out_tree or t.result_specs != first.result_specs:
            raise TenzrError(f"{what}: every branch must return the same structure and types: {named[0]} returns "
                             f"{_shown(first.out_tree, first.result_specs)}, {named[b]} returns "
                             f"{_shown(t.out_tree, t.result_specs)}", user_location())
    types = _types(leaves)
    op = _region_op(T.case.name, [index.value, *(a.value for a in leaves)],
                    [ir_type(s) for s in first.result_specs],
                    [(types, functools.partial(_inline, t)) for t in traced])
    _erase(*traced)
    return unflatten(first.out_tree, [Array(r) for r in op.results])
