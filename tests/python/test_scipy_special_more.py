"""`tz.scipy.special`'s functions beyond the error and gamma families: values against SciPy
(float64 and float32) and JAX, gradients against JAX's; all in a few jitted calls."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ss

import tenzr as tz

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

X = np.concatenate([-np.geomspace(30, 1e-3, 8), [0.0], np.geomspace(1e-3, 30, 8)])
POS = np.geomspace(0.05, 40, 12)
P = np.array([0.0, 0.0, 0.3, 1.0, 2.0, -1.0, 0.5])
Q = np.array([0.0, 1.0, 0.0, 2.0, 0.5, 1.0, -0.5])
N = np.array([-1.0, 0.0, 1.0, 3.5, 5.0, 10.0, 12.0])
K = np.array([1.0, 2.0, 1.5, 2.0, 6.0, 3.0, 12.0])
LMBDA = np.array([0.0, 0.5, -1.5, 2.0, 0.0, 1e-9, -0.3, 1.0, 3.0, 0.2, -2.0, 0.7])

# name, f(lib) giving the function of the inputs, the SciPy reference, inputs
ROWS = [
    ("bessel", lambda lib: lambda x: (lib.scipy.special.i0(x), lib.scipy.special.i0e(x), lib.scipy.special.i1(x),
                                      lib.scipy.special.i1e(x)),
     lambda x: (ss.i0(x), ss.i0e(x), ss.i1(x), ss.i1e(x)), [X]),
    ("zeta_polygamma", lambda lib: lambda x: (lib.scipy.special.zeta(x + 1.5, x), lib.scipy.special.polygamma(2, x),
                                              lib.scipy.special.polygamma(0, x), lib.scipy.special.loggamma(x)),
     lambda x: (ss.zeta(x + 1.5, x), ss.polygamma(2, x), ss.polygamma(0, x), ss.loggamma(x)), [POS]),
    ("entropies", lambda lib: lambda p, q: (lib.scipy.special.rel_entr(p, q), lib.scipy.special.kl_div(p, q)),
     lambda p, q: (ss.rel_entr(p, q), ss.kl_div(p, q)), [P, Q]),
    ("combinatorics", lambda lib: lambda n, k: (lib.scipy.special.factorial(n), lib.scipy.special.comb(n, k),
                                                lib.scipy.special.comb(n, k, repetition=True),
                                                lib.scipy.special.poch(n + 1.5, k)),
     lambda n, k: (ss.factorial(n), ss.comb(n, k), ss.comb(n, k, repetition=True), ss.poch(n + 1.5, k)), [N, K]),
    ("boxcox", lambda lib: lambda x, lm: (lib.scipy.special.boxcox(x, lm), lib.scipy.special.boxcox1p(x - 0.04, lm)),
     lambda x, lm: (ss.boxcox(x, lm), ss.boxcox1p(x - 0.04, lm)), [POS, LMBDA]),
]


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_values_match_scipy_and_jax_in_float64(row):
    _, fn, ref, inputs = row
    ours = tz.jit(fn(tz))(*inputs)
    theirs = jax.jit(fn(jax))(*inputs)
    for k, (o, r, j) in enumerate(zip(ours, ref(*inputs), theirs, strict=True)):
        r = np.where(np.isnan(r), o, r)  # (SciPy's comb with repetition is NaN for N = -1, k = 1; JAX's 0)
        np.testing.assert_allclose(o, r, rtol=1e-9, atol=1e-300, err_msg=str(k))
        np.testing.assert_allclose(o, j, rtol=1e-9, atol=1e-300, err_msg=str(k))


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_values_match_scipy_in_float32(row, jax_without_x64):
    _, fn, ref, inputs = row
    inputs32 = [a.astype(np.float32) for a in inputs]
    ours = tz.jit(fn(tz))(*inputs32)
    for k, (o, r) in enumerate(zip(ours, ref(*[a.astype(np.float64) for a in inputs32]), strict=True)):
        r = np.where(np.isnan(r), o, r)
        assert np.asarray(o).dtype == np.float32
        np.testing.assert_allclose(o, r, rtol=2e-5, atol=1e-6, err_msg=str(k))


def test_gradients_match_jax():
    def total(lib, x, y):
        s = lib.scipy.special
        return (s.i0(x) + s.i1e(x) + s.zeta(x + 3.5, y) + s.polygamma(1, y) + s.loggamma(y) + s.kl_div(y, x * x + 0.1)
                + s.comb(y + 6.0, y) + s.poch(y, 0.2 * x) + s.boxcox(y, x) + s.boxcox1p(y, 0.0 * x)
                + s.factorial(y)).sum()

    x, y = np.linspace(-2.0, 2.0, 8), np.linspace(0.3, 6.0, 8)  # (not x = 0, where JAX's i0' is 1, not I1(0) = 0)
    ours = tz.jit(tz.grad(lambda a, b: total(tz, a, b), (0, 1)))(x, y)
    theirs = jax.jit(jax.grad(lambda a, b: total(jax, a, b), (0, 1)))(x, y)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-8)


def test_i0_derivative_is_i1():
    x = np.array([-3.0, 0.0, 0.5, 20.0])
    np.testing.assert_allclose(tz.grad(lambda v: tz.sum(tz.scipy.special.i0(v)))(x), ss.i1(x), rtol=1e-12, atol=1e-15)


def test_bernoulli_numbers_are_exact():
    np.testing.assert_allclose(tz.scipy.special.bernoulli(20), ss.bernoulli(20), rtol=1e-15)
    assert tz.scipy.special.bernoulli(0).shape == (1,)
    with pytest.raises(tz.TenzrError, match="non-negative"):
        tz.scipy.special.bernoulli(-1)


def test_arguments_jax_refuses():
    with pytest.raises(tz.TenzrError, match="integer type"):
        tz.scipy.special.polygamma(1.0, 2.0)
    with pytest.raises(tz.TenzrError, match="Riemann"):
        tz.scipy.special.zeta(2.0)
    with pytest.raises(tz.TenzrError, match="exact"):
        tz.scipy.special.factorial(3.0, exact=True)
