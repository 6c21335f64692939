"""`tz.vmap` against `jax.vmap` in float64 (JAX is the test extra's reference; without it
these tests skip): axes, pytrees, nesting, and composition with grad, jvp and jit."""

from __future__ import annotations

import numpy as np
import pytest

import tenzr as tz

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

rng = np.random.default_rng(11)


def r(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape)


def _close(got, want, rtol=1e-10, atol=1e-12):
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    assert got_tree == want_tree, (got_tree, want_tree)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        assert np.shape(g) == np.shape(w), (np.shape(g), np.shape(w))
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


def both(make, *args, **kwargs):
    """tz.vmap(make(tz)) and jax.vmap(make(jnp)) on args, compared."""
    _close(tz.vmap(make(tz, tz), **kwargs)(*args), jax.vmap(make(jnp, jax), **kwargs)(*args))


def test_elementwise_with_none_and_axis_1():
    def make(np_, _):
        return lambda x, y: np_.sin(x) * y + np_.exp(-x * x)

    both(make, r(4, 3), r(3), in_axes=(0, None))
    both(make, r(3, 4), r(3, 4), in_axes=(1, 1))
    both(make, r(4, 3), r(4, 3), out_axes=1)


def test_reductions_softmax_and_matmul():
    def make(np_, lib):
        return lambda x, w: lib.nn.softmax(x @ w, axis=-1).max(axis=0) + (x * x).sum()

    both(make, r(5, 2, 3), r(3, 4), in_axes=(0, None))
    both(make, r(5, 2, 3), r(5, 3, 4))


def test_indexing_gathers_with_batched_indices():
    idx = np.array([[0, 2, 1], [1, 1, 0], [2, 0, 0], [1, 2, 2]])
    x = r(4, 3)
    _close(tz.vmap(lambda x, i: x[i] * 2.0)(x, idx), jax.vmap(lambda x, i: x[i] * 2.0)(x, idx))
    _close(tz.vmap(lambda x, i: tz.take_along_axis(x, i, axis=0))(x, idx),
           jax.vmap(lambda x, i: jnp.take_along_axis(x, i, axis=0))(x, idx))


def test_dynamic_slice_with_batched_starts():
    x, starts = r(4, 6), np.array([0, 2, 3, 1])
    got = tz.vmap(lambda x, s: tz.lax.dynamic_slice(x, [s], [3]))(x, starts)
    want = jax.vmap(lambda x, s: jax.lax.dynamic_slice(x, [s], [3]))(x, starts)
    _close(got, want)


def test_sort_argmax_and_scatter_add():
    def make(np_, _):
        return lambda x: np_.sort(x) + np_.argmax(x).astype(np.float64)

    both(make, r(5, 4))
    idx = np.array([0, 2, 0])
    x, u = r(4, 3), r(4, 3)
    got = tz.vmap(lambda x, u: tz.lax.scatter(x, idx, u, mode="add"))(x, u)
    want = jax.vmap(lambda x, u: x.at[idx].add(u))(x, u)
    _close(got, want)


def test_convolution():
    def tz_conv(x, w):
        return tz.nn.conv(x, w, padding=1)

    def jax_conv(x, w):
        return jax.lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)))

    x, w = r(3, 2, 2, 5, 5), r(4, 2, 3, 3)
    _close(tz.vmap(tz_conv, in_axes=(0, None))(x, w), jax.vmap(jax_conv, in_axes=(0, None))(x, w))
    ws = r(3, 4, 2, 3, 3)
    _close(tz.vmap(tz_conv)(x, ws), jax.vmap(jax_conv)(x, ws))


def test_nested_vmap_and_dict_pytrees():
    def make(np_, _):
        return lambda p, x: {"y": np_.tanh(x @ p["w"] + p["b"]), "n": (x * x).sum()}

    p = {"w": r(3, 2), "b": r(2)}
    both(make, p, r(5, 3), in_axes=({"w": None, "b": None}, 0))
    x = r(4, 6, 3)
    got = tz.vmap(tz.vmap(make(tz, tz), in_axes=(None, 0)), in_axes=(None, 1))(p, x)
    _close(got, jax.vmap(jax.vmap(make(jnp, jax), in_axes=(None, 0)), in_axes=(None, 1))(p, x))


def _loss(np_):
    def loss(w, x, y):
        return ((np_.tanh(x @ w) - y) ** 2).sum()

    return loss


def test_per_example_gradients_match_jax_and_a_loop():
    w, xs, ys = r(3, 2), r(6, 1, 3), r(6, 1, 2)
    got = tz.vmap(tz.grad(_loss(tz)), in_axes=(None, 0, 0))(w, xs, ys)
    _close(got, jax.vmap(jax.grad(_loss(jnp)), in_axes=(None, 0, 0))(w, xs, ys))
    loop = np.stack([tz.grad(_loss(tz))(w, xs[k], ys[k]) for k in range(6)])
    _close(got, loop)


def test_jit_of_vmap_of_value_and_grad_and_grad_of_a_vmapped_loss():
    w, xs, ys = r(3, 2), r(6, 1, 3), r(6, 1, 2)
    step = tz.jit(tz.vmap(tz.value_and_grad(_loss(tz)), in_axes=(None, 0, 0)))
    _close(step(w, xs, ys), jax.vmap(jax.value_and_grad(_loss(jnp)), in_axes=(None, 0, 0))(w, xs, ys))

    def total(np_, lib):
        return lambda w: lib.vmap(_loss(np_), in_axes=(None, 0, 0))(w, xs, ys).sum()

    _close(tz.grad(total(tz, tz))(w), jax.grad(total(jnp, jax))(w))


def test_vmap_of_jvp_and_of_a_loop():
    x, ts = r(4), r(5, 4)
    got = tz.vmap(lambda t: tz.jvp(lambda v: tz.sin(v) * v, (x,), (t,))[1])(ts)
    _close(got, jax.vmap(lambda t: jax.jvp(lambda v: jnp.sin(v) * v, (x,), (t,))[1])(ts))

    def make(np_, lib):
        return lambda x: lib.lax.fori_loop(0, 3, lambda i, v: np_.sin(v) * 1.5, x)

    both(make, r(5, 4))


def test_bad_vmap_arguments_are_clear_errors():
    with pytest.raises(tz.TenzrError, match="inconsistent sizes"):
        tz.vmap(lambda a, b: a + b)(r(3, 2), r(4, 2))
    with pytest.raises(tz.TenzrError, match="out of range"):
        tz.vmap(lambda a: a, in_axes=2)(r(3, 2))
    with pytest.raises(tz.TenzrError, match="in_axes has 1 entries"):
        tz.vmap(lambda a, b: a + b, in_axes=(0,))(r(3), r(3))
