"""One VJP rule per differentiable tenzr op, keyed by op name: `VJP_RULES[name](op, ct)`.

A rule gets the decoded forward op (`op.operands`, `op.out`, `op.specs`, attributes) and
the cotangent `ct` of its result, and returns one cotangent per operand (None: no
gradient). A cotangent may have the broadcast result shape: the reverse sweep in
`tenzr_grad`, not the rule, sums it back to the operand's shape and accumulates fan-out.
Ops declared `gradient="none"` in the dialect have no rule.

Tie rules: `maximum`/`minimum` split the cotangent evenly between equal operands;
`reduce_max`/`reduce_min` and scatter "min"/"max" split it evenly among every element
equal to the result. This matches JAX.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ir_imports import Value
from tenzr.dialect.opdef import Op
from tenzr.dialect.types import TensorSpec
from tenzr.passes import expansions
from tenzr.passes import stablehlo as sh
from tenzr.passes.custom_ops import CUSTOM_OPS
from tenzr.passes.lowerings import (
    along_axis,
    broadcast_operands,
    clamp_indices,
    clamp_to,
    full_indices,
    in_range,
    normalize_indices,
    reduce_axes,
    scatter_along,
    scatter_along_axis,
    scatter_winners,
    take,
)

Cotangents = Sequence["Value | None"]
VjpRule = Callable[[Op, Value], Cotangents]


def _scalar(value: float, like: Value) -> Value:
    return sh.full(sh.spec(like), value)


# --------------------------------------------------------------------------- elementwise


def _div(op: Op, ct: Value) -> Cotangents:
    _, y = broadcast_operands(op)
    dy = sh.negate(sh.divide(sh.multiply(ct, op.out), y)) if op.wants(1) else None
    return sh.divide(ct, y), dy


def _pow(op: Op, ct: Value) -> Cotangents:
    x, y = broadcast_operands(op)
    zero = sh.zeros(sh.spec(ct))
    dx = dy = None
    if op.wants(0):  # y·x^(y-1), 0 where y = 0 (so 0^0 stays finite)
        slope = sh.multiply(y, expansions.power(x, sh.subtract(y, _scalar(1, y))))
        dx = sh.multiply(ct, sh.select(sh.compare(y, zero, "EQ"), zero, slope))
    if op.wants(1):  # log(x)·x^y, 0 where x = 0
        safe_x = sh.select(sh.compare(x, zero, "EQ"), _scalar(1, x), x)
        dy = sh.multiply(ct, sh.multiply(sh.log(safe_x), op.out))
    return dx, dy


def _extremum(direction: str) -> VjpRule:
    def rule(op: Op, ct: Value) -> Cotangents:
        x, y = broadcast_operands(op)
        half, zero = _scalar(0.5, ct), sh.zeros(sh.spec(ct))
        wins = sh.select(sh.compare(x, y, direction), _scalar(1, ct),
                         sh.select(sh.compare(x, y, "EQ"), half, zero))
        dx = sh.multiply(ct, wins)
        return dx, sh.subtract(ct, dx)

    return rule


def _select(op: Op, ct: Value) -> Cotangents:
    cond = sh.broadcast_to(op.operands[0], op.result.shape)
    zero = sh.zeros(sh.spec(ct))
    return None, sh.select(cond, ct, zero), sh.select(cond, zero, ct)


def _relu(op: Op, ct: Value) -> Cotangents:
    (x,) = op.operands
    return (sh.select(sh.compare(x, sh.zeros(op.specs[0]), "GT"), ct, sh.zeros(sh.spec(ct))),)


def _tanh(op: Op, ct: Value) -> Cotangents:
    """1 - tanh² as sech² = 4e/(1 + e)² with e = exp(-2|x|): where tanh rounds to ±1
    (|x| > 8 in float32), 1 - out² would give exactly 0 instead of the true small slope."""
    (x,) = op.operands
    e = sh.exponential(sh.multiply(_scalar(-2, ct), sh.abs_(x)))
    one_plus = sh.add(_scalar(1, ct), e)
    sech2 = sh.divide(sh.multiply(_scalar(4, ct), e), sh.multiply(one_plus, one_plus))
    return (sh.multiply(ct, sech2),)


def _sigmoid(op: Op, ct: Value) -> Cotangents:
    """σ(x)·σ(-x): 1 - σ(x) would round to 0 for large x."""
    (x,) = op.operands
    return (sh.multiply(ct, sh.multiply(op.out, sh.logistic(sh.negate(x)))),)


def _convert(op: Op, ct: Value) -> Cotangents:
    source = op.specs[0]
    return (sh.convert(ct, source.dtype) if source.is_float else None,)


# --------------------------------------------------------------------------- matmul


def _matmul(op: Op, ct: Value) -> Cotangents:
    """ā = ȳ·bᵀ and b̄ = aᵀ·ȳ as dot_generals. An operand without batch dims gets the
    batch dims contracted away directly; otherwise batch dims are batched and the sweep
    sums any broadcast ones."""
    a, b = op.operands
    sa, sb = op.specs
    batch = op.result.shape[:-2]
    nb = len(batch)
    dims = tuple(range(nb))
    da = db = None
    if op.wants(0):
        if sa.rank == 2 and nb:  # [M, K] = sum over batch of ȳ [.., M, N] · b [.., K, N]
            b_full = sh.broadcast_to(b, (*batch, *sb.shape[-2:]))
            da = sh.dot_general(ct, b_full, ((), ()), ((*dims, nb + 1), (*dims, nb + 1)))
        elif sb.rank == 2:
            da = sh.dot_general(ct, b, ((), ()), ((nb + 1,), (1,)))
        else:
            b_full = sh.broadcast_to(b, (*batch, *sb.shape[-2:]))
            da = sh.dot_general(ct, b_full, (dims, dims), ((nb + 1,), (nb + 1,)))
    if op.wants(1):
        a_full = sh.broadcast_to(a, (*batch, *sa.shape[-2:]))
        if sb.rank == 2:  # [K, N] = sum over batch and M of a [.., M, K] · ȳ [.., M, N]
            db = sh.dot_general(a_full, ct, ((), ()), ((*dims, nb), (*dims, nb)))
        else:
            db = sh.dot_general(a_full, ct, (dims, dims), ((nb,), (nb,)))
    return da, db


# --------------------------------------------------------------------------- convolution


def _dilate(size: int, dilation: int) -> int:
    return 0 if size == 0 else 1 + dilation * (size - 1)


def _conv_input_grad(op: Op, ct: Value) -> Value:
    """The transposed convolution: ȳ (lhs-dilated by the strides) with the flipped kernel.
    (With stride 1 there is no dilation and the emitter's im2col form applies; a strided
    convolution that the forward lowers through patches takes `_conv_input_grad_by_phases`
    instead: benchmarks/conv_forms.md.)"""
    sx, sw = op.specs
    n, groups = sx.rank - 2, op["feature_group_count"]
    if any(s > 1 for s in op["window_strides"]) and sh.uses_patches(sw.shape[2:], groups, op["lhs_dilation"]):
        return _conv_input_grad_by_phases(op, ct)
    w = op.operands[1]
    out_channels, in_per_group = sw.shape[0], sw.shape[1]
    if groups > 1:  # [O, I, ...] -> [O/G, G*I, ...]: each group's outputs become inputs
        spatial = sw.shape[2:]
        w = sh.reshape(w, (groups, out_channels // groups, in_per_group, *spatial))
        w = sh.transpose(w, (1, 0, 2, *range(3, 3 + n)))
        w = sh.reshape(w, (out_channels // groups, groups * in_per_group, *spatial))
    w = sh.reverse(w, tuple(range(2, 2 + n)))
    low, high = [], []
    for d in range(n):
        lhs = _dilate(sx.shape[2 + d], op["lhs_dilation"][d])
        rhs = _dilate(sw.shape[2 + d], op["rhs_dilation"][d])
        out = _dilate(op.result.shape[2 + d], op["window_strides"][d])
        before = rhs - op["padding_low"][d] - 1
        low.append(before)
        high.append(lhs + rhs - 1 - out - before)
    sp = tuple(range(2, 2 + n))
    layout = sh.ConvLayout(0, 1, sp, 0, 1, sp, 0, 1, sp)  # kernel in/out swapped
    return sh.convolution(ct, w, layout, strides=op["lhs_dilation"], padding_low=low, padding_high=high,
                          lhs_dilation=op["window_strides"], rhs_dilation=op["rhs_dilation"],
                          feature_group_count=groups)


def _conv_input_grad_by_phases(op: Op, ct: Value) -> Value:
    """The input cotangent of a strided convolution without multiplying the zeros of a dilated
    ȳ: one matmul col[n, o, k, c] = Σ_f ȳ[n, f, o] · w[f, c, k] (o, k: all spatial dims), then
    col2im by stride phase. Input position q·s + r (per dim) collects col[q + δ, k] over the
    taps k with k·dilation - padding_low ≡ r (mod s), where δ = (r + padding_low - k·dilation)/s;
    each phase is a sum of shifted slices of col, and `interleave` puts the phases in place."""
    sx, sw = op.specs
    n = sx.rank - 2
    batch, channels, features = sx.shape[0], sx.shape[1], sw.shape[0]
    window, strides, low = sw.shape[2:], op["window_strides"], op["padding_low"]
    taps = []  # per dim, (phase r, shift δ) of each tap k
    for size, s, lo, d in zip(window, strides, low, op["rhs_dilation"], strict=True):
        phases = [(k * d - lo) % s for k in range(size)]
        taps.append([(r, (r + lo - k * d) // s) for k, r in enumerate(phases)])
    quotients = [-(-size // s) for size, s in zip(sx.shape[2:], strides, strict=True)]
    pads = [(max(0, -min(shift for _, shift in t)), max(0, max(shift for _, shift in t) + q - o))
            for t, q, o in zip(taps, quotients, op.result.shape[2:], strict=True)]
    y = sh.transpose(ct, (0, *range(2, n + 2), 1))  # [N, O..., F]
    y = sh.pad(y, sh.zeros(sh.spec(ct).with_shape(())), [0, *(lo for lo, _ in pads), 0],
               [0, *(hi for _, hi in pads), 0], [0] * (n + 2))
    positions = sh.spec(y).shape[:-1]
    kernel = sh.transpose(op.operands[1], (0, *range(2, n + 2), 1))  # [F, K..., C]
    kernel = sh.reshape(kernel, (features, math.prod(window) * channels))
    col = sh.dot_general(sh.reshape(y, (math.prod(positions), features)), kernel, ((), ()), ((1,), (0,)))
    col = sh.reshape(col, (*positions, *window, channels))
    parts: dict[tuple[int, ...], Value] = {}
    for k in itertools.product(*(range(size) for size in window)):
        phase = tuple(taps[d][k[d]][0] for d in range(n))
        start = [0, *(taps[d][k[d]][1] + pads[d][0] for d in range(n)), *k, 0]
        limit = [batch, *(start[1 + d] + quotients[d] for d in range(n)), *(i + 1 for i in k), channels]
        piece = sh.reshape(sh.slice_(col, start, limit), (batch, *quotients, channels))
        parts[phase] = sh.add(parts[phase], piece) if phase in parts else piece
    grad = sh.interleave(parts, strides)
    grad = sh.slice_(grad, [0] * (n + 2), [batch, *sx.shape[2:], channels])
    return sh.transpose(grad, (0, n + 1, *range(1, n + 1)))


def _conv_kernel_grad(op: Op, ct: Value) -> Value:
    """A convolution of the input with ȳ in which the batch is the contracted feature; for
    ungrouped convolutions without lhs dilation and with small windows, the input's im2col
    patches (the forward's, shared after CSE) contracted with ȳ instead, one partial sum per
    example then summed (IREE runs a single long contraction with a tiny output on one thread)."""
    sx, sw = op.specs
    n, groups = sx.rank - 2, op["feature_group_count"]
    x = op.operands[0]
    window = sw.shape[2:]
    if sh.uses_patches(window, groups, op["lhs_dilation"]):
        p = sh.patches(x, sh.ConvLayout.channels_first(n), window, strides=op["window_strides"],
                       padding_low=op["padding_low"], padding_high=op["padding_high"],
                       rhs_dilation=op["rhs_dilation"], out_spatial=op.result.shape[2:])
        batch, (rows, columns) = sx.shape[0], sh.spec(p).shape
        per_example = (batch, rows // batch)
        ct_rows = sh.reshape(sh.transpose(ct, (0, *range(2, 2 + n), 1)), (*per_example, sw.shape[0]))
        if batch > 1:
            partial = sh.dot_general(sh.reshape(p, (*per_example, columns)), ct_rows, ((0,), (0,)), ((1,), (1,)))
            grad = sh.reduce(partial, 0, [0], "add")
        else:
            grad = sh.dot_general(p, sh.reshape(ct_rows, (rows, sw.shape[0])), ((), ()), ((0,), (0,)))
        grad = sh.reshape(grad, (*window, sw.shape[1], sw.shape[0]))
        return sh.transpose(grad, (n + 1, n, *range(n)))  # [window..., in, out] -> [out, in, window...]
    batch, channels = sx.shape[0], sx.shape[1]
    low, high = [], []
    for d in range(n):
        lhs = _dilate(sx.shape[2 + d], op["lhs_dilation"][d])
        rhs = _dilate(sw.shape[2 + d], op["rhs_dilation"][d])
        out = _dilate(op.result.shape[2 + d], op["window_strides"][d])
        lo = op["padding_low"][d]
        low.append(lo)
        high.append((out - lhs) + (rhs - lo - 1))
    sp = tuple(range(2, 2 + n))
    options = {"strides": op["rhs_dilation"], "padding_low": low, "padding_high": high,
               "lhs_dilation": op["lhs_dilation"], "rhs_dilation": op["window_strides"]}
    if groups == 1:
        # lhs: batch = C (dim 1), feature = N (dim 0); kernel ȳ: in = N, out = O;
        # output [O, C, ...]: feature dim 0, batch dim 1.
        layout = sh.ConvLayout(1, 0, sp, 0, 1, sp, 1, 0, sp)
        return sh.convolution(x, ct, layout, **options)
    # Groups: lhs [I, G*N, ...] grouped by g, kernel ȳ as [O, N, ...]; output [I, O, ...].
    per_group = channels // groups
    spatial = sx.shape[2:]
    lhs = sh.reshape(x, (batch, groups, per_group, *spatial))
    lhs = sh.transpose(lhs, (2, 1, 0, *range(3, 3 + n)))
    lhs = sh.reshape(lhs, (per_group, groups * batch, *spatial))
    layout = sh.ConvLayout(0, 1, sp, 0, 1, sp, 1, 0, sp)
    return sh.convolution(lhs, ct, layout, feature_group_count=groups, **options)


def _convolution(op: Op, ct: Value) -> Cotangents:
    return (_conv_input_grad(op, ct) if op.wants(0) else None,
            _conv_kernel_grad(op, ct) if op.wants(1) else None)


# --------------------------------------------------------------------------- shape ops


def _transpose(op: Op, ct: Value) -> Cotangents:
    perm = op["permutation"]
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return (sh.transpose(ct, inverse),)


def _pad(op: Op, ct: Value) -> Cotangents:
    x = op.specs[0]
    dvalue = None
    zero = sh.zeros(TensorSpec((), x.dtype))
    # Undo the edge padding (pad by its negation: crops, or zero-fills negative pads),
    # then take every (interior + 1)-th element.
    unpadded = sh.pad(ct, zero, [-lo for lo in op["low"]], [-hi for hi in op["high"]], [0] * x.rank)
    steps = [i + 1 for i in op["interior"]]
    dx = sh.slice_(unpadded, [0] * x.rank, sh.spec(unpadded).shape, steps)
    if op.wants(1):
        all_dims = tuple(range(x.rank))
        dvalue = sh.subtract(sh.reduce(ct, 0, all_dims, "add"), sh.reduce(dx, 0, all_dims, "add"))
    return dx, dvalue


def _slice(op: Op, ct: Value) -> Cotangents:
    x = op.specs[0]
    low, high = [], []
    for b, n, s, d in zip(op["start"], op.result.shape, op["step"], x.shape, strict=True):
        low.append(b)
        high.append(d - (b + (n - 1) * s + 1) if n else d - b)
    interior = [s - 1 if n > 1 else 0 for s, n in zip(op["step"], op.result.shape, strict=True)]
    return (sh.pad(ct, sh.zeros(TensorSpec((), x.dtype)), low, high, interior),)


def _concatenate(op: Op, ct: Value) -> Cotangents:
    axis, offset, out = op["axis"], 0, []
    shape = op.result.shape
    for s in op.specs:
        start = [offset if d == axis else 0 for d in range(len(shape))]
        limit = [offset + s.shape[axis] if d == axis else n for d, n in enumerate(shape)]
        out.append(sh.slice_(ct, start, limit))
        offset += s.shape[axis]
    return out


# --------------------------------------------------------------------------- indexing


def _gather(op: Op, ct: Value) -> Cotangents:
    x = op.specs[0]
    axis = op["axis"]
    indices = clamp_indices(op.operands[1], x.shape[axis])
    return scatter_along_axis(sh.zeros(x), indices, ct, axis, "add"), None


def _take_along_axis(op: Op, ct: Value) -> Cotangents:
    x = op.specs[0]
    axis = op["axis"]
    tuples = full_indices(clamp_indices(op.operands[1], x.shape[axis]), axis)
    return scatter_along(sh.zeros(x), tuples, ct, "add"), None


def _scatter(op: Op, ct: Value) -> Cotangents:
    sx, si, su = op.specs
    axis, mode = op["axis"], op["mode"]
    size = sx.shape[axis]
    if size == 0 or si.shape[0] == 0:
        return ct, None, sh.zeros(su)  # nothing was written
    indices = normalize_indices(op.operands[1], size)
    valid = along_axis(in_range(indices, size), su.shape, axis)
    safe = clamp_to(indices, size)
    zero_u = sh.zeros(su)
    ct_at = take(ct, safe, axis)  # ȳ at each update's position
    if mode == "add":
        return ct, None, sh.select(valid, ct_at, zero_u)
    if mode == "set":
        winners = scatter_winners(indices, size)
        ws = sh.spec(winners)
        written = along_axis(sh.compare(winners, sh.zeros(ws), "GE"), sx.shape, axis)
        dx = sh.select(written, sh.zeros(sx), ct)
        won = sh.compare(take(winners, safe, 0), sh.iota(si.with_dtype(ws.dtype), 0), "EQ")
        won = sh.and_(along_axis(won, su.shape, axis), valid)
        return dx, None, sh.select(won, ct_at, zero_u)
    x, updates, out = op.operands[0], op.operands[2], op.out
    if mode == "multiply":
        return _scatter_multiply(op, ct, indices, safe, valid)
    # min / max: split evenly among the operand and updates equal to the result.
    x_hits = sh.convert(sh.compare(x, out, "EQ"), sx.dtype)
    u_hits = sh.select(valid, sh.convert(sh.compare(updates, take(out, safe, axis), "EQ"), su.dtype), zero_u)
    counts = scatter_along_axis(x_hits, safe, u_hits, axis, "add")
    dx = sh.divide(sh.multiply(ct, x_hits), counts)
    du = sh.divide(sh.multiply(ct_at, u_hits), take(counts, safe, axis))
    return dx, None, du


def _scatter_multiply(op: Op, ct: Value, indices: Value, safe: Value, valid: Value) -> Cotangents:
    """out = x·∏ u_k over the updates at each position. x̄ = ȳ·∏ u_k; ū_k = ȳ·x·∏_{j≠k} u_j,
    the product over the other updates at the same position (exact with zeros: a K×K mask)."""
    sx, si, su = op.specs
    axis = op["axis"]
    x, updates = op.operands[0], op.operands[2]
    one_u = sh.full(su, 1)
    masked = sh.select(valid, updates, one_u)
    product = scatter_along_axis(sh.full(sx, 1), safe, masked, axis, "multiply")
    dx = sh.multiply(ct, product)
    k = si.shape[0]
    # others[k, j] = u_j where update j lands where update k does and j != k, else 1.
    rows = sh.broadcast_in_dim(indices, (k, k), [0])
    cols = sh.broadcast_in_dim(indices, (k, k), [1])
    same = sh.and_(sh.compare(rows, cols, "EQ"),
                   sh.compare(sh.iota(TensorSpec((k, k), "i64"), 0), sh.iota(TensorSpec((k, k), "i64"), 1), "NE"))
    moved = sh.transpose(masked, (axis, *[d for d in range(su.rank) if d != axis]))  # [K, rest...]
    rest = sh.spec(moved).shape[1:]
    pair_shape = (k, k, *rest)
    others = sh.select(sh.broadcast_in_dim(same, pair_shape, [0, 1]),
                       sh.broadcast_in_dim(moved, pair_shape, [1, *range(2, 2 + len(rest))]), sh.full(
                           TensorSpec(pair_shape, su.dtype), 1))
    excl = sh.reduce(others, 1, (1,), "multiply")  # [K, rest...]
    back = [0] * su.rank
    order = (axis, *[d for d in range(su.rank) if d != axis])
    for i, d in enumerate(order):
        back[d] = i
    excl = sh.transpose(excl, back)
    du = sh.multiply(sh.multiply(take(ct, safe, axis), take(x, safe, axis)), excl)
    return dx, None, sh.select(valid, du, sh.zeros(su))


def _dynamic_slice(op: Op, ct: Value) -> Cotangents:
    starts = op.operands[1:]
    return (sh.dynamic_update_slice(sh.zeros(op.specs[0]), ct, _uniform(starts)), *[None] * len(starts))


def _dynamic_update_slice(op: Op, ct: Value) -> Cotangents:
    starts = _uniform(op.operands[2:])
    update = op.specs[1]
    dx = sh.dynamic_update_slice(ct, sh.zeros(update), starts)
    return (dx, sh.dynamic_slice(ct, starts, update.shape), *[None] * len(starts))


def _uniform(starts: Sequence[Value]) -> list[Value]:
    dtypes = {sh.spec(s).dtype for s in starts}
    return list(starts) if len(dtypes) <= 1 else [sh.convert(s, "i64") for s in starts]


# --------------------------------------------------------------------------- reductions


def _expand(op: Op, reduced: Value) -> Value:
    """Broadcasts a reduction's result (or cotangent) back to the operand's shape."""
    x = op.specs[0]
    axes = reduce_axes(op)
    kept = range(x.rank) if op["keepdims"] else [d for d in range(x.rank) if d not in axes]
    return sh.broadcast_in_dim(reduced, x.shape, list(kept))


def _reduce_sum(op: Op, ct: Value) -> Cotangents:
    return (_expand(op, ct),)


def _reduce_prod(op: Op, ct: Value) -> Cotangents:
    """x̄ᵢ = ȳ·∏_{j≠i} xⱼ without dividing by zero: with no zero, P/xᵢ; with exactly one
    zero, the product of the nonzeros at that zero; with more, 0."""
    (x,) = op.operands
    sx = op.specs[0]
    axes = reduce_axes(op)
    zero, one = sh.zeros(sx), sh.full(sx, 1)
    is_zero = sh.compare(x, zero, "EQ")
    nonzero = sh.select(is_zero, one, x)
    product = _expand(op, sh.reshape(sh.reduce(nonzero, 1, axes, "multiply"), op.result.shape))
    zeros = _expand(op, sh.reshape(sh.reduce(sh.convert(is_zero, sx.dtype), 0, axes, "add"), op.result.shape))
    no_zero = sh.compare(zeros, zero, "EQ")
    one_zero = sh.and_(sh.compare(zeros, one, "EQ"), is_zero)
    grad = sh.select(no_zero, sh.divide(product, nonzero), sh.select(one_zero, product, zero))
    return (sh.multiply(_expand(op, ct), grad),)


def _reduce_extremum(op: Op, ct: Value) -> Cotangents:
    (x,) = op.operands
    sx = op.specs[0]
    hits = sh.convert(sh.compare(x, _expand(op, op.out), "EQ"), sx.dtype)
    counts = sh.reshape(sh.reduce(hits, 0, reduce_axes(op), "add"), op.result.shape)
    return (sh.multiply(hits, _expand(op, sh.divide(ct, counts))),)


def _sort(op: Op, ct: Value) -> Cotangents:
    (x,) = op.operands
    axis = op["axis"]
    ids = sh.iota(op.specs[0].with_dtype("i64"), axis)
    permutation = sh.convert(sh.sort([x, ids], axis, op["descending"], order_by=1)[1], "i32")
    return (scatter_along(sh.zeros(op.specs[0]), full_indices(permutation, axis), ct, "add"),)


def _custom_call(op: Op, ct: Value | list[Value]) -> Cotangents:
    target = op["call_target_name"]
    entry = CUSTOM_OPS.get(target)
    if entry is None or entry.vjp is None:
        why = "no rule is registered" if entry is None else "it is registered as non-differentiable"
        raise TenzrError(f"'tenzr.custom_call' op target '{target}' has no gradient: {why}", op.location)
    return entry.vjp(op, ct if isinstance(ct, list) else [ct])


VJP_RULES: dict[str, VjpRule] = {
    "tenzr.add": lambda op, ct: (ct, ct),
    "tenzr.sub": lambda op, ct: (ct, sh.negate(ct)),
    "tenzr.mul": lambda op, ct: tuple(sh.multiply(ct, v) for v in reversed(broadcast_operands(op))),
    "tenzr.div": _div,
    "tenzr.pow": _pow,
    "tenzr.maximum": _extremum("GT"),
    "tenzr.minimum": _extremum("LT"),
    "tenzr.select": _select,
    "tenzr.neg": lambda op, ct: (sh.negate(ct),),
    "tenzr.exp": lambda op, ct: (sh.multiply(ct, op.out),),
    "tenzr.log": lambda op, ct: (sh.divide(ct, op.operands[0]),),
    "tenzr.sqrt": lambda op, ct: (sh.divide(sh.multiply(ct, _scalar(0.5, ct)), op.out),),
    "tenzr.rsqrt": lambda op, ct: (sh.divide(sh.multiply(ct, sh.multiply(_scalar(-0.5, ct), op.out)),
                                             op.operands[0]),),
    "tenzr.tanh": _tanh,
    "tenzr.sigmoid": _sigmoid,
    "tenzr.relu": _relu,
    "tenzr.sin": lambda op, ct: (sh.multiply(ct, expansions.cosine(op.operands[0])),),
    "tenzr.cos": lambda op, ct: (sh.negate(sh.multiply(ct, expansions.sine(op.operands[0]))),),
    "tenzr.abs": lambda op, ct: (sh.multiply(ct, sh.sign(op.operands[0])),),
    "tenzr.log1p": lambda op, ct: (sh.divide(ct, sh.add(op.operands[0], _scalar(1, ct))),),
    "tenzr.expm1": lambda op, ct: (sh.multiply(ct, sh.add(op.out, _scalar(1, ct))),),
    "tenzr.convert": _convert,
    "tenzr.matmul": _matmul,
    "tenzr.convolution": _convolution,
    "tenzr.reshape": lambda op, ct: (sh.reshape(ct, op.specs[0].shape),),
    "tenzr.transpose": _transpose,
    "tenzr.broadcast_to": lambda op, ct: (ct,),
    "tenzr.pad": _pad,
    "tenzr.slice": _slice,
    "tenzr.reverse": lambda op, ct: (sh.reverse(ct, op["dimensions"]),),
    "tenzr.concatenate": _concatenate,
    "tenzr.gather": _gather,
    "tenzr.take_along_axis": _take_along_axis,
    "tenzr.scatter": _scatter,
    "tenzr.dynamic_slice": _dynamic_slice,
    "tenzr.dynamic_update_slice": _dynamic_update_slice,
    "tenzr.reduce_sum": _reduce_sum,
    "tenzr.reduce_prod": _reduce_prod,
    "tenzr.reduce_max": _reduce_extremum,
    "tenzr.reduce_min": _reduce_extremum,
    "tenzr.sort": _sort,
    "tenzr.custom_call": _custom_call,
}
