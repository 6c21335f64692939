"""Indexing ops: gather, take_along_axis, scatter, dynamic_slice, dynamic_update_slice;
and the index helpers the reductions' rules share."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tenzr.dialect import ops as T
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ir_imports import Value
from tenzr.dialect.opdef import Op
from tenzr.dialect.types import FLOAT_TYPES, TensorSpec, numpy_dtype
from tenzr.passes import stablehlo as sh
from tenzr.passes.rules import Cotangents, linear, lowers, vjp
from tenzr.passes.views import GatherDims, ScatterDims

# --------------------------------------------------------------------------- helpers


def normalize_indices(indices: Value, size: int) -> Value:
    """NumPy negative indices: i < 0 becomes i + size."""
    s = sh.spec(indices)
    negative = sh.compare(indices, sh.zeros(s), "LT")
    return sh.select(negative, sh.add(indices, sh.full(s, size)), indices)


def clamp_to(indices: Value, size: int) -> Value:
    """Indices clamped into [0, size) (IREE's gather reads out of bounds otherwise), as i32.

    i32 because IREE 3.13 fails to compile an i64 index tensor shared by several gathers
    and scatters ("failed to legalize unresolved source materialization ... i64 to i32").
    """
    scalar = TensorSpec((), sh.spec(indices).dtype)
    return sh.convert(sh.clamp(sh.zeros(scalar), indices, sh.full(scalar, size - 1)), "i32")


def clamp_indices(indices: Value, size: int) -> Value:
    """NumPy negative indices normalized, then clamped into [0, size)."""
    return clamp_to(normalize_indices(indices, size), size)


def in_range(indices: Value, size: int) -> Value:
    s = sh.spec(indices)
    return sh.and_(sh.compare(indices, sh.zeros(s), "GE"), sh.compare(indices, sh.full(s, size), "LT"))


def take(x: Value, indices: Value, axis: int) -> Value:
    """x's slices at rank-1 `indices` along `axis` (indices clamp into range)."""
    sx, si = sh.spec(x), sh.spec(indices)
    if si.shape[0] == 0:
        return sh.zeros(sx.with_shape(0 if d == axis else n for d, n in enumerate(sx.shape)))
    column = sh.reshape(indices, (si.shape[0], 1))
    return sh.gather(x, column, offset_dims=[d for d in range(sx.rank) if d != axis], collapsed_slice_dims=[axis],
                     start_index_map=[axis], index_vector_dim=1,
                     slice_sizes=[1 if d == axis else n for d, n in enumerate(sx.shape)])


def scatter_along_axis(x: Value, indices: Value, updates: Value, axis: int, combiner: str) -> Value:
    """The StableHLO scatter of `updates` (x's shape, dim `axis` = K) at rank-1 `indices`."""
    sx, si = sh.spec(x), sh.spec(indices)
    column = sh.reshape(indices, (si.shape[0], 1))
    return sh.scatter(x, column, updates, update_window_dims=[d for d in range(sx.rank) if d != axis],
                      inserted_window_dims=[axis], scatter_dims_to_operand_dims=[axis], index_vector_dim=1,
                      combiner=combiner)


def full_indices(indices: Value, axis: int) -> Value:
    """Index tuples [..., rank] for take_along_axis: `indices` on `axis`, iota elsewhere."""
    si = sh.spec(indices)
    column = si.with_shape((*si.shape, 1))
    parts = [sh.reshape(indices, column.shape) if d == axis else sh.iota(column, d) for d in range(si.rank)]
    return sh.concatenate(parts, si.rank)


def take_along(x: Value, index_tuples: Value) -> Value:
    sx, st = sh.spec(x), sh.spec(index_tuples)
    if sx.size == 0 or st.size == 0:
        return sh.zeros(sx.with_shape(st.shape[:-1]))
    dims = list(range(sx.rank))
    return sh.gather(x, index_tuples, offset_dims=[], collapsed_slice_dims=dims, start_index_map=dims,
                     index_vector_dim=st.rank - 1, slice_sizes=[1] * sx.rank)


def scatter_along(x: Value, index_tuples: Value, updates: Value, combiner: str) -> Value:
    """Scatter of `updates` (the shape of the index tuples' batch) at full index tuples."""
    sx, st = sh.spec(x), sh.spec(index_tuples)
    if sx.size == 0 or st.size == 0:
        return x
    dims = list(range(sx.rank))
    return sh.scatter(x, index_tuples, updates, update_window_dims=[], inserted_window_dims=dims,
                      scatter_dims_to_operand_dims=dims, index_vector_dim=st.rank - 1, combiner=combiner)


def identity_element(combiner: str, dtype: str) -> float | int:
    """The value that leaves `combiner` unchanged."""
    if combiner == "add":
        return 0
    if combiner == "multiply":
        return 1
    if dtype in FLOAT_TYPES:
        lowest, highest = -np.inf, np.inf
    elif dtype == "i1":
        lowest, highest = 0, 1
    else:
        info = np.iinfo(numpy_dtype(dtype))
        lowest, highest = int(info.min), int(info.max)
    return highest if combiner == "min" else lowest


def scatter_winners(indices: Value, size: int) -> Value:
    """For each of `size` positions, the index k of the last update written there, else -1.

    Out-of-range indices write nothing. This makes "set" deterministic (the last duplicate
    wins, as NumPy's `x[idx] = u`) and tells the VJP which update reached the output.
    """
    si = sh.spec(indices)
    ids = sh.iota(si, 0)
    valid = in_range(indices, size)
    ids = sh.select(valid, ids, sh.full(si, -1))
    return scatter_along_axis(sh.full(TensorSpec((size,), si.dtype), -1), clamp_to(indices, size), ids, 0, "max")


def along_axis(v: Value, shape: Sequence[int], axis: int) -> Value:
    """Broadcasts a rank-1 `v` to `shape`, laid along `axis`."""
    return sh.broadcast_in_dim(v, shape, [axis])


# --------------------------------------------------------------------------- lowerings


@lowers(T.gather)
def _lower_gather(op: Op) -> Value:
    x, indices = op.operands
    axis = op["axis"]
    return take(x, clamp_indices(indices, op.specs[0].shape[axis]), axis)


@lowers(T.take_along_axis)
def _lower_take_along_axis(op: Op) -> Value:
    x, indices = op.operands
    axis = op["axis"]
    return take_along(x, full_indices(clamp_indices(indices, op.specs[0].shape[axis]), axis))


@lowers(T.scatter)
def _lower_scatter(op: Op) -> Value:
    x, indices, updates = op.operands
    sx, _, su = op.specs
    axis, mode = op["axis"], op["mode"]
    size, count = sx.shape[axis], su.shape[axis]
    if size == 0 or count == 0:
        return x  # nothing is written
    indices = normalize_indices(indices, size)
    if mode == "set":
        winners = scatter_winners(indices, size)
        si = sh.spec(winners)
        written = along_axis(sh.compare(winners, sh.zeros(si), "GE"), sx.shape, axis)
        return sh.select(written, take(updates, clamp_to(winners, count), axis), x)
    combiner = mode
    valid = along_axis(in_range(indices, size), su.shape, axis)
    updates = sh.select(valid, updates, sh.full(su, identity_element(combiner, su.dtype)))
    return scatter_along_axis(x, clamp_to(indices, size), updates, axis, combiner)


def _starts(op: Op, first: int) -> list[Value]:
    """Start indices of one element type (StableHLO requires it): i64 when mixed."""
    starts = op.operands[first:]
    dtypes = {s.dtype for s in op.specs[first:]}
    return starts if len(dtypes) == 1 else [sh.convert(s, "i64") for s in starts]


@lowers(T.dynamic_slice)
def _lower_dynamic_slice(op: Op) -> Value:
    return sh.dynamic_slice(op.operands[0], _starts(op, 1), op["sizes"])


@lowers(T.dynamic_update_slice)
def _lower_dynamic_update_slice(op: Op) -> Value:
    return sh.dynamic_update_slice(op.operands[0], op.operands[1], _starts(op, 2))



# --------------------------------------------------------------------------- VJP rules


@vjp(T.gather, adjoint='x̄ = scatter-add of ȳ at indices (duplicates add)')
def _gather(op: Op, ct: Value) -> Cotangents:
    x = op.specs[0]
    axis = op["axis"]
    indices = clamp_indices(op.operands[1], x.shape[axis])
    return scatter_along_axis(sh.zeros(x), indices, ct, axis, "add"), None


linear(T.gather)


@vjp(T.take_along_axis, adjoint='x̄ = scatter-add of ȳ at the indices')
def _take_along_axis(op: Op, ct: Value) -> Cotangents:
    x = op.specs[0]
    axis = op["axis"]
    tuples = full_indices(clamp_indices(op.operands[1], x.shape[axis]), axis)
    return scatter_along(sh.zeros(x), tuples, ct, "add"), None


linear(T.take_along_axis)


@vjp(T.scatter, adjoint="by mode: set routes ȳ to the last writer; add passes ȳ; multiply and min/max use the "
     "product or the ties (as JAX)")
def _scatter(op: Op, ct: Value) -> Cotangents:
    sx, si, su = op.specs
    axis, mode = op["axis"], op["mode"]
    size = sx.shape[axis]
    if size == 0 or si.shape[0] == 0:
        return ct, None, sh.zeros(su)  # nothing was written
    indices = normalize_indices(op.operands[1], size)
    valid = along_axis(in_range(indices, size), su.shape, axis)
    safe = clamp_to(indices, size)
    if mode == "multiply":
        return _scatter_multiply(op, ct, indices, safe, valid)
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


@vjp(T.dynamic_slice, sh.dynamic_slice, adjoint='x̄ = dynamic_update_slice(0, ȳ, starts)')
def _dynamic_slice(op: Op, ct: Value) -> Cotangents:
    starts = op.operands[1:]
    return (sh.dynamic_update_slice(sh.zeros(op.specs[0]), ct, _uniform(starts)), *[None] * len(starts))


linear(T.dynamic_slice, sh.dynamic_slice)


@vjp(T.dynamic_update_slice, sh.dynamic_update_slice, adjoint='x̄ = ȳ with the window zeroed; updatē = dynamic_slice(ȳ)')
def _dynamic_update_slice(op: Op, ct: Value) -> Cotangents:
    starts = _uniform(op.operands[2:])
    update = op.specs[1]
    dx = sh.dynamic_update_slice(ct, sh.zeros(update), starts)
    return (dx, sh.dynamic_slice(ct, starts, update.shape), *[None] * len(starts))


linear(T.dynamic_update_slice, sh.dynamic_update_slice)


def _uniform(starts: Sequence[Value]) -> list[Value]:
    dtypes = {sh.spec(s).dtype for s in starts}
    return list(starts) if len(dtypes) <= 1 else [sh.convert(s, "i64") for s in starts]



# --------------------------------------------------------------------------- StableHLO's general gather and scatter


def start_limits(shape: Sequence[int], window: Sequence[int]) -> list[int]:
    """The largest start of a `window` inside an operand of `shape`, per dim."""
    return [n - w for n, w in zip(shape, window, strict=True)]


def start_bounds(indices: Value, index_vector_dim: int, dims_map: Sequence[int], limits: Sequence[int]) -> Value:
    """A tensor of `indices`' shape holding, at each index component k, limits[dims_map[k]]."""
    si = sh.spec(indices)
    values = [limits[d] for d in dims_map]
    if index_vector_dim == si.rank:  # an implicit trailing index vector of one component
        return sh.full(si, values[0])
    along = sh.constant(np.array(values, dtype=numpy_dtype(si.dtype)), TensorSpec((len(values),), si.dtype))
    return sh.broadcast_in_dim(along, si.shape, [index_vector_dim])


def clamp_starts(indices: Value, index_vector_dim: int, dims_map: Sequence[int], limits: Sequence[int]) -> Value:
    """Start indices clamped, component k into [0, limits[dims_map[k]]], as a gather clamps them."""
    bounds = start_bounds(indices, index_vector_dim, dims_map, limits)
    return sh.clamp(sh.zeros(sh.spec(indices)), indices, bounds)


def starts_inside(indices: Value, index_vector_dim: int, dims_map: Sequence[int], limits: Sequence[int]) -> Value:
    """Whether each index vector's window lies inside the operand (a scatter drops those that
    do not): an i1 tensor of `indices`' shape without the index vector dim."""
    si = sh.spec(indices)
    bounds = start_bounds(indices, index_vector_dim, dims_map, limits)
    inside = sh.and_(sh.compare(indices, sh.zeros(si), "GE"), sh.compare(indices, bounds, "LE"))
    if index_vector_dim == si.rank:
        return inside
    return sh.reduce(inside, True, (index_vector_dim,), "and")


def _as_i32(indices: Value) -> Value:
    return indices if sh.spec(indices).dtype == "i32" else sh.convert(indices, "i32")


@vjp(sh.gather, adjoint="x̄ = scatter-add of ȳ at the start indices, clamped as the gather clamps them")
def _stablehlo_gather(op: Op, ct: Value) -> Cotangents:
    sx = op.specs[0]
    if sx.size == 0 or op.result.size == 0:
        return sh.zeros(sx), None
    dims: GatherDims = op["dimension_numbers"]
    indices = _as_i32(op.operands[1])
    starts = clamp_starts(indices, dims.index_vector_dim, dims.start_index_map,
                          start_limits(sx.shape, op["slice_sizes"]))
    return sh.scatter(sh.zeros(sx), starts, ct, update_window_dims=dims.offset_dims,
                      inserted_window_dims=dims.collapsed_slice_dims, input_batching_dims=dims.operand_batching_dims,
                      scatter_indices_batching_dims=dims.start_indices_batching_dims,
                      scatter_dims_to_operand_dims=dims.start_index_map, index_vector_dim=dims.index_vector_dim,
                      combiner="add"), None


linear(sh.gather)


@vjp(sh.scatter, adjoint="by its body: add passes x̄ = ȳ and ū = ȳ at each window that fit; set routes ȳ to "
     "the update that won (the last, found by scattering update ids) and x̄ = ȳ where nothing was written; "
     "multiply gives x̄ = ȳ·∏u and ū = ȳ·x·(the product of the others there), exact with zeros; max and min "
     "split ȳ evenly among the operand and the updates equal to the result (as JAX)")
def _stablehlo_scatter(op: Op, ct: Value) -> Cotangents:
    combiner = op["combiner"]
    if combiner not in ("add", "set", "multiply", "max", "min") or len(op.operands) != 3:
        raise TenzrError("'stablehlo.scatter' op has a gradient rule for one operand scattered by add, set, "
                         "multiply, max or min; this one has another body or several operands", op.location)
    sx, _, su = op.specs
    if sx.size == 0 or su.size == 0:
        return ct, None, sh.zeros(su)
    dims: ScatterDims = op["scatter_dimension_numbers"]
    x, indices, updates = op.operands[0], _as_i32(op.operands[1]), op.operands[2]
    window = iter(su.shape[d] for d in dims.update_window_dims)
    unit = {*dims.inserted_window_dims, *dims.input_batching_dims}
    sizes = [1 if d in unit else next(window) for d in range(sx.rank)]
    gather_dims = dict(offset_dims=dims.update_window_dims, collapsed_slice_dims=dims.inserted_window_dims,
                       operand_batching_dims=dims.input_batching_dims,
                       start_indices_batching_dims=dims.scatter_indices_batching_dims,
                       start_index_map=dims.scatter_dims_to_operand_dims, index_vector_dim=dims.index_vector_dim,
                       slice_sizes=sizes)

    def at_updates(v: Value) -> Value:  # v (of the operand's shape) at each update element's position
        return sh.gather(v, indices, **gather_dims)

    def scattered(into: Value, values: Value, how: str) -> Value:
        return sh.scatter(into, indices, values, **dims._asdict(), combiner=how)

    zero_u = sh.zeros(su)
    if combiner == "set":
        ids = sh.spec(indices).with_shape(su.shape)
        numbered = sh.add(sh.reshape(sh.iota(ids.with_shape((su.size,)), 0), su.shape), sh.full(ids, 1))
        written = scattered(sh.zeros(sx.with_dtype(ids.dtype)), numbered, "max")
        dx = sh.select(sh.compare(written, sh.zeros(sh.spec(written)), "EQ"), ct, sh.zeros(sx))
        won = sh.compare(at_updates(written), numbered, "EQ")
        return dx, None, sh.select(won, at_updates(ct), zero_u)
    inside = starts_inside(indices, dims.index_vector_dim, dims.scatter_dims_to_operand_dims,
                           start_limits(sx.shape, sizes))
    scatter_dims = [d for d in range(su.rank) if d not in dims.update_window_dims]
    inside = sh.broadcast_in_dim(inside, su.shape, scatter_dims)
    if combiner == "add":
        return ct, None, sh.select(inside, at_updates(ct), zero_u)
    if combiner == "multiply":
        one_u = sh.full(su, 1)
        is_zero = sh.compare(updates, zero_u, "EQ")
        nonzero = sh.select(is_zero, one_u, updates)
        dx = sh.multiply(ct, scattered(sh.full(sx, 1), sh.select(inside, updates, one_u), "multiply"))
        others = at_updates(scattered(sh.full(sx, 1), sh.select(inside, nonzero, one_u), "multiply"))
        zeros = at_updates(scattered(sh.zeros(sx), sh.convert(sh.and_(inside, is_zero), su.dtype), "add"))

        def when(count: int, value: Value) -> Value:
            return sh.select(sh.compare(zeros, sh.full(su, count), "EQ"), value, zero_u)

        rest = sh.select(is_zero, when(1, others), when(0, sh.divide(others, nonzero)))
        return dx, None, sh.select(inside, sh.multiply(at_updates(sh.multiply(ct, x)), rest), zero_u)
    # max / min
    won = sh.and_(inside, sh.compare(updates, at_updates(op.out), "EQ"))
    kept = sh.compare(x, op.out, "EQ")
    counts = sh.add(scattered(sh.zeros(sx), sh.convert(won, su.dtype), "add"), sh.convert(kept, sx.dtype))
    share = sh.divide(ct, counts)
    return sh.select(kept, share, sh.zeros(sx)), None, sh.select(won, at_updates(share), zero_u)
