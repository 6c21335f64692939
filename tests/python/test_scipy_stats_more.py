"""`tz.scipy.stats`' distributions beyond norm, gamma, beta, chi2, t, poisson, dirichlet and
multivariate_normal, and rankdata and sem: values against SciPy (float64, tails included)
and JAX (float64 and float32), gradients against JAX's. Each row puts a distribution's
functions into one jitted call (one compile)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

import tenzr as tz

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

X = np.concatenate([-np.geomspace(40, 1e-3, 9), [0.0], np.geomspace(1e-3, 40, 9)])
POS = np.geomspace(1e-4, 60, 15)
Q = np.array([1e-12, 1e-7, 1e-3, 0.1, 0.3, 0.5, 0.7, 0.9, 1 - 1e-3, 1 - 1e-7])
K = np.arange(0.0, 12.0)
LOC_SCALE = {"cauchy": (0.3, 1.7), "expon": (-0.2, 1.5), "gumbel_l": (0.4, 2.0), "gumbel_r": (-0.4, 1.3),
             "laplace": (0.2, 0.9), "logistic": (-0.1, 1.4), "uniform": (-1.0, 3.0)}


def _funcs(module, names, *params):
    """A function of (x, q) with each named function of `module` (a tz or JAX module) at x,
    or at q for ppf and isf, and the parameters."""
    def f(x, q):
        return {n: getattr(module, n)(q if n in ("ppf", "isf") else x, *params) for n in names}
    return f


# name, the functions compared, the parameters after x, x
ROWS = [
    ("cauchy", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"], LOC_SCALE["cauchy"], X * 1e3),
    ("expon", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"], LOC_SCALE["expon"], X),
    ("gumbel_l", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"], LOC_SCALE["gumbel_l"], X / 2),
    ("gumbel_r", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"], LOC_SCALE["gumbel_r"], X / 2),
    ("laplace", ["logpdf", "pdf", "cdf"], LOC_SCALE["laplace"], X),
    ("logistic", ["logpdf", "pdf", "cdf", "sf", "ppf", "isf"], LOC_SCALE["logistic"], X),
    ("uniform", ["logpdf", "pdf", "cdf", "ppf"], LOC_SCALE["uniform"], X / 10),
    ("pareto", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"], (2.5, -0.5, 1.5), POS),
    ("truncnorm", ["logpdf", "logcdf", "logsf"], (-1.0, 2.5, 0.2, 1.3), X / 10),
    ("truncnorm_tail", ["logpdf", "logcdf", "logsf"], (4.0, 9.0), np.linspace(3.5, 9.5, 13)),
    ("vonmises", ["logpdf", "pdf"], (np.array([0.01, 0.5, 3.0, 40.0, 700.0])[:, None],), np.linspace(-3, 3, 7)),
    ("wrapcauchy", ["logpdf", "pdf"], (np.array([0.01, 0.5, 0.9, 0.999])[:, None],), np.linspace(-1, 7, 9)),
    ("gennorm", ["logpdf", "pdf", "cdf"], (np.array([0.5, 1.0, 2.0, 4.5])[:, None],), X / 8),
    ("bernoulli", ["logpmf", "pmf", "cdf", "ppf"], (0.3,), np.array([-1.0, 0, 1, 2])),
    ("binom", ["logpmf", "pmf"], (10.0, np.array([0.0, 0.2, 0.7, 1.0])[:, None]), K),
    ("nbinom", ["logpmf", "pmf"], (3.5, 0.35), K),
    ("geom", ["logpmf", "pmf"], (0.25,), K),
    ("betabinom", ["logpmf", "pmf"], (10.0, 2.5, 0.7), K),
]


def _module(name, lib):
    return getattr(lib.scipy.stats, name.split("_tail")[0])


def _scipy(name, fn_name, x, q, params):
    """SciPy's value (ppf and isf at q; JAX's pmf names are SciPy's too)."""
    dist = getattr(st, name.split("_tail")[0])
    arg = q if fn_name in ("ppf", "isf") else x
    return getattr(dist, fn_name)(arg, *params)


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_values_match_scipy_and_jax_in_float64(row):
    name, names, params, x = row
    q = Q if name != "bernoulli" else np.array([0.5, 0.7, 0.71, 1.0])
    ours = tz.jit(_funcs(_module(name, tz), names, *params))(x, q)
    theirs = jax.jit(_funcs(_module(name, jax), names, *params))(x, q)
    for n in names:
        # (betaln as a sum of gammaln keeps 1e-6 of relative precision in betabinom's)
        rtol = 1e-6 if name == "betabinom" else 1e-8
        np.testing.assert_allclose(ours[n], _scipy(name, n, x, q, params), rtol=rtol, atol=1e-300, err_msg=n)
        ref = np.asarray(theirs[n])
        finite = np.isfinite(ref) & (np.abs(ref) > 1e-290)  # (JAX's tails compared with SciPy's above)
        keep = finite & ~_jax_inaccurate(name, n, np.broadcast_to(x if n not in ("ppf", "isf") else q, ref.shape))
        np.testing.assert_allclose(np.asarray(ours[n])[keep], ref[keep], rtol=rtol * 10, atol=1e-300, err_msg=n)


def _jax_inaccurate(name, fn_name, at):
    """Where JAX's formula loses precision that ours keeps (checked against SciPy above):
    Cauchy's cdf below -1e4 and its quantiles near 0 and 1, expon's logcdf near loc, the
    Gumbel's 1 - exp(-t) tails, the generalized normal's lower tail, Pareto's cdf near its
    start, the truncated normal's upper tail."""
    tails = {("cauchy", "cdf"): at < -1e3, ("cauchy", "logcdf"): at < -1e3, ("cauchy", "sf"): at > 1e3,
             ("cauchy", "logsf"): at > 1e3, ("cauchy", "ppf"): (at < 0.01) | (at > 0.99),
             ("cauchy", "isf"): (at < 0.01) | (at > 0.99), ("expon", "logcdf"): at < 0,
             ("gumbel_r", "sf"): at > 5, ("gumbel_l", "cdf"): at < -5, ("gennorm", "cdf"): at < -1,
             ("pareto", "cdf"): at < 1.5, ("pareto", "logcdf"): at < 1.5, ("gumbel_r", "logsf"): at > 15,
             ("gumbel_l", "logcdf"): at < -15}
    return tails.get((name, fn_name), np.zeros(np.shape(at), bool))


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_values_match_scipy_in_float32(row, jax_without_x64):
    name, names, params, x = row
    q = Q[2:-1] if name != "bernoulli" else np.array([0.5, 0.7, 0.71, 1.0])  # (1e-7 is 1 - 1e-7 in float32)
    params32 = tuple(np.float32(p) if np.ndim(p) == 0 else np.asarray(p, np.float32) for p in params)
    x32, q32 = x.astype(np.float32), q.astype(np.float32)
    ours = tz.jit(_funcs(_module(name, tz), names, *params32))(x32, q32)
    for n in names:
        assert np.asarray(ours[n]).dtype == np.float32, n
        ref = _scipy(name, n, x32.astype(np.float64), q32.astype(np.float64), tuple(np.float64(p) for p in params32))
        log = n.startswith("log")  # (a log's absolute error is the relative error of its value)
        np.testing.assert_allclose(ours[n], ref, rtol=2e-5 if not log else 1e-5, atol=2e-6 if log else 1e-37,
                                   err_msg=n)


GRAD_ROWS = [("cauchy", ["logpdf", "cdf", "logsf", "ppf"], (0.3, 1.7)),
             ("gumbel_r", ["logpdf", "sf", "logcdf"], (-0.4, 1.3)),
             ("expon", ["logpdf", "logcdf", "sf"], (-0.2, 1.5)), ("pareto", ["logpdf", "logsf"], (2.5, -0.5, 1.5)),
             ("truncnorm", ["logpdf", "logcdf"], (-1.0, 2.5, 0.2, 1.3)), ("gennorm", ["logpdf", "cdf"], (1.5,)),
             ("wrapcauchy", ["logpdf"], (0.6,)), ("logistic", ["logpdf", "isf"], (0.1, 1.2)),
             ("nbinom", ["logpmf"], (3.5, 0.35)), ("binom", ["logpmf"], (10.0, 0.4)), ("geom", ["logpmf"], (0.25,))]


@pytest.mark.parametrize("part", [0, 1, 2])
def test_gradients_match_jax(part):
    """The gradients of several distributions' functions at once (a third of GRAD_ROWS per
    compile: all of them made a dispatch with more buffers than IREE's CPU runtime takes), in
    x and in their first parameter, inside their supports."""
    x, q, k = np.linspace(0.1, 0.9, 5) * 4, np.linspace(0.1, 0.9, 5), np.arange(1.0, 6.0)

    def total(lib, shift, scale):
        out = 0.0
        for name, names, params in GRAD_ROWS[part::3]:
            module = getattr(lib.scipy.stats, name)
            for n in names:
                at = q if n in ("ppf", "isf") else k if n == "logpmf" else x + (1.0 if name == "pareto" else 0.0)
                out = out + lib.numpy.sum(getattr(module, n)(at + shift * 0.01, params[0] * scale, *params[1:]))
        return out

    one = np.float64(1.0)
    ours = tz.jit(tz.grad(lambda s, c: total(tz, s, c), (0, 1)))(one, one)
    theirs = np.array(jax.jit(jax.grad(lambda s, c: total(jax, s, c), (0, 1)))(one, one))
    assert np.isfinite(ours).all()  # (JAX's truncnorm.logcdf has a NaN slope in a; ours is finite)
    np.testing.assert_allclose(np.array(ours)[np.isfinite(theirs)], theirs[np.isfinite(theirs)], rtol=1e-7)


def test_laplace_cdf_gradient_is_finite_in_the_far_tail():
    x = np.array([-800.0, -1.0, 1.0, 800.0])
    g = tz.grad(lambda v: tz.sum(tz.scipy.stats.laplace.cdf(v)))(x)
    np.testing.assert_allclose(g, st.laplace.pdf(x), rtol=1e-12)  # (JAX's is NaN at -800)


def test_cauchy_quantiles_keep_their_precision_in_float32(jax_without_x64):
    q = np.array([1e-30, 1e-9, 0.2, 0.8, 1 - 2 ** -23], np.float32)
    np.testing.assert_allclose(tz.scipy.stats.cauchy.ppf(q), st.cauchy.ppf(q.astype(np.float64)), rtol=3e-6)
    np.testing.assert_allclose(tz.scipy.stats.cauchy.isf(q), st.cauchy.isf(q.astype(np.float64)), rtol=3e-6)


def test_bad_parameters_give_nan_as_jax():
    x = np.array([0.5, 1.0])
    for ours, theirs in [
        (tz.scipy.stats.gumbel_r.logpdf(x, 0.0, -1.0), jax.scipy.stats.gumbel_r.logpdf(x, 0.0, -1.0)),
        (tz.scipy.stats.vonmises.logpdf(x, -1.0), jax.scipy.stats.vonmises.logpdf(x, -1.0)),
        (tz.scipy.stats.wrapcauchy.logpdf(x, 1.5), jax.scipy.stats.wrapcauchy.logpdf(x, 1.5)),
        (tz.scipy.stats.truncnorm.logpdf(x, 2.0, 1.0), jax.scipy.stats.truncnorm.logpdf(x, 2.0, 1.0)),
        (tz.scipy.stats.betabinom.logpmf(x, 5.0, -1.0, 1.0), jax.scipy.stats.betabinom.logpmf(x, 5.0, -1.0, 1.0)),
        (tz.scipy.stats.bernoulli.cdf(x, 1.5), jax.scipy.stats.bernoulli.cdf(x, 1.5)),
        (tz.scipy.stats.expon.ppf(np.array([-0.1, 1.1]), 0.0, 1.0), jax.scipy.stats.expon.ppf(np.array([-0.1, 1.1]))),
    ]:
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata_matches_scipy(method):
    a = np.array([[3.0, 1.0, 2.0, 2.0, 5.0, 1.0], [0.0, 0.0, 0.0, 4.0, -1.0, 4.0]])
    np.testing.assert_array_equal(tz.scipy.stats.rankdata(a, method), st.rankdata(a, method))
    np.testing.assert_array_equal(tz.scipy.stats.rankdata(a, method, axis=1), st.rankdata(a, method, axis=1))
    np.testing.assert_array_equal(tz.scipy.stats.rankdata(a.T, method, axis=0), st.rankdata(a.T, method, axis=0))
    with_nan = a.copy()
    with_nan[1, 2] = np.nan
    np.testing.assert_array_equal(tz.scipy.stats.rankdata(with_nan, method, axis=1),
                                  jax.scipy.stats.rankdata(with_nan, method, axis=1))


def test_sem_matches_scipy():
    a = np.cos(np.arange(12.0)).reshape(3, 4)
    np.testing.assert_allclose(tz.scipy.stats.sem(a), st.sem(a), rtol=1e-12)
    np.testing.assert_allclose(tz.scipy.stats.sem(a, axis=1, ddof=0, keepdims=True),
                               st.sem(a, axis=1, ddof=0, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(tz.scipy.stats.sem(a, axis=None), st.sem(a, axis=None), rtol=1e-12)
    a[1, 2] = np.nan
    np.testing.assert_allclose(tz.scipy.stats.sem(a, axis=1, nan_policy="omit"),
                               st.sem(a, axis=1, nan_policy="omit"), rtol=1e-7)
