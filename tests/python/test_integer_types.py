"""8- and 16-bit and unsigned integers (int8, uint8, int16, uint16, uint32, uint64) against
JAX: every result's dtype and values, traced and eager, with jax_enable_x64 off and on."""

from __future__ import annotations

import numpy as np
import pytest

import tenzr as tz

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


@pytest.fixture
def x64_both(request):
    """Both frameworks with jax_enable_x64 as the test's parameter asks, restored after."""
    on = request.param
    before = (jax.config.read("jax_enable_x64"), tz.config.read("jax_enable_x64"))
    jax.config.update("jax_enable_x64", on)
    tz.config.update("jax_enable_x64", on)
    yield on
    jax.config.update("jax_enable_x64", before[0])
    tz.config.update("jax_enable_x64", before[1])


def _data(dtype: str, seed: int) -> np.ndarray:
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    return rng.integers(max(info.min, -100), min(info.max, 200), (3, 4), endpoint=True).astype(dtype)


def _nonzero(m, y):
    return m.where(y == 0, 1, y).astype(y.dtype)


OPS = {
    "add": lambda m, x, y: x + y,
    "sub": lambda m, x, y: x - y,
    "mul": lambda m, x, y: x * y,
    "neg": lambda m, x, y: -x,
    "floordiv": lambda m, x, y: x // _nonzero(m, y),
    "mod": lambda m, x, y: x % _nonzero(m, y),
    "truediv": lambda m, x, y: x / _nonzero(m, y),
    "lt": lambda m, x, y: x < y,
    "eq": lambda m, x, y: x == y,
    "maximum": lambda m, x, y: m.maximum(x, y),
    "minimum": lambda m, x, y: m.minimum(x, y),
    "abs": lambda m, x, y: m.abs(x),
    "sign": lambda m, x, y: m.sign(x),
    "right_shift": lambda m, x, y: x >> 2,
    "left_shift": lambda m, x, y: x << 1,
    "and": lambda m, x, y: x & y,
    "xor": lambda m, x, y: x ^ y,
    "invert": lambda m, x, y: ~x,
    "bitwise_count": lambda m, x, y: m.bitwise_count(x),
    "sum": lambda m, x, y: x.sum(),
    "sum0": lambda m, x, y: x.sum(0),
    "prod": lambda m, x, y: x.prod(1),
    "mean": lambda m, x, y: x.mean(1),
    "var": lambda m, x, y: x.var(),
    "max": lambda m, x, y: x.max(1),
    "min": lambda m, x, y: x.min(),
    "argmax": lambda m, x, y: m.argmax(x, 1),
    "argmin": lambda m, x, y: m.argmin(x),
    "sort": lambda m, x, y: m.sort(x, 1),
    "argsort": lambda m, x, y: m.argsort(x.ravel(), stable=True),
    "cumsum": lambda m, x, y: m.cumsum(x, 1),
    "cumprod": lambda m, x, y: m.cumprod(x, 0),
    "to_float32": lambda m, x, y: x.astype(np.float32),
    "to_int32": lambda m, x, y: x.astype(np.int32),
    "from_float": lambda m, x, y: (x.astype(np.float32) * 0.5).astype(x.dtype),
    "sin": lambda m, x, y: m.sin(x),
    "times_float": lambda m, x, y: x * 2.5,
    "plus_int": lambda m, x, y: x + 3,
    "where": lambda m, x, y: m.where(x > y, x, y),
    "index": lambda m, x, y: x[1, ::2],
    "take": lambda m, x, y: m.take(x, (x % 4).astype(np.int32).ravel()),
    "indexed_by": lambda m, x, y: m.arange(10)[x % 10],
    "concatenate": lambda m, x, y: m.concatenate([x, y]),
    "clip": lambda m, x, y: m.clip(x, 3, 50),
    "flip": lambda m, x, y: m.flip(x, 1),
    "square": lambda m, x, y: m.square(x),
    "any": lambda m, x, y: m.any(x > 3),
    "matmul": lambda m, x, y: x @ y.T,
    "float_matmul": lambda m, x, y: x.astype(np.float32) @ y.T.astype(np.float32),
    "unique": lambda m, x, y: m.unique(x, size=12, fill_value=0),
    "round": lambda m, x, y: m.round(x),
    "full": lambda m, x, y: m.full(3, 7, x.dtype),
    "arange": lambda m, x, y: m.arange(5, dtype=x.dtype),
}
"""Integer arithmetic wraps: the data reach past int8's and uint8's ranges in sums and products."""


def _check(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype, got.shape, want.shape)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-5, atol=1e-5, err_msg=what)


@pytest.mark.parametrize("x64_both, dtype", [(False, d) for d in ("int8", "uint8", "int16", "uint16", "uint32")]
                         + [(True, d) for d in ("int8", "uint8", "uint32", "uint64")], indirect=["x64_both"])
def test_operations_match_jax(x64_both, dtype):
    x, y = _data(dtype, 0), _data(dtype, 1)
    got = tz.jit(lambda x, y: {k: f(tz, x, y) for k, f in OPS.items()})(x, y)
    want = jax.jit(lambda x, y: {k: f(jnp, x, y) for k, f in OPS.items()})(x, y)
    for name in OPS:
        _check(got[name], want[name], f"{dtype} {name}")


@pytest.mark.parametrize("x64_both", [False, True], indirect=True)
def test_promotion_matches_jax(x64_both):
    """Every pair of types, through result_type and through `+` of arrays and Python numbers."""
    kinds = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "float16", "float32"]
    kinds += ["int64", "uint64", "float64"] if x64_both else []
    for a in kinds:
        for b in kinds:
            assert tz.result_type(np.dtype(a), np.dtype(b)) == jnp.result_type(np.dtype(a), np.dtype(b)), (a, b)
    arrays = {k: np.ones(2, k) for k in kinds}
    got = tz.jit(lambda xs: {(a, b): xs[a] + xs[b] for a in kinds for b in kinds})(arrays)
    want = jax.jit(lambda xs: {(a, b): xs[a] + xs[b] for a in kinds for b in kinds})(arrays)
    for pair in got:
        assert np.asarray(got[pair]).dtype == np.asarray(want[pair]).dtype, pair
    got = tz.jit(lambda xs: {(k, n): xs[k] * n for k in kinds for n in (3, 2.5)})(arrays)
    want = jax.jit(lambda xs: {(k, n): xs[k] * n for k in kinds for n in (3, 2.5)})(arrays)
    for key in got:
        assert np.asarray(got[key]).dtype == np.asarray(want[key]).dtype, key


def test_unsigned_values_past_the_signed_range():
    """Conversions, comparisons, divisions and shifts of values a signed type of the same
    width would read as negative; a uint8 image normalized and multiplied (IREE 3.13
    converted such values as signed inside a matmul: 200 became -56)."""
    pixels = np.array([[200, 255, 0], [128, 3, 129]], np.uint8)
    weights = np.arange(6, dtype=np.float32).reshape(3, 2)
    got = tz.jit(lambda p, w: (p.astype(np.float32) / 255.0) @ w)(pixels, weights)
    np.testing.assert_allclose(got, (pixels.astype(np.float32) / 255.0) @ weights, rtol=1e-6)
    for dtype in ("uint16", "uint32", "uint64"):
        info = np.iinfo(dtype)
        big = np.array([info.max, info.max // 2 + 1, info.max // 2, 5], dtype)
        (as_float, as_double, halved, shifted, ordered, biggest) = tz.jit(
            lambda v: (v.astype(np.float32), v.astype(np.float64), v // 2, v >> 1, v > 7, v.max()))(big)
        np.testing.assert_array_equal(as_float, big.astype(np.float32))
        np.testing.assert_array_equal(as_double, big.astype(np.float64))
        np.testing.assert_array_equal(halved, big // 2)
        np.testing.assert_array_equal(shifted, big >> 1)
        np.testing.assert_array_equal(ordered, big > 7)
        assert biggest == info.max and biggest.dtype == dtype


@pytest.mark.parametrize("x64_both", [False, True], indirect=True)
def test_eager_arrays_match_jax(x64_both):
    x = np.array([200, 100, 7], np.uint8)
    y = np.array([-100, 27, 7], np.int8)
    for f in (lambda m, a, b: a + 100, lambda m, a, b: a * 2, lambda m, a, b: a / 2, lambda m, a, b: a.sum(),
              lambda m, a, b: a.mean(), lambda m, a, b: -a, lambda m, a, b: a + b, lambda m, a, b: m.abs(b),
              lambda m, a, b: a >> 1, lambda m, a, b: b >> 1):
        _check(f(tz, tz.asarray(x), tz.asarray(y)), f(jnp, jnp.asarray(x), jnp.asarray(y)), "eager")


def test_gradient_with_integer_data():
    """A float loss of uint8 pixels and int8 labels differentiates in its float
    parameters (against JAX), under jit and vmap."""
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (5, 6)).astype(np.uint8)
    labels = rng.integers(-2, 3, 5).astype(np.int8)
    w = rng.standard_normal(6).astype(np.float32)

    def loss(m, w, pixels, labels):
        return ((pixels.astype(np.float32) / 255.0 @ w - labels) ** 2).mean()

    got = tz.jit(tz.grad(lambda *a: loss(tz, *a)))(w, pixels, labels)
    want = jax.grad(lambda *a: loss(jnp, *a))(w, pixels, labels)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    per_example = tz.vmap(tz.grad(lambda w, p, lab: loss(tz, w, p[None], lab[None])), (None, 0, 0))(w, pixels, labels)
    want = jax.vmap(jax.grad(lambda w, p, lab: loss(jnp, w, p[None], lab[None])), (None, 0, 0))(w, pixels, labels)
    np.testing.assert_allclose(per_example, want, rtol=1e-5)


def test_loops_carry_small_integers():
    def count(m, lax, x):
        return lax.fori_loop(0, 4, lambda i, c: (c * 3 + 1).astype(c.dtype), x)

    x = np.array([1, 100, 250], np.uint8)
    _check(tz.jit(lambda v: count(tz, tz.lax, v))(x), jax.jit(lambda v: count(jnp, jax.lax, v))(x), "fori_loop")


@pytest.mark.parametrize("source", [np.float16, np.float32, np.float64])
def test_floats_become_integers_saturating_as_jax(source):
    """Out of an integer type's range a float becomes its nearest bound, NaN 0, as JAX's,
    jitted and eager (StableHLO and NumPy leave those values undefined: IREE gave the
    minimum for NaN and 1e10 alike, NumPy wraps)."""
    x = np.array([np.nan, np.inf, -np.inf, 6e4, -6e4, 2.7, -2.7, 300.0, -1.0, 127.5], source)
    for target in (np.int8, np.uint8, np.int16, np.int32, np.uint32):
        want = np.asarray(jax.numpy.asarray(x).astype(target))
        np.testing.assert_array_equal(tz.jit(lambda v, t=target: v.astype(t))(x), want)
        np.testing.assert_array_equal(tz.asarray(x).astype(target), want)
    big = np.array([1e30, -1e30, np.nan], np.float32)
    np.testing.assert_array_equal(tz.jit(lambda v: v.astype(np.int64))(big),
                                  [np.iinfo(np.int64).max, np.iinfo(np.int64).min, 0])
    one = tz.asarray(x[5]).astype(np.int32)  # (0-d, eagerly)
    assert one.shape == () and int(one) == 2


def test_bfloat16_becomes_integers_saturating_as_jax():
    x = tz.asarray(np.array([1.5, 300.0, np.inf, -np.inf, np.nan, 1e30, -7.0]), dtype=tz.bfloat16)
    for target in (np.int8, np.uint8, np.int16, np.int32):
        want = np.asarray(jnp.asarray(np.asarray(x)).astype(target))
        np.testing.assert_array_equal(tz.jit(lambda v, t=target: v.astype(t))(x), want)
        np.testing.assert_array_equal(x.astype(target), want)
