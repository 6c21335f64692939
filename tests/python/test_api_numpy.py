"""Every NumPy-named function of `tz`: forward values against NumPy, and gradients against
central finite differences of the NumPy implementation itself (float64).

All rows go through one jitted function and one `tz.vjp`, so the table costs two compiles.
"""

from __future__ import annotations

import numpy as np
import pytest
from harness import rng_for
from op_table import conv_ref

import tenzr as tz

H = 1e-6


def _logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def r(name, *shape, positive=False):
    rng = rng_for(name + str(shape))
    return rng.uniform(0.5, 2.0, shape) if positive else rng.standard_normal(shape)


IDX = np.array([2, 0, 2])
ROWS = [
    # name, tz function, NumPy function, float inputs, differentiable
    ("add_scalar", lambda x: x + 2.0, lambda x: x + 2.0, [r("a", 3)], True),
    ("rsub_array", lambda x: np.ones(3) - x, lambda x: np.ones(3) - x, [r("b", 3)], True),
    ("mul_div_pow", lambda x, y: x * y / (y * y + 1.0) ** 1.5, lambda x, y: x * y / (y * y + 1.0) ** 1.5,
     [r("c", 2, 3), r("d", 3)], True),
    ("rpow", lambda x: 2.0 ** x, lambda x: 2.0 ** x, [r("e", 3)], True),
    ("square_neg_pos_abs", lambda x: tz.square(-x) + abs(+x), lambda x: np.square(-x) + abs(+x), [r("f", 4)], True),
    ("matmul_operator", lambda a, b: a @ b, lambda a, b: a @ b, [r("g", 2, 3), r("h", 3, 4)], True),
    ("matmul_vector", lambda a, b: tz.matmul(a, b), np.matmul, [r("i", 3), r("j", 2, 3, 4)], True),
    ("dot_1d", tz.dot, np.dot, [r("k", 3), r("l", 3)], True),
    ("outer", tz.outer, np.outer, [r("m", 3), r("n", 2)], True),
    ("einsum_matmul", lambda a, b: tz.einsum("ij,jk->ik", a, b), lambda a, b: np.einsum("ij,jk->ik", a, b),
     [r("o", 2, 3), r("p", 3, 4)], True),
    ("einsum_batched", lambda a, b: tz.einsum("bij,bjk->bik", a, b), lambda a, b: np.einsum("bij,bjk->bik", a, b),
     [r("q", 2, 2, 3), r("s", 2, 3, 4)], True),
    ("einsum_outer", lambda a, b: tz.einsum("i,j->ij", a, b), lambda a, b: np.einsum("i,j->ij", a, b),
     [r("t", 3), r("u", 2)], True),
    ("einsum_implicit_trace_free", lambda a, b: tz.einsum("ab,cb", a, b), lambda a, b: np.einsum("ab,cb", a, b),
     [r("v", 2, 3), r("w", 4, 3)], True),
    ("einsum_sum_one", lambda a: tz.einsum("ijk->ki", a), lambda a: np.einsum("ijk->ki", a), [r("x", 2, 3, 4)], True),
    ("exp_log_sqrt", lambda x: tz.exp(x) + tz.log(x) + tz.sqrt(x), lambda x: np.exp(x) + np.log(x) + np.sqrt(x),
     [r("y", 3, positive=True)], True),
    ("trig_hyperbolic", lambda x: tz.tanh(x) * tz.sin(x) - tz.cos(x), lambda x: np.tanh(x) * np.sin(x) - np.cos(x),
     [r("z", 3)], True),
    ("log1p_expm1", lambda x: tz.log1p(x) + tz.expm1(x), lambda x: np.log1p(x) + np.expm1(x),
     [r("A", 3, positive=True)], True),
    ("abs_sign_floor_round", lambda x: tz.abs(x) + tz.sign(x) + tz.floor(x) + tz.round(x),
     lambda x: np.abs(x) + np.sign(x) + np.floor(x) + np.round(x), [r("B", 5) * 3], True),
    ("maximum_minimum_clip", lambda x, y: tz.maximum(x, y) - tz.minimum(x, 0.3) + tz.clip(y, -0.5, 0.5),
     lambda x, y: np.maximum(x, y) - np.minimum(x, 0.3) + np.clip(y, -0.5, 0.5), [r("C", 4), r("D", 4)], True),
    ("where", lambda x, y: tz.where(x > y, x * 2.0, y), lambda x, y: np.where(x > y, x * 2.0, y),
     [r("E", 2, 3), r("F", 3)], True),
    ("sum_mean", lambda x: x.sum(axis=0) + tz.mean(x, axis=0) + tz.sum(x), lambda x: x.sum(0) + x.mean(0) + x.sum(),
     [r("G", 3, 4)], True),
    ("max_min_keepdims", lambda x: tz.max(x, axis=1, keepdims=True) * x.min(axis=(0, 1)),
     lambda x: np.max(x, axis=1, keepdims=True) * x.min(axis=(0, 1)), [r("I", 2, 3, 2)], True),
    ("prod", lambda x: tz.prod(x, axis=-1) + x.prod(), lambda x: np.prod(x, axis=-1) + x.prod(), [r("J", 2, 3)],
     True),
    ("argmax_argmin", lambda x: (tz.argmax(x, axis=0) + x.argmin(axis=1).sum()).astype(np.float64) * x[0, 0],
     lambda x: (np.argmax(x, axis=0) + x.argmin(axis=1).sum()).astype(np.float64) * x[0, 0], [r("K", 3, 4)], True),
    ("sort_argsort", lambda x: tz.sort(x, axis=0) * tz.argsort(x, axis=-1), lambda x: np.sort(x, axis=0) *
     np.argsort(x, axis=-1, kind="stable"), [r("L", 3, 4)], True),
    ("concatenate_stack", lambda x, y: tz.concatenate([x, y], axis=1).sum() + tz.stack([x, x], axis=1),
     lambda x, y: np.concatenate([x, y], axis=1).sum() + np.stack([x, x], axis=1), [r("M", 2, 3), r("N", 2, 1)],
     True),
    ("reshape_transpose_T",
     lambda x: tz.reshape(x, (4, -1)).T + tz.transpose(x.reshape(2, 2, 3), (2, 0, 1)).reshape(3, 4),
     lambda x: np.reshape(x, (4, -1)).T + np.transpose(x.reshape(2, 2, 3), (2, 0, 1)).reshape(3, 4), [r("O", 3, 4)],
     True),
    ("broadcast_to_flip", lambda x: tz.flip(tz.broadcast_to(x, (2, 3)), axis=1) + tz.flip(x),
     lambda x: np.flip(np.broadcast_to(x, (2, 3)), axis=1) + np.flip(x), [r("P", 3)], True),
    ("pad", lambda x: tz.pad(x, ((1, 0), (2, 1)), constant_values=0.5), lambda x: np.pad(x, ((1, 0), (2, 1)),
                                                                                         constant_values=0.5),
     [r("Q", 2, 3)], True),
    ("take_take_along_axis", lambda x: tz.take(x, IDX, axis=1) + tz.take_along_axis(x, np.array([[1, 0, 2, 2]]).T,
                                                                                        axis=1),
     lambda x: np.take(x, IDX, axis=1) + np.take_along_axis(x, np.array([[1, 0, 2, 2]]).T, axis=1), [r("R", 4, 3)],
     True),
    ("indexing_basic", lambda x: x[1:, ::-2] + x[0, None, 1] - x[:2, ..., -1:], lambda x: x[1:, ::-2] + x[0, None, 1] -
     x[:2, ..., -1:], [r("S", 3, 4)], True),
    ("indexing_arrays", lambda x: x[IDX] + x[np.array([0, 1, 2]), IDX][:, None],
     lambda x: x[IDX] + x[np.array([0, 1, 2]), IDX][:, None], [r("T", 3, 3)], True),
    # Integers count as advanced indices beside an index array, so these are separated by a
    # slice (index dims first) or adjacent (index dims in place), as NumPy.
    ("indexing_mixed_separated", lambda x: x[3, 2:, [1, 3]] + x[[0, 1], :, 2][:, 2:],
     lambda x: x[3, 2:, [1, 3]] + x[[0, 1], :, 2][:, 2:], [r("mx", 5, 6, 4)], True),
    ("indexing_mixed_square", lambda x: x[0, :, [1, 2, 3, 4, 5, 0]] + x[:, [1, 2, 3, 4, 5, 0], -1][0],
     lambda x: x[0, :, [1, 2, 3, 4, 5, 0]] + x[:, [1, 2, 3, 4, 5, 0], -1][0], [r("my", 5, 6, 6)], True),
    ("zeros_ones_like", lambda x: x * tz.ones_like(x) + tz.zeros_like(x), lambda x: x * np.ones_like(x) +
     np.zeros_like(x), [r("U", 2)], True),
    ("astype_round_trip", lambda x: x.astype(np.float32).astype(np.float64) * x,
     lambda x: x.astype(np.float32).astype(np.float64) * x, [r("V", 3)], False),
    ("nn_relu_sigmoid", lambda x: tz.nn.relu(x) + tz.nn.sigmoid(x), lambda x: np.maximum(x, 0) + 1 / (1 + np.exp(-x)),
     [r("W", 5)], True),
    ("nn_softmax", lambda x: tz.nn.softmax(x, axis=-1), _softmax, [r("X", 2, 4)], True),
    ("nn_log_softmax", lambda x: tz.nn.log_softmax(x, axis=0), lambda x: x - _logsumexp(x, axis=0, keepdims=True),
     [r("Y", 3, 2)], True),
    ("nn_logsumexp_large", lambda x: tz.nn.logsumexp(x * 300.0, axis=1), lambda x: _logsumexp(x * 300.0, axis=1),
     [r("Z", 2, 3)], True),
    ("nn_conv_same_stride", lambda x, w: tz.nn.conv(x, w, stride=2, padding="SAME"),
     lambda x, w: conv_ref(x, w, [2, 2], [1, 1], [1, 1], [1, 1], [1, 1], 1), [r("aa", 1, 2, 5, 5), r("ab", 3, 2, 3, 3)],
     True),
    ("nn_conv_valid_dilated_groups", lambda x, w: tz.nn.conv(x, w, padding="VALID", dilation=2, groups=2),
     lambda x, w: conv_ref(x, w, [1], [0], [0], [1], [2], 2), [r("ac", 2, 4, 7), r("ad", 2, 2, 3)], True),
    ("nn_conv_pairs", lambda x, w: tz.nn.conv(x, w, padding=[(1, 0), (0, 2)]),
     lambda x, w: conv_ref(x, w, [1, 1], [1, 0], [0, 2], [1, 1], [1, 1], 1), [r("ae", 1, 1, 4, 4), r("af", 2, 1, 2, 2)],
     True),
    ("lax_scatter_add", lambda x, u: tz.lax.scatter(x, IDX, u, axis=0, mode="add"),
     lambda x, u: _scatter_add(x, u), [r("ag", 4, 2), r("ah", 3, 2)], True),
    ("lax_dynamic_slices", lambda x, u: tz.lax.dynamic_update_slice(x, u, (1, 5)) + tz.lax.dynamic_slice(x, (-1, 1),
                                                                                                            (3, 3)),
     lambda x, u: _dus(x, u) + x[0:3, 0:3], [r("ai", 3, 3), r("aj", 2, 2)], True),
    ("lax_stop_gradient", lambda x: x * tz.lax.stop_gradient(x), lambda x: x * x, [r("ak", 3)], False),
]


def _scatter_add(x, u):
    out = x.copy()
    np.add.at(out, IDX, u)
    return out


def _dus(x, u):
    out = x.copy()
    out[1:3, 1:3] = u
    return out


def _all(fns):
    return lambda inputs: {name: fn(*args) for (name, fn), args in zip(fns, inputs, strict=True)}


@pytest.fixture(scope="module")
def forward():
    inputs = [[a.astype(np.float32) for a in row[3]] for row in ROWS]
    return tz.jit(_all([(row[0], row[1]) for row in ROWS]))(inputs), inputs


@pytest.mark.parametrize("row", ROWS, ids=[row[0] for row in ROWS])
def test_forward_matches_numpy(forward, row):
    outputs, inputs = forward
    index = ROWS.index(row)
    want = np.asarray(row[2](*[a.astype(np.float64) for a in inputs[index]]))
    got = outputs[row[0]]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


GRAD_ROWS = [row for row in ROWS if row[4]]


@pytest.fixture(scope="module")
def pulled():
    inputs = [list(row[3]) for row in GRAD_ROWS]
    fn = _all([(row[0], row[1]) for row in GRAD_ROWS])
    outputs, pullback = tz.vjp(fn, inputs)
    rng = np.random.default_rng(0)
    cts = {k: rng.standard_normal(v.shape) for k, v in outputs.items()}
    (grads,) = pullback(cts)
    return outputs, cts, grads


@pytest.mark.parametrize("row", GRAD_ROWS, ids=[row[0] for row in GRAD_ROWS])
def test_gradient_matches_numpy_finite_differences(pulled, row):
    outputs, cts, grads = pulled
    name, _, reference, inputs, _ = row
    g = grads[GRAD_ROWS.index(row)]
    np.testing.assert_allclose(outputs[name], reference(*inputs), rtol=1e-10, atol=1e-12)
    rng = rng_for(name + "/direction")
    for _ in range(2):
        v = [rng.standard_normal(a.shape) for a in inputs]
        plus = reference(*[a + H * d for a, d in zip(inputs, v, strict=True)])
        minus = reference(*[a - H * d for a, d in zip(inputs, v, strict=True)])
        numeric = float(np.sum(cts[name] * (plus - minus) / (2 * H)))
        analytic = float(sum(np.sum(gi * d) for gi, d in zip(g, v, strict=True)))
        assert abs(numeric - analytic) <= 1e-6 * (abs(numeric) + abs(analytic)) + 1e-7, (name, numeric, analytic)
