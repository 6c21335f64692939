"""`tz.example_libraries` (stax, optimizers), the `tz.lax` convolution, pooling and product
names they stand on, and `tz.nn.initializers`, against JAX's own (float64) and against the
distributions' known moments."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tenzr as tz
from tenzr.example_libraries import optimizers, stax

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy
jax_stax = pytest.importorskip("jax.example_libraries.stax")
jax_optimizers = pytest.importorskip("jax.example_libraries.optimizers")

RNG = np.random.default_rng(3)
X = RNG.normal(size=(2, 7, 6, 3))
W = RNG.normal(size=(3, 2, 3, 4))
NHWC = ("NHWC", "HWIO", "NHWC")


def _max_diff(a, b):
    leaves_a, leaves_b = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(leaves_a) == len(leaves_b)
    return max(float(np.max(np.abs(np.asarray(x) - np.asarray(y)))) for x, y in zip(leaves_a, leaves_b, strict=True))


LAX_CASES = [
    ("conv_same_strided", lambda lax, x, w: lax.conv_general_dilated(x, w, (2, 1), "SAME", dimension_numbers=NHWC)),
    ("conv_same_lower", lambda lax, x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME_LOWER", dimension_numbers=NHWC)),
    ("conv_pairs_dilated", lambda lax, x, w: lax.conv_general_dilated(x, w, (1, 1), [(1, 2), (0, 1)], (1, 2), (2, 1),
                                                                      NHWC)),
    ("conv_nchw_groups", lambda lax, x, w: lax.conv_general_dilated(
        x.transpose(0, 3, 1, 2)[:, :2], w.transpose(3, 2, 0, 1)[:, :1], (1, 2), "VALID", feature_group_count=2)),
    ("conv_transpose_same", lambda lax, x, w: lax.conv_transpose(x, w, (2, 2), "SAME")),
    ("conv_transpose_valid_kernel", lambda lax, x, w: lax.conv_transpose(x, w[..., :3], (3, 2), "VALID",
                                                                         transpose_kernel=True)),
    ("max_window_same", lambda lax, x, w: lax.reduce_window(x, -np.inf, lax.max, (1, 3, 2, 1), (1, 2, 2, 1), "SAME")),
    ("sum_window_pairs", lambda lax, x, w: lax.reduce_window(x, 0.0, lax.add, (1, 3, 2, 1), (1, 2, 2, 1),
                                                             [(0, 0), (1, 1), (0, 1), (0, 0)])),
    ("dot_general_batched", lambda lax, x, w: lax.dot_general(x[0, :2], w[0], (((2,), (1,)), ((0,), (0,))))),
    ("dot_precision", lambda lax, x, w: lax.dot(x[0, 0], w[0, 0], precision=lax.Precision.HIGHEST)),
]


@pytest.mark.parametrize("f", [c[1] for c in LAX_CASES], ids=[c[0] for c in LAX_CASES])
def test_lax_convolutions_windows_and_products_match_jax(f):
    got = tz.jit(lambda x, w: f(tz.lax, x, w))(X, W)
    want = jax.jit(lambda x, w: f(jax.lax, x, w))(X, W)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # and the gradient of a weighted sum, through the same ops
    weights = RNG.normal(size=want.shape)
    g = tz.grad(lambda x, w: tz.sum(f(tz.lax, x, w) * weights), argnums=(0, 1))(X, W)
    h = jax.grad(lambda x, w: jnp.sum(f(jax.lax, x, w) * weights), argnums=(0, 1))(X, W)
    assert _max_diff(g, h) < 1e-11


def test_lax_shape_helpers_match_jax():
    for strides, padding in [((2, 1), "SAME"), ((1, 1), "VALID"), ((3, 2), [(1, 0), (2, 2)])]:
        assert tz.lax.conv_general_shape_tuple(X.shape, W.shape, strides, padding, NHWC) == tuple(
            int(d) for d in jax.lax.conv_general_shape_tuple(X.shape, W.shape, strides, padding, NHWC))
    for strides, padding in [((2, 2), "SAME"), ((3, 2), "VALID")]:
        assert tz.lax.conv_transpose_shape_tuple(X.shape, W.shape, strides, padding, NHWC) == tuple(
            int(d) for d in jax.lax.conv_transpose_shape_tuple(X.shape, W.shape, strides, padding, NHWC))
    for mode in ["SAME", "SAME_LOWER", "VALID"]:
        assert tz.lax.padtype_to_pads((7, 6), (3, 4), (2, 1), mode) == [
            tuple(p) for p in jax.lax.padtype_to_pads((7, 6), (3, 4), (2, 1), mode)]
    assert tz.lax.conv_dimension_numbers(X.shape, W.shape, NHWC) == tuple(
        tuple(s) for s in jax.lax.conv_dimension_numbers(X.shape, W.shape, NHWC))


def _cnn(lib):
    return lib.serial(lib.Conv(4, (3, 3), padding="SAME"), lib.Relu, lib.MaxPool((2, 2), strides=(2, 2)),
                      lib.Conv(6, (3, 3)), lib.BatchNorm(), lib.Tanh, lib.AvgPool((2, 2), padding="SAME"),
                      lib.Flatten, lib.Dense(10), lib.LogSoftmax)


def _nll(apply, np_):
    return lambda params, x, y: -np_.mean(np_.sum(apply(params, x) * y, axis=1))


def test_a_stax_cnn_matches_jax_in_shapes_value_and_gradient():
    init, apply = _cnn(stax)
    jax_init, jax_apply = _cnn(jax_stax)
    shape, params = init(tz.random.key(0), (5, 12, 12, 1))
    jax_shape, jax_params = jax_init(jax.random.key(0), (5, 12, 12, 1))
    assert tuple(shape) == tuple(int(d) for d in jax_shape) == (5, 10)
    assert [np.shape(p) for p in jax.tree_util.tree_leaves(params)] == [
        np.shape(p) for p in jax.tree_util.tree_leaves(jax_params)]
    params = jax.tree_util.tree_map(lambda p: np.asarray(p, np.float64), params)  # both nets get these
    x, y = RNG.normal(size=(5, 12, 12, 1)), np.eye(10)[RNG.integers(0, 10, 5)]
    value, grads = tz.jit(tz.value_and_grad(_nll(apply, tz)))(params, x, y)
    jax_value, jax_grads = jax.value_and_grad(_nll(jax_apply, jnp))(params, x, y)
    np.testing.assert_allclose(value, jax_value, rtol=1e-13)
    assert _max_diff(grads, jax_grads) < 1e-12


def test_stax_combinators_and_dropout():
    init, apply = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Identity), stax.FanInConcat(),
                              stax.Dropout(0.5), stax.Gelu)
    shape, params = init(tz.random.key(1), (4, 3))
    assert tuple(shape) == (4, 6)
    x = RNG.normal(size=(4, 3))
    out = np.asarray(tz.jit(lambda p, x, k: apply(p, x, rng=k))(params, x, tz.random.key(2)))
    dense = x @ np.asarray(params[1][0][0]) + np.asarray(params[1][0][1])
    gelu = np.asarray(jax.nn.gelu(np.concatenate([dense, x], axis=1) / 0.5))
    kept = out != 0  # dropout keeps entries with probability 0.5 and scales them by 1 / 0.5
    assert 0 < kept.sum() < kept.size
    np.testing.assert_allclose(out[kept], gelu[kept], rtol=1e-5, atol=1e-6)
    with pytest.raises(tz.TenzrError, match="Dropout layer requires apply_fun to be called with a PRNG key"):
        tz.jit(lambda p, x: apply(p, x))(params, x)


def _mlp(lib):
    return lib.serial(lib.Dense(8), lib.Tanh, lib.Dense(3))


OPTIMIZERS = [
    ("sgd", lambda o: (0.1,)), ("momentum", lambda o: (0.1, 0.9)), ("nesterov", lambda o: (0.1, 0.9)),
    ("adagrad", lambda o: (0.1,)), ("rmsprop", lambda o: (0.01,)), ("rmsprop_momentum", lambda o: (0.01,)),
    ("adam", lambda o: (0.01,)), ("adamax", lambda o: (0.01,)), ("sm3", lambda o: (0.1,)),
    ("sgd", lambda o: (o.exponential_decay(0.1, 10, 0.5),)),
    ("adam", lambda o: (o.piecewise_constant([2, 4], [0.1, 0.01, 0.001]),)),
    ("sgd", lambda o: (o.polynomial_decay(0.1, 3, 0.01),)),
    ("momentum", lambda o: (o.inverse_time_decay(0.1, 2, 0.5, staircase=True), 0.5)),
]


@pytest.mark.parametrize("name, args", OPTIMIZERS, ids=[f"{n}{k}" for k, (n, _) in enumerate(OPTIMIZERS)])
def test_optimizers_take_the_steps_jax_takes(name, args, x64):
    init, apply = _mlp(stax)
    jax_apply = _mlp(jax_stax)[1]
    _, params = init(tz.random.key(0), (6, 4))
    params = jax.tree_util.tree_map(lambda p: np.asarray(p, np.float64), params)
    x, y = RNG.normal(size=(6, 4)), RNG.normal(size=(6, 3))
    loss = lambda np_, f: lambda p: np_.mean((f(p, x) - y) ** 2)  # noqa: E731 (the same net for both)
    opt_init, opt_update, get_params = getattr(optimizers, name)(*args(optimizers))
    jax_init, jax_update, jax_get_params = getattr(jax_optimizers, name)(*args(jax_optimizers))
    step = tz.jit(lambda i, s: opt_update(i, tz.grad(loss(tz, apply))(get_params(s)), s))
    jax_step = lambda i, s: jax_update(i, jax.grad(loss(jnp, jax_apply))(jax_get_params(s)), s)  # noqa: E731 (JAX's sm3 fails under jit)
    state, jax_state = opt_init(params), jax_init(params)
    for i in range(5):
        state, jax_state = step(i, state), jax_step(i, jax_state)
    assert _max_diff(get_params(state), jax_get_params(jax_state)) < 1e-12


def test_optimizer_utilities_match_jax():
    tree = {"a": RNG.normal(size=(3, 2)), "b": [RNG.normal(size=4)]}
    np.testing.assert_allclose(optimizers.l2_norm(tree), jax_optimizers.l2_norm(tree), rtol=1e-14)
    assert _max_diff(optimizers.clip_grads(tree, 0.5), jax_optimizers.clip_grads(tree, 0.5)) < 1e-15
    opt_init, _, get_params = optimizers.adam(0.1)
    state = opt_init(tree)
    again = optimizers.pack_optimizer_state(optimizers.unpack_optimizer_state(state))
    assert again.tree_def == state.tree_def and _max_diff(get_params(again), tree) == 0.0
    with pytest.raises(tz.TenzrError, match="did not match the parameter tree structure"):
        optimizers.sgd(0.1)[1](0, [1.0], optimizers.sgd(0.1)[0]((1.0, 2.0)))
    with pytest.raises(tz.TenzrError, match="boundaries must be one shorter than values"):
        optimizers.piecewise_constant([1, 2], [0.1, 0.2])


@pytest.mark.parametrize("name, variance, bound", [
    ("glorot_normal", 2 / (300 + 200), 2 * math.sqrt(2 / 500) / 0.87962566103423978),
    ("glorot_uniform", 2 / 500, math.sqrt(3 * 2 / 500)),
    ("he_normal", 2 / 300, 2 * math.sqrt(2 / 300) / 0.87962566103423978),
    ("lecun_uniform", 1 / 300, math.sqrt(3 / 300)),
])
def test_initializers_draw_the_variance_and_range_they_promise(name, variance, bound):
    w = np.asarray(getattr(tz.nn.initializers, name)()(tz.random.key(0), (300, 200), np.float64))
    assert w.shape == (300, 200) and w.dtype == np.float64
    assert abs(w.mean()) < 4 * math.sqrt(variance / w.size)
    assert abs(w.var() / variance - 1) < 0.02  # 60,000 draws: the ratio's standard error is under 0.6%
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound


def test_truncated_normal_and_the_fixed_initializers():
    draws = np.asarray(tz.random.truncated_normal(tz.random.key(4), 0.5, 3.0, (100_000,), np.float64))
    assert draws.min() > 0.5 and draws.max() < 3.0
    scipy_stats = pytest.importorskip("scipy.stats")
    np.testing.assert_allclose(draws.mean(), scipy_stats.truncnorm(0.5, 3.0).mean(), atol=0.005)
    key = tz.random.key(0)
    np.testing.assert_array_equal(tz.nn.initializers.constant(3.0)(key, (2,)), [3.0, 3.0])
    assert tz.nn.initializers.zeros(key, (2, 2)).dtype == np.float32
    small = np.asarray(tz.nn.initializers.normal(1e-6)(key, (1000,)))
    assert 0.8e-6 < small.std() < 1.2e-6
    with pytest.raises(tz.TenzrError, match="default in_axis=-2; give in_axis"):
        tz.nn.initializers.glorot_normal()(key, (3,))


def test_bad_layouts_and_reductions_are_clear_errors():
    with pytest.raises(tz.TenzrError, match="layout 'NHW' must name 4 distinct dims"):
        tz.jit(lambda x, w: tz.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHW", "HWIO",
                                                                                                  "NHWC")))(X, W)
    with pytest.raises(tz.TenzrError, match=r"computation must be tz\.lax\.add, mul, max or min"):
        tz.jit(lambda x: tz.lax.reduce_window(x, 0.0, lambda a, b: a - b, (1, 2, 2, 1), (1, 1, 1, 1), "VALID"))(X)
    with pytest.raises(tz.TenzrError, match="string padding with lhs_dilation"):
        tz.jit(lambda x, w: tz.lax.conv_general_dilated(x, w, (1, 1), "SAME", (2, 2), None, NHWC))(X, W)
    with pytest.raises(tz.TenzrError, match=r"dimension_numbers .* do not fit operands"):
        tz.jit(lambda a: tz.lax.dot_general(a, a, (((5,), (0,)), ((), ()))))(np.ones((2, 2)))


@pytest.mark.parametrize("name, args", [("ConvTranspose", (4, (3, 3), (2, 2), "SAME")),
                                        ("Conv1DTranspose", (4, (3,), (2,), "VALID")),
                                        ("GeneralConv", (("NCHW", "OIHW", "NHWC"), 4, (2, 3)))])
def test_convolution_layers_match_jax_stax_in_shape_and_value(name, args):
    x = RNG.normal(size=(2, 5, 3) if name == "Conv1DTranspose" else (2, 5, 5, 3))
    init, apply = getattr(stax, name)(*args)
    jax_init, jax_apply = getattr(jax_stax, name)(*args)
    shape, params = init(tz.random.key(0), x.shape)
    params = jax.tree_util.tree_map(lambda p: np.asarray(p, np.float64), params)
    assert shape == tuple(int(d) for d in jax_init(jax.random.PRNGKey(0), x.shape)[0])
    np.testing.assert_allclose(np.asarray(apply(params, x)), np.asarray(jax_apply(params, x)), rtol=1e-12, atol=1e-12)


def test_stax_initializes_the_parameters_jax_does(x64):
    """The same key gives JAX's parameters: stax splits keys per layer and Dense splits
    again, so every layer after the first reads keys unpacked from split results."""
    layers = (stax.Dense(16), stax.Relu, stax.Dense(8), stax.Dense(3))
    jax_layers = (jax_stax.Dense(16), jax_stax.Relu, jax_stax.Dense(8), jax_stax.Dense(3))
    shape, params = stax.serial(*layers)[0](tz.random.PRNGKey(5), (-1, 12))
    jax_shape, jax_params = jax_stax.serial(*jax_layers)[0](jax.random.PRNGKey(5), (-1, 12))
    assert shape == jax_shape
    for ours, theirs in zip(tz.tree_util.tree_leaves(params), jax.tree_util.tree_leaves(jax_params), strict=True):
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-12, atol=1e-14)
