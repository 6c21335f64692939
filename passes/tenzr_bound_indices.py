"""`tenzr-bound-indices`: gathers clamp their start indices and scatters drop the windows
that do not fit, as StableHLO specifies. IREE 3.13 does neither: its gather reads past the
operand and its scatter writes past it (corrupting memory), so a JAX program that indexes
out of range (which JAX defines: a read clamps, a write is dropped) would go wrong.

Indices a small interval analysis proves in range (tenzr's own lowerings clamp them, and
constants, iotas and sort permutations are known) are left as they are. Otherwise a gather
gets its starts clamped; a scatter whose body has an identity (add, multiply, max, min, and,
or) gets its starts clamped and the updates of windows outside replaced by the identity;
any other scatter (set, a variadic one, another body) writes its outside windows into
padding added past the operand, then sliced off.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.types import TensorSpec
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.rules.indexing import clamp_starts, identity_element, start_bounds, start_limits, starts_inside
from tenzr.passes.views import GatherDims, ScatterDims, view

Interval = tuple[int, int]

_SAME_RANGE = {sh.convert.op_name, sh.reshape.op_name, sh.reverse.op_name}
"""Ops whose result holds only values of their first operand (its dims may move)."""


def index_range(value: Value, axis: int | None = None, k: int = 0, depth: int = 0) -> Interval | None:
    """Bounds on the integers `value` holds (at position k along `axis`, if given), or None
    when they are not known."""
    op = sh.producer(value)
    if op is None or depth > 32:
        return None
    name, operands = op.name, list(op.operands)

    def of(v: Value, along: int | None = axis, at: int = k) -> Interval | None:
        return index_range(v, along, at, depth + 1)

    if name == sh.constant.op_name:
        values = np.array(op.attributes["value"])
        if values.size == 0 or values.dtype.kind not in "iu":
            return None
        if axis is not None and values.ndim:
            values = np.take(values, k if values.shape[axis] > 1 else 0, axis=axis)
        return int(values.min()), int(values.max())
    if name == sh.iota.op_name:
        dim, shape = view(op)["iota_dimension"], sh.spec(value).shape
        return (k, k) if axis == dim else (0, shape[dim] - 1)
    if name == sh.clamp.op_name:
        low, high = (of(v) if sh.spec(v).rank else of(v, None) for v in (operands[0], operands[2]))
        return (low[0], high[1]) if low and high else None
    if name in _SAME_RANGE:
        return of(operands[0], None)
    if name == sh.broadcast_in_dim.op_name:
        dims = list(view(op)["broadcast_dimensions"])
        if axis in dims:
            return of(operands[0], dims.index(axis))
        return of(operands[0], None)
    if name == sh.transpose.op_name:
        return of(operands[0], None if axis is None else view(op)["permutation"][axis])
    if name == sh.slice_.op_name:
        cut = view(op)
        return of(operands[0], axis, k if axis is None else cut["start_indices"][axis] + k * cut["strides"][axis])
    if name == sh.concatenate.op_name:
        along = view(op)["dimension"]
        if axis == along:
            for piece in operands:
                extent = sh.spec(piece).shape[along]
                if k < extent:
                    return of(piece, along, k)
                k -= extent
            return None
        return _union([of(piece) for piece in operands])
    if name == sh.select.op_name:
        return _union([of(operands[1]), of(operands[2])])
    if name == sh.sort.op_name:
        position = list(op.results).index(value)
        dimension = view(op)["dimension"]
        return of(operands[position], None if axis == dimension else axis)
    return None


def _union(ranges: list[Interval | None]) -> Interval | None:
    if any(r is None for r in ranges) or not ranges:
        return None
    return min(r[0] for r in ranges if r), max(r[1] for r in ranges if r)


def starts_in_range(indices: Value, index_vector_dim: int, dims_map: tuple[int, ...], limits: list[int]) -> bool:
    """Whether every start (component k of each index vector, for operand dim dims_map[k])
    provably lies in [0, limits[dims_map[k]]]."""
    rank = sh.spec(indices).rank
    for k, d in enumerate(dims_map):
        bounds = index_range(indices, None if index_vector_dim == rank else index_vector_dim, k)
        if bounds is None or bounds[0] < 0 or bounds[1] > limits[d]:
            return False
    return True


def _bound_gather(op: ir.Operation) -> None:
    decoded = view(op)
    dims: GatherDims = decoded["dimension_numbers"]
    x, indices = op.operands
    limits = start_limits(sh.spec(x).shape, decoded["slice_sizes"])
    if starts_in_range(indices, dims.index_vector_dim, dims.start_index_map, limits):
        return
    with op.location, ir.InsertionPoint(op):
        op.operands[1] = clamp_starts(indices, dims.index_vector_dim, dims.start_index_map, limits)


def _bound_scatter(op: ir.Operation) -> None:
    decoded = view(op)
    dims: ScatterDims = decoded["scatter_dimension_numbers"]
    count = len(op.operands) // 2
    targets, indices, updates = list(op.operands[:count]), op.operands[count], list(op.operands[count + 1:])
    sx, su = sh.spec(targets[0]), sh.spec(updates[0])
    window = iter(su.shape[d] for d in dims.update_window_dims)
    unit = {*dims.inserted_window_dims, *dims.input_batching_dims}
    sizes = [1 if d in unit else next(window) for d in range(sx.rank)]
    limits = start_limits(sx.shape, sizes)
    if su.size == 0 or starts_in_range(indices, dims.index_vector_dim, dims.scatter_dims_to_operand_dims, limits):
        return
    with op.location, ir.InsertionPoint(op):
        inside = starts_inside(indices, dims.index_vector_dim, dims.scatter_dims_to_operand_dims, limits)
        scatter_dims = [d for d in range(su.rank) if d not in dims.update_window_dims]
        combiner = decoded["combiner"]
        if combiner not in (None, "set") and count == 1:
            kept = sh.broadcast_in_dim(inside, su.shape, scatter_dims)
            op.operands[1] = clamp_starts(indices, dims.index_vector_dim, dims.scatter_dims_to_operand_dims, limits)
            op.operands[2] = sh.select(kept, updates[0], sh.full(su, identity_element(combiner, su.dtype)))
            return
        _scatter_outside_into_padding(op, dims, inside, sizes)


def _scatter_outside_into_padding(op: ir.Operation, dims: ScatterDims, inside: Value, sizes: list[int]) -> None:
    """Pads each target past its end by a window, sends the windows outside there, and
    slices the padding off the results."""
    count = len(op.operands) // 2
    targets, indices, updates = list(op.operands[:count]), op.operands[count], list(op.operands[count + 1:])
    si = sh.spec(indices)
    shape = sh.spec(targets[0]).shape
    rank = len(shape)
    high = [sizes[d] if d in dims.scatter_dims_to_operand_dims else 0 for d in range(rank)]
    padded = [sh.pad(t, sh.zeros(TensorSpec((), sh.spec(t).dtype)), [0] * rank, high, [0] * rank) for t in targets]
    keep = inside if dims.index_vector_dim == si.rank else sh.broadcast_in_dim(
        inside, si.shape, [d for d in range(si.rank) if d != dims.index_vector_dim])
    past_the_end = start_bounds(indices, dims.index_vector_dim, dims.scatter_dims_to_operand_dims, list(shape))
    moved = sh.select(keep, indices, past_the_end)
    wider = sh.rescatter(op, padded, moved, updates)
    replace_op(op, [sh.slice_(r, [0] * rank, shape, [1] * rank) for r in wider])


def bound_indices(module: ir.Operation) -> None:
    for op in ops_named(module, {sh.gather.op_name, sh.scatter.op_name}):
        (_bound_gather if op.name == sh.gather.op_name else _bound_scatter)(op)


@register
@dataclass
class TenzrBoundIndices(Pass):
    flag: ClassVar[str] = "tenzr-bound-indices"
    summary: ClassVar[str] = ("Make gathers clamp their starts and scatters drop the windows that do not fit, as "
                              "StableHLO specifies (IREE 3.13 reads and writes out of bounds instead).")

    def run(self, module: ir.Operation) -> None:
        bound_indices(module)
