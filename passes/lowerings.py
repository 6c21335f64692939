"""One lowering per tenzr op, keyed by op name: `LOWERINGS["tenzr.add"](op) -> values`.

Each rule receives the decoded op (`tenzr.dialect.opdef.Op`) whose operands are already
StableHLO values, and emits StableHLO through the `sh` emitter at the op's location.
NumPy broadcasting becomes explicit `broadcast_in_dim` here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.opdef import Op
from tenzr.dialect.types import FLOAT_TYPES, TensorSpec, numpy_dtype
from tenzr.passes import expansions
from tenzr.passes import stablehlo as sh
from tenzr.passes.custom_ops import CUSTOM_OPS

Lowering = Callable[[Op], "Value | Sequence[Value]"]


def broadcast_operands(op: Op) -> list[Value]:
    """The operands, each broadcast (NumPy rules) to the result shape."""
    return [sh.broadcast_to(v, op.result.shape) for v in op.operands]


def _elementwise(emit: Callable[..., Value]) -> Lowering:
    return lambda op: emit(*broadcast_operands(op))


def _compare(op: Op) -> Value:
    x, y = broadcast_operands(op)
    return sh.compare(x, y, op["direction"])


def _relu(op: Op) -> Value:
    (x,) = op.operands
    return sh.maximum(x, sh.zeros(op.result))


# --------------------------------------------------------------------------- matmul


def _matmul(op: Op) -> Value:
    a, b = op.operands
    sa, sb = op.specs
    batch = op.result.shape[:-2]
    if sb.rank == 2:
        # [..., M, K] @ [K, N]: one dot_general contracting K gives [..., M, N] directly.
        return sh.dot_general(a, b, ((), ()), ((sa.rank - 1,), (0,)))
    a = sh.broadcast_to(a, (*batch, *sa.shape[-2:]))
    b = sh.broadcast_to(b, (*batch, *sb.shape[-2:]))
    dims = tuple(range(len(batch)))
    return sh.dot_general(a, b, (dims, dims), ((len(batch) + 1,), (len(batch),)))


# --------------------------------------------------------------------------- convolution


def conv_options(op: Op) -> dict:
    return {
        "strides": op["window_strides"],
        "padding_low": op["padding_low"],
        "padding_high": op["padding_high"],
        "lhs_dilation": op["lhs_dilation"],
        "rhs_dilation": op["rhs_dilation"],
        "feature_group_count": op["feature_group_count"],
    }


def _convolution(op: Op) -> Value:
    x, w = op.operands
    return sh.convolution(x, w, sh.ConvLayout.channels_first(op.specs[0].rank - 2), **conv_options(op))


# --------------------------------------------------------------------------- indexing


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


def _gather(op: Op) -> Value:
    x, indices = op.operands
    axis = op["axis"]
    return take(x, clamp_indices(indices, op.specs[0].shape[axis]), axis)


def _take_along_axis(op: Op) -> Value:
    x, indices = op.operands
    axis = op["axis"]
    return take_along(x, full_indices(clamp_indices(indices, op.specs[0].shape[axis]), axis))


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


def _scatter(op: Op) -> Value:
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


def _dynamic_slice(op: Op) -> Value:
    return sh.dynamic_slice(op.operands[0], _starts(op, 1), op["sizes"])


def _dynamic_update_slice(op: Op) -> Value:
    return sh.dynamic_update_slice(op.operands[0], op.operands[1], _starts(op, 2))


# --------------------------------------------------------------------------- reductions


def reduce_axes(op: Op) -> tuple[int, ...]:
    return op["axes"] or tuple(range(op.specs[0].rank))


def _reduction(combiner: str) -> Lowering:
    def lower(op: Op) -> Value:
        (x,) = op.operands
        dtype = op.specs[0].dtype
        init = identity_element(combiner, dtype)
        return sh.reshape(sh.reduce(x, init, reduce_axes(op), combiner), op.result.shape)

    return lower


def _arg_extremum(direction: str) -> Lowering:
    def lower(op: Op) -> Value:
        (x,) = op.operands
        sx = op.specs[0]
        axis = op["axis"]
        out = op.result
        values_init = sh.constant(identity_element("max" if direction == "GT" else "min", sx.dtype),
                                  TensorSpec((), sx.dtype))
        index_init = sh.zeros(TensorSpec((), "i64"))
        ids = sh.iota(sx.with_dtype("i64"), axis)
        reduction = sh.create("stablehlo.reduce", [out.with_dtype(sx.dtype), out], [x, ids, values_init, index_init],
                              {"dimensions": ir.DenseI64ArrayAttr.get([axis])}, regions=1)
        scalar, index = sh.ir_type(TensorSpec((), sx.dtype)), sh.ir_type(TensorSpec((), "i64"))
        block = reduction.regions[0].blocks.append(scalar, index, scalar, index)
        with ir.InsertionPoint(block):
            a, ia, b, ib = block.arguments
            better = sh.compare(a, b, direction)
            tie = sh.and_(sh.compare(a, b, "EQ"), sh.compare(ia, ib, "LT"))
            take_a = sh.or_(better, tie)
            if sx.is_float:  # the first NaN wins, as in NumPy
                a_nan, b_nan = sh.compare(a, a, "NE"), sh.compare(b, b, "NE")
                take_a = sh.select(a_nan, sh.or_(sh.not_(b_nan), sh.compare(ia, ib, "LT")),
                                   sh.and_(take_a, sh.not_(b_nan)))
            ir.Operation.create("stablehlo.return", results=[], operands=[
                sh.select(take_a, a, b), sh.select(take_a, ia, ib)])
        return reduction.results[1]

    return lower


def _sort(op: Op) -> Value:
    return sh.sort([op.operands[0]], op["axis"], op["descending"])[0]


def _argsort(op: Op) -> Value:
    (x,) = op.operands
    ids = sh.iota(op.result, op["axis"])
    return sh.sort([x, ids], op["axis"], op["descending"], order_by=1)[1]


def _custom_call(op: Op) -> Sequence[Value]:
    target = op["call_target_name"]
    entry = CUSTOM_OPS.get(target)
    if entry is None:
        raise TenzrError(f"'tenzr.custom_call' op has no lowering registered for target '{target}' "
                         "(register it with tenzr.passes.custom_ops.register_custom_op)", op.location)
    out = entry.lower(op)
    return [out] if isinstance(out, ir.Value) else list(out)


LOWERINGS: dict[str, Lowering] = {
    "tenzr.constant": lambda op: sh.create("stablehlo.constant", [op.result], [], {"value": op["value"]}).result,
    "tenzr.add": _elementwise(sh.add),
    "tenzr.sub": _elementwise(sh.subtract),
    "tenzr.mul": _elementwise(sh.multiply),
    "tenzr.div": _elementwise(sh.divide),
    "tenzr.pow": _elementwise(expansions.power),
    "tenzr.maximum": _elementwise(sh.maximum),
    "tenzr.minimum": _elementwise(sh.minimum),
    "tenzr.compare": _compare,
    "tenzr.select": _elementwise(sh.select),
    "tenzr.neg": _elementwise(sh.negate),
    "tenzr.exp": _elementwise(sh.exponential),
    "tenzr.log": _elementwise(sh.log),
    "tenzr.sqrt": _elementwise(sh.sqrt),
    "tenzr.rsqrt": _elementwise(sh.rsqrt),
    "tenzr.tanh": _elementwise(expansions.tanh),
    "tenzr.sigmoid": _elementwise(sh.logistic),
    "tenzr.relu": _relu,
    "tenzr.sin": _elementwise(expansions.sine),
    "tenzr.cos": _elementwise(expansions.cosine),
    "tenzr.abs": _elementwise(sh.abs_),
    "tenzr.log1p": _elementwise(sh.log_plus_one),
    "tenzr.expm1": _elementwise(sh.exponential_minus_one),
    "tenzr.sign": _elementwise(sh.sign),
    "tenzr.floor": _elementwise(sh.floor),
    "tenzr.round": _elementwise(sh.round_nearest_even),
    "tenzr.stop_gradient": lambda op: op.operands[0],
    "tenzr.convert": lambda op: sh.convert(op.operands[0], op.result.dtype),
    "tenzr.matmul": _matmul,
    "tenzr.convolution": _convolution,
    "tenzr.reshape": lambda op: sh.reshape(op.operands[0], op.result.shape),
    "tenzr.transpose": lambda op: sh.transpose(op.operands[0], op["permutation"]),
    "tenzr.broadcast_to": lambda op: sh.broadcast_to(op.operands[0], op.result.shape),
    "tenzr.pad": lambda op: sh.pad(op.operands[0], op.operands[1], op["low"], op["high"], op["interior"]),
    "tenzr.slice": lambda op: sh.slice_(op.operands[0], op["start"], op["stop"], op["step"]),
    "tenzr.reverse": lambda op: sh.reverse(op.operands[0], op["dimensions"]),
    "tenzr.concatenate": lambda op: sh.concatenate(op.operands, op["axis"]),
    "tenzr.gather": _gather,
    "tenzr.take_along_axis": _take_along_axis,
    "tenzr.scatter": _scatter,
    "tenzr.dynamic_slice": _dynamic_slice,
    "tenzr.dynamic_update_slice": _dynamic_update_slice,
    "tenzr.reduce_sum": _reduction("add"),
    "tenzr.reduce_prod": _reduction("multiply"),
    "tenzr.reduce_max": _reduction("max"),
    "tenzr.reduce_min": _reduction("min"),
    "tenzr.argmax": _arg_extremum("GT"),
    "tenzr.argmin": _arg_extremum("LT"),
    "tenzr.sort": _sort,
    "tenzr.argsort": _argsort,
    "tenzr.iota": lambda op: sh.iota(op.result, op["dimension"]),
    "tenzr.custom_call": _custom_call,
}
