"""`tz.random` against JAX's own generator (the same Threefry counters: equal bits), inside
jit and eagerly, plus statistics for `randint`, whose rule is not JAX's."""

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


def test_randint_is_uniform_over_its_range():
    draws = tz.jit(lambda k: tz.random.randint(k, (20000,), -3, 7))(tz.random.PRNGKey(1))
    assert draws.dtype == np.int32 and draws.min() == -3 and draws.max() == 6
    counts = np.bincount(draws + 3, minlength=10)
    # 10 classes of expected 2000: a chi-square of 9 degrees of freedom, far below its 0.1% tail (27.9)
    assert ((counts - 2000.0) ** 2 / 2000.0).sum() < 27.9


def test_bad_keys_are_clear_errors():
    with pytest.raises(tz.TenzrError, match=r"a key has shape \(2,\)"):
        tz.random.normal(np.zeros(3, np.int32), (2,))
    with pytest.raises(tz.TenzrError, match="two 32-bit words"):
        tz.random.normal(np.zeros(2), (2,))
    with pytest.raises(tz.TenzrError, match="float32 or float64"):
        tz.random.uniform(tz.random.PRNGKey(0), (2,), np.int32)


def test_choice_draws_jaxs_numbers():
    """Without replacement, with probabilities, or both: JAX's numbers (a permutation's first
    rows, the cumulated p searched by uniform numbers, Gumbel top-k), from an int or an
    array along an axis. With replacement and no p, randint's own (range and shape)."""
    key, jkey = tz.random.key(3), jax.random.PRNGKey(3)
    p = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    a = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    for options in [dict(shape=(2,), replace=False), dict(shape=(5,), p=p), dict(shape=(3,), replace=False, p=p)]:
        np.testing.assert_array_equal(tz.random.choice(key, 4, **options), jax.random.choice(jkey, 4, **options))
        np.testing.assert_array_equal(tz.random.choice(key, a, **options), jax.random.choice(jkey, a, **options))
    np.testing.assert_array_equal(tz.random.choice(key, a, shape=(2,), replace=False, axis=1),
                                  jax.random.choice(jkey, a, shape=(2,), replace=False, axis=1))
    drawn = tz.random.choice(key, 5, shape=(200, 3))
    assert drawn.shape == (200, 3) and set(np.unique(drawn)) == {0, 1, 2, 3, 4}
    with pytest.raises(tz.TenzrError, match="cannot take a larger sample"):
        tz.random.choice(key, 3, shape=(4,), replace=False)
