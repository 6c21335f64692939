"""JAX's `jax.nn.dot_product_attention` and the smaller `jax.nn` / `jax.lax` names (scatter
with dimension numbers, the special functions, ...), checked against JAX itself: many
functions per compiled program, values and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import tenzr as tz

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

RNG = np.random.default_rng(0)


def numpy_of(m):
    """The NumPy namespace of `m` (tz itself, or jax.numpy)."""
    return m if m is tz else jnp


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


B, T, S, N, K, H = 2, 5, 6, 4, 2, 3
Q, KEY, VALUE = f32(B, T, N, H), f32(B, S, K, H), f32(B, S, K, H)
BIAS, MASK = f32(1, N, T, S), RNG.random((B, 1, T, S)) > 0.3
Q_LENGTHS, KV_LENGTHS = np.array([3, 5], np.int32), np.array([6, 2], np.int32)


def attention(m, q, k, v, bias, mask):
    nn = m.nn
    out, residual = nn.dot_product_attention(q[0], k[0], v[0], local_window_size=1, return_residual=True)
    return {
        "plain": nn.dot_product_attention(q, k, v),
        "mha": nn.dot_product_attention(q[:, :, :2], k, v, bias[:, :2], is_causal=True),
        "everything": nn.dot_product_attention(q, k, v, bias, mask, scale=0.7, is_causal=True,
                                               query_seq_lengths=Q_LENGTHS, key_value_seq_lengths=KV_LENGTHS,
                                               local_window_size=(2, 1)),
        "window_mqa": nn.dot_product_attention(q, k[:, :, :1], v[:, :, :1], local_window_size=(1, 2),
                                               implementation="xla"),
        "unbatched": out, "residual": residual,
    }


def attention_loss(m, q, k, v, bias, mask):
    return sum((numpy_of(m).sin(o) * (i + 1)).sum() for i, o in enumerate(attention(m, q, k, v, bias, mask).values()))


def test_dot_product_attention_matches_jax():
    args = (Q, KEY, VALUE, BIAS, MASK)
    got = tz.jit(lambda *a: attention(tz, *a))(*args)
    want = jax.jit(lambda *a: attention(jax, *a))(*args)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=2e-5, atol=2e-6, err_msg=name)


def test_dot_product_attention_gradients_match_jax():
    args = (Q, KEY, VALUE, BIAS, MASK)
    got = tz.jit(tz.grad(lambda *a: attention_loss(tz, *a), argnums=(0, 1, 2, 3)))(*args)
    want = jax.jit(jax.grad(lambda *a: attention_loss(jax, *a), argnums=(0, 1, 2, 3)))(*args)
    for name, g, w in zip("qkvb", got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=2e-5, err_msg=name)


X = np.linspace(-2.3, 2.3, 12).astype(np.float32).reshape(3, 4)
WHERE = np.array([[True, False, True, True]] * 3)


def activations(m, x):
    nn = m.nn
    return {"identity": nn.identity(x), "tanh": nn.tanh(x), "sparse_sigmoid": nn.sparse_sigmoid(x),
            "log1mexp": nn.log1mexp(numpy_of(m).abs(x) + 0.1),
            "log1mexp_small": nn.log1mexp(numpy_of(m).abs(x) * 0.1 + 1e-3),
            "logmeanexp": nn.logmeanexp(x * 30), "logmeanexp_axis": nn.logmeanexp(x, axis=1, keepdims=True),
            "logmeanexp_where": nn.logmeanexp(x, axis=1, where=WHERE)}


def test_activations_match_jax_with_gradients():
    def loss(m):
        return lambda x: sum((o * (i + 1)).sum() for i, o in enumerate(activations(m, x).values()))

    got = tz.jit(lambda x: (activations(tz, x), tz.grad(loss(tz))(x)))(X)
    want = jax.jit(lambda x: (activations(jax, x), jax.grad(loss(jax))(x)))(X)
    for name in want[0]:
        np.testing.assert_allclose(got[0][name], want[0][name], rtol=2e-6, atol=1e-6, err_msg=name)
    np.testing.assert_allclose(got[1], want[1], rtol=2e-5, atol=1e-5)


NEAR_ZERO = np.array([0.0, 1e-30, 1e-9, 1e-6, 0.3, 0.7, 5.0, 40.0])


def test_log1mexp_gradient_near_zero_matches_jax():
    """1 / expm1(x): inf at 0 and finite below float32's eps (not NaN from the other branch)."""
    def both(m):
        return lambda *xs: [(m.nn.log1mexp(x), m.vmap(m.grad(m.nn.log1mexp))(x)) for x in xs]

    args = (NEAR_ZERO.astype(np.float32), NEAR_ZERO)
    for got, want in zip(tz.jit(both(tz))(*args), jax.jit(both(jax))(*args), strict=True):
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=0)


OPERAND, UPDATES = f32(5, 4), f32(3, 4)
ROWS = np.array([[0], [3], [7]], np.int32)  # (7: out of range, dropped)
POINTS, POINT_UPDATES = np.array([[0, 1], [4, 3], [0, 1]], np.int32), f32(3)
CORNERS, WINDOWS = np.array([[1, 1], [3, 2], [4, 0]], np.int32), f32(3, 2, 2)  # ([4, 0]: does not fit)
BATCHED, BATCH_UPDATES = np.array([[1], [2], [0], [3], [1]], np.int32), f32(5)


def scatters(m, x, u, pu, w, bu, multiply=True):
    lax = m.lax
    dn = lax.ScatterDimensionNumbers
    rows, points = dn((1,), (0,), (0,)), dn((), (0, 1), (0, 1))
    return {
        "add": lax.scatter_add(x, ROWS, u, rows), "sub": lax.scatter_sub(x, ROWS, u, rows),
        "set": lax.scatter(x, ROWS[:2], u[:2], rows, unique_indices=True),
        **({"mul": lax.scatter_mul(x, POINTS, pu, points)} if multiply else {}),
        "min": lax.scatter_min(x, POINTS, pu, points),
        "max": lax.scatter_max(x, POINTS, pu, points),
        "windows": lax.scatter_add(x, CORNERS, w, dn((1, 2), (), (0, 1))),
        "windows_clip": lax.scatter_add(x, CORNERS, w, dn((1, 2), (), (0, 1)), mode="clip"),
        "batched": lax.scatter_add(x, BATCHED, bu, dn((), (1,), (1,), (0,), (0,))),
        "stack": lax.stack([x, x * 2], 1), "tile": lax.tile(x, (2, 1)), "empty": lax.empty((2, 3), np.float32),
        "to_rank": lax.broadcast_to_rank(pu, 3),
        "index_take": lax.index_take(x, (numpy_of(m).array([0, -1, 2]), np.array([1, 5, 2])), (0, 1)),
        "xor": lax.reduce_xor((x * 100).astype(np.int32), (0,)), "parity": lax.reduce_xor(x > 0, (1,)),
        "reduce_xor": lax.reduce((x * 100).astype(np.int32), np.int32(5), lax.bitwise_xor, (0, 1)),
        "mulhi": lax.mulhi((x * 1e5).astype(np.int32), (x * 3e4 + 7).astype(np.int32)),
        "mulhi_u": lax.mulhi((abs(x) * 1e9).astype(np.uint32), (abs(x) * 3e9).astype(np.uint32)),
    }


def scatter_loss(m, x, u, pu, w, bu):
    lax = m.lax
    rows = lax.ScatterDimensionNumbers((1,), (0,), (0,))
    return ((lax.scatter_mul(x, ROWS, u, rows, unique_indices=True) ** 2).sum()
            + (lax.scatter(x, ROWS, u, rows, unique_indices=True) ** 3).sum()
            + sum((o ** 2).sum() * (i + 1) for i, o in enumerate(scatters(m, x, u, pu, w, bu, False).values())
                  if o.dtype == np.float32))  # (without "mul": JAX differentiates only unique multiplies)


def test_scatter_family_and_array_helpers_match_jax():
    args = (OPERAND, UPDATES, POINT_UPDATES, WINDOWS, BATCH_UPDATES)
    got = tz.jit(lambda *a: (scatters(tz, *a), tz.grad(lambda *b: scatter_loss(tz, *b), argnums=(0, 1, 2, 3, 4))(*a)))(
        *args)
    want = jax.jit(lambda *a: (scatters(jax, *a), jax.grad(lambda *b: scatter_loss(jax, *b), argnums=(0, 1, 2, 3, 4))(
        *a)))(*args)
    for name in want[0]:
        assert got[0][name].dtype == want[0][name].dtype, name
        np.testing.assert_allclose(got[0][name], want[0][name], rtol=1e-6, err_msg=name)
    for g, w in zip(got[1], want[1], strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


A = np.array([0.5, 1.0, 2.5, 4.0, 7.0, 0.3])
XS = np.array([0.2, 1.5, 2.0, 6.0, 3.0, 0.01])
BESSEL = np.array([0.0, 1e-3, -0.5, 1.0, -3.0, 7.9, 8.0, 8.1, -12.0, 50.0, 700.0])
# (q < 0: an integer x sums from q, a non-integer x is NaN; integer q <= 0 is a pole, inf for even x, NaN for odd)
ZETA_X = np.array([2.0, 2.0, 1.0, 0.5, 1.001, 30.0, 4.0, 1.5, 2.0, 2.0, 3.0, 4.0, 2.0, 2.5, 3.0, 2.0, 3.0, 1.0])
ZETA_Q = np.array([0.3, -2.0, 1.0, 1.0, 2.0, 0.7, 100.0, 1e-3, 5.0, -1.5, -0.5, -5.5, -7.5, -1.5, 0.0, 0.0, -3.0,
                   -1.5])
ORDER = np.array([0.0, 1.0, 2.0, 1.5, -1.0, 3.0, 4.0, 1.0, 1.0, 2.0, 3.0, 0.0])
AT = np.array([0.5, 0.5, 2.0, 1.0, 1.0, 0.25, 7.0, 30.0, -1.5, -0.5, -2.3, -1.5])
I64, J64 = RNG.integers(-2**62, 2**62, 6), RNG.integers(-2**62, 2**62, 6)


def specials(m, a, x, bessel, zx, zq, order, at, i, j):
    lax = m.lax
    return {"igamma": lax.igamma(a, x), "igammac": lax.igammac(a, x), "betainc": lax.betainc(a, a + 1, x / 7),
            "igamma_grad_a": lax.igamma_grad_a(a, x), "random_gamma_grad": lax.random_gamma_grad(a, x),
            "i0e": lax.bessel_i0e(bessel), "i1e": lax.bessel_i1e(bessel),
            "i0e_f32": lax.bessel_i0e(bessel.astype(np.float32)), "i1e_f32": lax.bessel_i1e(bessel.astype(np.float32)),
            "zeta": lax.zeta(zx, zq), "polygamma": lax.polygamma(order, at), "mulhi_64": lax.mulhi(i, j),
            "mulhi_u64": lax.mulhi(i.astype(np.uint64), j.astype(np.uint64))}


def test_special_functions_match_jax_in_float64():
    args = (A, XS, BESSEL, ZETA_X, ZETA_Q, ORDER, AT, I64, J64)
    got = tz.jit(lambda *v: specials(tz, *v))(*args)
    want = jax.jit(lambda *v: specials(jax, *v))(*args)
    for name in want:
        assert got[name].dtype == want[name].dtype, name
        tol = 1e-6 if name.endswith("f32") else 1e-13  # (XLA's float32 i1e is 8e-7 off at 8; tenzr's 2e-8)
        np.testing.assert_allclose(got[name], want[name], rtol=tol, atol=0, err_msg=name)


def test_bessel_and_igamma_gradients_match_jax():
    def loss(m):
        return lambda x, a, s: ((m.lax.bessel_i0e(x) * m.lax.bessel_i1e(x)).sum() + m.lax.igamma(a, s).sum()
                                + m.lax.igammac(a, s * 2).sum())

    args = (BESSEL[1:], A, XS)
    got = tz.jit(tz.grad(loss(tz), argnums=(0, 1, 2)))(*args)
    want = jax.jit(jax.grad(loss(jax), argnums=(0, 1, 2)))(*args)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-15)


@pytest.mark.parametrize("call, message", [
    (lambda: tz.nn.dot_product_attention(Q, KEY, VALUE, implementation="cudnn"), "cudnn"),
    (lambda: tz.nn.dot_product_attention(Q, KEY, VALUE, mask=BIAS), "mask must be boolean"),
    (lambda: tz.nn.dot_product_attention(Q[:, :, :3], KEY, VALUE), "multiple of the key/value heads"),
    (lambda: tz.nn.dot_product_attention(Q, KEY, VALUE[:, :2]), "value must have key's shape"),
    (lambda: tz.nn.dot_product_attention(Q, KEY, VALUE, query_seq_lengths=np.array([1, 2, 3], np.int32)),
     "query_seq_lengths must be integers of shape"),
    (lambda: tz.lax.scatter_add(OPERAND, ROWS, UPDATES, tz.lax.ScatterDimensionNumbers((0,), (0,), (0,))),
     "do not fit"),
    (lambda: tz.lax.scatter_add(OPERAND, ROWS, UPDATES, tz.lax.ScatterDimensionNumbers((1,), (0,), (0,)),
                                mode="wrap"), "mode must be"),
    (lambda: tz.lax.mulhi(np.int32(3), np.int64(4)), "integer arrays of one dtype"),
    (lambda: tz.lax.reduce_xor(X, (0,)), "boolean or integer"),
    (lambda: tz.lax.reduce_xor(X > 0, (0, -2)), r"axes \(0, -2\) name a dim more than once"),
    (lambda: tz.lax.scatter(OPERAND, ROWS[:2], UPDATES[:2]), "missing 1 required positional argument"),
    (lambda: tz.lax.scatter(OPERAND, np.array([0, 2]), UPDATES[:2], 0), "must be a tz.lax.ScatterDimensionNumbers"),
    (lambda: tz.lax.scatter(OPERAND, np.array([0, 2]), UPDATES[:2], axis=0, mode="add"), "unexpected keyword"),
])
def test_bad_arguments_give_clear_errors(call, message):
    with pytest.raises(tz.TenzrError, match=message):
        tz.jit(call)()
