"""JAX's names beyond NumPy's: `tz.nn`, `tz.scipy.special`, `tz.scipy.stats.norm`,
`jit(static_argnums=, static_argnames=)`, `eval_shape`, dtype names. Values are checked
against JAX itself (float64, on its CPU backend) and SciPy; gradients against JAX's and
against central finite differences of SciPy/NumPy code."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ss
import scipy.stats as st

import tenzr as tz

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

X = np.linspace(-2.5, 2.5, 11)
P = np.linspace(0.05, 0.95, 7)
COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]])
H = 1e-6

# name, tz function, the JAX function of the same name (or None), a NumPy/SciPy reference, inputs
ROWS = [
    ("gelu", tz.nn.gelu, jax.nn.gelu,
     lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))), [X]),
    ("gelu_exact", lambda x: tz.nn.gelu(x, approximate=False), lambda x: jax.nn.gelu(x, approximate=False),
     lambda x: x * st.norm.cdf(x), [X]),
    ("silu", tz.nn.silu, jax.nn.silu, lambda x: x * ss.expit(x), [X]),
    ("softplus", tz.nn.softplus, jax.nn.softplus, lambda x: np.logaddexp(x, 0), [X * 20]),
    ("log_sigmoid", tz.nn.log_sigmoid, jax.nn.log_sigmoid, lambda x: -np.logaddexp(-x, 0), [X * 20]),
    ("elu", lambda x: tz.nn.elu(x, 0.7), lambda x: jax.nn.elu(x, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x)),
     [X + 0.01]),
    ("celu", tz.nn.celu, jax.nn.celu, lambda x: np.maximum(x, 0) + np.minimum(np.expm1(x), 0), [X + 0.01]),
    ("selu", tz.nn.selu, jax.nn.selu, lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 *
                                                                              np.expm1(x)), [X + 0.01]),
    ("leaky_relu", lambda x: tz.nn.leaky_relu(x, 0.2), lambda x: jax.nn.leaky_relu(x, 0.2),
     lambda x: np.where(x >= 0, x, 0.2 * x), [X + 0.01]),
    ("relu6_hard", lambda x: tz.nn.relu6(3 * x) + tz.nn.hard_tanh(x) + tz.nn.hard_silu(x),
     lambda x: jax.nn.relu6(3 * x) + jax.nn.hard_tanh(x) + jax.nn.hard_silu(x),
     lambda x: np.clip(3 * x, 0, 6) + np.clip(x, -1, 1) + x * np.clip(x + 3, 0, 6) / 6, [X + 0.01]),
    ("soft_sign", tz.nn.soft_sign, jax.nn.soft_sign, lambda x: x / (abs(x) + 1), [X + 0.01]),
    ("mish_squareplus_sparse_plus", lambda x: tz.nn.mish(x) + tz.nn.squareplus(x, 2.0) + tz.nn.sparse_plus(x),
     lambda x: jax.nn.mish(x) + jax.nn.squareplus(x, 2.0) + jax.nn.sparse_plus(x),
     lambda x: x * np.tanh(np.logaddexp(x, 0)) + (x + np.sqrt(x * x + 2.0)) / 2
     + np.where(x <= -1, 0.0, np.where(x >= 1, x, (x + 1) ** 2 / 4)), [X + 0.01]),  # (off sparse_plus's kinks)
    ("erfcx", tz.scipy.special.erfcx, jax.scipy.special.erfcx, ss.erfcx, [X + 1.0]),
    ("glu", tz.nn.glu, jax.nn.glu, lambda x: x[:, :2] * ss.expit(x[:, 2:]), [X[:8].reshape(2, 4)]),
    ("standardize", tz.nn.standardize, jax.nn.standardize,
     lambda x: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5), [np.cos(X).reshape(1, 11)]),
    ("erf_erfc", lambda x: tz.scipy.special.erf(x) * tz.scipy.special.erfc(x / 2),
     lambda x: jax.scipy.special.erf(x) * jax.scipy.special.erfc(x / 2), lambda x: ss.erf(x) * ss.erfc(x / 2), [X]),
    ("erfinv_ndtri", lambda p: tz.scipy.special.erfinv(p) + tz.scipy.special.ndtri(p),
     lambda p: jax.scipy.special.erfinv(p) + jax.scipy.special.ndtri(p), lambda p: ss.erfinv(p) + ss.ndtri(p), [P]),
    ("gammaln_digamma", lambda x: tz.scipy.special.gammaln(x) * tz.scipy.special.digamma(x),
     lambda x: jax.scipy.special.gammaln(x) * jax.scipy.special.digamma(x), lambda x: ss.gammaln(x) * ss.digamma(x),
     [X + 3]),
    ("expit_logit", lambda x, p: tz.scipy.special.expit(x) + tz.scipy.special.logit(p),
     lambda x, p: jax.scipy.special.expit(x) + jax.scipy.special.logit(p), lambda x, p: ss.expit(x) + ss.logit(p),
     [P * 4, P]),
    ("xlogy_xlog1py", lambda x, y: tz.scipy.special.xlogy(x, y) + tz.scipy.special.xlog1py(x, y),
     lambda x, y: jax.scipy.special.xlogy(x, y) + jax.scipy.special.xlog1py(x, y),
     lambda x, y: ss.xlogy(x, y) + ss.xlog1py(x, y), [P, P * 3]),
    ("betaln_entr", lambda a, b: tz.scipy.special.betaln(a, b) + tz.scipy.special.entr(a),
     lambda a, b: jax.scipy.special.betaln(a, b) + jax.scipy.special.entr(a),
     lambda a, b: ss.betaln(a, b) + ss.entr(a), [P * 3, P + 1]),
    ("logsumexp_b", lambda a, b: tz.scipy.special.logsumexp(a, axis=1, b=b),
     lambda a, b: jax.scipy.special.logsumexp(a, axis=1, b=b), lambda a, b: ss.logsumexp(a, axis=1, b=b),
     [X[:10].reshape(2, 5), P[:5] + 0.5]),
    ("norm", lambda x: tz.scipy.stats.norm.logpdf(x, 0.3, 1.5) + tz.scipy.stats.norm.pdf(x, -0.2) +
     tz.scipy.stats.norm.cdf(x, 0.1, 2.0) + tz.scipy.stats.norm.sf(x),
     lambda x: jax.scipy.stats.norm.logpdf(x, 0.3, 1.5) + jax.scipy.stats.norm.pdf(x, -0.2) +
     jax.scipy.stats.norm.cdf(x, 0.1, 2.0) + jax.scipy.stats.norm.sf(x),
     lambda x: st.norm.logpdf(x, 0.3, 1.5) + st.norm.pdf(x, -0.2) + st.norm.cdf(x, 0.1, 2.0) + st.norm.sf(x), [X]),
    ("multivariate_normal", lambda x, m: tz.scipy.stats.multivariate_normal.logpdf(x, m, COV)
     + tz.scipy.stats.multivariate_normal.pdf(x[0], m, COV),
     lambda x, m: jax.scipy.stats.multivariate_normal.logpdf(x, m, COV)
     + jax.scipy.stats.multivariate_normal.pdf(x[0], m, COV),
     lambda x, m: st.multivariate_normal.logpdf(x, m, COV) + st.multivariate_normal.pdf(x[0], m, COV),
     [np.cos(np.arange(12.0)).reshape(4, 3), np.array([0.1, -0.2, 0.3])]),
    ("beta_gamma_chi2",
     lambda x, a: tz.scipy.stats.beta.logpdf(x, a, a[::-1]) + tz.scipy.stats.gamma.pdf(x * 3, a, 0.1, 2.0)
     + tz.scipy.stats.chi2.logpdf(x * 3, 2 * a),
     lambda x, a: jax.scipy.stats.beta.logpdf(x, a, a[::-1]) + jax.scipy.stats.gamma.pdf(x * 3, a, 0.1, 2.0)
     + jax.scipy.stats.chi2.logpdf(x * 3, 2 * a),
     lambda x, a: st.beta.logpdf(x, a, a[::-1]) + st.gamma.pdf(x * 3, a, 0.1, 2.0) + st.chi2.logpdf(x * 3, 2 * a),
     [P, P * 4 + 0.5]),  # the middle shape is 1 (chi2 with df 2), where xlogy's x-derivative is log(y)
    ("t_poisson", lambda x, mu: tz.scipy.stats.t.logpdf(x, 3.5, 0.3, 1.5) + tz.scipy.stats.poisson.logpmf(3.0, mu)
     + tz.scipy.stats.poisson.pmf(0.0, mu),
     lambda x, mu: jax.scipy.stats.t.logpdf(x, 3.5, 0.3, 1.5) + jax.scipy.stats.poisson.logpmf(3.0, mu)
     + jax.scipy.stats.poisson.pmf(0.0, mu),
     lambda x, mu: st.t.logpdf(x, 3.5, 0.3, 1.5) + st.poisson.logpmf(3.0, mu) + st.poisson.pmf(0.0, mu),
     [X[:7], P * 5]),
    ("dirichlet", lambda x, a: tz.scipy.stats.dirichlet.logpdf(x / tz.sum(x), a),
     lambda x, a: jax.scipy.stats.dirichlet.logpdf(x / jnp.sum(x), a),
     lambda x, a: st.dirichlet.logpdf(x / np.sum(x), a), [P[:4], P[:4] * 3 + 1]),
    ("special_gamma_family", lambda a, b: tz.scipy.special.beta(a, b) + tz.scipy.special.gamma(-a)
     + tz.scipy.special.rgamma(a - 2.1) + tz.scipy.special.multigammaln(a + 2, 3) + tz.scipy.special.psi(a)
     + tz.scipy.special.erfcinv(b / 2) + tz.sinc(a - 1.3),
     lambda a, b: jax.scipy.special.beta(a, b) + jax.scipy.special.gamma(-a)
     + jax.scipy.special.gammasgn(a - 2.1) * jnp.exp(-jax.scipy.special.gammaln(a - 2.1))
     + jax.scipy.special.multigammaln(a + 2, 3) + jax.scipy.special.digamma(a)
     + jax.scipy.special.erfinv(1 - b / 2) + jnp.sinc(a - 1.3),
     lambda a, b: ss.beta(a, b) + ss.gamma(-a) + ss.rgamma(a - 2.1)
     + np.array([ss.multigammaln(v + 2, 3) for v in a]) + ss.psi(a) + ss.erfcinv(b / 2) + np.sinc(a - 1.3),
     [P * 3 + 0.07, P * 2 + 0.05]),  # away from the poles at 0, -1, -2
    ("norm_ppf", lambda q: tz.scipy.stats.norm.ppf(q, 1.0, 2.0) + tz.scipy.stats.norm.isf(q),
     lambda q: jax.scipy.stats.norm.ppf(q, 1.0, 2.0) + jax.scipy.stats.norm.isf(q),
     lambda q: st.norm.ppf(q, 1.0, 2.0) + st.norm.isf(q), [P]),
]


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_values_match_jax_and_scipy(row):
    _, fn, jax_fn, ref, inputs = row
    out = tz.jit(fn)(*inputs)
    np.testing.assert_allclose(out, ref(*inputs), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out, jax.jit(jax_fn)(*inputs), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_gradients_match_jax_and_finite_differences(row):
    _, fn, jax_fn, ref, inputs = row
    argnums = tuple(range(len(inputs)))
    weights = np.cos(np.arange(np.size(ref(*inputs)))).reshape(np.shape(ref(*inputs)))
    ours = tz.grad(lambda *a: tz.sum(fn(*a) * weights), argnums)(*inputs)
    theirs = jax.jit(jax.grad(lambda *a: jnp.sum(jax_fn(*a) * weights), argnums))(*inputs)
    for k, (g, j) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(g, j, rtol=1e-7, atol=1e-10)
        x = inputs[k]
        fd = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            step = np.zeros_like(x)
            step[i] = H
            shifted = [a + step if n == k else a for n, a in enumerate(inputs)]
            lowered = [a - step if n == k else a for n, a in enumerate(inputs)]
            fd[i] = (np.sum(ref(*shifted) * weights) - np.sum(ref(*lowered) * weights)) / (2 * H)
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7)


def test_nn_namespace_holds_only_its_functions():
    names = [n for n in dir(tz.nn) if not n.startswith("_") and n != "initializers"]  # (JAX's submodule)
    assert names and all(callable(getattr(tz.nn, n)) and not isinstance(getattr(tz.nn, n), type) for n in names)
    assert {"gelu", "silu", "softplus", "elu", "leaky_relu", "log_sigmoid", "standardize", "one_hot"} <= set(names)


def test_jit_static_argnums_and_argnames():
    calls = []

    def f(x, n, *, scale=1.0, mode="sum"):
        calls.append(n)
        y = x[:n] * scale
        return tz.sum(y) if mode == "sum" else y

    x = np.arange(5.0)
    g = tz.jit(f, static_argnums=1, static_argnames="mode")
    assert float(g(x, 3, scale=1.0)) == 3.0
    np.testing.assert_array_equal(g(x, 2, scale=2.0, mode="keep"), [0.0, 2.0])
    assert float(g(x, 3, scale=2.0)) == 6.0  # scale is traced: the program of g(x, 3, scale=1.0)
    assert calls == [3, 2]
    assert float(g(x, 3)) == 3.0
    by_name = tz.jit(f, static_argnames="n")
    assert float(by_name(x, n=4)) == 6.0 and float(by_name(x, 4)) == 6.0
    np.testing.assert_allclose(tz.jit(lambda x, n: tz.grad(lambda x: tz.sum(x[:n] ** 2))(x), static_argnums=1)(x, 3),
                               [0.0, 2.0, 4.0, 0.0, 0.0])
    with pytest.raises(tz.TenzrError, match="static arguments must be hashable"):
        g(x, np.array([1, 2]))

    @tz.jit(static_argnums=(1,))  # JAX's decorator form
    def head(x, n):
        return x[:n] * 2.0

    np.testing.assert_array_equal(head(x, 2), [0.0, 2.0])


def test_eval_shape_traces_without_compiling():
    out = tz.eval_shape(lambda x, w: {"y": tz.tanh(x @ w), "n": x.sum()}, tz.ShapeDtypeStruct((4, 3), np.float32),
                        np.zeros((3, 2)))
    assert out["y"].shape == (4, 2) and out["y"].dtype == np.float64
    assert out["n"] == tz.ShapeDtypeStruct((), np.float32)
    assert repr(out["n"]) == "ShapeDtypeStruct(shape=(), dtype=float32)"


def test_make_jaxpr_matches_jaxs_signature():
    def f(x, w, scale):
        return {"y": tz.tanh(x @ w) * scale, "n": x.sum()}

    def jf(x, w, scale):
        return {"y": jnp.tanh(x @ w) * scale, "n": x.sum()}

    x, w = np.ones((4, 3)), np.ones((3, 2), np.float32)
    ours, shape = tz.make_jaxpr(f, static_argnums=2, return_shape=True)(x, w, 2.0)
    theirs, jax_shape = jax.make_jaxpr(jf, static_argnums=2, return_shape=True)(x, w, 2.0)
    assert [(a.shape, np.dtype(a.dtype)) for a in ours.in_avals] == [(a.shape, a.dtype) for a in theirs.in_avals]
    assert [(a.shape, np.dtype(a.dtype)) for a in ours.out_avals] == [(a.shape, a.dtype) for a in theirs.out_avals]
    assert jax.tree_util.tree_structure(shape) == jax.tree_util.tree_structure(jax_shape)
    assert {k: (v.shape, np.dtype(v.dtype)) for k, v in shape.items()} == \
        {k: (v.shape, v.dtype) for k, v in jax_shape.items()}
    # the static scale is part of the program, not an argument; printing shows the module
    assert len(ours.in_avals) == 2 and '"tenzr.tanh"' in str(ours) and str(ours) == ours.pretty_print()
    assert str(tz.make_jaxpr(f, static_argnums=2)(x, w, 3.0)) != str(ours)
    with pytest.raises(tz.TenzrError, match="axis_env"):
        tz.make_jaxpr(f, axis_env=[("i", 2)])


def test_dtype_names_are_numpys():
    assert tz.float32 == np.float32 and np.dtype(tz.float64) == np.float64 and tz.int32 == np.int32
    assert tz.zeros(2, tz.int32).dtype == np.int32
    assert np.dtype(tz.bfloat16).name == "bfloat16"
    halved = tz.jit(lambda a: a * 0.5)(np.full(3, 3.0, tz.bfloat16))
    assert halved.dtype == tz.bfloat16
    np.testing.assert_array_equal(halved.astype(np.float32), [1.5, 1.5, 1.5])
    assert tz.finfo(tz.float32).eps == np.finfo(np.float32).eps
    # Python's float, int and complex as dtypes mean JAX's defaults: 32-bit without x64
    # (test_enable_x64_makes_defaults_64_bit compares with JAX's with it).
    cast = tz.jit(lambda x: (x.astype(int), tz.zeros(2, dtype=float), tz.arange(2, dtype=int), x.astype(complex)))
    assert [a.dtype for a in cast(np.ones(2))] == [np.int32, np.float32, np.int32, np.complex64]
    eager = tz.ones(2)  # (outside a trace too, as JAX's arrays)
    assert [eager.astype(t).dtype for t in (int, float, complex, np.float64)] == [np.int32, np.float32,
                                                                                  np.complex64, np.float64]


def test_enable_x64_makes_defaults_64_bit(x64):
    """With jax_enable_x64, Python numbers and the default dtypes are 64-bit, as in JAX
    (compared with JAX's own dtypes, here run with x64 on)."""
    cases = [  # (xp, args) -> value, for xp tz or jax.numpy
        (lambda xp, x: x * 2.0, (1.5,)),
        (lambda xp: xp.zeros(3), ()),
        (lambda xp: xp.arange(4), ()),
        (lambda xp: xp.arange(0.0, 1.0, 0.25), ()),
        (lambda xp, i: xp.exp(i), (np.arange(3, dtype=np.int32),)),
        (lambda xp, i: i / i, (np.arange(1, 3, dtype=np.int32),)),
        (lambda xp, i: xp.sqrt(i), (3,)),
        (lambda xp, x: x + 1.0, (np.ones(2, np.float32),)),  # a weak float keeps float32 arrays float32
        (lambda xp, x: (x.astype(int), xp.zeros(2, dtype=float), xp.arange(2, dtype=int) * 1j),
         (np.ones(2, np.float32),)),
    ]
    for fn, args in cases:
        ours = tz.jit(lambda *a, fn=fn: fn(tz, *a))(*args)
        theirs = jax.jit(lambda *a, fn=fn: fn(jnp, *a))(*args)
        for o, t in zip(tz.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs), strict=True):
            assert np.asarray(o).dtype == np.asarray(t).dtype, (fn, args)
            np.testing.assert_allclose(o, t)
    assert [tz.ones(2).astype(t).dtype for t in (int, float, complex)] == \
        [jnp.ones(2).astype(t).dtype for t in (int, float, complex)]  # (eager, as JAX's arrays)
    assert tz.config.jax_enable_x64 and tz.config.read("jax_enable_x64")


def test_x64_switch_does_not_reuse_programs():
    f = tz.jit(lambda: tz.ones(2) / 3)
    assert f().dtype == np.float32
    tz.config.update("jax_enable_x64", True)
    try:
        assert f().dtype == np.float64
        np.testing.assert_allclose(f(), [1 / 3, 1 / 3], rtol=1e-15)
    finally:
        tz.config.update("jax_enable_x64", False)
    assert f().dtype == np.float32


def test_config_errors():
    with pytest.raises(tz.TenzrError, match=r"config\.update: unknown option 'jax_debug_nan'"):
        tz.config.update("jax_debug_nan", True)
    with pytest.raises(tz.TenzrError, match="takes True or False"):
        tz.config.update("jax_enable_x64", "yes")
    with pytest.raises(AttributeError, match=r"set options with tz\.config\.update"):
        tz.config.jax_enable_x64 = True


def test_jvp_gives_python_number_primals_their_tangents_dtype():
    """A Python-number primal is weakly typed, so it takes a float64 tangent's dtype
    (the derivative of x**3 at 1.5 is 6.75, exactly representable)."""
    y, dy = tz.jvp(lambda x: x ** 3, (1.5,), (np.float64(2.0),))
    assert y.dtype == dy.dtype == np.float64 and dy == 13.5


def test_grad_keeps_non_differentiated_python_numbers_numbers(x64):
    """As JAX's grad and jacobians, a non-differentiated Python number is a number where the
    function needs it as one (a slice bound, a Python branch), eager and inside jit; where
    it does not, one program serves every value."""
    from tenzr import transforms

    def loss(xp):
        def f(w, i, training=True, scale=2.0):
            y = w[i:i + 2] * scale
            if training:
                y = y ** 3
            return xp.sum(y) + i
        return f

    w = np.linspace(0.5, 3.0, 6)
    for args in [(w, 2, False), (w, 3, True, 0.5)]:
        np.testing.assert_allclose(tz.grad(loss(tz))(*args), jax.grad(loss(jnp))(*args), rtol=1e-14)
    value, (g,) = tz.value_and_grad(loss(tz), argnums=(0,))(w, 1)
    expected_value, (expected_g,) = jax.value_and_grad(loss(jnp), argnums=(0,))(w, 1)
    np.testing.assert_allclose([value, *g], [expected_value, *expected_g], rtol=1e-14)
    np.testing.assert_allclose(tz.jit(lambda w: tz.grad(loss(tz))(w, 2))(w), jax.grad(loss(jnp))(w, 2), rtol=1e-14)
    for ours, theirs in [(tz.jacrev, jax.jacrev), (tz.hessian, jax.hessian)]:
        np.testing.assert_allclose(ours(lambda w, n: tz.sin(w[:n]) ** 2)(w, 3),
                                   theirs(lambda w, n: jnp.sin(w[:n]) ** 2)(w, 3), rtol=1e-14)

    transforms._RETRACED.clear()
    indexed = tz.grad(lambda w, i: w[i] ** 2)
    for i in range(4):
        np.testing.assert_array_equal(indexed(w, i), np.eye(6)[i] * 2 * w[i])
    assert len(transforms._RETRACED) == 1
    with pytest.raises(tz.errors.ConcretizationTypeError, match="cannot be used as a Python int"):
        tz.grad(lambda w: tz.sum(w[:int(w[0])]))(w)


def test_dirichlet_rvs_draws_as_scipy():
    """SciPy's set-up sampler: the same draws as SciPy's from the same NumPy seed."""
    np.random.seed(3)
    ours = tz.scipy.stats.dirichlet.rvs([1.0, 2.0, 3.0], size=2)
    np.random.seed(3)
    np.testing.assert_array_equal(ours, st.dirichlet.rvs([1.0, 2.0, 3.0], size=2))
    np.testing.assert_array_equal(tz.scipy.stats.dirichlet.rvs([1.0, 2.0], random_state=5),
                                  st.dirichlet.rvs([1.0, 2.0], random_state=5))


def test_incomplete_gamma_and_its_distributions_match_scipy_and_jax_gradients():
    """Both forms (series below a + 1, continued fraction above), shapes up to 150, x = 0."""
    a = np.array([0.5, 1.0, 2.5, 10.0, 50.0, 150.0, 3.0, 0.2])
    x = np.array([0.1, 2.0, 2.4, 12.0, 45.0, 160.0, 0.0, 5.0])
    for name in ("gammainc", "gammaincc"):
        ours, theirs = getattr(tz.scipy.special, name), getattr(jax.scipy.special, name)
        np.testing.assert_allclose(np.asarray(ours(a, x)), getattr(ss, name)(a, x), rtol=1e-12, atol=1e-15)
        got = tz.grad(lambda a, x: ours(a, x).sum(), argnums=(0, 1))(a, x)  # noqa: B023 (called at once)
        want = jax.grad(lambda a, x: theirs(a, x).sum(), argnums=(0, 1))(a, x)  # noqa: B023
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-14)
    assert np.isnan(np.asarray(tz.scipy.special.gammainc(-1.0, 2.0)))
    y = np.array([0.5, 2.0, 7.0])
    for f, want in [(tz.scipy.stats.gamma.cdf(y, 2.5, 0.1, 1.5), st.gamma.cdf(y, 2.5, 0.1, 1.5)),
                    (tz.scipy.stats.gamma.logsf(y, 2.5), st.gamma.logsf(y, 2.5)),
                    (tz.scipy.stats.chi2.cdf(y, 3.0), st.chi2.cdf(y, 3.0)),
                    (tz.scipy.stats.chi2.logcdf(y, 3.0), st.chi2.logcdf(y, 3.0)),
                    (tz.scipy.stats.poisson.cdf(np.array([-1.0, 0.0, 3.0, 4.5]), 2.2),
                     st.poisson.cdf(np.array([-1.0, 0.0, 3.0, 4.5]), 2.2))]:
        np.testing.assert_allclose(np.asarray(f), want, rtol=1e-12)


def test_incomplete_beta_matches_scipy_jax_in_x_and_differences_in_a_and_b():
    x = np.array([0.1, 0.5, 0.9, 0.3, 0.99, 0.0, 1.0, 0.7])
    a = np.array([0.5, 2.0, 3.0, 30.0, 1.5, 2.0, 2.0, 100.0])
    b = np.array([0.5, 3.0, 1.0, 40.0, 2.5, 2.0, 2.0, 60.0])
    np.testing.assert_allclose(np.asarray(tz.scipy.special.betainc(a, b, x)), ss.betainc(a, b, x), rtol=1e-12,
                               atol=1e-15)
    ga, gb, gx = tz.grad(lambda a, b, x: tz.scipy.special.betainc(a, b, x).sum(), argnums=(0, 1, 2))(a, b, x)
    np.testing.assert_allclose(np.asarray(gx), jax.grad(lambda x: jax.scipy.special.betainc(a, b, x).sum())(x),
                               rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(np.asarray(ga), (ss.betainc(a + H, b, x) - ss.betainc(a - H, b, x)) / (2 * H), atol=1e-8)
    np.testing.assert_allclose(np.asarray(gb), (ss.betainc(a, b + H, x) - ss.betainc(a, b - H, x)) / (2 * H), atol=1e-8)
    y = np.array([-0.5, 0.2, 0.6, 1.5])
    np.testing.assert_allclose(np.asarray(tz.scipy.stats.beta.cdf(y, 2.0, 3.0)), st.beta.cdf(y, 2.0, 3.0), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(tz.scipy.stats.beta.logsf(y[1:3], 2.0, 3.0)), st.beta.logsf(y[1:3], 2.0, 3.0),
                               rtol=1e-12)


@pytest.mark.parametrize("fill", [1, 1.0, True, np.float32(1.5), np.array([1.5, 2.5], np.float32)],
                         ids=["int", "float", "bool", "float32", "array"])
def test_full_takes_its_fill_values_type_as_jax_does(fill):
    """Without dtype=, jnp.full is of the fill value's type (Python ints int32, not float)."""
    jax.config.update("jax_enable_x64", False)  # (as tz here)
    try:
        want = jax.numpy.full((2, 2), fill)
    finally:
        jax.config.update("jax_enable_x64", True)
    for got in (tz.full((2, 2), fill), tz.jit(lambda: tz.full((2, 2), fill))()):
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_full_of_a_traced_fill_value(x64):
    """As jnp.full and jnp.full_like: a traced fill value is broadcast (and differentiates)."""
    def f(g):
        return tz.sum(tz.full((3,), g) * tz.arange(3.0)) + tz.sum(tz.full_like(tz.ones(2), g * g, dtype=tz.float32))

    def f_jax(g):
        jnp = jax.numpy
        return jnp.sum(jnp.full((3,), g) * jnp.arange(3.0)) + jnp.sum(jnp.full_like(jnp.ones(2), g * g,
                                                                                    dtype=jnp.float32))

    for fn in (tz.grad(f), tz.jit(tz.grad(f))):
        np.testing.assert_allclose(fn(1.5), jax.grad(f_jax)(1.5), rtol=1e-6)


def test_dynamic_slices_in_dim_and_negative_starts_as_jax(x64):
    """lax's *_in_dim helpers, and dynamic slices whose (traced or Python) start is
    negative: JAX counts it from the end, then clamps, where StableHLO only clamps."""
    x = np.arange(24.0).reshape(4, 6)
    u = np.full((4, 2), -1.0)

    def cases(lax, i):
        return (lax.dynamic_slice_in_dim(x, i, 2, axis=1), lax.dynamic_index_in_dim(x, i, 0, keepdims=False),
                lax.dynamic_index_in_dim(x, i, 1), lax.dynamic_update_slice_in_dim(x, u, i, axis=1),
                lax.dynamic_update_index_in_dim(x, u[:, 0], i, 1), lax.dynamic_slice(x, (i, -2), (2, 3)),
                lax.dynamic_update_slice(x, u, (-9, i)))

    for i in (1, -1, -3, 5):
        ours = tz.jit(lambda i: cases(tz.lax, i))(np.int64(i))
        for got, want in zip(ours, jax.jit(lambda i: cases(jax.lax, i))(np.int64(i)), strict=True):
            np.testing.assert_array_equal(got, want, err_msg=f"start {i}")
        for got, want in zip(tz.jit(lambda i=i: cases(tz.lax, i))(), cases(jax.lax, i), strict=True):
            np.testing.assert_array_equal(got, want, err_msg=f"Python start {i}")
    with pytest.raises(tz.TenzrError, match="dynamic_slice: 1 start indices for an array of rank 2"):
        tz.jit(lambda x: tz.lax.dynamic_slice(x, (0,), (1,)))(x)


def test_integer_arange_is_counted_not_spelled_out():
    """An integer arange is an iota (scaled and shifted), not a constant of its values: the
    module stays small however long it is, and the values are NumPy's."""
    for args in [(5,), (2, 11, 3), (10, 0, -2), (0,), (3, 3)]:
        np.testing.assert_array_equal(tz.jit(lambda args=args: tz.arange(*args))(), np.arange(*args, dtype=np.int32))
    assert tz.jit(lambda: tz.arange(3, dtype=tz.int64))().dtype == np.int64
    assert len(tz.jit(lambda: tz.arange(1_000_000)).lower()) < 2_000


def test_device_put_and_get_give_arrays(x64):
    tree = {"w": [1.0, 2.0], "b": (np.float64(3.0), 4)}
    put = tz.device_put(tree)
    want = jax.device_put(tree)
    for got, expected in zip(tz.tree_util.tree_leaves(put), jax.tree_util.tree_leaves(want), strict=True):
        assert np.asarray(got).dtype == np.asarray(expected).dtype and np.asarray(got) == np.asarray(expected)
    assert all(type(leaf) is np.ndarray for leaf in tz.tree_util.tree_leaves(tz.device_get(put)))
    assert all(type(leaf) is not tz.DeviceArray for leaf in tz.tree_util.tree_leaves(tz.device_put(tree, "cpu")))
    with pytest.raises(tz.TenzrError, match="unknown target 'cpu:0'"):
        tz.device_put(tree, "cpu:0")


def test_index_helpers_and_counts_match_numpy():
    x = np.array([[0, 3, 0], [1, 0, 2]])
    flat = np.array([0, 7, 11, -1])
    sorted_ = np.array([0.5, 1.0, 1.0, 2.5])
    values = np.array([0.0, 1.0, 3.0])

    def cases():
        return (tz.count_nonzero(x, axis=1), tz.bincount(np.array([0, 2, 2, 5]), length=6),
                tz.bincount(np.array([1, 1, 3]), weights=np.array([0.5, 0.25, 2.0]), length=4),
                *tz.unravel_index(flat, (3, 4)), *tz.triu_indices(4, 1), *tz.tril_indices_from(np.ones((3, 5)), -1),
                *tz.diag_indices(3), tz.indices((2, 3)), tz.searchsorted(sorted_, values),
                tz.searchsorted(sorted_, values, side="right"), tz.empty((2, 3)), tz.identity(3),
                tz.logspace(0.0, 2.0, 5, base=2.0))

    expected = (np.count_nonzero(x, axis=1), np.bincount([0, 2, 2, 5]), np.bincount([1, 1, 3], [0.5, 0.25, 2.0]),
                *jnp.unravel_index(flat, (3, 4)), *np.triu_indices(4, 1), *np.tril_indices_from(np.ones((3, 5)), -1),
                *np.diag_indices(3), np.indices((2, 3)), np.searchsorted(sorted_, values),
                np.searchsorted(sorted_, values, side="right"), np.zeros((2, 3)), np.identity(3),
                np.logspace(0.0, 2.0, 5, base=2.0))
    for got, want in zip(tz.jit(cases)(), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(tz.TenzrError, match="bincount: pass length="):
        tz.jit(lambda v: tz.bincount(v))(np.array([1, 2]))


def test_more_random_distributions_match_jax():
    key = tz.random.PRNGKey(5)
    for name in ("exponential", "laplace", "logistic", "cauchy"):
        ours = tz.jit(lambda k, name=name: getattr(tz.random, name)(k, (200,), tz.float64))(key)
        theirs = getattr(jax.random, name)(jax.random.PRNGKey(5), (200,), jnp.float64)
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12, err_msg=name)


LAX_X = np.random.default_rng(7).standard_normal((3, 5))
LAX_Y = np.random.default_rng(8).standard_normal((3, 5)) + 0.2
LAX_V = np.random.default_rng(9).standard_normal(7)
LAX_INTS = np.array([0, 1, -1, 255, 2 ** 31 - 1, -2 ** 31, 12345], np.int32)

# name, f(lax namespace) run by both (values compared in float64)
LAX_ROWS = [
    ("clamp_square_integer_pow_rem", lambda L: (L.clamp(-0.5, LAX_X, 0.7), L.square(LAX_X), L.integer_pow(LAX_X, 3),
                                               L.rem(LAX_X * 4, LAX_Y))),
    ("elementwise", lambda L: (L.cbrt(LAX_X), L.exp2(LAX_X), L.logistic(LAX_X), L.erfc(LAX_X), L.conj(LAX_X),
                               L.is_finite(LAX_X / (LAX_X > 0)))),
    ("shapes", lambda L: (L.expand_dims(LAX_X, (0, 2)), L.squeeze(LAX_X[None, :, None], (0, 2)),
                          L.broadcast_in_dim(LAX_V, (2, 7, 3), (1,)), L.broadcast(LAX_V, (2, 3)),
                          L.collapse(np.ones((2, 3, 4, 5)), 1, 3), L.collapse(np.ones((2, 3, 4)), 1))),
    ("fills_and_slices", lambda L: (L.full((2, 3), 1.5), L.full_like(LAX_X, 2, shape=(4,)),
                                    L.slice_in_dim(LAX_X, 1, 5, 2, axis=1),
                                    L.index_in_dim(LAX_X, -1, axis=1, keepdims=False),
                                    L.batch_matmul(np.ones((2, 3, 4)) * 0.5, np.arange(40.0).reshape(2, 4, 5)))),
    ("selections", lambda L: (L.select_n(LAX_X > 0, LAX_X, LAX_Y), L.select_n(np.array([0, 1, 2, 1, 0]), *LAX_X),
                              *L.top_k(LAX_X, 3), *L.top_k(np.array([1.0, 3.0, 3.0, 2.0, 1.0]), 4),
                              *L.sort_key_val(LAX_X, LAX_Y, dimension=0))),
    ("reductions", lambda L: (L.reduce_and(LAX_X > -1, (1,)), L.reduce_or(LAX_X > 1, (0,)),
                              L.reduce(LAX_X, 1.5, L.add, (1,)), L.reduce(LAX_X, -np.inf, L.max, (0, 1)))),
    ("cumulative", lambda L: (L.cumsum(LAX_X, axis=1, reverse=True), L.cumprod(LAX_X, axis=0), L.cummax(LAX_V),
                              L.cummin(LAX_X, axis=1, reverse=True), L.cumlogsumexp(LAX_X, axis=1))),
    # JAX's signatures for ops tz.lax also emits as written
    ("pad_slice_transpose", lambda L: (L.pad(LAX_X, 0.5, [(1, -1, 1), (0, 2, 0)]), L.pad(LAX_V, -1.0, [(-2, 3, 2)]),
                                       L.slice(LAX_X, (0, 1), (3, 5), (2, 2)), L.slice(LAX_V, (2,), (6,)),
                                       L.transpose(LAX_X[None], (2, 0, 1)), L.rev(LAX_X, (0, 1)))),
    ("concatenate_reshape_split", lambda L: (L.concatenate([LAX_X, LAX_Y, LAX_X[:1]], 0),
                                             L.reshape(LAX_X, (5, 3)), L.reshape(LAX_X, (5, 3), (1, 0)),
                                             *L.split(LAX_X, (2, 0, 3), axis=1))),
    ("types_and_iotas", lambda L: (L.convert_element_type(LAX_X * 3, np.int32), L.iota(np.float32, 4),
                                   L.broadcasted_iota(np.int32, (2, 3, 4), 1))),
    ("reductions_by_axes", lambda L: (L.reduce_sum(LAX_X, (0, 1)), L.reduce_max(LAX_X, (1,)),
                                      L.reduce_min(LAX_X, (0,)), L.reduce_prod(LAX_Y, (1,)),
                                      L.argmax(LAX_X, 1, np.int32), L.argmin(LAX_X, 0, np.int32))),
    ("comparisons_and_rounding", lambda L: (L.eq(LAX_X, LAX_X[::-1]), L.ne(LAX_X, 0.3), L.lt(LAX_X, LAX_Y),
                                            L.le(LAX_X, LAX_Y), L.gt(LAX_X, LAX_Y), L.ge(LAX_X, LAX_Y[::-1]),
                                            L.reciprocal(LAX_Y), L.round(LAX_X * 3),
                                            L.round(np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999999999999994])),
                                            L.round(np.array([-2.5, -0.5, 0.5, 1.5, 2.5]),
                                                    L.RoundingMethod.TO_NEAREST_EVEN))),
    ("sorts", lambda L: (L.sort(LAX_X, dimension=0), L.sort(LAX_V),
                         *L.sort((np.array([[2, 1, 2, 1, 0]] * 2), np.array([[5, 3, 1, 3, 9]] * 2), LAX_X[:2]),
                                 dimension=1, num_keys=2),
                         *L.sort((np.array([3.0, 1.0, 3.0, 2.0]), np.array([1.0, 2.0, 0.0, 4.0])), num_keys=1),
                         *L.approx_max_k(LAX_X, 2), *L.approx_min_k(LAX_X, 2, reduction_dimension=0))),
    ("bits_and_precision", lambda L: (L.population_count(LAX_INTS), L.clz(LAX_INTS),
                                      L.population_count(LAX_INTS.astype(np.int64) * 3),
                                      L.clz(LAX_INTS.astype(np.int64)),
                                      L.reduce_precision(LAX_X * 1000, 5, 2), L.reduce_precision(LAX_X, 8, 7),
                                      L.reduce_precision(LAX_X * 1e5, 5, 10), L.reduce_precision(LAX_X, 11, 52))),
    ("associative_scan", lambda L: (L.associative_scan(lambda a, b: (a[0] * b[0], a[1] * b[0] + b[1]),
                                                       (LAX_V + 2, LAX_V)),
                                    L.associative_scan(L.add, LAX_X, reverse=True, axis=1),
                                    *(L.associative_scan(L.add, np.arange(float(n))) for n in range(1, 10)))),
]


@pytest.mark.parametrize("row", LAX_ROWS, ids=[r[0] for r in LAX_ROWS])
def test_lax_conveniences_match_jax(row, x64):
    _, f = row
    got, want = jax.tree_util.tree_leaves(tz.jit(lambda: f(tz.lax))()), jax.tree_util.tree_leaves(f(jax.lax))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(np.asarray(g, float), np.asarray(w, float), rtol=1e-10, atol=1e-12)


def test_nextafter_matches_jax_bit_for_bit(x64):
    # (one ulp is below any tolerance: compared exactly, denormals and infinities included)
    x = np.array([*LAX_X.ravel(), 0.0, 1.0, -0.0, 2.0, np.inf, 5e-324, np.nan, 1.0])
    y = np.array([*LAX_Y.ravel(), 1.0, 1.0, -1.0, -np.inf, 0.0, -1.0, 0.0, np.nan])
    for dtype in (np.float64, np.float32):
        got = tz.jit(tz.lax.nextafter)(x.astype(dtype), y.astype(dtype))
        np.testing.assert_array_equal(got, jax.lax.nextafter(x.astype(dtype), y.astype(dtype)))
        np.testing.assert_array_equal(tz.jit(tz.nextafter)(x.astype(dtype), 0), np.nextafter(x.astype(dtype), 0))


def test_bitwise_count_counts_the_absolute_value_as_jax(x64):
    for ints in (LAX_INTS, LAX_INTS.astype(np.int64) * -3):
        np.testing.assert_array_equal(tz.jit(tz.bitwise_count)(ints), jnp.bitwise_count(ints))
        np.testing.assert_array_equal(tz.bitwise_count(ints), np.bitwise_count(ints))


def test_reduce_precision_is_linear_under_jvp_as_in_jax(x64):
    """JAX's rule, not the derivative (which is zero almost everywhere): the tangent rounded."""
    x, t = LAX_X * 3, LAX_Y * 7
    got = tz.jvp(lambda a: tz.lax.reduce_precision(a, 5, 2), (x,), (t,))
    want = jax.jvp(lambda a: jax.lax.reduce_precision(a, 5, 2), (x,), (t,))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


LAX_GRADS = [
    ("cummax", lambda L, a: (L.cummax(a, axis=1) ** 2).sum()),
    ("cumlogsumexp", lambda L, a: (L.cumlogsumexp(a, axis=1, reverse=True) * np.arange(5.0)).sum()),
    ("associative_scan", lambda L, a: (L.associative_scan(lambda p, q: (p[0] * q[0], p[1] * q[0] + q[1]),
                                                          (a[0] + 2, a[1]))[1] ** 2).sum()),
    ("clamp", lambda L, a: (L.clamp(-0.5, a, 0.7) * a).sum()),
    ("reduce_precision", lambda L, a: (L.reduce_precision(a * 3, 5, 2) * a).sum()),
    ("top_k", lambda L, a: (L.top_k(a, 2)[0] ** 2).sum()),
    ("sort_key_val", lambda L, a: (L.sort_key_val(a[0], a[1])[1] * np.arange(5.0)).sum()),
]


@pytest.mark.parametrize("row", LAX_GRADS, ids=[r[0] for r in LAX_GRADS])
def test_lax_convenience_gradients_match_jax(row):
    _, f = row
    np.testing.assert_allclose(tz.grad(lambda a: f(tz.lax, a))(LAX_X), jax.grad(lambda a: f(jax.lax, a))(LAX_X),
                               rtol=1e-10, atol=1e-12)


def test_lax_convenience_errors():
    with pytest.raises(tz.TenzrError, match="integer_pow: y must be a Python int"):
        tz.lax.integer_pow(LAX_X, 2.0)
    with pytest.raises(tz.TenzrError, match="top_k: k=9 is outside"):
        tz.lax.top_k(LAX_X, 9)
    with pytest.raises(tz.TenzrError, match="broadcast_dimensions"):
        tz.lax.broadcast_in_dim(LAX_V, (7, 2), (2,))
    with pytest.raises(tz.TenzrError, match=r"lax\.reduce: reduces one operand"):
        tz.lax.reduce(LAX_X, 0.0, lambda a, b: a + b, (0,))


def test_booleans_in_arithmetic_promote_as_jax(x64):
    """A bool with an int counts as an int; bools added (multiplied, max, min) stay bools,
    as logical or (and)."""
    x = np.array([1.0, 2.0, 3.0], np.float32)
    cases = (lambda np_, v: 3 + (np_.sum(v) > 1.0), lambda np_, v: (v > 1.5) + (v > 0.5),
             lambda np_, v: (v > 1.5) * (v > 2.5), lambda np_, v: (v > 1.5) * 2.5,
             lambda np_, v: np_.maximum(v > 1.5, v > 2.5), lambda np_, v: np_.minimum(v > 1.5, v > 0.5),
             lambda np_, v: (v > 1.5) + np.int32(2))
    for case in cases:
        got, want = tz.jit(lambda v, case=case: case(tz, v))(x), case(jnp, jnp.asarray(x))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_linear_transpose_jacobian_and_tree_as_jax():
    a = np.arange(6.0).reshape(2, 3)
    ct = np.array([1.0, -2.0])
    np.testing.assert_allclose(tz.linear_transpose(lambda x: a @ x, np.zeros(3))(ct)[0],
                               jax.linear_transpose(lambda x: jnp.asarray(a) @ x, jnp.zeros(3))(ct)[0])
    pair = tz.linear_transpose(lambda x, y: 2 * x + y.sum(), tz.ShapeDtypeStruct((2,), np.float64),
                               tz.ShapeDtypeStruct((3,), np.float64))(ct)
    want = jax.linear_transpose(lambda x, y: 2 * x + y.sum(), jax.ShapeDtypeStruct((2,), np.float64),
                                jax.ShapeDtypeStruct((3,), np.float64))(ct)
    for got, expected in zip(pair, want, strict=True):
        np.testing.assert_allclose(got, expected)
    x = np.arange(3.0)
    np.testing.assert_allclose(tz.jacobian(lambda v: v * tz.sin(v))(x), jax.jacobian(lambda v: v * jnp.sin(v))(x))
    tree = {"a": 1, "b": (2, [3, 4])}
    assert tz.tree.map(lambda v: v * 2, tree) == jax.tree.map(lambda v: v * 2, tree)
    assert tz.tree.leaves(tree) == jax.tree.leaves(tree)
    assert tz.tree.reduce(lambda u, v: u * 10 + v, tree) == jax.tree.reduce(lambda u, v: u * 10 + v, tree)
    assert tz.tree.reduce(lambda u, v: u + v, [], 7) == 7
    assert tz.tree.all([True, (1, 2)]) and not tz.tree.all([True, (0,)])
    leaves, structure = tz.tree.flatten(tree)
    assert tz.tree.unflatten(structure, leaves) == tree and tz.tree.structure(tree) == structure


def test_indexed_updates_cast_to_the_arrays_dtype_as_jax(x64):
    """`x.at[i].op(v)` with a traced `v` of a wider dtype updates in that dtype and casts the
    result back to x's, with JAX's FutureWarning only where promotion would not give x's dtype."""
    import warnings

    x = np.array([1.5, -2.0, 3.25, 0.5], np.float32)
    n = np.array([4, -3, 7, 2], np.int32)
    u = np.array([0.3, 1.7], np.float64)
    cases = (lambda v, w: v.at[1:3].multiply(w), lambda v, w: v.at[np.array([0, 3])].set(w),
             lambda v, w: v.at[:2].add(w), lambda v, w: v.at[2:].max(w))

    def called(jit, case, target, update):
        """The jitted case's result and whether it warned (update None: a weak Python int)."""
        fn, args = (jit(case), (target, update)) if update is not None else (jit(lambda t: case(t, 2)), (target,))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = fn(*args)
        return out, any(issubclass(w.category, FutureWarning) for w in caught)

    for case in cases:
        for target, update in ((x, u), (n, u), (x, u.astype(np.int32)), (n, u.astype(np.int32)), (n, None)):
            (got, warned), (want, jax_warned) = (called(jit, case, target, update) for jit in (tz.jit, jax.jit))
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
            assert warned == jax_warned, (target.dtype, np.asarray(update).dtype)


def test_jit_on_a_method_binds_its_instance_as_jax():
    """`@partial(jax.jit, static_argnums=0)` on a method: the instance is the first argument
    (a jitted function binds as a Python function does)."""
    import functools

    class Scaled:
        def __init__(self, k):
            self.k = k

        def __hash__(self):
            return hash(self.k)

        def __eq__(self, other):
            return isinstance(other, Scaled) and other.k == self.k

        @functools.partial(tz.jit, static_argnums=0)
        def apply(self, a):
            return a * self.k

        @functools.partial(tz.jit, static_argnames="self")
        def shifted(self, a):
            return a + self.k

    x = np.arange(3.0)
    np.testing.assert_array_equal(Scaled(2.0).apply(x), x * 2.0)
    np.testing.assert_array_equal(Scaled(3.0).apply(x), x * 3.0)
    np.testing.assert_array_equal(Scaled.apply(Scaled(4.0), x), x * 4.0)
    np.testing.assert_array_equal(Scaled(1.5).shifted(x), x + 1.5)


def test_stop_gradient_of_a_pytree_as_jax():
    """`stop_gradient(params)`: the same pytree back, no gradient through any leaf."""
    params = {"w": np.array([1.0, 2.0]), "b": (np.array(3.0), None)}
    held = tz.lax.stop_gradient(params)
    assert jax.tree_util.tree_structure(held) == jax.tree_util.tree_structure(params)

    def loss(np_, lax_):
        return lambda p: (p["w"] * lax_.stop_gradient(p)["w"]).sum() + p["b"][0] * lax_.stop_gradient(p["b"])[0]

    ours = tz.grad(loss(tz, tz.lax))(params)
    theirs = jax.grad(loss(jnp, jax.lax))(params)
    np.testing.assert_allclose(ours["w"], theirs["w"])
    np.testing.assert_allclose(ours["b"][0], theirs["b"][0])


def test_linalg_diagonal_takes_the_last_two_axes_as_jax():
    a = np.arange(24.0).reshape(2, 3, 4)
    for offset in (0, 1, -1):
        np.testing.assert_array_equal(tz.linalg.diagonal(a, offset=offset), jnp.linalg.diagonal(a, offset=offset))
    s = np.random.default_rng(3).standard_normal((2, 3, 3))
    s = s + s.transpose(0, 2, 1)  # (eigh of a stack read from one triangle used NumPy's diagonal of axes 0, 1)
    np.testing.assert_allclose(tz.linalg.eigh(np.tril(s), symmetrize_input=False)[0],
                               jnp.linalg.eigh(np.tril(s), symmetrize_input=False)[0], rtol=1e-12)


def test_relu6_derivative_is_zero_at_both_kinks_as_jax():
    x = np.array([-1.0, 0.0, 3.0, 6.0, 7.0, np.nan])
    np.testing.assert_array_equal(tz.nn.relu6(x), jax.nn.relu6(x))
    np.testing.assert_array_equal(tz.grad(lambda v: tz.nn.relu6(v).sum())(x[:5]),
                                  jax.grad(lambda v: jax.nn.relu6(v).sum())(x[:5]))


def test_python_number_arguments_are_weakly_typed_as_jax(x64):
    """A Python number passed to a jitted function takes the type of the arrays it meets
    (with x64, 2.5 times a float32 array stays float32, 2 times an int32 one int32), as in
    JAX; NumPy scalars keep their own type."""
    arrays = [np.ones(3, np.float16), np.ones(3, np.float32), np.arange(3, dtype=np.int32)]
    for a in arrays:
        for s in (2.5, 2, np.float32(2.5)):
            ours, theirs = tz.jit(lambda x, y: x * y)(a, s), jax.jit(lambda x, y: x * y)(a, s)
            assert ours.dtype == theirs.dtype, (a.dtype, s)
    batched = tz.vmap(lambda x, y: x * y, in_axes=(0, None))(np.ones((2, 3), np.float32), 2.5)
    assert batched.dtype == jax.vmap(lambda x, y: x * y, in_axes=(0, None))(np.ones((2, 3), np.float32), 2.5).dtype


def test_dtype_queries_and_array_type_as_jax(x64):
    """result_type and promote_types by JAX's rule (Python numbers and types weakly typed),
    NumPy's abstract types for issubdtype, and `tz.ndarray` for isinstance checks (JAX's
    `jnp.ndarray`: arrays Tenzr made, traced or not, and not NumPy's)."""
    cases = [(np.float32, 2.0), (np.int32, 2.0), (np.int32, float), (np.float16, np.float32), (1.0,), (1,),
             (np.ones(2, np.float32), 1), (np.int32, np.int64, np.bool_), (np.complex64, np.float64)]
    for args in cases:
        assert tz.result_type(*args) == jnp.result_type(*args), args
    assert tz.promote_types(np.int32, np.float16) == jnp.promote_types(np.int32, np.float16)
    assert tz.issubdtype(tz.float32, tz.floating) and tz.issubdtype(tz.int32, tz.integer)
    assert not tz.issubdtype(tz.int32, tz.inexact)
    made = tz.sin(np.ones(2))
    assert isinstance(made, tz.ndarray) and not isinstance(np.ones(2), tz.ndarray)
    assert tz.jit(lambda v: v * isinstance(v, tz.ndarray))(np.ones(2))[0] == 1.0


def test_array_creation_and_difference_names_as_jax():
    a = np.array([[1.0, 4.0], [9.0, 16.0]], np.float32)
    for ours, theirs in [(tz.ediff1d(a, to_begin=np.array([-1.0]), to_end=np.array([7.0, 8.0])),
                          jnp.ediff1d(a, to_begin=np.array([-1.0]), to_end=np.array([7.0, 8.0]))),
                         (tz.zeros_like(a, shape=(3,)), jnp.zeros_like(a, shape=(3,))),
                         (tz.full_like(a, 2, dtype=np.int32, shape=(1, 2)),
                          jnp.full_like(a, 2, dtype=np.int32, shape=(1, 2))),
                         (tz.empty_like(a), jnp.zeros_like(a)),
                         (tz.fix(np.array([-1.5, -0.5, 0.5, 2.7])), np.fix(np.array([-1.5, -0.5, 0.5, 2.7])))]:
        assert np.asarray(ours).dtype == np.asarray(theirs).dtype
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("x64_on", [False, True], ids=["x32", "x64"])
def test_eager_array_operators_promote_as_jax(x64_on):
    """NumPy's operators on tz's eager arrays (tz.asarray, results) promote by JAX's rule, as
    traced code does: integers meeting floats (arrays or Python floats) become float, an
    integer division or sin of integers is the default float, integer sums stay 32-bit."""
    ints, floats = np.array([1, 2, 3], np.int32), np.array([0.5, 1.5, 2.5], np.float32)
    halves, flags = np.array([1, 2, 4], np.float16), np.array([True, False, True])
    cases = {"i/2": lambda i, f, h, b: i / 2, "i/i": lambda i, f, h, b: i / i,
             "i*2.5": lambda i, f, h, b: i * 2.5, "i+f": lambda i, f, h, b: i + f,
             "h*i": lambda i, f, h, b: h * i, "b+f": lambda i, f, h, b: b + f,
             "i<f": lambda i, f, h, b: i < f, "i*1j": lambda i, f, h, b: i * 1j,
             "f**i": lambda i, f, h, b: f ** i, "i//2": lambda i, f, h, b: i // 2,
             "max(i,f)": lambda i, f, h, b: np.maximum(i, f) if isinstance(i, np.ndarray) else jnp.maximum(i, f),
             "sin(i)": lambda i, f, h, b: np.sin(i) if isinstance(i, np.ndarray) else jnp.sin(i),
             "i.sum()": lambda i, f, h, b: i.sum(), "b.sum()": lambda i, f, h, b: b.sum(),
             "i.mean()": lambda i, f, h, b: i.mean(), "i.cumsum()": lambda i, f, h, b: i.cumsum(),
             "f*2": lambda i, f, h, b: f * 2, "i+1": lambda i, f, h, b: i + 1}
    tz.config.update("jax_enable_x64", x64_on)
    jax.config.update("jax_enable_x64", x64_on)
    try:
        ours = [tz.asarray(a) for a in (ints, floats, halves, flags)]
        theirs = [jnp.asarray(a) for a in (ints, floats, halves, flags)]
        for name, case in cases.items():
            got, want = case(*ours), case(*theirs)
            assert np.asarray(got).dtype == want.dtype, name
            assert isinstance(got, tz.ndarray) or np.ndim(got) == 0, name
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-3, err_msg=name)
    finally:
        tz.config.update("jax_enable_x64", False)
        jax.config.update("jax_enable_x64", True)


def test_devices_and_the_default_backend_as_jax():
    """On this CPU-only machine JAX's and Tenzr's answers agree; a device is accepted
    wherever a target is (device_put, jit)."""
    ours, theirs = tz.devices(), jax.devices()
    assert [(repr(d), d.platform, d.id) for d in ours] == [(repr(d), d.platform, d.id) for d in theirs]
    assert tz.default_backend() == jax.default_backend() == "cpu"
    assert tz.device_count() == jax.device_count() and tz.local_device_count() == jax.local_device_count()
    assert tz.local_devices() == ours and isinstance(ours[0], tz.Device)
    np.testing.assert_array_equal(tz.jit(lambda x: x * 2, target=ours[0])(np.ones(2, np.float32)), [2.0, 2.0])
    np.testing.assert_array_equal(tz.device_put(np.ones(2), ours[0]), np.ones(2))
    with pytest.raises(tz.TenzrError, match="unknown backend 'tpu'"):
        tz.devices("tpu")
    ours, theirs = tz.jit(lambda x: x * 2)(np.ones(2, np.float32)), jax.jit(lambda x: x * 2)(np.ones(2, np.float32))
    assert (repr(ours.device), str(ours.device)) == (repr(theirs.device), str(theirs.device)) == ("CpuDevice(id=0)",
                                                                                                  "cpu:0")
    assert ours.devices() == {ours.device} and tz.asarray([1.0]).device == tz.devices()[0]
    from tenzr.runtime import device_available  # (Vulkan where the machine has a device: lavapipe in CI)

    if device_available("vulkan"):
        on_gpu = tz.device_put(np.ones(2, np.float32), tz.devices("vulkan")[0])
        assert on_gpu.device == tz.devices("vulkan")[0] and str(on_gpu.device) == "vulkan:0"


def test_debug_print_prints_what_jaxs_prints_as_programs_run(capsys):
    """tz.debug.print inside jit, under value_and_grad (once per forward run, not again in
    the adjoint), in loop bodies (in step order, also unrolled), in conditionals, under
    vmap (one line per element) and eagerly, against jax.debug.print's lines (which, as
    JAX's unordered prints, come in an order of their own outside a loop)."""
    def program(np_, lax_, debug):
        def f(x, y):
            z = np_.sin(x)
            debug.print("z = {} y = {y}", z, y=y)
            debug.print("no values")

            def body(i, v):
                debug.print("step {} v={}", i, v)
                return v * 2
            w = lax_.fori_loop(0, 3, body, z)
            w = lax_.cond(w.sum() > 0, lambda v: (debug.print("positive {}", v.sum()), v)[1], lambda v: v, w)
            debug.print("after {}", w)
            return (w * y).sum()
        return f

    def lines(run):
        capsys.readouterr()
        run()
        return capsys.readouterr().out.splitlines()

    x, y = np.array([0.5, 1.0], np.float32), np.float32(2.0)
    jax.config.update("jax_enable_x64", False)
    try:
        for ours_of, theirs_of in ((lambda f: f, lambda f: f), (tz.value_and_grad, jax.value_and_grad)):
            theirs = lines(lambda t=theirs_of: jax.block_until_ready(
                jax.jit(t(program(jnp, jax.lax, jax.debug)))(x, y)))
            ours = lines(lambda o=ours_of: tz.jit(o(program(tz, tz.lax, tz.debug)))(x, y))
            assert sorted(ours) == sorted(theirs) and len(ours) == 7
            assert [line for line in ours if line.startswith("step")] == [
                line for line in theirs if line.startswith("step")]
        batched = (np.arange(3, dtype=np.float32),)
        theirs = lines(lambda: jax.block_until_ready(jax.vmap(lambda v: (jax.debug.print("v={}", v), v)[1])(*batched)))
        ours = lines(lambda: tz.vmap(lambda v: (tz.debug.print("v={}", v), v)[1])(*batched))
        assert ours == theirs == ["v=0.0", "v=1.0", "v=2.0"]
    finally:
        jax.config.update("jax_enable_x64", True)
    assert lines(lambda: tz.debug.print("eager {x} {n}", x=np.arange(2.0), n=3)) == ["eager [0. 1.] 3"]
    assert lines(lambda: tz.jit(lambda v: tz.debug.print("{}", {"a": v, "b": (3, "s")}))(np.ones(2, np.float32))) == [
        str({"a": np.ones(2, np.float32), "b": (3, "s")})]
    with pytest.raises(tz.TenzrError, match="fmt must be a string"):
        tz.jit(lambda v: tz.debug.print(v))(np.ones(2, np.float32))


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-6), (np.float64, 1e-14)])
def test_ndtri_keeps_its_relative_precision_in_both_tails(dtype, rtol):
    """Against SciPy: from erfinv(2p - 1), 2p - 1 rounded to -1 in float32 below p = 3e-8,
    so ndtri(1e-10) was -inf (SciPy -6.3613), and 1e-5 was off by 7e-5. Its derivative is
    sqrt(2 pi) exp(ndtri(p)**2 / 2); 0 and 1 give -inf and inf, outside [0, 1] NaN."""
    p = np.array([1e-37, 1e-20, 1e-10, 1e-8, 1e-5, 0.01, 0.2, 0.5, 0.7, 0.9, 0.999, 1 - 1e-7], dtype)
    want = ss.ndtri(p.astype(np.float64))
    np.testing.assert_allclose(tz.scipy.special.ndtri(p), want, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(tz.scipy.stats.norm.ppf(p[:4]), want[:4], rtol=rtol)
    slope = tz.vmap(tz.grad(tz.scipy.special.ndtri))(p[2:])
    np.testing.assert_allclose(slope, np.sqrt(2 * np.pi) * np.exp(want[2:] ** 2 / 2), rtol=10 * rtol)
    edges = np.asarray(tz.scipy.special.ndtri(np.array([0.0, 1.0, -0.5, 1.5, np.nan], dtype)))
    assert edges[0] == -np.inf and edges[1] == np.inf and np.isnan(edges[2:]).all()


def test_erfcx_gradient_stays_finite_far_into_its_tail():
    """erfcx'(x) = 2x erfcx(x) - 2/sqrt(pi): in float32 from x = 10 the branch not taken,
    exp(x²)·erfc(x), overflowed, and its zero cotangent times inf made the gradient NaN."""
    x = np.array([-2.0, 0.5, 9.0, 10.0, 30.0, 1e3], np.float32)
    want = 2 * x.astype(np.float64) * ss.erfcx(x.astype(np.float64)) - 2 / np.sqrt(np.pi)
    np.testing.assert_allclose(tz.vmap(tz.grad(tz.scipy.special.erfcx))(x), want, rtol=2e-4, atol=1e-9)


@pytest.mark.parametrize("name", ["segment_sum", "segment_prod", "segment_max", "segment_min"])
def test_segment_reductions_match_jax(name):
    """jax.ops' segment reductions: rows combined per id, ids out of range dropped, empty
    segments the identity; num_segments from the ids outside a trace; gradients too."""
    data = np.arange(1.0, 13.0).reshape(6, 2) * np.array([1.0, -0.5])
    ids = np.array([0, 2, 2, 5, 0, 7])
    ours, theirs = getattr(tz.ops, name), getattr(jax.ops, name)
    np.testing.assert_array_equal(ours(data, ids, num_segments=6), theirs(data, ids, num_segments=6))
    np.testing.assert_array_equal(ours(data, ids), theirs(data, ids))
    np.testing.assert_array_equal(tz.jit(lambda d: ours(d, ids, 4))(data), theirs(data, ids, 4))
    weights = np.linspace(0.5, 1.5, 6)

    def loss(segment):
        return lambda w: (segment(data * w[:, None], ids, 6) ** 2).sum()

    if name == "segment_prod":  # (JAX differentiates it only with unique ids: central differences)
        h, rows = 1e-6, np.eye(6)
        want = [(loss(theirs)(weights + h * e) - loss(theirs)(weights - h * e)) / (2 * h) for e in rows]
        np.testing.assert_allclose(tz.grad(loss(ours))(weights), want, rtol=1e-6)
    else:
        np.testing.assert_allclose(tz.grad(loss(ours))(weights), jax.grad(loss(theirs))(weights))
    ints = np.arange(4, dtype=np.int32)
    np.testing.assert_array_equal(ours(ints, np.array([0, 0, 2, 2]), 3), theirs(ints, np.array([0, 0, 2, 2]), 3))
    negative = np.array([0, -1, 1, 3, 1])  # (a negative id is dropped, not counted from the end)
    np.testing.assert_array_equal(ours(data[:5], negative, 3), theirs(data[:5], negative, 3))
    if name in ("segment_max", "segment_min"):  # (JAX sums and multiplies no bools)
        flags = np.array([True, False, True, False])
        np.testing.assert_array_equal(ours(flags, np.array([0, 0, 1, 2]), 4), theirs(flags, np.array([0, 0, 1, 2]), 4))
    with pytest.raises(tz.TenzrError, match="pass num_segments="):
        tz.jit(lambda d, i: ours(d, i))(data, ids)


def test_where_with_a_condition_alone_is_nonzero_and_tenzr_numpy_is_tz():
    import tenzr.numpy as tnp

    c = np.array([[1, 0], [0, 3]])
    for got, want in zip(tz.where(c), jax.numpy.where(c), strict=True):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(tz.jit(lambda c: tz.where(c, size=3, fill_value=-1))(c),
                         jax.jit(lambda c: jax.numpy.where(c, size=3, fill_value=-1))(c), strict=True):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(tz.TenzrError, match="give both x and y, or neither"):
        tz.where(c, 1.0)
    assert tnp.sum is tz.sum and tz.numpy.linalg is tz.linalg
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        tnp.no_such_name  # noqa: B018


def test_lower_gives_the_module_text_with_jax_lowered_methods():
    """`jit(f).lower(...)` is the module's text (a str) with JAX's `as_text()` and
    `compile()`; the compiled function takes the arguments less the static ones, as JAX's."""
    f = tz.jit(lambda x, n: x * n, static_argnums=1)
    lowered = f.lower(np.ones(2), 3)
    assert isinstance(lowered, str) and lowered.as_text() == str(lowered) and "stablehlo.multiply" in lowered
    np.testing.assert_array_equal(lowered.compile()(np.full(2, 2.0)),
                                  jax.jit(lambda x, n: x * n, static_argnums=1).lower(np.ones(2), 3).compile()(
                                      np.full(2, 2.0)))
    np.testing.assert_allclose(tz.jit(tz.sin).lower(np.zeros(3)).compile()(np.ones(3)), np.sin(np.ones(3)))
    keyed = tz.jit(lambda x, *, k: x * k).lower(np.ones(2), k=2.0).compile()
    np.testing.assert_array_equal(keyed(np.ones(2), k=np.float64(5.0)), [5.0, 5.0])


def test_softmax_log_softmax_and_logsumexp_take_where_as_jax():
    """Masked attention's form: the entries `where` leaves out count for nothing (softmax 0,
    log_softmax -inf there), a row with none left gives 0 and -inf; gradients too."""
    x = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0], [1.0, 1.0, 1.0]])
    mask = np.array([[True, False, True], [True, True, True], [False, False, False]])
    for name in ("softmax", "log_softmax"):
        np.testing.assert_allclose(getattr(tz.nn, name)(x, where=mask), getattr(jax.nn, name)(x, where=mask))
    np.testing.assert_allclose(tz.nn.logsumexp(x, axis=1, where=mask), jax.nn.logsumexp(x, axis=1, where=mask))
    np.testing.assert_allclose(tz.scipy.special.logsumexp(x, axis=1, where=mask),
                               jax.scipy.special.logsumexp(x, axis=1, where=mask))
    for name in ("softmax", "log_softmax"):  # (a mask with more dims than x: both broadcast)
        np.testing.assert_allclose(getattr(tz.nn, name)(x[:1], where=mask[:2]),
                                   getattr(jax.nn, name)(x[:1], where=mask[:2]))
    w = np.array([0.3, -0.2, 0.9])
    for name in ("softmax", "log_softmax"):  # (the entries left out weigh nothing: -inf in log_softmax)
        ours = tz.grad(lambda v, n=name: tz.where(mask[:2], getattr(tz.nn, n)(v, where=mask[:2]) * w, 0.0).sum())(x[:2])
        theirs = jax.grad(lambda v, n=name: jax.numpy.where(mask[:2], getattr(jax.nn, n)(v, where=mask[:2]) * w,
                                                            0.0).sum())(x[:2])
        assert np.isfinite(ours).all()
        np.testing.assert_allclose(ours, theirs, atol=1e-15)
