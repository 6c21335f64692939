"""JAX's own exports (`jax.jit(f).lower(*args).as_text()`) differentiated by tenzr-grad,
compiled by IREE and compared with `jax.value_and_grad` (JAX is the test extra's reference;
without it these tests skip). Float64 throughout, so the comparison is tight."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy
lax = jax.lax
special = pytest.importorskip("jax.scipy.special")

from tenzr.compiler import compile_stablehlo, lower_to_stablehlo  # noqa: E402
from tenzr.dialect import make_context, parse_module  # noqa: E402
from tenzr.passes.tenzr_grad import differentiate  # noqa: E402
from tenzr.passes.tenzr_jvp import jvp_function  # noqa: E402
from tenzr.runtime import Program, device_available  # noqa: E402
from tenzr.targets import Target  # noqa: E402

rng = np.random.default_rng(0)


def r(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape)


_I, _J = np.array([0, 4, 2, 2]), np.array([1, 0, 1, 1])
_XP = np.linspace(-2, 2, 7)


def _pick(a, b):
    first = (a[0] > b[0]) | ((a[0] == b[0]) & (a[1] < b[1]))
    return lax.select(first, a[0], b[0]), lax.select(first, a[1], b[1])


def mlp(w1, b1, w2, x):
    return jax.nn.logsumexp(jnp.tanh(x @ w1 + b1) @ w2, axis=1).sum()


def layernorm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (((x - mean) / jnp.sqrt(var + 1e-5) * g + b) ** 3).sum()


def attention(q, k, v):
    return jnp.sin(jax.nn.softmax(q @ k.T / np.sqrt(q.shape[-1]), axis=-1) @ v).sum()


def maxpool(x):
    return (lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID") ** 2).sum()


CASES = {
    "mlp": (mlp, [r(4, 8), r(8), r(8, 3), r(5, 4)]),
    "conv_nhwc": (lambda x, w: jnp.tanh(lax.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))).sum(), [r(1, 5, 5, 2), r(3, 3, 2, 3)]),
    "conv_grouped_strided": (lambda x, w: (lax.conv_general_dilated(
        x, w, (2, 2), [(1, 1), (0, 1)], feature_group_count=2) ** 2).sum(), [r(1, 4, 6, 6), r(6, 2, 3, 2)]),
    "conv_dilated": (lambda x, w: jnp.sin(lax.conv_general_dilated(
        x, w, (1, 1), [(0, 0), (1, 0)], rhs_dilation=(2, 2), lhs_dilation=(1, 2))).sum(),
        [r(1, 2, 7, 7), r(3, 2, 2, 2)]),
    "max_pool": (maxpool, [r(1, 2, 4, 4)]),
    "max_pool_same_with_ties": (lambda x: (lax.reduce_window(
        jax.nn.relu(x), -jnp.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), "SAME") ** 2).sum(), [r(1, 2, 5, 5)]),
    "max_pool_gradient_again": (lambda x, w: (jax.grad(maxpool)(x) * w).sum(), [r(1, 2, 4, 4), r(1, 2, 4, 4)]),
    "min_pool_base_dilated": (lambda x: (lax.reduce_window(
        x, jnp.inf, lax.min, (1, 1, 2, 2), (1, 1, 1, 1), "VALID", base_dilation=(1, 1, 2, 1)) ** 2).sum(),
        [r(1, 2, 3, 4)]),
    "avg_pool": (lambda x: jnp.tanh(lax.reduce_window(
        x, 0.0, lax.add, (1, 1, 3, 3), (1, 1, 1, 1), "SAME") / 9).sum(), [r(1, 2, 4, 4)]),
    "cumsum": (lambda x: (jnp.cumsum(x, axis=1) ** 2).sum(), [r(3, 4)]),
    "var_std_square_fmod": (lambda x: jnp.var(x, axis=0).sum() + jnp.std(x) + (jnp.square(x) * jnp.fmod(x * 5, 2.0))
                            .sum(), [r(3, 4)]),
    "cumsum_reverse": (lambda x: (lax.cumsum(x, axis=0, reverse=True) ** 3).sum(), [r(4, 3)]),
    "cumprod_with_zeros": (lambda x: jnp.cumprod(x * (jnp.arange(12).reshape(4, 3) % 5 != 2), axis=0).sum(),
                           [r(4, 3)]),
    "gather_rows_and_columns": (lambda x: (x[jnp.array([2, 0, 1, 2])] ** 2).sum() + (x[:, jnp.array([1, 3])] * 3).sum(),
                                [r(3, 4)]),
    "take_along_axis": (lambda x: (jnp.take_along_axis(x, jnp.array([[0, 2, 1, 3]] * 3), axis=1) ** 2).sum(),
                        [r(3, 4)]),
    "scatter_set": (lambda x, u: (x.at[jnp.array([1, 0, 1])].set(u) ** 2).sum(), [r(3, 4), r(3, 4)]),
    "scatter_add": (lambda x, u: jnp.sin(x.at[jnp.array([1, 1])].add(u)).sum(), [r(3, 4), r(2, 4)]),
    # (JAX differentiates a product scatter only with unique indices)
    "scatter_multiply_max": (lambda x, u: (x.at[jnp.array([0, 2])].multiply(u[:2], unique_indices=True) ** 2).sum()
                             + x.at[jnp.array([2, 2, 0])].max(u).sum(), [r(3, 4), r(3, 4)]),
    "vmapped_dynamic_slice": (lambda x, i: (jax.vmap(lambda row, j: lax.dynamic_slice(row, (j,), (2,)))(x, i) ** 2)
                              .sum(), [r(3, 5), np.array([0, 3, 4], np.int32)]),
    "vmapped_dynamic_update_slice": (lambda x, u, i: (jax.vmap(
        lambda row, v, j: lax.dynamic_update_slice(row, v, (j,)))(x, u, i) ** 2).sum(),
        [r(3, 5), r(3, 2), np.array([1, 3, 0], np.int32)]),
    "sort": (lambda x: (jnp.sort(x, axis=1) * jnp.arange(4.0)).sum(), [r(3, 4)]),
    "argsort_take": (lambda x: (x[jnp.argsort(x[:, 0])] ** 2).sum(), [r(3, 4)]),
    "top_k": (lambda x: (lax.top_k(x, 2)[0] ** 2).sum(), [r(3, 5)]),
    "dynamic_slice": (lambda x, i: (lax.dynamic_slice(x, (i, 1), (2, 2)) ** 2).sum(), [r(4, 4), np.int64(1)]),
    "dynamic_update_slice": (lambda x, u, i: (lax.dynamic_update_slice(x, u, (i, 0)) ** 2).sum(),
                             [r(4, 4), r(2, 4), np.int64(2)]),
    "erf_and_friends": (lambda x: (special.erf(x) + jnp.arctan(x) + jnp.sinh(x) + jnp.cosh(x) + jnp.arcsinh(x)
                                   + jnp.tan(x * 0.3)).sum(), [r(2, 3)]),
    "special_functions": (lambda x: (special.gammaln(x * x + 1) + special.digamma(x * x + 1) + jnp.arcsin(x * 0.2)
                                     + jnp.arccos(x * 0.2) + jnp.arctanh(x * 0.2) + jnp.arccosh(x * x + 1.5)
                                     + special.erfinv(x * 0.2)).sum(), [r(2, 3)]),
    "layernorm": (layernorm, [r(3, 5), r(5), r(5)]),
    "attention": (attention, [r(4, 3), r(5, 3), r(5, 2)]),
    "clip_where_maximum": (lambda x: (jnp.clip(x, -0.5, 0.5) + jnp.where(x > 0, x, 0.1 * x)
                                      + jnp.maximum(x, 0.2)).sum(), [r(3, 4)]),
    # Inputs on the kinks get JAX's choices: clamp 0 at its bounds, abs 1 at 0, maximum ½
    # at a tie. (JAX differentiates lax.clamp only with bounds of the operand's shape; and
    # jax.nn.relu's custom JVP, 0 at 0, is not in its export, a maximum with 0.)
    "ties_at_kinks": (lambda x, lo, hi: (lax.clamp(lo, x, hi) * x).sum() + (jnp.abs(x) + jnp.maximum(x, 0.5)).sum(),
                      [np.array([[-1.0, -0.5, 0.0, 0.5], [1.0, 0.2, 2.0, -2.0]]), np.full((2, 4), -0.5),
                       np.full((2, 4), 0.5)]),
    "fori_loop": (lambda x: lax.fori_loop(0, 5, lambda i, v: jnp.sin(v) * v + i, x).sum(), [r(3, 4)]),
    "scan_rnn": (lambda w, xs: lax.scan(lambda h, x: (jnp.tanh(w @ h + x), (h * h).sum()), jnp.ones(3), xs)[1].sum(),
                 [r(3, 3), r(6, 3)]),
    "scan_reverse_pytree": (lambda w, xs: jax.tree_util.tree_reduce(lambda a, b: a + b.sum(), lax.scan(
        lambda c, x: ((c[0] * x, c[1] + jnp.sin(c[0])), {"y": c[0] * w}), (w, w), xs, reverse=True), 0.0),
        [r(3), r(5, 3)]),
    "cond_and_switch": (lambda x: lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x).sum() + lax.switch(
        2, [jnp.exp, jnp.tanh, lambda a: a * a], x).sum(), [r(2, 3)]),
    "pad_concat_strided_repeat": (lambda x: (jnp.concatenate([jnp.pad(x, ((1, 0), (0, 2))),
                                                              x[::-1, ::2].repeat(3, 1)], 0) ** 2).sum(), [r(3, 4)]),
    "prod": (lambda x: jnp.prod(x, axis=1).sum(), [r(3, 4)]),
    "argmax_index": (lambda x: x[jnp.arange(3), jnp.argmax(x, axis=1)].sum(), [r(3, 4)]),
    # JAX's LAPACK calls (potrf, getrf, geqrf and orgqr, syevd, gesdd, trsm), which tenzr-expand-lapack turns into loops
    "cholesky_and_solves": (lambda a, b: (jax.scipy.linalg.solve_triangular(
        jnp.linalg.cholesky(a @ a.T + 3 * jnp.eye(4)), b, lower=True) ** 2).sum()
        + (jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(a @ a.T + jnp.eye(4)), b) * b).sum()
        + jnp.log(jnp.diag(jnp.linalg.cholesky(a @ a.T + jnp.eye(4)))).sum(), [r(4, 4), r(4, 2)]),
    "triangular_solve_variants": (lambda a, b: (jax.scipy.linalg.solve_triangular(
        jnp.tril(a) + 4 * jnp.eye(4), b, trans=1, lower=True) ** 2).sum()
        + jax.scipy.linalg.solve_triangular(jnp.triu(a) + 4 * jnp.eye(4), b, lower=False, unit_diagonal=True).sum()
        + (lax.linalg.triangular_solve(jnp.tril(a) + 4 * jnp.eye(4), b.T, left_side=False, lower=True,
                                       transpose_a=True) ** 2).sum()
        + jax.scipy.linalg.cholesky(a @ a.T + jnp.eye(4), lower=False).sum(), [r(4, 4), r(4, 3)]),
    "lu_solve_inv_slogdet": (lambda a, b: (jnp.linalg.solve(a, b) ** 2).sum() + (jnp.linalg.inv(a) * b[:, :1]).sum()
                             + jnp.linalg.slogdet(a)[1] + (jax.scipy.linalg.lu_factor(a)[0] * b[:, 1:]).sum()
                             + (jnp.linalg.solve(a, b[:, 0]) ** 2).sum()  # (one right-hand side too)
                             + sum((m ** 2).sum() for m in jax.scipy.linalg.lu(a[:, :3])[1:])  # (tall and wide)
                             + (jax.scipy.linalg.lu(jnp.sin(a[:4]))[2] * a[:4]).sum(),
                             [r(5, 5), r(5, 2)]),
    # scatters with a window dim before or between indexed ones (IREE failed to compile the
    # first and wrote the wrong elements for the second), as batched det's gradient scatters
    # into the diagonals
    "scatter_window_orders_and_batched_det": (
        lambda x, y, a: (jnp.asarray(x).at[:, _I, _J].add(y[:4, :, 0].T) ** 2).sum()
        + (jnp.asarray(y).at[_I, :, _J].add(x[:, :4, 0].T) ** 2).sum() + jnp.linalg.slogdet(a)[1].sum()
        + jnp.linalg.det(a).sum(), [r(3, 5, 2), r(5, 3, 2), r(3, 4, 4)]),
    "batched_solve": (lambda a, b: (jnp.linalg.solve(a, b) ** 2).sum(), [r(3, 4, 4), r(3, 4, 2)]),
    "qr_tall_wide_complete": (lambda a, w: (jnp.linalg.qr(a)[0] * w[:, :3]).sum() + (jnp.linalg.qr(a.T)[1] ** 2).sum()
                              + (jnp.linalg.qr(a, mode="complete")[0] * w).sum() + jnp.linalg.qr(a, mode="r").sum(),
                              [r(5, 3), r(5, 5)]),
    # (eigenvectors' signs may differ from LAPACK's: the function is one of V diag(f(w)) Vᵀ)
    "eigh": (lambda a: (lambda w, v: ((v / jnp.sqrt(w)) @ v.T).sum() + (w ** 2).sum())(
        *jnp.linalg.eigh(a @ a.T + jnp.eye(4))), [r(4, 4)]),
    # (singular vectors' signs may differ from LAPACK's: functions of U diag(f(s)) Vᵀ, pinv and s)
    "svd_pinv_norm": (lambda a, b: (lambda u, s, vt: ((u * jnp.sin(s)) @ vt * a).sum())(
        *jnp.linalg.svd(a, full_matrices=False)) + (jnp.linalg.pinv(a) * b[0]).sum()
        + jnp.linalg.norm(a, 2) + (jnp.linalg.svd(b, compute_uv=False) ** 3).sum()
        + (lambda u, s, vt: (u @ vt * jnp.cos(b[0, :, :3])).sum())(*jnp.linalg.svd(b[1, :, :3])),
        [r(5, 3), r(2, 3, 5)]),
    # stablehlo.fft (tenzr-expand-fft): every type, lengths odd and even, 1-d and n-d
    "fft": (lambda x, y: (jnp.abs(jnp.fft.rfft(x)) ** 2 * jnp.arange(4)).sum()
            + jnp.real(jnp.fft.ifft2(x * (1 + 2j)) * jnp.conj(jnp.fft.fft(jnp.sin(x)))).sum()
            + (jnp.fft.irfftn(jnp.fft.rfftn(y) * jnp.arange(1, 5), s=y.shape) * y).sum()
            + (jnp.fft.irfft(jnp.fft.fft(y, axis=0)[:, :3] ** 2, n=5) ** 2).sum(), [r(3, 6), r(2, 7)]),
    # a solve's loops, then a scan over cond, as in expm (IREE lost a buffer there until the
    # scan's loop got a copy), interp (searchsorted's loop carries unsigned indices) and
    # norm.logcdf (erfc)
    "solve_then_scan_of_cond_interp_logcdf": (
        lambda a, x: lax.scan(lambda c, i: (lax.cond(i < 2.0, jnp.sin, lambda v: v, c), None),
                              jnp.linalg.solve(a + 3 * jnp.eye(4), a), jnp.arange(6.0))[0].sum()
        + (jnp.interp(x, _XP, jnp.sin(_XP) * a[0, 0]) ** 2).sum() + jax.scipy.stats.norm.logcdf(x).sum(),
        [r(4, 4), r(3, 5)]),
    "batched_cholesky": (lambda a, w: (jnp.linalg.cholesky(jnp.einsum("bij,bkj->bik", a, a) + jnp.eye(3)) ** 2
                                       * w[:, None, None]).sum(), [r(2, 3, 3), r(2)]),
    # complex reductions (their init a complex splat, which the bindings cannot read) and a
    # reduction over no dims (unique(size=), sum(axis=())) crashed the lowering
    "complex_sums_and_empty_reductions": (
        lambda x: jnp.real(jnp.sum(jnp.exp(1j * x) * x)) + jnp.imag(jnp.mean(jnp.exp(2j * x)))
        + (jnp.unique(jnp.floor(x), size=4, fill_value=0.0) * x[:4]).sum() + jnp.sum(jnp.sin(x), axis=()).sum(),
        [r(6)]),
    # float floor division and lax.round export stablehlo.round_nearest_afz (no gradient rule)
    "floor_divide_and_round": (lambda x: jnp.sum((x // 0.7) * x) + jnp.sum(lax.round(x * 2) * x), [r(6)]),
}


def _float_args(args) -> tuple[int, ...]:
    return tuple(i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f")


def _compile(fn, args) -> Program:
    """fn's export with `@main_value_and_grad` (tenzr-grad) and `@main_jvp` (tenzr-jvp)
    beside it."""
    text = jax.jit(fn).lower(*args).as_text()
    with make_context():
        module = parse_module(text)
        differentiate(module, "main", _float_args(args), "value_and_grad")
        jvp_function(module, "main", _float_args(args))
        lower_to_stablehlo(module, Target())
        lowered = str(module)
    return Program(compile_stablehlo(lowered, Target()), Target())


_PROGRAMS: dict[str, Program] = {}


def _compiled_case(name: str) -> Program:
    """CASES[name] compiled once for both of its tests."""
    if name not in _PROGRAMS:
        _PROGRAMS[name] = _compile(*CASES[name])
    return _PROGRAMS[name]


def _assert_matches_jax(fn, args, got) -> None:
    value, grads = jax.jit(jax.value_and_grad(fn, argnums=_float_args(args)))(*args)
    want = [np.asarray(value), *map(np.asarray, grads)]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", list(CASES))
def test_value_and_grad_of_a_jax_export_matches_jax(name):
    fn, args = CASES[name]
    _assert_matches_jax(fn, args, _compiled_case(name)("main_value_and_grad", *[np.asarray(a) for a in args]))


@pytest.mark.parametrize("name", list(CASES))
def test_jvp_of_a_jax_export_matches_jax(name):
    fn, args = CASES[name]
    floats = _float_args(args)
    tangents = [rng.standard_normal(np.shape(args[i])) for i in floats]
    value, tangent = _compiled_case(name)("main_jvp", *[np.asarray(a) for a in args], *tangents)

    def of_floats(*xs):
        full = list(args)
        for i, x in zip(floats, xs, strict=True):
            full[i] = x
        return fn(*full)

    want_value, want_tangent = jax.jit(lambda *xs: jax.jvp(of_floats, xs, tuple(tangents)))(*(args[i] for i in floats))
    np.testing.assert_allclose(value, want_value, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tangent, want_tangent, rtol=1e-10, atol=1e-12)


def test_out_of_range_writes_are_dropped_as_in_jax():
    """JAX defines them: an out-of-range write is dropped (IREE alone writes past the buffer)."""
    def f(x, u):
        far = jnp.array([5, -7, 1])
        return (x.at[far].set(u) ** 3).sum() + jnp.sin(x.at[far].add(u)).sum()

    args = [r(3, 4), r(3, 4)]
    program = _compile(f, args)
    _assert_matches_jax(f, args, program("main_value_and_grad", *args))


def test_stable_sorts_keep_ties_in_order_as_jax():
    """JAX's stable sorts (argsort, a sort by keys carrying values, top_k) keep equal keys in
    their order; IREE ignores is_stable, and argsort of [1, 0, 1, 0, ...] came back
    [1, 5, 3, 7, ...]. Values, indices and the gradients that follow the tied elements."""
    keys = np.floor(np.linspace(0.0, 2.9, 12))[np.array([3, 11, 0, 7, 5, 9, 1, 10, 2, 8, 4, 6])]
    weights = np.arange(1.0, 13.0)

    def f(x):
        order = jnp.argsort(jnp.floor(x))
        by_key = lax.sort((jnp.floor(x), x * weights), num_keys=1)[1]
        top, where = lax.top_k(jnp.floor(x), 5)
        return (x[order] * weights).sum() + (by_key * weights).sum() + (x[where] * weights[:5]).sum() + top.sum()

    args = [keys + 0.25 * np.cos(np.arange(12.0))]
    program = _compile(f, args)
    _assert_matches_jax(f, args, program("main_value_and_grad", *args))
    with make_context():
        module = parse_module(jax.jit(jnp.argsort).lower(keys).as_text())
        lower_to_stablehlo(module, Target())
        lowered = str(module)
    (indices,) = Program(compile_stablehlo(lowered, Target()), Target())("main", keys)
    np.testing.assert_array_equal(indices, np.argsort(keys, kind="stable"))


def test_lapack_factorizations_pivot_as_lapack_and_keep_nans():
    """LU pivots on the first largest |A[i, j]| (LAPACK's idamax), so ties and a zero
    pivot give LAPACK's rows; a NaN in the matrix makes the solution NaN (never finite
    numbers from a skipped row), as does a matrix that is not positive definite for
    Cholesky."""
    def f(a, spd):
        lu, pivots = jax.scipy.linalg.lu_factor(a)
        return lu, pivots, jnp.linalg.solve(a, jnp.ones((3, 2))), jnp.linalg.cholesky(spd)

    with make_context():
        module = parse_module(jax.jit(f).lower(np.eye(3), np.eye(2)).as_text())
        lower_to_stablehlo(module, Target())
        program = Program(compile_stablehlo(str(module), Target()), Target())
    tied = np.array([[1.0, 2, 1], [-1, 1, 0], [0, 3, 1]])
    singular = np.array([[0.0, 2, 1], [0, 1, 3], [0, 4, 2]])
    for a in (tied, singular):
        for got, want in zip(program("main", a, np.eye(2))[:2], f(a, np.eye(2))[:2], strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-12)
    nan = np.nan
    for a in ([[nan, 2, 1], [1, 1, 0], [0, 3, 1]], [[1, 2, 1], [nan, 1, 0], [0, 3, 1]], [[1, 2, 1], [3, nan, 0],
                                                                                          [0, 3, 1]]):
        _, pivots, solution, _ = program("main", np.array(a), np.eye(2))
        assert np.isnan(solution).all() and ((0 <= pivots) & (pivots < 3)).all()
    assert np.isnan(program("main", np.eye(3), np.array([[1.0, 2.0], [2.0, 1.0]]))[3]).any()


def test_svd_gives_orthonormal_vectors_where_lapack_does():
    """gesdd's results for tall, wide, batched, rank-deficient and zero matrices, thin and
    full: LAPACK's singular values, U and Vᵀ with orthonormal columns and rows (completed
    to a basis where singular values are 0, or U is wider than A), and U diag(s) Vᵀ = A."""
    def f(tall, wide, batched):
        return (jnp.linalg.svd(tall), jnp.linalg.svd(tall, full_matrices=False), jnp.linalg.svd(wide),
                jnp.linalg.svd(batched))

    shapes = [(6, 4), (3, 5), (2, 4, 4)]
    with make_context():
        module = parse_module(jax.jit(f).lower(*[np.ones(s) for s in shapes]).as_text())
        lower_to_stablehlo(module, Target())
        program = Program(compile_stablehlo(str(module), Target()), Target())
    deficient = [r(6, 2) @ r(2, 4), r(3, 1) @ r(1, 5), np.stack([r(4, 3) @ r(3, 4), np.zeros((4, 4))])]
    for args in ([r(*s) for s in shapes], deficient, [np.zeros(s) for s in shapes]):
        got = program("main", *args)
        for (u, s, vt), a in zip(zip(*[iter(got)] * 3, strict=True), [args[0], *args], strict=True):
            k = s.shape[-1]
            np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), atol=1e-13)
            np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vt[..., :k, :], a, atol=1e-13)
            for gram in (np.swapaxes(u, -1, -2) @ u, vt @ np.swapaxes(vt, -1, -2)):
                np.testing.assert_allclose(gram, np.broadcast_to(np.eye(gram.shape[-1]), gram.shape), atol=1e-13)


def test_out_of_range_reads_clamp_and_their_gradient_is_the_clamped_rows():
    """An out-of-range read clamps (StableHLO's gather, and JAX's value agrees; IREE alone
    reads past the buffer). Its derivative goes to the rows read, as finite differences
    say; JAX's own gradient drops it (its transpose scatters, which drops), so the
    gradient is checked against central differences here."""
    def f(x, u):
        return (jnp.asarray(x)[jnp.array([5, -7, 1])] ** 2 * u).sum()

    x, u = r(3, 4), r(3, 4)
    program = _compile(f, [x, u])
    value, dx, du = program("main_value_and_grad", x, u)
    np.testing.assert_allclose(value, f(x, u), rtol=1e-12)
    step = 1e-6
    for got, at in ((dx, 0), (du, 1)):
        numeric = np.zeros_like(got)
        for index in np.ndindex(got.shape):
            moved = [np.array(x), np.array(u)]
            moved[at][index] += step
            up = float(f(*moved))
            moved[at][index] -= 2 * step
            numeric[index] = (up - float(f(*moved))) / (2 * step)
        np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-8)


def test_hessian_vector_product_of_a_jax_gradient():
    """jax.grad's own export differentiated again with mode=vjp is a Hessian-vector product."""
    def loss(w, x):
        return jnp.tanh(x @ w).sum() + (w ** 4).sum()

    w, x, v = r(3, 2), r(4, 3), r(3, 2)
    text = jax.jit(jax.grad(loss)).lower(w, x).as_text()
    with make_context():
        module = parse_module(text)
        differentiate(module, "main", (0,), "vjp")
        lower_to_stablehlo(module, Target())
        lowered = str(module)
    program = Program(compile_stablehlo(lowered, Target()), Target())
    grad, hvp = program("main_vjp", w, x, v)
    want = jax.jvp(jax.grad(loss), (w, x), (v, np.zeros_like(x)))[1]  # H v (H is symmetric)
    np.testing.assert_allclose(grad, jax.grad(loss)(w, x), rtol=1e-12)
    np.testing.assert_allclose(hvp, want, rtol=1e-10, atol=1e-12)


def test_hessian_vector_product_through_a_grouped_convolutions_gradient():
    """JAX's gradient of a grouped (depthwise) convolution has a convolution with batch groups
    (the kernel's cotangent), differentiated again here: per group, as StableHLO defines it."""
    def loss(x, w):
        y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                     feature_group_count=2)
        return jnp.tanh(y).sum() + (y ** 2).sum() * 0.1

    x, w, dx, dw = r(2, 5, 5, 2), r(3, 3, 1, 4), r(2, 5, 5, 2), r(3, 3, 1, 4)
    text = jax.jit(jax.grad(loss, argnums=(0, 1))).lower(x, w).as_text()
    assert "batch_group_count = 2" in text
    with make_context():
        module = parse_module(text)
        differentiate(module, "main", (0, 1), "vjp")
        lower_to_stablehlo(module, Target())
        lowered = str(module)
    program = Program(compile_stablehlo(lowered, Target()), Target())
    *grads, hx, hw = program("main_vjp", x, w, dx, dw)
    want = jax.jit(lambda: jax.jvp(jax.grad(loss, argnums=(0, 1)), (x, w), (dx, dw))[1])()  # H v (H is symmetric)
    for got, expected in zip([*grads, hx, hw], [*jax.grad(loss, argnums=(0, 1))(x, w), *want], strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def _tool(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def _pool_conv(x, w):
    pooled = lax.reduce_window(jax.nn.relu(x), -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME")
    return jnp.tanh(lax.conv_general_dilated(pooled, w, (1, 1), "SAME",
                                             dimension_numbers=("NHWC", "HWIO", "NHWC"))).sum()


@pytest.mark.parametrize("target", ["cpu", "vulkan", "cuda"])
def test_the_tools_differentiate_compile_and_run_a_jax_export(tmp_path, target):
    """As a user would: tenzr-opt --tenzr-grad, tenzr-compile --target, tenzr-run."""
    if target != "cpu" and not device_available(target):
        pytest.skip(f"no {target} device (Vulkan: apt-get install mesa-vulkan-drivers; CUDA: make gpu-check)")
    dtype = np.float64 if target != "vulkan" else np.float32  # (no float64 on IREE's portable Vulkan target)
    f = _pool_conv
    args = [r(1, 5, 5, 2).astype(dtype), r(3, 3, 2, 3).astype(dtype)]
    (tmp_path / "f.mlir").write_text(jax.jit(f).lower(*args).as_text())
    value, grads = jax.value_and_grad(f, argnums=(0, 1))(*args)
    for i, a in enumerate(args):
        np.save(tmp_path / f"in{i}.npy", a)
    commands = [
        [_tool("tenzr-opt"), "f.mlir", "--tenzr-grad=func=main mode=value_and_grad", "-o", "g.mlir"],
        [_tool("tenzr-compile"), "g.mlir", f"--target={target}", "-o", "g.vmfb"],
        [_tool("tenzr-run"), "g.vmfb", "--function", "main_value_and_grad", "--input", "in0.npy", "--input",
         "in1.npy", "--target", target, "--output-dir", "out"],
    ]
    for command in commands:
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    got = [np.load(tmp_path / "out" / f"result{i}.npy") for i in range(3)]
    tolerance = 1e-10 if dtype == np.float64 else 2e-5
    for g, w in zip(got, [value, *grads], strict=True):
        np.testing.assert_allclose(g, np.asarray(w), rtol=tolerance, atol=tolerance)


def test_a_differentiated_jax_export_compiles_for_cuda(tmp_path):
    """Without a GPU, the CUDA half of the tools' path: tenzr-compile --target=cuda builds
    the value_and_grad module (the run is the test above, on a GPU)."""
    args = [r(1, 5, 5, 2), r(3, 3, 2, 3)]
    (tmp_path / "f.mlir").write_text(jax.jit(_pool_conv).lower(*args).as_text())
    for command in [[_tool("tenzr-opt"), "f.mlir", "--tenzr-grad=func=main mode=value_and_grad", "-o", "g.mlir"],
                    [_tool("tenzr-compile"), "g.mlir", "--target=cuda", "-o", "g.vmfb"]]:
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "g.vmfb").stat().st_size > 0


def test_shape_polymorphic_exports_are_refused_clearly(tmp_path):
    """A shape-polymorphic export (`tensor<?x3xf32>`) was told it had no floating-point
    argument (tenzr-grad) and crashed tenzr-compile: each tool names the dynamic argument."""
    b = jax.export.symbolic_shape("b")
    polymorphic = jax.ShapeDtypeStruct((b[0], 3), jnp.float32)
    exported = jax.export.export(jax.jit(lambda x: jnp.sum(jnp.tanh(x) * x)))(polymorphic)
    source = tmp_path / "poly.mlir"
    source.write_text(exported.mlir_module())
    for command in ([_tool("tenzr-opt"), str(source), "--tenzr-grad=func=main"],
                    [_tool("tenzr-opt"), str(source), "--tenzr-jvp=func=main"],
                    [_tool("tenzr-compile"), str(source), "-o", str(tmp_path / "poly.vmfb")]):
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 1, done.stderr
        assert "argument 0 of '@main' has type tensor<?x3xf32>: dynamic shapes are not supported" in done.stderr


def test_tenzr_run_reads_bfloat16_npy_files(tmp_path):
    """NumPy saves bfloat16 arrays (ml_dtypes', as JAX's and tenzr-run's own results) as
    2-byte voids: tenzr-run refused its own bfloat16 results as inputs."""
    import ml_dtypes

    from tenzr.tools.tenzr_run import parse_input

    values = np.array([1.5, -2.25, 3.0], ml_dtypes.bfloat16)
    np.save(tmp_path / "x.npy", values)
    loaded = parse_input(str(tmp_path / "x.npy"))
    assert loaded.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(loaded.astype(np.float32), [1.5, -2.25, 3.0])


def test_x64_exports_drawing_random_numbers_compile_and_match_jax():
    """With x64, jax.random's exports convert 0-d int64 counters to uint32 (and back), which
    IREE's host VM could not ("failed to legalize operation 'arith.trunci' ... (i64) -> ui32"):
    the same bits and numbers as JAX."""
    def f(x):
        key = jax.random.key(7)
        bits = jax.random.bits(jax.random.fold_in(key, 3), (4,))
        return jnp.sum(x * jax.random.uniform(key, (3,))) + jnp.sum(jax.random.normal(key, (2,))), bits

    x = np.array([1.0, 2.0, 3.0])
    with make_context():
        module = parse_module(jax.jit(f).lower(x).as_text())
        lower_to_stablehlo(module, Target())
        lowered = str(module)
    value, bits = Program(compile_stablehlo(lowered, Target()), Target())("main", x)
    want_value, want_bits = jax.jit(f)(x)
    np.testing.assert_allclose(value, want_value, rtol=1e-15)
    np.testing.assert_array_equal(bits, want_bits)


@pytest.mark.parametrize("source, target", [("i64", "ui32"), ("ui32", "i64"), ("ui32", "ui64"), ("ui64", "ui32"),
                                            ("i32", "ui64"), ("ui64", "i32"), ("ui32", "i32"), ("i64", "ui64")])
def test_scalar_integer_conversions_with_unsigned_types_wrap_as_numpy(source, target):
    """0-d conversions to or from unsigned integers go through signless ones (tenzr-expand-math;
    IREE's host VM has none, test_x64_exports_drawing_random_numbers...): the values NumPy's
    astype gives, extremes included."""
    kinds = {"i32": np.int32, "i64": np.int64, "ui32": np.uint32, "ui64": np.uint64}
    info = np.iinfo(kinds[source])
    text = (f"func.func @main(%x: tensor<{source}>) -> tensor<{target}> {{\n"
            f"  %0 = stablehlo.convert %x : (tensor<{source}>) -> tensor<{target}>\n"
            f"  return %0 : tensor<{target}>\n}}\n")
    with make_context():
        module = parse_module(text)
        lower_to_stablehlo(module, Target())
        program = Program(compile_stablehlo(str(module), Target()), Target())
    for value in (info.min, info.max, 0, 1, info.max // 3, info.min // 5):
        x = np.array(value, kinds[source])
        (got,) = program("main", x)
        assert np.asarray(got).dtype == kinds[target] and np.asarray(got) == x.astype(kinds[target]), (value, got)
