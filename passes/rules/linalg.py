"""Contractions: matmul and convolution, and StableHLO's dot_general."""

from __future__ import annotations

import itertools
import math

from tenzr.dialect import ops as T
from tenzr.dialect.ir_imports import Value
from tenzr.dialect.opdef import Op
from tenzr.dialect.types import HALF_TYPES
from tenzr.passes import stablehlo as sh
from tenzr.passes.rules import Cotangents, bilinear, lowers, vjp
from tenzr.passes.tenzr_im2col import convolution_options, interleave, patches, uses_patches
from tenzr.passes.views import DotDims

# --------------------------------------------------------------------------- lowerings


@lowers(T.matmul)
def _lower_matmul(op: Op) -> Value:
    a, b = op.operands
    dtype = op.specs[0].dtype
    if dtype in HALF_TYPES:  # (accumulated in float32, as XLA's CPU and GPU backends do)
        return sh.convert(_product(sh.convert(a, "f32"), sh.convert(b, "f32"), op.result.shape), dtype)
    return _product(a, b, op.result.shape)


def _product(a: Value, b: Value, shape: tuple[int, ...]) -> Value:
    sa, sb = sh.spec(a), sh.spec(b)
    batch = shape[:-2]
    if sb.rank == 2:
        # [..., M, K] @ [K, N]: one dot_general contracting K gives [..., M, N] directly.
        return sh.dot_general(a, b, ((), ()), ((sa.rank - 1,), (0,)))
    a = sh.broadcast_to(a, (*batch, *sa.shape[-2:]))
    b = sh.broadcast_to(b, (*batch, *sb.shape[-2:]))
    dims = tuple(range(len(batch)))
    return sh.dot_general(a, b, (dims, dims), ((len(batch) + 1,), (len(batch),)))


def conv_options(op: Op) -> dict:
    return {
        "strides": op["window_strides"],
        "padding_low": op["padding_low"],
        "padding_high": op["padding_high"],
        "lhs_dilation": op["lhs_dilation"],
        "rhs_dilation": op["rhs_dilation"],
        "feature_group_count": op["feature_group_count"],
    }


@lowers(T.convolution)
def _lower_convolution(op: Op) -> Value:
    x, w = op.operands
    return sh.convolution(x, w, sh.ConvLayout.channels_first(op.specs[0].rank - 2), **conv_options(op))



# --------------------------------------------------------------------------- VJP rules


@vjp(T.matmul, adjoint='ā = ȳ·bᵀ, b̄ = aᵀ·ȳ as dot_general, batch dims summed where broadcast')
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


bilinear(T.matmul)


def _dilate(size: int, dilation: int) -> int:
    return 0 if size == 0 else 1 + dilation * (size - 1)


def _conv_input_grad(op: Op, ct: Value) -> Value:
    """The transposed convolution: ȳ (lhs-dilated by the strides) with the flipped kernel.
    (With stride 1 there is no dilation and the emitter's im2col form applies; a strided
    convolution that the forward lowers through patches takes `_conv_input_grad_by_phases`
    instead: benchmarks/conv_forms.md.)"""
    sx, sw = op.specs
    n, groups = sx.rank - 2, op["feature_group_count"]
    if any(s > 1 for s in op["window_strides"]) and uses_patches(sw.shape[2:], groups, op["lhs_dilation"]):
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
    grad = interleave(parts, strides)
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
    if uses_patches(window, groups, op["lhs_dilation"]):
        p = patches(x, sh.ConvLayout.channels_first(n), window, strides=op["window_strides"],
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


@vjp(T.convolution, adjoint="input̄: convolution of ȳ (lhs-dilated by the strides) with the flipped kernel "
     "(strided, im2col-lowered ones by stride phase: one matmul, then col2im); kernel̄: convolution of the input "
     "with ȳ (or the im2col patches contracted with ȳ)")
def _convolution(op: Op, ct: Value) -> Cotangents:
    return (_conv_input_grad(op, ct) if op.wants(0) else None,
            _conv_kernel_grad(op, ct) if op.wants(1) else None)


bilinear(T.convolution)



def _remaining(rank: int, *taken: tuple[int, ...]) -> list[int]:
    return [d for d in range(rank) if not any(d in t for t in taken)]


def _dot_transpose(ct: Value, other: Value, dims: DotDims, lhs: bool, rank: int) -> Value:
    """The cotangent of one operand of a dot_general (JAX's `_dot_general_transpose_lhs`):
    ȳ contracted with the other operand over the other's free dims, batched over the
    batch dims, then transposed back into the operand's layout."""
    batch, contracting = (dims.lhs_batch, dims.lhs_contracting) if lhs else (dims.rhs_batch, dims.rhs_contracting)
    other_batch, other_contracting = (dims.rhs_batch, dims.rhs_contracting) if lhs else \
        (dims.lhs_batch, dims.lhs_contracting)
    other_rank = sh.spec(other).rank
    kept = _remaining(rank, contracting, batch)
    other_kept = _remaining(other_rank, other_contracting, other_batch)
    nb = len(batch)
    # ȳ's dims: batch, then the lhs's free dims, then the rhs's.
    first = nb + len(kept) if lhs else nb
    ct_other = list(range(first, first + len(other_kept)))
    grad = sh.dot_general(ct, other, (tuple(range(nb)), tuple(other_batch)), (tuple(ct_other), tuple(other_kept)))
    # grad's dims: batch, ȳ's remaining (this operand's free dims), other's remaining (its
    # contracting dims, in its order), which pair with this operand's contracting dims.
    by_other = [c for _, c in sorted(zip(other_contracting, contracting, strict=True))]
    layout = [*batch, *kept, *by_other]
    return sh.transpose(grad, [layout.index(d) for d in range(rank)])


@vjp(sh.dot_general, adjoint="each operand's cotangent is ȳ contracted with the other operand over its free dims, "
     "batched over the batch dims, transposed back")
def _dot_general(op: Op, ct: Value) -> Cotangents:
    a, b = op.operands
    dims = op["dot_dimension_numbers"]
    return (_dot_transpose(ct, b, dims, True, op.specs[0].rank) if op.wants(0) else None,
            _dot_transpose(ct, a, dims, False, op.specs[1].rank) if op.wants(1) else None)


bilinear(sh.dot_general)


def _inverse(permutation: list[int]) -> list[int]:
    out = [0] * len(permutation)
    for i, p in enumerate(permutation):
        out[p] = i
    return out


def _group(v: Value, g: int, size: int, axis: int, groups: int, read: bool) -> Value:
    """Group g of `groups` along `axis` (`size` long) of v; v itself when there is one group
    or nothing reads it (an operand standing in, unread)."""
    if groups == 1 or not read:
        return v
    shape = sh.spec(v).shape
    start = [0] * len(shape)
    start[axis] = g * size
    return sh.slice_(v, start, [*shape[:axis], (g + 1) * size, *shape[axis + 1:]])


@vjp(sh.convolution, adjoint="as tenzr.convolution's, with the operands and ȳ transposed into channels-first "
     "layouts and the cotangents transposed back; batch groups one convolution each, their cotangents concatenated")
def _stablehlo_convolution(op: Op, ct: Value) -> Cotangents:
    """Any dimension numbers, padding, dilations and feature or batch groups: the convolution
    seen channels-first ([N, C, spatial...], kernel [O, I, spatial...]) is the tenzr op, whose
    rule knows the convolution strategy. With batch groups (as in JAX's gradient of a grouped
    convolution) it is, as StableHLO defines it, one convolution per group of the input's
    batch and the kernel's output features, concatenated along the output's features."""
    assert op.operation is not None
    options = convolution_options(op.operation)
    layout: sh.ConvLayout = options["layout"]
    x, w = op.operands
    to_x = [layout.input_batch, layout.input_feature, *layout.input_spatial]
    to_w = [layout.kernel_out, layout.kernel_in, *layout.kernel_spatial]
    to_y = [layout.output_batch, layout.output_feature, *layout.output_spatial]
    # (the input̄ reads only the kernel, the kernel̄ only the input: an operand is transposed
    # only when the other's cotangent is wanted, and stands in untransposed otherwise, unread)
    xs = sh.transpose(x, to_x) if op.wants(1) else x
    ws = sh.transpose(w, to_w) if op.wants(0) else w
    x_spec, w_spec = op.specs
    x_spec, w_spec = x_spec.with_shape(x_spec.shape[d] for d in to_x), w_spec.with_shape(w_spec.shape[d] for d in to_w)
    y_spec = op.result.with_shape(op.result.shape[d] for d in to_y)
    ct = sh.transpose(ct, to_y)
    attrs = {"window_strides": tuple(options["strides"]), "padding_low": tuple(options["padding_low"]),
             "padding_high": tuple(options["padding_high"]), "lhs_dilation": tuple(options["lhs_dilation"]),
             "rhs_dilation": tuple(options["rhs_dilation"]), "feature_group_count": options["feature_group_count"]}
    groups = options["batch_group_count"]
    n, o = x_spec.shape[0] // groups, w_spec.shape[0] // groups
    dxs, dws = [], []
    for g in range(groups):
        operands = [_group(xs, g, n, 0, groups, op.wants(1)), _group(ws, g, o, 0, groups, op.wants(0))]
        canonical = Op(T.convolution, operands,
                       [x_spec.with_shape((n, *x_spec.shape[1:])), w_spec.with_shape((o, *w_spec.shape[1:]))], attrs,
                       [], op.location, [y_spec.with_shape((y_spec.shape[0], o, *y_spec.shape[2:]))],
                       wanted=op.wanted)
        dx, dw = _convolution(canonical, _group(ct, g, o, 1, groups, True))
        dxs.append(dx)
        dws.append(dw)
    return (sh.transpose(sh.concatenate(dxs, 0), _inverse(to_x)) if op.wants(0) else None,
            sh.transpose(sh.concatenate(dws, 0), _inverse(to_w)) if op.wants(1) else None)


bilinear(sh.convolution)
