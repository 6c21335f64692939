"""NumPy's functions on traced arrays: `tz.exp`, `tz.sum`, `tz.matmul`, indexing, ...

Each function follows NumPy's name, arguments and semantics, and emits tenzr ops. Python
scalars and NumPy arrays mix in as constants of the traced operand's type.
"""

from __future__ import annotations

import builtins
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tenzr.core import (
    Array,
    ConcreteArray,
    api_boundary,
    array_shape,
    asarray,
    astype,
    check_arguments,
    checked,
    constant,
    dtype_alone,
    dtype_name,
    emit,
    promote,
    shape_tuple,
    summed_dtype,
    user_location,
)
from tenzr.dialect import ops as T
from tenzr.dialect.diagnostics import TenzrError, warn
from tenzr.dialect.types import HALF_TYPES, INT_TYPES, UNSIGNED_TYPES, TensorSpec, broadcast_shapes, numpy_dtype
from tenzr.flags import default_float, default_int

ArrayLike = Any


def _float(x: ArrayLike) -> Array:
    """x as a floating-point array: as in JAX, bools and integers up to 32 bits become
    float32, 64-bit ones the default float (float64 with jax_enable_x64)."""
    x = asarray(x)
    if x.spec.is_inexact:
        return x
    out = astype(x, default_float() if x.spec.dtype in ("i64", "ui64") else np.float32)
    out.weak = x.weak
    return out


def _unary(opdef, *, to_float: bool = True):
    def fn(x: ArrayLike) -> Array:
        return emit(opdef, _float(x) if to_float else asarray(x))

    fn.__name__ = opdef.mnemonic
    fn.__doc__ = f"Elementwise {opdef.summary}"
    return fn


def _binary(opdef):
    def fn(x: ArrayLike, y: ArrayLike) -> Array:
        a, b = promote(x, y)
        if a.spec.dtype == "i1" and opdef in _ON_BOOLS:  # (JAX's: True + True is True)
            return emit(_ON_BOOLS[opdef], a, b)
        return emit(opdef, a, b)

    fn.__name__ = opdef.mnemonic
    return fn


# --------------------------------------------------------------------------- elementwise

exp = _unary(T.exp)
log = _unary(T.log)
sqrt = _unary(T.sqrt)
tanh = _unary(T.tanh)
sin = _unary(T.sin)
cos = _unary(T.cos)
log1p = _unary(T.log1p)
expm1 = _unary(T.expm1)


def _rounding(opdef):
    """floor or ceil: integers and booleans are returned as they are (JAX's), floats rounded."""
    def fn(x: ArrayLike) -> Array:
        x = asarray(x)
        return emit(opdef, x) if x.is_float or x.spec.is_complex else x

    fn.__name__ = opdef.mnemonic
    fn.__doc__ = f"Elementwise {opdef.summary}"
    return fn


floor = _rounding(T.floor)
ceil = _rounding(T.ceil)
tan = _unary(T.tan)
negative = _unary(T.neg, to_float=False)
abs = _unary(T.abs_, to_float=False)
absolute = abs


def _real_op_or(opdef: Any, complex_formula: Callable[[Array], Array]) -> Callable[[ArrayLike], Array]:
    """An elementwise function that is `opdef` on real input and `complex_formula` (its
    principal branch, in terms of exp, log and sqrt) on complex input."""
    def fn(x: ArrayLike) -> Array:
        x = _float(x)
        return complex_formula(x) if x.spec.is_complex else emit(opdef, x)

    fn.__name__ = opdef.mnemonic
    fn.__doc__ = f"Elementwise {opdef.summary}"
    return fn


arcsin = _real_op_or(T.asin, lambda z: -1j * log(1j * z + sqrt(1 - z * z)))
arccos = _real_op_or(T.acos, lambda z: math.pi / 2 - arcsin(z))
arctan = _real_op_or(T.atan, lambda z: 0.5j * (log(1 - 1j * z) - log(1 + 1j * z)))
sinh = _real_op_or(T.sinh, lambda z: 0.5 * (exp(z) - exp(-z)))
cosh = _real_op_or(T.cosh, lambda z: 0.5 * (exp(z) + exp(-z)))
arcsinh = _real_op_or(T.asinh, lambda z: log(z + sqrt(z * z + 1)))
arccosh = _real_op_or(T.acosh, lambda z: log(z + sqrt(z + 1) * sqrt(z - 1)))
arctanh = _real_op_or(T.atanh, lambda z: 0.5 * (log1p(z) - log1p(-z)))


def sign(x: ArrayLike) -> Array:
    """-1, 0 or 1 (NaN stays NaN); for complex x, x/|x| (0 at 0). As in JAX, its derivative
    is 0 for complex x too."""
    x = asarray(x)
    if x.spec.is_complex:
        magnitude = abs(x)
        return emit(T.stop_gradient, where(magnitude == 0, 0, x / where(magnitude == 0, 1, magnitude)))
    return emit(T.sign, x)
_ON_BOOLS = {T.add: T.bitwise_or, T.mul: T.bitwise_and, T.maximum: T.bitwise_or, T.minimum: T.bitwise_and}
add = _binary(T.add)
subtract = _binary(T.sub)
multiply = _binary(T.mul)
maximum = _binary(T.maximum)
minimum = _binary(T.minimum)




def round(x: ArrayLike, decimals: int = 0) -> Array:
    """Rounds half to even, as NumPy."""
    x = asarray(x)
    if not x.is_float:
        return x
    if decimals == 0:
        return emit(T.round_, x)
    scale = 10.0 ** decimals
    return emit(T.round_, x * scale) / scale


around = round


def divide(x: ArrayLike, y: ArrayLike) -> Array:
    """True division: integer operands give floats (`_float`'s type)."""
    x, y = promote(x, y)
    if not x.spec.is_inexact:
        x, y = _float(x), _float(y)
    return emit(T.div, x, y)


true_divide = divide


def power(x: ArrayLike, y: ArrayLike) -> Array:
    """x ** y. Small integer and half exponents use multiplies and sqrt (exact and cheap)."""
    if isinstance(x, Array) and isinstance(y, (int, float)) and not isinstance(y, bool):
        if y == 1:
            return x
        if y == 2:
            return x * x
        if y == 0.5 and x.spec.is_inexact:
            return sqrt(x)
        if y == -1 and x.spec.is_inexact:
            return 1.0 / x
    return emit(T.pow_, *promote(x, y))


def square(x: ArrayLike) -> Array:
    x = asarray(x)
    return x * x


def _compare(direction: str):
    def fn(x: ArrayLike, y: ArrayLike) -> Array:
        return emit(T.compare, *promote(x, y), direction=direction)

    return fn


less, less_equal = _compare("lt"), _compare("le")
greater, greater_equal = _compare("gt"), _compare("ge")
equal, not_equal = _compare("eq"), _compare("ne")


def where(condition: ArrayLike, x: ArrayLike, y: ArrayLike) -> Array:
    """`x` where `condition` holds, else `y`, broadcast like NumPy."""
    cond = asarray(condition)
    if cond.spec.dtype != "i1":
        cond = not_equal(cond, 0)
    a, b = promote(x, y)
    return emit(T.select, cond, a, b)


def clip(x: ArrayLike, min: ArrayLike = None, max: ArrayLike = None, *, a_min: ArrayLike = None,  # noqa: A002 (JAX's names)
         a_max: ArrayLike = None) -> Array:
    """x limited to [min, max] (either may be None); `a_min` and `a_max` are NumPy's older
    names for them."""
    low = a_min if min is None else min
    high = a_max if max is None else max
    out = asarray(x)
    if low is not None:
        out = maximum(out, low)
    if high is not None:
        out = minimum(out, high)
    return out


def logical_not(x: ArrayLike) -> Array:
    return equal(asarray(x).astype(bool), False)


def arctan2(y: ArrayLike, x: ArrayLike) -> Array:
    """The angle of the point (x, y) in [-π, π], elementwise, C's (and NumPy's and JAX's) at
    signed zeros and infinities, where IREE's atan2 gives NaN, or π for -π."""
    y, x = (_float(v) for v in promote(y, x))
    angle = emit(T.atan2, y, x)
    below = signbit(y)
    angle = where(logical_and(below, angle > 3.0), angle - 2 * np.pi, angle)  # (-0 or y < 0 beside -inf)
    pi = where(below, np.asarray(-np.pi, y.dtype), np.asarray(np.pi, y.dtype))
    angle = where(logical_and(y == 0, x == 0), where(signbit(x), pi, y), angle)
    corner = where(x < 0, np.asarray(0.75, y.dtype), np.asarray(0.25, y.dtype)) * pi
    return where(logical_and(isinf(y), isinf(x)), corner, angle)


def signbit(x: ArrayLike) -> Array:
    """Whether the sign bit is set: x < 0, and -0.0 too."""
    x = asarray(x)
    if not x.is_float:
        return x < 0
    return logical_or(x < 0, logical_and(x == 0, 1 / where(x == 0, x, 1) < 0))


def nextafter(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The next float after x1 in the direction of x2, elementwise."""
    x1, x2 = promote(x1, x2)
    return emit(T.nextafter, _float(x1), _float(x2))


def _scaled_unary(fn: Any, scale: float, inner: bool, doc: str) -> Any:
    def scaled(x: ArrayLike) -> Array:
        x = _float(x)
        return fn(x * scale) if inner else fn(x) * scale

    scaled.__doc__ = doc
    return scaled


log2 = _scaled_unary(log, 1 / math.log(2), inner=False, doc="Base-2 logarithm, elementwise.")
log10 = _scaled_unary(log, 1 / math.log(10), inner=False, doc="Base-10 logarithm, elementwise.")
exp2 = _scaled_unary(exp, math.log(2), inner=True, doc="2 to the x, elementwise.")
deg2rad = radians = _scaled_unary(lambda x: x, math.pi / 180, inner=False, doc="Degrees to radians.")
rad2deg = degrees = _scaled_unary(lambda x: x, 180 / math.pi, inner=False, doc="Radians to degrees.")


def fabs(x: ArrayLike) -> Array:
    """|x| as a float."""
    return abs(_float(x))


def reciprocal(x: ArrayLike) -> Array:
    """1 / x as a float."""
    return 1.0 / _float(x)


def hypot(x: ArrayLike, y: ArrayLike) -> Array:
    """sqrt(x² + y²), scaled by the larger magnitude so that it neither overflows nor underflows."""
    x, y = (_float(v) for v in promote(x, y))
    big, small = maximum(abs(x), abs(y)), minimum(abs(x), abs(y))
    safe = where(big == 0, 1.0, big)
    ratio = small / safe
    out = where(big == 0, 0.0, big * sqrt(1.0 + ratio * ratio))
    return where(logical_or(isinf(x), isinf(y)), np.inf, out)  # (beside NaN too, as C's)


def logaddexp(x: ArrayLike, y: ArrayLike) -> Array:
    """log(exp(x) + exp(y)) without overflow (JAX's form: equal infinities give themselves)."""
    x, y = (_float(v) for v in promote(x, y))
    # the shift by the larger one is held constant (its derivative cancels), so that every
    # derivative is the smooth function's, at x == y too (1/2 each, then 1/4, ...)
    top = emit(T.stop_gradient, maximum(x, y))
    out = where(isnan(x - y), x + y, top + log(exp(x - top) + exp(y - top)))
    return where(top == np.inf, top, out)


def logaddexp2(x: ArrayLike, y: ArrayLike) -> Array:
    """log2(2**x + 2**y), computed without overflow (through logaddexp)."""
    x, y = promote(_float(x), y)
    return logaddexp(x * math.log(2), y * math.log(2)) / math.log(2)


def isnan(x: ArrayLike) -> Array:
    """Whether each element is NaN (never, for integers; either part, for complex)."""
    x = asarray(x)
    return not_equal(x, x) if x.spec.is_inexact else full_like(x, False, dtype=bool)


def isinf(x: ArrayLike) -> Array:
    """Whether each element is +inf or -inf (either part, for complex)."""
    x = asarray(x)
    if x.spec.is_complex:
        return logical_or(isinf(emit(T.real, x)), isinf(emit(T.imag, x)))
    return equal(abs(x), math.inf) if x.is_float else full_like(x, False, dtype=bool)


def isfinite(x: ArrayLike) -> Array:
    """Whether each element is neither infinite nor NaN (both parts, for complex)."""
    x = asarray(x)
    if x.spec.is_complex:
        return logical_and(isfinite(emit(T.real, x)), isfinite(emit(T.imag, x)))
    return less(abs(x), math.inf) if x.is_float else full_like(x, True, dtype=bool)


def fmax(x: ArrayLike, y: ArrayLike) -> Array:
    """Elementwise maximum ignoring NaNs (NaN only where both are)."""
    x, y = promote(x, y)
    return where(isnan(x), y, where(isnan(y), x, maximum(x, y)))


def fmin(x: ArrayLike, y: ArrayLike) -> Array:
    """Elementwise minimum ignoring NaNs (NaN only where both are)."""
    x, y = promote(x, y)
    return where(isnan(x), y, where(isnan(y), x, minimum(x, y)))


def floor_divide(x: ArrayLike, y: ArrayLike) -> Array:
    """x // y, rounding toward -inf as Python and NumPy (integers too); for floats, from the
    exact remainder, as JAX's."""
    x, y = promote(x, y)
    if x.is_float:
        return _float_divmod(x, y)[0]
    quotient = emit(T.div, x, y)  # (truncates toward 0)
    inexact = not_equal(x, quotient * y)
    opposite = not_equal(less(x, 0), less(y, 0))
    return where(logical_and(inexact, opposite), quotient - 1, quotient)


def remainder(x: ArrayLike, y: ArrayLike) -> Array:
    """x % y with the sign of y, as Python and NumPy."""
    x, y = promote(x, y)
    if x.is_float:
        return _float_divmod(x, y)[1]
    return x - floor_divide(x, y) * y


def fmod(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The remainder of x1 / x2 with the sign of x1 (C's fmod; `remainder` has x2's)."""
    x1, x2 = promote(x1, x2)
    if x1.is_float:
        return emit(T.rem, x1, x2)
    floored = remainder(x1, x2)
    return where(logical_and(floored != 0, (x1 < 0) != (x2 < 0)), floored - x2, floored)


def _float_divmod(x: Array, y: Array) -> tuple[Array, Array]:
    """(x // y, x % y) for floats, from x's remainder (`tenzr.rem`: exact in float32; in float64
    while |x/y| < 2^53, see tenzr-expand-math), as JAX computes them:
    x - floor(x/y)·y loses the remainder when x/y is large (1e9 % 7.0 in float32 gave 48).
    x // 0 is x / 0, as NumPy's."""
    r = emit(T.rem, x, y)
    quotient = (x - r) / y
    off = logical_and(not_equal(r, 0), not_equal(sign(y), sign(r)))
    return where(y == 0, x / y, round(where(off, quotient - 1, quotient))), where(off, r + y, r)


mod = remainder


def _bitwise(opdef: Any, doc: str) -> Any:
    def fn(x: ArrayLike, y: ArrayLike) -> Array:
        x, y = promote(x, y)
        if x.spec.dtype != "i1" and x.spec.dtype not in INT_TYPES:
            raise TenzrError(f"{opdef.mnemonic}: takes integers or booleans, got {x.dtype}", user_location())
        logical = opdef is T.shift_right_arithmetic and x.spec.dtype in UNSIGNED_TYPES
        return emit(T.shift_right_logical if logical else opdef, x, y)

    fn.__name__, fn.__doc__ = opdef.mnemonic, doc
    return fn


bitwise_and = _bitwise(T.bitwise_and, "x & y elementwise, on integers or booleans.")
bitwise_or = _bitwise(T.bitwise_or, "x | y elementwise, on integers or booleans.")
bitwise_xor = _bitwise(T.bitwise_xor, "x ^ y elementwise, on integers or booleans.")
left_shift = _bitwise(T.shift_left, "x << y elementwise, on integers.")
right_shift = _bitwise(T.shift_right_arithmetic, "x >> y elementwise, on integers (the sign kept for signed ones, as "
                      "NumPy's).")


def bitwise_not(x: ArrayLike) -> Array:
    """~x elementwise: the bits flipped (logical not for booleans)."""
    x = asarray(x)
    if x.spec.dtype != "i1" and x.spec.dtype not in INT_TYPES:
        raise TenzrError(f"bitwise_not: takes integers or booleans, got {x.dtype}", user_location())
    return emit(T.bitwise_not, x)


invert = bitwise_not


def bitwise_count(x: ArrayLike) -> Array:
    """The number of bits set in |x|, elementwise, as NumPy and JAX count them (as uint8)."""
    x = asarray(x)
    if x.spec.dtype not in INT_TYPES:
        raise TenzrError(f"bitwise_count: takes integers, got {x.dtype}", user_location())
    return emit(T.population_count, x if x.spec.dtype in UNSIGNED_TYPES else emit(T.abs_, x)).astype(np.uint8)


def _logical(combine: Any, doc: str) -> Any:
    def fn(x: ArrayLike, y: ArrayLike) -> Array:
        return combine(asarray(x).astype(bool), asarray(y).astype(bool))

    fn.__doc__ = doc
    return fn


logical_and = _logical(lambda a, b: where(a, b, False), "x and y, elementwise, as booleans.")
logical_or = _logical(lambda a, b: where(a, True, b), "x or y, elementwise, as booleans.")
logical_xor = _logical(lambda a, b: not_equal(a, b), "x xor y, elementwise, as booleans.")


# --------------------------------------------------------------------------- shapes


def _axes(axis: Any, rank: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(rank))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        if not -rank <= a < rank:
            raise TenzrError(f"axis {a} is out of bounds for an array of rank {rank}", user_location())
        out.append(int(a) % rank if rank else 0)
    return tuple(out)


def reshape(x: ArrayLike, shape: Any) -> Array:
    x = asarray(x)
    shape = list(shape_tuple(shape))
    if shape.count(-1) > 1:
        raise TenzrError("reshape: only one dimension may be -1", user_location())
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or x.size % known:
            raise TenzrError(f"reshape: cannot reshape {list(x.shape)} into {shape}", user_location())
        shape[shape.index(-1)] = x.size // known
    if tuple(shape) == x.shape:
        return x
    return emit(T.reshape, x, result=x.spec.with_shape(shape))


def transpose(x: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    x = asarray(x)
    perm = tuple(reversed(range(x.ndim))) if axes is None else _axes(axes, x.ndim)
    if perm == tuple(range(x.ndim)):
        return x
    return emit(T.transpose, x, permutation=perm)


def moveaxis(x: ArrayLike, source: int | Sequence[int], destination: int | Sequence[int]) -> Array:
    """Moves axes `source` (an int or a sequence) to positions `destination`."""
    x = asarray(x)
    sources, destinations = _axes(source, x.ndim), _axes(destination, x.ndim)
    if len(sources) != len(destinations) or len(set(sources)) != len(sources) or \
            len(set(destinations)) != len(destinations):
        raise TenzrError(f"moveaxis: source {source!r} and destination {destination!r} must name as many distinct "
                         "axes", user_location())
    order = [d for d in range(x.ndim) if d not in sources]
    for d, s in sorted(zip(destinations, sources, strict=True)):
        order.insert(d, s)
    return transpose(x, order)


def swapaxes(x: ArrayLike, axis1: int, axis2: int) -> Array:
    x = asarray(x)
    perm = list(range(x.ndim))
    (a,), (b,) = _axes(axis1, x.ndim), _axes(axis2, x.ndim)
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def broadcast_to(x: ArrayLike, shape: Any) -> Array:
    x = asarray(x)
    shape = array_shape(shape)
    if shape == x.shape:
        return x
    return emit(T.broadcast_to, x, result=x.spec.with_shape(shape))


def expand_dims(x: ArrayLike, axis: int | Sequence[int]) -> Array:
    x = asarray(x)
    axes = _axes(axis, x.ndim + len(np.atleast_1d(axis)))
    shape = list(x.shape)
    for a in sorted(axes):
        shape.insert(a, 1)
    return reshape(x, shape)


def squeeze(x: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    x = asarray(x)
    axes = tuple(d for d, n in enumerate(x.shape) if n == 1) if axis is None else _axes(axis, x.ndim)
    for a in axes:
        if x.shape[a] != 1:
            raise TenzrError(f"squeeze: axis {a} has size {x.shape[a]}, not 1", user_location())
    return reshape(x, [n for d, n in enumerate(x.shape) if d not in axes])


def concatenate(arrays: Sequence[ArrayLike], axis: int | None = 0) -> Array:
    xs = promote(*arrays)
    if axis is None:
        xs = [reshape(x, (-1,)) for x in xs]
        axis = 0
    if len(xs) == 1:
        return xs[0]
    return emit(T.concatenate, *xs, axis=axis)


def stack(arrays: Sequence[ArrayLike], axis: int = 0) -> Array:
    xs = promote(*arrays)
    rank = xs[0].ndim + 1
    (axis,) = _axes(axis, rank)
    return concatenate([expand_dims(x, axis) for x in xs], axis)


def flip(x: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    x = asarray(x)
    return emit(T.reverse, x, dimensions=_axes(axis, x.ndim))


def pad(x: ArrayLike, pad_width: Any, mode: str = "constant", *, constant_values: ArrayLike = 0,
        stat_length: Any = None, end_values: Any = 0, reflect_type: str = "even") -> Array:
    """NumPy's `np.pad`: `pad_width` as NumPy reads it (a number, a (before, after) pair, or
    one pair per axis); modes "constant" (`constant_values`, a number or numbers per axis
    side), "edge", "wrap", "reflect" and "symmetric" (`reflect_type` "even", or "odd" for
    pads no wider than the axis), "maximum", "minimum", "mean" and "median" (over
    `stat_length` elements at each end, all when None), "linear_ramp" (to `end_values`)
    and "empty" (zeros, as JAX's). The axes are padded in turn, as NumPy's are."""
    x = asarray(x)
    widths = _per_axis_side("pad_width", pad_width, x.ndim, np.int64)
    if (widths < 0).any():
        raise TenzrError(f"pad: pad_width must not be negative, got {np.asarray(pad_width).tolist()}", user_location())
    if mode in ("constant", "empty"):
        values = np.zeros((x.ndim, 2)) if mode == "empty" else constant_values
        if isinstance(values, Array) or np.ndim(values) == 0:
            (value,) = promote(x, values)[1:] if x.spec.dtype != "i1" else (astype(asarray(values), np.bool_),)
            value = reshape(value, ()) if value.ndim else value
            return emit(T.pad, x, value, low=widths[:, 0], high=widths[:, 1], interior=[0] * x.ndim)
        values = _per_axis_side("constant_values", values, x.ndim, np.float64)
        for axis in range(x.ndim):
            for side in (0, 1):
                low, high = [0] * x.ndim, [0] * x.ndim
                (low, high)[side][axis] = int(widths[axis, side])
                value = astype(asarray(values[axis, side]), x.dtype)
                x = emit(T.pad, x, value, low=low, high=high, interior=[0] * x.ndim)
        return x
    if mode not in _PAD_MODES:
        raise TenzrError(f"pad: mode must be one of {', '.join(repr(m) for m in _PAD_MODES)}, got {mode!r}",
                         user_location())
    if reflect_type not in ("even", "odd"):
        raise TenzrError(f"pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}", user_location())
    lengths = None if stat_length is None else _per_axis_side("stat_length", stat_length, x.ndim, np.int64)
    ends = _per_axis_side("end_values", end_values, x.ndim, np.float64) if mode == "linear_ramp" else None
    for axis in range(x.ndim):
        before, after = (int(w) for w in widths[axis])
        if before or after:
            x = _pad_axis(x, axis, before, after, mode, reflect_type,
                          None if lengths is None else lengths[axis], None if ends is None else ends[axis])
    return x


_PAD_MODES = ("constant", "edge", "wrap", "reflect", "symmetric", "maximum", "minimum", "mean", "median",
              "linear_ramp", "empty")


def _per_axis_side(what: str, given: Any, ndim: int, dtype: Any) -> np.ndarray:
    """A pad argument as NumPy reads it, one (before, after) row per axis."""
    try:
        return np.broadcast_to(np.asarray(given, dtype=dtype), (ndim, 2))
    except (ValueError, TypeError):
        raise TenzrError(f"pad: {what} must be a number, a (before, after) pair or one pair per axis, got "
                         f"{given!r}", user_location()) from None


def _pad_axis(x: Array, axis: int, before: int, after: int, mode: str, reflect_type: str, stat_length: Any,
              ends: Any) -> Array:
    """x padded along one axis, by a mode other than constant."""
    n = x.shape[axis]
    if n == 0:
        raise TenzrError(f"pad: cannot pad an empty axis in mode {mode!r}", user_location())
    at = np.arange(-before, n + after)
    if mode in ("edge", "wrap", "reflect", "symmetric"):
        if mode == "edge" or n == 1:
            source = np.clip(at, 0, n - 1)
        elif mode == "wrap":
            source = at % n
        else:  # the axis reflected back and forth (without repeating its ends for "reflect")
            period = 2 * (n - 1) if mode == "reflect" else 2 * n
            folded = at % period
            source = np.where(folded < n, folded, period - folded - (mode == "symmetric"))
        out = take(x, source, axis=axis, mode="promise_in_bounds")
        if reflect_type == "even" or mode in ("edge", "wrap"):
            return out
        if builtins.max(before, after) > n - (mode == "reflect"):
            raise TenzrError(f"pad: reflect_type='odd' takes pads no wider than the axis ({n} here)", user_location())
        side = (1,) * axis + (at.size,) + (1,) * (x.ndim - axis - 1)
        first = take(x, np.array([0]), axis=axis, mode="promise_in_bounds")
        last = take(x, np.array([n - 1]), axis=axis, mode="promise_in_bounds")
        out = where(constant((at < 0).reshape(side)), 2 * first - out, out)
        return where(constant((at >= n).reshape(side)), 2 * last - out, out)
    if mode == "linear_ramp":
        return _linear_ramp(x, axis, before, after, ends)
    low, high = (n, n) if stat_length is None else (int(stat_length[0]), int(stat_length[1]))
    if low <= 0 or high <= 0:
        raise TenzrError(f"pad: stat_length must be positive in mode {mode!r}", user_location())
    parts = []
    if before:
        parts.append(_pad_stat(take(x, np.arange(builtins.min(low, n)), axis=axis, mode="promise_in_bounds"),
                               axis, before, mode))
    parts.append(x)
    if after:
        parts.append(_pad_stat(take(x, np.arange(n - builtins.min(high, n), n), axis=axis, mode="promise_in_bounds"),
                               axis, after, mode))
    return concatenate(parts, axis)


def _pad_stat(chunk: Array, axis: int, width: int, mode: str) -> Array:
    """The maximum, minimum, mean or median of `chunk` along axis, repeated `width` times."""
    if mode == "maximum":
        value = max(chunk, axis, keepdims=True)
    elif mode == "minimum":
        value = min(chunk, axis, keepdims=True)
    else:
        ordered = sort(chunk, axis) if mode == "median" else chunk
        m = chunk.shape[axis]
        middle = take(ordered, np.array([(m - 1) // 2, m // 2]), axis=axis, mode="promise_in_bounds")
        value = mean(middle if mode == "median" else ordered, axis, keepdims=True)
        if mode == "median" and chunk.is_float:  # (a NaN among them makes the median NaN, as NumPy's)
            value = where(max(isnan(chunk), axis, keepdims=True), math.nan, value)
        if chunk.spec.dtype in ("i32", "i64"):  # (NumPy rounds an integer mean; a boolean one is cast)
            value = round(value)
        value = astype(value, chunk.dtype)
    shape = list(chunk.shape)
    shape[axis] = width
    return broadcast_to(value, tuple(shape))


def _linear_ramp(x: Array, axis: int, before: int, after: int, ends: Any) -> Array:
    """x with ramps along `axis` from end values to its first and last entries."""
    n = x.shape[axis]
    side = [1] * x.ndim
    parts = []
    work = x if x.is_float or x.spec.is_complex else astype(x, default_float())
    if before:
        side[axis] = before
        first = take(work, np.array([0]), axis=axis, mode="promise_in_bounds")
        steps = constant((np.arange(before) / before).reshape(side), work.spec.dtype)
        parts.append(ends[0] + (first - ends[0]) * steps)
    parts.append(work)
    if after:
        side[axis] = after
        last = take(work, np.array([n - 1]), axis=axis, mode="promise_in_bounds")
        steps = constant((np.arange(after - 1, -1, -1) / after).reshape(side), work.spec.dtype)
        parts.append(ends[1] + (last - ends[1]) * steps)
    out = concatenate(parts, axis)
    return out if work is x else astype(floor(out), x.dtype)  # (integers round down, as NumPy's linspace)


def zeros_like(x: ArrayLike, dtype: Any = None, shape: Any = None) -> Array:
    return full_like(x, 0, dtype, shape)


def ones_like(x: ArrayLike, dtype: Any = None, shape: Any = None) -> Array:
    return full_like(x, 1, dtype, shape)


def empty_like(prototype: ArrayLike, dtype: Any = None, shape: Any = None) -> Array:
    """NumPy's `empty_like`, as JAX's: zeros (a traced array is never left uninitialized)."""
    return full_like(prototype, 0, dtype, shape)


def full_like(x: ArrayLike, fill_value: Any, dtype: Any = None, shape: Any = None) -> Array:
    """An array of x's shape (or `shape`) and type (or `dtype`) holding `fill_value`."""
    x = asarray(x)
    return full(x.shape if shape is None else shape, fill_value, x.spec.dtype if dtype is None else dtype)


def zeros(shape: Any, dtype: Any = None) -> Array:
    return full(shape, 0, default_float() if dtype is None else dtype)


def ones(shape: Any, dtype: Any = None) -> Array:
    return full(shape, 1, default_float() if dtype is None else dtype)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Array:
    """JAX's `jnp.full`: `fill_value` (a number, an array, a traced array) broadcast to
    `shape`, as `dtype` or else of the fill value's own type (Python floats float32 and ints
    int32, or 64-bit with jax_enable_x64). A fill value known while tracing makes a splat
    constant, never written out in full."""
    shape = array_shape(shape)
    if isinstance(fill_value, Array):
        return broadcast_to(fill_value if dtype is None else astype(fill_value, dtype), shape)
    name = dtype_name(dtype) if dtype is not None else dtype_alone(fill_value)
    return constant(np.broadcast_to(np.asarray(fill_value, numpy_dtype(name)), shape), name)


def arange(*args: Any, dtype: Any = None) -> Array:
    """NumPy's arange; without `dtype`, integers if every bound is an integer, else floats
    (int32 and float32, or 64-bit with jax_enable_x64)."""
    integral = all(isinstance(a, (int, np.integer)) for a in args)
    if dtype is None:
        dtype = default_int() if integral else default_float()
    name = dtype_name(dtype)
    if integral and 1 <= len(args) <= 3 and np.issubdtype(numpy_dtype(name), np.integer):
        # Counted by an iota, not spelled out as a constant: an arange over an image batch
        # (random bits) was a 6 MB constant that IREE took a minute to compile.
        steps = range(*(int(a) for a in args))
        counts = emit(T.iota, result=TensorSpec((len(steps),), name), dimension=0)
        return counts * steps.step + steps.start if (steps.step, steps.start) != (1, 0) else counts
    return asarray(_host("arange", lambda: np.arange(*args, dtype=numpy_dtype(name))))


def eye(n: int, m: int | None = None, dtype: Any = None) -> Array:
    dtype = default_float() if dtype is None else dtype
    return asarray(_host("eye", lambda: np.eye(n, m, dtype=numpy_dtype(dtype_name(dtype)))))


def _host(what: str, make: Any) -> np.ndarray:
    """A constant's values, made by NumPy; too large a one is a clear error."""
    try:
        return make()
    except MemoryError as e:
        raise TenzrError(f"{what}: {e}", user_location()) from None


# --------------------------------------------------------------------------- reductions


def _reduce(opdef, x: ArrayLike, axis: Any, keepdims: bool) -> Array:
    x = asarray(x)
    axes = _axes(axis, x.ndim)
    if not axes and x.ndim:
        return x
    return emit(opdef, x, axes=axes or (), keepdims=keepdims)


def _accumulated(x: ArrayLike, dtype: Any) -> Array:
    """x in the type a sum or product accumulates in: `dtype`, else JAX's: booleans and
    integers at least as wide as the default integer, of their signedness."""
    x = asarray(x)
    if dtype is not None:
        return astype(x, dtype)
    return x if x.spec.is_inexact else astype(x, summed_dtype(x.dtype))


def sum(x: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
        initial: Any = None, where: Any = None) -> Array:
    """The sum over `axis` (None: all) of the elements `where` picks (a boolean array that
    broadcasts against x; all when None), plus `initial`."""
    _no_out("sum", out)
    total = _reduce(T.reduce_sum, _masked(_accumulated(x, dtype), where, 0), axis, keepdims)
    return total if initial is None else total + astype(asarray(initial), total.dtype)


def prod(x: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
         initial: Any = None, where: Any = None) -> Array:
    """The product over `axis` (None: all), of the elements `where` picks, times `initial`.
    The product of a tuple or list of numbers (a shape, say) is NumPy's, a number known
    while tracing, so it can size a reshape."""
    _no_out("prod", out)
    if isinstance(x, (tuple, list)) and all(isinstance(d, (int, float, np.number)) for d in x) and where is None:
        return np.prod(x, axis=axis, dtype=dtype, keepdims=keepdims, initial=1 if initial is None else initial)
    total = _reduce(T.reduce_prod, _masked(_accumulated(x, dtype), where, 1), axis, keepdims)
    return total if initial is None else total * astype(asarray(initial), total.dtype)


def _masked(x: Array, mask: Any, fill: Any) -> Array:
    """x where `mask` (a reduction's where=, broadcast against x) is true, `fill` elsewhere."""
    return x if mask is None else where(astype(asarray(mask), np.bool_), x, astype(asarray(fill), x.dtype))


def _lexicographic(opdef, x: Array, axis: Any, keepdims: bool) -> Array:
    """NumPy's max or min of complex numbers: by real part, ties by imaginary part."""
    re, im = emit(T.real, x), emit(T.imag, x)
    best_re = _reduce(opdef, re, axis, keepdims=True)
    fill = -math.inf if opdef is T.reduce_max else math.inf
    best_im = _reduce(opdef, where(re == emit(T.stop_gradient, best_re), im, fill), axis, keepdims=True)
    out = emit(T.complex_, best_re, best_im)
    return out if keepdims else squeeze(out, _axes(axis, x.ndim) or None)


def max(x: ArrayLike, axis: Any = None, out: None = None, keepdims: bool = False, initial: Any = None,
        where: Any = None) -> Array:
    """The maximum over `axis` (None: all) of the elements `where` picks and `initial`;
    complex numbers compare as NumPy's do (real part first)."""
    return _extreme(T.reduce_max, x, axis, out, keepdims, initial, where)


def min(x: ArrayLike, axis: Any = None, out: None = None, keepdims: bool = False, initial: Any = None,
        where: Any = None) -> Array:
    """The minimum over `axis` (None: all) of the elements `where` picks and `initial`;
    complex numbers as in `max`."""
    return _extreme(T.reduce_min, x, axis, out, keepdims, initial, where)


def _extreme(opdef, x: ArrayLike, axis: Any, out: None, keepdims: bool, initial: Any, mask: Any) -> Array:
    largest = opdef is T.reduce_max
    what = "max" if largest else "min"
    _no_out(what, out)
    x = asarray(x)
    if mask is not None and initial is None:
        raise TenzrError(f"{what}: where= needs initial= (the {what}imum of no elements is undefined), as in JAX",
                         user_location())
    if x.spec.is_complex:
        if mask is not None or initial is not None:
            raise TenzrError(f"{what}: initial= and where= take real arrays", user_location())
        return _lexicographic(opdef, x, axis, keepdims)
    if x.spec.dtype == "i1":  # (booleans as 0 and 1: any and all)
        found = _extreme(opdef, astype(x, np.int32), axis, out, keepdims, initial, mask)
        return astype(found, np.bool_)
    best = _reduce(opdef, _masked(x, mask, _identity_of(opdef, x.dtype)), axis, keepdims)
    if initial is None:
        return best
    return (maximum if largest else minimum)(best, astype(asarray(initial), best.dtype))


def _identity_of(opdef, dtype: np.dtype) -> Any:
    """The element that never wins a maximum (or minimum): -inf, or the smallest integer."""
    largest = opdef is T.reduce_max
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if largest else info.max
    return -math.inf if largest else math.inf


amax, amin = max, min


def mean(x: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False, *,
         where: Any = None) -> Array:
    """The mean over `axis` (None: all) of the elements `where` picks."""
    _no_out("mean", out)
    x = _float(x) if dtype is None else astype(x, dtype)
    if x.spec.dtype in HALF_TYPES:  # (computed in float32, as JAX's: the sum may not fit)
        return astype(mean(astype(x, np.float32), axis, keepdims=keepdims, where=where), x.dtype)
    if where is None:
        count: Any = float(math.prod(x.shape[a] for a in _axes(axis, x.ndim)))
    else:
        count = sum(_masked(full_like(x, 1), where, 0), axis, keepdims=keepdims)
    return sum(x, axis, keepdims=keepdims, where=where) / count


def _arg(opdef, x: ArrayLike, axis: int | None, out: None, keepdims: bool | None) -> Array:
    """The index of the first maximum or minimum, in JAX's default integer type."""
    _no_out(opdef.name, out)
    x = asarray(x)
    rank = x.ndim
    if axis is None:
        x = reshape(x, (-1,))
    (dim,) = _axes(0 if axis is None else axis, x.ndim)
    found = astype(emit(opdef, astype(x, np.int32) if x.spec.dtype == "i1" else x, axis=dim), default_int())
    if not keepdims:
        return found
    return reshape(found, (1,) * rank) if axis is None else expand_dims(found, dim)


def argmax(x: ArrayLike, axis: int | None = None, out: None = None, keepdims: bool | None = None) -> Array:
    return _arg(T.argmax, x, axis, out, keepdims)


def argmin(x: ArrayLike, axis: int | None = None, out: None = None, keepdims: bool | None = None) -> Array:
    return _arg(T.argmin, x, axis, out, keepdims)


def sort(x: ArrayLike, axis: int | None = -1, *, kind: None = None, order: None = None, stable: bool = True,
         descending: bool = False) -> Array:
    """A stable sort along `axis` (None: of x flattened), ascending, or with `descending`
    largest first (equal entries in their order: at ties the gradient may go to another of
    the equal entries than JAX's, which reverses an ascending sort). NaNs go last, or first
    when descending."""
    del kind, stable  # (always stable)
    _no_order("sort", order)
    x = asarray(x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    return emit(T.sort, x, axis=axis, descending=descending)


def argsort(x: ArrayLike, axis: int | None = -1, *, kind: None = None, order: None = None, stable: bool = True,
            descending: bool = False) -> Array:
    """The indices that sort x stably along `axis` (NumPy's kind="stable"), in JAX's default
    integer type; `descending` as in `sort`."""
    del kind, stable  # (always stable)
    _no_order("argsort", order)
    x = asarray(x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    return astype(emit(T.argsort, x, axis=axis, descending=descending), default_int())


def _no_order(what: str, order: Any) -> None:
    if order is not None:
        raise TenzrError(f"{what}: order= is not supported (tenzr arrays have no structured dtypes)", user_location())


# --------------------------------------------------------------------------- products


def matmul(a: ArrayLike, b: ArrayLike, *, precision: Any = None, preferred_element_type: Any = None) -> Array:
    """NumPy matmul: 1-D operands are promoted to matrices and the added dim removed.
    `precision` and `preferred_element_type` as in `dot`."""
    return _preferred(_matmul(a, b), preferred_element_type)


def _preferred(result: Array, preferred_element_type: Any) -> Array:
    """A product's result in JAX's `preferred_element_type`, where one is given. (Products
    take JAX's `precision=` too, and ignore it: tenzr always multiplies at the operands'
    own precision, which is JAX's `Precision.HIGHEST`.)"""
    return result if preferred_element_type is None else result.astype(preferred_element_type)


def _matmul(a: ArrayLike, b: ArrayLike) -> Array:
    a, b = promote(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise TenzrError("matmul: operands must not be scalars (use *)", user_location())
    a2 = reshape(a, (1, a.shape[0])) if a.ndim == 1 else a
    b2 = reshape(b, (b.shape[0], 1)) if b.ndim == 1 else b
    out = emit(T.matmul, a2, b2)
    if a.ndim == 1 and b.ndim == 1:
        return reshape(out, ())
    if a.ndim == 1:
        return reshape(out, out.shape[:-2] + out.shape[-1:])
    if b.ndim == 1:
        return reshape(out, out.shape[:-1])
    return out


def dot(a: ArrayLike, b: ArrayLike, *, precision: Any = None, preferred_element_type: Any = None) -> Array:
    """NumPy's dot. `precision` (JAX's) is accepted and ignored: tenzr multiplies at the
    operands' own precision; `preferred_element_type` converts the result."""
    return _preferred(_dot(a, b), preferred_element_type)


def _dot(a: ArrayLike, b: ArrayLike) -> Array:
    a, b = promote(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if b.ndim <= 2:
        return matmul(a, b)
    # a's last axis with b's second-to-last: a[:-1] + b[:-2] + b[-1:]
    left, right = "abcdefghijklm"[:a.ndim - 1], "nopqrstuvwxyz"[:b.ndim - 2]
    return einsum(f"{left}K,{right}KL->{left}{right}L", a, b)


def outer(a: ArrayLike, b: ArrayLike) -> Array:
    a, b = promote(a, b)
    return reshape(a, (-1, 1)) * reshape(b, (1, -1))


def einsum(subscripts: Any, *operands: ArrayLike, precision: Any = None, preferred_element_type: Any = None,
           optimize: Any = "optimal") -> Array:
    """Einstein summation, as NumPy's: any number of operands (contracted pairwise, left to
    right, each pair as transposes, reductions and one batched matmul), an explicit or
    implicit output, ellipses (broadcast like NumPy) and repeated indices within a term
    (diagonals). Both call forms work: `einsum("ij,jk->ik", a, b)` and
    `einsum(a, [0, 1], b, [1, 2], [0, 2])`. `precision` and `preferred_element_type` as
    in `dot`; `optimize` is accepted (pairs are contracted left to right)."""
    return _preferred(_einsum(subscripts, *operands), preferred_element_type)


def _einsum(subscripts: Any, *operands: ArrayLike) -> Array:
    if not isinstance(subscripts, str):
        subscripts, operands = _einsum_sublists(subscripts, *operands)
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands) or not operands:
        raise TenzrError(f"einsum: '{subscripts}' has {len(terms)} terms but {len(operands)} operands",
                         user_location())
    for term in [*terms, output]:
        if not re.fullmatch(r"[a-zA-Z]*(\.\.\.)?[a-zA-Z]*", term):
            raise TenzrError(f"einsum: '{term}' is not a term of letters (with at most one '...')", user_location())
    xs = promote(*operands)
    terms, xs, dots = _einsum_ellipses(terms, xs)
    if not arrow:
        counts = {c: "".join(terms).count(c) for c in "".join(terms)}
        output = dots + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in dots))
    else:
        output = output.replace("...", dots)
    for term, x in zip(terms, xs, strict=True):
        if len(term) != x.ndim:
            raise TenzrError(f"einsum: term '{term}' does not match an operand of rank {x.ndim}", user_location())
    if len(set(output)) != len(output) or not set(output) <= set("".join(terms)):
        raise TenzrError(f"einsum: output '{output}' repeats an index or names one no input has", user_location())
    pairs = [_einsum_diagonals(t, x) for t, x in zip(terms, xs, strict=True)]
    term, x = pairs[0]
    for k in range(1, len(pairs)):
        later = output + "".join(t for t, _ in pairs[k + 1:])
        other, y = pairs[k]
        kept = "".join(dict.fromkeys(c for c in term + other if c in later))
        term, x = kept, _einsum_pair(term, x, other, y, kept)
    summed = [i for i, c in enumerate(term) if c not in output]
    x = sum(x, tuple(summed)) if summed else x
    kept = "".join(c for c in term if c in output)
    return transpose(x, [kept.index(c) for c in output])


def _einsum_ellipses(terms: list[str], xs: list[Array]) -> tuple[list[str], list[Array], str]:
    """Terms with each '...' spelled out in letters no term uses (the broadcast dims, right
    aligned as NumPy's), the operands broadcast to match, and those letters."""
    spans = [x.ndim - (len(t) - 3) if "..." in t else 0 for t, x in zip(terms, xs, strict=True)]
    if any(n < 0 for n in spans):
        raise TenzrError("einsum: an operand has fewer dims than its term names", user_location())
    rank = builtins.max(spans, default=0)
    if not rank:
        return [t.replace("...", "") for t in terms], xs, ""
    free = [c for c in _LETTERS if c not in "".join(terms)]
    dots = "".join(free[:rank])
    shapes = [x.shape[t.index("..."):t.index("...") + n] if "..." in t else () for t, x, n in zip(terms, xs, spans,
                                                                                                    strict=True)]
    common = broadcast_shapes(*shapes)
    if common is None:
        raise TenzrError(f"einsum: the dims under '...' ({', '.join(map(str, shapes))}) do not broadcast",
                         user_location())
    out_terms, out_xs = [], []
    for t, x, n in zip(terms, xs, spans, strict=True):
        if "..." in t:
            at = t.index("...")
            shape = (*x.shape[:at], *(1,) * (rank - n), *x.shape[at:at + n], *x.shape[at + n:])
            x = broadcast_to(reshape(x, shape), (*x.shape[:at], *common, *x.shape[at + n:]))
            t = t.replace("...", dots)
        out_terms.append(t)
        out_xs.append(x)
    return out_terms, out_xs, dots


def _einsum_diagonals(term: str, x: Array) -> tuple[str, Array]:
    """A term without repeated indices: each repeat is reduced to its diagonal."""
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        p, q = term.index(c), term.index(c, term.index(c) + 1)
        if x.shape[p] != x.shape[q]:
            raise TenzrError(f"einsum: index '{c}' is repeated over dims of sizes {x.shape[p]} and {x.shape[q]}",
                             user_location())
        mask = [1] * x.ndim
        mask[p] = mask[q] = x.shape[p]
        x = sum(x * reshape(eye(x.shape[p], dtype=x.dtype), mask), q)
        term = term[:q] + term[q + 1:]
    return term, x


def _einsum_pair(ta: str, a: Array, tb: str, b: Array, output: str) -> Array:
    """Two operands contracted to `output`'s indices."""
    # Sum away indices that appear in one operand only and not in the output.
    for which in (0, 1):
        term, other, x = (ta, tb, a) if which == 0 else (tb, ta, b)
        lone = [i for i, c in enumerate(term) if c not in other and c not in output]
        if lone:
            x = sum(x, tuple(lone))
            term = "".join(c for i, c in enumerate(term) if i not in lone)
        if which == 0:
            ta, a = term, x
        else:
            tb, b = term, x
    batch = [c for c in ta if c in tb and c in output]
    contract = [c for c in ta if c in tb and c not in output]
    free_a = [c for c in ta if c not in tb]
    free_b = [c for c in tb if c not in ta]
    for c in batch + contract:  # a size-1 dim broadcasts against the other's, as in NumPy
        i, j = ta.index(c), tb.index(c)
        if a.shape[i] != b.shape[j]:
            if 1 not in (a.shape[i], b.shape[j]):
                raise TenzrError(f"einsum: index '{c}' has sizes {a.shape[i]} and {b.shape[j]}", user_location())
            if a.shape[i] == 1:
                a = broadcast_to(a, (*a.shape[:i], b.shape[j], *a.shape[i + 1:]))
            else:
                b = broadcast_to(b, (*b.shape[:j], a.shape[i], *b.shape[j + 1:]))
    size = {c: n for t, x in ((ta, a), (tb, b)) for c, n in zip(t, x.shape, strict=True)}
    a3 = reshape(transpose(a, [ta.index(c) for c in batch + free_a + contract]),
                 [size[c] for c in batch] + [math.prod(size[c] for c in free_a), math.prod(size[c] for c in contract)])
    b3 = reshape(transpose(b, [tb.index(c) for c in batch + contract + free_b]),
                 [size[c] for c in batch] + [math.prod(size[c] for c in contract), math.prod(size[c] for c in free_b)])
    out = emit(T.matmul, a3, b3)
    got = batch + free_a + free_b
    out = reshape(out, [size[c] for c in got])
    return transpose(out, [got.index(c) for c in output])


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum_sublists(*args: Any) -> tuple[str, tuple]:
    """NumPy's operand/sublist form as (subscripts, operands): operand, [axis ids], ...,
    then an optional output [axis ids]; ids are ints in [0, 52)."""
    def letters(sublist: Any) -> str:
        if not isinstance(sublist, (list, tuple)):
            raise TenzrError(f"einsum: expected a list of axis ids after each operand, got {sublist!r}",
                             user_location())
        ids = []
        for i in sublist:
            if i is Ellipsis:
                ids.append("...")
                continue
            if not isinstance(i, (int, np.integer)) or not 0 <= i < len(_LETTERS):
                raise TenzrError(f"einsum: axis ids must be ints in [0, {len(_LETTERS)}), got {i!r}",
                                 user_location())
            ids.append(_LETTERS[int(i)])
        return "".join(ids)

    pairs, rest = args[:len(args) // 2 * 2], args[len(args) // 2 * 2:]
    operands = pairs[0::2]
    inputs = ",".join(letters(sub) for sub in pairs[1::2])
    return (f"{inputs}->{letters(rest[0])}" if rest else inputs), tuple(operands)


# --------------------------------------------------------------------------- indexing


def take(x: ArrayLike, indices: ArrayLike, axis: int | None = None, out: None = None, mode: str | None = None,
         unique_indices: bool = False, indices_are_sorted: bool = False, fill_value: Any = None) -> Array:
    """JAX's `jnp.take`: indices of any shape. `mode` says what out-of-range ones give:
    "fill" (the default) gives `fill_value` (NaN for floats, the smallest signed or largest
    unsigned integer, True), negatives in [-n, 0) counting from the end; "clip" clamps to
    [0, n - 1]; "wrap" takes them modulo n; "promise_in_bounds" counts negatives from the
    end and clamps (what `x[i]` does)."""
    del unique_indices, indices_are_sorted  # (hints; tenzr's gather needs neither)
    _no_out("take", out)
    x = asarray(x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    (axis,) = _axes(axis, x.ndim)
    idx = _bounded_indices("take", _index_array(indices), x.shape[axis], mode)
    flat = reshape(idx, (idx.size,)) if idx.ndim != 1 else idx
    gathered = reshape(emit(T.gather, x, flat, axis=axis), x.shape[:axis] + idx.shape + x.shape[axis + 1:])
    mask_shape = (1,) * axis + idx.shape + (1,) * (x.ndim - axis - 1)
    return _filled(gathered, indices, x.shape[axis], mode, fill_value, mask_shape)


def take_along_axis(x: ArrayLike, indices: ArrayLike, axis: int | None, mode: str | None = None,
                    fill_value: Any = None) -> Array:
    """JAX's `jnp.take_along_axis`; `mode` and `fill_value` as in `take` (out-of-range
    indices give NaN by default)."""
    x = asarray(x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
        indices = reshape(indices, (-1,)) if isinstance(indices, Array) else np.ravel(indices)
    idx = _index_array(indices)
    (axis,) = _axes(axis, x.ndim)
    shape = broadcast_shapes(idx.shape[:axis] + idx.shape[axis + 1:], x.shape[:axis] + x.shape[axis + 1:])
    if shape is None or idx.ndim != x.ndim:
        raise TenzrError(f"take_along_axis: indices {list(idx.shape)} do not match array {list(x.shape)}",
                         user_location())
    n, given = x.shape[axis], idx.shape
    idx = _bounded_indices("take_along_axis", idx, n, mode, negatives_first=True)  # (JAX's: unlike take's)
    idx = broadcast_to(idx, (*shape[:axis], given[axis], *shape[axis:]))
    x = broadcast_to(x, (*shape[:axis], n, *shape[axis:]))
    picked = emit(T.take_along_axis, x, idx, axis=axis)
    return _filled(picked, indices, n, mode, fill_value, given)


_TAKE_MODES = (None, "fill", "clip", "wrap", "promise_in_bounds")


def _bounded_indices(what: str, idx: Array, n: int, mode: str | None, negatives_first: bool = False) -> Array:
    """Indices into a dimension of size n for tenzr's gathers (which count negatives from
    the end and clamp the rest), as `mode` reads them; "fill" is done by `_filled`. In
    "clip" mode negatives clamp to 0, or with `negatives_first` count from the end first."""
    if mode not in _TAKE_MODES:
        raise TenzrError(f"{what}: mode must be one of 'fill', 'clip', 'wrap' or 'promise_in_bounds', got {mode!r}",
                         user_location())
    if mode == "clip":
        return clip(where(idx < 0, idx + n, idx) if negatives_first else idx, 0, builtins.max(n - 1, 0))
    if mode == "wrap":
        return remainder(idx, n) if n else idx
    return idx


def _filled(gathered: Array, indices: Any, n: int, mode: str | None, fill_value: Any, mask_shape: tuple) -> Array:
    """`gathered` with `fill_value` where an index is outside [-n, n) (in mode "fill"); the
    mask, `indices` in range, is reshaped to `mask_shape` and broadcast against `gathered`."""
    if mode not in (None, "fill"):
        return gathered
    if isinstance(indices, Array):
        in_range = emit(T.stop_gradient, (indices >= -n) & (indices < n))
    else:  # (known while tracing: all in range needs no mask)
        known = np.asarray(indices)
        if ((known >= -n) & (known < n)).all():
            return gathered
        in_range = constant((known >= -n) & (known < n))
    if fill_value is None:
        fill_value = _invalid_value(np.dtype(gathered.dtype))
    filler = astype(asarray(fill_value), gathered.dtype)
    return where(broadcast_to(reshape(in_range, mask_shape), gathered.shape), gathered, filler)


def _invalid_value(dtype: np.dtype) -> Any:
    """JAX's fill for out-of-range reads: NaN, the smallest signed or largest unsigned
    integer, True."""
    if dtype == np.bool_:
        return True
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    return complex(math.nan, math.nan) if dtype.kind == "c" else math.nan


def _no_out(what: str, out: Any) -> None:
    if out is not None:
        raise TenzrError(f"{what}: out= is not supported (tenzr arrays are immutable; use the result)",
                         user_location())


def _index_array(indices: ArrayLike) -> Array:
    idx = indices if isinstance(indices, Array) else None
    if idx is None:
        array = np.asarray(indices)
        if array.dtype.kind not in "iu":
            raise TenzrError(f"indices must be integers, got {array.dtype}", user_location())
        idx = constant(array.astype(np.int64 if array.dtype.itemsize > 4 else np.int32))
    if idx.spec.dtype not in INT_TYPES:
        raise TenzrError(f"indices must be integers, got {idx.dtype}", user_location())
    return idx


def _index_entries(index: Any, ndim: int) -> list:
    """An index's entries with its ellipsis expanded and slices added up to `ndim`: one per
    dimension of the indexed array, besides the Nones (new dimensions)."""
    entries = list(index) if isinstance(index, tuple) else [index]
    ellipses = [i for i, e in enumerate(entries) if e is Ellipsis]  # identity: entries may be arrays
    if len(ellipses) > 1:
        raise TenzrError("an index can only have a single ellipsis ('...')", user_location())
    real = [e for e in entries if e is not None and e is not Ellipsis]
    if len(real) > ndim:
        raise TenzrError(f"too many indices: {len(real)} for an array of rank {ndim}", user_location())
    if ellipses:
        at = ellipses[0]
        entries[at:at + 1] = [slice(None)] * (ndim - len(real))
    return entries + [slice(None)] * (ndim - len([e for e in entries if e is not None]))


def _concrete_masks_as_indices(index: Any, shape: tuple[int, ...]) -> Any:
    """`index` with each NumPy boolean array in it (a mask whose entries are known while
    tracing) as the integer arrays of its true positions, as JAX's; a mask must have the
    shape of the dims it indexes."""
    entries = [np.asarray(e) if isinstance(e, list) and e and builtins.all(isinstance(v, (bool, np.bool_)) for v in e)
               else e for e in (index if isinstance(index, tuple) else [index])]  # (a list of bools is a mask too)

    def is_mask(e: Any) -> bool:
        return isinstance(e, np.ndarray) and e.dtype == np.bool_ and e.ndim > 0

    if not any(is_mask(e) for e in entries):
        return index
    spanned = builtins.sum(e.ndim if is_mask(e) else 1 for e in entries if e is not None and e is not Ellipsis)
    out: list[Any] = []
    dim = 0
    for e in entries:
        if e is Ellipsis:
            dim += len(shape) - spanned
        elif is_mask(e):
            if e.shape != shape[dim:dim + e.ndim]:
                raise TenzrError(f"a boolean index of shape {e.shape} does not match the shape "
                                 f"{shape[dim:dim + e.ndim]} of the dims it indexes", user_location())
            out.extend(np.nonzero(e))
            dim += e.ndim
            continue
        elif e is not None:
            dim += 1
        out.append(e)
    return tuple(out)


def getitem(x: Array, index: Any) -> Array:
    """NumPy basic and integer-array indexing: ints, slices (any step), None, Ellipsis and
    integer arrays (several are broadcast together, as NumPy); an index array's out-of-range
    entries clamp, each along its own dimension (as JAX's). A NumPy boolean mask indexes its
    true positions (a traced one cannot: the result's shape would depend on its values)."""
    entries = _index_entries(_concrete_masks_as_indices(index, x.shape), x.ndim)
    # With an index array present, integers count as advanced indices too (NumPy's rule):
    # that decides whether the advanced indices are adjacent, hence where their dims go.
    has_array = any(_is_index_array(e) for e in entries)
    spans: list[tuple[int, int, int]] = []  # (start, stop, step) per dim of x
    reverse: list[int] = []
    advanced: list[tuple[int, Array]] = []
    layout: list[tuple[str, int | None]] = []
    dim = 0
    for e in entries:
        if e is None:
            layout.append(("new", None))
            continue
        n = x.shape[dim]
        if isinstance(e, (bool, np.bool_)) or (_is_index_array(e) and np.dtype(
                getattr(e, "dtype", np.asarray(e).dtype) if not isinstance(e, Array) else e.dtype) == np.bool_):
            raise TenzrError("boolean mask indexing with a traced mask gives a data-dependent shape; use "
                             "tz.where(mask, x, 0), or a NumPy mask", user_location())
        if isinstance(e, (int, np.integer)):
            i = int(e) + n if e < 0 else int(e)
            if not 0 <= i < n:
                raise TenzrError(f"index {int(e)} is out of bounds for axis {dim} with size {n}", user_location())
            if has_array:
                spans.append((0, n, 1))
                advanced.append((dim, _index_array(np.int32(i))))
                layout.append(("adv", dim))
            else:
                spans.append((i, i + 1, 1))
                layout.append(("int", dim))
        elif isinstance(e, slice):
            b, s_, k = e.indices(n)
            count = len(range(b, s_, k))
            if k > 0:
                spans.append((b, b + (count - 1) * k + 1 if count else b, k))
            else:
                spans.append((b + (count - 1) * k if count else 0, b + 1 if count else 0, -k))
                reverse.append(dim)
            layout.append(("slice", dim))
        else:
            spans.append((0, n, 1))
            advanced.append((dim, _index_array(e)))
            layout.append(("adv", dim))
        dim += 1
    out = x
    if spans != [(0, n, 1) for n in x.shape]:
        start, stop, step = (list(column) for column in zip(*spans, strict=True))
        out = emit(T.slice_, out, start=start, stop=stop, step=step)
    if reverse:
        out = emit(T.reverse, out, dimensions=reverse)
    return _finish_index(out, layout, advanced)


class IndexUpdates:
    """`x.at`, JAX's indexed updates: `x.at[index].set(v)`, `.add`, `.subtract`,
    `.multiply`, `.divide`, `.power`, `.min`, `.max`, `.apply(f)` return a new array (x itself
    never changes), and `.get()` is `x[index]`. `index` is anything indexing takes (NumPy's
    boolean masks too, when they are constants). Where an index repeats, updates combine
    (`add` sums them, `set` keeps the last, `power` and `apply` apply each in turn). Updates
    out of range are dropped (`mode="clip"` clamps them instead); `get(mode="fill")` reads
    `fill_value` (NaN by default) out of range, where `x[index]` clamps. With updates of a
    wider dtype, the update is done in that dtype and its result cast back to x's, as in JAX
    (with its FutureWarning). JAX's hints `indices_are_sorted` and `unique_indices` are
    taken and need not be given."""

    __slots__ = ("_x",)

    def __init__(self, x: Array):
        self._x = x

    def __getitem__(self, index: Any) -> IndexUpdate:
        return IndexUpdate(self._x, index)


_UPDATE_MODES = (None, "drop", "fill", "clip", "promise_in_bounds")


def _scatter_method(how: str, doc: str, prepare: Callable[[Any], Any] | None = None) -> Callable[..., Array]:
    """An `IndexUpdate` method with JAX's signature that scatters `prepare(values)` by `how`."""
    def method(self: IndexUpdate, values: ArrayLike, *, indices_are_sorted: bool = False,
               unique_indices: bool = False, mode: str | None = None, wrap_negative_indices: bool = True) -> Array:
        return self._update(values if prepare is None else prepare(values), how, mode, wrap_negative_indices)

    method.__doc__ = doc
    return method


class IndexUpdate:
    """`x.at[index]`: call one of its methods to get the updated array."""

    __slots__ = ("_index", "_x")

    def __init__(self, x: Array, index: Any):
        self._x, self._index = x, _out_of_range_ints_as_arrays(index, x.shape)

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False, mode: str | None = None,
            fill_value: Any = None, wrap_negative_indices: bool = True) -> Array:
        self._check(mode, wrap_negative_indices)
        if mode not in ("fill", "drop"):
            return getitem(self._x, self._index)
        x = self._x
        filler = _invalid_value(np.dtype(x.dtype)) if fill_value is None else fill_value
        padded = concatenate([reshape(x, (x.size,)), reshape(astype(asarray(filler), x.dtype), (1,))])
        return take(padded, self._positions(mode), mode="promise_in_bounds")

    set = _scatter_method("set", "x with values written at the index (the last where it repeats).")
    add = _scatter_method("add", "x plus values at the index (summed where it repeats).")
    subtract = _scatter_method("add", "x minus values at the index.", lambda v: negative(asarray(v)))
    multiply = mul = _scatter_method("multiply", "x times values at the index.")

    def divide(self, values: ArrayLike, *, indices_are_sorted: bool = False, unique_indices: bool = False,
               mode: str | None = None, wrap_negative_indices: bool = True) -> Array:
        """x divided by values at the index (by their product where it repeats), as JAX divides:
        x / (ones of x's dtype multiplied by the values there), so integer x gives floats."""
        divisors = IndexUpdate(ones_like(self._x), self._index)._update(values, "multiply", mode,
                                                                      wrap_negative_indices)
        return divide(self._x, divisors)

    min = _scatter_method("min", "The smaller of x and values at the index.")
    max = _scatter_method("max", "The larger of x and values at the index.")

    def power(self, values: ArrayLike, *, indices_are_sorted: bool = False, unique_indices: bool = False,
              mode: str | None = None, wrap_negative_indices: bool = True) -> Array:
        """x ** values at the index; a position picked k times is raised k times, in order."""
        self._check(mode, wrap_negative_indices)
        x = self._x
        promoted, exponents = promote(x, values)
        positions, known = self._located(mode)
        exponents = reshape(broadcast_to(exponents, positions.shape), (positions.size,))
        return self._in_turn("power", unique_indices,
                             lambda flat, picked, entries: power(take(flat, picked, mode="promise_in_bounds"),
                                                                 take(exponents, entries, mode="promise_in_bounds")),
                             promoted, positions, known)

    def apply(self, func: Callable[[Array], Array], *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: str | None = None, wrap_negative_indices: bool = True) -> Array:
        """func (elementwise) applied at the index; a position picked k times gets it k times."""
        self._check(mode, wrap_negative_indices)
        return self._in_turn("apply", unique_indices,
                             lambda flat, picked, _: asarray(func(take(flat, picked, mode="promise_in_bounds"))),
                             self._x, *self._located(mode))

    def _in_turn(self, what: str, unique: bool, new_values: Callable[[Array, Array, Array], Array], x: Array,
                 positions: Array, known: np.ndarray | None) -> Array:
        """x with `new_values(x flat, positions, their entries)` written at the positions, in
        rounds: a position picked k times is written in k rounds, each round reading the last.
        The rounds are `known` while tracing for constant indices; a traced index needs
        unique_indices=True (one round)."""
        flat = reshape(x, (x.size,))
        entries = np.arange(positions.size)
        if known is None:
            if not unique:
                raise TenzrError(f"x.at[...].{what} with a traced index: pass unique_indices=True (tenzr cannot "
                                 "tell while tracing whether the index repeats a position)", user_location())
            rounds = [entries]
        else:
            known = known.reshape(-1)
            seen = np.zeros(x.size + 1, np.int64)
            turn = np.empty(known.size, np.int64)
            for k, position in enumerate(known):  # (each entry's turn: how often its position came before)
                turn[k] = seen[position]
                seen[position] += 1
            rounds = [entries[(turn == r) & (known < x.size)] for r in range(int(turn.max(initial=-1)) + 1)]
        picked_all = reshape(positions, (positions.size,))
        for chosen in rounds:
            if not chosen.size:
                continue
            picked = take(picked_all, chosen, mode="promise_in_bounds")
            flat = emit(T.scatter, flat, picked, astype(new_values(flat, picked, constant(chosen)), flat.dtype),
                        axis=0, mode="set")
        return astype(reshape(flat, x.shape), self._x.dtype)

    def _check(self, mode: str | None, wrap_negative_indices: bool) -> None:
        if mode not in _UPDATE_MODES:
            raise TenzrError(f"x.at[...]: mode must be one of 'drop', 'fill', 'clip' or 'promise_in_bounds', got "
                             f"{mode!r}", user_location())
        if not wrap_negative_indices:
            raise TenzrError("x.at[...]: wrap_negative_indices=False is not supported (negative indices count "
                             "from the end)", user_location())

    def _update(self, values: ArrayLike, how: str, mode: str | None, wrap_negative_indices: bool) -> Array:
        """Scatters into x flattened, at the flat positions the index picks: those are the
        index applied to the array of positions (by NumPy when the index is constant)."""
        self._check(mode, wrap_negative_indices)
        x = self._x
        positions = self._positions(mode)
        promoted, updates = promote(x, values)
        if updates.dtype != x.dtype:  # JAX updates in the promoted dtype too, with this warning
            warn(f"x.at[...]: the update is done in {updates.dtype} and cast back to the array's {x.dtype}; JAX "
                 "warns that this will become an error", FutureWarning)
        flat = emit(T.scatter, reshape(promoted, (promoted.size,)), reshape(positions, (positions.size,)),
                    reshape(broadcast_to(updates, positions.shape), (positions.size,)), axis=0, mode=how)
        return astype(reshape(flat, x.shape), x.dtype)

    def _traced(self) -> bool:
        index = self._index
        return isinstance(index, Array) or (isinstance(index, tuple) and any(isinstance(e, Array) for e in index))

    def _positions(self, mode: str | None) -> Array:
        return self._located(mode)[0]

    def _located(self, mode: str | None) -> tuple[Array, np.ndarray | None]:
        """The flat positions in x that the index picks, and their values when the index is
        known while tracing (else None). In mode "clip" out-of-range entries of index arrays
        clamp (as in `x[index]`); otherwise they are x.size (where tenzr.scatter writes
        nothing): as in JAX, such writes are dropped."""
        padded, widened = self._padded_index(mode)
        if self._traced():
            return getitem(constant(padded), widened), None
        try:
            known = np.asarray(padded[widened])
        except IndexError as e:
            raise TenzrError(f"x.at[...]: {e}", user_location()) from None
        return constant(known), known

    def _padded_index(self, mode: str | None) -> tuple[np.ndarray, Any]:
        """The array of x's flat positions and the index into it. Unless in mode "clip",
        each dimension an index array indexes gets one more position, x.size, where the
        array's out-of-range entries point (negative ones count from the end first)."""
        x = self._x
        positions = np.arange(x.size, dtype=np.int32).reshape(x.shape)
        entries = _index_entries(self._index, x.ndim)
        if any(_is_index_array(e) and np.asarray(e).dtype == np.bool_ for e in entries if not isinstance(e, Array)):
            return positions, self._index  # (NumPy's masks)
        clamp = mode == "clip"
        widths = [(0, 1) if _is_index_array(e) else (0, 0) for e in entries if e is not None]
        if not clamp and any(w != (0, 0) for w in widths):
            positions = np.pad(positions, widths, constant_values=x.size)
        kept, dim = [], 0
        for e in entries:
            if e is not None:
                kept.append(_in_range_or(e, x.shape[dim], clamp) if _is_index_array(e) else e)
                dim += 1
            else:
                kept.append(e)
        return positions, tuple(kept)


def _out_of_range_ints_as_arrays(index: Any, shape: tuple[int, ...]) -> Any:
    """`index` with its out-of-range integers as 0-d index arrays, which x.at's modes
    treat as JAX does (reads clamp or fill, writes drop or clamp), where `x[i]` refuses
    them."""
    entries = list(index) if isinstance(index, tuple) else [index]
    if any(_is_index_array(e) and not isinstance(e, Array) and np.asarray(e).dtype == np.bool_ for e in entries) or \
            (isinstance(index, Array) and index.spec.dtype == "i1"):
        return index  # (a mask spans several dimensions)
    expanded = _index_entries(index, len(shape))
    out, dim, changed = [], 0, False
    for e in expanded:
        if e is not None:
            if isinstance(e, (int, np.integer)) and not isinstance(e, (bool, np.bool_)) and \
                    not -shape[dim] <= e < shape[dim]:
                e, changed = np.asarray(e), True
            dim += 1
        out.append(e)
    return tuple(out) if changed else index


class HostIndexUpdates:
    """`x.at` of an array outside a trace (a `ConcreteArray`: what `tz.array` and compiled
    programs return): the same methods as `IndexUpdates`, each run at once, as an eager
    call (compiled once per index form and shapes). Integer index arrays are inputs of
    that program, so new index values reuse it; boolean masks, and the index of `apply` and
    `power`, are part of it."""

    __slots__ = ("_x",)

    def __init__(self, x: np.ndarray):
        self._x = x

    def __getitem__(self, index: Any) -> HostIndexUpdate:
        return HostIndexUpdate(self._x, index)


class HostIndexUpdate:
    __slots__ = ("_index", "_x")

    def __init__(self, x: np.ndarray, index: Any):
        self._x, self._index = x, index

    def __getattr__(self, how: str) -> Callable[..., Any]:
        if how.startswith("_") or not callable(getattr(IndexUpdate, how, None)):
            raise AttributeError(f"x.at[...] has no method '{how}'")
        fixed = how in ("apply", "power")  # (their rounds are planned from the index's values)

        def method(*args: Any, **keywords: Any) -> Any:
            index = tuple(_host_entry(e, fixed) for e in self._index) if isinstance(self._index, tuple) \
                else _host_entry(self._index, fixed)
            return _host_update(np.asarray(self._x), index, how, args, tuple(sorted(keywords.items())))

        return method


def _update_at(x: Any, index: Any, how: str, args: tuple, keywords: tuple) -> Array:
    """x.at[index].how(*args, **keywords), traced (see HostIndexUpdates)."""
    if isinstance(index, tuple):
        index = tuple(_as_entry(e) for e in index)
    else:
        index = _as_entry(index)
    return getattr(IndexUpdate(asarray(x), index), how)(*args, **dict(keywords))


_host_update = checked(_update_at, "x.at[...]")
"""`_update_at` run eagerly when called outside a trace."""


def _as_entry(entry: Any) -> Any:
    return entry.array if isinstance(entry, _Fixed) else entry.slice if isinstance(entry, _Slice) else entry


def _host_entry(entry: Any, fixed: bool) -> Any:
    """An index entry as an eager call takes it: slices and NumPy's masks (and with `fixed`,
    every index array) as hashable parts of the program, integer arrays as its inputs."""
    if isinstance(entry, slice):
        return _Slice(entry.start, entry.stop, entry.step)
    if isinstance(entry, (list, np.ndarray)):
        array = np.asarray(entry)
        return _Fixed(array) if fixed or array.dtype == np.bool_ else array
    return entry


@dataclass(frozen=True)
class _Slice:
    start: Any
    stop: Any
    step: Any

    @property
    def slice(self) -> slice:
        return slice(self.start, self.stop, self.step)


class _Fixed:
    """A NumPy array kept as a constant of an eager program: hashed and compared by value."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray):
        self.array = array

    def __hash__(self) -> int:
        return hash((self.array.shape, self.array.dtype.str, self.array.tobytes()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Fixed) and self.array.shape == other.array.shape and \
            self.array.dtype == other.array.dtype and bool(np.array_equal(self.array, other.array))


def _in_range_or(indices: Any, n: int, clamp: bool = False) -> Any:
    """Index array `indices` for a dimension of size n, with negative entries counted from
    the end and entries still out of range set to n (or with `clamp`, to the nearest end)."""
    if isinstance(indices, Array):
        if indices.spec.dtype not in INT_TYPES:
            return indices  # (a traced mask, or floats: getitem refuses them)
        idx = astype(indices, np.int64)
        idx = where(idx < 0, idx + n, idx)
        return clip(idx, 0, n - 1) if clamp else where((idx >= 0) & (idx < n), idx, n)
    given = np.asarray(indices)
    if given.dtype.kind not in "iu":
        return indices  # (getitem refuses floats)
    given = given.astype(np.int64)
    given = np.where(given < 0, given + n, given)
    return np.clip(given, 0, n - 1) if clamp else np.where((given >= 0) & (given < n), given, n)


def _is_index_array(e: Any) -> bool:
    return isinstance(e, (np.ndarray, Array, list, tuple))


def _finish_index(out: Array, layout: list, advanced: list) -> Array:
    adv_dims = [d for d, _ in advanced]
    contiguous = adv_dims == list(range(adv_dims[0], adv_dims[-1] + 1)) if adv_dims else True
    index_shape: tuple[int, ...] = ()
    if len(advanced) == 1:
        (d, idx), = advanced
        out = take(out, idx, axis=d, mode="promise_in_bounds")
        index_shape = idx.shape
    elif advanced:
        shapes = [idx.shape for _, idx in advanced]
        broadcast = broadcast_shapes(*shapes)
        if broadcast is None:
            raise TenzrError(f"index arrays of shapes {shapes} do not broadcast together", user_location())
        index_shape = broadcast
        others = [d for d in range(out.ndim) if d not in adv_dims]
        moved = transpose(out, adv_dims + others)
        sizes = [out.shape[d] for d in adv_dims]
        flat = reshape(moved, [math.prod(sizes)] + [out.shape[d] for d in others])
        linear = None
        stride = 1
        for (_, idx), size in reversed(list(zip(advanced, sizes, strict=True))):
            idx = astype(idx, np.int64)
            idx = clip(where(idx < 0, idx + size, idx), 0, size - 1)
            term = broadcast_to(idx, index_shape) * stride
            linear = term if linear is None else linear + term
            stride *= size
        out = take(flat, linear, axis=0, mode="promise_in_bounds")
        if contiguous:
            lead = len([d for d in others if d < adv_dims[0]])
            rank = len(index_shape)
            perm = list(range(rank, rank + lead)) + list(range(rank)) + list(range(rank + lead, out.ndim))
            out = transpose(out, perm)
    shape: list[int] = []
    placed = False
    if not contiguous:
        shape += index_shape
        placed = True
    for kind, d in layout:
        if kind == "new":
            shape.append(1)
        elif kind == "slice":
            shape.append(_size_after(out, layout, advanced, d, index_shape, contiguous))
        elif kind == "adv" and not placed:
            shape += index_shape
            placed = True
    return reshape(out, shape)


def _size_after(out: Array, layout: list, advanced: list, dim: int, index_shape: tuple, contiguous: bool) -> int:
    """The size of sliced dim `dim` in `out`, whose layout follows the indexing rules above."""
    adv_dims = [d for d, _ in advanced]
    position = 0
    if not contiguous:
        position = len(index_shape)
        for d in range(dim):
            position += d not in adv_dims
        return out.shape[position]
    for d in range(dim):
        if adv_dims and d == adv_dims[0]:
            position += len(index_shape)
        elif d not in adv_dims:
            position += 1
    return out.shape[position]


# --------------------------------------------------------------------------- docstrings

# name: (summary, example expression over x and v, what it prints). Each example was
# checked against NumPy when written; the doctest run in tests/python/test_docs.py keeps
# them true.
_EXAMPLE_SETUP = (">>> x = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], np.float32)\n"
                  ">>> v = np.array([3.0, 1.0, 2.0], np.float32)\n")
_DOCS: dict[str, tuple[str, str, str]] = {
    'exp': ('e to the x, elementwise (integers become float32).',
        'tz.exp(np.array([0.0, 0.0], np.float32))',
        'array([1., 1.], dtype=float32)'),
    'add': ('x + y with NumPy broadcasting.',
        'tz.add(x, v)',
        'array([[ 4., -1.,  5.],\n       [ 7.,  6., -4.]], dtype=float32)'),
    'subtract': ('x - y with NumPy broadcasting.',
        'tz.subtract(x, v)',
        'array([[-2., -3.,  1.],\n       [ 1.,  4., -8.]], dtype=float32)'),
    'multiply': ('x * y with NumPy broadcasting.',
        'tz.multiply(x, 2.0)',
        'array([[  2.,  -4.,   6.],\n       [  8.,  10., -12.]], dtype=float32)'),
    'maximum': ('Elementwise maximum with broadcasting; equal operands share the gradient.',
        'tz.maximum(x, 0.0)',
        'array([[1., 0., 3.],\n       [4., 5., 0.]], dtype=float32)'),
    'minimum': ('Elementwise minimum with broadcasting; equal operands share the gradient.',
        'tz.minimum(x, 0.0)',
        'array([[ 0., -2.,  0.],\n       [ 0.,  0., -6.]], dtype=float32)'),
    'equal': ('x == y, elementwise, as booleans.',
        'tz.equal(v, 2.0)',
        'array([False, False,  True])'),
    'not_equal': ('x != y, elementwise.',
        'tz.not_equal(v, 2.0)',
        'array([ True,  True, False])'),
    'less': ('x < y, elementwise.',
        'tz.less(v, 2.0)',
        'array([False,  True, False])'),
    'less_equal': ('x <= y, elementwise.',
        'tz.less_equal(v, 2.0)',
        'array([False,  True,  True])'),
    'greater': ('x > y, elementwise.',
        'tz.greater(v, 2.0)',
        'array([ True, False, False])'),
    'greater_equal': ('x >= y, elementwise.',
        'tz.greater_equal(v, 2.0)',
        'array([ True, False,  True])'),
    'logical_not': ('not x, elementwise.',
        'tz.logical_not(v > 2.0)',
        'array([False,  True,  True])'),
    'square': ('x * x.',
        'tz.square(v)',
        'array([9., 1., 4.], dtype=float32)'),
    'clip': ('x limited to [a_min, a_max] (either may be None).',
        'tz.clip(x, -1.0, 2.0)',
        'array([[ 1., -1.,  2.],\n       [ 2.,  2., -1.]], dtype=float32)'),
    'sum': ('Sum over `axis` (None: all), as NumPy; booleans sum as int32.',
        'tz.sum(x, axis=0)',
        'array([ 5.,  3., -3.], dtype=float32)'),
    'prod': ('Product over `axis` (None: all); its gradient is exact even with zeros.',
        'tz.prod(x, axis=1)',
        'array([  -6., -120.], dtype=float32)'),
    'max': ('Maximum over `axis` (None: all); ties share the gradient evenly.',
        'tz.max(x, axis=1)',
        'array([3., 5.], dtype=float32)'),
    'min': ('Minimum over `axis` (None: all); ties share the gradient evenly.',
        'tz.min(x, axis=1)',
        'array([-2., -6.], dtype=float32)'),
    'amax': ('Alias of tz.max.',
        'tz.amax(x)',
        'array(5., dtype=float32)'),
    'amin': ('Alias of tz.min.',
        'tz.amin(x)',
        'array(-6., dtype=float32)'),
    'mean': ('Mean over `axis` (None: all).',
        'tz.mean(x, axis=1)',
        'array([0.6666667, 1.       ], dtype=float32)'),
    'argmax': ('Index of the first maximum along `axis` (None: of the flattened array).',
        'tz.argmax(x, axis=1)',
        'array([2, 1], dtype=int32)'),
    'argmin': ('Index of the first minimum along `axis` (None: of the flattened array).',
        'tz.argmin(x, axis=1)',
        'array([1, 2], dtype=int32)'),
    'sort': ('Sorted along `axis` (NaN last); the gradient follows the permutation.',
        'tz.sort(v)',
        'array([1., 2., 3.], dtype=float32)'),
    'reshape': ('Same elements, new shape; one dimension may be -1.',
        'tz.reshape(x, (3, -1))',
        'array([[ 1., -2.],\n       [ 3.,  4.],\n       [ 5., -6.]], dtype=float32)'),
    'transpose': ('Permutes the axes (reversed when `axes` is None).',
        'tz.transpose(x)',
        'array([[ 1.,  4.],\n       [-2.,  5.],\n       [ 3., -6.]], dtype=float32)'),
    'moveaxis': ('Moves one axis to a new position.',
        'tz.moveaxis(x, 0, 1)',
        'array([[ 1.,  4.],\n       [-2.,  5.],\n       [ 3., -6.]], dtype=float32)'),
    'swapaxes': ('Swaps two axes.',
        'tz.swapaxes(x, 0, 1)',
        'array([[ 1.,  4.],\n       [-2.,  5.],\n       [ 3., -6.]], dtype=float32)'),
    'broadcast_to': ('Broadcasts to `shape` with NumPy rules; the gradient sums back.',
        'tz.broadcast_to(v, (2, 3))',
        'array([[3., 1., 2.],\n       [3., 1., 2.]], dtype=float32)'),
    'expand_dims': ('Inserts size-1 axes at `axis`.',
        'tz.expand_dims(v, 0)',
        'array([[3., 1., 2.]], dtype=float32)'),
    'squeeze': ('Removes size-1 axes (all of them when `axis` is None).',
        'tz.squeeze(tz.expand_dims(v, 0))',
        'array([3., 1., 2.], dtype=float32)'),
    'concatenate': ('Joins arrays along an existing axis.',
        'tz.concatenate([v, v])',
        'array([3., 1., 2., 3., 1., 2.], dtype=float32)'),
    'stack': ('Joins arrays along a new axis.',
        'tz.stack([v, v], axis=1)',
        'array([[3., 3.],\n       [1., 1.],\n       [2., 2.]], dtype=float32)'),
    'flip': ('Reverses the order along `axis` (all axes when None).',
        'tz.flip(v)',
        'array([2., 1., 3.], dtype=float32)'),
    'take_along_axis': ('Picks values along `axis` by an index array of the same rank, as NumPy.',
        'tz.take_along_axis(x, np.array([[2], [0]]), axis=1)',
        'array([[3.],\n       [4.]], dtype=float32)'),
    'dot': ('NumPy dot for scalars, vectors and matrices.',
        'tz.dot(v, v)',
        'array(14., dtype=float32)'),
    'outer': ('Outer product of two vectors.',
        'tz.outer(v[:2], v)',
        'array([[9., 3., 6.],\n       [3., 1., 2.]], dtype=float32)'),
    'zeros_like': ("Zeros with x's shape and dtype (a constant: no gradient flows).",
        'tz.zeros_like(v)',
        'array([0., 0., 0.], dtype=float32)'),
    'ones_like': ("Ones with x's shape and dtype.",
        'tz.ones_like(v)',
        'array([1., 1., 1.], dtype=float32)'),
    'full_like': ("`fill_value` with x's shape and dtype.",
        'tz.full_like(v, 7.0)',
        'array([7., 7., 7.], dtype=float32)'),
    'zeros': ('A constant array of zeros (float32 by default).',
        'tz.zeros((2,)) + v[:2]',
        'array([3., 1.], dtype=float32)'),
    'ones': ('A constant array of ones (float32 by default).',
        'tz.ones((2,)) + v[:2]',
        'array([4., 2.], dtype=float32)'),
    'full': ('A constant array of `fill_value` (float32 by default).',
        'tz.full((2,), 0.5) * v[:2]',
        'array([1.5, 0.5], dtype=float32)'),
    'arange': ('A constant range, as np.arange (int32 by default).',
        'tz.arange(4) * 2',
        'array([0, 2, 4, 6], dtype=int32)'),
    'eye': ('A constant identity matrix (float32 by default).',
        'tz.eye(2) @ x[:, :2]',
        'array([[ 1., -2.],\n       [ 4.,  5.]], dtype=float32)'),
}


def _document() -> None:
    for name, (summary, expression, printed) in _DOCS.items():
        fn = globals()[name]
        example = f"{_EXAMPLE_SETUP}>>> tz.jit(lambda x, v: {expression})(x, v)\n{printed}"
        fn.__doc__ = f"{summary}\n\n{example}\n"


_document()
check_arguments(globals(), "tz.", {"getitem": "indexing"})


# --------------------------------------------------------------------------- Array's operators and methods


def _swapped(fn: Any) -> Any:
    return lambda self, other: fn(other, self)


_ARRAY_METHODS = {
    "__add__": add, "__radd__": _swapped(add),
    "__sub__": subtract, "__rsub__": _swapped(subtract),
    "__mul__": multiply, "__rmul__": _swapped(multiply),
    "__truediv__": divide, "__rtruediv__": _swapped(divide),
    "__pow__": power, "__rpow__": _swapped(power),
    "__matmul__": matmul, "__rmatmul__": _swapped(matmul),
    "__lt__": less, "__le__": less_equal, "__gt__": greater, "__ge__": greater_equal,
    "__eq__": equal, "__ne__": not_equal,
    "__getitem__": getitem,
    "__mod__": remainder, "__rmod__": _swapped(remainder),
    "__floordiv__": floor_divide, "__rfloordiv__": _swapped(floor_divide),
    "__and__": bitwise_and, "__rand__": _swapped(bitwise_and),
    "__or__": bitwise_or, "__ror__": _swapped(bitwise_or),
    "__xor__": bitwise_xor, "__rxor__": _swapped(bitwise_xor),
    "__lshift__": left_shift, "__rlshift__": _swapped(left_shift),
    "__rshift__": right_shift, "__rrshift__": _swapped(right_shift),
    "__invert__": bitwise_not,
    "__neg__": negative, "__pos__": lambda self: self, "__abs__": abs,
    "reshape": lambda self, *shape: reshape(self, shape[0] if len(shape) == 1 else shape),
    "transpose": lambda self, *axes: transpose(self, (axes[0] if len(axes) == 1 else axes) or None),
    "sum": sum, "mean": mean, "max": max, "min": min, "prod": prod, "argmax": argmax, "argmin": argmin,
    "flatten": lambda self: reshape(self, (self.size,)), "ravel": lambda self: reshape(self, (self.size,)),
    "squeeze": lambda self, axis=None: squeeze(self, axis),
    "clip": clip,
    "swapaxes": swapaxes, "dot": dot, "round": round, "take": take, "sort": sort, "argsort": argsort,
    "copy": lambda self: self,
}
"""What `Array`'s operators and methods call (api_boundary: an array used after it escaped
its trace fails at the user's line)."""
for _name, _method in _ARRAY_METHODS.items():
    setattr(Array, _name, api_boundary(checked(_method, f"Array.{_name}")))
Array.T = property(api_boundary(lambda self: transpose(self)))  # type: ignore[assignment]
Array.at = property(lambda self: IndexUpdates(self))
ConcreteArray.at = property(lambda self: HostIndexUpdates(self))
Array.mT = property(api_boundary(lambda self: swapaxes(self, -1, -2)))  # type: ignore[attr-defined]
