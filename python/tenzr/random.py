"""`tz.random`: JAX's functional random numbers. A key is an array of two 32-bit words; the
same key gives the same numbers on every target, and `split` / `fold_in` derive new keys.

The generator is JAX's: the Threefry-2x32 hash of a counter (Salmon et al., 2011), with
JAX's default ("partitionable") counters, so `PRNGKey`, `split`, `fold_in`, `bits`,
`uniform`, `normal`, `bernoulli`, `gumbel`, `categorical` and `permutation` give JAX's
numbers bit for bit (`randint` follows its own simpler rule). The words are held as int32,
as the dialect has no unsigned types: a key printed here shows JAX's uint32 words as their
two's-complement values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr import numpy_lib as tlib
from tenzr.core import Array, asarray, check_arguments, dtype_name, emit, shape_tuple, user_location
from tenzr.dialect import ops as T
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.types import numpy_dtype
from tenzr.flags import default_float
from tenzr.lax import top_k as _top_k

__all__ = ["PRNGKey", "bernoulli", "bits", "categorical", "choice", "fold_in", "gumbel", "key", "normal", "permutation",
           "randint", "split", "uniform"]

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA


def _words(x: Any) -> Array:
    """x's 32-bit words as int32 (unsigned NumPy words are reinterpreted, not converted)."""
    if isinstance(x, np.ndarray) and x.dtype == np.uint32:
        x = x.view(np.int32)
    x = asarray(x)
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


def PRNGKey(seed: Any) -> Array:
    """The key of an integer seed (JAX's: [seed >> 32, seed & 0xFFFFFFFF] of a 64-bit seed)."""
    if isinstance(seed, (int, np.integer)):
        seed = int(seed)
        return tnp.asarray(np.array([(seed >> 32) & 0xFFFFFFFF, seed & 0xFFFFFFFF], np.uint32).view(np.int32))
    seed = asarray(seed)
    if seed.shape != () or seed.spec.dtype not in ("i32", "i64"):
        raise TenzrError(f"tz.random.PRNGKey: the seed must be an integer scalar, got {seed.spec}", user_location())
    wide = seed.astype(np.int64)
    high = (wide >> 32).astype(np.int32)
    low = emit(T.convert, wide & np.int64(0xFFFFFFFF), result=wide.spec.with_dtype("i32"))
    return tnp.stack([high, low])


key = PRNGKey


def split(key: Any, num: int | Sequence[int] = 2) -> Array:
    """`num` new keys from `key` (shape (num, 2), or shape + (2,) for a tuple)."""
    shape = shape_tuple(num)
    words = _hash(key, shape)
    return tnp.stack(list(words), axis=len(shape))


def fold_in(key: Any, data: Any) -> Array:
    """A new key from `key` and an integer (a step number, a device index)."""
    data = _words(tnp.asarray(data).astype(np.int32) if isinstance(data, Array) else
                  np.array(int(data) & 0xFFFFFFFF, np.uint32).view(np.int32))
    k1, k2 = _key(key)
    x0, x1 = _threefry(k1, k2, tnp.zeros((), np.int32), data)
    return tnp.stack([x0, x1])


def bits(key: Any, shape: Sequence[int] = (), dtype: Any = np.uint32) -> Array:
    """Random 32-bit words (int32 holding JAX's uint32 bits; only 32-bit words here)."""
    if np.dtype(dtype).itemsize != 4 or np.dtype(dtype).kind not in "iu":
        raise TenzrError(f"tz.random.bits: only 32-bit words are supported, got {np.dtype(dtype)}", user_location())
    x0, x1 = _hash(key, shape_tuple(shape))
    return x0 ^ x1


def _float_type(dtype: Any) -> str:
    name = dtype_name(default_float() if dtype is None else dtype)
    if name not in ("f32", "f64"):
        raise TenzrError(f"tz.random: floating-point numbers are float32 or float64, got {dtype}", user_location())
    return name


def _unit(key: Any, shape: tuple[int, ...], name: str) -> Array:
    """Uniform numbers in [0, 1): random mantissa bits under the exponent of 1.0, minus 1."""
    x0, x1 = _hash(key, shape)
    if name == "f32":
        mantissa = emit(T.shift_right_logical, x0 ^ x1, asarray(np.int32(9)))
        one = np.array(1.0, np.float32).view(np.int32)
        return emit(T.bitcast_convert, mantissa | one, result=mantissa.spec.with_dtype("f32")) - np.float32(1.0)
    wide = (x0.astype(np.int64) << 32) | (x1.astype(np.int64) & np.int64(0xFFFFFFFF))
    mantissa = emit(T.shift_right_logical, wide, asarray(np.int64(12)))
    one = np.array(1.0, np.float64).view(np.int64)
    return emit(T.bitcast_convert, mantissa | one, result=mantissa.spec.with_dtype("f64")) - np.float64(1.0)


def uniform(key: Any, shape: Sequence[int] = (), dtype: Any = None, minval: Any = 0.0,
            maxval: Any = 1.0) -> Array:
    """Uniform numbers in [minval, maxval)."""
    name = _float_type(dtype)
    unit = _unit(key, shape_tuple(shape), name)
    minval, maxval = (asarray(v).astype(numpy_dtype(name)) for v in (minval, maxval))
    return tnp.maximum(minval, unit * (maxval - minval) + minval)


def normal(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard normal numbers: sqrt(2) erfinv(u) for u uniform in (-1, 1)."""
    name = _float_type(dtype)
    kind = numpy_dtype(name)
    low = np.nextafter(np.array(-1.0, kind), np.array(0.0, kind))
    u = uniform(key, shape, kind, low, 1.0)
    return np.sqrt(2).astype(kind) * emit(T.erf_inv, u)


def truncated_normal(key: Any, lower: Any, upper: Any, shape: Sequence[int] | None = None,
                     dtype: Any = None) -> Array:
    """Standard normal numbers conditioned on lower < x < upper (bounds broadcast to
    `shape`): sqrt(2) erfinv(u) for u uniform between erf(lower / sqrt 2) and erf(upper / sqrt 2)."""
    kind = numpy_dtype(_float_type(dtype))
    lower, upper = (asarray(v).astype(kind) for v in (lower, upper))
    size = np.broadcast_shapes(lower.shape, upper.shape) if shape is None else shape_tuple(shape)
    root2 = np.sqrt(2).astype(kind)
    a, b = emit(T.erf, lower / root2), emit(T.erf, upper / root2)
    x = root2 * emit(T.erf_inv, uniform(key, size, kind, a, b))
    tiny = np.finfo(kind).eps
    return tnp.clip(x, lower + tiny * tnp.abs(lower), upper - tiny * tnp.abs(upper))


def bernoulli(key: Any, p: Any = 0.5, shape: Sequence[int] | None = None) -> Array:
    """True with probability p (broadcast to `shape`)."""
    p = tnp._float(p)
    shape = p.shape if shape is None else shape_tuple(shape)
    return uniform(key, shape, p.dtype) < p


def gumbel(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard Gumbel numbers: -log(-log(u))."""
    kind = numpy_dtype(_float_type(dtype))
    u = uniform(key, shape, kind, np.finfo(kind).tiny, 1.0)
    return -tnp.log(-tnp.log(u))


def exponential(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard exponential numbers: -log(1 - u) (JAX's)."""
    return -tnp.log1p(-uniform(key, shape, numpy_dtype(_float_type(dtype))))


def laplace(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard Laplace numbers: sign(u) log(1 - |u|) for u uniform in (-1, 1) (JAX's)."""
    kind = numpy_dtype(_float_type(dtype))
    u = uniform(key, shape, kind, -1.0 + np.finfo(kind).epsneg, 1.0)
    return tnp.sign(u) * tnp.log1p(-tnp.abs(u))


def logistic(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard logistic numbers: log(u) - log(1 - u) (JAX's)."""
    kind = numpy_dtype(_float_type(dtype))
    u = uniform(key, shape, kind, np.finfo(kind).tiny, 1.0)
    return tnp.log(u) - tnp.log1p(-u)


def cauchy(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard Cauchy numbers: tan(pi (u - 1/2)) (JAX's)."""
    kind = numpy_dtype(_float_type(dtype))
    u = uniform(key, shape, kind, np.finfo(kind).eps, 1.0)
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


def randint(key: Any, shape: Sequence[int], minval: Any, maxval: Any, dtype: Any = np.int32) -> Array:
    """Integers uniform in [minval, maxval) (from 64-bit uniform numbers, so the bias is
    below 2^-30 for ranges under 2^22; not JAX's bits)."""
    shape = shape_tuple(shape)
    name = dtype_name(dtype)
    if name not in ("i32", "i64"):
        raise TenzrError(f"tz.random.randint: dtype must be int32 or int64, got {dtype}", user_location())
    low, high = (asarray(v).astype(np.float64) for v in (minval, maxval))
    u = _unit(key, shape, "f64")
    drawn = tnp.floor(low + u * (high - low))
    return tnp.minimum(drawn, high - 1).astype(numpy_dtype(name))


def permutation(key: Any, x: Any, axis: int = 0) -> Array:
    """A random permutation of range(x) for an int x, else of x's slices along `axis`
    (JAX's: sorting by random words, in enough rounds to make ties unlikely)."""
    if isinstance(x, (int, np.integer)):
        return _shuffle(key, tnp.arange(int(x), dtype=np.int32))
    x = asarray(x)
    (axis,) = tnp._axes(axis, x.ndim)
    return tnp.take(x, _shuffle(key, tnp.arange(x.shape[axis], dtype=np.int32)), axis=axis, mode="promise_in_bounds")


def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True, p: Any = None,
           axis: int = 0) -> Array:
    """JAX's: `shape` draws from range(a) for an int a, else from a's slices along `axis`,
    with or without replacement, with probabilities `p` (uniform by default), by JAX's
    rules: a permutation's first rows without replacement, the cumulated p searched by
    uniform numbers with it, Gumbel top-k with both; the same numbers as JAX's, except with
    replacement and no p (randint: not JAX's bits)."""
    shape = shape_tuple(shape)
    x = None if isinstance(a, (int, np.integer)) else asarray(a)
    if x is not None:
        (axis,) = tnp._axes(axis, x.ndim)
    n = int(a) if x is None else x.shape[axis]
    draws = math.prod(shape)
    if draws == 0:
        return tnp.zeros(shape, np.int32 if x is None else x.dtype)
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


def _shuffle(key: Any, values: Array) -> Array:
    current = _words(key)
    for _ in range(math.ceil(3 * math.log(max(1, values.size)) / math.log(2 ** 32 - 1))):
        keys = split(current)
        current = keys[0]
        unsigned_order = bits(keys[1], values.shape) ^ np.int32(-2 ** 31)  # (as signed ints)
        values = tnp.take(values, tnp.argsort(unsigned_order), mode="promise_in_bounds")
    return values


check_arguments(globals(), "tz.random.")
