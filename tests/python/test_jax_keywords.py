"""JAX's keyword arguments and dtypes that Tenzr takes as JAX does, against JAX itself:
`nn.one_hot(axis=)`, `scipy.linalg.solve(assume_a=, lower=)`, `random.permutation(
independent=)`, 16-bit floats in `tz.random`, `fft.fftfreq(dtype=)` and `lax.top_k(axis=)`."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tenzr as tz

jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.usefixtures("jax_without_x64")  # (Tenzr's defaults: 32-bit)

RNG = np.random.default_rng(0)
HALF_FLOATS = [np.float16, ml_dtypes.bfloat16]


def _same_bits(ours, theirs):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours.view(f"u{ours.dtype.itemsize}"), theirs.view(f"u{theirs.dtype.itemsize}"))


# --------------------------------------------------------------------------- nn.one_hot


@pytest.mark.parametrize("axis", [-1, 0, 1, 2, -2, -3])
def test_one_hot_axis_matches_jax(axis):
    labels = np.array([[0, 2, 5], [-1, 1, 3]], np.int32)  # (5, -1: out of range, all zeros)
    ours = tz.nn.one_hot(labels, 4, axis=axis, dtype=np.float16)
    _same_bits(ours, jax.nn.one_hot(labels, 4, axis=axis, dtype=jnp.float16))
    _same_bits(tz.jit(lambda x: tz.nn.one_hot(x, 4, axis=axis))(labels), jax.nn.one_hot(labels, 4, axis=axis))


def test_one_hot_bad_axis_is_a_tenzr_error():
    with pytest.raises(tz.TenzrError, match="out of bounds"):
        tz.nn.one_hot(np.arange(3), 4, axis=2)
    with pytest.raises(tz.TenzrError, match="named axes"):
        tz.nn.one_hot(np.arange(3), 4, axis="batch")


# --------------------------------------------------------------------------- scipy.linalg.solve


def _spd(n, *batch):
    m = RNG.normal(size=(*batch, n, n))
    return (m @ np.swapaxes(m, -1, -2) + n * np.eye(n)).astype(np.float32)


def _with_garbage(a, lower):
    """a with the triangle that `lower` says is not read overwritten."""
    a = a.copy()
    rows, cols = np.triu_indices(a.shape[-1], 1)
    if lower:
        a[..., rows, cols] = 99.0
    else:
        a[..., cols, rows] = -99.0
    return a


@pytest.mark.parametrize("assume_a", ["gen", "sym", "her", "pos"])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("garbage", [False, True])
def test_solve_assume_a_matches_jax(assume_a, lower, garbage):
    """JAX's "gen", "sym" and "her" read all of a (garbage included); "pos" only `lower`'s
    triangle."""
    a = _spd(4)
    a = _with_garbage(a, lower) if garbage else a
    for b in (RNG.normal(size=4).astype(np.float32), RNG.normal(size=(4, 3)).astype(np.float32)):
        ours = tz.scipy.linalg.solve(a, b, lower=lower, assume_a=assume_a)
        theirs = jax.scipy.linalg.solve(a, b, lower=lower, assume_a=assume_a)
        np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=2e-5)


def test_solve_pos_batched_matches_jax():
    a = _spd(3, 2)
    for b in (RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3, 4))):  # (batched vectors, batched matrices)
        b = b.astype(np.float32)
        np.testing.assert_allclose(tz.jit(lambda a, b: tz.scipy.linalg.solve(a, b, assume_a="pos"))(a, b),
                                   jax.scipy.linalg.solve(a, b, assume_a="pos"), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("assume_a", ["gen", "sym", "pos"])
@pytest.mark.parametrize("lower", [False, True])
def test_solve_gradients_match_jax(assume_a, lower):
    """"pos"'s derivative is JAX's `custom_linear_solve`'s: a's cotangent is over all of a,
    the unread triangle included."""
    a, b = _with_garbage(_spd(4), lower), RNG.normal(size=(4, 2)).astype(np.float32)

    def loss(lib):
        return lambda a, b: (lib.scipy.linalg.solve(a, b, lower=lower, assume_a=assume_a) ** 2).sum()

    ours, theirs = tz.grad(loss(tz), (0, 1))(a, b), jax.grad(loss(jax), (0, 1))(a, b)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-4, atol=1e-5)


def test_solve_pos_second_forward_derivative_matches_jax():
    a, b = _with_garbage(_spd(3), True), RNG.normal(size=3).astype(np.float32)

    def loss(lib):
        return lambda a: (lib.scipy.linalg.solve(a, b, lower=True, assume_a="pos") ** 2).sum()

    np.testing.assert_allclose(tz.jacfwd(tz.jacfwd(loss(tz)))(a), jax.jacfwd(jax.jacfwd(loss(jax)))(a),
                               rtol=1e-3, atol=1e-5)


def test_solve_bad_arguments_are_tenzr_errors():
    a, b = _spd(3), np.ones(3, np.float32)
    with pytest.raises(tz.TenzrError, match="assume_a must be one of"):
        tz.scipy.linalg.solve(a, b, assume_a="posdef")
    with pytest.raises(tz.TenzrError, match="a is"):
        tz.scipy.linalg.solve(a, np.ones(4, np.float32), assume_a="pos")
    with pytest.raises(tz.TenzrError, match="real"):
        tz.scipy.linalg.solve(a.astype(np.complex64), b, assume_a="pos")


# --------------------------------------------------------------------------- random.permutation


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("independent", [False, True])
def test_permutation_independent_is_jaxs_bit_for_bit(axis, independent):
    x = np.arange(2000, dtype=np.float32).reshape(40, 50)  # (2000 words: JAX's two rounds of sorting)
    _same_bits(tz.random.permutation(tz.random.PRNGKey(4), x, axis, independent),
               jax.random.permutation(jax.random.PRNGKey(4), x, axis, independent))
    small = x[:3, :7]
    ours = tz.jit(lambda k, x: tz.random.permutation(k, x, axis=axis, independent=independent))(
        tz.random.PRNGKey(9), small)
    _same_bits(ours, jax.random.permutation(jax.random.PRNGKey(9), small, axis=axis, independent=independent))


def test_permutation_of_an_int_ignores_independent_as_jax():
    _same_bits(tz.random.permutation(tz.random.PRNGKey(1), 9, independent=True),
               jax.random.permutation(jax.random.PRNGKey(1), 9, independent=True))


# --------------------------------------------------------------------------- 16-bit random floats


@pytest.mark.parametrize("dtype", HALF_FLOATS)
def test_half_float_bits_are_jaxs(dtype):
    """The [0, 1) numbers are JAX's bit for bit (bfloat16's from 8 random bits), and so is
    whatever rounds the same in both backends."""
    key, jkey = tz.random.PRNGKey(3), jax.random.PRNGKey(3)
    exact = ["uniform", "exponential", "laplace"] + (["normal"] if dtype == np.float16 else [])
    for name in exact:
        _same_bits(getattr(tz.random, name)(key, (3000,), dtype), getattr(jax.random, name)(jkey, (3000,), dtype))
    _same_bits(tz.jit(lambda k: tz.random.uniform(k, (5, 7), dtype))(key), jax.random.uniform(jkey, (5, 7), dtype))
    p = np.array(0.3, dtype)
    _same_bits(tz.random.bernoulli(key, p, (500,)), jax.random.bernoulli(jkey, p, (500,)))


@pytest.mark.parametrize("dtype", HALF_FLOATS)
def test_half_float_distributions_match_jax_to_rounding(dtype):
    """After the bits, 16-bit arithmetic rounds as each backend does (IREE carries float32
    between bfloat16 operations; XLA on CPU rounds at each for bfloat16), so these agree to
    within a few units of the type's rounding."""
    eps = float(ml_dtypes.finfo(dtype).eps)
    key, jkey = tz.random.PRNGKey(11), jax.random.PRNGKey(11)
    draws = {name: (getattr(tz.random, name)(key, (3000,), dtype), getattr(jax.random, name)(jkey, (3000,), dtype))
             for name in ("normal", "gumbel", "logistic", "cauchy")}
    draws["uniform"] = tz.random.uniform(key, (3000,), dtype, -2.0, 3.0), jax.random.uniform(jkey, (3000,), dtype,
                                                                                           -2.0, 3.0)
    draws["truncated_normal"] = (tz.random.truncated_normal(key, -1.0, 2.0, (3000,), dtype),
                                 jax.random.truncated_normal(jkey, -1.0, 2.0, (3000,), dtype))
    for name, (ours, theirs) in draws.items():
        ours, theirs = np.asarray(ours), np.asarray(theirs)
        assert ours.dtype == theirs.dtype == dtype, name
        ours, theirs = ours.astype(np.float64), theirs.astype(np.float64)
        assert np.all(np.abs(ours - theirs) <= 16 * eps * np.maximum(1, np.abs(theirs))), name


def test_half_floats_elsewhere_are_a_tenzr_error():
    with pytest.raises(tz.TenzrError, match="float32 or float64 here"):
        tz.random.gamma(tz.random.PRNGKey(0), 2.0, (3,), np.float16)
    with pytest.raises(tz.TenzrError, match="float16, bfloat16, float32 or float64"):
        tz.random.normal(tz.random.PRNGKey(0), (3,), np.int32)


# --------------------------------------------------------------------------- fft.fftfreq


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("dtype", [None, np.float16, ml_dtypes.bfloat16, np.float32, np.int32, np.complex64])
def test_fftfreq_dtype_matches_jax(name, dtype):
    for n in (0, 1, 4, 5, 9):
        for d in (1.0, 0.3, 2):
            ours = np.asarray(getattr(tz.fft, name)(n, d, dtype=dtype))
            theirs = np.asarray(getattr(jnp.fft, name)(n, d, dtype=dtype))
            assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
            wide = np.complex128 if ours.dtype.kind == "c" else np.float64  # (NumPy compares bfloat16's NaN unequal)
            np.testing.assert_array_equal(ours.astype(wide), theirs.astype(wide))


def test_fftfreq_of_a_traced_spacing_matches_jax():
    d = np.float32(0.7)
    np.testing.assert_array_equal(tz.jit(lambda d: tz.fft.fftfreq(6, d, dtype=np.float16))(d),
                                  jnp.fft.fftfreq(6, d, dtype=jnp.float16))
    # (IREE may divide by a reciprocal: the last bit can differ)
    np.testing.assert_allclose(tz.jit(lambda d: tz.fft.rfftfreq(7, d))(d), jnp.fft.rfftfreq(7, d), rtol=2e-7)


def test_fftfreq_bad_arguments_are_tenzr_errors():
    with pytest.raises(tz.TenzrError, match="n must be an int"):
        tz.fft.fftfreq([4])
    with pytest.raises(tz.TenzrError, match="d must be a single value"):
        tz.fft.rfftfreq(4, [1.0, 2.0])


# --------------------------------------------------------------------------- lax.top_k


@pytest.mark.parametrize("axis", [-1, 0, 1, -3])
def test_top_k_axis_matches_jax(axis):
    x = RNG.normal(size=(3, 5, 4)).astype(np.float32)
    x[0, 0, 0] = x[0, 1, 0]  # (a tie: the lower index first)
    ours, theirs = tz.lax.top_k(x, 2, axis=axis), jax.lax.top_k(x, 2, axis=axis)
    for o, t in zip(ours, theirs, strict=True):
        _same_bits(o, t)
    weights = RNG.normal(size=theirs[0].shape).astype(np.float32)

    def loss(lib):
        return lambda x: (lib.lax.top_k(x, 2, axis=axis)[0] * weights).sum()

    np.testing.assert_array_equal(tz.grad(loss(tz))(x), jax.grad(loss(jax))(x))
    _same_bits(tz.lax.top_k(np.arange(12, dtype=np.int32).reshape(3, 4), 3, axis=0)[1],
               jax.lax.top_k(np.arange(12, dtype=np.int32).reshape(3, 4), 3, axis=0)[1])


def test_top_k_bad_arguments_are_tenzr_errors():
    with pytest.raises(tz.TenzrError, match="out of bounds"):
        tz.lax.top_k(np.ones((2, 3)), 1, axis=2)
    with pytest.raises(tz.TenzrError, match="outside"):
        tz.lax.top_k(np.ones((2, 3)), 3, axis=0)
