"""NumPy's array routines built from `numpy_api`'s: stacking and splitting, triangles and
diagonals, repeats, rolls and rotations, cumulative sums and products, differences, grids,
products (`tensordot`, `kron`, `inner`, `cross`), `select`, `nan_to_num`, `std`, and the
`isclose` family. Names, arguments and semantics are NumPy's (JAX's where they differ).
"""

from __future__ import annotations

import builtins
import functools
import inspect
import itertools
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tenzr.control import scan
from tenzr.core import (
    Array,
    OnDevice,
    ShapeDtype,
    api_boundary,
    asarray,
    check_arguments,
    checked,
    constant,
    current_trace,
    dtype_name,
    emit,
    promote,
    user_location,
)
from tenzr.dialect import ops as T
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.types import HALF_TYPES, numpy_dtype
from tenzr.flags import default_float, default_int, requested_dtype
from tenzr.numpy_api import (
    _axes,
    _Fixed,
    _float,
    _index_array,
    _no_out,
    _preferred,
    abs,  # noqa: A004 (NumPy's names, as in numpy_api)
    arange,
    arctan2,
    argsort,
    broadcast_to,
    ceil,
    clip,
    concatenate,
    einsum,
    expand_dims,
    eye,
    flip,
    floor,
    floor_divide,
    full,
    isinf,
    isnan,
    logical_and,
    logical_not,
    logical_or,
    matmul,
    maximum,
    mean,
    moveaxis,
    ones,
    outer,
    pad,
    power,
    prod,
    remainder,
    reshape,
    sin,
    sort,
    sqrt,
    stack,
    sum,  # noqa: A004
    swapaxes,
    take,
    take_along_axis,
    transpose,
    zeros,
)
from tenzr.numpy_api import max as reduce_max
from tenzr.numpy_api import min as reduce_min
from tenzr.numpy_api import where as where_  # (the select itself; `where` below also takes one argument)

ArrayLike = Any

# --------------------------------------------------------------------------- shapes


def ndim(x: ArrayLike) -> int:
    """The number of dimensions."""
    return x.ndim if isinstance(x, Array) else np.ndim(x)


def shape(x: ArrayLike) -> tuple[int, ...]:
    """The shape, as a tuple."""
    return x.shape if isinstance(x, Array) else np.shape(x)


def size(x: ArrayLike, axis: int | None = None) -> int:
    """The number of elements (along `axis` when given)."""
    dims = shape(x)
    return math.prod(dims) if axis is None else dims[axis]


def ravel(x: ArrayLike) -> Array:
    """The elements as a 1-D array."""
    return reshape(x, (-1,))


def _each(arys: tuple[ArrayLike, ...], shaped: Any) -> Any:
    out = [shaped(asarray(a)) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys: ArrayLike) -> Any:
    """Each array with at least one dimension (one array: it; several: a list)."""
    return _each(arys, lambda a: reshape(a, (1,)) if a.ndim == 0 else a)


def atleast_2d(*arys: ArrayLike) -> Any:
    """Each array with at least two dimensions (a vector becomes a row)."""
    return _each(arys, lambda a: reshape(a, (1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a)


def atleast_3d(*arys: ArrayLike) -> Any:
    """Each array with at least three dimensions (as NumPy: [N] -> [1, N, 1], [M, N] -> [M, N, 1])."""
    shapes = {0: lambda a: (1, 1, 1), 1: lambda a: (1, a.shape[0], 1), 2: lambda a: (*a.shape, 1)}
    return _each(arys, lambda a: reshape(a, shapes[a.ndim](a)) if a.ndim < 3 else a)


def vstack(tup: Sequence[ArrayLike]) -> Array:
    """Joins arrays as rows (1-D arrays become rows first)."""
    return concatenate([atleast_2d(a) for a in tup], axis=0)


def hstack(tup: Sequence[ArrayLike]) -> Array:
    """Joins arrays along the second axis (the first for 1-D arrays)."""
    arrays: list[Array] = [atleast_1d(a) for a in tup]
    return concatenate(arrays, axis=0 if arrays[0].ndim == 1 else 1)


def dstack(tup: Sequence[ArrayLike]) -> Array:
    """Joins arrays along the third axis (after atleast_3d)."""
    return concatenate([atleast_3d(a) for a in tup], axis=2)


def column_stack(tup: Sequence[ArrayLike]) -> Array:
    """Joins 1-D arrays as columns (2-D ones as they are)."""
    columns = []
    for a in tup:
        a = asarray(a)
        columns.append(reshape(a, (a.shape[0], 1)) if a.ndim == 1 else atleast_2d(a))
    return concatenate(columns, axis=1)


def append(arr: ArrayLike, values: ArrayLike, axis: int | None = None) -> Array:
    """`values` joined after `arr` along `axis` (both flattened when None)."""
    if axis is None:
        return concatenate([ravel(arr), ravel(values)])
    return concatenate([arr, values], axis=axis)


def _slice(x: Array, axis: int, start: int, stop: int) -> Array:
    index = [builtins.slice(None)] * x.ndim
    index[axis] = builtins.slice(start, stop)
    return x[tuple(index)]


def array_split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Array]:
    """Splits into `indices_or_sections` parts (the first ones one longer when uneven) or at
    the given indices."""
    x = asarray(ary)
    (axis,) = _axes(axis, x.ndim)
    n = x.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise TenzrError("array_split: the number of sections must be positive", user_location())
        each, extra = divmod(n, sections)
        bounds = [0]
        for k in range(sections):
            bounds.append(bounds[-1] + each + (1 if k < extra else 0))
    else:
        bounds = [0, *(builtins.min(builtins.max(int(i) if i >= 0 else n + int(i), 0), n)
                       for i in indices_or_sections), n]
    return [_slice(x, axis, a, builtins.max(a, b)) for a, b in itertools.pairwise(bounds)]


def split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Array]:
    """Splits into equal sections (an error when they cannot be equal) or at the given indices."""
    x = asarray(ary)
    if isinstance(indices_or_sections, (int, np.integer)):
        (a,) = _axes(axis, x.ndim)
        if x.shape[a] % int(indices_or_sections):
            raise TenzrError(f"split: an axis of {x.shape[a]} does not split into {indices_or_sections} equal "
                             "sections (array_split allows unequal ones)", user_location())
    return array_split(x, indices_or_sections, axis)


def hsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Array]:
    """split along the second axis (the first for 1-D arrays)."""
    x = asarray(ary)
    return split(x, indices_or_sections, 1 if x.ndim > 1 else 0)


def vsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Array]:
    """split along the first axis of an array of at least 2 dims."""
    x = asarray(ary)
    if x.ndim < 2:
        raise TenzrError("vsplit: the array must have at least 2 dimensions", user_location())
    return split(x, indices_or_sections, 0)


def dsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Array]:
    """split along the third axis of an array of at least 3 dims."""
    x = asarray(ary)
    if x.ndim < 3:
        raise TenzrError("dsplit: the array must have at least 3 dimensions", user_location())
    return split(x, indices_or_sections, 2)


def roll(a: ArrayLike, shift: Any, axis: Any = None) -> Array:
    """Elements shifted by `shift` along `axis`, those past the end coming round (the flattened array when None)."""
    x = asarray(a)
    if axis is None:
        return reshape(roll(ravel(x), shift, 0), x.shape)
    shifts = [shift] if isinstance(shift, (int, np.integer)) else list(shift)
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    for s, ax in zip(shifts, axes, strict=True):
        (ax,) = _axes(ax, x.ndim)
        n = x.shape[ax]
        if n == 0:
            continue
        k = int(s) % n
        if k:
            x = concatenate([_slice(x, ax, n - k, n), _slice(x, ax, 0, n - k)], axis=ax)
    return x


def rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Array:
    """Axis `axis` moved to before position `start`."""
    x = asarray(a)
    (axis,) = _axes(axis, x.ndim)
    start = start + x.ndim if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(x, axis, start) if axis != start else x


def flipud(m: ArrayLike) -> Array:
    """Rows in reverse order (axis 0)."""
    return flip(m, 0)


def fliplr(m: ArrayLike) -> Array:
    """Columns in reverse order (axis 1)."""
    return flip(m, 1)


def rot90(m: ArrayLike, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Array:
    """Rotated by 90° k times in the plane of `axes` (from the first axis toward the second)."""
    x = asarray(m)
    a, b = _axes(axes, x.ndim)
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, a), b)
    return swapaxes(flip(x, b), a, b) if k == 1 else flip(swapaxes(x, a, b), b)


# --------------------------------------------------------------------------- triangles and diagonals


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Array:
    """A constant array with ones on and below diagonal k."""
    dtype = default_float() if dtype is None else dtype
    return constant(np.tri(N, M, k, dtype=numpy_dtype(dtype_name(dtype))), dtype_name(dtype))


def _triangle(m: ArrayLike, k: int, lower: bool) -> Array:
    x = asarray(m)
    if x.ndim < 2:
        raise TenzrError(f"{'tril' if lower else 'triu'}: the input must have at least 2 dimensions", user_location())
    n, cols = x.shape[-2:]
    mask = np.tri(n, cols, k, dtype=bool) if lower else ~np.tri(n, cols, k - 1, dtype=bool)
    return where(mask, x, 0)


def tril(m: ArrayLike, k: int = 0) -> Array:
    """The lower triangle (on and below diagonal k) of the last two dimensions; zeros elsewhere."""
    return _triangle(m, k, True)


def triu(m: ArrayLike, k: int = 0) -> Array:
    """The upper triangle (on and above diagonal k) of the last two dimensions; zeros elsewhere."""
    return _triangle(m, k, False)


def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """The diagonal `offset` of the dimensions axis1, axis2, as the last dimension."""
    x = asarray(a)
    a1, a2 = _axes((axis1, axis2), x.ndim)
    x = moveaxis(moveaxis(x, a1, -1), a2 if a2 < a1 else a2 - 1, -1)
    rows, cols = x.shape[-2:]
    count = builtins.max(0, builtins.min(rows, cols - offset) if offset >= 0 else builtins.min(rows + offset, cols))
    start = offset if offset >= 0 else -offset * cols
    flat = reshape(x, (*x.shape[:-2], rows * cols))
    return take(flat, np.arange(count) * (cols + 1) + start, axis=-1) if count else flat[..., :0]


def diag(v: ArrayLike, k: int = 0) -> Array:
    """A 1-D array's square matrix with it on diagonal k; a 2-D array's diagonal k."""
    x = asarray(v)
    if x.ndim == 2:
        return diagonal(x, k)
    if x.ndim != 1:
        raise TenzrError(f"diag: the input must be 1-D or 2-D, got {x.ndim}-D", user_location())
    n = x.shape[0] + builtins.abs(k)
    along = take(x, np.clip(np.arange(n), 0, x.shape[0] - 1), axis=0)
    # diagonal k >= 0 holds v[row] (so v runs down the rows), k < 0 holds v[column]
    return where(np.eye(n, n, k, dtype=bool), reshape(along, (n, 1) if k >= 0 else (1, n)), 0)


def broadcast_shapes(*shapes: Sequence[int] | int) -> tuple[int, ...]:
    """The shape NumPy broadcasting gives `shapes`."""
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*shapes))
    except ValueError:
        raise TenzrError(f"broadcast_shapes: shapes {', '.join(str(s) for s in shapes)} do not broadcast together",
                         user_location()) from None


def broadcast_arrays(*args: ArrayLike) -> list[Array]:
    """Each argument broadcast to their common shape."""
    xs = [asarray(a) for a in args]
    shape = broadcast_shapes(*(x.shape for x in xs))
    return [x if x.shape == shape else broadcast_to(x, shape) for x in xs]


def trapezoid(y: ArrayLike, x: ArrayLike = None, dx: ArrayLike = 1.0, axis: int = -1) -> Array:
    """The trapezoidal rule along `axis`: at sample points `x` (1-d, or shaped as y), or
    evenly spaced by `dx`."""
    ys = moveaxis(asarray(y), axis, -1)
    if x is None:
        spacing = dx  # (a Python number stays weakly typed)
    else:
        xs = asarray(x)
        spacing = diff(xs if xs.ndim == 1 else moveaxis(xs, axis, -1), axis=-1)
    return 0.5 * (spacing * (ys[..., 1:] + ys[..., :-1])).sum(-1)


def trace(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    return sum(diagonal(a, offset, axis1, axis2), axis=-1)


# --------------------------------------------------------------------------- repeats


def repeat(a: ArrayLike, repeats: Any, axis: int | None = None, *, total_repeat_length: int | None = None) -> Array:
    """Each element repeated `repeats` times along `axis` (the flattened array when None).
    Traced repeats need JAX's `total_repeat_length`, the result's length: repeats beyond
    it are dropped, and a shorter total repeats the last element up to it."""
    x = asarray(a)
    if axis is None:
        x, axis = ravel(x), 0
    (axis,) = _axes(axis, x.ndim)
    n = x.shape[axis]
    if not isinstance(repeats, Array):
        counts = np.broadcast_to(np.asarray(repeats), (n,))
        source = np.repeat(np.arange(n), counts)
        if total_repeat_length is not None:  # (JAX's: cut, or the last element repeated)
            source = source[:total_repeat_length]
            source = np.concatenate([source, np.full(total_repeat_length - source.size, n - 1)])
        return take(x, source, axis=axis, mode="promise_in_bounds")
    if total_repeat_length is None:
        raise TenzrError("repeat: traced repeats need total_repeat_length= (the result's length must be known while "
                         "tracing, as in JAX)", user_location())
    ends = cumsum(broadcast_to(repeats, (n,)))
    sources = searchsorted(ends, arange(total_repeat_length, dtype=ends.dtype), side="right")
    return take(x, clip(sources, 0, builtins.max(n - 1, 0)), axis=axis, mode="promise_in_bounds")


def tile(A: ArrayLike, reps: Any) -> Array:
    """The array repeated `reps` times along each axis."""
    x = asarray(A)
    reps = (int(reps),) if isinstance(reps, (int, np.integer)) else tuple(int(r) for r in reps)
    rank = builtins.max(x.ndim, len(reps))
    x = reshape(x, (1,) * (rank - x.ndim) + x.shape)
    reps = (1,) * (rank - len(reps)) + reps
    for axis, r in enumerate(reps):
        if r != 1:
            x = take(x, np.tile(np.arange(x.shape[axis]), r), axis=axis)
    return x


# --------------------------------------------------------------------------- cumulative and differences


CUMSUM_BLOCK = 128
"""Running sums along more than this many elements go block by block (`cumsum`)."""


def cumsum(a: ArrayLike, axis: int | None = None, dtype: Any = None) -> Array:
    """Running sums along `axis` (of the flattened array when None): a product with a
    triangle of ones (its gradient is the reversed running sum). Along more than
    CUMSUM_BLOCK elements, each block of CUMSUM_BLOCK is summed so, and the running sum of
    the blocks' totals before it added: O(n) work and memory instead of an n x n triangle
    (10,000 elements took 15 s to compile that way, and 4 million asked for 116 TiB)."""
    x = asarray(a)
    if dtype is not None:
        x = x.astype(dtype)
    elif x.spec.dtype == "i1":
        x = x.astype(np.int32)
    if axis is None:
        x, axis = ravel(x), 0
    (axis,) = _axes(axis, x.ndim)
    return moveaxis(_running_sums(moveaxis(x, axis, -1)), -1, axis)


def _running_sums(x: Array) -> Array:
    """cumsum along the last axis."""
    n = x.shape[-1]
    size = builtins.min(n, CUMSUM_BLOCK)
    ones = constant(np.triu(np.ones((size, size))).astype(numpy_dtype(x.spec.dtype)), x.spec.dtype)
    if n <= CUMSUM_BLOCK:
        return matmul(x, ones)
    blocks = -(-n // size)
    padded = pad(x, [(0, 0)] * (x.ndim - 1) + [(0, blocks * size - n)])
    within = matmul(reshape(padded, (*x.shape[:-1], blocks, size)), ones)
    before = _running_sums(within[..., :-1, -1])  # (the totals of the blocks before each, from the second)
    offsets = pad(before, [(0, 0)] * (before.ndim - 1) + [(1, 0)])
    summed = within + offsets[..., None]
    return reshape(summed, (*x.shape[:-1], blocks * size))[..., :n]


def cumprod(a: ArrayLike, axis: int | None = None, dtype: Any = None) -> Array:
    """Running products along `axis` (of the flattened array when None), by a scan (exact
    with zeros, and so is its gradient)."""
    x = asarray(a)
    if dtype is not None:
        x = x.astype(dtype)
    if axis is None:
        x, axis = ravel(x), 0
    (axis,) = _axes(axis, x.ndim)
    moved = moveaxis(x, axis, 0)

    def step(carry: Array, row: Array) -> tuple[Array, Array]:
        product = carry * row
        return product, product

    _, products = scan(step, moved[0] * 0 + 1, moved)
    return moveaxis(products, 0, axis)


def diff(a: ArrayLike, n: int = 1, axis: int = -1, prepend: ArrayLike = None, append: ArrayLike = None) -> Array:
    """The n-th differences along `axis` (after joining `prepend` and `append`)."""
    x = asarray(a)
    (axis,) = _axes(axis, x.ndim)

    def joined(extra: ArrayLike) -> Array:
        e = asarray(extra)
        if e.ndim:
            return e
        one = list(x.shape)
        one[axis] = 1
        return broadcast_to(e, one)

    parts = [*([joined(prepend)] if prepend is not None else []), x, *([joined(append)] if append is not None else [])]
    x = concatenate(parts, axis=axis) if len(parts) > 1 else x
    for _ in range(n):
        m = x.shape[axis]
        x = _slice(x, axis, 1, m) - _slice(x, axis, 0, m - 1)
    return x


def ediff1d(ary: ArrayLike, to_end: ArrayLike = None, to_begin: ArrayLike = None) -> Array:
    """The differences of the flattened array, with `to_begin` before and `to_end` after
    (flattened, in the array's type)."""
    x = ravel(asarray(ary))
    parts = [ravel(asarray(e).astype(x.dtype)) for e in (to_begin,) if e is not None]
    parts.append(x[1:] - x[:-1])
    parts += [ravel(asarray(e).astype(x.dtype)) for e in (to_end,) if e is not None]
    return concatenate(parts) if len(parts) > 1 else parts[0]


def result_type(*args: Any) -> np.dtype:
    """JAX's: the type that arrays and dtypes (strongly typed) and Python numbers and types
    (weakly typed) promote to together, by the rule every operation here follows."""
    from tenzr.transforms import eval_shape  # (transforms builds on this module)

    if not args:
        raise TenzrError("result_type needs at least one argument", user_location())
    operands = [ShapeDtype((), requested_dtype(a), weak_type=builtins.any(a is t for t in (int, float, complex)))
                if isinstance(a, (np.dtype, type, str)) else a for a in args]
    return np.dtype(eval_shape(lambda *xs: promote(*xs)[0], *operands).dtype)


def promote_types(type1: Any, type2: Any) -> np.dtype:
    """JAX's: the type two dtypes promote to (both strongly typed)."""
    return result_type(np.dtype(requested_dtype(type1)), np.dtype(requested_dtype(type2)))


def gradient(f: ArrayLike, *varargs: float, axis: Any = None, edge_order: int = 1) -> Any:
    """NumPy's gradient: central differences inside, one-sided at the ends, for each axis
    (a list, or one array for one axis); spacings are scalars (one, or one per axis)."""
    x = _float(f)
    axes = _axes(axis, x.ndim)
    if edge_order != 1:
        raise TenzrError(f"gradient: edge_order={edge_order} is not supported (only 1)", user_location())
    if len(varargs) not in (0, 1, len(axes)) or builtins.any(np.ndim(h) for h in varargs):
        raise TenzrError("gradient: give no spacing, one scalar, or one scalar per axis (coordinate arrays are not "
                         "supported)", user_location())
    spacings = list(varargs) * len(axes) if len(varargs) == 1 else list(varargs) or [1.0] * len(axes)
    out = []
    for ax, h in zip(axes, spacings, strict=True):
        n = x.shape[ax]
        if n < 2:
            raise TenzrError(f"gradient: axis {ax} has {n} entries; it needs at least 2", user_location())
        first = (_slice(x, ax, 1, 2) - _slice(x, ax, 0, 1)) / h
        last = (_slice(x, ax, n - 1, n) - _slice(x, ax, n - 2, n - 1)) / h
        inside = [(_slice(x, ax, 2, n) - _slice(x, ax, 0, n - 2)) / (2 * h)] if n > 2 else []
        out.append(concatenate([first, *inside, last], axis=ax))
    return out[0] if len(out) == 1 else out


def sinc(x: ArrayLike) -> Array:
    """sin(pi x) / (pi x), and 1 at 0. Near 0 (|pi x| < SINC_SERIES_BELOW) its Maclaurin
    series to t^12, whose derivatives at 0 are sin(t)/t's to the twelfth (JAX's are exact to
    any order; a `where` around 1 at 0 had them all 0: the second was 0, not -pi^2/3)."""
    x = _float(x)
    t = np.pi * x
    near = abs(t) < SINC_SERIES_BELOW
    safe = where(near, 1.0, t)
    tt = where(near, t * t, 0.0)  # (each branch sees x only where taken: far out the series overflowed,
    # and its zero cotangent times inf made the gradient NaN)
    series = tt * 0.0 + _SINC_SERIES[-1]
    for c in reversed(_SINC_SERIES[:-1]):
        series = series * tt + c
    return where(near, series, sin(safe) / safe)


SINC_SERIES_BELOW = 0.1
"""Where sin(t)/t's series to t^12 is within 2e-22 of it (its first term left out: t^14/15!)."""
_SINC_SERIES = tuple((-1) ** k / math.factorial(2 * k + 1) for k in range(7))
"""sin(t)/t = sum of _SINC_SERIES[k] t^(2k)."""


def real(x: ArrayLike) -> Array:
    """The real part (x itself for real x)."""
    x = asarray(x)
    return emit(T.real, x) if x.spec.is_complex else x


def imag(x: ArrayLike) -> Array:
    """The imaginary part (zeros for real x)."""
    x = asarray(x)
    return emit(T.imag, x) if x.spec.is_complex else x * 0


def conj(x: ArrayLike) -> Array:
    """The complex conjugate (x itself for real x)."""
    x = asarray(x)
    return emit(T.complex_, emit(T.real, x), -emit(T.imag, x)) if x.spec.is_complex else x


conjugate = conj


def angle(z: ArrayLike, deg: bool = False) -> Array:
    """The complex argument in (-pi, pi] (degrees with deg): 0 or pi for real numbers."""
    z = asarray(z)
    if z.spec.is_complex:
        out = arctan2(imag(z), real(z))
    else:
        x = _float(z)
        out = where(x < 0, np.asarray(np.pi, x.dtype), np.asarray(0.0, x.dtype))
    return out * (180 / np.pi) if deg else out


def iscomplex(x: ArrayLike) -> Array:
    """Elementwise: has a nonzero imaginary part."""
    x = asarray(x)
    return imag(x) != 0 if x.spec.is_complex else broadcast_to(asarray(False), x.shape)


def isreal(x: ArrayLike) -> Array:
    """Elementwise: has a zero imaginary part."""
    x = asarray(x)
    return imag(x) == 0 if x.spec.is_complex else broadcast_to(asarray(True), x.shape)


def _join_items(*items: ArrayLike, axis: int, ndmin: int, trans1d: int) -> Array:
    """The arrays of an r_/c_ expression, each raised to ndmin dims, joined along axis."""
    arrays = []
    for item in items:
        x = asarray(item)
        if x.ndim < ndmin:  # NumPy's rule: new dims in front, then the old ones moved to trans1d
            k2, k1 = ndmin - x.ndim, trans1d
            k1 = k1 + k2 + 1 if k1 < 0 else k1
            dims = list(range(ndmin))
            x = transpose(reshape(x, (1,) * k2 + x.shape), dims[:k1] + dims[k2:] + dims[k1:k2])
        arrays.append(x)
    return concatenate(list(promote(*arrays)), axis=axis)


class _IndexJoiner:
    """NumPy's and JAX's `r_` and `c_`: `tz.r_[x, 0:3, [7.0]]` joins arrays, scalars and
    slices (aranges; a complex step `0:1:5j` is a linspace of 5); a leading string
    "axis[,ndmin[,trans1d]]" sets how."""

    def __init__(self, name: str, axis: int, ndmin: int, trans1d: int):
        self.name, self.axis, self.ndmin, self.trans1d = name, axis, ndmin, trans1d

    def __getitem__(self, key: Any) -> Array:
        items = list(key) if isinstance(key, tuple) else [key]
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        if items and isinstance(items[0], str):
            directive = items.pop(0)
            try:
                numbers = [int(part) for part in directive.split(",")]
            except ValueError:
                numbers = []
            if not 1 <= len(numbers) <= 3:
                raise TenzrError(f"tz.{self.name}: directive {directive!r} is not supported (give "
                                 "'axis[,ndmin[,trans1d]]'; the matrix forms 'r' and 'c' are not)", user_location())
            axis, ndmin, trans1d = (numbers + [ndmin, trans1d][len(numbers) - 1:])[:3]
        arrays = [_slice_values(item, self.name) if isinstance(item, slice) else item for item in items]
        return _join(*arrays, axis=axis, ndmin=ndmin, trans1d=trans1d)


def _slice_values(item: slice, name: str) -> np.ndarray:
    start = 0 if item.start is None else item.start
    step = 1 if item.step is None else item.step
    if item.stop is None:
        raise TenzrError(f"tz.{name}: a slice needs a stop", user_location())
    if isinstance(step, complex):
        return np.linspace(start, item.stop, int(builtins.abs(step))).astype(default_float())
    whole = builtins.all(isinstance(v, (int, np.integer)) for v in (start, item.stop, step))
    return np.arange(start, item.stop, step, dtype=default_int() if whole else default_float())


_join = checked(_join_items, "tz.r_/c_")
r_ = _IndexJoiner("r_", 0, 1, -1)
c_ = _IndexJoiner("c_", -1, 2, 0)


# --------------------------------------------------------------------------- grids


def linspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True, dtype: Any = None,
             axis: int = 0) -> Array:
    """`num` evenly spaced values from start to stop (of the default float type, float32
    or float64 with jax_enable_x64, unless NumPy float arrays say otherwise)."""
    if not isinstance(start, Array) and not isinstance(stop, Array) and axis == 0:
        values = np.linspace(start, stop, num, endpoint=endpoint)
        typed = [np.asarray(v).dtype for v in (start, stop) if isinstance(v, (np.ndarray, np.generic))
                 and np.asarray(v).dtype.kind == "f"]
        name = dtype_name(dtype if dtype is not None else np.result_type(*typed) if typed else default_float())
        return constant(values.astype(numpy_dtype(name)), name)
    first, last = (_float(v) for v in promote(start, stop))
    steps = (num - 1) if endpoint else num
    fraction = np.arange(num, dtype=np.float64) / builtins.max(steps, 1)
    shape_ = [num] + [1] * first.ndim
    t = constant(fraction.reshape(shape_).astype(numpy_dtype(first.spec.dtype)), first.spec.dtype)
    out = first + (last - first) * t
    if endpoint and num > 1:
        out = concatenate([out[:-1], expand_dims(last, 0)], axis=0)
    out = moveaxis(out, 0, axis) if axis else out
    return out.astype(dtype) if dtype is not None else out


def meshgrid(*xi: ArrayLike, indexing: str = "xy", sparse: bool = False) -> list[Array]:
    """Coordinate arrays from 1-D coordinate vectors (`indexing` 'xy' or 'ij')."""
    if indexing not in ("xy", "ij"):
        raise TenzrError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}", user_location())
    arrays = [ravel(x) for x in xi]
    n = len(arrays)
    shapes = [a.shape[0] for a in arrays]
    if indexing == "xy" and n >= 2:
        shapes[0], shapes[1] = shapes[1], shapes[0]
    out = []
    for k, a in enumerate(arrays):
        position = (1 - k if k < 2 else k) if indexing == "xy" and n >= 2 else k
        view = [1] * n
        view[position] = a.shape[0]
        g = reshape(a, view)
        out.append(g if sparse else g * np.ones(shapes, numpy_dtype(g.spec.dtype)))
    return out


# --------------------------------------------------------------------------- products


def tensordot(a: ArrayLike, b: ArrayLike, axes: Any = 2, *, precision: Any = None,
              preferred_element_type: Any = None) -> Array:
    """Sums products over the last `axes` dimensions of a and the first of b, or over the
    dimension pairs `axes` = (a's, b's). `precision` and `preferred_element_type` as in `dot`."""
    return _preferred(_tensordot(a, b, axes), preferred_element_type)


def _tensordot(a: ArrayLike, b: ArrayLike, axes: Any) -> Array:
    a, b = promote(a, b)
    if isinstance(axes, (int, np.integer)):
        a_axes, b_axes = list(range(a.ndim - int(axes), a.ndim)), list(range(int(axes)))
    else:
        a_axes, b_axes = ([int(axes[0])] if isinstance(axes[0], (int, np.integer)) else list(axes[0]),
                          [int(axes[1])] if isinstance(axes[1], (int, np.integer)) else list(axes[1]))
    a_axes, b_axes = list(_axes(a_axes, a.ndim)), list(_axes(b_axes, b.ndim))
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    sa = [next(letters) for _ in range(a.ndim)]
    sb = [next(letters) for _ in range(b.ndim)]
    for i, j in zip(a_axes, b_axes, strict=True):
        sb[j] = sa[i]
    out = [c for d, c in enumerate(sa) if d not in a_axes] + [c for d, c in enumerate(sb) if d not in b_axes]
    return einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out)}", a, b)


def inner(a: ArrayLike, b: ArrayLike) -> Array:
    """The sum of products over the last axes."""
    a, b = promote(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return tensordot(a, b, ([-1], [-1]))


def kron(a: ArrayLike, b: ArrayLike) -> Array:
    """The Kronecker product."""
    a, b = promote(a, b)
    rank = builtins.max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (rank - a.ndim) + a.shape)
    b = reshape(b, (1,) * (rank - b.ndim) + b.shape)
    spread_a = reshape(a, [n for d in a.shape for n in (d, 1)])
    spread_b = reshape(b, [n for d in b.shape for n in (1, d)])
    return reshape(spread_a * spread_b, [m * n for m, n in zip(a.shape, b.shape, strict=True)])


def cross(a: ArrayLike, b: ArrayLike, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Array:
    """The cross product of 3-vectors (2-vectors give the z component), along `axis`."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote(a, b)
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise TenzrError("cross: the vectors must have 2 or 3 components", user_location())

    def part(x: Array, k: int) -> Array:
        return x[..., k] if k < x.shape[-1] else x[..., 0] * 0

    a0, a1, a2 = (part(a, k) for k in range(3))
    b0, b1, b2 = (part(b, k) for k in range(3))
    z = a0 * b1 - a1 * b0
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return z
    out = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, z], axis=-1)
    return moveaxis(out, -1, axisc)


# --------------------------------------------------------------------------- selection and statistics


def select(condlist: Sequence[ArrayLike], choicelist: Sequence[ArrayLike], default: ArrayLike = 0) -> Array:
    """The first choice whose condition holds, elementwise; `default` where none does."""
    if len(condlist) != len(choicelist):
        raise TenzrError(f"select: {len(condlist)} conditions for {len(choicelist)} choices", user_location())
    out = default
    for cond, choice in zip(reversed(condlist), reversed(choicelist), strict=True):
        out = where(cond, choice, out)
    return asarray(out)


def nan_to_num(x: ArrayLike, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Array:
    """NaN as `nan`, ±inf as `posinf` / `neginf` (default: the dtype's largest finite values)."""
    x = asarray(x)
    if not x.is_float:
        return x
    info = np.finfo(numpy_dtype(x.spec.dtype))
    high = float(info.max) if posinf is None else posinf
    low = float(info.min) if neginf is None else neginf
    x = where(isnan(x), nan, x)
    return where(isinf(x), where(x > 0, high, low), x)


def var(x: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0, keepdims: bool = False,
        *, where: Any = None, correction: int | None = None) -> Array:
    """Variance over `axis` (None: all) of the elements `where` picks, dividing by N - ddof
    (NaN where that is not positive, as JAX's; `correction` is the Array API's name for
    ddof); of |x - mean|², real, for complex x."""
    _no_out("var", out)
    ddof = _correction("var", ddof, correction)
    x = _float(x) if dtype is None else asarray(x).astype(dtype)
    if x.spec.dtype in HALF_TYPES:  # (computed in float32, as JAX's: the sum of squares may not fit)
        return var(x.astype(np.float32), axis, ddof=ddof, keepdims=keepdims, where=where).astype(x.dtype)
    centered = x - mean(x, axis, keepdims=True, where=where)
    if x.spec.is_complex:
        squares = real(centered) * real(centered) + imag(centered) * imag(centered)
    else:
        squares = centered * centered
    total = sum(squares, axis, keepdims=keepdims, where=where)
    # NaN where N - ddof <= 0, as JAX's (NumPy divides by max(N - ddof, 0)), and JAX's
    # derivative there: that of the division the NaN replaces (NaN for N = ddof, 0 past it).
    if where is None:
        count = math.prod(x.shape[a] for a in _axes(axis, x.ndim)) - ddof
        return total / float(count) if count > 0 else where_(True, np.nan, total / float(count))
    counted = (count_nonzero(broadcast_to(where, squares.shape), axis, keepdims=keepdims) - ddof).astype(total.dtype)
    return where_(counted <= 0, np.nan, total / counted)


def std(x: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0, keepdims: bool = False,
        *, where: Any = None, correction: int | None = None) -> Array:
    """Standard deviation over `axis` (None: all), as `var`. Where all values are equal (a
    single one, say) its derivative is 0, not sqrt's infinite slope at 0."""
    v = var(x, axis, dtype, out, ddof, keepdims, where=where, correction=correction)
    flat = v == 0
    return where_(flat, 0.0, sqrt(where_(flat, 1.0, v)))


def _correction(what: str, ddof: int, correction: int | None) -> int:
    if correction is None:
        return ddof
    if ddof:
        raise TenzrError(f"{what}: give ddof or correction, not both", user_location())
    return correction


def isclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Any:
    """|a - b| <= atol + rtol·|b|, elementwise (NumPy's own on concrete values)."""
    if current_trace() is None or not (isinstance(a, Array) or isinstance(b, Array)):
        return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    a, b = promote(a, b)
    close = abs(a - b) <= atol + rtol * abs(b)
    close = where(logical_or(isinf(a), isinf(b)), a == b, close)
    return where(logical_and(isnan(a), isnan(b)), equal_nan, close)


def allclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Any:
    """Whether every element is close (isclose)."""
    close = isclose(a, b, rtol, atol, equal_nan)
    return bool(np.all(close)) if not isinstance(close, Array) else all(close)


def array_equal(a1: ArrayLike, a2: ArrayLike, equal_nan: bool = False) -> Any:
    """Whether the arrays have one shape and equal elements."""
    if not isinstance(a1, Array) and not isinstance(a2, Array):
        return np.array_equal(a1, a2, equal_nan=equal_nan)
    if shape(a1) != shape(a2):
        return False
    same = asarray(a1) == asarray(a2)
    if equal_nan:
        same = logical_or(same, logical_and(isnan(asarray(a1)), isnan(asarray(a2))))
    return all(same)


def all(a: ArrayLike, axis: Any = None, out: None = None, keepdims: bool = False, *,  # noqa: A001 (NumPy's name)
        where: Any = None) -> Array:
    """Whether every element (along `axis`) that `where` picks is true."""
    _no_out("all", out)
    ones = asarray(a).astype(bool).astype(np.int32)
    return reduce_min(ones, axis, keepdims=keepdims, initial=1 if where is not None else None, where=where).astype(bool)


def any(a: ArrayLike, axis: Any = None, out: None = None, keepdims: bool = False, *,  # noqa: A001 (NumPy's name)
        where: Any = None) -> Array:
    """Whether some element (along `axis`) that `where` picks is true (none is, of no elements)."""
    _no_out("any", out)
    ones = asarray(a).astype(bool).astype(np.int32)
    return reduce_max(ones, axis, keepdims=keepdims, initial=0, where=where).astype(bool)


def empty(shape: Any, dtype: Any = None) -> Array:
    """NumPy's `empty`, as JAX's: zeros (a traced array is never left uninitialized)."""
    return zeros(shape, dtype)


def identity(n: int, dtype: Any = None) -> Array:
    """The n x n identity matrix."""
    return eye(n, dtype=dtype)


def count_nonzero(a: ArrayLike, axis: Any = None, keepdims: bool = False) -> Array:
    """How many elements (along `axis`) are not zero, as the default int."""
    return sum(asarray(a) != 0, axis, dtype=default_int(), keepdims=keepdims)


def nansum(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Array:
    """`sum` with NaNs counted as zero."""
    a = asarray(a)
    return sum(where_(isnan(a), 0, a), axis, dtype, out, keepdims, initial, where)


def nanprod(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
            initial: Any = None, where: Any = None) -> Array:
    """`prod` with NaNs counted as one."""
    a = asarray(a)
    return prod(where_(isnan(a), 1, a), axis, dtype, out, keepdims, initial, where)


def nanmean(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False, *,
            where: Any = None) -> Array:
    """The mean of the elements that are not NaN (and that `where` picks; NaN where there
    are none)."""
    _no_out("nanmean", out)
    a = _float(a)
    present = ~isnan(a) if where is None else logical_and(~isnan(a), where)
    total = sum(where_(present, a, 0), axis, keepdims=keepdims)
    result = total / sum(present, axis, dtype=a.dtype, keepdims=keepdims)
    return result.astype(dtype) if dtype is not None else result


def _nan_extreme(a: ArrayLike, axis: Any, out: None, keepdims: bool, initial: Any, mask: Any, largest: bool) -> Array:
    a = asarray(a)
    extreme = reduce_max if largest else reduce_min
    if not (a.is_float or a.spec.is_complex):  # (integers have no NaNs: their own type, as JAX's)
        return extreme(a, axis, out, keepdims, initial, mask)
    best = extreme(where(isnan(a), -np.inf if largest else np.inf, a), axis, out, keepdims, initial, mask)
    present = ~isnan(a) if mask is None else logical_and(~isnan(a), mask)
    return where(any(present, axis, keepdims=keepdims) | (initial is not None), best, np.nan)


def nanmax(a: ArrayLike, axis: Any = None, out: None = None, keepdims: bool = False, initial: Any = None,
           where: Any = None) -> Array:
    """`max` ignoring NaNs (NaN where all are NaN, unless there is an `initial`)."""
    return _nan_extreme(a, axis, out, keepdims, initial, where, largest=True)


def nanmin(a: ArrayLike, axis: Any = None, out: None = None, keepdims: bool = False, initial: Any = None,
           where: Any = None) -> Array:
    """`min` ignoring NaNs (NaN where all are NaN, unless there is an `initial`)."""
    return _nan_extreme(a, axis, out, keepdims, initial, where, largest=False)


def average(a: ArrayLike, axis: Any = None, weights: ArrayLike = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    """The (weighted) mean along `axis`; with `returned`, also the sum of the weights.
    1-D weights along one `axis` are NumPy's too."""
    a = _float(a)
    if weights is None:
        average_ = mean(a, axis, keepdims=keepdims)
        scale = asarray(a.size / builtins.max(average_.size, 1)).astype(average_.dtype)
    else:
        w = asarray(weights)
        if w.shape != a.shape:
            if not isinstance(axis, int) or w.ndim != 1 or w.shape[0] != a.shape[axis]:
                raise TenzrError(f"average: weights of shape {list(w.shape)} need the shape of a {list(a.shape)}, or "
                                 "one dim along an int axis", user_location())
            w = reshape(w, [w.shape[0] if d == axis % a.ndim else 1 for d in range(a.ndim)])
        scale = sum(broadcast_to(w, a.shape), axis, keepdims=keepdims)
        average_ = sum(a * w, axis, keepdims=keepdims) / scale
    return (average_, broadcast_to(scale, average_.shape)) if returned else average_


def vdot(a: ArrayLike, b: ArrayLike) -> Array:
    """sum(conj(a) * b) over the flattened arrays."""
    return sum(conj(ravel(a)) * ravel(b))


def logspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True, base: ArrayLike = 10.0,
             dtype: Any = None, axis: int = 0) -> Array:
    """base ** linspace(start, stop, num)."""
    out = power(base, linspace(start, stop, num, endpoint, axis=axis))
    return out.astype(dtype) if dtype is not None else out


def heaviside(x1: ArrayLike, x2: ArrayLike) -> Array:
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0 (NaN stays NaN)."""
    x1, x2 = promote(_float(x1), x2)
    return where(x1 < 0, 0, where(x1 > 0, 1, where(isnan(x1), x1, x2)))


def polyval(p: ArrayLike, x: ArrayLike) -> Array:
    """The polynomial with coefficients p (highest power first) at x, by Horner's rule."""
    p, x = asarray(p), asarray(x)
    y = zeros(np.broadcast_shapes(x.shape, p.shape[1:]), promote(p, x)[0].dtype)
    for k in range(p.shape[0]):
        y = y * x + p[k]
    return y


def _indices_array(values: np.ndarray) -> Array:
    return asarray(values.astype(numpy_dtype(dtype_name(default_int()))))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """The (rows, columns) of the upper triangle of an n x m matrix, from diagonal k."""
    return tuple(_indices_array(i) for i in np.triu_indices(n, k, m))  # type: ignore[return-value]


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """The (rows, columns) of the lower triangle of an n x m matrix, to diagonal k."""
    return tuple(_indices_array(i) for i in np.tril_indices(n, k, m))  # type: ignore[return-value]


def triu_indices_from(arr: ArrayLike, k: int = 0) -> tuple[Array, Array]:
    """`triu_indices` of a matrix's shape."""
    rows, columns = shape(arr)[-2:]
    return triu_indices(rows, k, columns)


def tril_indices_from(arr: ArrayLike, k: int = 0) -> tuple[Array, Array]:
    """`tril_indices` of a matrix's shape."""
    rows, columns = shape(arr)[-2:]
    return tril_indices(rows, k, columns)


def diag_indices(n: int, ndim: int = 2) -> tuple[Array, ...]:
    """`ndim` copies of arange(n): the indices of a main diagonal."""
    return tuple(_indices_array(i) for i in np.diag_indices(n, ndim))


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: bool = False) -> Any:
    """An array of the index grid of `dimensions` (one slice per dim), or with `sparse` the
    broadcastable per-dim index arrays."""
    kind = numpy_dtype(dtype_name(default_int() if dtype is None else dtype))
    if sparse:
        return tuple(asarray(g.astype(kind)) for g in np.indices(tuple(dimensions), sparse=True))
    return asarray(np.indices(tuple(dimensions)).astype(kind))


def unravel_index(indices: ArrayLike, shape: Sequence[int]) -> tuple[Array, ...]:
    """The coordinates in an array of `shape` of flat `indices`; as JAX's, negative indices
    count from the end and out-of-range ones are clipped."""
    index = asarray(indices)
    total = math.prod(shape)
    index = clip(where(index < 0, index + total, index), 0, builtins.max(total - 1, 0))
    coordinates: list[Array] = []
    for size_ in reversed(tuple(shape)):
        coordinates.append(remainder(index, size_))
        index = floor_divide(index, size_)
    return tuple(reversed(coordinates))


def searchsorted(a: ArrayLike, v: ArrayLike, side: str = "left", sorter: ArrayLike = None) -> Array:
    """Where each of v would go in the sorted 1-D array a to keep it sorted: after the equal
    elements with side="right". (It compares every v with every element of a.)"""
    if side not in ("left", "right"):
        raise TenzrError(f"searchsorted: side must be 'left' or 'right', got {side!r}", user_location())
    a, v = promote(a, v)
    if a.ndim != 1:
        raise TenzrError(f"searchsorted: a must be 1-D, got shape {list(a.shape)}", user_location())
    if sorter is not None:
        a = take(a, sorter, mode="promise_in_bounds")
    before = a < v[..., None] if side == "left" else a <= v[..., None]
    return sum(before, -1, dtype=default_int())


def interp(x: ArrayLike, xp: ArrayLike, fp: ArrayLike, left: ArrayLike = None, right: ArrayLike = None,
           period: ArrayLike = None) -> Array:
    """Piecewise-linear interpolation of the points (xp, fp), xp increasing; fp[0] (or
    `left`) below xp[0], fp[-1] (or `right`) above xp[-1]."""
    if period is not None:
        raise TenzrError("interp: period is not supported", user_location())
    x, xp, fp = _float(x), _float(xp), _float(fp)
    i = clip(searchsorted(xp, x, side="right"), 1, xp.shape[0] - 1)
    x0, x1, f0, f1 = (take(v, j, mode="promise_in_bounds") for v, j in ((xp, i - 1), (xp, i), (fp, i - 1), (fp, i)))
    step = x1 - x0
    slope = where(step == 0, 0, (f1 - f0) / where(step == 0, 1, step))
    out = where(step == 0, f1, f0 + slope * (x - x0))
    out = where(x < xp[0], fp[0] if left is None else left, out)
    return where(x > xp[-1], fp[-1] if right is None else right, out)


_QUANTILE_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def quantile(a: ArrayLike, q: ArrayLike, axis: Any = None, method: str = "linear", keepdims: bool = False,
             *, interpolation: str | None = None) -> Array:
    """The q-th quantiles (q in [0, 1], a number or a 1-d array, whose dims come first)
    along `axis` (None: all), NaN where there is a NaN; between sorted values as `method`
    says (see `_quantile`)."""
    return _quantile("quantile", a, q, axis, interpolation or method, keepdims, squash_nans=False)


def _quantile(what: str, a: ArrayLike, q: ArrayLike, axis: Any, method: str, keepdims: bool, *,
              squash_nans: bool) -> Array:
    """quantile's and nanquantile's body, as JAX's `_quantile`: the values along `axis`
    sorted, q placed at q * (count - 1) among them, count the number of values (with
    `squash_nans` those that are not NaN, else all: any NaN makes the result NaN), and
    between the two values around that place "linear" interpolates, "lower" and "higher"
    take one, "nearest" the nearer (the lower at a tie, as JAX's), "midpoint" their mean."""
    if method not in _QUANTILE_METHODS:
        raise TenzrError(f"{what}: method must be one of {', '.join(_QUANTILE_METHODS)}, got {method!r}",
                         user_location())
    a = _float(a)
    if a.spec.is_complex:
        raise TenzrError(f"{what}: complex arrays are not supported (they have no order)", user_location())
    q = asarray(q).astype(a.dtype)
    if q.ndim > 1:
        raise TenzrError(f"{what}: q must be a number or 1-d, got shape {q.shape}", user_location())
    axes = _axes(axis, a.ndim)
    kept = a.ndim - len(axes)
    moved = moveaxis(a, axes, tuple(range(kept, a.ndim)))
    ordered = sort(reshape(moved, (*moved.shape[:kept], -1)), axis=-1)  # (NaNs last)
    if squash_nans:
        count = sum(logical_not(isnan(ordered)), -1, dtype=a.dtype)
    else:
        ordered = where(any(isnan(ordered), axis=-1, keepdims=True), np.nan, ordered)
        count = full(ordered.shape[:-1], ordered.shape[-1], a.dtype)
    position = reshape(q, q.shape + (1,) * kept) * (count - 1)  # [*q dims, *kept dims]
    low, high = floor(position), ceil(position)
    weight = position - low
    ordered = broadcast_to(ordered, q.shape + ordered.shape)

    def at(i: Array) -> Array:
        i = clip(i, 0, maximum(count - 1, 0)).astype(np.int32)
        return take_along_axis(ordered, expand_dims(i, -1), -1, mode="promise_in_bounds")[..., 0]

    lo, hi = at(low), at(high)
    if method == "linear":
        result = lo * (1 - weight) + hi * weight
    elif method == "lower":
        result = lo
    elif method == "higher":
        result = hi
    elif method == "nearest":
        result = where(weight <= 0.5, lo, hi)
    else:
        result = (lo + hi) * 0.5
    if keepdims:
        result = reshape(result, (*q.shape, *(1 if d in axes else a.shape[d] for d in range(a.ndim))))
    return result


def percentile(a: ArrayLike, q: ArrayLike, axis: Any = None, method: str = "linear", keepdims: bool = False,
               *, interpolation: str | None = None) -> Array:
    """`quantile` with q in percent."""
    return quantile(a, asarray(q) / 100.0, axis, method, keepdims, interpolation=interpolation)


def median(a: ArrayLike, axis: Any = None, keepdims: bool = False) -> Array:
    """The middle value along `axis` (the mean of the two middle ones for an even count)."""
    return quantile(a, 0.5, axis, "midpoint", keepdims)


def cov(m: ArrayLike, y: ArrayLike = None, rowvar: bool = True, bias: bool = False, ddof: int | None = None,
        fweights: ArrayLike = None, aweights: ArrayLike = None) -> Array:
    """The covariance matrix of the variables in m's rows (columns with rowvar=False),
    dividing by N - 1 (N with `bias`, or N - ddof). Frequency and analytic weights are not
    supported."""
    if fweights is not None or aweights is not None:
        raise TenzrError("cov: fweights and aweights are not supported", user_location())
    x = atleast_2d(_float(m))
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if y is not None:
        other = atleast_2d(_float(y))
        if not rowvar and other.shape[0] != 1:
            other = other.T
        x = concatenate(promote(x, other), axis=0)
    ddof = (0 if bias else 1) if ddof is None else ddof
    centered = x - mean(x, axis=1, keepdims=True)
    c = matmul(centered, conj(centered).T) / float(builtins.max(x.shape[1] - ddof, 0))
    return c[0, 0] if c.shape == (1, 1) else c


def corrcoef(x: ArrayLike, y: ArrayLike = None, rowvar: bool = True) -> Array:
    """Pearson correlation coefficients (the covariance scaled by the standard deviations)."""
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return c / c
    d = sqrt(diagonal(c))
    r = c / outer(d, d)
    return r if r.spec.is_complex else clip(r, -1, 1)


def bincount(x: ArrayLike, weights: ArrayLike = None, minlength: int = 0, *, length: int | None = None) -> Array:
    """How often each value 0, 1, ... occurs in the 1-D non-negative ints x (summing
    `weights` instead of ones). As JAX's, the output length must be known while tracing:
    `length` (values at or beyond it are dropped)."""
    if length is None:
        raise TenzrError("bincount: pass length= (the number of bins must be known while tracing, as in JAX)",
                         user_location())
    x = asarray(x)
    values = broadcast_to(asarray(1, default_int()) if weights is None else asarray(weights), x.shape)
    hits = x[..., None] == arange(builtins.max(length, minlength), dtype=x.dtype)
    return sum(where(hits, values[..., None], 0), axis=tuple(range(x.ndim)))


_NEEDS_SIZE = ("pass size= (the number of results depends on the values, and must be known while tracing, as in "
               "JAX under jit)")


def _sized(what: str, size: int | None) -> int:
    if size is None:
        raise TenzrError(f"{what}: {_NEEDS_SIZE}", user_location())
    if int(size) < 0:
        raise TenzrError(f"{what}: size must not be negative, got {size}", user_location())
    return int(size)


def _first_true(mask: Array, size: int) -> Array:
    """The flat positions of mask's first `size` true entries, in order, padded with
    mask.size."""
    flat = reshape(mask, (-1,))
    order = argsort(flat.astype(np.int32), descending=True)  # (stable: the true ones first, in order)
    if size > flat.size:
        order = concatenate([order, full((size - flat.size,), flat.size, order.dtype)])
    count = sum(flat, dtype=order.dtype)
    found = order[:size]
    return where(arange(size, dtype=order.dtype) < count, found, flat.size)


def _nonzero_sized(a: ArrayLike, fill_value: Any, size: int) -> tuple[tuple, tuple, Array]:
    """nonzero's body for `_sized_or_all`: (coordinates, (), how many entries are nonzero)."""
    a = asarray(a)
    if a.ndim == 0:
        raise TenzrError("nonzero: takes arrays of at least one dimension, as NumPy's", user_location())
    found = _first_true(a != 0, size)
    fills = (0,) * a.ndim if fill_value is None else tuple(np.broadcast_to(np.asarray(fill_value), (a.ndim,)))
    coordinates = unravel_index(found, a.shape)
    present = found < a.size
    return (tuple(where(present, c, asarray(f).astype(c.dtype)) for c, f in zip(coordinates, fills, strict=True)),
            (), count_nonzero(a))


def _sized_or_all(what: str, size: int | None, bound: int, body: Callable[..., Any], *args: Any) -> tuple[tuple, tuple]:
    """The arrays of `body(*args, size)`, a function of data-dependent size, as
    (sized, whole): body returns (sized, whole, count), `sized` the arrays of `size`
    entries (the first `count` found, then fills; None for one not asked for), `whole` the
    others. Inside a trace `size` must be given, as in JAX under jit; outside one (an eager
    call) it may be left out: body then runs at `bound`, at least any count, and `sized` is
    cut to what it found."""
    if size is None and current_trace() is None:
        sized, whole, count = body(*args, bound)
        return tuple(None if x is None else x[:int(count)] for x in sized), whole
    sized, whole, _ = body(*args, _sized(what, size))
    return sized, whole


def _sorted_runs(flat: Array, equal_nan: bool) -> tuple[Array, Array, Array]:
    """flat (1-d) sorted stably, where in flat each entry was, and which entries start a run
    of equal ones (NaNs equal with equal_nan)."""
    order = argsort(flat)
    ordered = take(flat, order, mode="promise_in_bounds")
    # (each entry against the one before, the first against the last and overruled)
    before = roll(ordered, 1)
    new = ordered != before
    if equal_nan and (flat.is_float or flat.spec.is_complex):
        new = logical_and(new, ~logical_and(isnan(ordered), isnan(before)))
    return ordered, order, logical_or(new, arange(flat.size) == 0)


def _picked(x: Array, found: Array, fill_value: Any) -> Array:
    """x at `found` (positions from _first_true, x.size where none was found) and
    fill_value where none was: by default the first one picked (the smallest, of a sorted
    result), or 0 if none was, as JAX's."""
    present = found < x.size
    got = take(x, where(present, found, 0), mode="promise_in_bounds") if x.size else zeros(found.shape, x.dtype)
    if fill_value is None:
        fill_value = where(present[0], got[0], 0) if found.size else 0
    return where(present, got, asarray(fill_value).astype(x.dtype))


def _unique_sized(ar: ArrayLike, equal_nan: bool, fill_value: Any, wanted: tuple[bool, bool, bool],
                  size: int) -> tuple[tuple, tuple, Array]:
    """unique's body for `_sized_or_all`: ((values, first indices, counts), (inverse,),
    how many distinct values), the indices, inverse and counts None unless `wanted`."""
    a = asarray(ar)
    flat = reshape(a, (-1,))
    if flat.size == 0:
        return _unique_of_nothing(a, size, fill_value, wanted)
    ordered, order, starts = _sorted_runs(flat, equal_nan)
    bounds = _first_true(starts, size + 1)  # (where each value's run of equal elements starts, and the next's)
    found = bounds[:size]
    present = found < flat.size
    index = _picked(order, found, None) if wanted[0] else None  # (the fill reads the smallest's, as JAX's)
    inverse = None
    if wanted[1]:
        group = cumsum(starts.astype(order.dtype)) - 1  # (each sorted element's value, counted)
        inverse = reshape(zeros(flat.shape, order.dtype).at[order].set(group), a.shape)
    counts = where(present, bounds[1:] - found, 0) if wanted[2] else None
    count = sum(starts, dtype=order.dtype)
    return (_picked(ordered, found, fill_value), index, counts), (inverse,), count


def _unique_of_nothing(a: Array, size: int, fill_value: Any, wanted: tuple[bool, bool, bool]) -> tuple:
    """unique of an empty array, as JAX's: `size` fill values, and empty indices, inverse
    and counts."""
    if fill_value is None and size:
        raise TenzrError("unique: an empty array with size > 0 needs a fill_value", user_location())
    values = full((size,), 0 if fill_value is None else fill_value, a.dtype)
    nothing = zeros((0,), default_int())
    index, inverse, counts = (x if w else None for x, w in zip((nothing, reshape(nothing, a.shape), nothing), wanted,
                                                                strict=True))
    return (values, index, counts), (inverse,), zeros((), default_int())


_unique_call = checked(_unique_sized, "tz.unique")
_nonzero_call = checked(_nonzero_sized, "tz.nonzero")


# --------------------------------------------------------------------------- insertion, deletion and placement


def _tile_to_size(x: Array, size: int) -> Array:
    """A 1-D array repeated, then cut, to `size` entries (JAX's rule for too few values)."""
    if x.shape[0] < size:
        x = tile(x, -(-size // x.shape[0]))
    return x[:size] if x.shape[0] > size else x


def _not_in_place(what: str, inplace: bool) -> None:
    if inplace:
        raise TenzrError(f"{what}: tenzr arrays are immutable and cannot be changed in place; pass inplace=False for "
                         "the updated array (as JAX requires)", user_location())


def insert(arr: ArrayLike, obj: Any, values: ArrayLike, axis: int | None = None) -> Array:
    """`values` inserted before the indices `obj` (an int, a slice, or 1-D ints, traced ones
    too) along `axis` (the flattened array when None), in arr's dtype, as JAX's: one index
    takes all of values (moved to `axis` when obj is a scalar); several take one entry each
    (values broadcast to them), those at equal indices in order."""
    a = asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    (axis,) = _axes(axis, a.ndim)
    n_input = a.shape[axis]
    if isinstance(obj, builtins.slice):
        obj = np.arange(*obj.indices(n_input))
    indices = obj if isinstance(obj, Array) else np.asarray(obj)
    if indices.ndim > 1:
        raise TenzrError(f"insert: obj must be a slice, a 1-D array or a scalar, got shape {list(indices.shape)}",
                         user_location())
    if np.dtype(indices.dtype).kind not in "iu":
        if indices.size or isinstance(obj, Array):
            raise TenzrError(f"insert: the indices must be integers, got {indices.dtype}", user_location())
        indices = np.zeros(0, np.int32)
    given = asarray(values).astype(a.dtype)
    values_ = reshape(given, (1,) * (a.ndim - given.ndim) + given.shape)
    if indices.ndim == 0:
        values_ = moveaxis(values_, 0, axis)
    n_insert = values_.shape[axis] if indices.size == 1 else indices.shape[0]
    if values_.shape[axis] not in (1, n_insert):
        raise TenzrError(f"insert: {n_insert} indices for {values_.shape[axis]} values along axis {axis}",
                         user_location())
    target = (*a.shape[:axis], n_insert, *a.shape[axis + 1:])
    try:
        np.broadcast_shapes(values_.shape, target)
    except ValueError:
        raise TenzrError(f"insert: values of shape {list(given.shape)} do not fit {list(target)}",
                         user_location()) from None
    joined = concatenate([a, broadcast_to(values_, target)], axis=axis)
    return take(joined, _insert_sources(indices, n_insert, n_input), axis=axis, mode="promise_in_bounds")


def _insert_sources(indices: Any, n_insert: int, n_input: int) -> Array:
    """Where each entry of insert's result comes from among arr's entries followed by the
    values': each value goes to its index (clipped to the axis, negative ones from the end)
    plus the number of values sorted before it (stably), arr's entries to the places left.
    NumPy computes them for indices known while tracing."""
    if isinstance(indices, Array):
        indices = broadcast_to(clip(where(indices < 0, indices + n_input, indices), 0, n_input), (n_insert,))
        values_at = indices.at[argsort(indices)].add(arange(n_insert, dtype=indices.dtype))
        arr_at = _first_true(full((n_input + n_insert,), True).at[values_at].set(False), n_input)
        return argsort(concatenate([arr_at.astype(values_at.dtype), values_at]))
    indices = np.broadcast_to(np.clip(np.where(indices < 0, indices + n_input, indices), 0, n_input), (n_insert,))
    values_at = indices + np.argsort(np.argsort(indices, kind="stable"), kind="stable")
    free = np.ones(n_input + n_insert, bool)
    free[values_at] = False
    return _indices_array(np.argsort(np.concatenate([np.flatnonzero(free), values_at])))


def delete(arr: ArrayLike, obj: Any, axis: int | None = None, *, assume_unique_indices: bool = False) -> Array:
    """arr without the entries `obj` picks along `axis` (the flattened array when None), as
    JAX's: obj is an int, a slice, a boolean mask of the axis, or ints known while tracing;
    traced ints need assume_unique_indices=True (then negative ones count from the end and
    the others clip to the axis)."""
    a = asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    (axis,) = _axes(axis, a.ndim)
    n = a.shape[axis]
    if not isinstance(obj, Array):
        try:
            position = operator.index(obj)
        except TypeError:
            pass
        else:
            if not -n <= position < n:
                raise TenzrError(f"delete: index {position} is out of bounds for an axis of {n}", user_location())
            position %= n
            return concatenate([_slice(a, axis, 0, position), _slice(a, axis, position + 1, n)], axis=axis)
    if isinstance(obj, builtins.slice):
        return take(a, np.delete(np.arange(n), obj), axis=axis)
    if isinstance(obj, Array) and not assume_unique_indices:
        raise TenzrError("delete: a traced obj needs assume_unique_indices=True (the result's size must be known "
                         "while tracing, as in JAX)", user_location())
    if assume_unique_indices:
        return _delete_unique(a, asarray(obj), axis)
    picked = np.asarray(obj)
    keep = np.ones(n, bool)
    if picked.dtype == np.bool_:
        if picked.shape != (n,):
            raise TenzrError(f"delete: a boolean obj must be 1-D with the axis's length {n}, got shape "
                             f"{list(picked.shape)}", user_location())
        keep = ~picked
    elif picked.dtype.kind in "iu":
        if picked.size and not ((picked >= -n) & (picked < n)).all():
            raise TenzrError(f"delete: indices {picked.tolist()} are out of bounds for an axis of {n}",
                             user_location())
        keep[picked] = False
    else:
        raise TenzrError(f"delete: obj must be integers or booleans, got {picked.dtype}", user_location())
    return take(a, np.flatnonzero(keep), axis=axis)


def _delete_unique(a: Array, obj: Array, axis: int) -> Array:
    """JAX's delete of unique (possibly traced) integer indices: each kept entry's position,
    found by counting the deleted ones at or before it."""
    if np.dtype(obj.dtype).kind not in "iu":
        raise TenzrError(f"delete: with assume_unique_indices=True obj must be integers, got {obj.dtype}",
                         user_location())
    n = a.shape[axis]
    gone = ravel(obj)
    if gone.size > n:
        raise TenzrError(f"delete: {gone.size} indices to delete from an axis of {n}", user_location())
    gone = sort(clip(where(gone < 0, gone + n, gone), 0, n))
    gone = gone - arange(gone.size, dtype=gone.dtype)
    kept = arange(n - gone.size, dtype=gone.dtype)
    kept = kept + sum(kept[None, :] >= gone[:, None], axis=0, dtype=kept.dtype)
    return take(a, kept, axis=axis, mode="promise_in_bounds")


def _compressed(condition: ArrayLike, a: ArrayLike, axis: int | None, fill_value: ArrayLike, size: int) -> Array:
    """compress's body, for `size` results."""
    keep = asarray(condition).astype(bool)
    if keep.ndim != 1:
        raise TenzrError(f"compress: the condition must be 1-D, got shape {list(keep.shape)}", user_location())
    x = ravel(a) if axis is None else moveaxis(a, axis, 0)
    keep, x = keep[:x.shape[0]], x[:keep.shape[0]]
    if not 0 <= size <= x.shape[0]:
        raise TenzrError(f"compress: size must be in [0, {x.shape[0]}] (the length of the axis the condition "
                         f"covers), got {size}", user_location())
    x = where(reshape(keep, (-1,) + (1,) * (x.ndim - 1)), x, asarray(fill_value).astype(x.dtype))
    order = argsort(keep.astype(np.int32), stable=True, descending=True)
    out = take(x, order[:size], axis=0, mode="promise_in_bounds")
    return out if axis is None else moveaxis(out, 0, axis)


def place(arr: ArrayLike, mask: ArrayLike, vals: ArrayLike, *, inplace: bool = True) -> Array:
    """JAX's (inplace=False is required): arr with the entries where mask (of arr's size) is
    true set to vals in order, vals repeated when too few."""
    _not_in_place("place", inplace)
    data, picked, values = asarray(arr), asarray(mask), ravel(vals)
    if data.size != picked.size:
        raise TenzrError(f"place: arr and mask must have one size, got {data.size} and {picked.size}",
                         user_location())
    if values.size == 0:
        raise TenzrError("place: cannot place values from an empty array", user_location())
    if data.size == 0:
        return data
    found = _first_true(picked.astype(bool), picked.size)
    return reshape(ravel(data).at[found].set(_tile_to_size(values, picked.size), mode="drop"), data.shape)


def put(a: ArrayLike, ind: ArrayLike, v: ArrayLike, mode: str | None = None, *, inplace: bool = True) -> Array:
    """JAX's (inplace=False is required): a with v written at the flat indices `ind`, v
    repeated when too few. Out-of-range indices, as JAX reads them: by default negative
    ones from -size count from the end and the rest clamp (`unravel_index`); "clip" clamps
    all to [0, size); "wrap" takes them modulo the size."""
    _not_in_place("put", inplace)
    x, indices, values = asarray(a), ravel(ind), ravel(v)
    if mode not in (None, "clip", "wrap"):
        raise TenzrError(f"put: mode must be None, 'clip' or 'wrap', got {mode!r}", user_location())
    if not x.size or not indices.size or not values.size:
        return x
    values = _tile_to_size(values, indices.size)
    if mode == "clip":
        indices = clip(indices, 0, x.size - 1)
    elif mode == "wrap":
        indices = remainder(indices, x.size)
    return x.at[unravel_index(indices, x.shape)].set(values)


def put_along_axis(arr: ArrayLike, indices: ArrayLike, values: ArrayLike, axis: int | None,
                   inplace: bool = True, *, mode: str | None = None) -> Array:
    """JAX's (inplace=False is required): arr with `values` (broadcast to indices) written
    where take_along_axis would read; `mode` as in `x.at[...].set`."""
    _not_in_place("put_along_axis", inplace)
    x, idx = asarray(arr), _index_array(indices)
    flat = axis is None
    if flat:
        x, axis = ravel(x), 0
    if x.ndim != idx.ndim:
        raise TenzrError(f"put_along_axis: arr and indices must have one rank, got {x.ndim} and {idx.ndim}",
                         user_location())
    (axis,) = _axes(axis, x.ndim)
    updates = asarray(values)
    try:
        np.broadcast_shapes(updates.shape, idx.shape)
    except ValueError:
        raise TenzrError(f"put_along_axis: values of shape {list(updates.shape)} do not broadcast to the indices' "
                         f"{list(idx.shape)}", user_location()) from None
    grid: list[Any] = list(np.indices(x.shape, sparse=True))
    grid[axis] = idx
    out = x.at[tuple(grid)].set(broadcast_to(updates, idx.shape), mode=mode)
    return reshape(out, shape(arr)) if flat else out


def fill_diagonal(a: ArrayLike, val: ArrayLike, wrap: bool = False, *, inplace: bool = True) -> Array:
    """JAX's (inplace=False is required; wrap is not supported): a with its main diagonal
    (all indices equal) set to val, a scalar or values taken in order and repeated."""
    _not_in_place("fill_diagonal", inplace)
    if wrap:
        raise TenzrError("fill_diagonal: wrap=True is not supported (as in JAX)", user_location())
    x, value = asarray(a), asarray(val)
    if x.ndim < 2:
        raise TenzrError(f"fill_diagonal: the array must have at least 2 dimensions, got {x.ndim}", user_location())
    if x.ndim > 2 and len(set(x.shape)) != 1:
        raise TenzrError(f"fill_diagonal: all dimensions must be equal, got {list(x.shape)}", user_location())
    n = builtins.min(x.shape)
    return x.at[np.diag_indices(n, x.ndim)].set(value if value.ndim == 0 else _tile_to_size(ravel(value), n))


# --------------------------------------------------------------------------- bits


def _bit_order(what: str, bitorder: str) -> np.ndarray:
    """The bit each of a byte's 8 places stands for, first to last."""
    if bitorder not in ("big", "little"):
        raise TenzrError(f"{what}: bitorder must be 'big' or 'little', got {bitorder!r}", user_location())
    bits = np.left_shift(np.uint8(1), np.arange(8, dtype=np.uint8))
    return bits[::-1] if bitorder == "big" else bits


def packbits(a: ArrayLike, axis: int | None = None, bitorder: str = "big") -> Array:
    """Whether each element is nonzero, 8 to a uint8, along `axis` (the flattened array
    when None; a last byte short of 8 is padded with zeros); the first one in the top bit
    with bitorder "big", in the bottom one with "little"."""
    x = asarray(a)
    if np.dtype(x.dtype).kind not in "biu":
        raise TenzrError(f"packbits: takes integers or booleans, got {x.dtype}", user_location())
    bits = _bit_order("packbits", bitorder)
    x = (x != 0).astype(np.uint8)
    if axis is None:
        x, axis = ravel(x), 0
    x = swapaxes(x, axis, -1)
    if x.shape[-1] % 8:
        x = pad(x, [(0, 0)] * (x.ndim - 1) + [(0, 8 - x.shape[-1] % 8)])
    x = reshape(x, (*x.shape[:-1], x.shape[-1] // 8, 8))
    return swapaxes(sum(x * bits, axis=-1, dtype=np.uint8), axis, -1)


def unpackbits(a: ArrayLike, axis: int | None = None, count: int | None = None, bitorder: str = "big") -> Array:
    """The bits of uint8 elements as uint8 0s and 1s, 8 per element along `axis` (the
    flattened array when None), in `bitorder` as in packbits; `count` keeps that many of
    them (padding with zeros past the end; negative: drops that many)."""
    x = asarray(a)
    if x.dtype != np.uint8:
        raise TenzrError(f"unpackbits: takes uint8, got {x.dtype}", user_location())
    bits = _bit_order("unpackbits", bitorder)
    if axis is None:
        x, axis = ravel(x), 0
    x = swapaxes(x, axis, -1)
    unpacked = ((x[..., None] & bits) > 0).astype(np.uint8)
    unpacked = reshape(unpacked, (*unpacked.shape[:-2], -1))
    if count is not None:
        if count > unpacked.shape[-1]:
            unpacked = pad(unpacked, [(0, 0)] * (unpacked.ndim - 1) + [(0, count - unpacked.shape[-1])])
        else:
            unpacked = unpacked[..., :count]
    return swapaxes(unpacked, axis, -1)


# --------------------------------------------------------------------------- index tricks


def _grid_arrays(key: Any, name: str, sparse: bool) -> Any:
    """mgrid's and ogrid's arrays of slices (start:stop:step an arange, a complex step a
    linspace of that many), in one dtype: the default float if any is a float, else the
    default int."""
    items = key if isinstance(key, tuple) else (key,)
    if not builtins.all(isinstance(item, builtins.slice) for item in items):
        raise TenzrError(f"tz.{name}: index it with slices, as {name}[0:3, 0:1:5j]", user_location())
    axes = [_slice_values(item, name) for item in items]
    if not isinstance(key, tuple):
        return asarray(axes[0])
    kind = default_float() if builtins.any(v.dtype.kind == "f" for v in axes) else default_int()
    grids = np.meshgrid(*(v.astype(kind) for v in axes), indexing="ij", sparse=sparse)
    if sparse:
        return [asarray(g) for g in grids]
    return asarray(np.stack(grids) if grids else np.arange(0, dtype=default_int()))


_grid = checked(_grid_arrays, "tz.mgrid/ogrid")


class _Grid:
    """NumPy's and JAX's `mgrid` and `ogrid`: `tz.mgrid[0:2, 0:3]` is the index grid of
    those aranges stacked ([2, 2, 3]); `tz.ogrid[...]` its broadcastable axes (a list); a
    complex step `0:1:5j` is a linspace of 5."""

    def __init__(self, name: str, sparse: bool):
        self.name, self.sparse = name, sparse

    def __getitem__(self, key: Any) -> Any:
        return _grid(key, self.name, self.sparse)


mgrid = _Grid("mgrid", sparse=False)
ogrid = _Grid("ogrid", sparse=True)
s_ = np.s_
index_exp = np.index_exp


def ix_(*args: ArrayLike) -> tuple[Array, ...]:
    """Index arrays from 1-D integer sequences, each along its own axis, that together
    index their cross product (`x[tz.ix_(rows, columns)]`); booleans are not supported, as
    in JAX."""
    out = []
    for k, arg in enumerate(args):
        a = asarray(arg)
        if a.ndim != 1:
            raise TenzrError(f"ix_: the arguments must be 1-D, got shape {list(a.shape)}", user_location())
        if a.dtype == np.bool_:
            raise TenzrError("ix_: boolean arguments are not supported (as in JAX); pass integer indices",
                             user_location())
        view = [1] * len(args)
        view[k] = a.shape[0]
        out.append(reshape(a, view) if a.size else zeros(view, default_int()))
    return tuple(out)


def _ravel_multi_index(multi_index: Sequence[ArrayLike], dims: Sequence[int], mode: str, order: str,
                       dtype: Any) -> Array:
    """ravel_multi_index's body (its indices are checked for mode "raise" before)."""
    if order not in ("C", "F"):
        raise TenzrError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}", user_location())
    dims = _shape_of("ravel_multi_index", dims)
    if len(multi_index) != len(dims):
        raise TenzrError(f"ravel_multi_index: {len(multi_index)} index arrays for {len(dims)} dims", user_location())
    indices = [asarray(i) for i in multi_index]
    for i in indices:
        if np.dtype(i.dtype).kind not in "iu":
            raise TenzrError(f"ravel_multi_index: the indices must be integers, got {i.dtype}", user_location())
    kind = result_type(int, *indices) if dtype is None else np.dtype(requested_dtype(dtype))
    if kind.kind not in "iu":
        raise TenzrError(f"ravel_multi_index: dtype must be an integer type, got {kind}", user_location())
    if math.prod(dims) - 1 > np.iinfo(kind).max:
        raise TenzrError(f"ravel_multi_index: {kind} cannot hold the flat indices of dims {list(dims)}; pass a "
                         "wider dtype=", user_location())
    if mode == "clip":
        indices = [clip(i, 0, d - 1) for i, d in zip(indices, dims, strict=True)]
    elif mode == "wrap":
        indices = [remainder(i, d) for i, d in zip(indices, dims, strict=True)]
    sizes = dims if order == "F" else dims[::-1]
    strides = np.cumprod((1, *sizes[:-1])) if sizes else np.zeros(0, np.int64)
    strides = strides if order == "F" else strides[::-1]
    out = zeros((), kind)
    for i, stride in zip(indices, strides, strict=True):
        out = out + i.astype(kind) * int(stride)
    return out


_ravel_multi_index_call = checked(_ravel_multi_index, "tz.ravel_multi_index")


def diag_indices_from(arr: ArrayLike) -> tuple[Array, ...]:
    """`diag_indices` of a square (all dims equal) array of at least 2 dims."""
    dims = shape(arr)
    if len(dims) < 2:
        raise TenzrError(f"diag_indices_from: the array must have at least 2 dimensions, got {len(dims)}",
                         user_location())
    if len(set(dims)) != 1:
        raise TenzrError(f"diag_indices_from: all dimensions must be equal, got {list(dims)}", user_location())
    return diag_indices(dims[0], len(dims))


# --------------------------------------------------------------------------- predicates and small helpers


def _shape_of(what: str, dims: Any) -> tuple[int, ...]:
    """A shape given as an int or a sequence of them."""
    try:
        return (operator.index(dims),) if np.ndim(dims) == 0 else tuple(operator.index(d) for d in dims)
    except (TypeError, ValueError):
        raise TenzrError(f"{what}: a shape must be an int or a sequence of ints, got {dims!r}",
                         user_location()) from None


def array_equiv(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Whether the arrays broadcast together and are equal elementwise (False when they do
    not broadcast)."""
    x, y = asarray(a1), asarray(a2)
    try:
        np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return asarray(False)
    return all(x == y)


def fromfunction(function: Callable[..., Any], shape: Any, *, dtype: Any = float, **kwargs: Any) -> Array:
    """`function` vmapped over the index grid of `shape` (as JAX's: it is called on
    scalar indices of `dtype`, the default float unless given; `kwargs` go to it as they
    are)."""
    from tenzr.batching import vmap  # (batching builds on this module)

    dims = _shape_of("fromfunction", shape)
    fn = functools.partial(function, **kwargs) if kwargs else function
    for k in range(len(dims)):
        fn = vmap(fn, in_axes=tuple(0 if k == j else None for j in range(len(dims)))[::-1])
    return asarray(fn(*(arange(d, dtype=dtype) for d in dims)))


def _block_of(xs: Any) -> tuple[Array, int]:
    """The array a block list nests, and how deep its lists are."""
    if isinstance(xs, tuple):
        raise TenzrError("block: takes nested lists, not tuples", user_location())
    if not isinstance(xs, list):
        return asarray(xs), 1
    if not xs:
        raise TenzrError("block: lists must not be empty", user_location())
    parts, depths = zip(*(_block_of(x) for x in xs), strict=True)
    if len(set(depths)) != 1:
        raise TenzrError(f"block: lists are nested to different depths ({sorted(set(depths))})", user_location())
    rank = builtins.max(depths[0], *(p.ndim for p in parts))
    parts = tuple(reshape(p, (1,) * (rank - p.ndim) + p.shape) for p in parts)
    return concatenate(list(promote(*parts)), axis=-depths[0]), depths[0] + 1


def block(arrays: Any) -> Array:
    """An array assembled from nested lists of blocks: the innermost lists join along the
    last axis, the next ones along the one before, and so on."""
    return _block_of(arrays)[0]


def resize(a: ArrayLike, new_shape: Any) -> Array:
    """The flattened elements, repeated as needed, in an array of `new_shape` (zeros if a
    is empty)."""
    dims = _shape_of("resize", new_shape)
    if builtins.any(d < 0 for d in dims):
        raise TenzrError(f"resize: the new shape must not be negative, got {list(dims)}", user_location())
    x = ravel(a)
    total = math.prod(dims)
    if x.size == 0 or total == 0:
        return zeros(dims, x.dtype)
    return reshape(tile(x, -(-total // x.size))[:total], dims)


def apply_over_axes(func: Callable[[Array, int], Any], a: ArrayLike, axes: Any) -> Array:
    """`func(a, axis)` for each axis in turn, each result given its axis back when func
    drops it (as a reduction with keepdims)."""
    x = asarray(a)
    for axis in [int(axes)] if isinstance(axes, (int, np.integer)) else [int(a) for a in axes]:
        y = asarray(func(x, axis))
        if y.ndim == x.ndim - 1:
            y = expand_dims(y, axis)
        elif y.ndim != x.ndim:
            raise TenzrError(f"apply_over_axes: func must keep the rank {x.ndim} or drop one axis, got a result of "
                             f"rank {y.ndim}", user_location())
        x = y
    return x


check_arguments(globals(), "tz.")


def _unfixed(x: Any) -> Any:
    return x.array if isinstance(x, _Fixed) else x


def _reading_values(public: Callable, *names: str) -> Callable:
    """`public`, a function check_arguments wrapped, with its arguments `names` known on the
    host when they are NumPy arrays, in an eager call too (as under jit, and as JAX's
    eager calls, whose NumPy arguments are concrete): they pass through as `_Fixed`."""
    fn = inspect.unwrap(public)
    parameters = list(inspect.signature(fn).parameters)
    positions = [parameters.index(name) for name in names]

    @functools.wraps(fn)
    def body(*args: Any, **kwargs: Any) -> Any:
        return fn(*map(_unfixed, args), **{k: _unfixed(v) for k, v in kwargs.items()})

    body_call = checked(body, f"tz.{fn.__name__}")

    @api_boundary
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        args = tuple(_Fixed(x) if i in positions and isinstance(x, np.ndarray) else x for i, x in enumerate(args))
        kwargs = {k: _Fixed(v) if k in names and isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        return body_call(*args, **kwargs)

    return call


insert = _reading_values(insert, "obj")
delete = _reading_values(delete, "obj")
resize = _reading_values(resize, "new_shape")


# unique, left unwrapped: outside a trace it runs its body eagerly, without `size` too (see
# _sized_or_all), where check_arguments would trace all of it.
@api_boundary
def unique(ar: ArrayLike, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: int | None = None, *, equal_nan: bool = True, size: int | None = None, fill_value: Any = None,
           sorted: bool = True) -> Any:  # noqa: A002 (NumPy's name)
    """The distinct values of ar (flattened), sorted, as JAX's: under jit `size` must be
    given; when there are fewer the rest are `fill_value` (the smallest value by default).
    With `return_index`, `return_inverse` and `return_counts`, also the first position of
    each, the position of each element's value among them (shaped as ar), and their counts
    (0 for the fill). NaNs count as one value unless equal_nan=False."""
    del sorted  # (always sorted)
    if axis is not None:
        raise TenzrError("unique: axis= is not supported (the values of the whole array are taken)",
                         user_location())
    wanted = (return_index, return_inverse, return_counts)
    (values, index, counts), (inverse,) = _sized_or_all("unique", size, np.size(ar), _unique_call, ar, equal_nan,
                                                        fill_value, wanted)
    extras = [x for x, w in zip((index, inverse, counts), wanted, strict=True) if w]
    return (values, *extras) if extras else values


@api_boundary
def where(condition: ArrayLike, x: ArrayLike = None, y: ArrayLike = None, /, *, size: int | None = None,
          fill_value: Any = None) -> Any:
    """`x` where `condition` holds, else `y`, broadcast like NumPy; with `condition` alone,
    `nonzero(condition, size=, fill_value=)` (as JAX's)."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise TenzrError("tz.where: give both x and y, or neither", user_location())
    if size is not None or fill_value is not None:
        raise TenzrError("tz.where: size and fill_value go with the one-argument form", user_location())
    return where_(condition, x, y)


@api_boundary
def nonzero(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> tuple[Array, ...]:
    """The coordinates of a's nonzero entries, one array per dimension, as JAX's: under jit
    `size` must be given; when fewer are nonzero the rest are `fill_value` (0, or a value
    per dimension)."""
    coordinates, _ = _sized_or_all("nonzero", size, np.size(a), _nonzero_call, a, fill_value)
    return coordinates


def flatnonzero(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Array:
    """The flat positions of a's nonzero entries (see `nonzero`)."""
    (positions,) = nonzero(np.ravel(a) if current_trace() is None else ravel(a), size=size, fill_value=fill_value)
    return positions


def argwhere(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Array:
    """nonzero's coordinates stacked, one row per entry found: [entries, a.ndim]."""
    if np.ndim(a) == 0:  # (rows of no coordinates, as JAX's)
        rows = _sized("argwhere", size) if size is not None or current_trace() is not None else int(np.asarray(a) != 0)
        return zeros((rows, 0), default_int())
    return stack(nonzero(a, size=size, fill_value=fill_value), axis=1)


# Type predicates, left unwrapped: they read Python types and never trace (or run eagerly).
def iscomplexobj(x: Any) -> bool:
    """Whether x has a complex type."""
    if isinstance(x, Array):
        return x.spec.is_complex
    return isinstance(x, (complex, np.complexfloating)) or (isinstance(x, np.ndarray) and x.dtype.kind == "c")


def isrealobj(x: Any) -> bool:
    """not iscomplexobj(x)."""
    return not iscomplexobj(x)


# The methods of Array that are NumPy routines of this module (the rest: numpy_api)
_METHODS: dict[str, Callable[..., Any]] = {"cumsum": cumsum, "cumprod": cumprod, "diagonal": diagonal, "trace": trace,
                                           "repeat": repeat, "var": var, "std": std, "all": all, "any": any,
                                           "conj": conj, "conjugate": conj}
for _name, _method in _METHODS.items():
    setattr(Array, _name, api_boundary(checked(_method, f"Array.{_name}")))
Array.real = property(api_boundary(checked(real, "Array.real")))  # type: ignore[attr-defined]
Array.imag = property(api_boundary(checked(imag, "Array.imag")))  # type: ignore[attr-defined]


_compressed_call = checked(_compressed, "tz.compress")


# compress, extract, ravel_multi_index and mask_indices, left unwrapped: they look at
# values known while tracing (a condition's count, indices to check), then call their
# checked bodies.
@api_boundary
def compress(condition: ArrayLike, a: ArrayLike, axis: int | None = None, *, size: int | None = None,
             fill_value: ArrayLike = 0, out: None = None) -> Array:
    """The slices of a along `axis` (of the flattened array when None) where the 1-D
    condition is true, as JAX's: with a traced condition `size` must be given (the first
    `size` of them, then `fill_value`s); a condition known while tracing may leave it out.
    A condition longer than the axis may be true only along it."""
    _no_out("compress", out)
    if size is None:
        keep = _concrete("compress", condition, _NEEDS_SIZE).astype(bool)
        length = np.size(a) if axis is None else np.shape(a)[_axes(axis, np.ndim(a))[0]]
        if keep.ndim == 1:
            if keep[length:].any():
                raise TenzrError(f"compress: the condition is true past the end of the axis ({length})",
                                 user_location())
            size = int(np.count_nonzero(keep[:length]))
    return _compressed_call(condition, a, axis, fill_value, size or 0)


@api_boundary
def extract(condition: ArrayLike, arr: ArrayLike, *, size: int | None = None, fill_value: ArrayLike = 0) -> Array:
    """The elements of arr where condition (of arr's size) is true, flattened: `compress`
    of both flattened."""
    flat = ravel(condition) if isinstance(condition, Array) else \
        np.ravel(_concrete("extract", condition, "pass the condition as one array (tz.stack its parts)"))
    return compress(flat, arr, size=size, fill_value=fill_value)


@api_boundary
def ravel_multi_index(multi_index: Sequence[ArrayLike], dims: Sequence[int], mode: str = "raise", order: str = "C",
                      *, dtype: Any = None) -> Array:
    """The flat indices in an array of shape `dims` of the coordinates `multi_index` (one
    integer array per dim), in C or Fortran `order`. Out-of-range coordinates: an error
    with mode "raise" (which needs them known while tracing, as JAX's), clamped with
    "clip", taken modulo the dim with "wrap", left as they are with "ignore"."""
    if mode not in ("raise", "clip", "wrap", "ignore"):
        raise TenzrError(f"ravel_multi_index: mode must be 'raise', 'clip', 'wrap' or 'ignore', got {mode!r}",
                         user_location())
    if mode == "raise":
        for i, d in zip(multi_index, _shape_of("ravel_multi_index", dims), strict=False):
            known = _concrete("ravel_multi_index", i, "mode='raise' needs indices known while tracing (as in JAX); "
                              "use mode='clip' or mode='wrap'")
            if known.dtype.kind in "iu" and ((known < 0) | (known >= d)).any():
                raise TenzrError(f"ravel_multi_index: an index is out of range for a dim of {d}", user_location())
    return _ravel_multi_index_call(multi_index, dims, mode, order, dtype)


@api_boundary
def mask_indices(n: int, mask_func: Callable[[Any, int], Any], k: int = 0, *,
                 size: int | None = None) -> tuple[Array, Array]:
    """The (rows, columns) where mask_func(ones((n, n)), k) is nonzero (`tz.triu` gives the
    upper triangle's); under jit `size` must be given, as for `nonzero`."""
    try:
        n = operator.index(n)
    except TypeError:
        raise TenzrError(f"mask_indices: n must be an int, got {n!r}", user_location()) from None
    if not callable(mask_func):
        raise TenzrError(f"mask_indices: mask_func must be a function (as tz.triu), got {mask_func!r}",
                         user_location())
    square = np.ones((n, n), default_float()) if current_trace() is None else ones((n, n))
    rows, columns = nonzero(mask_func(square, k), size=size)
    return rows, columns


def _concrete(what: str, x: Any, if_traced: str) -> np.ndarray:
    """x's values on the host, a NumPy array; a TenzrError saying `if_traced` when x is traced
    (its values are not known while tracing) or holds traced arrays, and one when it is not
    an array (a ragged list)."""
    if isinstance(x, Array) or (isinstance(x, (list, tuple)) and builtins.any(isinstance(i, Array) for i in x)):
        raise TenzrError(f"{what}: {if_traced}", user_location())
    try:
        return np.asarray(x)
    except ValueError:
        raise TenzrError(f"{what}: {x!r} is not an array (its rows differ in length)", user_location()) from None


_NO_VALUES_TO_PRINT = "a traced array has no values to print; print it with tz.debug.print inside jit"


# Predicates and printing, left unwrapped: they read types, shapes and values at once.
def isscalar(element: Any) -> bool:
    """Whether element is a scalar: NumPy's scalars, or an array of rank 0 (as JAX's)."""
    if np.isscalar(element):
        return True
    return isinstance(element, (np.ndarray, Array, OnDevice)) and len(element.shape) == 0


def iterable(y: Any) -> bool:
    """Whether y can be iterated over (an array of rank 0 cannot)."""
    if isinstance(y, (Array, OnDevice)):
        return len(y.shape) > 0
    return np.iterable(y)


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    """NumPy's `can_cast` (JAX's is NumPy's), of dtypes, NumPy arrays or the dtype of a
    traced array."""
    if isinstance(from_, (Array, OnDevice)):
        from_ = np.dtype(from_.dtype)
    try:
        return bool(np.can_cast(from_, to, casting=casting))  # type: ignore[arg-type]
    except (TypeError, ValueError) as e:
        raise TenzrError(f"can_cast: {e}", user_location()) from None


_DTYPE_KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
                "real floating": "f", "complex floating": "c", "numeric": "iufc"}


def isdtype(dtype: Any, kind: Any) -> bool:
    """JAX's (the Array API's): whether dtype is `kind`, a dtype, one of "bool", "signed
    integer", "unsigned integer", "integral", "real floating" (bfloat16 too), "complex
    floating" and "numeric", or a tuple of them."""
    try:
        given = np.dtype(dtype)
    except TypeError:
        raise TenzrError(f"isdtype: {dtype!r} is not a dtype", user_location()) from None
    letter = "f" if given.name == "bfloat16" or given.name.startswith("float8") else given.kind
    for option in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(option, str) and option in _DTYPE_KINDS:
            if letter in _DTYPE_KINDS[option]:
                return True
            continue
        try:
            if given == np.dtype(option):
                return True
        except TypeError:
            raise TenzrError(f"isdtype: kind must be a dtype, one of {', '.join(map(repr, _DTYPE_KINDS))}, or a "
                             f"tuple of them; got {option!r}", user_location()) from None
    return False


def array_repr(arr: ArrayLike, max_line_width: int | None = None, precision: int | None = None,
               suppress_small: bool | None = None) -> str:
    """NumPy's `array_repr` of a concrete array (JAX's is NumPy's)."""
    return np.array_repr(_concrete("array_repr", arr, _NO_VALUES_TO_PRINT), max_line_width, precision, suppress_small)


def array_str(a: ArrayLike, max_line_width: int | None = None, precision: int | None = None,
              suppress_small: bool | None = None) -> str:
    """NumPy's `array_str` of a concrete array (JAX's is NumPy's)."""
    return np.array_str(_concrete("array_str", a, _NO_VALUES_TO_PRINT), max_line_width, precision, suppress_small)
