"""The rest of the NumPy routines JAX's numpy offers: NumPy 2's array-API functions
(`matrix_transpose`, `unstack`, `vecdot`, `matvec`, `cumulative_sum`, ...), elementwise ones
(`cbrt`, `trunc`, `copysign`, `ldexp`, `modf`, `gcd`, `lcm`, ...), NaN-skipping
statistics, polynomials and window functions, `isin`, `digitize`, `convolve`, `correlate`,
`apply_along_axis`, `vectorize`, and the set routines of data-dependent size (`union1d`,
`intersect1d`, `setdiff1d`, `setxor1d`, NumPy 2's `unique_values` and its siblings), which
take `size=` under jit as `unique` does. Names, arguments and semantics are NumPy's (JAX's where
they differ); each is built from `numpy_api`'s and `numpy_lib`'s functions, so it
differentiates, batches and compiles as they do.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from tenzr.batching import vmap
from tenzr.control import while_loop
from tenzr.core import Array, api_boundary, asarray, check_arguments, checked, promote, user_location
from tenzr.dialect.diagnostics import TenzrError
from tenzr.flags import default_float, default_int
from tenzr.numpy_api import (
    _float,
    _no_out,
    abs,  # noqa: A004 (NumPy's names, as in numpy_api)
    arange,
    argmax,
    argmin,
    argsort,
    broadcast_to,
    ceil,
    concatenate,
    cos,
    equal,
    expand_dims,
    floor,
    floor_divide,
    fmod,
    isinf,
    isnan,
    log10,
    logical_and,
    logical_not,
    matmul,
    moveaxis,
    pad,
    power,
    remainder,
    reshape,
    round,  # noqa: A004
    sign,
    signbit,
    sqrt,
    sum,  # noqa: A004
    swapaxes,
    take,
    where,
    zeros,
)
from tenzr.numpy_api import max as reduce_max
from tenzr.numpy_api import min as reduce_min
from tenzr.numpy_api import where as where_  # (for bodies whose where= parameter hides `where`)
from tenzr.numpy_lib import (
    _first_true,
    _picked,
    _sized_or_all,
    _sorted_runs,
    _unique_call,
    _unique_sized,
    broadcast_arrays,
    conj,
    cumprod,
    cumsum,
    diag,
    linspace,
    logspace,
    nanmean,
    ravel,
    real,
    roll,
    searchsorted,
)
from tenzr.numpy_lib import any as reduce_any

ArrayLike = Any


# --------------------------------------------------------------------------- array API


def matrix_transpose(x: ArrayLike) -> Array:
    """x with its last two axes swapped."""
    x = asarray(x)
    if x.ndim < 2:
        raise TenzrError(f"matrix_transpose: needs an array of rank 2 or more, got rank {x.ndim}", user_location())
    return swapaxes(x, -1, -2)


def astype(x: ArrayLike, dtype: Any, /, *, copy: bool = False) -> Array:
    """x converted to `dtype` (the array API's function form of `x.astype`)."""
    del copy  # (arrays are immutable: a copy and a view are the same)
    return asarray(x).astype(dtype)


def copy(a: ArrayLike, order: Any = None) -> Array:
    """a as an array (arrays are immutable, so it is a copy)."""
    del order
    return asarray(a)


def unstack(x: ArrayLike, /, *, axis: int = 0) -> tuple[Array, ...]:
    """The slices of x along `axis`, as a tuple."""
    x = moveaxis(asarray(x), axis, 0)
    return tuple(x[i] for i in range(x.shape[0]))


def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Array:
    """The dot product of vectors along `axis` (the first one conjugated), broadcast over
    the other axes; `precision` and `preferred_element_type` as in `dot`."""
    return sum(conj(x1) * asarray(x2), axis, dtype=preferred_element_type)


def matvec(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Matrix-vector products: x1[..., m, n] with x2[..., n], broadcast over the rest."""
    return matmul(x1, expand_dims(x2, -1))[..., 0]


def vecmat(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Vector-matrix products: conj(x1[..., m]) with x2[..., m, n], broadcast over the rest."""
    return matmul(expand_dims(conj(x1), -2), x2)[..., 0, :]


def _cumulative(accumulate: Callable[..., Array], identity: int, x: ArrayLike, axis: int | None, dtype: Any,
                include_initial: bool, name: str) -> Array:
    x = asarray(x)
    if axis is None:
        if x.ndim > 1:
            raise TenzrError(f"{name}: axis is required for arrays of rank above 1", user_location())
        axis = 0
    out = accumulate(x, axis, dtype)
    if include_initial:
        widths = [(0, 0)] * out.ndim
        widths[axis % out.ndim] = (1, 0)
        out = pad(out, widths, constant_values=identity)
    return out


def cumulative_sum(x: ArrayLike, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Array:
    """Running sums along `axis` (NumPy 2's; with include_initial, a 0 first)."""
    return _cumulative(cumsum, 0, x, axis, dtype, include_initial, "cumulative_sum")


def cumulative_prod(x: ArrayLike, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Array:
    """Running products along `axis` (NumPy 2's; with include_initial, a 1 first)."""
    return _cumulative(cumprod, 1, x, axis, dtype, include_initial, "cumulative_prod")


# --------------------------------------------------------------------------- elementwise


def trunc(x: ArrayLike) -> Array:
    """x rounded toward zero."""
    x = asarray(x)
    return where(x < 0, ceil(x), floor(x)) if x.is_float else x


def rint(x: ArrayLike) -> Array:
    """x rounded to the nearest integer, halves to even; integers and booleans become the
    default float (JAX's)."""
    x = asarray(x)
    return round(x) if x.is_float or x.spec.is_complex else x.astype(default_float())


def cbrt(x: ArrayLike) -> Array:
    """The real cube root (negative for negative x)."""
    x = _float(x)
    return sign(x) * abs(x) ** (1 / 3)


def copysign(x1: ArrayLike, x2: ArrayLike) -> Array:
    """|x1| with the sign of x2 (of its sign bit: -0.0 counts as negative)."""
    magnitude = abs(_float(x1))
    return where(signbit(x2), -magnitude, magnitude)


def positive(x: ArrayLike) -> Array:
    """+x."""
    return asarray(x)


def float_power(x1: ArrayLike, x2: ArrayLike) -> Array:
    """x1 ** x2 computed in floating point (integers become floats first)."""
    return power(_float(x1), _float(x2))


def ldexp(x1: ArrayLike, x2: ArrayLike) -> Array:
    """x1 * 2**x2 (x2 integers)."""
    x2 = asarray(x2)
    if x2.is_float:
        raise TenzrError(f"ldexp: the exponents must be integers, got {x2.dtype}", user_location())
    x1 = _float(x1)
    return x1 * power(2.0, x2.astype(x1.dtype))


def modf(x: ArrayLike) -> tuple[Array, Array]:
    """(the fractional part, the integral part) of x, both with x's sign."""
    whole = trunc(_float(x))
    return _float(x) - whole, whole


def divmod(x1: ArrayLike, x2: ArrayLike) -> tuple[Array, Array]:  # noqa: A001 (NumPy's name)
    """(x1 // x2, x1 % x2), as Python's."""
    return floor_divide(x1, x2), remainder(x1, x2)


def _integers(name: str, x1: ArrayLike, x2: ArrayLike) -> list[Array]:
    x1, x2 = promote(x1, x2)
    if not np.issubdtype(x1.dtype, np.integer):
        raise TenzrError(f"{name}: takes integers, got {x1.dtype}", user_location())
    return broadcast_arrays(x1, x2)


def gcd(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The greatest common divisor of |x1| and |x2| (integers, broadcast; 0 for two 0s), by
    Euclid's algorithm in a while loop, as JAX's."""
    def step(pair: tuple[Array, Array]) -> tuple[Array, Array]:
        a, b = pair
        going = b != 0
        return where(going, b, a), where(going, fmod(a, where(going, b, 1)), 0)

    a, b = _integers("gcd", x1, x2)
    # (the last abs, and no swap of the pair as JAX's, for |INT_MIN|, which stays negative:
    # gcd(6, INT_MIN) is 2 as NumPy's, where JAX's loops for ever)
    return abs(while_loop(lambda pair: reduce_any(pair[1] != 0), step, (abs(a), abs(b)))[0])


def lcm(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The least common multiple of |x1| and |x2| (integers, broadcast; 0 where either is 0)."""
    a, b = (abs(x) for x in _integers("lcm", x1, x2))
    divisor = gcd(a, b)
    return where(divisor == 0, 0, a * floor_divide(b, where(divisor == 0, 1, divisor)))


def isposinf(x: ArrayLike) -> Array:
    """Whether each element is +inf."""
    x = asarray(x)
    return logical_and(isinf(x), x > 0)


def isneginf(x: ArrayLike) -> Array:
    """Whether each element is -inf."""
    x = asarray(x)
    return logical_and(isinf(x), x < 0)


# --------------------------------------------------------------------------- statistics


def ptp(a: ArrayLike, axis: Any = None, keepdims: bool = False) -> Array:
    """Peak to peak: max - min along `axis`."""
    return reduce_max(a, axis, keepdims=keepdims) - reduce_min(a, axis, keepdims=keepdims)


def nanvar(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0, keepdims: bool = False,
           where: Any = None) -> Array:
    """The variance of the elements that are not NaN (and that `where` picks; NaN where
    fewer than ddof + 1)."""
    _no_out("nanvar", out)
    a = _float(a)
    present = logical_not(isnan(a)) if where is None else logical_and(logical_not(isnan(a)), where)
    deviation = where_(present, a - nanmean(a, axis, keepdims=True, where=where), 0)
    count = sum(present, axis, dtype=real(a).dtype, keepdims=keepdims) - ddof
    result = sum(deviation * conj(deviation), axis, keepdims=keepdims) / where_(count > 0, count, np.nan)
    result = real(result) if result.spec.is_complex else result
    return result.astype(dtype) if dtype is not None else result


def nanstd(a: ArrayLike, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0, keepdims: bool = False,
           where: Any = None) -> Array:
    """The standard deviation of the elements that are not NaN (and that `where` picks)."""
    return sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where))


def _nan_arg(a: ArrayLike, axis: int | None, keepdims: bool, largest: bool) -> Array:
    a = asarray(a)
    fill = -np.inf if largest else np.inf
    found = (argmax if largest else argmin)(where(isnan(a), fill, a), axis)
    nothing = logical_not(reduce_any(logical_not(isnan(a)), axis))
    out = where(nothing, -1, found)
    if keepdims:
        out = expand_dims(out, tuple(range(a.ndim)) if axis is None else axis)
    return out


def nanargmax(a: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Array:
    """The index of the largest element that is not NaN (-1 where all are NaN, as JAX's)."""
    return _nan_arg(a, axis, keepdims, largest=True)


def nanargmin(a: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Array:
    """The index of the smallest element that is not NaN (-1 where all are NaN, as JAX's)."""
    return _nan_arg(a, axis, keepdims, largest=False)


def nancumsum(a: ArrayLike, axis: int | None = None, dtype: Any = None) -> Array:
    """Running sums with NaNs counted as zeros."""
    a = asarray(a)
    return cumsum(where(isnan(a), 0, a), axis, dtype)


def nancumprod(a: ArrayLike, axis: int | None = None, dtype: Any = None) -> Array:
    """Running products with NaNs counted as ones."""
    a = asarray(a)
    return cumprod(where(isnan(a), 1, a), axis, dtype)


# --------------------------------------------------------------------------- sets and bins


def isin(element: ArrayLike, test_elements: ArrayLike, invert: bool = False) -> Array:
    """Whether each element of `element` is among `test_elements` (element's shape)."""
    element = asarray(element)
    found = reduce_any(equal(expand_dims(element, -1), ravel(test_elements)), -1)
    return logical_not(found) if invert else found


def digitize(x: ArrayLike, bins: ArrayLike, right: bool = False) -> Array:
    """The index of the bin each x falls in: i with bins[i-1] <= x < bins[i] for increasing
    bins (bins[i-1] < x <= bins[i] with right=True); for decreasing ones bins[i-1] > x >=
    bins[i] (bins[i-1] >= x > bins[i])."""
    bins = asarray(bins)
    if bins.ndim != 1:
        raise TenzrError(f"digitize: bins must be 1-d, got shape {bins.shape}", user_location())
    side = "left" if right else "right"
    rising = searchsorted(bins, x, side=side)
    falling = bins.shape[0] - searchsorted(bins[::-1], x, side=side)
    return where(bins[-1] >= bins[0], rising, falling)


# --------------------------------------------------------------------------- grids and windows


def geomspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Array:
    """`num` numbers spaced evenly on a log scale from start to stop (both of one sign)."""
    start, stop = _float(start), _float(stop)
    signs = sign(linspace(start, stop, num, endpoint, None, axis))  # (start and stop have one sign)
    out = signs * logspace(log10(abs(start)), log10(abs(stop)), num, endpoint, 10.0, None, axis)
    axis = axis % out.ndim

    def at(i: int) -> tuple:
        return tuple(i if d == axis else builtins.slice(None) for d in range(out.ndim))

    if num > 0:  # (exact ends, as NumPy's)
        out = out.at[at(0)].set(start)
        if endpoint:
            out = out.at[at(-1)].set(stop)
    return out.astype(dtype) if dtype is not None else out


def vander(x: ArrayLike, N: int | None = None, increasing: bool = False) -> Array:
    """The Vandermonde matrix of the 1-d x: columns x**(N-1), ..., x, 1 (reversed if
    increasing)."""
    x = asarray(x)
    if x.ndim != 1:
        raise TenzrError(f"vander: x must be 1-d, got shape {x.shape}", user_location())
    n = x.shape[0] if N is None else N
    powers = arange(n) if increasing else arange(n - 1, -1, -1)
    return power(expand_dims(x, 1), powers.astype(x.dtype) if x.is_float else powers)


def diagflat(v: ArrayLike, k: int = 0) -> Array:
    """A 2-d array with the flattened v on its k-th diagonal."""
    return diag(ravel(v), k)


def _window(m: int, terms: Callable[[Array], Array]) -> Array:
    if m < 1:
        return zeros((0,), np.float32 if m < 0 else None)
    if m == 1:
        return asarray(np.ones(1)).astype(_float(1.0).dtype)
    return terms(_float(arange(m)) * (2 * np.pi / (m - 1)))


def hanning(M: int) -> Array:
    """The Hann window of M points."""
    return _window(M, lambda t: 0.5 - 0.5 * cos(t))


def hamming(M: int) -> Array:
    """The Hamming window of M points."""
    return _window(M, lambda t: 0.54 - 0.46 * cos(t))


def blackman(M: int) -> Array:
    """The Blackman window of M points."""
    return _window(M, lambda t: 0.42 - 0.5 * cos(t) + 0.08 * cos(2 * t))


def bartlett(M: int) -> Array:
    """The Bartlett (triangular) window of M points."""
    return _window(M, lambda t: 1 - abs(t / np.pi - 1))


# --------------------------------------------------------------------------- polynomials and convolution


def _coefficients(p: ArrayLike, name: str) -> Array:
    p = asarray(p)
    if p.ndim != 1:
        raise TenzrError(f"{name}: coefficients must be 1-d, got shape {p.shape}", user_location())
    return p


def polyadd(a1: ArrayLike, a2: ArrayLike) -> Array:
    """The sum of two polynomials (coefficients highest power first)."""
    a, b = _coefficients(a1, "polyadd"), _coefficients(a2, "polyadd")
    n = builtins.max(a.shape[0], b.shape[0])
    return pad(a, (n - a.shape[0], 0)) + pad(b, (n - b.shape[0], 0))


def polysub(a1: ArrayLike, a2: ArrayLike) -> Array:
    """The difference of two polynomials."""
    return polyadd(a1, -asarray(a2))


def polymul(a1: ArrayLike, a2: ArrayLike) -> Array:
    """The product of two polynomials."""
    return convolve(_coefficients(a1, "polymul"), _coefficients(a2, "polymul"))


def polyder(p: ArrayLike, m: int = 1) -> Array:
    """The m-th derivative of a polynomial."""
    p = _coefficients(p, "polyder")
    for _ in range(m):  # (past the degree an empty array, as JAX's; NumPy's gives [0.])
        p = p[:-1] * arange(p.shape[0] - 1, 0, -1).astype(p.dtype)
    return p


def polyint(p: ArrayLike, m: int = 1, k: ArrayLike = None) -> Array:
    """The m-th antiderivative of a polynomial, the integration constants k (zeros by default)."""
    p = _float(_coefficients(p, "polyint"))
    constants = zeros((m,), p.dtype) if k is None else reshape(asarray(k).astype(p.dtype), (-1,))
    if constants.shape[0] == 1 and m > 1:
        constants = broadcast_to(constants, (m,))
    if constants.shape[0] != m:
        raise TenzrError(f"polyint: k needs {m} integration constants, got {constants.shape[0]}", user_location())
    for i in range(m):
        n = p.shape[0]
        p = concatenate([p / arange(n, 0, -1).astype(p.dtype), constants[i:i + 1]])
    return p


def _slide(a: Array, v: Array, mode: str, name: str) -> Array:
    """sum_i a[i] v[k - i] for every k the mode keeps."""
    if a.ndim != 1 or v.ndim != 1 or not a.shape[0] or not v.shape[0]:
        raise TenzrError(f"{name}: needs two non-empty 1-d arrays, got shapes {a.shape} and {v.shape}",
                         user_location())
    n, m = a.shape[0], v.shape[0]
    # (row i of the stack is a[i] * v placed at i; summing the rows gives the full
    # convolution, n + m - 1 long)
    rows = pad(expand_dims(a, 1) * expand_dims(v, 0), [(0, 0), (0, n)])
    full = sum(reshape(ravel(rows)[:n * (m + n - 1)], (n, m + n - 1)), 0)
    if mode == "full":
        return full
    if mode == "same":
        length = builtins.max(n, m)
        start = (n + m - 1 - length) // 2
        return full[start:start + length]
    if mode == "valid":
        length = builtins.max(n, m) - builtins.min(n, m) + 1
        start = builtins.min(n, m) - 1
        return full[start:start + length]
    raise TenzrError(f"{name}: mode must be 'full', 'same' or 'valid', got {mode!r}", user_location())


def convolve(a: ArrayLike, v: ArrayLike, mode: str = "full") -> Array:
    """The discrete convolution of two 1-d arrays."""
    a, v = asarray(a), asarray(v)
    return _slide(a, v, mode, "convolve")


def correlate(a: ArrayLike, v: ArrayLike, mode: str = "valid") -> Array:
    """The cross-correlation of two 1-d arrays: sum_n a[n + k] conj(v[n])."""
    a, v = asarray(a), asarray(v)
    return _slide(a, conj(v[::-1]) if v.ndim == 1 else v, mode, "correlate")


# --------------------------------------------------------------------------- function application


def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: ArrayLike, *args: Any, **kwargs: Any) -> Array:
    """func1d applied to each 1-d slice of arr along `axis` (vmapped over the others, as
    JAX's); the slice's results take the place of that axis."""
    arr = asarray(arr)
    axis = axis % arr.ndim if arr.ndim else 0
    fn = lambda row: func1d(row, *args, **kwargs)  # noqa: E731
    for _ in range(arr.ndim - 1):
        fn = vmap(fn)
    out = asarray(fn(moveaxis(arr, axis, -1)))
    # (the mapped axes came first, in order; the slice's result dims now move into place)
    kept = arr.ndim - 1
    return moveaxis(out, tuple(range(kept, out.ndim)), tuple(range(axis, axis + out.ndim - kept)))


_DIMS = r"\((?:\w+(?:,\s*\w+)*)?\)"
_SIGNATURE = re.compile(rf"^({_DIMS}(?:,\s*{_DIMS})*)->({_DIMS}(?:,\s*{_DIMS})*)$")


def _core_dims(part: str) -> list[tuple[str, ...]]:
    return [tuple(d.strip() for d in group.split(",") if d.strip()) for group in re.findall(r"\(([^)]*)\)", part)]


class vectorize:  # NumPy's name
    """`pyfunc` made to broadcast over arrays, as NumPy's `vectorize` (JAX's: it is vmapped
    over the broadcast loop dimensions, not looped in Python). `signature` ("(n),(n)->()")
    names the core dimensions each argument and result keeps; `excluded` lists argument
    positions or names passed through unchanged."""

    @api_boundary
    def __init__(self, pyfunc: Callable[..., Any], *, excluded: Any = frozenset(), signature: str | None = None):
        self.pyfunc, self.excluded, self.signature = pyfunc, frozenset(excluded), signature
        self.inputs: list[tuple[str, ...]] | None = None
        if signature is not None:
            found = _SIGNATURE.match(signature.replace(" ", ""))
            if found is None:
                raise TenzrError(f"vectorize: not a valid signature: {signature!r}", user_location())
            self.inputs = _core_dims(found.group(1))

    @api_boundary
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _vectorized_call(self, args, kwargs)


def _vectorized(self: vectorize, args: tuple, kwargs: dict) -> Any:
    fixed_kwargs = {k: v for k, v in kwargs.items() if k in self.excluded}
    named = [k for k in kwargs if k not in self.excluded]
    positions = [i for i in range(len(args)) if i not in self.excluded]
    arrays = [asarray(args[i]) for i in positions] + [asarray(kwargs[k]) for k in named]
    cores = self.inputs if self.inputs is not None else [()] * len(arrays)
    if len(cores) != len(arrays):
        raise TenzrError(f"vectorize: the signature {self.signature!r} has {len(cores)} inputs, the call passes "
                         f"{len(arrays)} arrays", user_location())
    loops = [a.shape[:a.ndim - len(c)] for a, c in zip(arrays, cores, strict=True)]
    try:
        loop = np.broadcast_shapes(*loops)
    except ValueError:
        raise TenzrError(f"vectorize: the loop dimensions {loops} do not broadcast", user_location()) from None
    arrays = [broadcast_to(a, loop + a.shape[a.ndim - len(c):]) for a, c in zip(arrays, cores, strict=True)]

    def call(*flat: Array) -> Any:
        full = list(args)
        for i, value in zip(positions, flat[:len(positions)], strict=True):
            full[i] = value
        return self.pyfunc(*full, **fixed_kwargs, **dict(zip(named, flat[len(positions):], strict=True)))

    fn = call
    for _ in loop:
        fn = vmap(fn)
    return fn(*arrays)


_vectorized_call = checked(_vectorized, "tz.vectorize")
check_arguments(globals(), "tz.")


# --------------------------------------------------------------------------- sets of data-dependent size
# Left out of check_arguments, as `unique` is: outside a trace their checked bodies run
# eagerly, without `size` too (see numpy_lib._sized_or_all), where check_arguments would trace
# all of them. A body takes `size` last and returns (sized arrays, other arrays, count).


@api_boundary
def union1d(ar1: ArrayLike, ar2: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Array:
    """The distinct values of ar1 and ar2 together (flattened), sorted: `unique` of both
    (`size` and `fill_value` as its)."""
    (values, _, _), _ = _sized_or_all("union1d", size, np.size(ar1) + np.size(ar2), _union1d, ar1, ar2, fill_value)
    return values


@partial(checked, shown="tz.union1d")
def _union1d(ar1: ArrayLike, ar2: ArrayLike, fill_value: Any, size: int) -> tuple:
    return _unique_sized(concatenate([ravel(ar1), ravel(ar2)]), True, fill_value, (False, False, False), size)


@api_boundary
def intersect1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False, return_indices: bool = False, *,
                size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted values both ar1 and ar2 hold (flattened, of their common type); with
    `return_indices`, also the first position of each in ar1 and in ar2. Under jit `size`
    must be given: when there are fewer the rest are `fill_value` (the smallest, or 0 when
    there is none, as JAX's), their positions ar1's and ar2's sizes."""
    found, _ = _sized_or_all("intersect1d", size, builtins.min(np.size(ar1), np.size(ar2)), _intersect1d, ar1, ar2,
                             assume_unique, return_indices, fill_value)
    return found if return_indices else found[0]


@partial(checked, shown="tz.intersect1d")
def _intersect1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool, return_indices: bool, fill_value: Any,
                 size: int) -> tuple:
    ordered, at, n = _members_sorted(ar1, ar2, assume_unique)
    i = arange(ordered.size, dtype=default_int())
    common = (ordered == roll(ordered, -1)) & (i + 1 < n)  # (ar1's member of a value both hold; ar2's is next)
    found = _first_true(common, size)
    indices = (_picked(at, found, np.size(ar1)), _picked(at - np.size(ar1), found + 1, np.size(ar2)))
    return (_picked(ordered, found, fill_value), *(indices if return_indices else ())), (), sum(common, dtype=i.dtype)


@api_boundary
def setdiff1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False, *, size: int | None = None,
              fill_value: Any = None) -> Array:
    """The distinct values of ar1 (flattened, in its type) that ar2 does not hold, sorted
    (in ar1's order with `assume_unique`). Under jit `size` must be given: when there are
    fewer the rest are `fill_value` (0 by default, as JAX's)."""
    (values,), _ = _sized_or_all("setdiff1d", size, np.size(ar1), _setdiff1d, ar1, ar2, assume_unique, fill_value)
    return values


@partial(checked, shown="tz.setdiff1d")
def _setdiff1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool, fill_value: Any, size: int) -> tuple:
    values = ravel(ar1)
    if assume_unique:
        kept = ~isin(values, ar2)
    else:
        values, _, starts = _sorted_runs(values, equal_nan=True)
        kept = starts & ~isin(values, ar2)
    found = _first_true(kept, size)
    return (_picked(values, found, 0 if fill_value is None else fill_value),), (), sum(kept, dtype=found.dtype)


@api_boundary
def setxor1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False, *, size: int | None = None,
             fill_value: Any = None) -> Array:
    """The sorted values that exactly one of ar1 and ar2 holds (flattened, of their common
    type). Under jit `size` must be given: when there are fewer the rest are `fill_value`
    (the smallest, or 0 when there is none, as JAX's)."""
    (values,), _ = _sized_or_all("setxor1d", size, np.size(ar1) + np.size(ar2), _setxor1d, ar1, ar2, assume_unique,
                                 fill_value)
    return values


@partial(checked, shown="tz.setxor1d")
def _setxor1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool, fill_value: Any, size: int) -> tuple:
    ordered, _, n = _members_sorted(ar1, ar2, assume_unique)
    i = arange(ordered.size, dtype=default_int())
    # (a value one of them holds is a member unequal to both neighbours; NaNs, unequal, each count, as JAX's)
    alone = (i < n) & ((ordered != roll(ordered, 1)) | (i == 0)) & ((ordered != roll(ordered, -1)) | (i + 1 == n))
    found = _first_true(alone, size)
    return (_picked(ordered, found, fill_value),), (), sum(alone, dtype=i.dtype)


def _members_sorted(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool) -> tuple[Array, Array, Array | int]:
    """The members of ar1 and ar2 as sets (flattened, in their common type: each entry with
    assume_unique, else the first of each run of equal ones, NaNs equal as JAX's) sorted
    together, ar1's first among equals, then the entries not counted; where each was (ar2's
    after ar1's); and how many members there are."""
    a, b = promote(ravel(ar1), ravel(ar2))
    if assume_unique:
        values = concatenate([a, b])
        order = argsort(values)
        return take(values, order, mode="promise_in_bounds"), order, values.size
    (va, ia, ka), (vb, ib, kb) = _sorted_runs(a, equal_nan=True), _sorted_runs(b, equal_nan=True)
    # (not counted: 1)
    values, at = concatenate([va, vb]), concatenate([ia, ib + a.size])
    uncounted = concatenate([(~ka).astype(np.int32), (~kb).astype(np.int32)])
    order = argsort(values)
    order = take(order, argsort(take(uncounted, order, mode="promise_in_bounds")), mode="promise_in_bounds")
    return (take(values, order, mode="promise_in_bounds"), take(at, order, mode="promise_in_bounds"),
            values.size - sum(uncounted, dtype=order.dtype))


class _UniqueAllResult(NamedTuple):  # (JAX's names)
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class _UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class _UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def _unique_parts(what: str, x: ArrayLike, size: int | None, fill_value: Any, wanted: tuple[bool, bool, bool]) -> tuple:
    """NumPy 2's unique_*: (values, indices, inverse, counts) of `unique` with NaNs apart."""
    (values, index, counts), (inverse,) = _sized_or_all(what, size, np.size(x), _unique_call, x, False, fill_value,
                                                        wanted)
    return values, index, inverse, counts


@api_boundary
def unique_values(x: ArrayLike, /, *, size: int | None = None, fill_value: Any = None) -> Array:
    """The distinct values of x, sorted, each NaN apart (`size`, `fill_value` as `unique`'s)."""
    return _unique_parts("unique_values", x, size, fill_value, (False, False, False))[0]


@api_boundary
def unique_counts(x: ArrayLike, /, *, size: int | None = None, fill_value: Any = None) -> _UniqueCountsResult:
    """(values, counts) of `unique_values`: how many times x holds each."""
    values, _, _, counts = _unique_parts("unique_counts", x, size, fill_value, (False, False, True))
    return _UniqueCountsResult(values, counts)


@api_boundary
def unique_inverse(x: ArrayLike, /, *, size: int | None = None, fill_value: Any = None) -> _UniqueInverseResult:
    """(values, inverse_indices) of `unique_values`: the position of each element of x among
    the values (shaped as x)."""
    values, _, inverse, _ = _unique_parts("unique_inverse", x, size, fill_value, (False, True, False))
    return _UniqueInverseResult(values, inverse)


@api_boundary
def unique_all(x: ArrayLike, /, *, size: int | None = None, fill_value: Any = None) -> _UniqueAllResult:
    """(values, indices, inverse_indices, counts) of `unique_values`: also the first
    position of each value in x (flattened)."""
    return _UniqueAllResult(*_unique_parts("unique_all", x, size, fill_value, (True, True, True)))

