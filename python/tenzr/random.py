"""`tz.random`: JAX's functional random numbers. A key is an array of two 32-bit words; the
same key gives the same numbers on every target, and `split` / `fold_in` derive new keys.

The generator is JAX's: the Threefry-2x32 hash of a counter (Salmon et al., 2011), with
JAX's default ("partitionable") counters, so `PRNGKey`, `split`, `fold_in`, `bits`,
`uniform`, `normal`, `bernoulli`, `gumbel`, `categorical`, `permutation`, `choice` and
`randint` (of every integer type) give JAX's numbers bit for bit. `uniform`, `normal`,
`truncated_normal`, `bernoulli`, `gumbel`, `exponential`, `laplace`, `logistic` and `cauchy`
also take float16 and bfloat16, from JAX's bits (8 of them for bfloat16); the 16-bit
arithmetic after them rounds as the backend does (IREE keeps float32 between operations,
XLA on CPU rounds bfloat16 at each), so some of those numbers differ from JAX's in the
last bits. Keys are uint32 words, as JAX's raw keys; int32 words are taken too (the same
bits).

The other distributions take JAX's names, arguments and algorithms, splitting keys as JAX
does, so they give JAX's numbers to within float rounding: those made from uniform or
normal numbers (`lognormal`, `multivariate_normal`, `orthogonal`, `rademacher`, `maxwell`,
`double_sided_maxwell`, `pareto`, `rayleigh`, `wald`, `weibull_min`, `geometric`,
`triangular`), and those drawn by JAX's rejection loops, replayed with the same keys:
`gamma` and `loggamma` (Marsaglia and Tsang's, one key per element, differentiable in `a`
as JAX's), and `beta`, `dirichlet`, `t`, `chisquare`, `f`, `generalized_normal` and `ball`
made from them; `poisson` (Knuth's below 10, Hörmann's transformed rejection above) and
`binomial` (inversion, or Kachitvichyanukul and Schmeiser's BTRS). A rejection loop
decides by comparing floats, so where IREE's rounding of log or pow differs from XLA's in
the last bit, a draw next to an acceptance bound can go the other way (rarely).
`multivariate_normal` with method 'eigh' or 'svd' has JAX's distribution but not its
numbers: eigenvectors' signs are the decomposition's choice.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr import numpy_lib as tlib
from tenzr.control import scan, while_loop
from tenzr.core import Array, asarray, check_arguments, dtype_name, emit, promote, shape_tuple, user_location
from tenzr.dialect import ops as T
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.types import INT_TYPES, UNSIGNED_TYPES, numpy_dtype
from tenzr.flags import default_float, default_int
from tenzr.forward import custom_jvp
from tenzr.lax import cumsum as _cumsum
from tenzr.lax import top_k as _top_k
from tenzr.linalg import cholesky, diagonal, eigh, qr, svd
from tenzr.neural import softmax
from tenzr.scipy.special import digamma, gammaln
from tenzr.tree_util import tree_map

__all__ = ["PRNGKey", "ball", "bernoulli", "beta", "binomial", "bits", "categorical", "cauchy", "chisquare",
           "choice", "clone", "dirichlet", "double_sided_maxwell", "exponential", "f", "fold_in", "gamma",
           "generalized_normal", "geometric", "gumbel", "key", "key_data", "laplace", "loggamma", "logistic",
           "lognormal", "maxwell", "multinomial", "multivariate_normal", "normal", "orthogonal", "pareto",
           "permutation", "poisson", "rademacher", "randint", "rayleigh", "split", "t", "triangular",
           "truncated_normal", "uniform", "wald", "weibull_min", "wrap_key_data"]

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA


def _words(x: Any) -> Array:
    """x's 32-bit words as int32, the generator's arithmetic (unsigned words are
    reinterpreted, not converted)."""
    if isinstance(x, np.ndarray) and x.dtype == np.uint32:
        x = x.view(np.int32)
    x = asarray(x)
    if x.spec.dtype == "ui32":
        x = emit(T.bitcast_convert, x, result=x.spec.with_dtype("i32"))
    if x.spec.dtype != "i32":
        raise TenzrError(f"tz.random: a key is an array of two 32-bit words (int32 or uint32), got {x.dtype}",
                         user_location())
    return x


def _key(key: Any) -> tuple[Array, Array]:
    key = _words(key)
    if key.shape != (2,):
        raise TenzrError(f"tz.random: a key has shape (2,), got {key.shape} (split keys: index one, or use "
                         "tz.vmap)", user_location())
    return key[0], key[1]


def _rotate_left(x: Array, r: int) -> Array:
    return (x << r) | emit(T.shift_right_logical, x, asarray(np.int32(32 - r)))


def _threefry(k1: Array, k2: Array, x0: Array, x1: Array) -> tuple[Array, Array]:
    """Threefry-2x32 with 20 rounds of key k1, k2 on the counter words x0, x1 (as JAX)."""
    ks = (k1, k2, k1 ^ k2 ^ np.int32(_PARITY))
    x = [x0 + ks[0], x1 + ks[1]]
    for step in range(5):
        for r in _ROTATIONS[step % 2]:
            x[0] = x[0] + x[1]
            x[1] = x[0] ^ _rotate_left(x[1], r)
        x = [x[0] + ks[(step + 1) % 3], x[1] + ks[(step + 2) % 3] + np.int32(step + 1)]
    return x[0], x[1]


def _hash(key: Any, shape: tuple[int, ...]) -> tuple[Array, Array]:
    """The two words Threefry gives for each element of `shape` (its flat index is the
    counter: JAX's partitionable scheme)."""
    size = math.prod(shape)
    if size >= 2 ** 31:
        raise TenzrError(f"tz.random: {size} numbers at once is more than this generator counts (2^31)",
                         user_location())
    k1, k2 = _key(key)
    counter = tnp.reshape(tnp.arange(size, dtype=np.int32), shape)
    return _threefry(k1, k2, tnp.zeros(shape, np.int32), counter)


def _unsigned(words: Array) -> Array:
    """int32 words as the uint32 words JAX's keys and bits are."""
    return emit(T.bitcast_convert, words, result=words.spec.with_dtype("ui32"))


def PRNGKey(seed: Any) -> Array:
    """The key of an integer seed (JAX's: [seed >> 32, seed & 0xFFFFFFFF] of a 64-bit seed)."""
    if isinstance(seed, (int, np.integer)):
        seed = int(seed)
        return tnp.asarray(np.array([(seed >> 32) & 0xFFFFFFFF, seed & 0xFFFFFFFF], np.uint32))
    seed = asarray(seed)
    if seed.shape != () or seed.spec.dtype not in INT_TYPES:
        raise TenzrError(f"tz.random.PRNGKey: the seed must be an integer scalar, got {seed.spec}", user_location())
    wide = seed.astype(np.int64)
    high = (wide >> 32).astype(np.int32)
    low = emit(T.convert, wide & np.int64(0xFFFFFFFF), result=wide.spec.with_dtype("i32"))
    return _unsigned(tnp.stack([high, low]))


key = PRNGKey


def split(key: Any, num: int | Sequence[int] = 2) -> Array:
    """`num` new keys from `key` (shape (num, 2), or shape + (2,) for a tuple)."""
    shape = shape_tuple(num)
    words = _hash(key, shape)
    return _unsigned(tnp.stack(list(words), axis=len(shape)))


def fold_in(key: Any, data: Any) -> Array:
    """A new key from `key` and an integer (a step number, a device index)."""
    data = _words(tnp.asarray(data).astype(np.int32) if isinstance(data, Array) else
                  np.array(int(data) & 0xFFFFFFFF, np.uint32).view(np.int32))
    k1, k2 = _key(key)
    x0, x1 = _threefry(k1, k2, tnp.zeros((), np.int32), data)
    return _unsigned(tnp.stack([x0, x1]))


def bits(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Random unsigned integers of `dtype` (uint32 by default), JAX's bits: the two Threefry
    words xor-ed (truncated for 8 and 16 bits), or joined for 64."""
    name = dtype_name(np.uint32 if dtype is None else dtype)
    if name not in UNSIGNED_TYPES:
        raise TenzrError(f"tz.random.bits: dtype must be an unsigned integer type, got {np.dtype(dtype)}",
                         user_location())
    return _bits(key, int(name[2:]), shape_tuple(shape))


def _bits(key: Any, width: int, shape: tuple[int, ...]) -> Array:
    x0, x1 = (_unsigned(x) for x in _hash(key, shape))
    if width == 64:
        return (x0.astype(np.uint64) << np.uint64(32)) | x1.astype(np.uint64)
    return (x0 ^ x1).astype(numpy_dtype(f"ui{width}"))


def _float_type(dtype: Any, half: bool = False) -> str:
    """The float type of a `dtype=` argument: float32 or float64, or also float16 and bfloat16
    where `half` (the distributions JAX makes in those types from `uniform` alone)."""
    name = dtype_name(default_float() if dtype is None else dtype)
    if name not in (("f16", "bf16", "f32", "f64") if half else ("f32", "f64")):
        raise TenzrError(f"tz.random: floating-point numbers are {'float16, bfloat16, ' if half else ''}float32 or "
                         f"float64{'' if half else ' here'}, got {dtype}", user_location())
    return name


def _float_kind(dtype: Any, half: bool = False) -> np.dtype:
    return numpy_dtype(_float_type(dtype, half))


def _finfo(kind: np.dtype) -> Any:
    """np.finfo of a float dtype, bfloat16's from ml_dtypes (NumPy has none)."""
    if kind.kind == "f":
        return np.finfo(kind)
    import ml_dtypes  # (only bfloat16 comes here: ml_dtypes is already loaded)

    return ml_dtypes.finfo(kind)


def _unit(key: Any, shape: tuple[int, ...], name: str) -> Array:
    """Uniform numbers in [0, 1) of `shape` from `key`, of float type `name`."""
    return _unit_of(*_hash(key, shape), name)


def _unit_of(x0: Array, x1: Array, name: str) -> Array:
    """Uniform numbers in [0, 1) from Threefry's words, JAX's: random mantissa bits under the
    exponent of 1.0, minus 1. Those are the top bits of the type's width of random bits (the
    words xor-ed, truncated below 32 bits; joined for 64), 8 bits for bfloat16 (JAX draws at
    least 8 random bits, and bfloat16's mantissa has 7)."""
    kind = numpy_dtype(name)
    info = _finfo(kind)
    if info.bits == 64:
        wide = (x0.astype(np.int64) << 32) | (x1.astype(np.int64) & np.int64(0xFFFFFFFF))
        mantissa = emit(T.shift_right_logical, wide, asarray(np.int64(64 - info.nmant)))
        one = np.array(1.0, np.float64).view(np.int64)
        return emit(T.bitcast_convert, mantissa | one, result=mantissa.spec.with_dtype("f64")) - np.float64(1.0)
    width = info.bits if info.nmant >= 8 else 8
    word = x0 ^ x1
    if width < 32:
        word = word & np.int32(2 ** width - 1)
    mantissa = emit(T.shift_right_logical, word, asarray(np.int32(width - info.nmant)))
    one = np.array(1.0, kind).view(f"u{info.bits // 8}").astype(np.int32)
    pattern = mantissa | one
    if info.bits == 16:  # (a 16-bit pattern below 2^15: exact in int16)
        pattern = pattern.astype(np.int16)
    return emit(T.bitcast_convert, pattern, result=pattern.spec.with_dtype(name)) - kind.type(1.0)


def _stretched(unit: Array, minval: Any, maxval: Any) -> Array:
    """Uniform numbers in [0, 1) moved to [minval, maxval) as JAX's `uniform` does."""
    minval, maxval = (asarray(v).astype(unit.dtype) for v in (minval, maxval))
    return tnp.maximum(minval, unit * (maxval - minval) + minval)


def _gaussian(unit: Array) -> Array:
    """Standard normal numbers from uniform ones in [0, 1): JAX's sqrt(2) erfinv(u) for u
    moved to (-1, 1)."""
    kind = unit.dtype
    u = _stretched(unit, np.nextafter(np.array(-1.0, kind), np.array(0.0, kind)), 1.0)
    return np.sqrt(2).astype(kind) * emit(T.erf_inv, u)


def uniform(key: Any, shape: Sequence[int] = (), dtype: Any = None, minval: Any = 0.0,
            maxval: Any = 1.0) -> Array:
    """Uniform numbers in [minval, maxval)."""
    return _stretched(_unit(key, shape_tuple(shape), _float_type(dtype, half=True)), minval, maxval)


def normal(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard normal numbers: sqrt(2) erfinv(u) for u uniform in (-1, 1)."""
    return _gaussian(_unit(key, shape_tuple(shape), _float_type(dtype, half=True)))


def truncated_normal(key: Any, lower: Any, upper: Any, shape: Sequence[int] | None = None,
                     dtype: Any = None) -> Array:
    """Standard normal numbers conditioned on lower < x < upper (bounds broadcast to
    `shape`): sqrt(2) erfinv(u) for u uniform between erf(lower / sqrt 2) and erf(upper / sqrt 2)."""
    kind = _float_kind(dtype, half=True)
    lower, upper = (asarray(v).astype(kind) for v in (lower, upper))
    size = np.broadcast_shapes(lower.shape, upper.shape) if shape is None else shape_tuple(shape)
    root2 = np.sqrt(2).astype(kind)
    a, b = emit(T.erf, lower / root2), emit(T.erf, upper / root2)
    x = root2 * emit(T.erf_inv, uniform(key, size, kind, a, b))
    tiny = _finfo(kind).eps
    return tnp.clip(x, lower + tiny * tnp.abs(lower), upper - tiny * tnp.abs(upper))


def bernoulli(key: Any, p: Any = 0.5, shape: Sequence[int] | None = None) -> Array:
    """True with probability p (broadcast to `shape`)."""
    p = tnp._float(p)
    shape = p.shape if shape is None else shape_tuple(shape)
    return uniform(key, shape, p.dtype) < p


def gumbel(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard Gumbel numbers: -log(-log(u))."""
    kind = _float_kind(dtype, half=True)
    u = uniform(key, shape, kind, _finfo(kind).tiny, 1.0)
    return -tnp.log(-tnp.log(u))


def exponential(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard exponential numbers: -log(1 - u) (JAX's)."""
    return -tnp.log1p(-uniform(key, shape, _float_kind(dtype, half=True)))


def laplace(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard Laplace numbers: sign(u) log(1 - |u|) for u uniform in (-1, 1) (JAX's)."""
    kind = _float_kind(dtype, half=True)
    u = uniform(key, shape, kind, -1.0 + _finfo(kind).epsneg, 1.0)
    return tnp.sign(u) * tnp.log1p(-tnp.abs(u))


def logistic(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard logistic numbers: log(u) - log(1 - u) (JAX's)."""
    kind = _float_kind(dtype, half=True)
    u = uniform(key, shape, kind, _finfo(kind).tiny, 1.0)
    return tnp.log(u) - tnp.log1p(-u)


def cauchy(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard Cauchy numbers: tan(pi (u - 1/2)) (JAX's)."""
    kind = _float_kind(dtype, half=True)
    u = uniform(key, shape, kind, _finfo(kind).eps, 1.0)
    return tnp.tan(kind.type(np.pi) * (u - kind.type(0.5)))


def categorical(key: Any, logits: Any, axis: int = -1, shape: Sequence[int] | None = None) -> Array:
    """Indices drawn with probabilities softmax(logits) along `axis` (the Gumbel-max trick);
    `shape` (the batch shape, logits' others by default) may add leading dims."""
    logits = tnp._float(logits)
    (axis,) = tnp._axes(axis, logits.ndim)
    batch = logits.shape[:axis] + logits.shape[axis + 1:]
    shape = batch if shape is None else shape_tuple(shape)
    lead = len(shape) - len(batch)
    if lead < 0 or shape[lead:] != batch:
        raise TenzrError(f"tz.random.categorical: shape {shape} must end with the logits' batch shape {batch}",
                         user_location())
    noise = gumbel(key, (*shape[:lead], *logits.shape), logits.dtype)
    return tnp.argmax(noise + logits, axis=lead + axis).astype(np.int32)


def randint(key: Any, shape: Sequence[int], minval: Any, maxval: Any, dtype: Any = None) -> Array:
    """Integers in [minval, maxval) (broadcast to `shape`; minval where maxval <= minval) of
    `dtype` (the default integer), by JAX's rule, so JAX's numbers bit for bit: two words of
    the type's width per number taken modulo the span (slightly biased where the span is no
    power of two); 8- and 16-bit types are drawn as int32 and converted."""
    shape = shape_tuple(shape)
    name = dtype_name(default_int() if dtype is None else dtype)
    if name not in INT_TYPES:
        raise TenzrError(f"tz.random.randint: dtype must be an integer type, got {np.dtype(dtype)}", user_location())
    kind = numpy_dtype(name)
    info = np.iinfo(kind)
    low, high = (v if isinstance(v, Array) and v.spec.dtype in INT_TYPES else asarray(
        np.asarray(v) if np.asarray(v).dtype.kind in "iu" else np.asarray(v).astype(default_int()))
        for v in (minval, maxval))
    if info.bits < 32:
        low, high = (v.astype(np.int32).clip(int(info.min), int(info.max) + extra)
                     for v, extra in ((low, 0), (high, 1)))
        return randint(key, shape, low, high, np.int32).astype(kind)
    unsigned = numpy_dtype(f"ui{info.bits}")
    out_of_range = high > _clipped(asarray(np.array(info.max, kind)), high.dtype)
    low, high = _clipped(low, kind), _clipped(high, kind)

    def rem(x: Array, n: Array) -> Array:  # (XLA's x % 0 is x; a span of 2^bits wraps to 0)
        return tnp.where(n == 0, x, emit(T.rem, x, tnp.where(n == 0, unsigned.type(1), n)))

    k1, k2 = split(key)
    higher, lower = (_bits(k, info.bits, shape) for k in (k1, k2))
    span = high - low
    if kind != unsigned:
        span = emit(T.bitcast_convert, span, result=span.spec.with_dtype(dtype_name(unsigned)))
    span = tnp.where(high <= low, unsigned.type(1), span)
    span = tnp.where(out_of_range & (high > low), span + unsigned.type(1), span)
    multiplier = rem(tnp.full_like(span, 2 ** (info.bits // 2)), span)
    multiplier = rem(multiplier * multiplier, span)
    offset = rem(rem(higher, span) * multiplier + rem(lower, span), span)
    if kind != unsigned:
        offset = emit(T.bitcast_convert, offset, result=offset.spec.with_dtype(name))
    return low + offset


def _clipped(x: Array, kind: np.dtype) -> Array:
    """JAX's `_convert_and_clip_integer`: integer x as `kind`, clipped to the range both hold."""
    lo, hi = (f(np.iinfo(kind), np.iinfo(x.dtype)) for f in (lambda a, b: max(a.min, b.min),
                                                               lambda a, b: min(a.max, b.max)))
    return tnp.clip(x, asarray(np.array(lo, x.dtype)), asarray(np.array(hi, x.dtype))).astype(kind)


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Array:
    """A random permutation of range(x) for an int x, else of x's slices along `axis`, or with
    `independent` of each 1-d slice along `axis` on its own (JAX's: sorting by random words,
    in enough rounds to make ties unlikely)."""
    if isinstance(x, (int, np.integer)):
        return _shuffle(key, tnp.arange(int(x), dtype=default_int()))
    x = asarray(x)
    (axis,) = tnp._axes(axis, x.ndim)
    if independent:
        return _shuffle(key, x, axis)
    return tnp.take(x, _shuffle(key, tnp.arange(x.shape[axis], dtype=np.int32)), axis=axis, mode="promise_in_bounds")


def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True, p: Any = None,
           axis: int = 0) -> Array:
    """JAX's: `shape` draws from range(a) for an int a, else from a's slices along `axis`,
    with or without replacement, with probabilities `p` (uniform by default), by JAX's
    rules: a permutation's first rows without replacement, the cumulated p searched by
    uniform numbers with it, Gumbel top-k with both, and randint's with replacement and no p:
    the same numbers as JAX's."""
    shape = shape_tuple(shape)
    x = None if isinstance(a, (int, np.integer)) else asarray(a)
    if x is not None:
        (axis,) = tnp._axes(axis, x.ndim)
    n = int(a) if x is None else x.shape[axis]
    draws = math.prod(shape)
    if draws == 0:
        return tnp.zeros(shape, default_int() if x is None else x.dtype)
    if n <= 0:
        raise TenzrError("tz.random.choice: a must be greater than 0 unless no samples are taken", user_location())
    if not replace and draws > n:
        raise TenzrError(f"tz.random.choice: cannot take a larger sample (size {draws}) than the population (size {n}) "
                         "when replace=False", user_location())
    if p is None and not replace:
        drawn = permutation(key, n if x is None else x, axis)
        result = tlib.take(drawn, tnp.arange(draws), axis=0 if x is None else axis, mode="promise_in_bounds")
    else:
        if p is None:
            index = randint(key, shape, 0, n)
        else:
            p = tnp._float(p)
            if p.shape != (n,):
                raise TenzrError(f"tz.random.choice: p must be None or a vector of a's {n} choices, got shape "
                                 f"{p.shape}", user_location())
            if replace:
                cumulated = tlib.cumsum(p)
                index = tlib.searchsorted(cumulated, cumulated[-1] * (1 - uniform(key, shape, p.dtype))).astype(int)
            else:
                index = _top_k(gumbel(key, (n,), p.dtype) + tnp.log(p), draws)[1].astype(int)
        result = index if x is None else tlib.take(x, index, axis=axis, mode="promise_in_bounds")
    return tnp.reshape(result, shape if x is None else (*x.shape[:axis], *shape, *x.shape[axis + 1:]))


def _shuffle(key: Any, values: Array, axis: int = 0) -> Array:
    """values sorted along `axis` by random words of their shape, in JAX's rounds (as many as
    make ties unlikely among values.size words), each with a new key."""
    current = _words(key)
    for _ in range(math.ceil(3 * math.log(max(1, values.size)) / math.log(2 ** 32 - 1))):
        keys = split(current)
        current = keys[0]
        order = tnp.argsort(bits(keys[1], values.shape), axis=axis)
        values = tnp.take_along_axis(values, order, axis, mode="promise_in_bounds")
    return values


# --------------------------------------------------------------------------- JAX's other distributions
#
# Each follows JAX's `jax._src.random` line for line where the order of its floating-point
# operations decides the rounding, and splits its key as JAX does.

_Keys = tuple[Array, Array]
"""One key per element: its two words, each an array of the elements' shape."""


def _int_kind(dtype: Any) -> np.dtype:
    name = dtype_name(default_int() if dtype is None else dtype)
    if name not in ("i32", "i64"):
        raise TenzrError(f"tz.random: integer numbers are int32 or int64, got {dtype}", user_location())
    return numpy_dtype(name)


def _params(kind: np.dtype, *values: Any) -> list[Array]:
    return [asarray(v).astype(kind) for v in values]


def _shape(what: str, shape: Any, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """JAX's rule: the parameters' broadcast shape (of `shapes`) by default; a given `shape`
    must be what broadcasting it with theirs gives."""
    given = [] if shape is None else [shape_tuple(shape)]
    try:
        joined = tuple(np.broadcast_shapes(*shapes, *given))
    except ValueError:
        joined = None
    if joined is None or given not in ([], [joined]):
        raise TenzrError(f"tz.random.{what}: the parameters' shapes {', '.join(map(str, shapes))} must broadcast to "
                         f"{f'shape {given[0]}' if given else 'one shape'}", user_location())
    return joined


def _split_each(keys: _Keys, num: int) -> list[_Keys]:
    """`split(key, num)` of each element's key."""
    counter = tnp.reshape(tnp.arange(num, dtype=np.int32), (num,) + (1,) * keys[0].ndim)
    words = _threefry(*keys, tnp.zeros_like(counter), counter)  # (one hash of every key and counter)
    return [(words[0][j], words[1][j]) for j in range(num)]


def _unit_each(keys: _Keys, name: str) -> Array:
    """`uniform(key, ())` of each element's key."""
    zero = tnp.zeros_like(keys[0])
    return _unit_of(*_threefry(*keys, zero, zero), name)


def _where_each(todo: Array, new: Any, old: Any) -> Any:
    """A step of a loop batched as JAX's vmap batches it: elements not `todo` keep their old
    state (a tuple, of keys too)."""
    return tree_map(lambda n, o: tnp.where(todo, n, o), new, old)


def _while_any(running: Callable[[Any], Array], step: Callable[[Any], Any], start: Any) -> Any:
    """`while any(running(state)): state = step(state)`."""
    return while_loop(lambda state: tlib.any(running(state)), step, start)


_SPLIT, _SPLIT_X, _DRAW_X, _DRAW_U, _DONE = (np.int32(i) for i in range(5))
"""The steps of an element of `_marsaglia_tsang`, and the key each hashes: its key, split
in three (the next key, the key of x and the key of u); the key of x, split in two (the
next key of x and the key of this x); the key of this x, to draw x; the key of u, to draw u."""


def _marsaglia_tsang(k1: Array, k2: Array, alpha: Array, log_space: bool) -> Array:
    """JAX's `_gamma_one` for each element with its own key (Marsaglia and Tsang, 2000):
    d v^3 for v = 1 + c x, x normal, drawn until v > 0 and then accepted by a uniform u;
    alpha < 1 boosted to alpha + 1 and scaled back by u^(1/alpha).

    JAX loops over draws of x inside a loop over tries. Each of its key splits and draws is
    one hash of one key (split(K, n)[j] is K's hash of counter j, uniform(K, ()) is made of
    counter 0's), so here each element takes one step per turn of one loop, hashing the key
    its step needs (`_SPLIT` ...): the loop holds one hash, where JAX's two loops hold four,
    which dominated the compile time."""
    kind, name = alpha.dtype, alpha.spec.dtype
    one, third = kind.type(1.0), kind.type(1.0 / 3.0)
    unboosted = alpha >= one
    d = tnp.where(unboosted, alpha, alpha + one) - third
    c = third / tnp.sqrt(d)

    def rejected(x2: Array, v3: Array, u: Array) -> Array:
        squeeze = u >= one - kind.type(0.0331) * (x2 * x2)
        return squeeze & (tnp.log(u) >= x2 * kind.type(0.5) + d * (one - v3 + tnp.log(v3)))

    def turn(state: tuple) -> tuple:
        stage, key, x_key, u_key, this_x_key, x2, v3, u = state
        hashed = _where_each(stage == _SPLIT_X, x_key,
                             _where_each(stage == _DRAW_X, this_x_key, _where_each(stage == _DRAW_U, u_key, key)))
        hash0, hash1, hash2 = _split_each(hashed, 3)
        key, u_key = _where_each(stage == _SPLIT, (hash0, hash2), (key, u_key))
        x_key = _where_each(stage == _SPLIT, hash1, _where_each(stage == _SPLIT_X, hash0, x_key))
        this_x_key = _where_each(stage == _SPLIT_X, hash1, this_x_key)
        unit = _unit_of(*hash0, name)
        x = _gaussian(unit)
        v = one + x * c
        found = (stage == _DRAW_X) & (v > 0)
        x2, v3 = _where_each(found, (x * x, v * v * v), (x2, v3))
        u = tnp.where(stage == _DRAW_U, unit, u)
        after_u = tnp.where(rejected(x2, v3, u), _SPLIT, _DONE)
        stage = tlib.select([stage == _SPLIT, stage == _SPLIT_X, found, stage == _DRAW_X, stage == _DRAW_U],
                            [_SPLIT_X, _DRAW_X, _DRAW_U, _SPLIT_X, after_u], stage)
        return stage, key, x_key, u_key, this_x_key, x2, v3, u

    key, boost_key = _split_each((k1, k2), 2)
    zero, unused = tnp.zeros_like(k1), tnp.zeros_like(alpha)
    start = (tnp.full_like(k1, _SPLIT), key, (zero, zero), (zero, zero), (zero, zero), unused, unused, unused)
    v3 = _while_any(lambda s: s[0] != _DONE, turn, start)[6]
    if log_space:
        log_u = tnp.log1p(-_unit_each(boost_key, name))
        log_boost = tnp.where(unboosted | (log_u == 0), kind.type(0.0), log_u * (one / alpha))
        return tnp.log(d) + tnp.log(v3) + log_boost
    boost = tnp.where(unboosted, one, tnp.power(one - _unit_each(boost_key, name), one / alpha))
    return d * v3 * boost


def _gamma_slope(a: Array, x: Array) -> Array:
    """dx/da of a Gamma(a) sample x with its CDF P(a, x) held (implicit reparameterization,
    Figurnov et al., 2018): -(dP/da) / (dP/dx), by JAX's `random_gamma_grad`. P is
    x^a e^-x / Γ(a + 1) S(a, x) for S its series (x <= max(a, 1)), 1 - P is x^a e^-x / Γ(a)
    F(a, x) for F its continued fraction (beyond); over dP/dx = x^(a-1) e^-x / Γ(a), the
    slope is -x (S (log x - ψ(a + 1)) + dS/da) / a, or x (F (log x - ψ(a)) + dF/da)."""
    eps = float(np.finfo(x.dtype).eps)
    fraction = (x > 1) & (x > a)
    s, ds = _series_and_slope(a, tnp.where(fraction, 0.0, x), ~fraction, eps)
    f, df = _fraction_and_slope(a, tnp.where(fraction, x, 2.0), fraction, eps)
    log_x = tnp.log(x)
    slope = tnp.where(fraction, (df + f * (log_x - digamma(a))) * x, -(ds + s * (log_x - digamma(a + 1))) * x / a)
    slope = tnp.where(x == 0, 0.0, slope)
    return tnp.where((x < 0) | (a <= 0) | tnp.isnan(x) | tnp.isnan(a), np.nan, slope)


def _series_and_slope(a: Array, x: Array, todo: Array, eps: float) -> tuple[Array, Array]:
    """S = sum of x^n / ((a+1)...(a+n)) and dS/da, summed until dS/da stops changing."""
    def step(state: tuple) -> tuple:
        todo, r, c, dc, total, dtotal = state
        r = r + 1
        dc = dc * (x / r) - (c * x) / (r * r)
        c = c * (x / r)
        new = (r, c, dc, total + c, dtotal + dc)
        return (todo & (tnp.abs(dc / (dtotal + dc)) > eps), *_where_each(todo, new, state[1:]))

    one, zero = tnp.ones_like(a), tnp.zeros_like(a)
    out = _while_any(lambda s: s[0], step, (todo, a, one, zero, one, zero))
    return out[-2], out[-1]


def _fraction_and_slope(a: Array, x: Array, todo: Array, eps: float) -> tuple[Array, Array]:
    """F, Q's continued fraction (Cephes' igamc, as JAX's), and dF/da, by its convergents
    p/q and their derivatives, rescaled when they grow past 1/eps; until dF/da settles."""
    def step(state: tuple) -> tuple:
        todo, i, y, z, p1, q1, p2, q2, dp1, dq1, dp2, dq2, f, df = state
        i, y, z = i + 1, y + 1, z + 2
        yi = y * i
        p, q = p1 * z - p2 * yi, q1 * z - q2 * yi
        dp, dq = dp1 * z - p1 - dp2 * yi + p2 * i, dq1 * z - q1 - dq2 * yi + q2 * i
        nonzero = q != 0
        f = tnp.where(nonzero, p / q, f)
        new_df = tnp.where(nonzero, (dp - f * dq) / q, df)
        unsettled = tnp.where(nonzero, tnp.abs(new_df - df), 1.0) > eps
        scale = tnp.where(tnp.abs(p) > 1 / eps, eps, 1.0)
        new = (y, z, p * scale, q * scale, p1 * scale, q1 * scale, dp * scale, dq * scale, dp1 * scale,
               dq1 * scale, f, new_df)
        return (todo & unsettled & (i < 2000), i, *_where_each(todo, new, state[2:]))

    y = 1 - a
    z = x + y + 1
    p1, q1 = x + 1, z * x
    f = p1 / q1
    zero = tnp.zeros_like(x)
    start = (todo, tnp.zeros((), x.dtype), y, z, p1, q1, tnp.ones_like(x), x, zero, -x, zero, zero, f, x * f / q1)
    out = _while_any(lambda s: s[0], step, start)
    return out[-2], out[-1]


_gamma_draws = custom_jvp(lambda k1, k2, a: _marsaglia_tsang(k1, k2, a, log_space=False))
_loggamma_draws = custom_jvp(lambda k1, k2, a: _marsaglia_tsang(k1, k2, a, log_space=True))


@_gamma_draws.defjvp
def _gamma_jvp(primals: tuple, tangents: tuple) -> tuple:
    x = _gamma_draws(*primals)
    return x, tangents[2] * _gamma_slope(primals[2], x)


@_loggamma_draws.defjvp
def _loggamma_jvp(primals: tuple, tangents: tuple) -> tuple:
    log_x = _loggamma_draws(*primals)
    x = tnp.exp(log_x)
    x = tnp.where(x == 0, np.finfo(x.dtype).tiny, x)  # (exp underflowed: JAX's choice)
    return log_x, tangents[2] * _gamma_slope(primals[2], x) / x


def _gamma(what: str, key: Any, a: Any, shape: Any, dtype: Any, log_space: bool = False) -> Array:
    (a,) = _params(_float_kind(dtype), a)
    shape = _shape(what, shape, a.shape)
    k1, k2 = _hash(key, shape)  # (each element's key: split(key, size), JAX's)
    return (_loggamma_draws if log_space else _gamma_draws)(k1, k2, tnp.broadcast_to(a, shape))


def gamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Gamma(a, 1) numbers (a broadcast to `shape`), differentiable in a as JAX's: the
    slope of a sample with its CDF held."""
    return _gamma("gamma", key, a, shape, dtype)


def loggamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """log of Gamma(a, 1) numbers, drawn in log space (accurate for small a, whose samples
    underflow); differentiable in a."""
    return _gamma("loggamma", key, a, shape, dtype, log_space=True)


def beta(key: Any, a: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Beta(a, b) numbers: Ga / (Ga + Gb) of gamma numbers drawn in log space (JAX's)."""
    a, b = _params(_float_kind(dtype), a, b)
    shape = _shape("beta", shape, a.shape, b.shape)
    key_a, key_b = split(key)
    log_a, log_b = loggamma(key_a, a, shape, a.dtype), loggamma(key_b, b, shape, b.dtype)
    log_max = tnp.maximum(log_a, log_b)
    scaled_a, scaled_b = tnp.exp(log_a - log_max), tnp.exp(log_b - log_max)
    return scaled_a / (scaled_a + scaled_b)


def dirichlet(key: Any, alpha: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Dirichlet(alpha) vectors along alpha's last axis, `shape` (alpha's others by default)
    before it: the softmax of log-gamma numbers (JAX's)."""
    (alpha,) = _params(_float_kind(dtype), alpha)
    if alpha.ndim < 1:
        raise TenzrError("tz.random.dirichlet: alpha must have at least one axis (the categories)", user_location())
    batch = _shape("dirichlet", alpha.shape[:-1] if shape is None else shape, alpha.shape[:-1])
    return softmax(loggamma(key, alpha, (*batch, alpha.shape[-1]), alpha.dtype), axis=-1)


def t(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Student's t numbers with `df` degrees of freedom: n sqrt(df / (2 g)) for n normal and
    g Gamma(df / 2) (JAX's)."""
    (df,) = _params(_float_kind(dtype), df)
    shape = _shape("t", shape, df.shape)
    key_n, key_g = split(key)
    n = normal(key_n, shape, df.dtype)
    half_df = df / df.dtype.type(2.0)
    return n * tnp.sqrt(half_df / gamma(key_g, half_df, shape, df.dtype))


def chisquare(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Chi-square numbers with `df` degrees of freedom: 2 Gamma(df / 2), drawn in log space (JAX's)."""
    (df,) = _params(_float_kind(dtype), df)
    two = df.dtype.type(2.0)
    return tnp.exp(loggamma(key, df / two, _shape("chisquare", shape, df.shape), df.dtype)) * two


def f(key: Any, dfnum: Any, dfden: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """F numbers: (X / dfnum) / (Y / dfden) for X, Y chi-square with those degrees of freedom (JAX's)."""
    dfnum, dfden = _params(_float_kind(dtype), dfnum, dfden)
    shape = _shape("f", shape, dfnum.shape, dfden.shape)
    key_den, key_num = split(key)
    numerator = chisquare(key_num, dfnum, shape, dfnum.dtype) / dfnum
    return numerator / (chisquare(key_den, dfden, shape, dfden.dtype) / dfden)


def generalized_normal(key: Any, p: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Numbers of density proportional to exp(-|x|^p): a random sign times G^(1/p) for G
    Gamma(1/p) (JAX's)."""
    (p,) = _params(_float_kind(dtype), p)
    key_g, key_sign = split(key)
    g = gamma(key_g, 1 / p, shape, p.dtype)
    return rademacher(key_sign, shape, p.dtype) * tnp.power(g, 1 / p)


def ball(key: Any, d: int, p: Any = 2, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Points uniform in the unit L^p ball of dimension d, shape (*shape, d): generalized
    normal coordinates over (sum |g_i|^p + E)^(1/p) for E exponential (Barthe et al., 2005; JAX's)."""
    if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 0:
        raise TenzrError(f"tz.random.ball: d must be a nonnegative int, got {d!r}", user_location())
    kind = _float_kind(dtype)
    shape = shape_tuple(shape)
    key_g, key_e = split(key)
    g = generalized_normal(key_g, p, (*shape, int(d)), kind)
    e = exponential(key_e, shape, kind)
    return g / tnp.power(tnp.sum(tnp.power(tnp.abs(g), p), axis=-1) + e, 1 / p)[..., None]


def poisson(key: Any, lam: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Poisson(lam) counts (lam broadcast to `shape`), as JAX draws them in float32: Knuth's
    products of uniform numbers below lam = 10, Hörmann's transformed rejection (1993) above."""
    kind = _int_kind(dtype)
    (lam,) = _params(np.dtype(np.float32), lam)
    shape = _shape("poisson", shape, lam.shape)
    lam = tnp.broadcast_to(lam, shape)
    knuth = tnp.isnan(lam) | (lam < 10)
    drawn = tnp.where(knuth, _poisson_knuth(key, tnp.where(knuth, lam, 0.0)),
                      _poisson_rejection(key, tnp.where(knuth, 1e5, lam)))
    return tnp.where(lam == 0, 0, drawn).astype(kind)


def _poisson_knuth(key: Any, lam: Array) -> Array:
    def step(state: tuple) -> tuple:
        k, key, log_product = state
        key, sub = split(key)
        k = tnp.where(log_product > -lam, k + 1, k)
        return k, key, log_product + tnp.log(uniform(sub, lam.shape, lam.dtype))

    start = (tnp.zeros(lam.shape, np.int32), _unsigned(_words(key)), tnp.zeros_like(lam))
    return _while_any(lambda s: s[2] > -lam, step, start)[0] - 1


def _poisson_rejection(key: Any, lam: Array) -> Array:
    log_lam = tnp.log(lam)
    b = 0.931 + 2.53 * tnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def step(state: tuple) -> tuple:
        k_out, accepted, key = state
        keys = split(key, 3)
        u = uniform(keys[1], lam.shape, lam.dtype) - 0.5
        v = uniform(keys[2], lam.shape, lam.dtype)
        u_shifted = 0.5 - tnp.abs(u)
        k = tnp.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = tnp.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - gammaln(k + 1)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept = ((u_shifted >= 0.07) & (v <= v_r)) | (~reject & (s <= t))
        return tnp.where(accept, k, k_out), accepted | accept, keys[0]

    start = (tnp.full_like(lam, -1.0), tnp.zeros(lam.shape, bool), _unsigned(_words(key)))
    return _while_any(lambda s: ~s[1], step, start)[0].astype(np.int32)


def multinomial(key: Any, n: Any, p: Any, *, shape: Sequence[int] | None = None, dtype: Any = None,
                unroll: int | bool = 1) -> Array:
    """Counts of n draws among the outcomes along p's last axis (of shape `shape` + p's last
    dim, or p's), as floats: JAX's, one binomial per outcome in turn, of what remains with
    the outcome's share of the probability left (so its numbers too)."""
    kind = _float_kind(dtype)
    count, prob = promote(tnp._float(n), tnp._float(p))
    shape = prob.shape if shape is None else shape_tuple(shape)
    if not shape:
        raise TenzrError("tz.random.multinomial: p needs an axis of outcomes", user_location())
    count, prob = tnp.broadcast_to(count, shape[:-1]), tnp.moveaxis(tnp.broadcast_to(prob, shape), -1, 0)
    left = _cumsum(prob, 0, reverse=True)
    ratios = prob / tnp.where(left == 0, 1, left)

    def step(remainder: Array, ratio_key: tuple[Array, Array]) -> tuple[Array, Array]:
        ratio, k = ratio_key
        drawn = binomial(k, remainder, tnp.clip(ratio, 0, 1), dtype=remainder.dtype)
        return remainder - drawn, drawn

    _, counts = scan(step, count, (ratios, split(key, ratios.shape[0])), unroll=unroll)
    return tnp.moveaxis(counts, 0, -1).astype(kind)


def clone(key: Any) -> Array:
    """`key` itself (JAX's: only its key-reuse checker tells a clone apart)."""
    return tnp.asarray(key)


def key_data(keys: Any) -> Array:
    """The uint32 words of `keys` (of shape (..., 2)), as JAX's: tz's keys are those words
    already (JAX's raw keys), as `key` makes them; int32 words come back as uint32."""
    words = _words(keys)
    if words.ndim == 0 or words.shape[-1] != 2:
        raise TenzrError(f"tz.random.key_data: keys have a last axis of 2 words, got shape {words.shape}",
                         user_location())
    return _unsigned(words)


def wrap_key_data(key_bits_array: Any, *, impl: Any = None) -> Array:
    """Keys from their uint32 words (shape (..., 2)), as JAX's; tz's keys are the words
    themselves, of JAX's one generator (`impl` None or "threefry2x32")."""
    if impl not in (None, "threefry2x32"):
        raise TenzrError(f"tz.random.wrap_key_data: only the threefry2x32 generator is supported, got {impl!r}",
                         user_location())
    return key_data(key_bits_array)


def binomial(key: Any, n: Any, p: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Binomial(n, p) counts, as floats (JAX's): the sum of geometric gaps while n q <= 10,
    else Kachitvichyanukul and Schmeiser's BTRS (1988), for q = min(p, 1 - p); NaN where
    p or n is NaN or out of range, inf where n is."""
    kind = _float_kind(dtype)
    prob = tnp._float(p)
    (count,) = _params(prob.dtype, n)
    shape = _shape("binomial", shape, count.shape, prob.shape)
    count, prob = tnp.broadcast_to(count, shape), tnp.broadcast_to(prob, shape)
    below_half = prob < 0.5
    q = tnp.where(below_half, prob, 1.0 - prob)
    count_nan_or_negative, count_inf = tnp.isnan(count) | (count < 0.0), tnp.isinf(count)
    q_nan, q_negative = tnp.isnan(q), q < 0.0
    q = tnp.where(q_nan | q_negative, 0.01, q)
    inversion = count_nan_or_negative | (count * q <= 10.0)
    count = tnp.floor(count)
    samples = tnp.where(inversion, _binomial_inversion(key, tnp.where(inversion, count, 0.0), q),
                        _btrs(key, tnp.where(inversion, 1e4, count), tnp.where(inversion, 0.5, q))).astype(kind)
    invalid = q_negative | q_nan | count_nan_or_negative
    samples = tnp.where(invalid, np.nan, tnp.where(count_inf, np.inf, samples))
    return tnp.where(below_half | count_nan_or_negative | q_nan | count_inf, samples, count.astype(kind) - samples)


def _binomial_inversion(key: Any, count: Array, prob: Array) -> Array:
    log1m_prob = tnp.log1p(-prob)

    def step(state: tuple) -> tuple:
        gaps, gap_sum, key = state
        keys = split(key)
        gaps = tnp.where(gap_sum <= count, gaps + 1, gaps)
        gap = tnp.ceil(tnp.log(uniform(keys[0], prob.shape, prob.dtype)) / log1m_prob)
        return gaps, gap_sum + gap, keys[1]

    start = (tnp.zeros_like(prob), tnp.zeros_like(prob), _unsigned(_words(key)))
    return _while_any(lambda s: s[1] <= count, step, start)[0] - 1


_STIRLING_TAILS = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                            0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                            0.00925546218271273, 0.00833056343336287])
"""log k! - (k + 1/2) log(k + 1) + (k + 1) - log(2 pi)/2 for k = 0..9 (JAX's table)."""


def _stirling_tail(k: Array) -> Array:
    # JAX's: the series beyond 9 is evaluated at k clamped to 9, as JAX's is (its bits).
    clamped = tnp.clip(k, 0.0, 9.0)
    kp1sq = (clamped + 1) * (clamped + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (clamped + 1)
    table = tnp.take(_STIRLING_TAILS.astype(k.dtype), tnp.floor(clamped).astype(np.int32), mode="promise_in_bounds")
    return tnp.where(k <= 9, table, approx)


def _btrs(key: Any, count: Array, prob: Array) -> Array:
    stddev = tnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = tnp.floor((count + 1) * prob)

    def step(state: tuple) -> tuple:
        k_out, accepted, key = state
        keys = split(key, 3)
        u = uniform(keys[1], prob.shape, prob.dtype)
        v = uniform(keys[2], prob.shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - tnp.abs(u)
        quick = (us >= 0.07) & (v <= v_r)
        k = tnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        log_v = tnp.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * tnp.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * tnp.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * tnp.log(r * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m) - _stirling_tail(k) - _stirling_tail(count - k))
        accept = quick | (~reject & (log_v <= bound))
        return tnp.where(accept, k, k_out), accepted | accept, keys[0]

    start = (tnp.full_like(prob, -1.0), tnp.zeros(prob.shape, bool), _unsigned(_words(key)))
    return _while_any(lambda s: ~s[1], step, start)[0]


def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Sequence[int] | None = None, dtype: Any = None,
                        method: str = "cholesky") -> Array:
    """Normal vectors of mean `mean` [..., n] and covariance `cov` [..., n, n]: mean + F z
    for z standard normal and F F^T = cov, F by `method`: 'cholesky' (JAX's numbers),
    'eigh' or 'svd' (for singular cov; JAX's distribution, though F's columns may differ
    in sign from JAX's). `shape` (the batch shape, mean's and cov's broadcast by default)
    comes before n."""
    if method not in ("cholesky", "eigh", "svd"):
        raise TenzrError(f"tz.random.multivariate_normal: method must be 'cholesky', 'eigh' or 'svd', got {method!r}",
                         user_location())
    mean, cov = promote(tnp._float(mean), tnp._float(cov))
    mean, cov = _params(_float_kind(mean.dtype if dtype is None else dtype), mean, cov)
    n = mean.shape[-1] if mean.ndim else 0
    if mean.ndim < 1 or cov.shape[-2:] != (n, n):
        raise TenzrError(f"tz.random.multivariate_normal: mean must be [..., n] and cov [..., n, n], got shapes "
                         f"{mean.shape} and {cov.shape}", user_location())
    batch = _shape("multivariate_normal", shape, mean.shape[:-1], cov.shape[:-2])
    if method == "cholesky":
        factor = cholesky(cov)
    elif method == "eigh":
        w, v = eigh(cov)
        factor = v * tnp.sqrt(w[..., None, :])
    else:
        u, s, _ = svd(cov)
        factor = u * tnp.sqrt(s[..., None, :])
    return mean + tnp.einsum("...ij,...j->...i", factor, normal(key, (*batch, n), mean.dtype))


def orthogonal(key: Any, n: int, shape: Sequence[int] = (), dtype: Any = None, m: int | None = None) -> Array:
    """Matrices [*shape, n, m] uniform on the orthogonal group (n = m, the default), or
    with orthonormal rows (n < m) or columns (n > m): the Q of a normal matrix's QR, its
    columns' signs those of R's diagonal (Mezzadri, 2007; JAX's)."""
    m = n if m is None else m
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0 for v in (n, m)):
        raise TenzrError(f"tz.random.orthogonal: n and m must be nonnegative ints, got n={n!r}, m={m!r}",
                         user_location())
    z = normal(key, (*shape_tuple(shape), max(n, m), min(n, m)), _float_kind(dtype))
    q, r = qr(z)
    x = q * tnp.sign(diagonal(r))[..., None, :]
    return tnp.swapaxes(x, -1, -2) if n < m else x


def lognormal(key: Any, sigma: Any = 1.0, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """exp(sigma z) for z standard normal (sigma broadcast to `shape`)."""
    (sigma,) = _params(_float_kind(dtype), sigma)
    return tnp.exp(normal(key, _shape("lognormal", shape, sigma.shape), sigma.dtype) * sigma)


def rademacher(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """-1 or 1, each with probability 1/2 (int by default, JAX's `bernoulli(key, 0.5)`)."""
    kind = _int_kind(dtype) if dtype is None or np.dtype(dtype).kind in "iu" else _float_kind(dtype)
    return (2 * bernoulli(key, 0.5, shape).astype(kind) - 1).astype(kind)


def maxwell(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Maxwell numbers: the length of a standard normal 3-vector."""
    z = normal(key, (*shape_tuple(shape), 3), _float_kind(dtype))
    return tnp.sqrt(tnp.sum(z * z, axis=-1))


def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """loc + scale s M for M Maxwell and s a random sign, of JAX's shape: `shape` (the
    parameters' broadcast shape when empty) followed by the parameters' broadcast shape."""
    loc, scale = _params(_float_kind(dtype), loc, scale)
    params = _shape("double_sided_maxwell", None, loc.shape, scale.shape)
    shape = (*(shape_tuple(shape) or params), *params)
    key_maxwell, key_sign = split(key)
    return rademacher(key_sign, shape, loc.dtype) * maxwell(key_maxwell, shape, loc.dtype) * scale + loc


def pareto(key: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Pareto numbers of shape b (density b / x^(b+1) on x >= 1): exp(E / b) for E exponential."""
    (b,) = _params(_float_kind(dtype), b)
    return tnp.exp(exponential(key, _shape("pareto", shape, b.shape), b.dtype) / b)


def rayleigh(key: Any, scale: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Rayleigh numbers: scale sqrt(-2 log u)."""
    (scale,) = _params(_float_kind(dtype), scale)
    shape = _shape("rayleigh", shape, scale.shape)
    return scale * tnp.sqrt(tnp.log(uniform(key, shape, scale.dtype)) * -2)


def wald(key: Any, mean: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Wald (inverse Gaussian, unit shape) numbers of mean `mean`: Michael, Schucany and
    Haas's transformation (1976) of a normal and a uniform number (JAX's)."""
    (mean,) = _params(_float_kind(dtype), mean)
    shape = _shape("wald", shape, mean.shape)
    key_v, key_z = split(key)
    y = tnp.square(normal(key_v, shape, mean.dtype))
    z = uniform(key_z, shape, mean.dtype)
    mean_sq = tnp.square(mean)
    x = mean + mean_sq * y / 2 - mean / 2 * tnp.sqrt(4 * mean * y + mean_sq * tnp.square(y))
    return tnp.where(z <= mean / (mean + x), x, mean_sq / x)


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Weibull numbers: scale (-log(1 - u))^(1 / concentration)."""
    scale, concentration = _params(_float_kind(dtype), scale, concentration)
    u = uniform(key, shape, scale.dtype)
    return tnp.power(-tnp.log1p(-u), 1.0 / concentration) * scale


def geometric(key: Any, p: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Trials up to the first success, of probability p each: 1 + floor(log u / log(1 - p))."""
    kind = _int_kind(dtype)
    p = tnp._float(p)
    u = uniform(key, _shape("geometric", shape, p.shape), p.dtype)
    log_u = tnp.log(tnp.where(u == 0, 1.0, u))  # (JAX's: u = 0 drawn as 1)
    return (tnp.floor(log_u / tnp.log1p(-p)) + 1).astype(kind)


def triangular(key: Any, left: Any, mode: Any, right: Any, shape: Sequence[int] | None = None,
               dtype: Any = None) -> Array:
    """Triangular numbers on [left, right] peaking at `mode`, by inverting the CDF."""
    left, mode, right = _params(_float_kind(dtype), left, mode, right)
    shape = _shape("triangular", shape, left.shape, mode.shape, right.shape)
    left, mode, right = (tnp.broadcast_to(v, shape) for v in (left, mode, right))
    u = uniform(key, shape, left.dtype)
    rising = left + tnp.sqrt(u * (right - left) * (mode - left))
    falling = right - tnp.sqrt((1 - u) * (right - left) * (right - mode))
    return tnp.where(u < (mode - left) / (right - left), rising, falling)


check_arguments(globals(), "tz.random.")
