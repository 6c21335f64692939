"""`tz` functions called outside any trace (eager calls), JAX's type promotion with weak
types, and `tz.asarray` of lists holding traced arrays. Values are checked against NumPy;
gradients against central finite differences of NumPy code."""

from __future__ import annotations

import numpy as np
import pytest

import tenzr as tz
from tenzr.cache import STATS

X = np.arange(6, dtype=np.float32).reshape(2, 3) / 4


def test_eager_calls_match_numpy_and_return_numpy_arrays():
    out = tz.exp(X)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_allclose(out, np.exp(X), rtol=1e-6)
    np.testing.assert_allclose(tz.sum(X, axis=0), X.sum(axis=0), rtol=1e-6)
    np.testing.assert_array_equal(tz.zeros((2, 2)), np.zeros((2, 2), np.float32))
    np.testing.assert_array_equal(tz.tril(np.ones((3, 3))), np.tril(np.ones((3, 3))))
    assert int(tz.prod(np.array([3, 4]))) == 12
    parts = tz.split(X, 3, axis=1)
    assert len(parts) == 3 and all(isinstance(p, np.ndarray) for p in parts)
    np.testing.assert_array_equal(parts[1], X[:, 1:2])
    np.testing.assert_allclose(tz.nn.softmax(X), np.exp(X) / np.exp(X).sum(-1, keepdims=True), rtol=1e-6)


def test_eager_results_that_do_not_depend_on_values_come_back_as_returned():
    assert tz.shape(X) == (2, 3) and type(tz.shape(X)) is tuple
    assert tz.ndim(X) == 2 and type(tz.ndim(X)) is int
    assert tz.size(X, 1) == 3
    assert tz.asarray(1.0).dtype == np.float32 and tz.asarray([1, 2]).dtype == np.int32  # (as jnp.asarray)


def test_eager_calls_compile_once_per_signature():
    y = np.linspace(0.0, 1.0, 7)
    first = tz.cosh(y)
    compiles = STATS.compiles + STATS.disk_hits
    again = tz.cosh(y + 1.0)
    assert STATS.compiles + STATS.disk_hits == compiles  # same shape and dtype: the program is reused
    np.testing.assert_allclose(first, np.cosh(y), rtol=1e-12)
    np.testing.assert_allclose(again, np.cosh(y + 1.0), rtol=1e-12)
    tz.cosh(y.astype(np.float32))
    assert STATS.compiles + STATS.disk_hits == compiles + 1  # a new dtype is a new program


def test_eager_errors_are_tenzr_errors_at_the_call():
    with pytest.raises(tz.TenzrError, match="reshape"):
        tz.reshape(X, (4, 4))
    with pytest.raises(tz.TenzrError, match="cannot convert"):
        tz.asarray(object())


def test_weak_scalars_keep_the_arrays_type():
    x32 = X
    f = tz.jit(lambda x: x * tz.sqrt(2 / np.pi) + np.float64(1.0) - 2)
    out = f(x32)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, x32 * np.sqrt(2 / np.pi) + 1.0 - 2, rtol=1e-6)
    assert tz.jit(lambda x: x + tz.exp(np.float64(1.0)))(x32).dtype == np.float32
    # scalars alone: Python floats are float32, NumPy float64 scalars float64
    assert tz.jit(lambda: tz.sqrt(2.0))().dtype == np.float32
    assert tz.jit(lambda: tz.sqrt(np.float64(2.0)))().dtype == np.float64


@pytest.mark.parametrize(("a", "b", "expected"), [
    (np.float32, np.int32, np.float32),
    (np.int32, np.float64, np.float64),
    (np.float32, np.float64, np.float64),
    (np.int32, np.int64, np.int64),
    (np.bool_, np.int32, np.int32),
    (np.float16, "bfloat16", np.float32),
    ("bfloat16", np.float16, np.float32),
])
def test_arrays_promote_by_jax_rule(a, b, expected):
    import ml_dtypes

    a, b = (ml_dtypes.bfloat16 if t == "bfloat16" else t for t in (a, b))
    out = tz.jit(lambda x, y: x * y)(np.ones(2, a), np.ones(2, b))
    assert out.dtype == expected


def test_integer_array_and_float_scalar_give_float32():
    out = tz.jit(lambda i: i * 2.5)(np.arange(3, dtype=np.int32))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, np.arange(3) * 2.5)


def test_asarray_of_lists_of_traced_arrays_and_its_gradient():
    def f(a, b):
        m = tz.asarray([[a, b], [b * a, 1.0]])
        return tz.sum(m * m * np.array([[1.0, 2.0], [3.0, 4.0]]))

    def ref(a, b):
        m = np.array([[a, b], [b * a, 1.0]])
        return np.sum(m * m * np.array([[1.0, 2.0], [3.0, 4.0]]))

    a, b, h = 0.7, -1.3, 1e-6
    ga, gb = tz.grad(f, argnums=(0, 1))(np.float64(a), np.float64(b))
    np.testing.assert_allclose(ga, (ref(a + h, b) - ref(a - h, b)) / (2 * h), rtol=1e-6)
    np.testing.assert_allclose(gb, (ref(a, b + h) - ref(a, b - h)) / (2 * h), rtol=1e-6)
    assert tz.jit(lambda a: tz.array([a, a]))(np.float32(2.0)).shape == (2,)


def test_asarray_outside_a_trace_can_be_indexed_by_traced_indices():
    """Set-up data made with tz.asarray is a NumPy array that a later trace may index with
    traced indices (as JAX's arrays may); the gradient of sum(table[i] * x) in x is table[i]."""
    table = tz.asarray(np.arange(10.0) ** 2)
    assert isinstance(table, np.ndarray) and repr(table[:2]) == "array([0., 1.])"
    i, x = np.array([1, 3, 3]), np.array([1.0, 2.0, 0.5])
    np.testing.assert_array_equal(tz.grad(lambda i, x: (table[i] * x).sum(), 1)(i, x), [1.0, 9.0, 9.0])
    np.testing.assert_array_equal(tz.jit(lambda k: table[k, None] * 2)(np.int32(4)), [32.0])


def test_results_outside_a_trace_take_jaxs_at_updates_and_block_until_ready():
    x = tz.zeros(5)
    y = x.at[2].set(1.0).at[np.array([0, 7, 2])].add(3.0)  # (7 is out of range: dropped, as in JAX)
    np.testing.assert_array_equal(y, [3.0, 0.0, 4.0, 0.0, 0.0])
    assert y.dtype == np.float32
    w = y.at[1:4].multiply(2.0).at[y > 3].apply(lambda v: -v)  # (a NumPy mask: part of the program)
    np.testing.assert_array_equal(w, [3.0, 0.0, -8.0, 0.0, 0.0])
    np.testing.assert_array_equal(w.at[np.array([0, 0])].power(2.0), [81.0, 0.0, -8.0, 0.0, 0.0])
    assert np.isnan(w.at[np.array([9])].get(mode="fill")).all()
    compiles = STATS.compiles + STATS.disk_hits
    for i in range(3):  # new index values reuse the program
        w = w.at[np.array([i])].add(1.0)
    assert STATS.compiles + STATS.disk_hits <= compiles + 1
    np.testing.assert_array_equal(w, [4.0, 1.0, -7.0, 0.0, 0.0])
    out = tz.jit(lambda a: a * 2)(X).block_until_ready()
    np.testing.assert_array_equal(out.at[0, 1].set(-1.0), np.where(np.arange(6).reshape(2, 3) == 1, -1.0, X * 2))
    assert tz.block_until_ready({"a": out})["a"] is out
    total = out.sum()  # (reductions give NumPy's scalars, as on any ndarray)
    assert isinstance(total, np.float32) and {total: 1}
    with pytest.raises(AttributeError, match="has no method 'bogus'"):
        out.at[0].bogus(1.0)


@pytest.mark.parametrize("x64", [False, True])
def test_arrays_of_python_number_lists_take_jaxs_default_types(x64):
    """As `jnp.array`: a list of Python numbers is float32 or int32 (float64 and int64 with
    x64), not NumPy's float64 and int64; inside a jitted function it no longer widens
    float32 work. NumPy scalars and arrays in a list keep NumPy's types."""
    tz.config.update("jax_enable_x64", x64)
    try:
        f, i = ("float64", "int64") if x64 else ("float32", "int32")
        assert tz.array([1.0, 2.0]).dtype == f and tz.asarray([[1, 2]]).dtype == i
        assert tz.array([1, 2.5]).dtype == f and tz.array([]).dtype == f and tz.array([True]).dtype == bool
        assert tz.array([np.float64(1.0)]).dtype == np.float64
        assert tz.jit(lambda c: tz.array([1.0, 2.0, 3.0]) * c)(np.ones(3, np.float32)).dtype == f
    finally:
        tz.config.update("jax_enable_x64", False)


def test_eager_arrays_are_never_changed_behind_other_names():
    """JAX's arrays are immutable: `x += 1` binds x to a new array (y, which held x, keeps
    its values), `x.sort()` returns a sorted copy, and `tz.asarray` of a NumPy array copies
    it (the caller's later changes do not reach it). NumPy's ndarray did all three in place."""
    x = tz.zeros(3)
    y = x
    x += 1.0
    x *= 3.0
    np.testing.assert_array_equal(y, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(x, [3.0, 3.0, 3.0])
    m = tz.eye(2)
    m @= np.full((2, 2), 2.0, np.float32)
    np.testing.assert_array_equal(m, np.full((2, 2), 2.0))
    s = tz.array([3.0, 1.0, 2.0, 1.0])
    np.testing.assert_array_equal(s.sort(), [1.0, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(s, [3.0, 1.0, 2.0, 1.0])
    np.testing.assert_array_equal(s.sort(descending=True), [3.0, 2.0, 1.0, 1.0])
    np.testing.assert_array_equal(tz.array([[3, 0], [1, 2]]).sort(axis=None), [0, 1, 2, 3])
    np.testing.assert_array_equal(tz.array([[3, 0], [1, 2]]).sort(axis=0), [[1, 0], [3, 2]])
    source = np.ones(3, np.float32)
    copied = tz.asarray(source)
    source[0] = 9.0
    np.testing.assert_array_equal(copied, [1.0, 1.0, 1.0])


def test_results_meeting_numpy_arrays_promote_as_jax(jax_without_x64):
    """A result (`ConcreteArray`) meeting a NumPy array promotes as JAX's arrays do: both
    strong, the NumPy array's 64-bit type taken as 32-bit without x64 (a float32 result
    times a float64 array stays float32; it was float64, NumPy's rule), a bool meeting a
    Python int the default int (it was int64)."""
    jnp = pytest.importorskip("jax.numpy")
    cases = [(np.float16, lambda a: a * np.ones(2, np.float32)), (np.uint8, lambda a: a + np.array([1, 2], np.int8)),
             (np.int8, lambda a: a * np.array([1, 2])), (np.bool_, lambda a: a + np.array([1, 2], np.uint8)),
             (np.float32, lambda a: a * np.ones(2)), (np.bool_, lambda a: a * 3),
             (np.int32, lambda a: a + np.array([1, 2])), (np.bool_, lambda a: a / 2), (np.int32, lambda a: a + 5)]
    for dtype, fn in cases:
        start = np.array([1, 0], dtype)
        ours, theirs = fn(tz.asarray(start)), fn(jnp.asarray(start))
        assert ours.dtype == theirs.dtype, (dtype, ours.dtype, theirs.dtype)
        np.testing.assert_array_equal(ours, theirs)
    assert (tz.ones(2, tz.float64) * np.ones(2, np.float32)).dtype == np.float64
