"""Numerical robustness of the emitted adjoints: no overflow or NaN where the math allows."""

from __future__ import annotations

import numpy as np
import pytest

import tenzr as tz


def finite(*arrays) -> bool:
    return all(np.all(np.isfinite(a)) for a in arrays)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_saturates_without_nan(dtype):
    x = np.array([-1000.0, -100.0, -30.0, 0.0, 30.0, 100.0, 1000.0], dtype)
    value, g = tz.value_and_grad(lambda v: tz.nn.sigmoid(v).sum())(x)
    assert finite(value, g)
    e = np.exp(-np.abs(x.astype(np.float64)))
    np.testing.assert_allclose(g, e / (1 + e) ** 2, rtol=1e-5, atol=1e-30)  # σ(x)σ(-x), computed stably


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_logsumexp_and_log_softmax_at_huge_logits(dtype):
    x = np.array([[1000.0, 999.0, -1000.0], [-5000.0, -5001.0, -5002.0]], dtype)
    value, g = tz.value_and_grad(lambda v: tz.nn.logsumexp(v, axis=1).sum())(x)
    assert finite(value, g)
    z = x.astype(np.float64)
    m = z.max(axis=1, keepdims=True)
    softmax = np.exp(z - m) / np.exp(z - m).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(g, softmax, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(value, np.sum(m[:, 0] + np.log(np.exp(z - m).sum(axis=1))), rtol=1e-6)
    g2 = tz.grad(lambda v: (tz.nn.log_softmax(v) * np.array([1.0, 0.0, 0.0], dtype)).sum())(x)
    assert finite(g2)
    np.testing.assert_allclose(g2, np.array([1.0, 0.0, 0.0]) - softmax, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sqrt_and_rsqrt_at_large_values(dtype):
    x = np.array([1e-20, 1.0, 1e20, 1e30], dtype)
    gs = tz.grad(lambda v: tz.sqrt(v).sum())(x)
    gr = tz.grad(lambda v: tz.lax.rsqrt(v).sum())(x)
    assert finite(gs, gr)
    z = x.astype(np.float64)
    np.testing.assert_allclose(gs, 0.5 / np.sqrt(z), rtol=1e-5)
    want = -0.5 * z ** -1.5
    np.testing.assert_allclose(gr, want.astype(dtype), rtol=1e-5, atol=np.finfo(dtype).tiny)


def test_reduce_prod_with_zeros_is_exact():
    x = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.5, 2.0, 4.0]])
    g = tz.grad(lambda v: tz.prod(v, axis=1).sum())(x)
    np.testing.assert_array_equal(g, [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [8.0, 6.0, 3.0]])


def test_pow_at_base_zero():
    """As docs/dialect.md states for tenzr.pow (and as JAX computes)."""
    x = np.array([0.0, 0.0, 0.0])
    y = np.array([0.0, 2.0, 0.5])
    value, (gx, gy) = tz.value_and_grad(lambda a, b: (a ** b).sum(), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(value, 1.0)  # 0^0 = 1, 0^2 = 0, 0^0.5 = 0
    np.testing.assert_array_equal(gy, [0.0, 0.0, 0.0])  # log(0) is read as 0 where out is finite
    assert gx[0] == 0.0 and gx[1] == 0.0 and np.isinf(gx[2])  # d/dx x^0.5 at 0 really is +inf
    value, gy = tz.value_and_grad(lambda b: (np.zeros(1) ** b).sum())(np.array([-1.0]))
    assert np.isinf(value) and np.isnan(gy[0])  # 0^-1 = inf, and 0 · inf


def test_tanh_gradient_keeps_precision_near_saturation():
    x = np.array([5.0, 8.0, -8.0], np.float32)
    g = tz.grad(lambda v: tz.tanh(v).sum())(x)
    want = 1 / np.cosh(x.astype(np.float64)) ** 2
    np.testing.assert_allclose(g, want, rtol=2e-3)  # 1 - tanh² would lose everything in float32


def test_softmax_cross_entropy_with_confident_wrong_prediction():
    logits = np.array([[200.0, -200.0]], np.float32)
    labels = np.array([[0.0, 1.0]], np.float32)
    value, g = tz.value_and_grad(lambda z: -(tz.nn.log_softmax(z) * labels).sum())(logits)
    assert finite(value, g)
    np.testing.assert_allclose(value, 400.0, rtol=1e-6)
    np.testing.assert_allclose(g, [[1.0, -1.0]], atol=1e-6)


def test_float32_sum_of_a_million_values_is_accurate():
    """Long sums are split into about sqrt(n) blocks: a flat float32 reduce fused after
    elementwise work lost 2e-4 relative before."""
    x = np.random.default_rng(0).uniform(0, 1, 1_000_000).astype(np.float32)
    z = x.astype(np.float64)
    alone = tz.jit(lambda v: tz.sum(v))(x)
    fused = tz.jit(lambda v: tz.sum(tz.exp(v) * 2.0))(x)
    np.testing.assert_allclose(alone, z.sum(), rtol=1e-6)
    np.testing.assert_allclose(fused, (np.exp(z) * 2).sum(), rtol=1e-6)
    rows = tz.jit(lambda v: tz.sum(v.reshape(2, 500_000), axis=1))(x)
    np.testing.assert_allclose(rows, z.reshape(2, -1).sum(axis=1), rtol=1e-6)


def test_float64_log1p_expm1_and_tanh_keep_their_precision_near_zero():
    """IREE's float64 log1p and expm1 lost it (log1p(1e-10) 8e-8 off, log1p(1e-19) gave 0):
    within a few ulp of NumPy's, down to the smallest values, and at the ends."""
    x = np.array([1e-300, 1e-30, 1e-19, -1e-19, 1e-10, -1e-10, 1e-6, 1e-3, 0.3, -0.5, 2.0, 30.0, 700.0])
    for ours, theirs in [(tz.log1p, np.log1p), (tz.expm1, np.expm1), (tz.tanh, np.tanh)]:
        np.testing.assert_allclose(ours(x), theirs(x), rtol=4e-16, atol=0, err_msg=ours.__name__)
    ends = np.array([-1.0, 0.0, -0.0, 710.0, np.inf, -np.inf, np.nan, -50.0])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(tz.log1p(ends), np.log1p(ends))
        np.testing.assert_array_equal(tz.expm1(ends), np.expm1(ends))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_ndtr_stays_finite_and_accurate_in_both_tails(dtype):
    """log(ndtr(x)) underflowed to -inf below about -13 (float32) and -38 (float64), with NaN
    and inf gradients; against SciPy's log_ndtr, and its derivative pdf/cdf from SciPy's erfcx."""
    special = pytest.importorskip("scipy.special")
    x = np.array([-1e3, -40.0, -20.0, -10.0, -6.0, -2.2, -1.0, 0.0, 0.5, 3.0, 6.0, 9.0], dtype)
    exact = special.log_ndtr(x.astype(np.float64))
    ours, g = tz.scipy.special.log_ndtr(x), tz.grad(lambda v: tz.scipy.special.log_ndtr(v).sum())(x)
    tolerance = 5e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(ours, exact, rtol=tolerance, atol=0)
    with np.errstate(over="ignore"):  # pdf/cdf = 1/(sqrt(pi/2)·erfcx(-x/sqrt(2))), without cancellation
        slope = 1 / (np.sqrt(np.pi / 2) * special.erfcx(-x.astype(np.float64) / np.sqrt(2)))
    np.testing.assert_allclose(g, slope, rtol=10 * tolerance, atol=0)
    np.testing.assert_allclose(tz.scipy.stats.norm.logcdf(x), exact, rtol=tolerance, atol=0)
    # (ndtr and erfc themselves underflow where their type ends: the reference rounded to it)
    np.testing.assert_allclose(tz.scipy.special.ndtr(x), special.ndtr(x.astype(np.float64)).astype(dtype),
                               rtol=tolerance, atol=0)
    np.testing.assert_allclose(tz.scipy.special.erfc(x / 4), special.erfc(x.astype(np.float64) / 4).astype(dtype),
                               rtol=tolerance, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erfc_slope_where_its_continued_fraction_takes_over(dtype):
    """erfc switches to its continued fraction at 1.5: the slope there, and on either side, is
    -2/sqrt(pi)·exp(-x²) (a maximum(x, 1.5) clamp gave half of it at exactly 1.5)."""
    x = np.array([1.4999, 1.5, 1.5001, 3.0], dtype)
    slope = tz.grad(lambda v: tz.scipy.special.erfc(v).sum())(x)
    np.testing.assert_allclose(slope, -2 / np.sqrt(np.pi) * np.exp(-x.astype(np.float64) ** 2), rtol=1e-5)


def test_long_float32_contractions_keep_their_precision():
    """Against float64 NumPy: a dot product of 4M float32 values, a [1M, 4] X's X.T @ X, and
    their einsum, each contracted in blocks then summed (tenzr-split-reductions). IREE's one
    serial accumulation was off by 9e-5 relative at 1M values and 6e-3 at 16M."""
    rng = np.random.default_rng(5)
    v = (rng.random(4_000_000) + 0.5).astype(np.float32)
    x = rng.random((1_000_000, 4)).astype(np.float32)
    exact = np.dot(v.astype(np.float64), v.astype(np.float64))
    assert abs(float(tz.jit(lambda a: a @ a)(v)) / exact - 1) < 2e-6
    gram = x.astype(np.float64).T @ x.astype(np.float64)
    np.testing.assert_allclose(tz.jit(lambda a: a.T @ a)(x), gram, rtol=2e-6)
    np.testing.assert_allclose(tz.jit(lambda a: tz.einsum("ni,ni->i", a, a))(x), np.diag(gram), rtol=2e-6)
