"""Batching rules (`tenzr-batch`, `tz.vmap`): the ops that batch without a loop.

A batched value carries the batch dimension first. Tenzr's elementwise ops and matmul
broadcast like NumPy, so one rule serves them all: a batched operand is given ones after
its batch dimension up to the result's rank, and the unbatched ones broadcast against it.
StableHLO's elementwise ops do not broadcast: their unbatched operands are broadcast to the
batch. Reductions, shapes and slices shift their dimensions by one; a convolution folds the
batch into its images; `dot_general` gains a batching dimension; gathers, scatters and
dynamic slices with batched indices or starts become gathers and scatters with a batching
dimension (or, for tenzr's scatter, one scatter over the batch merged with its axis). The
region ops' rules live with their other rules (`control`). Every other op (and these in
the cases noted: a batched kernel, a batched padding or initial value) runs once per batch
element in the driver's loop (`LOOPED`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tenzr.dialect import ops as T
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.opdef import Op
from tenzr.dialect.types import TensorSpec, ir_type, spec_of
from tenzr.passes import stablehlo as sh
from tenzr.passes.rules import batch
from tenzr.passes.rules.indexing import clamp_indices, clamp_to, in_range, normalize_indices

Batched = Sequence["Value | None"]


def stacked(spec: TensorSpec, n: int) -> TensorSpec:
    return TensorSpec((n, *spec.shape), spec.dtype)


def _size(op: Op) -> int:
    return int(op.driver.size)


def materialized(op: Op, batched: Batched, i: int) -> Value:
    """Operand i with the batch dimension: its batched value, or it broadcast to the batch."""
    found = batched[i]
    if found is not None:
        return found
    s = op.specs[i]
    return sh.broadcast_in_dim(op.operands[i], (_size(op), *s.shape), range(1, s.rank + 1))


def _aligned(value: Value, rank: int) -> Value:
    """A batched value given ones after its batch dimension, up to `rank` + 1 dims."""
    s = spec_of(value)
    return sh.reshape(value, (s.shape[0], *[1] * (rank + 1 - s.rank), *s.shape[1:]))


def _tenzr(op: Op, operands: Sequence[Value], **changed: Any) -> list[Value]:
    """The tenzr op again, on batched operands (given results, too, get the batch)."""
    assert op.opdef is not None
    given = [stacked(s, _size(op)) for s in op.given]
    out = op.opdef(*operands, result=given or None, **{**op.attrs, **changed})
    return out if isinstance(out, list) else [out]


def _rebuilt(op: Op, operands: Sequence[Value], results: Sequence[TensorSpec] | None = None,
             **changed: ir.Attribute) -> list[Value]:
    """The StableHLO op again, on batched operands, with results of the batch (or `results`)
    and attributes `changed` (its regions move over)."""
    operation = op.operation
    assert operation is not None
    attributes = {name: operation.attributes[name] for name in operation.attributes}
    attributes.update(changed)
    results = [ir_type(s) for s in results or [stacked(s, _size(op)) for s in op.results]]
    new = ir.Operation.create(operation.name, results=results, operands=list(operands), attributes=attributes,
                              regions=len(operation.regions))
    if len(operation.regions):
        copy = operation.clone()
        for source, target in zip(copy.regions, new.regions, strict=True):
            source.blocks[0].append_to(target)
        copy.erase()
    return list(new.results)


def _shifted(dims: Sequence[int]) -> tuple[int, ...]:
    return tuple(d + 1 for d in dims)


def _i64s(values: Sequence[int]) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


# --------------------------------------------------------------------------- tenzr


@batch(*[o for o in T.OPS.values() if o.elementwise], T.matmul)
def _broadcasting(op: Op, batched: Batched) -> list[Value]:
    rank = op.result.rank
    return _tenzr(op, [_aligned(b, rank) if b is not None else v for v, b in zip(op.operands, batched, strict=True)])


@batch(T.reduce_sum, T.reduce_prod, T.reduce_max, T.reduce_min)
def _reduction(op: Op, batched: Batched) -> list[Value]:
    axes = op["axes"] or range(op.specs[0].rank)  # (empty axes reduce all)
    return _tenzr(op, [materialized(op, batched, 0)], axes=_shifted(axes))


@batch(T.argmax, T.argmin, T.argsort, T.sort)
def _along_axis(op: Op, batched: Batched) -> list[Value]:
    return _tenzr(op, [materialized(op, batched, 0)], axis=op["axis"] + 1)


@batch(T.reshape)
def _given_shape(op: Op, batched: Batched) -> list[Value]:
    return _tenzr(op, [materialized(op, batched, 0)])


@batch(T.broadcast_to)
def _broadcast_to(op: Op, batched: Batched) -> list[Value]:
    return _tenzr(op, [_aligned(materialized(op, batched, 0), op.result.rank)])


@batch(T.transpose)
def _transpose(op: Op, batched: Batched) -> list[Value]:
    return _tenzr(op, [materialized(op, batched, 0)], permutation=(0, *_shifted(op["permutation"])))


@batch(T.reverse)
def _reverse(op: Op, batched: Batched) -> list[Value]:
    return _tenzr(op, [materialized(op, batched, 0)], dimensions=_shifted(op["dimensions"]))


@batch(T.slice_)
def _slice(op: Op, batched: Batched) -> list[Value]:
    return _tenzr(op, [materialized(op, batched, 0)], start=(0, *op["start"]), stop=(_size(op), *op["stop"]),
                  step=(1, *op["step"]))


@batch(T.concatenate)
def _concatenate(op: Op, batched: Batched) -> list[Value]:
    return _tenzr(op, [materialized(op, batched, i) for i in range(len(op.operands))], axis=op["axis"] + 1)


@batch(T.pad)
def _pad(op: Op, batched: Batched) -> list[Value]:
    if batched[1] is not None:
        return op.driver.looped(op, batched)
    return _tenzr(op, [materialized(op, batched, 0), op.operands[1]], low=(0, *op["low"]), high=(0, *op["high"]),
                  interior=(0, *op["interior"]))


@batch(T.gather)
def _gather(op: Op, batched: Batched) -> list[Value]:
    """Unbatched indices: the gather one axis further. Batched ones: a StableHLO gather with
    a batching dimension (the indices clamped into range first, as the op's lowering does)."""
    axis = op["axis"] + 1
    x = materialized(op, batched, 0)
    if batched[1] is None:
        return _tenzr(op, [x, op.operands[1]], axis=axis)
    s = spec_of(x)
    n, k = _size(op), op.specs[1].shape[0]
    if k == 0:
        return [sh.zeros(stacked(op.result, n))]
    column = sh.reshape(clamp_indices(batched[1], s.shape[axis]), (n, k, 1))
    return [sh.gather(x, column, offset_dims=[d for d in range(1, s.rank) if d != axis], collapsed_slice_dims=[axis],
                      operand_batching_dims=[0], start_indices_batching_dims=[0], start_index_map=[axis],
                      index_vector_dim=2, slice_sizes=[1 if d in (0, axis) else m for d, m in enumerate(s.shape)])]


@batch(T.take_along_axis)
def _take_along_axis(op: Op, batched: Batched) -> list[Value]:
    return _tenzr(op, [materialized(op, batched, 0), materialized(op, batched, 1)], axis=op["axis"] + 1)


@batch(T.scatter)
def _scatter(op: Op, batched: Batched) -> list[Value]:
    """Unbatched indices: the scatter one axis further. Batched ones: the batch and the
    scattered axis merged into one, each element's indices offset into its own rows (those
    out of range sent past the end, where they are dropped), so every mode keeps its meaning."""
    axis = op["axis"] + 1
    x, updates = materialized(op, batched, 0), materialized(op, batched, 2)
    if batched[1] is None:
        return _tenzr(op, [x, op.operands[1], updates], axis=axis)
    n, size, k = _size(op), op.specs[0].shape[op["axis"]], op.specs[1].shape[0]
    indices = normalize_indices(batched[1], size)
    si = sh.spec(indices)
    flat = sh.add(indices, sh.multiply(sh.iota(si, 0), sh.full(si, size)))
    flat = sh.select(in_range(indices, size), flat, sh.full(si, n * size))
    rows, rest = _merged(x, axis), _merged(updates, axis)
    (out,) = _tenzr_unbatched(op, [rows, sh.reshape(flat, (n * k,)), rest], axis=0)
    return [_unmerged(out, spec_of(x), axis)]


def _merged(value: Value, axis: int) -> Value:
    """A batched value with its dimension `axis` moved next to the batch and merged with it."""
    s = spec_of(value)
    order = [0, axis, *(d for d in range(1, s.rank) if d != axis)]
    return sh.reshape(sh.transpose(value, order), (s.shape[0] * s.shape[axis], *(s.shape[d] for d in order[2:])))


def _unmerged(value: Value, spec: TensorSpec, axis: int) -> Value:
    """`_merged`'s inverse, back to `spec`."""
    order = [0, axis, *(d for d in range(1, spec.rank) if d != axis)]
    moved = sh.reshape(value, [spec.shape[d] for d in order])
    return sh.transpose(moved, [order.index(d) for d in range(spec.rank)])


def _start_tuples(op: Op, batched: Batched, first: int, sizes: Sequence[int]) -> Value:
    """[batch, rank] i32 start indices from the scalar starts at operands `first`..., each
    clamped into [0, dim - size] as dynamic_slice's are."""
    n = _size(op)
    columns = [sh.reshape(clamp_to(materialized(op, batched, first + d), dim - size + 1), (n, 1))
               for d, (dim, size) in enumerate(zip(op.specs[0].shape, sizes, strict=True))]
    return sh.concatenate(columns, 1)


def _sliced(op: Op, batched: Batched, sizes: Sequence[int]) -> list[Value]:
    """dynamic_slice with batched starts: a gather with a batching dimension."""
    window = range(1, len(sizes) + 1)
    return [sh.gather(materialized(op, batched, 0), _start_tuples(op, batched, 1, sizes), offset_dims=window,
                      collapsed_slice_dims=[], operand_batching_dims=[0], start_indices_batching_dims=[0],
                      start_index_map=window, index_vector_dim=1, slice_sizes=(1, *sizes))]


def _updated(op: Op, batched: Batched) -> list[Value]:
    """dynamic_update_slice with batched starts: a scatter with a batching dimension (the
    starts clamped first, so the whole update is written, as dynamic_update_slice does)."""
    window = range(1, op.specs[0].rank + 1)
    return [sh.scatter(materialized(op, batched, 0), _start_tuples(op, batched, 2, op.specs[1].shape),
                       materialized(op, batched, 1), update_window_dims=window, inserted_window_dims=[],
                       input_batching_dims=[0], scatter_indices_batching_dims=[0], scatter_dims_to_operand_dims=window,
                       index_vector_dim=1, combiner="set")]


@batch(T.dynamic_slice)
def _dynamic_slice(op: Op, batched: Batched) -> list[Value]:
    if any(b is not None for b in batched[1:]):
        return _sliced(op, batched, op["sizes"])
    starts = list(op.operands[1:])
    return _tenzr(op, [materialized(op, batched, 0), sh.zeros(spec_of(starts[0])), *starts],
                  sizes=(_size(op), *op["sizes"]))


@batch(T.dynamic_update_slice)
def _dynamic_update_slice(op: Op, batched: Batched) -> list[Value]:
    if any(b is not None for b in batched[2:]):
        return _updated(op, batched)
    starts = list(op.operands[2:])
    return _tenzr(op, [materialized(op, batched, 0), materialized(op, batched, 1), sh.zeros(spec_of(starts[0])),
                       *starts])


@batch(T.convolution)
def _convolution(op: Op, batched: Batched) -> list[Value]:
    """The batch folded into the images (a batched kernel runs in the loop)."""
    if batched[1] is not None:
        return op.driver.looped(op, batched)
    x, n = batched[0], _size(op)
    assert x is not None
    s = spec_of(x)
    images = sh.reshape(x, (n * s.shape[1], *s.shape[2:]))
    (out,) = _tenzr_unbatched(op, [images, op.operands[1]])
    r = spec_of(out)
    return [sh.reshape(out, (n, r.shape[0] // n, *r.shape[1:]))]


def _tenzr_unbatched(op: Op, operands: Sequence[Value], **changed: Any) -> list[Value]:
    assert op.opdef is not None
    out = op.opdef(*operands, **{**op.attrs, **changed})
    return out if isinstance(out, list) else [out]


# --------------------------------------------------------------------------- StableHLO


@batch(*sorted(sh.ELEMENTWISE))
def _same_shape(op: Op, batched: Batched) -> list[Value]:
    """Every operand with the batch (a scalar predicate or bound broadcast to the result)."""
    n, shape = _size(op), op.result.shape
    operands = []
    for i, s in enumerate(op.specs):
        value = materialized(op, batched, i)
        if s.rank < len(shape):
            value = sh.broadcast_in_dim(value, (n, *shape), [0])
        operands.append(value)
    return _rebuilt(op, operands)


@batch(sh.broadcast_in_dim)
def _broadcast_in_dim(op: Op, batched: Batched) -> list[Value]:
    return [sh.broadcast_in_dim(materialized(op, batched, 0), (_size(op), *op.result.shape),
                                (0, *_shifted(op["broadcast_dimensions"])))]


@batch(sh.reshape)
def _reshape(op: Op, batched: Batched) -> list[Value]:
    return [sh.reshape(materialized(op, batched, 0), (_size(op), *op.result.shape))]


@batch(sh.transpose)
def _stablehlo_transpose(op: Op, batched: Batched) -> list[Value]:
    return [sh.transpose(materialized(op, batched, 0), (0, *_shifted(op["permutation"])))]


@batch(sh.reverse)
def _stablehlo_reverse(op: Op, batched: Batched) -> list[Value]:
    return [sh.reverse(materialized(op, batched, 0), _shifted(op["dimensions"]))]


@batch(sh.slice_)
def _stablehlo_slice(op: Op, batched: Batched) -> list[Value]:
    return [sh.slice_(materialized(op, batched, 0), (0, *op["start_indices"]), (_size(op), *op["limit_indices"]),
                      (1, *op["strides"]))]


@batch(sh.concatenate)
def _stablehlo_concatenate(op: Op, batched: Batched) -> list[Value]:
    return [sh.concatenate([materialized(op, batched, i) for i in range(len(op.operands))], op["dimension"] + 1)]


@batch(sh.pad)
def _stablehlo_pad(op: Op, batched: Batched) -> list[Value]:
    if batched[1] is not None:
        return op.driver.looped(op, batched)
    return [sh.pad(materialized(op, batched, 0), op.operands[1], (0, *op["edge_padding_low"]),
                   (0, *op["edge_padding_high"]), (0, *op["interior_padding"]))]


def _from_unbatched_inits(op: Op, batched: Batched, **changed: ir.Attribute) -> list[Value]:
    """A reduction (its inputs, then as many initial values) rebuilt on the batched inputs
    with `changed` attributes, when its initial values are unbatched; else the loop."""
    half = len(op.operands) // 2
    if any(b is not None for b in batched[half:]):
        return op.driver.looped(op, batched)
    operands = [materialized(op, batched, i) for i in range(half)] + list(op.operands[half:])
    return _rebuilt(op, operands, **changed)


@batch(sh.reduce)
def _stablehlo_reduce(op: Op, batched: Batched) -> list[Value]:
    """A reduce of batched operands from unbatched initial values (else the loop)."""
    return _from_unbatched_inits(op, batched, dimensions=_i64s(_shifted(op["dimensions"])))


@batch(sh.dot_general)
def _dot_general(op: Op, batched: Batched) -> list[Value]:
    """Both batched: one more batching dimension. One batched: its batch dimension is a free
    one, moved to the front of the result."""
    dims = op["dot_dimension_numbers"]
    a, b = batched
    if a is not None and b is not None:
        return [sh.dot_general(a, b, ((0, *_shifted(dims.lhs_batch)), (0, *_shifted(dims.rhs_batch))),
                               (_shifted(dims.lhs_contracting), _shifted(dims.rhs_contracting)))]
    if a is not None:
        out = sh.dot_general(a, op.operands[1], (_shifted(dims.lhs_batch), dims.rhs_batch),
                             (_shifted(dims.lhs_contracting), dims.rhs_contracting))
        at = len(dims.lhs_batch)
    else:
        assert b is not None
        out = sh.dot_general(op.operands[0], b, (dims.lhs_batch, _shifted(dims.rhs_batch)),
                             (dims.lhs_contracting, _shifted(dims.rhs_contracting)))
        free_a = op.specs[0].rank - len(dims.lhs_batch) - len(dims.lhs_contracting)
        at = len(dims.lhs_batch) + free_a
    rank = spec_of(out).rank
    return [sh.transpose(out, (at, *(d for d in range(rank) if d != at)))]


@batch(sh.gather)
def _stablehlo_gather(op: Op, batched: Batched) -> list[Value]:
    """One more batching dimension, shared by the operand and the indices (each broadcast
    to the batch if it has none)."""
    dims = op["dimension_numbers"]
    return [sh.gather(materialized(op, batched, 0), materialized(op, batched, 1),
                      offset_dims=_shifted(dims.offset_dims), collapsed_slice_dims=_shifted(dims.collapsed_slice_dims),
                      operand_batching_dims=(0, *_shifted(dims.operand_batching_dims)),
                      start_indices_batching_dims=(0, *_shifted(dims.start_indices_batching_dims)),
                      start_index_map=_shifted(dims.start_index_map), index_vector_dim=dims.index_vector_dim + 1,
                      slice_sizes=(1, *op["slice_sizes"]))]


@batch(sh.dynamic_slice)
def _stablehlo_dynamic_slice(op: Op, batched: Batched) -> list[Value]:
    sizes = op["slice_sizes"]
    if any(b is not None for b in batched[1:]):
        return _sliced(op, batched, sizes)
    starts = list(op.operands[1:])
    return [sh.dynamic_slice(materialized(op, batched, 0), [sh.zeros(spec_of(starts[0])), *starts],
                             (_size(op), *sizes))]


@batch(sh.dynamic_update_slice)
def _stablehlo_dynamic_update_slice(op: Op, batched: Batched) -> list[Value]:
    if any(b is not None for b in batched[2:]):
        return _updated(op, batched)
    starts = list(op.operands[2:])
    return [sh.dynamic_update_slice(materialized(op, batched, 0), materialized(op, batched, 1),
                                    [sh.zeros(spec_of(starts[0])), *starts])]


@batch(sh.scatter)
def _stablehlo_scatter(op: Op, batched: Batched) -> list[Value]:
    """One more batching dimension, shared by the inputs, the indices and the updates."""
    dims = op["scatter_dimension_numbers"]
    numbers = sh.scatter_numbers(_shifted(dims.update_window_dims), _shifted(dims.inserted_window_dims),
                                 _shifted(dims.scatter_dims_to_operand_dims), dims.index_vector_dim + 1,
                                 (0, *_shifted(dims.input_batching_dims)),
                                 (0, *_shifted(dims.scatter_indices_batching_dims)))
    operands = [materialized(op, batched, i) for i in range(len(op.operands))]
    return _rebuilt(op, operands, scatter_dimension_numbers=numbers)


@batch(sh.sort)
def _stablehlo_sort(op: Op, batched: Batched) -> list[Value]:
    dimension = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), op["dimension"] + 1)
    return _rebuilt(op, [materialized(op, batched, i) for i in range(len(op.operands))], dimension=dimension)


@batch(sh.top_k, sh.optimization_barrier)
def _leading_batch(op: Op, batched: Batched) -> list[Value]:
    """Ops that keep any leading dimensions as they are (top_k works on the last one)."""
    return _rebuilt(op, [materialized(op, batched, i) for i in range(len(op.operands))])


def _window_attributes(op: Op) -> dict[str, ir.Attribute]:
    """A window's attributes with a window of one along the batch."""
    window = op["window"]
    attributes = sh.Window((1, *window.dimensions), (1, *window.strides), ((0, 0), *window.padding),
                           (1, *window.base_dilations), (1, *window.window_dilations)).attributes()
    assert op.operation is not None
    return {name: value for name, value in attributes.items() if name in op.operation.attributes
            or name == "window_dimensions"}


@batch(sh.reduce_window)
def _stablehlo_reduce_window(op: Op, batched: Batched) -> list[Value]:
    """A window of one along the batch, from unbatched initial values (else the loop)."""
    return _from_unbatched_inits(op, batched, **_window_attributes(op))


@batch(sh.select_and_scatter_add)
def _stablehlo_select_and_scatter(op: Op, batched: Batched) -> list[Value]:
    """A window of one along the batch, from an unbatched initial value (else the loop)."""
    if batched[2] is not None:
        return op.driver.looped(op, batched)
    operands = [materialized(op, batched, 0), materialized(op, batched, 1), op.operands[2]]
    return _rebuilt(op, operands, **_window_attributes(op))


@batch(sh.convolution)
def _stablehlo_convolution(op: Op, batched: Batched) -> list[Value]:
    """A batched input with an unbatched kernel: the batch merged into the images' batch
    dimension. Otherwise (a batched kernel, batch groups) the loop."""
    if batched[1] is not None or op["batch_group_count"] != 1:
        return op.driver.looped(op, batched)
    layout, x, n = op["dimension_numbers"], batched[0], _size(op)
    assert x is not None
    s, images = spec_of(x), layout.input_batch + 1
    order = [*range(1, images), 0, *range(images, s.rank)]
    shape = list(op.specs[0].shape)
    shape[layout.input_batch] *= n
    merged = sh.reshape(sh.transpose(x, order), shape)
    out = op.result.shape
    result = list(out)
    result[layout.output_batch] *= n
    (y,) = _rebuilt(op, [merged, op.operands[1]], [op.result.with_shape(result)])
    at = layout.output_batch
    split = sh.reshape(y, (*out[:at], n, *out[at:]))
    return [sh.transpose(split, (at, *(d for d in range(len(out) + 1) if d != at)))]
