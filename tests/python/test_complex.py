"""Complex numbers: values against NumPy, derivatives against central finite differences
(JAX's convention: the gradient of a real f at z = x + iy is ∂f/∂x - i·∂f/∂y) and against
JAX itself where it is installed, type promotion, `tz.fft`, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import tenzr as tz
from tenzr.dialect.diagnostics import TenzrError

RNG = np.random.default_rng(11)
Z = np.array([0.5 + 0.3j, -1.0 + 2.0j, 2.0 - 0.5j, -0.4 - 0.7j])
X = RNG.standard_normal(4)
H = 1e-6

UNARY = ["exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "log1p", "expm1", "sinh", "cosh", "arcsin", "arccos",
         "arctan", "arcsinh", "arccosh", "arctanh", "abs", "real", "imag", "conj", "angle", "square", "reciprocal",
         "log2", "log10", "exp2"]


@pytest.fixture(autouse=True)
def _x64():
    tz.config.update("jax_enable_x64", True)
    yield
    tz.config.update("jax_enable_x64", False)


def _fd_grad(f, z: np.ndarray) -> np.ndarray:
    """∂f/∂x - i·∂f/∂y of real-valued NumPy f, elementwise, by central differences."""
    out = np.zeros(z.shape, complex)
    for i in np.ndindex(z.shape):
        e = np.zeros(z.shape, complex)
        e[i] = H
        dx = (f(z + e) - f(z - e)) / (2 * H)
        dy = (f(z + 1j * e) - f(z - 1j * e)) / (2 * H)
        out[i] = dx - 1j * dy
    return out


def _loss(module, name):
    """A real loss that reaches f's value through both its real part and its modulus."""
    f = getattr(module, name)
    return lambda z: module.sum(module.real(f(z)) * 0.7 + module.abs(f(z)) ** 2)


def test_values_match_numpy():
    got = tz.jit(lambda z: [getattr(tz, name)(z) for name in UNARY])(Z)
    for name, value in zip(UNARY, got, strict=True):
        np.testing.assert_allclose(value, getattr(np, name)(Z), rtol=1e-13, atol=1e-15, err_msg=name)


def test_complex64_stays_complex64():
    z = Z.astype(np.complex64)
    out = tz.jit(lambda z: (tz.exp(z) * 2.0, tz.abs(z), z * 1j))(z)
    assert [o.dtype for o in out] == [np.complex64, np.float32, np.complex64]
    np.testing.assert_allclose(out[0], np.exp(z) * 2, rtol=1e-6)


@pytest.mark.parametrize("name", UNARY)
def test_gradient_against_finite_differences(name):
    g = tz.grad(_loss(tz, name))(Z)
    np.testing.assert_allclose(g, _fd_grad(_loss(np, name), Z), rtol=1e-6, atol=1e-6)


def test_binary_gradients_against_finite_differences():
    w = Z[::-1].copy()

    def loss(m):
        return lambda a, b: m.sum(m.abs(a * b + a / b - a ** b) ** 2 + m.real(a @ b))

    ga, gb = tz.grad(loss(tz), argnums=(0, 1))(Z, w)
    np.testing.assert_allclose(ga, _fd_grad(lambda a: loss(np)(a, w), Z), rtol=1e-6)
    np.testing.assert_allclose(gb, _fd_grad(lambda b: loss(np)(Z, b), w), rtol=1e-6)


def test_reductions_and_statistics():
    m = (RNG.standard_normal((2, 3)) + 1j * RNG.standard_normal((2, 3)))

    def loss(mod):
        return lambda a: (mod.abs(mod.prod(a)) + mod.var(a) + mod.std(a[0]) + mod.abs(mod.mean(a, axis=0)).sum()
                          + mod.abs(mod.cumsum(a, axis=1)).sum())

    np.testing.assert_allclose(tz.grad(loss(tz))(m), _fd_grad(loss(np), m), rtol=1e-6)
    np.testing.assert_allclose(tz.var(m), np.var(m), rtol=1e-14)
    assert tz.var(m).dtype == np.float64


def test_real_input_through_complex_values():
    """A real input's gradient is the real part of its complex cotangent (convert's rule)."""
    def loss(m):
        return lambda x: m.sum(m.abs(m.exp(1j * x) * x + 2.0) ** 2)

    g = tz.grad(loss(tz))(X)
    assert g.dtype == np.float64
    fd = np.array([(loss(np)(X + e) - loss(np)(X - e)) / (2 * H) for e in np.eye(4) * H])
    np.testing.assert_allclose(g, fd, rtol=1e-6)


def test_holomorphic_grad():
    z = 0.3 - 1.1j
    g = tz.grad(lambda z: z * tz.sin(z), holomorphic=True)(z)
    np.testing.assert_allclose(g, np.sin(z) + z * np.cos(z), rtol=1e-13)


def test_jvp_against_finite_differences():
    t = RNG.standard_normal(4) + 1j * RNG.standard_normal(4)

    def f(m):
        return lambda z: (m.sqrt(z) * m.conj(z), m.abs(z), m.arctanh(z))

    out, tangents = tz.jvp(f(tz), (Z,), (t,))
    for value, tangent, plus, minus, ref in zip(out, tangents, f(np)(Z + H * t), f(np)(Z - H * t), f(np)(Z),
                                                strict=True):
        np.testing.assert_allclose(value, ref, rtol=1e-13)
        np.testing.assert_allclose(tangent, (plus - minus) / (2 * H), rtol=1e-6)


def test_vjp_with_a_constant_matrix():
    """IREE 3.13 got the transposed complex product of a constant wrong; the lowering writes
    complex products on their parts."""
    w = np.round(RNG.standard_normal((4, 4)) + 1j * RNG.standard_normal((4, 4)), 1)
    ct = RNG.standard_normal((2, 4)) + 1j * RNG.standard_normal((2, 4))
    a = RNG.standard_normal((2, 4)) + 1j * RNG.standard_normal((2, 4))
    _, pullback = tz.vjp(lambda a: a @ w, a)
    np.testing.assert_allclose(pullback(ct)[0], ct @ w.T, rtol=1e-13)


def test_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    ct = RNG.standard_normal(4) + 1j * RNG.standard_normal(4)
    for name in ["exp", "log", "tan", "conj", "real", "abs", "arcsinh"]:
        real_out = name in ("real", "abs")
        cotangent = ct.real if real_out else ct
        got = tz.vjp(getattr(tz, name), Z)[1](cotangent)[0]
        ref = jax.vjp(getattr(jnp, name), Z)[1](cotangent)[0]
        np.testing.assert_allclose(got, ref, rtol=1e-12, err_msg=name)
        np.testing.assert_allclose(tz.grad(_loss(tz, name))(Z), jax.grad(_loss(jnp, name))(Z), rtol=1e-12,
                                   err_msg=name)


def test_promotion_follows_jax():
    f32, f64 = np.ones(2, np.float32), np.ones(2, np.float64)
    c64 = np.ones(2, np.complex64)
    out = tz.jit(lambda a, b, c: (a * 1j, b * 1j, a * c, b * c, tz.arange(2) + 1j))(f32, f64, c64)
    assert [o.dtype for o in out] == [np.complex64, np.complex128, np.complex64, np.complex128, np.complex128]
    tz.config.update("jax_enable_x64", False)
    assert tz.jit(lambda a: tz.arange(2) + 1j)(f32).dtype == np.complex64


def test_eager_and_predicates():
    assert np.iscomplexobj(tz.exp(Z)) and tz.iscomplexobj(tz.asarray(Z))
    np.testing.assert_array_equal(tz.iscomplex(np.array([1.0 + 0j, 1j])), [False, True])
    np.testing.assert_array_equal(tz.isfinite(np.array([1j, complex(np.inf, 0), complex(0, np.nan)])),
                                  [True, False, False])
    np.testing.assert_allclose(tz.sign(Z), Z / np.abs(Z), rtol=1e-14)


def test_errors():
    with pytest.raises(TenzrError, match="holomorphic=True"):
        tz.grad(lambda z: tz.sum(z * z))(Z)
    with pytest.raises(TenzrError, match="needs complex inputs"):
        tz.grad(lambda x: (x * 1j).sum(), holomorphic=True)(X)
    with pytest.raises(TenzrError, match="complex numbers have no order"):
        tz.jit(tz.maximum)(Z, Z)
    with pytest.raises(TenzrError, match="compare only eq and ne"):
        tz.jit(lambda z: z < z)(Z)


# --------------------------------------------------------------------------- tz.fft

M = RNG.standard_normal((4, 5, 6))
C = M + 1j * RNG.standard_normal(M.shape)
HALF = np.fft.rfft(M)
ONE_D = [("fft", C), ("ifft", C), ("rfft", M), ("irfft", HALF), ("hfft", HALF), ("ihfft", M)]
N_D = [("fft2", C), ("ifft2", C), ("fftn", C), ("ifftn", C), ("rfft2", M), ("irfft2", HALF), ("rfftn", M),
       ("irfftn", HALF)]


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_fft_values(norm):
    cases = [(name, a, n) for name, a in ONE_D for n in (None, 4, 9)]
    got = tz.jit(lambda *args: [getattr(tz.fft, name)(a, n=n, axis=1, norm=norm)
                                for (name, _, n), a in zip(cases, args, strict=True)])(*[a for _, a, _ in cases])
    for (name, a, n), value in zip(cases, got, strict=True):
        np.testing.assert_allclose(value, getattr(np.fft, name)(a, n=n, axis=1, norm=norm), atol=1e-12,
                                   err_msg=f"{name} n={n}")


def test_fft_nd_values_and_shifts():
    def both(xp, arrays):  # every transform of N_D, plain and with s and axes
        return [out for (name, _), a in zip(N_D, arrays, strict=True)
                for out in (getattr(xp.fft, name)(a), getattr(xp.fft, name)(a, s=[3, 7], axes=[0, 2]))]

    arrays = [a for _, a in N_D]
    for got, want in zip(tz.jit(lambda arrays: both(tz, arrays))(arrays), both(np, arrays), strict=True):
        np.testing.assert_allclose(got, want, atol=1e-12)
    np.testing.assert_array_equal(tz.fft.fftshift(M), np.fft.fftshift(M))
    np.testing.assert_array_equal(tz.fft.ifftshift(M, axes=1), np.fft.ifftshift(M, axes=1))
    np.testing.assert_array_equal(tz.fft.fftfreq(5, 0.1), np.fft.fftfreq(5, 0.1))


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fftn", "irfftn", "hfft"])
def test_fft_gradients(name):
    small = {"fft": C[0, :2, :3], "rfft": M[0, :2, :4], "irfft": HALF[0, :2], "fftn": C[:2, :2, :3],
             "irfftn": HALF[:2, :2], "hfft": HALF[0, :2]}[name]

    def loss(m):
        return lambda a: m.sum(m.abs(getattr(m.fft, name)(a)) ** 2 + m.real(getattr(m.fft, name)(a)) * 0.3)

    g = tz.grad(loss(tz))(small)
    if np.iscomplexobj(small):
        np.testing.assert_allclose(g, _fd_grad(loss(np), small), rtol=1e-6, atol=1e-7)
    else:
        fd = np.zeros_like(small)
        for i in np.ndindex(small.shape):
            e = np.zeros_like(small)
            e[i] = H
            fd[i] = (loss(np)(small + e) - loss(np)(small - e)) / (2 * H)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


def test_fft_errors():
    with pytest.raises(TenzrError, match="norm must be one of"):
        tz.fft.fft(C, norm="both")
    with pytest.raises(TenzrError, match="rfft takes real input"):
        tz.fft.rfft(C)
    with pytest.raises(TenzrError, match="out of bounds"):
        tz.fft.fft(C, axis=3)


def test_max_and_min_compare_real_parts_first():
    z = np.array([[1 + 2j, 1 - 1j, 0.5 + 3j], [1 + 0.5j, -2 + 0j, 1 + 2.5j]])
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(tz.max(z, axis=axis), np.max(z, axis=axis))
        np.testing.assert_array_equal(tz.min(z, axis=axis, keepdims=True), np.min(z, axis=axis, keepdims=True))
    distinct = z + np.arange(6).reshape(2, 3) * 0.1  # (finite differences need the maximum away from a tie)
    g = tz.grad(lambda z: tz.abs(tz.max(z)) ** 2 + tz.real(tz.min(z, axis=0)).sum())(distinct)
    np.testing.assert_allclose(g, _fd_grad(lambda z: np.abs(np.max(z)) ** 2 + np.real(np.min(z, axis=0)).sum(),
                                           distinct), atol=1e-6)


def test_norms_of_complex_input():
    m = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))
    for ord_, axis in [(None, None), (1, 1), (np.inf, 0), (3, 1), ("fro", None), (1, (0, 1)), (-np.inf, (0, 1))]:
        np.testing.assert_allclose(tz.linalg.norm(m, ord_, axis), np.linalg.norm(m, ord_, axis), rtol=1e-13)
    g = tz.grad(lambda m: tz.linalg.norm(m) + tz.linalg.norm(m, 3, axis=1).sum())(m)
    np.testing.assert_allclose(g, _fd_grad(lambda m: np.linalg.norm(m) + np.linalg.norm(m, 3, axis=1).sum(), m),
                               rtol=1e-6)
    with pytest.raises(TenzrError, match="complex SVD"):
        tz.linalg.norm(m, "nuc")
