"""Every NumPy-named function of `tz`: forward values against NumPy, and gradients against
central finite differences of the NumPy implementation itself (float64).

All rows go through one jitted function and one `tz.vjp`, so the table costs two compiles.
The integer and set routines (`gcd`, `union1d`, `unique_all`, ...), whose sizes and types are
JAX's, are checked against JAX's under jit (a table in one function) and NumPy's eagerly.
"""

from __future__ import annotations

from contextlib import contextmanager

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


def _row_stats(xp):
    return lambda row: xp.stack([row.sum(), (row * row).max()])

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
    ("einsum_size_one_broadcasts", lambda a, b, c: tz.einsum("mnd,mdo->mno", a, b) + tz.einsum("ij,jk->ik", c, b[0]),
     lambda a, b, c: np.einsum("mnd,mdo->mno", a, b) + np.einsum("ij,jk->ik", c, b[0]),
     [r("x1", 1, 4, 2), r("x2", 3, 2, 5), r("x3", 4, 1)], True),
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
    ("lax_scatter_add", lambda x, u: tz.lax.scatter_add(x, IDX[:, None], u,
                                                         tz.lax.ScatterDimensionNumbers((1,), (0,), (0,))),
     lambda x, u: _scatter_add(x, u), [r("ag", 4, 2), r("ah", 3, 2)], True),
    ("lax_dynamic_slices", lambda x, u: tz.lax.dynamic_update_slice(x, u, (1, 5)) + tz.lax.dynamic_slice(x, (-1, 1),
                                                                                                            (3, 3)),
     lambda x, u: _dus(x, u) + x[0:3, 0:3], [r("ai", 3, 3), r("aj", 2, 2)], True),
    ("lax_stop_gradient", lambda x: x * tz.lax.stop_gradient(x), lambda x: x * x, [r("ak", 3)], False),
    # ufuncs built on the dialect's inverse and hyperbolic ops, or composed
    ("trig_inverse", lambda x: tz.tan(x) + tz.arctan(x) + tz.arcsin(x) + tz.arccos(x) + tz.arctanh(x),
     lambda x: np.tan(x) + np.arctan(x) + np.arcsin(x) + np.arccos(x) + np.arctanh(x), [r("al", 5) * 0.3], True),
    ("hyperbolic", lambda x: tz.sinh(x) + tz.cosh(x) + tz.arcsinh(x) + tz.arccosh(x + 2.0),
     lambda x: np.sinh(x) + np.cosh(x) + np.arcsinh(x) + np.arccosh(x + 2.0), [r("am", 5)], True),
    ("arctan2_hypot", lambda y, x: tz.arctan2(y, x) + tz.hypot(y, x), lambda y, x: np.arctan2(y, x) + np.hypot(y, x),
     [r("an", 2, 3), r("ao", 3)], True),
    ("logs_and_powers_of_two", lambda x: tz.log2(x) + tz.log10(x) + tz.exp2(x) + tz.reciprocal(x) + tz.fabs(-x),
     lambda x: np.log2(x) + np.log10(x) + np.exp2(x) + np.reciprocal(x) + np.fabs(-x), [r("ap", 4, positive=True)],
     True),
    ("degrees_radians_ceil", lambda x: tz.deg2rad(x) + tz.radians(x) + tz.rad2deg(x) + tz.degrees(x) + tz.ceil(x),
     lambda x: np.deg2rad(x) + np.radians(x) + np.rad2deg(x) + np.degrees(x) + np.ceil(x), [r("aq", 4) * 3], True),
    ("logaddexp", lambda x, y: tz.logaddexp(x * 100.0, y), lambda x, y: np.logaddexp(x * 100.0, y),
     [r("ar", 2, 3), r("as", 3)], True),
    ("mod_floor_divide", lambda x, y: tz.mod(x * 5.0, y) + tz.remainder(x, -0.7) + x % 0.3 + (x * 4.0) // y
     + tz.floor_divide(x, 0.4), lambda x, y: np.mod(x * 5.0, y) + np.remainder(x, -0.7) + x % 0.3 + (x * 4.0) // y
     + np.floor_divide(x, 0.4), [r("at", 6), r("au", 6, positive=True)], True),
    ("fmax_fmin_nan", lambda x: tz.fmax(x, NANS) + tz.fmin(NANS, x), lambda x: np.fmax(x, NANS) + np.fmin(NANS, x),
     [r("av", 4)], True),
    ("isnan_isinf_isfinite_logical", lambda x: x * (tz.isnan(x * NANS) | tz.isinf(x / 0.0)).astype(np.float32)
     + tz.logical_and(tz.isfinite(x * NANS), x > 0) + tz.logical_xor(x > 0, ~(x < 0.5)),
     lambda x: x * (np.isnan(x * NANS) | np.isinf(x / 0.0)) + np.logical_and(np.isfinite(x * NANS), x > 0)
     + np.logical_xor(x > 0, ~(x < 0.5)), [r("aw", 4)], True),
    # array routines
    ("stacking", lambda x, y: tz.vstack([x, y]).sum(0) + tz.hstack([x, y])[:3] + tz.dstack([x, y])[0, :, 1]
     + tz.column_stack([x, y])[:, 0] + tz.append(x, y)[1:4] + tz.ravel(tz.atleast_2d(x)) + tz.atleast_3d(y)[0, :, 0],
     lambda x, y: np.vstack([x, y]).sum(0) + np.hstack([x, y])[:3] + np.dstack([x, y])[0, :, 1]
     + np.column_stack([x, y])[:, 0] + np.append(x, y)[1:4] + np.ravel(np.atleast_2d(x)) + np.atleast_3d(y)[0, :, 0],
     [r("ax", 3), r("ay", 3)], True),
    ("split_array_split", lambda x: tz.split(x, 2)[1] * tz.array_split(x, 3, axis=1)[2].sum()
     + tz.split(x, [1], axis=0)[0], lambda x: np.split(x, 2)[1] * np.array_split(x, 3, axis=1)[2].sum()
     + np.split(x, [1], axis=0)[0], [r("az", 2, 4)], True),
    ("roll_rot_flip", lambda x: tz.roll(x, 2) + tz.roll(x, (1, -1), axis=(0, 1)) + tz.rot90(x, 2) + tz.flipud(x)
     + tz.fliplr(x) + tz.rollaxis(x[None], 2, 0)[:, 0].T,
     lambda x: np.roll(x, 2) + np.roll(x, (1, -1), axis=(0, 1)) + np.rot90(x, 2) + np.flipud(x) + np.fliplr(x)
     + np.rollaxis(x[None], 2, 0)[:, 0].T, [r("ba", 3, 3)], True),
    ("rot90_odd", lambda x: tz.rot90(x) + tz.rot90(x, 3, axes=(1, 0)) + tz.rot90(x, -1),
     lambda x: np.rot90(x) + np.rot90(x, 3, axes=(1, 0)) + np.rot90(x, -1), [r("bb", 3, 2)], True),
    ("triangles_diagonals", lambda x: tz.tril(x) + tz.triu(x, 1) * 2.0 + tz.tri(3, 4, -1) * x + tz.diag(x[0], 1)[:3, :4]
     + tz.diag(x[1], -1)[1:4, :4] + tz.trace(x) + tz.diagonal(x, -1).sum(),
     lambda x: np.tril(x) + np.triu(x, 1) * 2.0 + np.tri(3, 4, -1) * x + np.diag(x[0], 1)[:3, :4]
     + np.diag(x[1], -1)[1:4, :4] + np.trace(x) + np.diagonal(x, -1).sum(), [r("bc", 3, 4)], True),
    ("diag_of_matrix_batched_diagonal", lambda x: tz.diag(x[0]) + tz.diagonal(x, 1, 1, 2)[:, :2].sum(),
     lambda x: np.diag(x[0]) + np.diagonal(x, 1, 1, 2)[:, :2].sum(), [r("bd", 2, 3, 3)], True),
    ("repeat_tile", lambda x: tz.repeat(x, 2, axis=1).sum() + tz.repeat(x, [1, 3], axis=0)[:, 1] + tz.tile(x, 2)[0, :4]
     + tz.tile(x[0], (2, 2))[1, :4] + tz.repeat(x, 2)[:4],
     lambda x: np.repeat(x, 2, axis=1).sum() + np.repeat(x, [1, 3], axis=0)[:, 1] + np.tile(x, 2)[0, :4]
     + np.tile(x[0], (2, 2))[1, :4] + np.repeat(x, 2)[:4], [r("be", 2, 3)], True),
    ("r_c_", lambda x, v: tz.r_[x, x * 2, x[:1]][3:10] + tz.c_[x, x][:, 1:3] + tz.r_["1,2,0", v[:3], v[1:]][:, :1].sum()
     + tz.r_[v, 0:3, 0.0:1.0:4j, 2.5][:2],
     lambda x, v: np.r_[x, x * 2, x[:1]][3:10] + np.c_[x, x][:, 1:3] + np.r_["1,2,0", v[:3], v[1:]][:, :1].sum()
     + np.r_[v, 0:3, 0.0:1.0:4j, 2.5][:2], [r("rc", 7, 2), r("rcv", 4)], True),
    ("gradient", lambda x: tz.gradient(x)[0] * tz.gradient(x, 0.5, axis=1) + tz.gradient(x[:, 0], 2.0)[:, None],
     lambda x: np.gradient(x)[0] * np.gradient(x, 0.5, axis=1) + np.gradient(x[:, 0], 2.0)[:, None],
     [r("grad", 4, 3)], True),
    ("splits_angle_logaddexp2",
     lambda x: tz.hstack(tz.hsplit(x, 2)[::-1]) + tz.vsplit(x, [1])[0] + tz.dsplit(x[..., None], 1)[0][..., 0]
     + tz.angle(x) + tz.logaddexp2(x, x[::-1]) + tz.row_stack([x[0], x[1]])[:1],
     lambda x: np.hstack(np.hsplit(x, 2)[::-1]) + np.vsplit(x, [1])[0] + np.dsplit(x[..., None], 1)[0][..., 0]
     + np.angle(x) + np.logaddexp2(x, x[::-1]) + np.vstack([x[0], x[1]])[:1], [r("split", 2, 4)], True),
    ("cumsum_cumprod_diff", lambda x: tz.cumsum(x, axis=1) + tz.cumprod(x, axis=0) + tz.diff(x, axis=1, prepend=0.5)
     + tz.cumsum(x)[:3] + tz.diff(x, n=2, axis=0, append=x[:2]),
     lambda x: np.cumsum(x, axis=1) + np.cumprod(x, axis=0) + np.diff(x, axis=1, prepend=0.5) + np.cumsum(x)[:3]
     + np.diff(x, n=2, axis=0, append=x[:2]), [r("bf", 2, 3) * np.array([1.0, 0.0, 1.0])], True),
    ("linspace_meshgrid", lambda a, b: tz.linspace(a[0], b[0], 5) + tz.linspace(0.0, 2.5, 5, endpoint=False)
     + tz.meshgrid(a, b)[0].sum() + tz.meshgrid(a, b, indexing="ij")[1][1, 2],
     lambda a, b: np.linspace(a[0], b[0], 5) + np.linspace(0.0, 2.5, 5, endpoint=False)
     + np.meshgrid(a, b)[0].sum() + np.meshgrid(a, b, indexing="ij")[1][1, 2], [r("bg", 2), r("bh", 3)], True),
    ("products", lambda a, b: tz.tensordot(a, b, axes=1).sum(0) + tz.tensordot(a, b, axes=([0], [1]))[:, 0]
     + tz.inner(a[0], b[:, 0]) + tz.kron(a, b)[0, :3] + tz.cross(a, a[::-1]).sum() + tz.cross(a[:, :2], a[:, 1:]),
     lambda a, b: np.tensordot(a, b, axes=1).sum(0) + np.tensordot(a, b, axes=([0], [1]))[:, 0]
     + np.inner(a[0], b[:, 0]) + np.kron(a, b)[0, :3] + np.cross(a, a[::-1]).sum() + np.cross(a[:, :2], a[:, 1:]),
     [r("bi", 3, 3), r("bj", 3, 3)], True),
    ("select_nan_to_num", lambda x: tz.select([x > 0.5, x < -0.5], [x * 2.0, x * x], default=1.0)
     + tz.nan_to_num(x + INFS, nan=0.5, posinf=3.0, neginf=-2.0),
     lambda x: np.select([x > 0.5, x < -0.5], [x * 2.0, x * x], default=1.0)
     + np.nan_to_num(x + INFS, nan=0.5, posinf=3.0, neginf=-2.0), [r("bk", 4)], True),
    ("var_std_ddof", lambda x: tz.var(x, axis=0, ddof=1) + tz.std(x) + tz.std(x, axis=1, keepdims=True, ddof=1),
     lambda x: np.var(x, axis=0, ddof=1) + np.std(x) + np.std(x, axis=1, keepdims=True, ddof=1), [r("bl", 3, 4)],
     True),
    ("isclose_all_any", lambda x: x * tz.isclose(x, x + 1e-9) + tz.all(x > -9.0, axis=0) + tz.any(x > 1.0)
     + tz.allclose(x, x * 1.5), lambda x: x * np.isclose(x, x + 1e-9) + np.all(x > -9.0, axis=0) + np.any(x > 1.0)
     + np.allclose(x, x * 1.5), [r("bm", 2, 3)], True),
    ("at_set_add_get", lambda x: x.at[1].set(x[0] * 2) + x.at[:, ::2].add(x[:, 1::2]) - x.at[IDX, 1].get()[:, None],
     lambda x: _at(x, 1, "set", x[0] * 2) + _at(x, (slice(None), slice(None, None, 2)), "add", x[:, 1::2])
     - x[IDX, 1][:, None], [r("bn", 3, 4)], True),
    ("at_repeats_multiply_divide", lambda x: x.at[IDX, 1].add(x[0, :3]) * x.at[IDX, ::-1].multiply(1.5)
     + x.at[..., -1].divide(x[:, 0] + 3.0) + x.at[IDX, 2].set(x[1, :3]),
     lambda x: _at(x, (IDX, 1), "add", x[0, :3]) * _at(x, (IDX, slice(None, None, -1)), "multiply", 1.5)
     + _at(x, (Ellipsis, -1), "multiply", 1 / (x[:, 0] + 3.0)) + _at(x, (IDX, 2), "set", x[1, :3]),
     [r("bo", 3, 4)], True),
    ("at_min_max_mask", lambda x: x.at[0].min(x[1] * 0.5) + x.at[x.shape[0] - 1, None].max(0.25)
     + x.at[np.arange(4) % 2 == 0].set(-x[:2]) * x.at[IDX[:, None], np.array([0, 2])].add(2.0),
     lambda x: _at(x, 0, "min", x[1] * 0.5) + _at(x, (-1, None), "max", 0.25)
     + _at(x, np.arange(4) % 2 == 0, "set", -x[:2]) * _at(x, (IDX[:, None], np.array([0, 2])), "add", 2.0),
     [r("bp", 4, 3)], True),
    ("nan_reductions",
     lambda x: tz.nansum(_nans(tz, x), axis=1) + tz.nanmean(_nans(tz, x), axis=1) + tz.nanmax(_nans(tz, x), axis=1)
     + tz.nanmin(_nans(tz, x), axis=1) + tz.nanprod(_nans(tz, x), axis=1),
     lambda x: np.nansum(_nans(np, x), axis=1) + np.nanmean(_nans(np, x), axis=1) + np.nanmax(_nans(np, x), axis=1)
     + np.nanmin(_nans(np, x), axis=1) + np.nanprod(_nans(np, x), axis=1), [r("nr", 3, 4)], True),
    ("average_vdot_polyval", lambda x, w: tz.average(x, axis=1, weights=w) + tz.vdot(w, w) + tz.polyval(w[:3], x[:, 0]),
     lambda x, w: np.average(x, axis=1, weights=w) + np.vdot(w, w) + np.polyval(w[:3], x[:, 0]),
     [r("av", 3, 4), r("aw", 4, positive=True)], True),
    ("interp", lambda x, fp: tz.interp(x, np.arange(5.0), fp), lambda x, fp: np.interp(x, np.arange(5.0), fp),
     [np.array([-0.5, 0.3, 1.7, 2.2, 3.9, 4.5]), r("fp", 5)], True),
    ("quantiles", lambda x: tz.quantile(x, np.array([0.1, 0.5, 0.9]), axis=1) + tz.median(x, axis=1)
     + tz.percentile(x, 30, axis=1, method="lower"), lambda x: np.quantile(x, np.array([0.1, 0.5, 0.9]), axis=1)
     + np.median(x, axis=1) + np.percentile(x, 30, axis=1, method="lower"), [r("qu", 3, 6)], True),
    ("cov_corrcoef", lambda x: tz.cov(x) + tz.corrcoef(x) + tz.cov(x[0], x[1], bias=True)[0, 1],
     lambda x: np.cov(x) + np.corrcoef(x) + np.cov(x[0], x[1], bias=True)[0, 1], [r("cv", 3, 6)], True),
    ("matrix_power_multi_dot_cond", lambda a: tz.linalg.matrix_power(a, 3) + tz.linalg.matrix_power(a, -2)
     + tz.linalg.multi_dot([a[0], a, a.T, a]) + tz.linalg.cond(a),
     lambda a: np.linalg.matrix_power(a, 3) + np.linalg.matrix_power(a, -2) + np.linalg.multi_dot([a[0], a, a.T, a])
     + np.linalg.cond(a), [r("mp", 3, 3) + 3 * np.eye(3)], True),
    # NumPy 2's array-API names and functions
    ("array_api_names", lambda x, y: tz.acos(x / 3) + tz.asinh(x) + tz.atan2(x, y) + tz.pow(y * y, 1.5)
     + tz.concat([x, y], axis=1)[:, 1:5] + tz.permute_dims(y.T, (1, 0)),
     lambda x, y: np.acos(x / 3) + np.asinh(x) + np.atan2(x, y) + np.pow(y * y, 1.5)
     + np.concat([x, y], axis=1)[:, 1:5] + np.permute_dims(y.T, (1, 0)), [r("aa", 3, 4), r("ab", 3, 4)], True),
    ("matrix_transpose_vecdot_matvec_vecmat", lambda a, v, u: tz.matrix_transpose(a)[0] + tz.vecdot(a, v)
     + tz.matvec(a, v) + tz.vecmat(u, a), lambda a, v, u: np.matrix_transpose(a)[0] + np.vecdot(a, v)
     + np.matvec(a, v) + np.vecmat(u, a), [r("ac", 4, 4), r("ad", 4), r("ae", 4)], True),
    ("unstack_cumulative", lambda x: tz.stack(tz.unstack(x, axis=1)[::-1])
     + tz.cumulative_sum(x, axis=0, include_initial=True)[1:].T + tz.cumulative_prod(x, axis=1)[:, ::-1].T,
     lambda x: np.stack(np.unstack(x, axis=1)[::-1]) + np.cumulative_sum(x, axis=0, include_initial=True)[1:].T
     + np.cumulative_prod(x, axis=1)[:, ::-1].T, [r("af", 3, 4)], True),
    # elementwise
    ("cbrt_copysign_positive_float_power_ldexp", lambda x, y: tz.cbrt(x) + tz.copysign(y, x) + tz.positive(x)
     + tz.float_power(y * y, x) + tz.ldexp(x, np.array([1, -2, 3, 0])),
     lambda x, y: np.cbrt(x) + np.copysign(y, x) + np.positive(x) + np.float_power(y * y, x)
     + np.ldexp(x, np.array([1, -2, 3, 0])), [r("ag", 4), r("ah", 4)], True),
    ("fmod_modf_divmod", lambda x, y: tz.fmod(4 * x, y) + tz.stack(tz.modf(3 * x)).sum(0)
     + tz.stack(tz.divmod(4 * x, y))[1], lambda x, y: np.fmod(4 * x, y) + np.stack(np.modf(3 * x)).sum(0)
     + np.stack(np.divmod(4 * x, y))[1], [r("ai", 6), r("aj", 6, positive=True) * np.array([1, -1] * 3)], True),
    ("trunc_rint_signbit_infs", lambda x: tz.trunc(3 * x) + tz.rint(3 * x) + tz.signbit(x).astype(np.float32)
     + tz.isposinf(x / 0).astype(np.float32) + 2 * tz.isneginf(x / 0).astype(np.float32),
     lambda x: np.trunc(3 * x) + np.rint(3 * x) + np.signbit(x) + np.isposinf(x / 0) + 2 * np.isneginf(x / 0),
     [np.array([0.5, -0.5, 1.5, -2.5, 0.1, -0.0, 0.0, 1.2])], False),
    # statistics
    ("ptp_nanvar_nanstd", lambda x: tz.ptp(x, axis=1) + tz.nanvar(_nans(tz, x), axis=1, ddof=1)
     + tz.nanstd(_nans(tz, x), axis=1) + tz.nanvar(_nans(tz, x)),
     lambda x: np.ptp(x, axis=1) + np.nanvar(_nans(np, x), axis=1, ddof=1) + np.nanstd(_nans(np, x), axis=1)
     + np.nanvar(_nans(np, x)), [r("ak2", 3, 6)], True),
    ("nancumsum_nancumprod", lambda x: tz.nancumsum(_nans(tz, x), axis=1) + tz.nancumprod(_nans(tz, x), axis=0),
     lambda x: np.nancumsum(_nans(np, x), axis=1) + np.nancumprod(_nans(np, x), axis=0), [r("al", 3, 4)], True),
    ("nanargmax_nanargmin", lambda x: tz.nanargmax(_nans(tz, x), axis=1) + 10 * tz.nanargmin(_nans(tz, x)),
     lambda x: np.nanargmax(_nans(np, x), axis=1) + 10 * np.nanargmin(_nans(np, x)), [r("am", 3, 5)], False),
    ("isin_digitize", lambda x: tz.isin(tz.round(2 * x), np.array([0.0, 1.0, -2.0])).astype(np.float32)
     + tz.digitize(x, np.array([-1.0, 0.0, 0.5, 2.0])) + 10 * tz.digitize(x, np.array([2.0, 0.5, -1.0]), right=True),
     lambda x: np.isin(np.round(2 * x), np.array([0.0, 1.0, -2.0])) + np.digitize(x, np.array([-1.0, 0.0, 0.5, 2.0]))
     + 10 * np.digitize(x, np.array([2.0, 0.5, -1.0]), right=True), [r("an", 8)], False),
    # grids, windows, polynomials, convolution
    ("vander_diagflat", lambda x: tz.vander(x, 4)[1] + tz.vander(x, increasing=True)[2] + tz.diagflat(x[:2], 2)[0],
     lambda x: np.vander(x, 4)[1] + np.vander(x, increasing=True)[2] + np.diagflat(x[:2], 2)[0], [r("ao", 4)], True),
    # (default-float constants, float32 as in JAX: compared in the float32 forward only)
    ("geomspace_windows", lambda x: tz.geomspace(1.0, 1000.0, 6) * x + tz.geomspace(-2.0, -64.0, 6, endpoint=False)
     + tz.hanning(6) * x + tz.hamming(6) + tz.blackman(6) * x + tz.bartlett(6),
     lambda x: np.geomspace(1.0, 1000.0, 6) * x + np.geomspace(-2.0, -64.0, 6, endpoint=False) + np.hanning(6) * x
     + np.hamming(6) + np.blackman(6) * x + np.bartlett(6), [r("ap", 6)], False),
    ("polynomials", lambda p, q: tz.polyadd(p, q) + tz.polysub(q, p) + tz.polymul(p, q)[:5]
     + tz.polyder(tz.pad(p, (1, 0)), 1) + tz.polyint(q, 2, k=np.array([1.0, 2.0]))[:5],
     lambda p, q: np.polyadd(p, q) + np.polysub(q, p) + np.polymul(p, q)[:5] + np.polyder(np.pad(p, (1, 0)), 1)
     + np.polyint(q, 2, k=[1.0, 2.0])[:5], [r("aq", 5), r("ar", 3)], True),
    ("convolve_correlate", lambda a, v: tz.concatenate([tz.convolve(a, v), tz.convolve(v, a, mode="same"),
     tz.convolve(a, v, mode="valid"), tz.correlate(a, v), tz.correlate(v, a, mode="full"),
     tz.correlate(a, v, mode="same")]), lambda a, v: np.concatenate([np.convolve(a, v), np.convolve(v, a, mode="same"),
     np.convolve(a, v, mode="valid"), np.correlate(a, v), np.correlate(v, a, mode="full"),
     np.correlate(a, v, mode="same")]), [r("as", 6), r("at", 3)], True),
    # function application
    ("apply_along_axis_vectorize", lambda x, w: tz.apply_along_axis(_row_stats(tz), 1, x)
     + tz.vectorize(lambda a, b: (a * b).sum(), signature="(n),(n)->()")(x, w)[:, None]
     + tz.vectorize(lambda a, b: a * 2 + b)(x, w)[:, :2],
     lambda x, w: np.apply_along_axis(_row_stats(np), 1, x)
     + np.vectorize(lambda a, b: (a * b).sum(), signature="(n),(n)->()")(x, w)[:, None]
     + np.vectorize(lambda a, b: a * 2 + b)(x, w)[:, :2], [r("au", 3, 4), r("av", 4)], True),
]


def _nans(xp, x):
    """x with NaN in place of its elements above 0.8."""
    return xp.where(x > 0.8, np.nan, x)


NANS = np.array([np.nan, 1.0, np.nan, -1.0])
INFS = np.array([np.inf, -np.inf, np.nan, 1.0])


def _at(x, index, mode, values):
    """x.at[index].mode(values) in NumPy: a copy, updated in place."""
    out = x.copy()
    if mode == "set":
        out[index] = values
    else:
        {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}[mode].at(out, index, values)
    return out


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
    """Every row's value and VJP from one compiled module (the cotangents shaped as NumPy's
    results)."""
    inputs = [list(row[3]) for row in GRAD_ROWS]
    fn = _all([(row[0], row[1]) for row in GRAD_ROWS])
    rng = np.random.default_rng(0)
    cts = {row[0]: rng.standard_normal(np.shape(row[2](*row[3]))) for row in GRAD_ROWS}

    def values_and_vjps(inputs, cts):
        outputs, pullback = tz.vjp(fn, inputs)
        return outputs, pullback(cts)[0]

    outputs, grads = tz.jit(values_and_vjps)(inputs, cts)
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


def test_integer_floor_division_and_remainder_round_toward_minus_infinity():
    a = np.array([7, -7, 7, -7, 6, 0], np.int32)
    b = np.array([2, 2, -2, -2, 3, 5], np.int32)
    got = tz.jit(lambda a, b: (a // b, a % b, tz.floor_divide(a, 3), tz.mod(a, -4)))(a, b)
    for g, w in zip(got, (a // b, a % b, np.floor_divide(a, 3), np.mod(a, -4)), strict=True):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == np.int32


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_remainders_stay_exact_for_large_quotients(dtype):
    """x % y, fmod and // from the exact remainder (x - floor(x/y)·y gave 48.0 for
    1e9 % 7.0 in float32), signs and infinities as NumPy."""
    a = np.array([1e6 + 0.5, 1e9, -1e10, 123.4, 5.5, -7.25, 3.0, -3.0, 0.0, 2.0], dtype)
    b = np.array([0.1, 7.0, 7.0, 0.1, -2.0, 2.0, np.inf, -np.inf, 3.0, 0.0], dtype)
    got = tz.jit(lambda a, b: (a % b, tz.fmod(a, b), a // b))(a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = (np.mod(a, b), np.fmod(a, b), np.floor_divide(a, b))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_sums_and_products_accumulate_in_float32(dtype):
    """As JAX's: 3,000 halves of 1.1 sum to 3,298 (not 4,006), their variance does not overflow."""
    import ml_dtypes

    half = np.dtype(getattr(ml_dtypes, dtype) if dtype == "bfloat16" else dtype)
    x = np.full(3000, 1.1, half)
    spread = np.linspace(0, 100, 3000).astype(half)
    m = np.full((4, 300), 1.1, half)
    wide, s32, m32 = x.astype(np.float32), spread.astype(np.float32), m.astype(np.float32)
    got = tz.jit(lambda x, s, m: (x.sum(), x.mean(), tz.dot(x, x), s.var(), m @ m.T))(x, spread, m)
    want = (wide.sum(), wide.mean(), wide @ wide, s32.var(), m32 @ m32.T)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == half
        np.testing.assert_allclose(g.astype(np.float32), np.asarray(w).astype(half).astype(np.float32), rtol=1e-2)


def test_float32_sine_and_tangent_keep_their_relative_precision_below_zero():
    """IREE's float32 sine gave sin(-3e-7) = -1.5e-7 (positive inputs were right)."""
    x = np.concatenate([-np.logspace(-30, 0, 61), np.logspace(-30, 0, 61)]).astype(np.float32)
    got = tz.jit(lambda v: (tz.sin(v), tz.tan(v)))(x)
    for g, f in zip(got, (np.sin, np.tan), strict=True):
        np.testing.assert_allclose(g, f(x.astype(np.float64)), rtol=3e-7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_values_of_binary_functions_are_cs(dtype):
    """Signed zeros, infinities and NaNs as C's (and NumPy's and JAX's), where IREE's atan2
    gave NaN or +π and its power NaN."""
    inf, nan = np.inf, np.nan
    y = np.array([0, -0.0, 0, -0.0, -0.0, -1, inf, -inf, inf, -inf, 1, 2, nan, -0.0], dtype)
    x = np.array([0, 0, -0.0, -0.0, -1, -inf, inf, inf, -inf, -inf, nan, 3, 0, 2], dtype)
    base = np.array([inf, nan, 1, -inf, 0, -inf, -0.0, -0.0, -0.0, -1, -2, 0.5, 1, 2], dtype)
    exponent = np.array([0, 0, inf, 2.5, nan, -2.5, -1, 3, 2.5, inf, 3, -2, nan, 0.5], dtype)
    got = tz.jit(lambda y, x, b, e: (tz.arctan2(y, x), tz.power(b, e), tz.logaddexp(y, x), tz.hypot(y, x)))(
        y, x, base, exponent)
    with np.errstate(all="ignore"):
        want = (np.arctan2(y, x), np.power(base, exponent), np.logaddexp(y, x), np.hypot(y, x))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6 if dtype == np.float32 else 1e-14)
        assert np.array_equal(np.signbit(g), np.signbit(w))


def test_constants_names_and_clear_errors():
    assert (tz.pi, tz.e, tz.inf) == (np.pi, np.e, np.inf) and np.isnan(tz.nan) and tz.newaxis is None
    m = np.arange(12.0).reshape(3, 4)
    assert tz.ndim(m) == 2 and tz.shape(m) == (3, 4) and tz.size(m) == 12
    assert tz.allclose(m, m + 1e-9) and not tz.allclose(m, m + 1.0) and tz.array_equal(m, m.copy())
    np.testing.assert_array_equal(tz.jit(lambda a: (a & 6) | (a << 1))(np.arange(4, dtype=np.int32)),
                                  (np.arange(4) & 6) | (np.arange(4) << 1))
    with pytest.raises(tz.TenzrError, match="bitwise_and: takes integers or booleans, got float32"):
        tz.jit(lambda a: a & a)(np.arange(3, dtype=np.float32))
    with pytest.raises(tz.TenzrError, match="does not split into 3 equal sections"):
        tz.jit(lambda x: tz.split(x, 3)[0])(np.ones(4, np.float32))


def test_std_of_equal_values_has_zero_gradient():
    """The standard deviation over an axis of length 1 is identically 0, so its gradient is
    0 (not sqrt's infinite slope at 0 times 0); elsewhere it is (x - mean) / (N std)."""
    x = np.array([[0.5, -1.0, 2.0]])
    np.testing.assert_array_equal(tz.grad(lambda x: tz.std(x, axis=0).sum())(x), np.zeros((1, 3)))
    row = x[0]
    want = (row - row.mean()) / (row.size * row.std())
    np.testing.assert_allclose(tz.grad(tz.std)(row), want, rtol=1e-12)


def test_complex_predicates_on_real_arrays():
    x = np.array([1.0, np.nan, -2.0])
    assert tz.isrealobj(x) and not tz.iscomplexobj(x) and tz.iscomplexobj(np.array([1j]))
    np.testing.assert_array_equal(tz.jit(tz.iscomplex)(x), np.iscomplex(x))
    np.testing.assert_array_equal(tz.jit(tz.isreal)(x), np.isreal(x))


def test_logaddexp_is_smooth_at_ties():
    """d²/dx² logaddexp(x, y) at x == y is 1/4 (a kinked max-based form would give 0)."""
    second = tz.grad(tz.grad(lambda x: tz.logaddexp(x, 0.6)))(0.6)
    np.testing.assert_allclose(second, 0.25, rtol=1e-6)
    np.testing.assert_allclose(tz.logaddexp(np.array([np.inf, -np.inf, 1.0]), np.array([np.inf, -np.inf, 2.0])),
                               np.logaddexp([np.inf, -np.inf, 1.0], [np.inf, -np.inf, 2.0]))


def test_dot_with_an_nd_second_operand_and_empty_repeats():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(60.0).reshape(4, 3, 5)
    np.testing.assert_allclose(tz.dot(a, b), np.dot(a, b))
    g = tz.grad(lambda x: tz.sum(tz.sin(tz.repeat(x, 0, axis=0))))(np.ones((3, 1)))
    np.testing.assert_array_equal(g, np.zeros((3, 1)))


def test_broadcast_arrays_and_shapes_match_numpy():
    a, b = np.arange(3.0).reshape(3, 1), np.arange(4.0)
    for got, want in zip(tz.broadcast_arrays(a, b, 2.0), np.broadcast_arrays(a, b, 2.0), strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)
    assert tz.broadcast_shapes((3, 1), (4,), ()) == np.broadcast_shapes((3, 1), (4,), ()) == (3, 4)
    with pytest.raises(tz.TenzrError, match=r"shapes \(3,\), \(4,\) do not broadcast together"):
        tz.broadcast_shapes((3,), (4,))


def test_shape_arithmetic_as_numpy_code_writes_it():
    """autograd-era NumPy code: `np.prod` of a shape sizes a reshape inside the traced
    function, shapes may hold 0-d integer arrays, and prod/mean take NumPy's dtype=."""
    def flatten(x):
        return x.reshape((x.shape[0], tz.prod(x.shape[1:])))

    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(tz.jit(flatten)(x), x.reshape(2, 12))
    assert tz.prod([16, 4.0, 4.0], dtype=int) == np.prod([16, 4.0, 4.0], dtype=int) == 256
    np.testing.assert_array_equal(tz.jit(lambda v: tz.reshape(v, (np.array(2), np.int64(3))))(np.arange(6.0)),
                                  np.arange(6.0).reshape(2, 3))
    assert tz.prod(np.array([2, 3]), dtype=np.float32).dtype == np.float32
    assert tz.mean(np.arange(4), dtype=np.float64).dtype == np.float64 and tz.mean(np.arange(4)) == 1.5
    with pytest.raises(tz.TenzrError, match="a shape must be an int or a sequence of ints"):
        tz.reshape(np.arange(6.0), (2.0, 3))


def test_sorting_an_array_a_jitted_function_closes_over():
    """IREE sorts in place and may not write a constant's global: tz.sort and what sorts
    (quantiles) of a closed-over NumPy array failed to compile."""
    a = r("closed", 4, 5)
    np.testing.assert_array_equal(tz.jit(lambda: tz.sort(a, axis=1))(), np.sort(a, axis=1))
    np.testing.assert_allclose(tz.jit(lambda: tz.median(a, axis=0))(), np.median(a, axis=0))


def test_sorting_a_slice_of_an_argument():
    """IREE sorts in place and may not write an argument: tz.sort of a slice of a jitted
    function's argument failed to compile (found by the fuzz campaign), and an optimization
    barrier in its way let two sorts of one slice write into what the slice was read as."""
    x = r("sliced", 3, 4)

    def sorts(xp, x):
        return (xp.sort(x[:2], axis=0), xp.sort(x[:2], axis=1), x[:2], xp.sort(x[::2], axis=0),
                xp.argsort(x[1:], axis=0), xp.sort(x[:1], axis=0), xp.sort(x[:, 1:2], axis=1))

    for got, want in zip(tz.jit(lambda x: sorts(tz, x))(x), sorts(np, x), strict=True):
        np.testing.assert_array_equal(got, want)
    weights = np.arange(8.0).reshape(2, 4)
    grad = tz.jit(tz.grad(lambda x: (tz.sort(x[:2], axis=0) * weights).sum()))(x)
    want = np.zeros_like(x)  # each weight lands on the element sorted into its place
    np.put_along_axis(want[:2], np.argsort(x[:2], axis=0, kind="stable"), weights, axis=0)
    np.testing.assert_array_equal(grad, want)


@contextmanager
def _jax_and_tz_x64(on):
    """JAX, the reference, and tz with jax_enable_x64 `on` (both as they were afterwards)."""
    jax = pytest.importorskip("jax")
    before = jax.config.jax_enable_x64, tz.config.jax_enable_x64
    jax.config.update("jax_enable_x64", on)
    tz.config.update("jax_enable_x64", on)
    try:
        yield jax
    finally:
        jax.config.update("jax_enable_x64", before[0])
        tz.config.update("jax_enable_x64", before[1])


def _assert_same(got, want, what=""):
    """Results equal to the reference's, of its types and structure (namedtuples with its
    fields; NaNs where it has them)."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), what
        assert getattr(got, "_fields", None) == getattr(want, "_fields", None), what
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _assert_same(g, w, f"{what}[{i}]")
        return
    got, want = np.asarray(got), np.asarray(want)
    assert (got.shape, got.dtype) == (want.shape, want.dtype), what
    np.testing.assert_array_equal(got, want, err_msg=what)


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
def test_gcd_and_lcm_match_jax(x64):
    """Euclid's algorithm in a while loop: negatives, zeros, broadcasting and Python ints as
    JAX's (in int32, and int64 with x64); INT_MIN, where JAX's loops for ever, as NumPy's."""
    dtype = np.int64 if x64 else np.int32
    a = np.array([0, 0, 12, -12, 7, -9, 1, 0, 30, 2 ** 20], dtype)
    b = np.array([0, 5, 18, 18, -21, -6, 1, -4, -45, 3 * 2 ** 12], dtype)
    c = np.array([4, -6, 0, 10], dtype)
    smallest = np.array([np.iinfo(dtype).min] * 3, dtype)
    others = np.array([6, 0, -1], dtype)

    def pairs(xp, a, b, c):
        return (xp.gcd(a, b), xp.lcm(a, b), xp.gcd(a[:, None], c), xp.lcm(c, a[:, None]), xp.gcd(a, 6), xp.lcm(-4, b),
                xp.gcd(7, 21))

    with _jax_and_tz_x64(x64) as jax:
        got = tz.jit(lambda *xs: (pairs(tz, *xs[:3]), tz.gcd(*xs[3:]), tz.gcd(xs[4], xs[3])))(a, b, c, smallest,
                                                                                                  others)
        _assert_same(got[0], jax.jit(lambda *xs: pairs(jax.numpy, *xs))(a, b, c))
        for g in got[1:]:
            _assert_same(g, np.gcd(smallest, others))
    with pytest.raises(tz.TenzrError, match="gcd: takes integers, got float32"):
        tz.jit(lambda x: tz.gcd(x, 2))(np.ones(2, np.float32))
    with pytest.raises(tz.TenzrError, match="lcm: takes integers, got bool"):
        tz.jit(lambda x: tz.lcm(x, x))(np.ones(2, bool))


SET_INPUTS = {
    "i": np.array([3, -1, 4, 1, -5, 9, 2, 6, 5, 3, 5, 0], np.int32),
    "j": np.array([[2, 7, 1], [8, 2, 8]], np.int32),
    "f": np.array([0.5, np.nan, -1.0, 2.0, np.nan, 0.5], np.float32),
    "g": np.array([np.nan, 2.0, 3.0, 0.5, -1.0], np.float32),
    "u": np.array([5, 1, 3, 7], np.int32),  # (distinct and unsorted, for assume_unique)
    "v": np.array([3, 4, 5, 0], np.int32),
    "e": np.zeros(0, np.int32),
}
# name, the call (xp: tz or jax.numpy) under jit with size=, whether to check it with x64 too (int64 indices)
SIZED_SET_CASES = [
    ("union1d", lambda xp, s: (xp.union1d(s["i"], s["j"], size=14), xp.union1d(s["i"], s["j"], size=3)), False),
    ("union1d_float_fill", lambda xp, s: xp.union1d(s["f"], s["g"], size=7, fill_value=-7.0), False),
    ("intersect1d", lambda xp, s: xp.intersect1d(s["i"], s["j"], return_indices=True, size=6, fill_value=-1), True),
    ("intersect1d_float", lambda xp, s: xp.intersect1d(s["f"], s["g"], return_indices=True, size=4), False),
    ("intersect1d_promoted_nothing_common", lambda xp, s: xp.intersect1d(s["i"], s["g"] + 0.25, size=3), False),
    ("intersect1d_assume_unique", lambda xp, s: xp.intersect1d(s["u"], s["v"], assume_unique=True,
                                                               return_indices=True, size=4), False),
    ("setdiff1d", lambda xp, s: (xp.setdiff1d(s["i"], s["j"], size=12), xp.setdiff1d(s["i"], s["j"], size=4)), False),
    ("setdiff1d_float_fill", lambda xp, s: xp.setdiff1d(s["f"], s["g"], size=5, fill_value=9.0), False),
    ("setdiff1d_assume_unique", lambda xp, s: xp.setdiff1d(s["u"], s["v"], assume_unique=True, size=4), False),
    ("setdiff1d_empty", lambda xp, s: (xp.setdiff1d(s["e"], s["i"], size=2), xp.setdiff1d(s["i"], s["e"], size=11)),
     False),
    ("setxor1d", lambda xp, s: xp.setxor1d(s["i"], s["j"], size=14), False),
    ("setxor1d_float_fill", lambda xp, s: xp.setxor1d(s["f"], s["g"], size=6, fill_value=-2.0), False),
    ("setxor1d_assume_unique", lambda xp, s: xp.setxor1d(s["u"], s["v"], assume_unique=True, size=5), False),
    ("setxor1d_of_nothing", lambda xp, s: (xp.setxor1d(s["i"], s["i"], size=3), xp.setxor1d(s["e"], s["e"], size=2)),
     False),
    ("unique_values", lambda xp, s: xp.unique_values(s["f"], size=7), False),
    ("unique_counts", lambda xp, s: xp.unique_counts(s["j"], size=6, fill_value=0), False),
    ("unique_inverse", lambda xp, s: xp.unique_inverse(s["j"], size=3), False),
    ("unique_all", lambda xp, s: xp.unique_all(s["f"], size=7, fill_value=9.0), True),
]


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
def test_set_routines_with_size_under_jit_match_jax(x64):
    """union1d, intersect1d, setdiff1d, setxor1d and unique_* with size= and fill_value=
    (default fills, cut results, NaNs, assume_unique, return_indices, empty inputs) in one
    jitted function, against JAX's in one (with x64: rows of each kind of index)."""
    cases = [(name, fn) for name, fn, x64_types in SIZED_SET_CASES if x64_types or not x64]
    with _jax_and_tz_x64(x64) as jax:
        got = tz.jit(lambda s: {name: fn(tz, s) for name, fn in cases})(SET_INPUTS)
        want = jax.jit(lambda s: {name: fn(jax.numpy, s) for name, fn in cases})(SET_INPUTS)
        for name, _ in cases:
            _assert_same(got[name], want[name], name)


EAGER_SET_CASES = [
    ("union1d", lambda xp, s: xp.union1d(s["f"], s["g"])),
    ("intersect1d", lambda xp, s: xp.intersect1d(s["u"], s["v"], assume_unique=True, return_indices=True)),
    ("setdiff1d", lambda xp, s: xp.setdiff1d(s["u"], s["v"], assume_unique=True)),
    ("setxor1d", lambda xp, s: xp.setxor1d(s["u"], s["v"], assume_unique=True)),
    ("unique_all", lambda xp, s: xp.unique_all(s["f"])),
    ("unique", lambda xp, s: xp.unique(s["i"], return_index=True, return_counts=True)),
]


def _as_jax_x32(result):
    """A NumPy result in JAX's types without x64 (its int64 indices int32)."""
    if isinstance(result, tuple):
        return type(result)(*map(_as_jax_x32, result)) if hasattr(result, "_fields") else \
            tuple(map(_as_jax_x32, result))
    return result.astype(np.int32) if result.dtype == np.int64 else result


def test_set_routines_run_eagerly_without_size_as_numpy():
    """Outside jit, size= may be left out (as in JAX): every value found, none filled, as
    NumPy's (these cases' NaN rules are JAX's too), in JAX's types."""
    for name, fn in EAGER_SET_CASES:
        _assert_same(fn(tz, SET_INPUTS), _as_jax_x32(fn(np, SET_INPUTS)), name)


def test_data_dependent_sizes_need_size_under_jit():
    x = SET_INPUTS["i"]
    for name in ("union1d", "intersect1d", "setdiff1d", "setxor1d"):
        with pytest.raises(tz.TenzrError, match=f"{name}: pass size="):
            tz.jit(getattr(tz, name))(x, x)
    for name in ("unique", "unique_values", "unique_counts", "unique_inverse", "unique_all"):
        with pytest.raises(tz.TenzrError, match=f"{name}: pass size="):
            tz.jit(getattr(tz, name))(x)
    with pytest.raises(tz.TenzrError, match="an empty array with size > 0 needs a fill_value"):
        tz.union1d(SET_INPUTS["e"], SET_INPUTS["e"], size=2)


def test_long_running_sums_go_block_by_block_and_match_numpy():
    """cumsum along more than CUMSUM_BLOCK elements sums blocks and adds the running sum of
    the blocks before (recursively past CUMSUM_BLOCK blocks); its gradient is the reversed
    running sum. Before, one n x n triangle: 10,000 elements took 15 s to compile and 4
    million failed to allocate 116 TiB."""
    from tenzr.numpy_lib import CUMSUM_BLOCK

    rng = rng_for("long cumsum")
    for n in (CUMSUM_BLOCK + 1, 3 * CUMSUM_BLOCK - 5, CUMSUM_BLOCK ** 2 + 7):
        x = rng.standard_normal((2, n))
        np.testing.assert_allclose(tz.cumsum(x, axis=1), np.cumsum(x, axis=1), rtol=1e-12, atol=1e-10)
        weights = rng.standard_normal((2, n))
        grad = tz.grad(lambda v, w=weights: (tz.cumsum(v, axis=-1) * w).sum())(x)
        np.testing.assert_allclose(grad, np.cumsum(weights[:, ::-1], axis=1)[:, ::-1], rtol=1e-12, atol=1e-10)
    ints = np.arange(-3 * CUMSUM_BLOCK, 2 * CUMSUM_BLOCK, dtype=np.int32)
    np.testing.assert_array_equal(tz.cumsum(ints), np.cumsum(ints))
    big = tz.jit(tz.cumsum)(np.ones(4_000_000, np.float32))
    assert big.shape == (4_000_000,) and float(big[-1]) == 4_000_000.0


def test_sinc_derivatives_at_zero_are_its_series():
    """sin(pi x)/(pi x) = 1 - (pi x)^2/6 + (pi x)^4/120 - ...: at 0 its second derivative is
    -pi^2/3 and its fourth pi^4/5 (a `where` around 1 at 0 gave 0 for both); near 0 the
    values stay NumPy's."""
    second = tz.grad(tz.grad(tz.sinc))
    np.testing.assert_allclose(second(np.float64(0.0)), -np.pi ** 2 / 3, rtol=1e-14)
    np.testing.assert_allclose(tz.grad(tz.grad(second))(np.float64(0.0)), np.pi ** 4 / 5, rtol=1e-14)
    assert float(tz.grad(tz.sinc)(np.float64(0.0))) == 0.0
    far = tz.vmap(tz.grad(tz.sinc))(np.array([-3e4, 1e6], np.float32))  # (the series, not taken, overflows there)
    assert np.isfinite(far).all() and (np.abs(far) <= 1 / np.array([3e4, 1e6]) * 1.01).all()  # (|sinc'(x)| <= ~1/|x|)
    xs = np.concatenate([np.linspace(-0.1, 0.1, 41), [0.5, 3.3]])
    np.testing.assert_allclose(tz.sinc(xs), np.sinc(xs), rtol=1e-15, atol=1e-16)
    h = 1e-4  # (central differences of the slope across the series' edge, pi x = 0.1)
    for x in (0.1 / np.pi - 1e-3, 0.1 / np.pi + 1e-3):
        slope = (np.sinc(x + h) - np.sinc(x - h)) / (2 * h)
        np.testing.assert_allclose(tz.grad(tz.sinc)(np.float64(x)), slope, rtol=1e-7)
