"""Shape ops: reshape, transpose, broadcasts, pad, slice, reverse, concatenate, iota;
and their StableHLO twins."""

from __future__ import annotations

from collections.abc import Sequence

from tenzr.dialect import ops as T
from tenzr.dialect.ir_imports import Value
from tenzr.dialect.opdef import Op
from tenzr.dialect.types import TensorSpec
from tenzr.passes import stablehlo as sh
from tenzr.passes.rules import Cotangents, linear, lowers, no_derivative, vjp

# --------------------------------------------------------------------------- lowerings


@lowers(T.reshape)
def _lower_reshape(op: Op) -> Value:
    return sh.reshape(op.operands[0], op.result.shape)


@lowers(T.transpose)
def _lower_transpose(op: Op) -> Value:
    return sh.transpose(op.operands[0], op["permutation"])


@lowers(T.broadcast_to)
def _lower_broadcast_to(op: Op) -> Value:
    return sh.broadcast_to(op.operands[0], op.result.shape)


@lowers(T.pad)
def _lower_pad(op: Op) -> Value:
    return sh.pad(op.operands[0], op.operands[1], op["low"], op["high"], op["interior"])


@lowers(T.slice_)
def _lower_slice(op: Op) -> Value:
    return sh.slice_(op.operands[0], op["start"], op["stop"], op["step"])


@lowers(T.reverse)
def _lower_reverse(op: Op) -> Value:
    return sh.reverse(op.operands[0], op["dimensions"])


@lowers(T.concatenate)
def _lower_concatenate(op: Op) -> Value:
    return sh.concatenate(op.operands, op["axis"])


@lowers(T.iota)
def _lower_iota(op: Op) -> Value:
    return sh.iota(op.result, op["dimension"])


# --------------------------------------------------------------------------- VJP rules


@vjp(T.reshape, sh.reshape, adjoint="x̄ = reshape(ȳ)")
def _reshape(op: Op, ct: Value) -> Cotangents:
    return (sh.reshape(ct, op.specs[0].shape),)


linear(T.reshape, sh.reshape)


@vjp(T.transpose, sh.transpose, adjoint="x̄ = transpose(ȳ, inverse permutation)")
def _transpose(op: Op, ct: Value) -> Cotangents:
    perm = op["permutation"]
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return (sh.transpose(ct, inverse),)


linear(T.transpose, sh.transpose)


@vjp(T.broadcast_to, adjoint="x̄ = ȳ summed over the broadcast dims")
def _broadcast_to(op: Op, ct: Value) -> Cotangents:
    return (ct,)  # the driver sums it back to x's shape


linear(T.broadcast_to)


@vjp(sh.broadcast_in_dim, adjoint="x̄ = ȳ summed over the dims x does not map to and those it stretches")
def _broadcast_in_dim(op: Op, ct: Value) -> Cotangents:
    x, out = op.specs[0], op.result
    dims = op["broadcast_dimensions"]
    stretched = [dims[i] for i, n in enumerate(x.shape) if n == 1 and out.shape[dims[i]] != 1]
    summed = sorted({*range(out.rank)} - set(dims) | set(stretched))
    reduced = sh.reduce(ct, 0, summed, "add") if summed else ct
    kept = [i for i in range(x.rank) if dims[i] not in stretched]
    by_position = sorted(kept, key=lambda i: dims[i])  # reduced's dims are in result order
    reduced = sh.transpose(reduced, [by_position.index(i) for i in kept])
    return (sh.reshape(reduced, x.shape),)


linear(sh.broadcast_in_dim)


def unpad(ct: Value, low: Sequence[int], high: Sequence[int], interior: Sequence[int]) -> Value:
    """The transpose of a pad: ȳ with the edge padding undone (cropped where the pad added,
    zero-filled where it cut), then every (interior + 1)-th element.

    The crop is a slice, not a pad by a negative amount: IREE 3.13 fails to compile some
    chains of negative pads ("'stream.yield' op used resource not listed in explicit
    captures")."""
    rank = len(low)
    shape = sh.spec(ct).shape
    kept = sh.slice_(ct, [max(lo, 0) for lo in low], [n - max(hi, 0) for n, hi in zip(shape, high, strict=True)],
                     [1] * rank)
    if any(lo < 0 for lo in low) or any(hi < 0 for hi in high):
        zero = sh.zeros(TensorSpec((), sh.spec(ct).dtype))
        kept = sh.pad(kept, zero, [max(-lo, 0) for lo in low], [max(-hi, 0) for hi in high], [0] * rank)
    return sh.slice_(kept, [0] * rank, sh.spec(kept).shape, [i + 1 for i in interior])


def _pad_cotangent(op: Op, ct: Value, low: Sequence[int], high: Sequence[int], interior: Sequence[int]) -> Cotangents:
    """x̄ = unpad(ȳ); pad_valuē = sum(ȳ) - sum(x̄)."""
    x = op.specs[0]
    dx = unpad(ct, low, high, interior)
    dvalue = None
    if op.wants(1):
        all_dims = tuple(range(x.rank))
        dvalue = sh.subtract(sh.reduce(ct, 0, all_dims, "add"), sh.reduce(dx, 0, all_dims, "add"))
    return dx, dvalue


@vjp(T.pad, adjoint="x̄ = strided slice of ȳ; pad_valuē = sum(ȳ) - sum(x̄)")
def _pad(op: Op, ct: Value) -> Cotangents:
    return _pad_cotangent(op, ct, op["low"], op["high"], op["interior"])


linear(T.pad)


@vjp(sh.pad, adjoint="x̄ = strided slice of ȳ; pad_valuē = sum(ȳ) - sum(x̄)")
def _stablehlo_pad(op: Op, ct: Value) -> Cotangents:
    return _pad_cotangent(op, ct, op["edge_padding_low"], op["edge_padding_high"], op["interior_padding"])


linear(sh.pad)


def unslice(ct: Value, shape: Sequence[int], start: Sequence[int], step: Sequence[int]) -> Value:
    """The transpose of a slice of an array of `shape`: ȳ padded with zeros back into place,
    interior step - 1."""
    low, high = [], []
    out = sh.spec(ct).shape
    for b, n, s, d in zip(start, out, step, shape, strict=True):
        low.append(b)
        high.append(d - (b + (n - 1) * s + 1) if n else d - b)
    interior = [s - 1 if n > 1 else 0 for s, n in zip(step, out, strict=True)]
    return sh.pad(ct, sh.zeros(TensorSpec((), sh.spec(ct).dtype)), low, high, interior)


def _slice_cotangent(op: Op, ct: Value, start: Sequence[int], step: Sequence[int]) -> Cotangents:
    return (unslice(ct, op.specs[0].shape, start, step),)


@vjp(T.slice_, adjoint="x̄ = pad(ȳ, 0) back into place, interior step - 1")
def _slice(op: Op, ct: Value) -> Cotangents:
    return _slice_cotangent(op, ct, op["start"], op["step"])


linear(T.slice_)


@vjp(sh.slice_, adjoint="x̄ = pad(ȳ, 0) back into place, interior stride - 1")
def _stablehlo_slice(op: Op, ct: Value) -> Cotangents:
    return _slice_cotangent(op, ct, op["start_indices"], op["strides"])


linear(sh.slice_)


@vjp(T.reverse, sh.reverse, adjoint="x̄ = reverse(ȳ)")
def _reverse(op: Op, ct: Value) -> Cotangents:
    return (sh.reverse(ct, op["dimensions"]),)


linear(T.reverse, sh.reverse)


def _concatenate_cotangent(op: Op, ct: Value, axis: int) -> Cotangents:
    offset, out = 0, []
    shape = op.result.shape
    for s in op.specs:
        start = [offset if d == axis else 0 for d in range(len(shape))]
        limit = [offset + s.shape[axis] if d == axis else n for d, n in enumerate(shape)]
        out.append(sh.slice_(ct, start, limit))
        offset += s.shape[axis]
    return out


@vjp(T.concatenate, adjoint="each x̄ᵢ = its slice of ȳ")
def _concatenate(op: Op, ct: Value) -> Cotangents:
    return _concatenate_cotangent(op, ct, op["axis"])


linear(T.concatenate)


@vjp(sh.concatenate, adjoint="each x̄ᵢ = its slice of ȳ")
def _stablehlo_concatenate(op: Op, ct: Value) -> Cotangents:
    return _concatenate_cotangent(op, ct, op["dimension"])


linear(sh.concatenate)


@vjp(sh.optimization_barrier, adjoint="each x̄ᵢ = ȳᵢ")
def _optimization_barrier(op: Op, ct: Value | tuple[Value, ...]) -> Cotangents:
    return ct if isinstance(ct, tuple) else (ct,)


linear(sh.optimization_barrier)


no_derivative(sh.iota)
