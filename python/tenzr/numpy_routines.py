"""The rest of the NumPy routines JAX's numpy offers: NumPy 2's array-API functions
(`matrix_transpose`, `unstack`, `vecdot`, `matvec`, `cumulative_sum`, ...), elementwise ones
(`cbrt`, `trunc`, `copysign`, `ldexp`, `modf`, `gcd`, `lcm`, `frexp`, `spacing`, `i0`,
`unwrap`, ...), NaN-skipping statistics and quantiles, histograms, partial and lexicographic
sorts (`partition`, `argpartition`, `lexsort`, `sort_complex`), polynomials (`poly`,
`polyfit`, `polydiv`, ...) and window functions, `isin`, `digitize`, `convolve`, `correlate`,
`piecewise`, `apply_along_axis`, `vectorize`, the set routines of data-dependent size
(`union1d`, `intersect1d`, `setdiff1d`, `setxor1d`, NumPy 2's `unique_values` and its
siblings), which take `size=` under jit as `unique` does, and those that read concrete values
as JAX's do (`trim_zeros`, `choose(mode="raise")`). Names, arguments and semantics are NumPy's
(JAX's where they differ); each is built from `numpy_api`'s and `numpy_lib`'s functions, so
it differentiates, batches and compiles as they do.
"""

from __future__ import annotations

import builtins
import math
import operator
import re
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from tenzr.batching import vmap
from tenzr.control import while_loop
from tenzr.core import (
    Array,
    api_boundary,
    array,
    asarray,
    check_arguments,
    checked,
    dtype_name,
    emit,
    promote,
    user_location,
)
from tenzr.dialect import ops as T
from tenzr.dialect.diagnostics import TenzrError
from tenzr.flags import default_float, default_int
from tenzr.neural import stop_gradient
from tenzr.numpy_api import (
    _axes,
    _float,
    _no_out,
    abs,  # noqa: A004 (NumPy's names, as in numpy_api)
    arange,
    argmax,
    argmin,
    argsort,
    bitwise_and,
    broadcast_to,
    ceil,
    clip,
    concatenate,
    cos,
    equal,
    exp,
    expand_dims,
    flip,
    floor,
    floor_divide,
    fmod,
    full,
    full_like,
    isinf,
    isnan,
    left_shift,
    log10,
    logical_and,
    logical_not,
    matmul,
    moveaxis,
    nextafter,
    ones,
    ones_like,
    pad,
    power,
    remainder,
    reshape,
    right_shift,
    round,  # noqa: A004
    sign,
    signbit,
    sort,
    sqrt,
    stack,
    sum,  # noqa: A004
    swapaxes,
    take,
    take_along_axis,
    where,
    zeros,
)
from tenzr.numpy_api import max as reduce_max
from tenzr.numpy_api import min as reduce_min
from tenzr.numpy_api import where as where_  # (for bodies whose where= parameter hides `where`)
from tenzr.numpy_lib import (
    _concrete,
    _first_true,
    _picked,
    _quantile,
    _reading_values,
    _sized_or_all,
    _slice,
    _sorted_runs,
    _unique_call,
    _unique_sized,
    broadcast_arrays,
    conj,
    cumprod,
    cumsum,
    diag,
    diff,
    imag,
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
    """A window of int(m) points (as JAX's), terms(t) at t evenly spaced over [0, 2 pi]."""
    m = int(m)
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


def poly(seq_of_zeros: ArrayLike) -> Array:
    """The coefficients (highest power first, leading 1) of the polynomial with the given
    roots; of a square matrix, of its characteristic polynomial, complex as JAX's (found
    here without eigenvalues, by the Faddeev-LeVerrier recurrence)."""
    z = _float(seq_of_zeros)
    if z.ndim == 0:
        z = reshape(z, (1,))
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0]:
        return _characteristic(z).astype(np.result_type(z.dtype, np.complex64))
    if z.ndim != 1:
        raise TenzrError(f"poly: takes a 1-d array of roots or a non-empty square matrix, got shape {z.shape}",
                         user_location())
    p = ones((1,), z.dtype)
    for k in range(z.shape[0]):  # (p(x) (x - z[k]))
        p = concatenate([p, zeros((1,), z.dtype)]) - z[k] * concatenate([zeros((1,), z.dtype), p])
    return p if z.shape[0] else p[0]


def _characteristic(a: Array) -> Array:
    """det(x I - a)'s coefficients, highest power first: with M_1 = I, c_1 = 1,
    c_{k+1} = -tr(a M_k) / k and M_{k+1} = a M_k + c_{k+1} I."""
    n = a.shape[0]
    identity = diag(ones((n,), a.dtype))
    m, coefficients = identity, [ones((), a.dtype)]
    for k in range(1, n + 1):
        am = matmul(a, m)
        coefficients.append(-sum(diag(am)) / k)
        m = am + coefficients[-1] * identity
    return stack(coefficients)


def polyfit(x: ArrayLike, y: ArrayLike, deg: int, rcond: float | None = None, full: bool = False,
            w: ArrayLike = None, cov: Any = False) -> Any:
    """The least-squares polynomial of degree `deg` through the points (x, y) (y [M] or
    [M, K], a fit per column), highest power first, as JAX's: by `linalg.lstsq` on the
    Vandermonde matrix with scaled columns, singular values below rcond (default M eps)
    times the largest dropped; weights `w` multiply the unsquared residuals. With `full`,
    (p, residuals, rank, singular values, rcond); with `cov` (p, the covariance matrix of
    p, scaled by residuals / (M - deg - 1) unless cov="unscaled")."""
    from tenzr.linalg import inv, lstsq  # (tenzr.linalg imports this module)

    if isinstance(deg, bool) or not isinstance(deg, (int, np.integer)) or deg < 0:
        raise TenzrError(f"polyfit: deg must be an int >= 0, got {deg!r}", user_location())
    x, y = promote(_float(x), _float(y))
    if x.ndim != 1 or not x.shape[0]:
        raise TenzrError(f"polyfit: x must be a non-empty 1-d array, got shape {x.shape}", user_location())
    if y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
        raise TenzrError(f"polyfit: y must be [M] or [M, K] with x's M = {x.shape[0]}, got shape {y.shape}",
                         user_location())
    order = int(deg) + 1
    rcond = x.shape[0] * float(np.finfo(x.dtype).eps) if rcond is None else float(rcond)
    lhs, rhs = vander(x, order), y
    if w is not None:
        w = _float(w)
        if w.shape != x.shape:
            raise TenzrError(f"polyfit: w must be shaped as x, {x.shape}, got {w.shape}", user_location())
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    scale = sqrt(sum(lhs * lhs, 0))  # (unit columns: a better conditioned system)
    lhs = lhs / scale
    c, residuals, rank, s = lstsq(lhs, rhs, rcond)
    c = c / (scale[:, None] if c.ndim == 2 else scale)
    if full:
        return c, residuals, rank, s, asarray(rcond)
    if not cov:
        return c
    base = inv(matmul(lhs.T, lhs)) / (scale[:, None] * scale[None, :])
    if cov == "unscaled":
        factor = asarray(1.0)
    elif x.shape[0] <= order:
        raise TenzrError("polyfit: to scale the covariance the number of points must exceed deg + 1",
                         user_location())
    else:
        factor = residuals / (x.shape[0] - order)
    if y.ndim == 1:
        return c, base * reshape(factor, (1, 1))
    return c, base[:, :, None] * reshape(factor, (1, 1, -1))


# --------------------------------------------------------------------------- histograms


def histogram_bin_edges(a: ArrayLike, bins: ArrayLike = 10, range: Any = None,  # noqa: A002 (NumPy's name)
                        weights: ArrayLike = None) -> Array:
    """The edges of `histogram`'s bins, in a's floating type: `bins` itself when it is 1-d,
    else bins + 1 evenly spaced edges over `range` (a's min and max by default; an empty
    range is widened by 0.5 each way, as JAX's). `weights` is unused, as in JAX."""
    del weights
    a = _float(a)
    if _rank(bins) == 1:
        return asarray(bins).astype(a.dtype)
    count = _bin_count(bins, "histogram_bin_edges")
    if range is None:
        low, high = reduce_min(a), reduce_max(a)
    else:
        bounds = asarray(range).astype(a.dtype)
        if bounds.shape != (2,):
            raise TenzrError(f"histogram_bin_edges: range must be None or a pair (min, max), got shape {bounds.shape}",
                             user_location())
        low, high = bounds[0], bounds[1]
    empty = low == high
    return linspace(where(empty, low - 0.5, low), where(empty, high + 0.5, high), count + 1, dtype=a.dtype)


def _rank(x: Any) -> int:
    """np.ndim, for a sequence that may hold traced arrays too (as 1)."""
    return 1 if isinstance(x, (list, tuple)) else np.ndim(x)


def _bin_count(bins: Any, name: str) -> int:
    if isinstance(bins, str):
        raise TenzrError(f"{name}: bins given as a string (NumPy's estimators) are not supported, as in JAX",
                         user_location())
    try:
        count = 0 if isinstance(bins, (bool, Array)) else operator.index(bins)
    except TypeError:
        count = 0
    if count < 1:
        raise TenzrError(f"{name}: bins must be a positive int (known while tracing) or a 1-d array of edges, got "
                         f"{bins!r}", user_location())
    return count


def histogram(a: ArrayLike, bins: ArrayLike = 10, range: Any = None,  # noqa: A002 (NumPy's name)
              weights: ArrayLike = None, density: bool | None = None) -> tuple[Array, Array]:
    """(counts, edges): how many elements of a (flattened) fall in each bin (the sum of
    their `weights` instead, which must be shaped as a), each bin [edges[i], edges[i+1])
    but the last closed; values outside the edges are not counted. `bins` and `range` as in
    `histogram_bin_edges`; with `density` the counts are divided by their total and the
    bins' widths. The counts are floating point (a's type or weights'), as JAX's."""
    a = _float(a)
    if weights is None:
        weights = ones_like(a)
    else:
        weights = asarray(weights)
        if weights.shape != a.shape:
            raise TenzrError(f"histogram: weights must be shaped as a, {a.shape}, got {weights.shape}",
                             user_location())
        a, weights = promote(a, _float(weights))
    edges = histogram_bin_edges(a, bins, range)
    n = edges.shape[0]
    values = ravel(a)
    at = where(values == edges[-1], n - 1, searchsorted(edges, values, side="right"))  # (the last bin is closed)
    counts = zeros((n,), weights.dtype).at[at].add(ravel(weights))[1:]
    if density:
        counts = counts / diff(edges) / sum(counts)
    return counts, edges


def histogramdd(sample: ArrayLike, bins: Any = 10, range: Any = None,  # noqa: A002 (NumPy's name)
                weights: ArrayLike = None, density: bool | None = None) -> tuple[Array, list[Array]]:
    """(counts, [edges per dimension]): the histogram of N points in D dimensions, the rows
    of `sample` [N, D]. `bins` is one for every dimension (an int) or a sequence of D ints
    or edge arrays; `range` None or D pairs (or Nones); `weights` one per point. Without
    weights the counts are integers, as JAX's; with `density` they are divided by their
    total and the bins' volumes."""
    sample = _float(sample)
    if sample.ndim != 2:
        raise TenzrError(f"histogramdd: sample must be 2-d [points, dimensions], got shape {sample.shape}",
                         user_location())
    n, d = sample.shape
    if weights is not None:
        weights = asarray(weights)
        if weights.shape != (n,):
            raise TenzrError(f"histogramdd: needs one weight per point, shape {(n,)}, got {weights.shape}",
                             user_location())
        sample, weights = promote(sample, _float(weights))
    if range is not None and (len(range) != d or builtins.any(r is not None and np.shape(r) != (2,) for r in range)):
        raise TenzrError(f"histogramdd: range must be a sequence of {d} pairs or Nones, got {range!r}",
                         user_location())
    per_dimension = [bins] * d if _rank(bins) == 0 else list(bins)
    if len(per_dimension) != d:
        raise TenzrError(f"histogramdd: bins needs one entry per dimension ({d}), got {len(per_dimension)}",
                         user_location())
    edges, flat = [], asarray(0, default_int())
    for i in builtins.range(d):
        column = sample[:, i]
        e = histogram_bin_edges(column, per_dimension[i], None if range is None else range[i])
        at = searchsorted(e, column, side="right")
        # (bins 0 and len(e) collect the points outside; the last edge is in the last bin)
        at = where(column == e[-1], at - 1, at)
        flat = flat * (e.shape[0] + 1) + at
        edges.append(e)
    shape = tuple(e.shape[0] + 1 for e in edges)
    counts = zeros((math.prod(shape),), default_int() if weights is None else weights.dtype)
    counts = counts.at[flat].add(1 if weights is None else weights)
    hist = reshape(counts, shape)[(builtins.slice(1, -1),) * d]
    if density:
        hist = hist.astype(sample.dtype)
        hist = hist / sum(hist)
        for i, e in enumerate(edges):
            hist = hist / reshape(diff(e), [-1 if j == i else 1 for j in builtins.range(d)])
    return hist, edges


def histogram2d(x: ArrayLike, y: ArrayLike, bins: Any = 10, range: Any = None,  # noqa: A002 (NumPy's name)
                weights: ArrayLike = None, density: bool | None = None) -> tuple[Array, Array, Array]:
    """(counts, x edges, y edges): the histogram of the points (x[i], y[i]), `histogramdd`'s
    with two dimensions; `bins` one int or edge array for both, or a pair of them."""
    x, y = promote(x, y)
    if _rank(bins) != 0 and len(bins) not in (1, 2):  # (an array of edges, for both)
        bins = [bins, bins]
    hist, (x_edges, y_edges) = histogramdd(stack([x, y], axis=1), bins, range, weights, density)
    return hist, x_edges, y_edges


# --------------------------------------------------------------------------- sorting and selection


def lexsort(keys: Any, axis: int = -1) -> Array:
    """The indices that sort by several keys (arrays of one shape) along `axis`: by the last
    key, ties broken by the one before, and so on (stable)."""
    keys = [asarray(k) for k in keys]
    if not keys:
        raise TenzrError("lexsort: needs at least one key", user_location())
    if len({k.shape for k in keys}) > 1:
        raise TenzrError(f"lexsort: the keys must have one shape, got {[k.shape for k in keys]}", user_location())
    if keys[0].ndim == 0:
        return zeros((), default_int())
    order = argsort(_sortable(keys[0]), axis)
    for key in keys[1:]:  # (stable sorts, the primary key last)
        ordered = take_along_axis(_sortable(key), order, axis, mode="promise_in_bounds")
        order = take_along_axis(order, argsort(ordered, axis), axis, mode="promise_in_bounds")
    return order


def _sortable(key: Array) -> Array:
    return key.astype(np.int32) if key.dtype == np.bool_ else key


def _partition_setup(a: ArrayLike, kth: int, axis: int, name: str) -> tuple[Array, int, int]:
    """a with `axis` last, that axis, and kth in [0, its length)."""
    a = asarray(a)
    if a.spec.is_complex:
        raise TenzrError(f"{name}: complex arrays are not supported, as in JAX", user_location())
    if a.ndim == 0:
        raise TenzrError(f"{name}: needs an array of at least one dimension", user_location())
    axis = _axes(axis, a.ndim)[0]
    n = a.shape[axis]
    if not -n <= kth < n:
        raise TenzrError(f"{name}: kth={kth} is out of bounds for an axis of length {n}", user_location())
    return moveaxis(a, axis, -1), axis, kth % n


def partition(a: ArrayLike, kth: int, axis: int = -1) -> Array:
    """a along `axis` with its kth smallest element at kth, the smaller ones before it and
    the larger after. As JAX's (built on top_k): the first kth + 1 in ascending order, the
    rest descending; NaNs count as the largest."""
    a, axis, kth = _partition_setup(a, kth, axis, "partition")
    ordered = sort(a, axis=-1)
    return moveaxis(concatenate([ordered[..., :kth + 1], flip(ordered[..., kth + 1:], -1)], -1), -1, axis)


def argpartition(a: ArrayLike, kth: int, axis: int = -1) -> Array:
    """The indices that `partition` a along `axis`. As JAX's: those of the kth + 1 smallest
    in ascending order (the lower index first among equals), then the rest in index order."""
    a, axis, kth = _partition_setup(a, kth, axis, "argpartition")
    order = argsort(a, axis=-1)
    smallest = argsort(order, axis=-1) <= kth  # (each element's place in the sorted order)
    rest = argsort(smallest.astype(np.int32), axis=-1)[..., :a.shape[-1] - kth - 1]
    return moveaxis(concatenate([order[..., :kth + 1], rest], -1), -1, axis)


def sort_complex(a: ArrayLike) -> Array:
    """a sorted along its last axis, by real part, then imaginary part, as a complex array."""
    a = asarray(a)
    if a.spec.is_complex:
        out = take_along_axis(a, lexsort([imag(a), real(a)]), -1, mode="promise_in_bounds")
    else:
        a = _float(a)
        out = sort(a, axis=-1)
    return out.astype(np.result_type(out.dtype, np.complex64))


# --------------------------------------------------------------------------- NaN-skipping quantiles

def nanquantile(a: ArrayLike, q: ArrayLike, axis: Any = None, out: None = None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False, *, weights: ArrayLike = None) -> Array:
    """The q-th quantiles (q in [0, 1], a number or a 1-d array, whose dims come first) of
    the elements that are not NaN along `axis` (None: all); NaN where all are. Between two
    sorted values as `method` says (see `quantile`). `weights` is not supported."""
    _no_out("nanquantile", out)
    if overwrite_input:
        raise TenzrError("nanquantile: overwrite_input=True is not supported (arrays are immutable), as in JAX",
                         user_location())
    if weights is not None:
        raise TenzrError("nanquantile: weights are not supported", user_location())
    return _quantile("nanquantile", a, q, axis, method, keepdims, squash_nans=True)


def nanpercentile(a: ArrayLike, q: ArrayLike, axis: Any = None, out: None = None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False, *, weights: ArrayLike = None) -> Array:
    """`nanquantile` with q in percent."""
    return nanquantile(a, asarray(q) / 100.0, axis, out, overwrite_input, method, keepdims, weights=weights)


def nanmedian(a: ArrayLike, axis: Any = None, out: None = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Array:
    """The median of the elements that are not NaN along `axis` (NaN where all are)."""
    return nanquantile(a, 0.5, axis, out, overwrite_input, "midpoint", keepdims)


# --------------------------------------------------------------------------- more elementwise, and the Kaiser window


def unwrap(p: ArrayLike, discont: ArrayLike = None, axis: int = -1, period: ArrayLike = 2 * np.pi) -> Array:
    """p along `axis` with each jump between neighbours larger than `discont` (period / 2 by
    default) replaced by its equivalent modulo `period` (phase unwrapping)."""
    p, period = promote(p, period)
    if p.spec.is_complex:
        raise TenzrError("unwrap: complex arrays are not supported, as in JAX", user_location())
    axis = _axes(axis, p.ndim)[0]
    if p.shape[axis] == 0:
        return p
    interval = floor_divide(period, 2) if not p.is_float else period / 2
    discont = period / 2 if discont is None else discont
    dd = diff(p, axis=axis)
    ddmod = remainder(dd + interval, period) - interval
    ddmod = where(logical_and(ddmod == -interval, dd > 0), interval, ddmod)  # (+interval jumps stay +interval)
    correction = where(abs(dd) < discont, 0, ddmod - dd)
    n = p.shape[axis]
    return concatenate([_slice(p, axis, 0, 1), _slice(p, axis, 1, n) + cumsum(correction, axis)], axis)


def _power_of_two(k: Array, dtype: np.dtype) -> Array:
    """2.0 ** k exactly, for integer k within the normal exponents of `dtype`."""
    info = np.finfo(dtype)
    bits = left_shift(k + (info.maxexp - 1), info.nmant)
    return emit(T.bitcast_convert, bits, result=bits.spec.with_dtype(dtype_name(dtype)))


def frexp(x: ArrayLike) -> tuple[Array, Array]:
    """(mantissa, exponent) with x = mantissa * 2 ** exponent, |mantissa| in [0.5, 1) and
    the exponent an int32 (both x and 0 for 0, inf and NaN). The mantissa's derivative is
    2 ** -exponent, as JAX's. Subnormal x: float16's are split as NumPy's; float32's and
    float64's the backend flushes to zero (as JAX's CPU does), so they give (x, 0), x
    flushed to 0 (where JAX's give a mantissa of 0.5)."""
    x = _float(x)
    if x.spec.is_complex:
        raise TenzrError("frexp: complex arrays are not supported", user_location())
    info = np.finfo(x.dtype)
    int_type = np.dtype(f"int{info.bits}")
    mask = (1 << info.nexp) - 1
    tiny = abs(x) < info.tiny  # (subnormals: scaled into the normal range first)
    scaled = stop_gradient(where(tiny, x * float(1 << info.nmant), x))
    bits = emit(T.bitcast_convert, scaled, result=scaled.spec.with_dtype(dtype_name(int_type)))
    biased = bitwise_and(right_shift(bits, info.nmant), mask)
    exponent = biased + info.minexp - where(tiny, info.nmant, 0).astype(int_type)
    # (a subnormal the backend flushed to zero, float32's and float64's, scales to 0: as 0)
    exponent = where(isinf(x) | isnan(x) | (x == 0) | (scaled == 0), 0, exponent).astype(int_type)
    # (2 ** -exponent in two factors, each a normal number, as it reaches past the normal
    # range for the largest x and for float16's subnormals)
    half = floor_divide(exponent, 2)
    mantissa = x * _power_of_two(-half, x.dtype) * _power_of_two(half - exponent, x.dtype)
    return mantissa, exponent.astype(np.int32)


def spacing(x: ArrayLike) -> Array:
    """The distance from x to the next representable number away from zero (signed as x;
    for 0, the smallest subnormal; for float16 toward +inf, as JAX's)."""
    x = _float(x)
    if x.spec.is_complex:
        raise TenzrError("spacing: complex arrays are not supported", user_location())
    if x.dtype == np.float16:
        return nextafter(x, full_like(x, np.inf)) - x
    result = nextafter(x, where(signbit(x), full_like(x, -np.inf), full_like(x, np.inf))) - x
    tiniest = full_like(x, np.finfo(x.dtype).smallest_subnormal)
    return where(result == 0, where(signbit(x), -tiniest, tiniest), result)


def i0(x: ArrayLike) -> Array:
    """The modified Bessel function of the first kind, of order 0 (real x): e^|x| times
    `lax.bessel_i0e`, as JAX's."""
    from tenzr.lax import bessel_i0e  # (tenzr.lax builds on this module)

    x = _float(x)
    if not x.is_float:
        raise TenzrError(f"i0: takes real numbers, got {x.dtype}", user_location())
    return exp(abs(x)) * bessel_i0e(x)


def kaiser(M: int, beta: ArrayLike) -> Array:
    """The Kaiser window of int(M) points (as JAX's) with shape parameter beta."""
    M = int(M)
    dtype = default_float()
    if M <= 1:
        return ones((builtins.max(M, 0),), dtype)
    n = arange(M).astype(dtype)
    alpha = 0.5 * (M - 1)
    return i0(beta * sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)


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


def piecewise(x: ArrayLike, condlist: Any, funclist: list[Any], *args: Any, **kw: Any) -> Array:
    """x's elements each mapped by the function (or constant) of the last condition that
    holds there (conditions broadcast against x); where none does, by the extra last
    function if funclist has one more than condlist, else 0. As JAX's, each function is
    vmapped over the elements: it is called on a scalar, with `args` and `kw`, and every
    function is computed everywhere. Results take x's type."""
    x = asarray(x)
    conditions = asarray(condlist).astype(bool)
    count = len(condlist)
    if len(funclist) == count + 1:
        funclist = [funclist[-1], *funclist[:-1]]
    elif len(funclist) == count:
        funclist = [0, *funclist]
    else:
        raise TenzrError(f"piecewise: with {count} condition(s), {count} or {count + 1} functions are expected, got "
                         f"{len(funclist)}", user_location())
    if conditions.ndim == 0:  # (one scalar condition)
        conditions = reshape(conditions, (1,))
    # (the last condition that holds: the first place where their running count peaks; 0 for none)
    counted = cumsum(concatenate([zeros((1, *conditions.shape[1:]), np.int32), conditions.astype(np.int32)]), 0)
    which, x = broadcast_arrays(argmax(counted, 0), x)

    def piece(f: Any) -> Array:
        if not callable(f):
            return full(x.shape, f, x.dtype)
        on_each = vmap(lambda v: asarray(f(v, *args, **kw)).astype(x.dtype))
        return reshape(on_each(ravel(x)), x.shape)

    pieces = [piece(f) for f in funclist]
    out = pieces[0]
    for i, value in enumerate(pieces[1:], 1):
        out = where(which == i, value, out)
    return out


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
histogram = _reading_values(histogram, "bins")
histogram_bin_edges = _reading_values(histogram_bin_edges, "bins")
histogram2d = _reading_values(histogram2d, "bins")
histogramdd = _reading_values(histogramdd, "bins")
bartlett, blackman, hamming, hanning, kaiser = (_reading_values(window, "M") for window in (
    bartlett, blackman, hamming, hanning, kaiser))


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


# --------------------------------------------------------------------------- routines that read values
# Left out of check_arguments too: they read their argument's values on the host (as JAX's,
# which need them concrete), where an eager call of a checked function would trace them.


@api_boundary
def choose(a: ArrayLike, choices: Any, out: None = None, mode: str = "raise") -> Array:
    """choices[a[i]][i] for each i, a and the choices (a sequence, or an array's rows)
    broadcast together. With mode="raise" (the default, as JAX's) a must be concrete (not
    under jit) and in range; "wrap" takes a modulo the number of choices, "clip" clips it."""
    _no_out("choose", out)
    if mode == "raise":
        values = _concrete("choose", a, "mode='raise' reads the indices' values, which are not known while "
                           "tracing: pass mode='wrap' or mode='clip' (as in JAX under jit)")
        n = _choice_count(choices)
        if np.issubdtype(values.dtype, np.integer) and np.any((values < 0) | (values >= n)):
            raise TenzrError(f"choose: an index of the choice array is outside [0, {n})", user_location())
        mode = "clip"  # (every index is in range)
    return _choose_call(a, choices, mode)


def _choice_count(choices: Any) -> int:
    try:
        n = len(choices)
    except TypeError:
        n = None
    if n is None or isinstance(choices, (str, bytes)):
        raise TenzrError(f"choose: choices must be a sequence of arrays or an array, got {choices!r}",
                         user_location())
    return n


def _choose(a: ArrayLike, choices: Any, mode: str) -> Array:
    _choice_count(choices)
    a = asarray(a)
    if not np.issubdtype(a.dtype, np.integer):
        raise TenzrError(f"choose: the choice array must hold integers, got {a.dtype}", user_location())
    options = [asarray(c) for c in choices]
    if not options:
        raise TenzrError("choose: needs at least one choice", user_location())
    n = len(options)
    if mode == "wrap":
        a = remainder(a, n)
    elif mode == "clip":
        a = clip(a, 0, n - 1)
    else:
        raise TenzrError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}", user_location())
    a, *options = broadcast_arrays(a, *options)
    return take_along_axis(stack(options), expand_dims(a, 0), 0, mode="promise_in_bounds")[0]


_choose_call = checked(_choose, "tz.choose")


_SHAPE_FROM_VALUES = ("the result's shape depends on the values, which are not known while tracing: call it "
                      "outside jit (as JAX's needs concrete values)")


@api_boundary
def trim_zeros(filt: ArrayLike, trim: str = "fb", axis: Any = None) -> Array:
    """filt without its leading ("f" in trim) and trailing ("b") zeros along each of `axis`
    (all by default): there, the slices that are all zero. Its size depends on the values,
    so filt must be concrete (not traced), as JAX's."""
    values = _concrete("trim_zeros", filt, _SHAPE_FROM_VALUES)
    if not isinstance(trim, str):
        raise TenzrError(f"trim_zeros: trim must be a string of 'f' (front) and 'b' (back), got {trim!r}",
                         user_location())
    cut = [builtins.slice(None)] * values.ndim
    front, back = "f" in trim.lower(), "b" in trim.lower()
    for ax in _axes(axis, values.ndim) if front or back else ():
        present = np.any(values != 0, axis=tuple(d for d in range(values.ndim) if d != ax))
        if not present.any():
            cut[ax] = builtins.slice(0, 0)
            continue
        start = int(present.argmax()) if front else None
        stop = values.shape[ax] - int(present[::-1].argmax()) if back else None
        cut[ax] = builtins.slice(start, stop)
    return array(values[tuple(cut)])


@api_boundary
def polydiv(u: ArrayLike, v: ArrayLike, *, trim_leading_zeros: bool = False) -> tuple[Array, Array]:
    """(quotient, remainder) of the polynomial u divided by v (coefficients highest power
    first), as JAX's: the remainder is as long as u, with leading zeros, unless
    `trim_leading_zeros` (those below sqrt(eps), which needs concrete values: not under jit)."""
    quotient, rest = _polydiv_call(u, v)
    if trim_leading_zeros:
        values = _concrete("polydiv(trim_leading_zeros=True)", rest, _SHAPE_FROM_VALUES)
        small = np.abs(values) < np.sqrt(np.finfo(values.dtype).eps)
        rest = array(values[int(small.argmin()):] if not small.all() else values[:0])
    return quotient, rest


def _polydiv(u: ArrayLike, v: ArrayLike) -> tuple[Array, Array]:
    u, v = promote(_float(_coefficients(u, "polydiv")), _float(_coefficients(v, "polydiv")))
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    quotient = []
    for k in range(m - n + 1):  # (long division: the leading term of what is left, over v's)
        d = scale * u[k]
        quotient.append(d)
        u = u - pad(d * v, (k, m - n - k))
    return (stack(quotient) if quotient else zeros((1,), u.dtype)), u


_polydiv_call = checked(_polydiv, "tz.polydiv")
