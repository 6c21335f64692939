"""Direct access to every tenzr op, for what NumPy has no name for.

`tz.lax.<op>(*operands, **attributes)` emits `tenzr.<op>` as written (no promotion). Ops
whose result type is chosen by the caller take `result_shape=` and `result_dtype=`.
The common ones have friendlier signatures below, and the ops JAX's lax names too (`pad`,
`slice`, `transpose`, `reshape`, `sort`, `reduce_sum`, ...) take JAX's. Loops and
conditionals (`fori_loop`, `scan`, `map`, `while_loop`, `cond`, `switch`) have JAX's (see
`tenzr.control`).
"""

from __future__ import annotations

import builtins
import enum
import functools
import itertools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from tenzr import numpy_api as tnp
from tenzr import numpy_lib as tlib
from tenzr import numpy_routines as troutines
from tenzr.control import cond, fori_loop, map, scan, switch, while_loop  # noqa: A004 (JAX's name)
from tenzr.core import Array, asarray, check_arguments, dtype_name, emit, promote, user_location
from tenzr.dialect import ops as T
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.opdef import OpDef
from tenzr.dialect.types import TensorSpec
from tenzr.neural import conv as _conv
from tenzr.neural import stop_gradient as _stop_gradient
from tenzr.pytree import flatten, unflatten


def _op(opdef: OpDef):
    def fn(*operands: Any, result_shape: Sequence[int] | None = None, result_dtype: Any = None,
           **attributes: Any) -> Array:
        xs = [asarray(o) for o in operands]
        result = None
        if opdef.given_result:
            base = xs[0].spec if xs else TensorSpec((), "f32")
            result = TensorSpec(tuple(result_shape) if result_shape is not None else base.shape,
                                dtype_name(result_dtype) if result_dtype is not None else base.dtype)
        return emit(opdef, *xs, result=result, **attributes)

    fn.__name__ = opdef.mnemonic
    fn.__doc__ = f"`{opdef.name}`: {opdef.summary}"
    return fn


for _name, _opdef in T.OPS.items():
    if not (_opdef.regions or _opdef.terminator):  # (control flow: below)
        globals()[_opdef.mnemonic] = _op(_opdef)
stop_gradient = _stop_gradient  # (of pytrees too, as JAX's)


class ScatterDimensionNumbers(NamedTuple):
    """JAX's: which dims of `updates` are window dims, which operand dims the windows skip
    (size 1), which operand dim each entry of an index vector (the last dim of
    scatter_indices) starts, and the batching dims paired between operand and indices."""

    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


class GatherScatterMode(enum.Enum):
    """JAX's out-of-bounds modes: CLIP clamps each window into the operand; FILL_OR_DROP
    (the default) and PROMISE_IN_BOUNDS drop a window that does not fit."""

    CLIP = 0
    FILL_OR_DROP = 1
    PROMISE_IN_BOUNDS = 2


def scatter(operand: Any, scatter_indices: Any, updates: Any, dimension_numbers: Any, *,
            indices_are_sorted: bool = False, unique_indices: bool = False, mode: Any = None) -> Array:
    """JAX's `lax.scatter`: operand with the update windows written at scatter_indices, the
    last write winning where windows overlap. (Along one axis, `x.at[indices].set(updates)`
    is simpler.)"""
    return _scatter("set", operand, scatter_indices, updates, dimension_numbers, mode)


def _scatter_family(name: str, how: str, doc: str) -> Callable[..., Array]:
    def fn(operand: Any, scatter_indices: Any, updates: Any, dimension_numbers: Any, *,
           indices_are_sorted: bool = False, unique_indices: bool = False, mode: Any = None) -> Array:
        if how == "subtract":
            return _scatter("add", operand, scatter_indices, -asarray(updates), dimension_numbers, mode, name)
        return _scatter(how, operand, scatter_indices, updates, dimension_numbers, mode, name)

    fn.__name__, fn.__qualname__ = name, name
    fn.__doc__ = f"JAX's `lax.{name}`: operand with {doc} at the windows scatter_indices pick (see `scatter`)."
    return fn


scatter_add = _scatter_family("scatter_add", "add", "updates added (summed where windows overlap)")
scatter_sub = _scatter_family("scatter_sub", "subtract", "updates subtracted")
scatter_mul = _scatter_family("scatter_mul", "multiply", "entries multiplied by updates")
scatter_min = _scatter_family("scatter_min", "min", "the smaller of each entry and its updates")
scatter_max = _scatter_family("scatter_max", "max", "the larger of each entry and its updates")


def _scatter(how: str, operand: Any, scatter_indices: Any, updates: Any, dimension_numbers: Any, mode: Any,
             name: str = "scatter") -> Array:
    """A JAX scatter as `tenzr.scatter` into the flattened operand: each update element goes
    to the flat position of its window start plus its offset in the window, or nowhere
    (past the end) when its window does not fit (JAX's FILL_OR_DROP; CLIP moves the window
    inside instead)."""
    x, idx, upd = asarray(operand), asarray(scatter_indices), asarray(updates)
    if upd.dtype != x.dtype:
        if not upd.weak:
            raise TenzrError(f"lax.{name}: updates have dtype {upd.dtype}, the operand {x.dtype}; they must match",
                             user_location())
        upd = upd.astype(x.dtype)
    if not np.issubdtype(idx.dtype, np.integer):
        raise TenzrError(f"lax.{name}: scatter_indices must be integers, got {idx.dtype}", user_location())
    clip = _scatter_mode(mode, name) is GatherScatterMode.CLIP
    if not isinstance(dimension_numbers, ScatterDimensionNumbers):
        raise TenzrError(f"lax.{name}: dimension_numbers must be a tz.lax.ScatterDimensionNumbers, as JAX's, got "
                         f"{dimension_numbers!r} (to combine slices along one axis: x.at[indices].set(updates), "
                         ".add, .multiply, .min or .max)", user_location())
    dn = dimension_numbers
    try:
        window_dims, inserted, to_operand, op_batch, idx_batch = (tuple(int(d) for d in dims) for dims in dn)
    except (TypeError, ValueError):
        raise TenzrError(f"lax.{name}: the fields of dimension_numbers must be sequences of ints, got {dn!r}",
                         user_location()) from None
    if idx.ndim == 0:
        idx = tnp.reshape(idx, (1,))
    scatter_dims = [d for d in range(upd.ndim) if d not in window_dims]
    window_operand_dims = [d for d in range(x.ndim) if d not in inserted and d not in op_batch]
    broken = _scatter_contract(x, idx, upd, window_dims, inserted, to_operand, op_batch, idx_batch, scatter_dims,
                               window_operand_dims)
    if broken:
        raise TenzrError(f"lax.{name}: dimension_numbers {tuple(dn)} do not fit operand {x.shape}, scatter_indices "
                         f"{idx.shape} and updates {upd.shape}: {broken}", user_location())
    sizes = [1] * x.ndim
    for d, u in zip(window_operand_dims, window_dims, strict=True):
        sizes[d] = upd.shape[u]
    index_dtype = np.int32 if x.size < 2**31 else np.int64
    batch_shape = [1] * upd.ndim  # (the scatter dims of updates carry the index vectors' dims)
    for d, n in zip(scatter_dims, idx.shape[:-1], strict=True):
        batch_shape[d] = n
    fits: Array | None = None
    position: Any = 0
    stride = 1
    for d in reversed(range(x.ndim)):
        if d in to_operand:
            start = idx[..., to_operand.index(d)].astype(index_dtype)
        elif d in op_batch:
            start = broadcasted_iota(index_dtype, idx.shape[:-1], idx_batch[op_batch.index(d)])
        else:
            start = tnp.zeros(idx.shape[:-1], index_dtype)
        if clip:
            start = tnp.clip(start, 0, x.shape[d] - sizes[d])
        else:
            inside = (start >= 0) & (start <= x.shape[d] - sizes[d])
            fits = inside if fits is None else fits & inside
        index = tnp.reshape(start, tuple(batch_shape))
        if d in window_operand_dims:
            index = index + broadcasted_iota(index_dtype, upd.shape, window_dims[window_operand_dims.index(d)])
        position = position + index * stride
        stride *= x.shape[d]
    position = tnp.broadcast_to(asarray(position).astype(index_dtype), upd.shape)
    if fits is not None:
        position = tnp.where(tnp.reshape(fits, tuple(batch_shape)), position, x.size)
    flat = emit(T.scatter, tnp.reshape(x, (x.size,)), tnp.reshape(position, (upd.size,)),
                tnp.reshape(upd, (upd.size,)), axis=0, mode=how)
    return tnp.reshape(flat, x.shape)


def _scatter_mode(mode: Any, name: str) -> GatherScatterMode:
    """JAX's GatherScatterMode.from_any: None, a mode (JAX's enum or tenzr's) or its string."""
    key = getattr(mode, "name", mode)
    modes = {None: GatherScatterMode.FILL_OR_DROP, "clip": GatherScatterMode.CLIP,
             "fill": GatherScatterMode.FILL_OR_DROP, "drop": GatherScatterMode.FILL_OR_DROP,
             "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS}
    found = modes.get(key.lower() if isinstance(key, str) else key) or \
        next((m for m in GatherScatterMode if m.name == key), None)
    if found is None:
        raise TenzrError(f"lax.{name}: mode must be 'clip', 'fill', 'drop', 'promise_in_bounds' or a "
                         f"GatherScatterMode, got {mode!r}", user_location())
    return found


def _scatter_contract(x: Array, idx: Array, upd: Array, window_dims: tuple[int, ...], inserted: tuple[int, ...],
                      to_operand: tuple[int, ...], op_batch: tuple[int, ...], idx_batch: tuple[int, ...],
                      scatter_dims: list[int], window_operand_dims: list[int]) -> str:
    """Which of XLA's scatter rules the dimension numbers break ("" when none)."""
    if list(window_dims) != sorted(set(window_dims)) or builtins.any(not 0 <= d < upd.ndim for d in window_dims):
        return "update_window_dims must be increasing dims of updates"
    if builtins.any(not 0 <= d < x.ndim for d in (*inserted, *to_operand, *op_batch)) or \
            len(set(inserted) | set(op_batch)) != len(inserted) + len(op_batch):
        return "inserted_window_dims and operand_batching_dims must be distinct dims of the operand"
    if len(window_dims) + len(inserted) + len(op_batch) != x.ndim:
        return "len(update_window_dims) + len(inserted_window_dims) + len(operand_batching_dims) must be its rank"
    if idx.shape[-1] != len(to_operand) or len(set(to_operand)) != len(to_operand) or set(to_operand) & set(op_batch):
        return ("the last dim of scatter_indices must have len(scatter_dims_to_operand_dims) entries, "
                "each a distinct non-batching operand dim")
    if len(op_batch) != len(idx_batch) or builtins.any(not 0 <= d < idx.ndim - 1 for d in idx_batch):
        return "operand_batching_dims and scatter_indices_batching_dims must pair up (index dims before the last)"
    if [upd.shape[d] for d in scatter_dims] != list(idx.shape[:-1]):
        return "updates' scatter dims must have scatter_indices' shape without its last dim"
    if builtins.any(upd.shape[u] > x.shape[d] for d, u in zip(window_operand_dims, window_dims, strict=True)):
        return "a window is larger than the operand"
    if builtins.any(idx.shape[i] != x.shape[d] for d, i in zip(op_batch, idx_batch, strict=True)):
        return "paired batching dims must have the same size"
    return ""


def dynamic_slice(x: Any, starts: Sequence[Any], sizes: Sequence[int]) -> Array:
    """x[starts : starts + sizes] with runtime starts, as JAX's: a negative start counts from
    the end, and starts are clamped so the slice stays inside."""
    x = asarray(x)
    return emit(T.dynamic_slice, x, *_starts(starts, x.shape, "dynamic_slice"), sizes=sizes)


def dynamic_update_slice(x: Any, update: Any, starts: Sequence[Any]) -> Array:
    """x with `update` written at runtime `starts` (negative ones count from the end; clamped
    so it fits), as JAX's."""
    x, update = promote(x, update)
    return emit(T.dynamic_update_slice, x, update, *_starts(starts, x.shape, "dynamic_update_slice"))


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int = 1, axis: int = 0) -> Array:
    """`dynamic_slice` along one axis (JAX's)."""
    x = asarray(operand)
    axis = _axis(axis, x.ndim)
    sizes = list(x.shape)
    sizes[axis] = slice_size
    return dynamic_slice(x, _at_axis(start_index, axis, x.ndim), sizes)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True) -> Array:
    """The slice at runtime `index` of `axis`, that dim kept (size 1) or dropped (JAX's)."""
    x = asarray(operand)
    axis = _axis(axis, x.ndim)
    out = dynamic_slice_in_dim(x, index, 1, axis)
    return out if keepdims else tnp.squeeze(out, axis)


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int) -> Array:
    """`dynamic_update_slice` along one axis (JAX's)."""
    x = asarray(operand)
    return dynamic_update_slice(x, update, _at_axis(start_index, _axis(axis, x.ndim), x.ndim))


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int) -> Array:
    """x with `update` written at runtime `index` of `axis` (`update` with or without that
    dim, as JAX's)."""
    x, update = asarray(operand), asarray(update)
    axis = _axis(axis, x.ndim)
    if update.ndim == x.ndim - 1:
        update = tnp.expand_dims(update, axis)
    return dynamic_update_slice_in_dim(x, update, index, axis)


def _at_axis(index: Any, axis: int, ndim: int) -> list[Any]:
    """Start indices of `ndim` dims: `index` in `axis`, 0 elsewhere."""
    starts: list[Any] = [0] * ndim
    starts[axis] = index
    return starts


def _axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise TenzrError(f"axis {axis} is out of range for an array of rank {ndim}", user_location())
    return axis % ndim


def custom_call(target: str, *operands: Any, result_shape: Sequence[int] | None = None, result_dtype: Any = None,
                **attributes: Any) -> Array:
    """`tenzr.custom_call` of a target registered with `tz.register_custom_op`."""
    xs = [asarray(o) for o in operands]
    base = xs[0].spec
    result = TensorSpec(tuple(result_shape) if result_shape is not None else base.shape,
                        dtype_name(result_dtype) if result_dtype is not None else base.dtype)
    return emit(T.custom_call, *xs, result=result, call_target_name=target, **attributes)


def bitcast_convert_type(x: Any, new_dtype: Any) -> Array:
    """x's bits reinterpreted as `new_dtype` (of the same bit width), as JAX's."""
    x = asarray(x)
    return emit(T.bitcast_convert, x, result=x.spec.with_dtype(dtype_name(new_dtype)))


def _starts(starts: Sequence[Any], shape: tuple[int, ...], what: str) -> list[Array]:
    if len(starts) != len(shape):
        raise TenzrError(f"{what}: {len(starts)} start indices for an array of rank {len(shape)}", user_location())
    return [_index(s, n) for s, n in zip(starts, shape, strict=True)]


def _index(start: Any, size: int) -> Array:
    """A start index as a 0-d array, a negative one counted from the end of a dim of `size`."""
    if isinstance(start, (int, np.integer)):
        return asarray(start + size if start < 0 else start)
    s = asarray(start)
    s = s if s.ndim == 0 else s.reshape(())
    return tnp.where(s < 0, s + size, s)


max = globals()["maximum"]  # noqa: A001 (JAX's lax names for the generated ops)
min = globals()["minimum"]  # noqa: A001


class Precision(enum.Enum):
    """JAX's precision names for products. Tenzr accepts them and always multiplies at the
    operands' own precision (JAX's HIGHEST)."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2


def dot(lhs: Any, rhs: Any, precision: Any = None, preferred_element_type: Any = None) -> Array:
    """Vector/matrix products of 1-D and 2-D operands, as JAX's `lax.dot`."""
    lhs, rhs = asarray(lhs), asarray(rhs)
    if not (1 <= lhs.ndim <= 2 and 1 <= rhs.ndim <= 2 and lhs.shape[-1] == rhs.shape[0]):
        raise TenzrError(f"lax.dot: incompatible shapes {lhs.shape} and {rhs.shape} (1-D or 2-D operands, "
                         "lhs's last dim against rhs's first)", user_location())
    return tnp.dot(lhs, rhs, preferred_element_type=preferred_element_type)


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None) -> Array:
    """JAX's `lax.dot_general`: `dimension_numbers` = ((lhs_contracting, rhs_contracting),
    (lhs_batch, rhs_batch)); the result is batch dims, then lhs's free dims, then rhs's."""
    lhs, rhs = asarray(lhs), asarray(rhs)
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        lc, rc, lb, rb = ([int(d) for d in ds] for ds in (lc, rc, lb, rb))
    except (TypeError, ValueError):
        raise TenzrError("lax.dot_general: dimension_numbers must be ((lhs_contracting, rhs_contracting), "
                         f"(lhs_batch, rhs_batch)), got {dimension_numbers!r}", user_location()) from None
    if len(lc) != len(rc) or len(lb) != len(rb) or any(
            not (0 <= d < x.ndim) for ds, x in ((lc, lhs), (lb, lhs), (rc, rhs), (rb, rhs)) for d in ds):
        raise TenzrError(f"lax.dot_general: dimension_numbers {dimension_numbers!r} do not fit operands of "
                         f"shapes {lhs.shape} and {rhs.shape}", user_location())
    for a, b in itertools.chain(zip(lc, rc, strict=True), zip(lb, rb, strict=True)):
        if lhs.shape[a] != rhs.shape[b]:
            raise TenzrError(f"lax.dot_general: lhs dim {a} (size {lhs.shape[a]}) is paired with rhs dim {b} "
                             f"(size {rhs.shape[b]})", user_location())
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    left = [next(letters) for _ in range(lhs.ndim)]
    right = [next(letters) for _ in range(rhs.ndim)]
    for a, b in itertools.chain(zip(lc, rc, strict=True), zip(lb, rb, strict=True)):
        right[b] = left[a]
    batch = "".join(left[a] for a in lb)
    free_l = "".join(c for d, c in enumerate(left) if d not in lc and d not in lb)
    free_r = "".join(c for d, c in enumerate(right) if d not in rc and d not in rb)
    return tnp.einsum(f"{''.join(left)},{''.join(right)}->{batch}{free_l}{free_r}", lhs, rhs,
                      preferred_element_type=preferred_element_type)


class ConvDimensionNumbers(NamedTuple):
    """Where each operand keeps its dims, as JAX's: each spec is (batch or output-feature
    dim, feature or input-feature dim, spatial dims...)."""

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                         lhs_dilation: Sequence[int] | None = None, rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1, batch_group_count: int = 1,
                         precision: Any = None, preferred_element_type: Any = None) -> Array:
    """JAX's `lax.conv_general_dilated`. `padding` is "SAME", "SAME_LOWER", "VALID" or
    (low, high) pairs; `dimension_numbers` None (NCHW, OIHW, NCHW), layout strings such as
    ("NHWC", "HWIO", "NHWC"), or a ConvDimensionNumbers."""
    lhs, rhs = promote(lhs, rhs)
    if lhs.ndim != rhs.ndim or lhs.ndim < 3:
        raise TenzrError(f"lax.conv_general_dilated: operands of rank {lhs.ndim} and {rhs.ndim}; both need the "
                         "same rank, at least 3", user_location())
    if batch_group_count != 1:
        raise TenzrError("lax.conv_general_dilated: batch_group_count other than 1 is not supported",
                         user_location())
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    x = tnp.transpose(lhs, dn.lhs_spec)  # [N, C, spatial...]
    w = tnp.transpose(rhs, dn.rhs_spec)  # [O, I, spatial...]
    n = lhs.ndim - 2
    rhs_dilation = tuple(rhs_dilation or (1,) * n)
    if isinstance(padding, str):
        if lhs_dilation is not None and builtins.any(d != 1 for d in lhs_dilation):
            raise TenzrError("lax.conv_general_dilated: string padding with lhs_dilation (a transposed "
                             "convolution) is ambiguous; give (low, high) pairs or use tz.lax.conv_transpose",
                             user_location())
        window = [(k - 1) * r + 1 for k, r in zip(w.shape[2:], rhs_dilation, strict=True)]
        padding = padtype_to_pads(x.shape[2:], window, window_strides, padding)
    out = _conv(x, w, stride=tuple(window_strides), padding=[tuple(p) for p in padding], dilation=rhs_dilation,
                groups=feature_group_count, lhs_dilation=tuple(lhs_dilation or (1,) * n))
    out = tnp.transpose(out, [int(d) for d in np.argsort(dn.out_spec)])
    return out if preferred_element_type is None else out.astype(preferred_element_type)


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any, precision: Any = None,
         preferred_element_type: Any = None) -> Array:
    """JAX's `lax.conv`: NCHW input, OIHW kernel, no dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                              lhs_dilation: Sequence[int] | None, rhs_dilation: Sequence[int] | None,
                              precision: Any = None, preferred_element_type: Any = None) -> Array:
    """JAX's `lax.conv_with_general_padding`: NCHW/OIHW with dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision, preferred_element_type=preferred_element_type)


def conv_transpose(lhs: Any, rhs: Any, strides: Sequence[int], padding: Any,
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None, preferred_element_type: Any = None) -> Array:
    """JAX's `lax.conv_transpose`: the gradient-of-convolution layout (a convolution of
    the input dilated by `strides`). Default layouts are NHC/HIO, NHWC/HWIO, NHWDC/HWDIO."""
    lhs, rhs = promote(lhs, rhs)
    n = lhs.ndim - 2
    if dimension_numbers is None:
        defaults = {1: ("NHC", "HIO", "NHC"), 2: ("NHWC", "HWIO", "NHWC"), 3: ("NHWDC", "HWDIO", "NHWDC")}
        if n not in defaults:
            raise TenzrError(f"lax.conv_transpose: no default layout for rank {lhs.ndim}; pass dimension_numbers",
                             user_location())
        dimension_numbers = defaults[n]
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    rhs_dilation = tuple(rhs_dilation or (1,) * n)
    kernel = [(rhs.shape[d] - 1) * r + 1 for d, r in zip(dn.rhs_spec[2:], rhs_dilation, strict=True)]
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "VALID"):
            raise TenzrError(f"lax.conv_transpose: padding '{padding}' is not 'SAME', 'VALID' or pairs",
                             user_location())
        pads = [_transpose_padding(k, s, padding.upper()) for k, s in zip(kernel, strides, strict=True)]
    else:
        pads = [tuple(p) for p in padding]
    if transpose_kernel:
        rhs = tnp.swapaxes(tnp.flip(rhs, dn.rhs_spec[2:]), dn.rhs_spec[0], dn.rhs_spec[1])
    return conv_general_dilated(lhs, rhs, (1,) * n, pads, tuple(strides), rhs_dilation, dn,
                                preferred_element_type=preferred_element_type)


def _transpose_padding(k: int, s: int, padding: str) -> tuple[int, int]:
    """(low, high) padding of the dilated input that makes conv_transpose the transpose of
    a forward convolution with kernel size k, stride s and that padding (JAX's rule)."""
    if padding == "SAME":
        total = k + s - 2
        low = k - 1 if s > k - 1 else -(-total // 2)
    else:
        total = k + s - 2 + builtins.max(k - s, 0)
        low = k - 1
    return low, total - low


_REDUCERS: dict[Any, Callable[[Array, Array], Array]] = {}


def reduce_window(operand: Any, init_value: Any, computation: Callable[[Any, Any], Any],
                  window_dimensions: Sequence[int], window_strides: Sequence[int], padding: Any,
                  base_dilation: Sequence[int] | None = None, window_dilation: Sequence[int] | None = None) -> Array:
    """JAX's `lax.reduce_window` for the reductions pooling uses: `computation` is
    `tz.lax.add`, `mul`, `max` or `min` (or their jnp/tz names). Each window position is a
    strided slice of the padded operand, combined with `computation`; `padding` is
    "SAME", "VALID" or (low, high) pairs, padded with `init_value`."""
    x = asarray(operand)
    reducer = _REDUCERS.get(computation)
    if reducer is None:
        raise TenzrError("lax.reduce_window: computation must be tz.lax.add, mul, max or min (or tz.add, "
                         f"tz.multiply, tz.maximum, tz.minimum), got {computation!r}", user_location())
    dims, strides = tuple(window_dimensions), tuple(window_strides)
    if not (len(dims) == len(strides) == x.ndim):
        raise TenzrError(f"lax.reduce_window: window_dimensions {dims} and window_strides {strides} need one "
                         f"entry per dim of the operand (rank {x.ndim})", user_location())
    if base_dilation is not None and builtins.any(d != 1 for d in base_dilation):
        raise TenzrError("lax.reduce_window: base_dilation other than 1 is not supported", user_location())
    wdil = tuple(window_dilation or (1,) * x.ndim)
    window = [(k - 1) * r + 1 for k, r in zip(dims, wdil, strict=True)]
    pads = padtype_to_pads(x.shape, window, strides, padding) if isinstance(padding, str) else \
        [tuple(int(v) for v in p) for p in padding]
    init = tnp.asarray(init_value, x.dtype) if not isinstance(init_value, Array) else init_value.astype(x.dtype)
    if builtins.any(lo or hi for lo, hi in pads):
        x = tnp.pad(x, pads, constant_values=init)
    out_shape = [(n - w) // s + 1 for n, w, s in zip(x.shape, window, strides, strict=True)]
    pieces = [x[tuple(builtins.slice(o, o + (m - 1) * s + 1, s)
                      for o, m, s in zip(offsets, out_shape, strides, strict=True))]
              for offsets in itertools.product(*(range(0, w, r) for w, r in zip(window, wdil, strict=True)))]
    return functools.reduce(reducer, pieces)


# --------------------------------------------------------------------------- JAX's lax conveniences
# (each as jax.lax names and orders its arguments, built from the NumPy functions)


def clamp(min: Any, x: Any, max: Any) -> Array:  # noqa: A002 (JAX's argument names)
    """x limited to [min, max] elementwise."""
    return tnp.clip(x, min, max)


def square(x: Any) -> Array:
    """x * x."""
    x = asarray(x)
    return x * x


def integer_pow(x: Any, y: int) -> Array:
    """x ** y for a Python int y."""
    if not isinstance(y, (int, np.integer)) or isinstance(y, bool):
        raise TenzrError(f"integer_pow: y must be a Python int, got {y!r}", user_location())
    return tnp.power(asarray(x), int(y))


def rem(x: Any, y: Any) -> Array:
    """The remainder of x / y with the sign of x (C's; `tz.remainder` has y's)."""
    return tnp.fmod(x, y)


def cbrt(x: Any) -> Array:
    return troutines.cbrt(x)


def exp2(x: Any) -> Array:
    return tnp.exp2(x)


def logistic(x: Any) -> Array:
    """1 / (1 + exp(-x))."""
    return emit(T.sigmoid, tnp.asarray(x))


def erfc(x: Any) -> Array:
    """1 - erf(x)."""
    from tenzr.scipy.special import erfc as erfc_  # (scipy.special imports this module)

    return erfc_(x)


def is_finite(x: Any) -> Array:
    return tnp.isfinite(x)


def conj(x: Any) -> Array:
    return tlib.conj(x)


def expand_dims(array: Any, dimensions: Sequence[int]) -> Array:
    return tnp.expand_dims(array, tuple(dimensions))


def squeeze(array: Any, dimensions: Sequence[int]) -> Array:
    return tnp.squeeze(array, tuple(dimensions))


def broadcast_in_dim(operand: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int]) -> Array:
    """operand's dim i placed at dim broadcast_dimensions[i] of `shape`, broadcast there."""
    x = asarray(operand)
    dims = tuple(broadcast_dimensions)
    if len(dims) != x.ndim or builtins.any(not 0 <= d < len(shape) for d in dims) or list(dims) != sorted(set(dims)):
        raise TenzrError(f"broadcast_in_dim: broadcast_dimensions {dims} must be {x.ndim} increasing dims of the "
                         f"result shape {tuple(shape)}", user_location())
    expanded = [1] * len(shape)
    for d, n in zip(dims, x.shape, strict=True):
        expanded[d] = n
    return tnp.broadcast_to(tnp.reshape(x, tuple(expanded)), tuple(shape))


def broadcast(operand: Any, sizes: Sequence[int]) -> Array:
    """operand broadcast with new leading dims of `sizes`."""
    x = asarray(operand)
    return tnp.broadcast_to(x, (*sizes, *x.shape))


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Array:
    return tnp.full(tuple(shape), fill_value, dtype)


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Sequence[int] | None = None) -> Array:
    x = asarray(x)
    return tnp.full(x.shape if shape is None else tuple(shape), fill_value, x.dtype if dtype is None else dtype)


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Array:
    """operand with dims [start_dimension, stop_dimension) merged into one."""
    x = asarray(operand)
    stop = x.ndim if stop_dimension is None else stop_dimension % (x.ndim + 1)
    start = start_dimension % (x.ndim + 1)
    return tnp.reshape(x, (*x.shape[:start], -1, *x.shape[stop:]))


def _along(x: Array, start: int | None, stop: int | None, stride: int, axis: int) -> Array:
    index = [builtins.slice(None)] * x.ndim
    index[axis] = builtins.slice(start, stop, stride)
    return x[tuple(index)]


def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None, stride: int = 1,
                 axis: int = 0) -> Array:
    """operand[start_index:limit_index:stride] along `axis`."""
    x = asarray(operand)
    return _along(x, start_index, limit_index, stride, _axis(axis, x.ndim))


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Array:
    """The slice at `index` of `axis`, that dim kept (size 1) or dropped."""
    x = asarray(operand)
    axis = _axis(axis, x.ndim)
    index = index + x.shape[axis] if index < 0 else index
    out = _along(x, index, index + 1, 1, axis)
    return out if keepdims else tnp.squeeze(out, axis)


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Array:
    """Matrix products over matching leading (batch) dims."""
    del precision
    return tnp.matmul(lhs, rhs)


def select_n(which: Any, *cases: Any) -> Array:
    """cases[which] elementwise: `which` boolean (two cases) or integer (out of range:
    undefined in JAX, the last case here)."""
    if not cases:
        raise TenzrError("select_n: needs at least one case", user_location())
    which = asarray(which)
    if which.spec.dtype == "i1":
        if len(cases) != 2:
            raise TenzrError(f"select_n: a boolean which selects between 2 cases, got {len(cases)}", user_location())
        return tnp.where(which, cases[1], cases[0])
    out = asarray(cases[-1])
    for i in reversed(range(len(cases) - 1)):
        out = tnp.where(which == i, cases[i], out)
    return out


def top_k(operand: Any, k: int, *, axis: int = -1) -> tuple[Array, Array]:
    """The k largest entries along `axis`, largest first, and their int32 indices (the lower
    index first among equals), as JAX's."""
    x = asarray(operand)
    (axis,) = tnp._axes(axis, x.ndim)
    if not 0 <= k <= x.shape[axis]:
        raise TenzrError(f"top_k: k={k} is outside [0, {x.shape[axis]}]", user_location())
    moved = tnp.moveaxis(x, axis, -1)
    order = tnp.argsort(-moved if x.is_float else ~moved, axis=-1)[..., :k].astype(np.int32)
    values = tnp.take_along_axis(moved, order, -1, mode="promise_in_bounds")
    return tnp.moveaxis(values, -1, axis), tnp.moveaxis(order, -1, axis)


def sort_key_val(keys: Any, values: Any, dimension: int = -1) -> tuple[Array, Array]:
    """keys sorted along `dimension` (stably), and values permuted alike."""
    return sort((keys, values), dimension)


# JAX's signatures for the ops that the loop above emits as written (tenzr's operands and
# attributes): what JAX code calls them with.


def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Array:
    """operand padded with padding_value: (low, high, interior) per dim, negative low or
    high cropping."""
    x = asarray(operand)
    config = [tuple(c) for c in padding_config]
    if len(config) != x.ndim or builtins.any(len(c) != 3 for c in config):
        raise TenzrError(f"pad: padding_config needs one (low, high, interior) per dim of the {x.ndim}-d operand, "
                         f"got {padding_config}", user_location())
    value = tnp.asarray(padding_value, x.dtype)
    return emit(T.pad, x, value, low=[c[0] for c in config], high=[c[1] for c in config],
                interior=[c[2] for c in config])


def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],  # noqa: A001 (JAX's name)
          strides: Sequence[int] | None = None) -> Array:
    """operand[start:limit:stride] in every dim."""
    x = asarray(operand)
    steps = [1] * x.ndim if strides is None else list(strides)
    return x[tuple(builtins.slice(a, b, c) for a, b, c in zip(start_indices, limit_indices, steps, strict=True))]


def transpose(operand: Any, permutation: Sequence[int]) -> Array:
    return tnp.transpose(operand, tuple(permutation))


def concatenate(operands: Sequence[Any], dimension: int) -> Array:
    return tnp.concatenate(list(operands), dimension)


def reshape(operand: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None) -> Array:
    """operand, transposed by `dimensions` first if given, with shape new_sizes."""
    x = asarray(operand)
    if dimensions is not None:
        x = tnp.transpose(x, tuple(dimensions))
    return tnp.reshape(x, tuple(new_sizes))


def rev(operand: Any, dimensions: Sequence[int]) -> Array:
    return tnp.flip(operand, tuple(dimensions))


def convert_element_type(operand: Any, new_dtype: Any) -> Array:
    return tnp.asarray(operand).astype(new_dtype)


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Array:
    """operand rounded to the nearest float with that many exponent and mantissa bits (ties
    to even, overflow to infinity), in operand's type."""
    return emit(T.reduce_precision, asarray(operand), exponent_bits=int(exponent_bits),
                mantissa_bits=int(mantissa_bits))


def iota(dtype: Any, size: int) -> Array:
    return tnp.arange(size, dtype=dtype)


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Array:
    shape = tuple(shape)
    return broadcast_in_dim(iota(dtype, shape[dimension]), shape, (dimension,))


def reduce_sum(operand: Any, axes: Sequence[int]) -> Array:
    return tnp.sum(operand, tuple(axes))


def reduce_max(operand: Any, axes: Sequence[int]) -> Array:
    return tnp.max(operand, tuple(axes))


def reduce_min(operand: Any, axes: Sequence[int]) -> Array:
    return tnp.min(operand, tuple(axes))


def reduce_prod(operand: Any, axes: Sequence[int]) -> Array:
    return tnp.prod(operand, tuple(axes))


def argmax(operand: Any, axis: int, index_dtype: Any) -> Array:
    return tnp.argmax(operand, axis).astype(index_dtype)


def argmin(operand: Any, axis: int, index_dtype: Any) -> Array:
    return tnp.argmin(operand, axis).astype(index_dtype)


eq, ne, lt, le, gt, ge = tnp.equal, tnp.not_equal, tnp.less, tnp.less_equal, tnp.greater, tnp.greater_equal


def reciprocal(x: Any) -> Array:
    return tnp.reciprocal(x)


class RoundingMethod(enum.IntEnum):  # JAX's
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x: Any, rounding_method: int = RoundingMethod.AWAY_FROM_ZERO) -> Array:  # noqa: A001 (JAX's name)
    """x rounded to an integer value, halves away from zero (JAX's default) or to even."""
    x = asarray(x)
    if rounding_method == RoundingMethod.TO_NEAREST_EVEN:
        return tnp.round(x)
    whole = troutines.trunc(x)
    return whole + tnp.where(tnp.abs(x - whole) >= 0.5, tnp.sign(x), tnp.zeros_like(x))


def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """operand sorted along `dimension`; a tuple of operands is sorted by its first num_keys
    (the first deciding), the rest permuted alike."""
    del is_stable  # (always stable)
    if not isinstance(operand, (tuple, list)):
        return tnp.sort(operand, axis=dimension)
    xs = [asarray(o) for o in operand]
    if not 1 <= num_keys <= len(xs):
        raise TenzrError(f"sort: num_keys={num_keys} with {len(xs)} operands", user_location())
    order = tnp.argsort(xs[num_keys - 1], axis=dimension)
    for key in reversed(xs[:num_keys - 1]):  # stable sorts, the last key first
        keys = tnp.take_along_axis(key, order, dimension, mode="promise_in_bounds")
        order = tnp.take_along_axis(order, tnp.argsort(keys, axis=dimension), dimension, mode="promise_in_bounds")
    return tuple(tnp.take_along_axis(x, order, dimension, mode="promise_in_bounds") for x in xs)


def approx_max_k(operand: Any, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 is_max_k: bool = True, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> tuple[Array, Array]:
    """The k largest (or, with is_max_k=False, smallest) entries along reduction_dimension
    and their indices: exact, as JAX's on CPU."""
    del recall_target, reduction_input_size_override, aggregate_to_topk
    x = tnp.moveaxis(asarray(operand), reduction_dimension, -1)
    if not x.is_float:  # (as JAX: the negation below would also wrap the smallest integer)
        raise TenzrError(f"approx_{'max' if is_max_k else 'min'}_k: operand must be a floating type, got {x.dtype}",
                         user_location())
    values, indices = top_k(x if is_max_k else -x, k)
    values = values if is_max_k else -values
    return tnp.moveaxis(values, -1, reduction_dimension), tnp.moveaxis(indices, -1, reduction_dimension)


def approx_min_k(operand: Any, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True) -> tuple[Array, Array]:
    return approx_max_k(operand, k, reduction_dimension, recall_target, False, reduction_input_size_override,
                        aggregate_to_topk)


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list[Array]:
    """operand cut along `axis` into pieces of `sizes`."""
    bounds = list(itertools.accumulate(sizes))[:-1]
    return tlib.split(operand, bounds, axis)


def reduce_and(operand: Any, axes: Sequence[int]) -> Array:
    return tlib.all(operand, tuple(axes))


def reduce_or(operand: Any, axes: Sequence[int]) -> Array:
    return tlib.any(operand, tuple(axes))


def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any], dimensions: Sequence[int]) -> Any:
    """JAX's `lax.reduce` for one operand and the monoids it recognizes: `computation` is
    `tz.lax.add`, `mul`, `max`, `min` or `bitwise_xor` (or their tz names); the init value
    is folded in once."""
    reducer = _MONOIDS.get(computation)
    if reducer is None or isinstance(operands, (tuple, list)):
        raise TenzrError("lax.reduce: reduces one operand with tz.lax.add, mul, max, min or bitwise_xor (or tz.add, "
                         f"tz.multiply, tz.maximum, tz.minimum, tz.bitwise_xor), got {computation!r}", user_location())
    x, axes = asarray(operands), tuple(dimensions)
    total = _REDUCTIONS[reducer](x, axes)
    return reducer(total, tnp.asarray(init_values, x.dtype))


def associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """The running combination of `elems` (a pytree of arrays of one length along `axis`)
    by the associative `fn`: out[i] = fn(out[i-1], elems[i]), computed in O(log n) rounds
    of `fn` on halves (Blelloch's scheme, as JAX's)."""
    leaves, tree = flatten(elems)
    leaves = [asarray(leaf) for leaf in leaves]
    if not leaves:
        return elems
    axis = _axis(axis, leaves[0].ndim)
    if len({leaf.shape[axis] for leaf in leaves}) != 1:
        raise TenzrError(f"associative_scan: the leaves of elems differ in length along axis {axis}: "
                         f"{[leaf.shape for leaf in leaves]}", user_location())
    if reverse:
        leaves = [tnp.flip(leaf, axis) for leaf in leaves]

    def combine(a: list[Array], b: list[Array]) -> list[Array]:
        if a[0].shape[axis] == 0:
            return a
        out = flatten(fn(unflatten(tree, a), unflatten(tree, b)))[0]
        return [asarray(o) for o in out]

    def scan(xs: list[Array]) -> list[Array]:
        n = xs[0].shape[axis]
        if n < 2:
            return xs
        odd = scan(combine([_along(x, 0, n - 1, 2, axis) for x in xs], [_along(x, 1, None, 2, axis) for x in xs]))
        rest = [_along(x, 2, None, 2, axis) for x in xs]
        even = combine([_along(o, 0, -1, 1, axis) for o in odd] if n % 2 == 0 else odd, rest)
        even = [tnp.concatenate([_along(x, 0, 1, 1, axis), e], axis) for x, e in zip(xs, even, strict=True)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd, strict=True)]

    out = scan(leaves)
    if reverse:
        out = [tnp.flip(leaf, axis) for leaf in out]
    return unflatten(tree, out)


def _interleave(a: Array, b: Array, axis: int) -> Array:
    """a[0], b[0], a[1], b[1], ... along `axis` (a as long as b, or one longer)."""
    n = a.shape[axis] + b.shape[axis]
    if b.shape[axis] < a.shape[axis]:
        widths = [(0, 0)] * b.ndim
        widths[axis] = (0, 1)
        b = tnp.pad(b, widths)
    pairs = tnp.stack([a, b], axis + 1)
    merged = tnp.reshape(pairs, (*a.shape[:axis], -1, *a.shape[axis + 1:]))
    return _along(merged, 0, n, 1, axis)


def _cumulative(name: str, reducer: Callable[[Array, Array], Array]) -> Callable[..., Array]:
    def fn(operand: Any, axis: int = 0, reverse: bool = False) -> Array:
        return associative_scan(reducer, asarray(operand), reverse, axis)

    fn.__name__, fn.__doc__ = name, f"The running {name[3:]} along `axis` (from the end if reverse)."
    return fn


def cumsum(operand: Any, axis: int = 0, reverse: bool = False) -> Array:
    """The running sum along `axis` (from the end if reverse)."""
    x = asarray(operand)
    axis = _axis(axis, x.ndim)
    return tnp.flip(tlib.cumsum(tnp.flip(x, axis), axis), axis) if reverse else tlib.cumsum(x, axis)


def cumprod(operand: Any, axis: int = 0, reverse: bool = False) -> Array:
    """The running product along `axis` (from the end if reverse)."""
    x = asarray(operand)
    axis = _axis(axis, x.ndim)
    return tnp.flip(tlib.cumprod(tnp.flip(x, axis), axis), axis) if reverse else tlib.cumprod(x, axis)


cummax = _cumulative("cummax", tnp.maximum)
cummin = _cumulative("cummin", tnp.minimum)
cumlogsumexp = _cumulative("cumlogsumexp", tnp.logaddexp)


def stack(operands: Sequence[Any], axis: int = 0) -> Array:
    """The operands (of one shape) joined along a new dim `axis`."""
    return tnp.stack(list(operands), axis)


def tile(operand: Any, reps: Sequence[int]) -> Array:
    """operand repeated reps[i] times along dim i."""
    return tlib.tile(operand, tuple(reps))


def empty(shape: Any, dtype: Any, *, out_sharding: Any = None) -> Array:
    """An array of `shape` whose values are unspecified (zeros here, never uninitialized)."""
    return tlib.empty(shape, dtype)


def broadcast_to_rank(x: Any, rank: int) -> Array:
    """x with leading dims of size 1 up to rank `rank`."""
    x = asarray(x)
    if rank < x.ndim:
        raise TenzrError(f"broadcast_to_rank: rank {rank} is below the array's rank {x.ndim}", user_location())
    return tnp.reshape(x, (1,) * (rank - x.ndim) + x.shape)


def mulhi(x: Any, y: Any, /) -> Array:
    """The high half of the bits of the full product of integers x and y, elementwise."""
    x, y = asarray(x), asarray(y)
    if x.dtype != y.dtype or not np.issubdtype(x.dtype, np.integer):
        raise TenzrError(f"mulhi: needs two integer arrays of one dtype, got {x.dtype} and {y.dtype}", user_location())
    bits = x.dtype.itemsize * 8
    if bits < 64:
        wide = np.int64 if np.issubdtype(x.dtype, np.signedinteger) else np.uint64
        return tnp.right_shift(x.astype(wide) * y.astype(wide), bits).astype(x.dtype)
    # 64 bits: the unsigned high word from 32-bit halves, then corrected for signs
    # (hi(a·b) = hi_u(a, b) - (a < 0 ? b : 0) - (b < 0 ? a : 0), mod 2^64).
    ux, uy = bitcast_convert_type(x, np.uint64), bitcast_convert_type(y, np.uint64)
    low32 = np.uint64(0xFFFFFFFF)
    x0, x1 = ux & low32, tnp.right_shift(ux, np.uint64(32))
    y0, y1 = uy & low32, tnp.right_shift(uy, np.uint64(32))
    cross = x1 * y0 + tnp.right_shift(x0 * y0, np.uint64(32))
    carry = (cross & low32) + x0 * y1
    high = x1 * y1 + tnp.right_shift(cross, np.uint64(32)) + tnp.right_shift(carry, np.uint64(32))
    if np.issubdtype(x.dtype, np.unsignedinteger):
        return high
    zero = np.uint64(0)
    high = high - tnp.where(x < 0, uy, zero) - tnp.where(y < 0, ux, zero)
    return bitcast_convert_type(high, x.dtype)


def reduce_xor(operand: Any, axes: Sequence[int]) -> Array:
    """The bitwise XOR (for booleans, the parity) of the entries over `axes`, by halving."""
    x = asarray(operand)
    if not (x.dtype == np.bool_ or np.issubdtype(x.dtype, np.integer)):
        raise TenzrError(f"reduce_xor: needs a boolean or integer operand, got {x.dtype}", user_location())
    dims = tuple(_axis(a, x.ndim) for a in axes)
    if len(set(dims)) != len(dims):
        raise TenzrError(f"reduce_xor: axes {tuple(axes)} name a dim more than once", user_location())
    kept = [d for d in range(x.ndim) if d not in dims]
    x = tnp.transpose(x, (*kept, *dims))
    x = tnp.reshape(x, (*x.shape[:len(kept)], -1))
    if x.shape[-1] == 0:
        return tnp.zeros(x.shape[:-1], x.dtype)
    while x.shape[-1] > 1:
        if x.shape[-1] % 2:
            x = tnp.concatenate([x, tnp.zeros((*x.shape[:-1], 1), x.dtype)], -1)
        half = x.shape[-1] // 2
        x = tnp.bitwise_xor(x[..., :half], x[..., half:])
    return x[..., 0]


def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Array:
    """src at the index vectors (idxs[0][i], idxs[1][i], ...) over `axes` (each index taken
    modulo its dim's size): shape [len(idxs[0]), the other dims of src in order]."""
    x = asarray(src)
    axes = [_axis(a, x.ndim) for a in axes]
    if len(idxs) != len(axes):
        raise TenzrError(f"index_take: {len(idxs)} index arrays for {len(axes)} axes", user_location())
    moved = tnp.moveaxis(x, axes, list(range(len(axes))))
    return moved[tuple(tnp.remainder(asarray(i), x.shape[a]) for i, a in zip(idxs, axes, strict=True))]


def igamma(a: Any, x: Any) -> Array:
    """The regularized lower incomplete gamma function P(a, x)."""
    from tenzr.scipy import special  # (scipy.special imports this module)

    return special.gammainc(a, x)


def igammac(a: Any, x: Any) -> Array:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    from tenzr.scipy import special

    return special.gammaincc(a, x)


def betainc(a: Any, b: Any, x: Any) -> Array:
    """The regularized incomplete beta function I_x(a, b)."""
    from tenzr.scipy import special

    return special.betainc(a, b, x)


def igamma_grad_a(a: Any, x: Any) -> Array:
    """∂P(a, x)/∂a, elementwise: forward mode through `igamma`."""
    from tenzr.forward import jvp

    a, x = promote(tnp._float(a), x)
    a, x = tlib.broadcast_arrays(a, x)
    return jvp(lambda s: igamma(s, x), (a,), (tnp.ones_like(a),))[1]


def random_gamma_grad(a: Any, x: Any) -> Array:
    """The derivative in a of a Gamma(a, 1) sample x (its CDF held fixed):
    -(∂P/∂a) / (∂P/∂x), with ∂P/∂x = x^(a-1) e^-x / Γ(a)."""
    from tenzr.scipy import special

    a, x = promote(tnp._float(a), x)
    density = tnp.exp(special.xlogy(a - 1, x) - x - special.gammaln(a))
    return tnp.where(x == 0, 0.0, -igamma_grad_a(a, x) / density)


# Chebyshev coefficients (Σ c_k T_k(t)) of Cephes's forms of the scaled Bessel functions:
# i0e(x) and i1e(x)/x on t = x/4 - 1 (x <= 8), sqrt(x)·i0e(x) and sqrt(x)·i1e(x) on
# t = 16/x - 1 (x > 8). Computed with mpmath at 40 digits (they agree with Cephes's tables).
_I0E_LO = (
    0.33839763720473803, -0.3046826723431984, 0.17162090152220877, -0.09490109704804764, 0.04930528423967071,
    -0.02373741480589947, 0.010546460394594998, -0.004324309995050576, 0.0016394756169413357,
    -0.0005763755745385824, 0.00018850288509584165, -5.754195010082104e-05, 1.6448448070728896e-05,
    -4.4167383584587505e-06, 1.1173875391201037e-06, -2.670793853940612e-07, 6.046995022541919e-08,
    -1.300025009986248e-08, 2.6598237246823866e-09, -5.189795601635263e-10, 9.675809035373237e-11,
    -1.726826291441556e-11, 2.95505266312964e-12, -4.856446783111929e-13, 7.676185498604936e-14,
    -1.1685332877993451e-14, 1.715391285555133e-15, -2.431279846547955e-16, 3.3307945188222384e-17,
    -4.4153416464793395e-18,
)
_I0E_HI = (
    0.4022452055070544, 0.0033691164782556943, 6.889758346916825e-05, 2.8913705208347567e-06,
    2.0489185894690638e-07, 2.266668990498178e-08, 3.3962320257083865e-09, 4.94060238822497e-10,
    1.1889147107846439e-11, -3.1499165279632416e-11, -1.3215811840447713e-11, -1.7941785315068062e-12,
    7.180124451383666e-13, 3.8527783827421426e-13, 1.54008621752141e-14, -4.150569347287222e-14,
    -9.554846698828307e-15, 3.8116806693526224e-15, 1.7725601330565263e-15, -3.425485619677219e-16,
    -2.8276239805165836e-16, 3.461222867697461e-17, 4.46562142029676e-17, -4.830504485944178e-18,
    -7.23318048787476e-18,
)
_I1E_LO = (
    0.12629359322181682, -0.17641651835783406, 0.1026436586898471, -0.05294598120809499, 0.024726449030626516,
    -0.010564084894626197, 0.004156422944312888, -0.0015135724506312532, 0.0005122859561685758,
    -0.00016176081582589674, 4.781565107550054e-05, -1.3273163656039436e-05, 3.4702513081376785e-06,
    -8.568720264695455e-07, 2.0032947535521353e-07, -4.445059128796328e-08, 9.381537386495773e-09,
    -1.8872497517228294e-09, 3.625590281552117e-10, -6.663489723502027e-11, 1.1736186298890901e-11,
    -1.9839743977649436e-12, 3.223793365945575e-13, -5.042185504727912e-14, 7.600684294735408e-15,
    -1.1055969477353862e-15, 1.5536319577362005e-16, -2.111421214358166e-17, 2.7779141127610464e-18,
)
_I1E_HI = (
    0.38928811750914005, -0.009761097491361469, -0.00011058893876262371, -3.882564808877691e-06,
    -2.512236237870209e-07, -2.6314688468895196e-08, -3.835380385964237e-09, -5.589743462196584e-10,
    -1.8974958123505413e-11, 3.2526035830154884e-11, 1.4125807436613782e-11, 2.0356285441470896e-12,
    -7.198551776245908e-13, -4.0835511110921974e-13, -2.1015418427726643e-14, 4.272440016711951e-14,
    1.0420276984128802e-14, -3.8144030724370075e-15, -1.8803547755107825e-15, 3.3082023109209285e-16,
    2.96262899764595e-16, -3.209525921993424e-17, -4.650305368489358e-17, 4.414348323071704e-18,
    7.517296310842111e-18,
)


def _chebyshev(t: Array, coefficients: Sequence[float]) -> Array:
    """Σ c_k T_k(t) by Clenshaw's recurrence."""
    b1 = b2 = tnp.zeros_like(t)
    for c in reversed(coefficients[1:]):
        b1, b2 = 2 * t * b1 - b2 + c, b1
    return t * b1 - b2 + coefficients[0]


def _bessel_scaled(x: Any, small: Sequence[float], large: Sequence[float]) -> tuple[Array, Array, Array]:
    """(|x| <= 8, the small-x series at |x|, the large-x one over sqrt(|x|)), each side seeing
    x only where it is taken."""
    x = tnp._float(x)
    ax = tnp.abs(x)
    near = ax <= 8.0
    low = _chebyshev(tnp.where(near, ax, 0.0) / 4 - 1, small)
    far = tnp.where(near, 16.0, ax)
    return near, low, _chebyshev(16 / far - 1, large) / tnp.sqrt(far)


def bessel_i0e(x: Any) -> Array:
    """The exponentially scaled modified Bessel function of order 0, e^-|x| I0(x) (Cephes's
    Chebyshev series)."""
    near, low, high = _bessel_scaled(x, _I0E_LO, _I0E_HI)
    return tnp.where(near, low, high)


def bessel_i1e(x: Any) -> Array:
    """The exponentially scaled modified Bessel function of order 1, e^-|x| I1(x) (odd in x)."""
    x = tnp._float(x)
    near, low, high = _bessel_scaled(x, _I1E_LO, _I1E_HI)
    return tnp.where(near, x * low, tnp.sign(x) * high)


# (2j)! / B_2j for j = 1..12: the Euler-Maclaurin tail of the Hurwitz zeta function (Cephes's).
_ZETA_TAIL = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
              -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
              1.8152105401943546773e17, -7.1661652561756670113e18)


def zeta(x: Any, q: Any) -> Array:
    """The Hurwitz zeta function Σ_k (q + k)^-x, for x > 1, as JAX's (XLA's): the first ten
    terms, then the Euler-Maclaurin tail from q + 10. For q <= 0, x must be an integer (NaN
    otherwise), and integer q <= 0 is a pole: inf for even x, NaN for odd x. inf at x = 1,
    NaN for x < 1. As JAX's, inaccurate for q below about -8, where q + 10 is too small for
    the tail."""
    x, q = promote(tnp._float(x), q)
    x, q = tlib.broadcast_arrays(x, q)
    integer_x, integer_q = x == tnp.floor(x), q == tnp.floor(q)
    ok = (x > 1) & ((q > 0) | (integer_x & ~integer_q))
    xs, qs = tnp.where(ok, x, 2.0), tnp.where(ok, q, 1.0)  # (a finite sum wherever the answer is not)
    head = tnp.zeros_like(xs)
    for k in range(10):
        head = head + tnp.power(qs + k, -xs)
    w = qs + 10
    first = tnp.power(w, -xs)
    total = head + first * w / (xs - 1) + 0.5 * first
    term = xs * first / w  # x (x+1) ... (x+2j-2) w^(-x-2j+1), carried so it cannot overflow
    for j, divisor in enumerate(_ZETA_TAIL):
        total = total + term / divisor
        term = term * (xs + 2 * j + 1) * (xs + 2 * j + 2) / (w * w)
    # (XLA's: the tail is left out where it is below the head's resolution)
    total = tnp.where(tnp.abs(first) < tnp.abs(head) * np.finfo(xs.dtype).tiny, head, total)
    pole = (q <= 0) & integer_q
    even_x = integer_x & (tnp.remainder(x, 2.0) == 0)
    out = tnp.where(pole & even_x, np.inf, tnp.where(ok, total, np.nan))
    return tnp.where(x == 1, np.inf, out)


def polygamma(m: Any, x: Any) -> Array:
    """The m-th derivative of digamma, for integer m >= 0 (as a float; NaN otherwise):
    (-1)^(m+1) m! ζ(m + 1, x)."""
    from tenzr.scipy import special

    m, x = promote(tnp._float(m), x)
    m, x = tlib.broadcast_arrays(m, x)
    integer = (m >= 0) & (m == tnp.floor(m))
    order = tnp.where(integer & (m > 0), m, 1.0)
    sign = tnp.where(tnp.remainder(order, 2.0) == 0, -1.0, 1.0)
    higher = sign * tnp.exp(special.gammaln(order + 1)) * zeta(order + 1, x)
    return tnp.where(~integer, np.nan, tnp.where(m == 0, special.digamma(x), higher))


check_arguments(globals(), "tz.lax.")
_ADD, _MUL, _XOR = globals()["add"], globals()["mul"], globals()["bitwise_xor"]
_REDUCERS.update({_ADD: _ADD, _MUL: _MUL, max: max, min: min})
_REDUCERS.update({tnp.add: _ADD, tnp.multiply: _MUL, tnp.maximum: max, tnp.minimum: min})
# `reduce` takes XOR too (reduce_window, for pooling, does not), and reduces whole axes with:
_MONOIDS = {**_REDUCERS, _XOR: _XOR, tnp.bitwise_xor: _XOR}
_REDUCTIONS: dict[Any, Callable[[Array, tuple[int, ...]], Array]] = {
    _ADD: tnp.sum, _MUL: tnp.prod, max: tnp.max, min: tnp.min, _XOR: reduce_xor}


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """JAX's `lax.conv_dimension_numbers`: layout strings (or None, or a
    ConvDimensionNumbers) as the dim positions each operand keeps."""
    rank = len(lhs_shape)
    if dimension_numbers is None:
        default = tuple(range(rank))
        return ConvDimensionNumbers(default, default, default)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    try:
        lhs_spec, rhs_spec, out_spec = dimension_numbers
    except (TypeError, ValueError):
        raise TenzrError("conv: dimension_numbers must be three layout strings such as ('NHWC', 'HWIO', "
                         f"'NHWC'), got {dimension_numbers!r}", user_location()) from None
    if not all(isinstance(spec, str) for spec in (lhs_spec, rhs_spec, out_spec)):
        return ConvDimensionNumbers(*(tuple(int(d) for d in spec) for spec in (lhs_spec, rhs_spec, out_spec)))
    for spec, pair in ((lhs_spec, "NC"), (rhs_spec, "OI"), (out_spec, "NC")):
        if len(spec) != rank or not set(pair) <= set(spec) or len(set(spec)) != rank:
            raise TenzrError(f"conv: layout '{spec}' must name {rank} distinct dims including "
                             f"'{pair[0]}' and '{pair[1]}'", user_location())
    spatial = [c for c in rhs_spec if c not in "OI"]
    if sorted(c for c in lhs_spec if c not in "NC") != sorted(spatial) or \
            sorted(c for c in out_spec if c not in "NC") != sorted(spatial):
        raise TenzrError(f"conv: layouts {dimension_numbers!r} do not name the same spatial dims", user_location())

    def positions(spec: str, pair: str) -> tuple[int, ...]:
        return (spec.index(pair[0]), spec.index(pair[1]), *(spec.index(c) for c in spatial))

    return ConvDimensionNumbers(positions(lhs_spec, "NC"), positions(rhs_spec, "OI"), positions(out_spec, "NC"))


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int], window_strides: Sequence[int],
                    padding: str) -> list[tuple[int, int]]:
    """JAX's `lax.padtype_to_pads`: the (low, high) pairs of "SAME" (output ceil(in /
    stride), the odd pad at the end), "SAME_LOWER" (at the start) or "VALID" (none)."""
    mode = padding.upper() if isinstance(padding, str) else padding
    if mode == "VALID":
        return [(0, 0)] * len(in_shape)
    if mode not in ("SAME", "SAME_LOWER"):
        raise TenzrError(f"padding '{padding}' is not 'SAME', 'SAME_LOWER' or 'VALID'", user_location())
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides, strict=True):
        total = builtins.max((-(-int(n) // int(s)) - 1) * int(s) + int(w) - int(n), 0)
        low = total // 2 if mode == "SAME" else total - total // 2
        pads.append((low, total - low))
    return pads


def conv_general_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int], window_strides: Sequence[int],
                             padding: Any, dimension_numbers: Any) -> tuple[int, ...]:
    """The shape `conv_general_dilated` gives (no dilation), as JAX's."""
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    x = [lhs_shape[d] for d in dn.lhs_spec]
    w = [rhs_shape[d] for d in dn.rhs_spec]
    pads = padtype_to_pads(x[2:], w[2:], window_strides, padding) if isinstance(padding, str) else padding
    spatial = [(n + lo + hi - k) // s + 1 for n, (lo, hi), k, s in zip(x[2:], pads, w[2:], window_strides, strict=True)]
    nchw = [x[0], w[0], *spatial]
    return tuple(nchw[int(np.argsort(dn.out_spec)[d])] for d in range(len(nchw)))


def conv_transpose_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int], window_strides: Sequence[int],
                               padding: Any, dimension_numbers: Any) -> tuple[int, ...]:
    """The shape `conv_transpose` gives, as JAX's."""
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    x = [lhs_shape[d] for d in dn.lhs_spec]
    w = [rhs_shape[d] for d in dn.rhs_spec]
    if isinstance(padding, str):
        pads = [_transpose_padding(k, s, padding.upper()) for k, s in zip(w[2:], window_strides, strict=True)]
    else:
        pads = [tuple(p) for p in padding]
    spatial = [(n - 1) * s + 1 + lo + hi - k + 1
               for n, (lo, hi), k, s in zip(x[2:], pads, w[2:], window_strides, strict=True)]
    nchw = [x[0], w[0], *spatial]
    return tuple(nchw[int(np.argsort(dn.out_spec)[d])] for d in range(len(nchw)))


def reduce_window_shape_tuple(operand_shape: Sequence[int], window_dimensions: Sequence[int],
                              window_strides: Sequence[int], padding: Sequence[tuple[int, int]],
                              base_dilation: Sequence[int] | None = None,
                              window_dilation: Sequence[int] | None = None) -> tuple[int, ...]:
    """The shape `reduce_window` gives with explicit (low, high) padding, as JAX's."""
    wdil = window_dilation or (1,) * len(operand_shape)
    return tuple((n + lo + hi - ((k - 1) * r + 1)) // s + 1 for n, k, s, (lo, hi), r in
                 zip(operand_shape, window_dimensions, window_strides, padding, wdil, strict=True))

__all__ = [name for name in globals() if not name.startswith("_") and name not in (
    "annotations", "builtins", "enum", "itertools", "np", "tnp", "tlib", "troutines", "flatten", "unflatten")] + [
    "cond", "fori_loop", "map", "scan", "switch", "while_loop"]
