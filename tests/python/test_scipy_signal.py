"""`tz.scipy.signal` (convolutions) and `tz.scipy.integrate` / `tz.trapezoid`. Values are
checked against SciPy and JAX (float64, its CPU backend), gradients against JAX's."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal as ss

import tenzr as tz

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy
js = pytest.importorskip("jax.scipy.signal")
jax_integrate = pytest.importorskip("jax.scipy.integrate")

RNG = np.random.default_rng(7)
# each function in each mode, each with the larger operand first and second, equal shapes, 1-d and 3-d
CASES = [("convolve", "full", (6,), (3,)), ("convolve", "same", (3,), (5,)),
         ("convolve", "valid", (3, 4, 4), (2, 1, 3)),
         ("correlate", "full", (3,), (5,)), ("correlate", "same", (6,), (3,)), ("correlate", "valid", (2, 2), (4, 3)),
         ("convolve2d", "full", (2, 2), (4, 3)), ("convolve2d", "same", (4, 5), (2, 3)),
         ("convolve2d", "valid", (3, 3), (3, 3)), ("correlate2d", "full", (2, 2), (4, 3)),
         ("correlate2d", "same", (4, 5), (2, 3)), ("correlate2d", "valid", (2, 2), (4, 3)),
         ("correlate2d", "valid", (4, 5), (2, 3)), ("correlate2d", "full", (3, 3), (3, 3))]


@pytest.mark.parametrize("f, mode, s1, s2", CASES, ids=[f"{f}-{m}-{a}-{b}" for f, m, a, b in CASES])
def test_convolutions_match_scipy_and_their_gradients_match_jax(f, mode, s1, s2):
    a, b = RNG.normal(size=s1), RNG.normal(size=s2)
    ours, theirs = getattr(tz.scipy.signal, f), getattr(js, f)
    got = np.asarray(ours(a, b, mode))
    want = getattr(ss, f)(a, b, mode)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    w = RNG.normal(size=want.shape)  # a random cotangent, so every output entry counts
    grads = tz.grad(lambda x, y: (ours(x, y, mode) * w).sum(), argnums=(0, 1))(a, b)
    jax_grads = jax.jit(jax.grad(lambda x, y: (theirs(x, y, mode) * w).sum(), argnums=(0, 1)))(a, b)
    for g, jg in zip(grads, jax_grads, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(jg), rtol=1e-12, atol=1e-12)


def _autograd_convolve(a, b, axes, dot_axes, mode):
    """autograd's generalized convolve, from SciPy: one N-d convolution per kept index of
    each operand, summed over the contracted index."""
    conv_a, conv_b = axes
    (dot_a, dot_b) = dot_axes
    kept_a = [i for i in range(a.ndim) if i not in [*conv_a, *dot_a]]
    kept_b = [i for i in range(b.ndim) if i not in [*conv_b, *dot_b]]
    a_ = np.transpose(a, kept_a + list(dot_a) + list(conv_a))
    b_ = np.transpose(b, kept_b + list(dot_b) + list(conv_b))
    ka, kb, nd = a_.shape[:len(kept_a)], b_.shape[:len(kept_b)], a_.shape[len(kept_a):len(kept_a) + len(dot_a)]
    out = None
    for ia in np.ndindex(*ka):
        for ib in np.ndindex(*kb):
            value = sum(ss.convolve(a_[ia][d], b_[ib][d], mode) for d in np.ndindex(*nd))
            if out is None:
                out = np.zeros((*ka, *kb, *value.shape))
            out[ia + ib] = value
    return out


# autograd's own generalized cases (its test_scipy.py), and a LeNet layer
AXES_CASES = [((4, 3), (3, 2), ([0], [0]), ([], []), "full"), ((4, 3), (3, 2), ([1], [1]), ([], []), "valid"),
              ((4, 3), (3, 2), ([0], [1]), ([], []), "valid"), ((4, 3), (3, 2), ([1], [0]), ([], []), "full"),
              ((4, 3), (3, 2), ([1, 0], [1, 0]), ([], []), "valid"),
              ((3, 3, 2), (3, 2, 3), ([1], [1]), ([0], [2]), "full"),
              ((3, 3, 2), (3, 2, 3), ([1], [1]), ([0], [0]), "valid"),
              ((2, 1, 8, 7), (1, 3, 3, 2), ([2, 3], [2, 3]), ([1], [0]), "valid")]


@pytest.mark.parametrize("s1, s2, axes, dot_axes, mode", AXES_CASES, ids=[str(c) for c in AXES_CASES])
def test_autograds_generalized_convolve(s1, s2, axes, dot_axes, mode):
    a, b = RNG.normal(size=s1), RNG.normal(size=s2)
    want = _autograd_convolve(a, b, axes, dot_axes, mode)
    got = np.asarray(tz.scipy.signal.convolve(a, b, axes=axes, dot_axes=dot_axes, mode=mode))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    w = RNG.normal(size=want.shape)
    grads = tz.grad(lambda x, y: (tz.scipy.signal.convolve(x, y, axes=axes, dot_axes=dot_axes, mode=mode) * w).sum(),
                    argnums=(0, 1))(a, b)
    for k, (g, x) in enumerate(zip(grads, (a, b), strict=True)):  # central differences of the SciPy form (linear)
        fd = np.zeros_like(x)
        for i in np.ndindex(*x.shape):
            step = np.zeros_like(x)
            step[i] = 1e-3
            args = [a, b]
            args[k] = x + step
            up = (_autograd_convolve(*args, axes, dot_axes, mode) * w).sum()
            args[k] = x - step
            fd[i] = (up - (_autograd_convolve(*args, axes, dot_axes, mode) * w).sum()) / 2e-3
        np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("f", ["convolve", "correlate", "convolve2d", "correlate2d"])
def test_complex_convolutions_match_scipy(f):
    a = RNG.normal(size=(3, 4)) + 1j * RNG.normal(size=(3, 4))
    b = RNG.normal(size=(2, 3)) + 1j * RNG.normal(size=(2, 3))
    for mode in ("full", "same", "valid"):
        np.testing.assert_allclose(np.asarray(getattr(tz.scipy.signal, f)(a, b, mode)), getattr(ss, f)(a, b, mode),
                                   rtol=1e-12, atol=1e-12)


def test_convolution_inside_jit_keeps_float32():
    a, b = RNG.normal(size=(8,)).astype(np.float32), RNG.normal(size=(3,)).astype(np.float32)
    out = tz.jit(lambda x, y: tz.scipy.signal.convolve(x, y, mode="same"))(a, b)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), ss.convolve(a, b, "same"), rtol=1e-5, atol=1e-6)


def test_bad_convolutions_are_clear_errors():
    a = np.ones((3, 4))
    with pytest.raises(tz.TenzrError, match="mode must be one of 'full', 'same', 'valid', got 'circular'"):
        tz.scipy.signal.convolve(a, a, "circular")
    with pytest.raises(tz.TenzrError, match=r"same number of dimensions, at least 1, got shapes \(3, 4\) and \(3,\)"):
        tz.scipy.signal.convolve(a, np.ones(3))
    with pytest.raises(tz.TenzrError, match="one input must be smaller than the other in every dimension"):
        tz.scipy.signal.convolve(a, np.ones((4, 3)))
    with pytest.raises(tz.TenzrError, match="zero-size arrays are not supported"):
        tz.scipy.signal.correlate(a, np.ones((0, 2)))
    with pytest.raises(tz.TenzrError, match="method must be 'auto', 'direct' or 'fft'"):
        tz.scipy.signal.convolve(a, a, method="overlap-add")
    with pytest.raises(tz.TenzrError, match="only boundary='fill' with fillvalue=0"):
        tz.scipy.signal.convolve2d(a, a, boundary="wrap")
    with pytest.raises(tz.TenzrError, match="inputs must be 2-dimensional"):
        tz.scipy.signal.correlate2d(np.ones(3), np.ones(2))
    with pytest.raises(tz.TenzrError, match=r"do not pair axes of shapes \(3, 4\) and \(3, 4\)"):
        tz.scipy.signal.convolve(a, a, axes=([0], [0]), dot_axes=([1], [0]))
    with pytest.raises(tz.TenzrError, match="larger along every convolved axis"):
        tz.scipy.signal.convolve(a, np.ones((4, 3)), axes=([0, 1], [0, 1]), mode="valid")


def test_trapezoid_matches_numpy_and_jax():
    y, x = RNG.normal(size=(3, 5)), np.sort(RNG.normal(size=5))
    xs = np.sort(RNG.normal(size=(4, 3)), axis=0)
    np.testing.assert_allclose(np.asarray(tz.trapezoid(y)), np.trapezoid(y), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(tz.scipy.integrate.trapezoid(y, x)), np.trapezoid(y, x), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(tz.trapezoid(y, dx=0.3, axis=0)), np.trapezoid(y, dx=0.3, axis=0),
                               rtol=1e-13)
    np.testing.assert_allclose(np.asarray(tz.trapezoid(y[:, :4].T, xs, axis=0)), np.trapezoid(y[:, :4].T, xs, axis=0),
                               rtol=1e-13)
    g = tz.grad(lambda y, x: tz.trapezoid(y, x).sum(), argnums=(0, 1))(y, x)
    jg = jax.grad(lambda y, x: jax_integrate.trapezoid(y, x).sum(), argnums=(0, 1))(y, x)
    for ours, theirs in zip(g, jg, strict=True):
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-13)
