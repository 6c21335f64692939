"""`tz.random` against JAX's own generator (the same Threefry counters: equal bits), inside
jit and eagerly. The distributions
JAX draws by rejection (gamma and those made from it, poisson, binomial) replay JAX's loops
with its keys, so they too are compared with JAX's numbers, not with statistics."""

from __future__ import annotations

import numpy as np
import pytest

import tenzr as tz

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


def _words(x):
    """JAX's uint32 key words, from the int32 words tz.random holds."""
    return np.asarray(x).view(np.uint32)


@pytest.mark.parametrize("seed", [0, 42, 2 ** 40 + 5, -3])
def test_keys_split_and_fold_in_give_jaxs_words(seed):
    key, jkey = tz.random.PRNGKey(seed), jax.random.PRNGKey(seed)
    assert key.dtype == tz.random.split(key).dtype == tz.random.bits(key).dtype == jkey.dtype == np.uint32
    np.testing.assert_array_equal(_words(key), jkey)
    np.testing.assert_array_equal(_words(tz.random.split(key)), jax.random.split(jkey))
    np.testing.assert_array_equal(_words(tz.random.split(key, (2, 3))), jax.random.split(jkey, (2, 3)))
    np.testing.assert_array_equal(_words(tz.random.fold_in(key, 12345)), jax.random.fold_in(jkey, 12345))
    np.testing.assert_array_equal(_words(tz.random.bits(key, (3, 5))), jax.random.bits(jkey, (3, 5), jnp.uint32))


def test_distributions_match_jax_inside_jit():
    def draws(key):
        a, b, c = tz.random.split(key, 3)
        return {
            "uniform": tz.random.uniform(a, (4, 3), minval=-2.0, maxval=3.0),
            "uniform64": tz.random.uniform(b, (5,), np.float64),
            "normal": tz.random.normal(c, (6,)),
            "normal64": tz.random.normal(a, (2, 2), np.float64),
            "bernoulli": tz.random.bernoulli(b, np.float32(0.3), (7,)),
            "gumbel": tz.random.gumbel(c, (3,)),
            "categorical": tz.random.categorical(a, np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])), axis=1,
                                                 shape=(4, 2)),
            "permutation": tz.random.permutation(b, 10),
            "permuted_rows": tz.random.permutation(c, np.arange(12.0).reshape(4, 3)),
        }

    ours = tz.jit(draws)(tz.random.PRNGKey(7))
    jkey = jax.random.PRNGKey(7)
    a, b, c = jax.random.split(jkey, 3)
    theirs = {
        "uniform": jax.random.uniform(a, (4, 3), jnp.float32, minval=-2.0, maxval=3.0),
        "uniform64": jax.random.uniform(b, (5,), jnp.float64),
        "normal": jax.random.normal(c, (6,), jnp.float32),
        "normal64": jax.random.normal(a, (2, 2), jnp.float64),
        "bernoulli": jax.random.bernoulli(b, np.float32(0.3), (7,)),
        "gumbel": jax.random.gumbel(c, (3,), jnp.float32),
        "categorical": jax.random.categorical(a, np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])), axis=1,
                                              shape=(4, 2)),
        "permutation": jax.random.permutation(b, 10),
        "permuted_rows": jax.random.permutation(c, np.arange(12.0).reshape(4, 3)),
    }
    for name, want in theirs.items():
        want = np.asarray(want)
        assert ours[name].shape == want.shape, name
        if want.dtype.kind == "f":
            assert ours[name].dtype == want.dtype, name
            np.testing.assert_allclose(ours[name], want, rtol=2e-6, err_msg=name)  # erfinv's last bits
        else:
            np.testing.assert_array_equal(ours[name], want, err_msg=name)


def test_eager_draws_are_reproducible_and_keys_accept_uint32_words():
    key = tz.random.PRNGKey(3)
    first = tz.random.normal(key, (3,))
    np.testing.assert_array_equal(first, tz.random.normal(key, (3,)))
    jax_key = np.asarray(jax.random.PRNGKey(3))  # uint32 words, as a constant of the trace
    np.testing.assert_array_equal(tz.jit(lambda: tz.random.normal(jax_key, (3,)))(), first)
    assert not np.array_equal(first, tz.random.normal(tz.random.split(key)[0], (3,)))


def test_randint_draws_jaxs_int32_numbers():
    """JAX's modulo rule on two words per number: equal draws inside jit and eagerly, with
    negative bounds, arrays of bounds, empty spans (minval), a maxval past int32's range
    (one more value) and the widest span."""
    cases = [((7,), 0, 10), ((5, 3), -3, 7), ((6,), 5, 5), ((6,), 9, 2), ((6,), 0, 2 ** 31),
             ((6,), -2 ** 31, 2 ** 31 - 1), ((6,), -2 ** 40, 2 ** 40), ((6,), 0, 2 ** 16 + 3),
             ((4,), np.array([0, 10, -5, 100]), np.array([3, 20, 5, 1000]))]
    key = tz.random.PRNGKey(42)
    ours = tz.jit(lambda k: [tz.random.randint(k, *case) for case in cases])(key)
    theirs = [jax.random.randint(jax.random.PRNGKey(42), *case, dtype=np.int32) for case in cases]
    for case, got, want in zip(cases, ours, theirs, strict=True):
        assert got.dtype == want.dtype == np.int32, case
        np.testing.assert_array_equal(got, want, err_msg=str(case))
    np.testing.assert_array_equal(tz.random.randint(key, (5, 3), -3, 7), theirs[1])


@pytest.mark.parametrize("wide", [False, True])
def test_randint_and_bits_of_every_integer_type_are_jaxs(wide):
    """8- to 64-bit, signed and unsigned (64-bit ones with x64), inside jit: bounds past the
    type's range are clipped as JAX clips them."""
    kinds = ["int8", "uint8", "int16", "uint16", "int32", "uint32"] + (["int64", "uint64"] if wide else [])
    bounds = [(0, 10), (-5, 5), (-128, 300), (7, -2), (0, 2 ** 31 - 1), (-2 ** 31, 2 ** 31 - 1)]
    with jax.enable_x64(wide):
        before = tz.config.read("jax_enable_x64")
        tz.config.update("jax_enable_x64", wide)
        try:
            unsigned = [k for k in kinds if k.startswith("u")]
            ours = tz.jit(lambda k: ([tz.random.randint(k, (6,), lo, hi, kind) for kind in kinds for lo, hi in bounds],
                                     [tz.random.bits(k, (5,), kind) for kind in unsigned]))(tz.random.PRNGKey(7))
        finally:
            tz.config.update("jax_enable_x64", before)
        jkey = jax.random.PRNGKey(7)
        theirs = ([jax.random.randint(jkey, (6,), lo, hi, kind) for kind in kinds for lo, hi in bounds],
                  [jax.random.bits(jkey, (5,), kind) for kind in unsigned])
    for got, want in zip([*ours[0], *ours[1]], [*theirs[0], *theirs[1]], strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_multinomial_draws_jaxs_counts():
    """Inside jit and eagerly, with n broadcast to a batch shape, and clone is the key."""
    key, jkey = tz.random.PRNGKey(3), jax.random.PRNGKey(3)
    p = np.array([0.2, 0.5, 0.3], np.float32)
    n = np.array([5.0, 50.0], np.float32)
    ours = tz.jit(lambda k: (tz.random.multinomial(k, n, p, shape=(2, 3)),
                             tz.random.multinomial(k, 100.0, p[::-1])))(key)
    with jax.enable_x64(False):
        theirs = (jax.random.multinomial(jkey, n, p, shape=(2, 3)), jax.random.multinomial(jkey, 100.0, p[::-1]))
    for got, want in zip(ours, theirs, strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(tz.random.multinomial(tz.random.clone(key), n, p, shape=(2, 3)), theirs[0])


def test_key_data_and_wrap_key_data_are_jaxs_words():
    key, jkey = tz.random.key(5), jax.random.PRNGKey(5)
    for keys, jkeys in ((key, jkey), (tz.random.split(key, 3), jax.random.split(jkey, 3))):
        words = tz.random.key_data(keys)
        assert words.dtype == np.uint32
        np.testing.assert_array_equal(words, jax.random.key_data(jkeys))
        np.testing.assert_array_equal(tz.random.key_data(tz.random.wrap_key_data(words)), words)
    np.testing.assert_array_equal(tz.random.key_data(np.asarray(key).view(np.int32)), key)  # (int32 words too)
    drawn = tz.jit(lambda k: tz.random.normal(tz.random.wrap_key_data(tz.random.key_data(k)), (3,)))(key)
    with jax.enable_x64(False):
        np.testing.assert_array_equal(drawn, jax.random.normal(jkey, (3,)))
    with pytest.raises(tz.TenzrError, match="only the threefry2x32 generator"):
        tz.random.wrap_key_data(np.zeros(2, np.uint32), impl="rbg")


def test_bad_keys_are_clear_errors():
    with pytest.raises(tz.TenzrError, match=r"a key has shape \(2,\)"):
        tz.random.normal(np.zeros(3, np.int32), (2,))
    with pytest.raises(tz.TenzrError, match="two 32-bit words"):
        tz.random.normal(np.zeros(2), (2,))
    with pytest.raises(tz.TenzrError, match="float32 or float64"):
        tz.random.uniform(tz.random.PRNGKey(0), (2,), np.int32)


def test_choice_draws_jaxs_numbers():
    """With or without replacement, with probabilities, or both: JAX's numbers (randint's, a
    permutation's first rows, the cumulated p searched by uniform numbers, Gumbel top-k),
    from an int or an array along an axis."""
    key, jkey = tz.random.key(3), jax.random.PRNGKey(3)
    p = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    a = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    for options in [dict(shape=(2,), replace=False), dict(shape=(5,), p=p), dict(shape=(3,), replace=False, p=p)]:
        np.testing.assert_array_equal(tz.random.choice(key, 4, **options), jax.random.choice(jkey, 4, **options))
        np.testing.assert_array_equal(tz.random.choice(key, a, **options), jax.random.choice(jkey, a, **options))
    np.testing.assert_array_equal(tz.random.choice(key, a, shape=(2,), replace=False, axis=1),
                                  jax.random.choice(jkey, a, shape=(2,), replace=False, axis=1))
    with jax.enable_x64(False):  # (as tz here: with x64, JAX's choice draws int64 randint's)
        replaced = [jax.random.choice(jkey, 5, shape=(20, 3)), jax.random.choice(jkey, a, shape=(2,), axis=1)]
    np.testing.assert_array_equal(tz.random.choice(key, 5, shape=(20, 3)), replaced[0])
    np.testing.assert_array_equal(tz.random.choice(key, a, shape=(2,), axis=1), replaced[1])
    with pytest.raises(tz.TenzrError, match="cannot take a larger sample"):
        tz.random.choice(key, 3, shape=(4,), replace=False)


def _assert_like_jax(ours, theirs, rtol, atol=0.0):
    """Same shapes and dtypes as JAX's draws; floats equal to within rtol (and atol), the
    rest exactly."""
    for name, want in theirs.items():
        got, want = np.asarray(ours[name]), np.asarray(want)
        assert (got.shape, got.dtype) == (want.shape, want.dtype), name
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)


_MEAN = np.array([1.0, -1.0, 0.5], np.float32)
_COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]], np.float32)


def _transformed_draws(random, key):
    """Distributions JAX makes from uniform or normal numbers (most from the same key and
    shape, so that one hash serves them all)."""
    a, b = random.split(key)
    return {
        "lognormal": random.lognormal(a, np.float32(0.5), (6,)),
        "rademacher": random.rademacher(a, (6,)),
        "maxwell": random.maxwell(a, (6,)),
        "double_sided_maxwell": random.double_sided_maxwell(b, np.float32(1.0), np.array([1.0, 2.0], np.float32)),
        "pareto": random.pareto(a, np.float32(3.0), (6,)),
        "rayleigh": random.rayleigh(a, np.float32(2.0), (6,)),
        "wald": random.wald(b, np.array([0.5, 1.0, 4.0], np.float32)),
        "weibull_min": random.weibull_min(a, np.float32(2.0), np.float32(1.5), (6,)),
        "geometric": random.geometric(a, np.float32(0.3), (6,)),
        "triangular": random.triangular(a, np.float32(-1.0), np.float32(0.5), np.float32(2.0), (6,)),
        "orthogonal": random.orthogonal(a, 3, (2,)),
        "semi_orthogonal": random.orthogonal(b, 2, m=3),
        "multivariate_normal": random.multivariate_normal(a, _MEAN, _COV, (6,)),
        "multivariate_normal_eigh": random.multivariate_normal(a, _MEAN, _COV, (6,), method="eigh"),
        "multivariate_normal_svd": random.multivariate_normal(a, _MEAN, _COV, (6,), method="svd"),
    }


def test_transformed_uniform_and_normal_draws_match_jax_inside_jit():
    """JAX's numbers (its defaults without x64: float32 and int32, as tz's). With eigh or
    svd, multivariate_normal's factor has the decomposition's column signs: the draws'
    coordinates along cov's eigenvectors are JAX's up to sign."""
    ours = tz.jit(lambda key: _transformed_draws(tz.random, key))(tz.random.PRNGKey(11))
    with jax.enable_x64(False):
        theirs = jax.jit(lambda key: _transformed_draws(jax.random, key))(jax.random.PRNGKey(11))
    _, vectors = np.linalg.eigh(_COV.astype(np.float64))
    for method in ("eigh", "svd"):
        got, want = (np.abs((d.pop(f"multivariate_normal_{method}") - _MEAN) @ vectors) for d in (ours, theirs))
        np.testing.assert_allclose(got, want, atol=1e-5, err_msg=method)
    _assert_like_jax(ours, theirs, rtol=2e-6)


def _gamma_draws(random, key):
    """The distributions made from JAX's gamma sampler (gamma and loggamma themselves are
    compared in the gradient's test), on 4 x 3 elements each."""
    a = np.array([0.2, 1.0, 4.5], np.float32)
    return {
        "beta": random.beta(key, a, np.float32(2.0), (4, 3)),
        "dirichlet": random.dirichlet(key, a, (4,)),
        "t": random.t(key, a, (4, 3)),
        "chisquare": random.chisquare(key, a, (4, 3)),
        "f": random.f(key, np.float32(3.0), np.float32(0.7), (4, 3)),
        "generalized_normal": random.generalized_normal(key, np.float32(1.5), (4, 3)),
        "ball": random.ball(key, 3, np.float32(1.5), (4,)),
    }


def test_gamma_family_matches_jax_inside_jit():
    """beta, dirichlet, t, chisquare, f, generalized_normal and ball, made from gamma or
    loggamma numbers as JAX makes them, give JAX's numbers (to the rounding of log and pow)."""
    ours = tz.jit(lambda key: _gamma_draws(tz.random, key))(tz.random.PRNGKey(5))
    with jax.enable_x64(False):
        theirs = jax.jit(lambda key: _gamma_draws(jax.random, key))(jax.random.PRNGKey(5))
    _assert_like_jax(ours, theirs, rtol=2e-5)


def test_gamma_draws_and_their_slopes_in_the_shape_are_jaxs():
    """Marsaglia and Tsang's rejection loop, each element drawing with its own key until
    accepted, gives JAX's numbers, in gamma and loggamma (which boosts a < 1 in log space);
    their derivatives in the shape a are JAX's implicit reparameterization (the slope of a
    sample with its CDF held), for shapes on both sides of 1 and samples on both sides of a."""
    a = np.array([0.1, 0.6, 1.0, 2.5, 7.0, 40.0], np.float32)

    def loss(random, a, key):
        draws = {"gamma": random.gamma(key, a, (50, 6)), "loggamma": random.loggamma(key, a, (50, 6))}
        return draws["gamma"].sum() + (draws["loggamma"] * np.float32(0.5)).sum(), draws

    (_, ours), slope = tz.jit(tz.value_and_grad(lambda a, key: loss(tz.random, a, key), has_aux=True))(
        a, tz.random.PRNGKey(3))
    with jax.enable_x64(False):
        (_, theirs), jax_slope = jax.jit(jax.value_and_grad(lambda a, key: loss(jax.random, a, key), has_aux=True))(
            a, jax.random.PRNGKey(3))
    _assert_like_jax(ours, theirs, rtol=2e-5, atol=2e-5)  # (loggamma near 0: absolute)
    np.testing.assert_allclose(slope, jax_slope, rtol=1e-5)


def test_poisson_and_binomial_match_jax_inside_jit():
    """Both branches of each: Knuth's products and Hörmann's rejection (lam from 10), the
    inversion and BTRS (n min(p, 1-p) above 10, p above 1/2 drawn as n - Binomial(n, 1-p))."""
    lam = np.array([0.0, 0.5, 3.0, 9.9, 10.0, 25.0, 400.0], np.float32)
    n = np.array([0.0, 5.0, 20.0, 100.0, 1000.0, 30.0, 200.0], np.float32)
    p = np.array([0.3, 0.9, 0.5, 0.05, 0.4, 0.7, 0.8], np.float32)

    def draws(random, key):
        return {"poisson": random.poisson(key, lam, (200, 7)), "binomial": random.binomial(key, n, p, (200, 7))}

    ours = tz.jit(lambda key: draws(tz.random, key))(tz.random.PRNGKey(2))
    with jax.enable_x64(False):
        theirs = jax.jit(lambda key: draws(jax.random, key))(jax.random.PRNGKey(2))
    _assert_like_jax(ours, theirs, rtol=0)


def test_eager_draws_with_x64_are_float64_and_int64_as_jaxs(x64):
    """Called eagerly with jax_enable_x64: 64-bit uniform numbers under the gamma loop, and
    rademacher's int64 from float64 uniform numbers, as JAX's with x64."""
    key, jkey = tz.random.PRNGKey(4), jax.random.PRNGKey(4)
    a = np.array([0.5, 3.0], np.float64)
    _assert_like_jax({"gamma": tz.random.gamma(key, a, (20, 2)), "rademacher": tz.random.rademacher(key, (9,))},
                     {"gamma": jax.random.gamma(jkey, a, (20, 2)), "rademacher": jax.random.rademacher(jkey, (9,))},
                     rtol=1e-12)


def test_bad_distribution_arguments_are_clear_errors():
    key = tz.random.PRNGKey(0)
    with pytest.raises(tz.TenzrError, match=r"tz.random.gamma: the parameters' shapes \(3,\) must broadcast to "
                                            r"shape \(2,\)"):
        tz.random.gamma(key, np.ones(3, np.float32), (2,))
    with pytest.raises(tz.TenzrError, match="method must be 'cholesky', 'eigh' or 'svd', got 'qr'"):
        tz.random.multivariate_normal(key, _MEAN, _COV, method="qr")
    with pytest.raises(tz.TenzrError, match=r"mean must be \[..., n\] and cov \[..., n, n\]"):
        tz.random.multivariate_normal(key, _MEAN, _COV[:2])
    with pytest.raises(tz.TenzrError, match="n and m must be nonnegative ints"):
        tz.random.orthogonal(key, 2.5)
    with pytest.raises(tz.TenzrError, match="alpha must have at least one axis"):
        tz.random.dirichlet(key, 1.0)
    with pytest.raises(tz.TenzrError, match="integer numbers are int32 or int64"):
        tz.random.poisson(key, 3.0, dtype=np.float32)
