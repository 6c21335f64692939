"""The histogram, partial-sort, NaN-quantile, polynomial and special elementwise routines
of `tenzr.numpy_routines` against JAX's own (`jax.numpy`, float32 on its CPU backend):
values in one jitted table each side, gradients in one `tz.grad` against `jax.grad`, and
the routines that read concrete values (`trim_zeros`, `choose(mode="raise")`,
`polydiv(trim_leading_zeros=True)`) called eagerly."""

from __future__ import annotations

import numpy as np
import pytest

import tenzr as tz

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.usefixtures("jax_without_x64")
jnp = jax.numpy

rng = np.random.default_rng(7)
A = rng.standard_normal(40).astype(np.float32)
W = rng.uniform(0.5, 2.0, 40).astype(np.float32)
P2 = rng.standard_normal((20, 2)).astype(np.float32)
M = rng.standard_normal((3, 7)).astype(np.float32)
NANS = np.where(rng.uniform(size=(4, 6)) < 0.3, np.nan, rng.standard_normal((4, 6))).astype(np.float32)
NANS[2] = np.nan  # (a row with nothing but NaNs)
KEYS = rng.integers(0, 3, (3, 12)).astype(np.int32)
INTS = rng.integers(0, 5, (3, 9)).astype(np.int32)
Z = (rng.standard_normal(6) + 1j * rng.standard_normal(6)).astype(np.complex64)
Z[3] = Z[1].real + 0.5j  # (equal real parts, ordered by the imaginary ones)
PHASE = np.cumsum(rng.uniform(-2.5, 2.5, 15)).astype(np.float32)
XS = np.linspace(-1.5, 2.0, 11).astype(np.float32)
YS = (XS ** 3 - 2 * XS + rng.standard_normal(11) * 0.1).astype(np.float32)
SPECIAL = np.array([0.0, -0.0, 1.0, -3.0, 0.1, 1e-30, -7e30, 6.5, np.inf, -np.inf, np.nan], np.float32)
ROOTS = np.array([1.0, -2.0, 0.5], np.float32)
CHOICE = np.array([[0, 2, 1], [3, -1, 5]], np.int32)
CHOICES = np.arange(12, dtype=np.float32).reshape(4, 3)
ARGS = (A, W, P2, M, NANS, KEYS, INTS, Z, PHASE, XS, YS, SPECIAL, ROOTS, CHOICE, CHOICES)


def table(np_):
    """Every routine's rows, for a numpy-like module `np_` (tz or jax.numpy)."""

    def rows(a, w, p2, m, nans, keys, ints, z, phase, xs, ys, special, roots, choice, choices):
        out = {}
        out["histogram"] = (np_.histogram(a, 8), np_.histogram_bin_edges(a, np_.array([0.0, 1.0])))
        out["histogram_range_weights"] = np_.histogram(a, 5, range=(-1.0, 1.5), weights=w)
        out["histogram_edges_density"] = np_.histogram(a, np_.array([-2.0, -0.5, 0.0, 0.3, 2.0]), density=True)
        out["histogram_empty_range"] = np_.histogram(np_.ones(5), 4)
        out["histogram2d"] = np_.histogram2d(p2[:, 0], p2[:, 1], bins=(3, 4), weights=w[:20])
        out["histogram2d_edges"] = np_.histogram2d(p2[:, 0], p2[:, 1], bins=np_.array([-2.0, -1.0, 0.0, 1.0, 2.0]))
        out["histogramdd"] = np_.histogramdd(p2, bins=[3, 2], range=[(-1.0, 1.0), None], density=True)
        out["lexsort"] = np_.lexsort(keys)
        out["lexsort_axis0"] = np_.lexsort([ints[:, :3], ints[:, 3:6]], axis=0)
        out["sort_complex_real"] = np_.sort_complex(ints[0])
        out["partition"] = np_.partition(m, 2)
        out["partition_axis0"] = np_.partition(m, -1, axis=0)
        out["argpartition"] = np_.argpartition(m, 3)
        out["argpartition_ties"] = np_.argpartition(ints, 5)
        out["sort_complex"] = np_.sort_complex(z)
        out["nanquantile"] = np_.nanquantile(nans, np_.array([0.0, 0.3, 0.5, 1.0]), axis=1)
        for method in ("lower", "nearest", "midpoint"):
            out["nanquantile_" + method] = np_.nanquantile(nans, 0.4, axis=0, method=method)
        out["nanquantile_all_keepdims"] = np_.nanquantile(nans, 0.25, keepdims=True)
        out["nanpercentile"] = np_.nanpercentile(nans, 75.0, axis=1, keepdims=True)
        out["nanmedian"] = np_.nanmedian(nans, axis=1)
        ties = np_.array([0.125, 0.375, 0.5, 0.625, 0.875])  # (halfway between two of 5 values, or of 4 for 0.5)
        out["quantile_nearest_ties"] = (np_.quantile(m[:, :5], ties, axis=1, method="nearest"),
                                        np_.nanquantile(m[:, :5], ties, axis=1, method="nearest"),
                                        np_.quantile(m[0, :4], 0.5, method="nearest"),
                                        np_.nanquantile(m[0, :4], 0.5, method="nearest"))
        out["quantile_of_nans"] = (np_.quantile(nans, 0.3, axis=1), np_.median(nans, axis=0))
        out["piecewise"] = np_.piecewise(a, [a < -0.5, a > 0.5], [lambda v: v * v, lambda v: np_.sin(v), 7.0])
        out["piecewise_no_default"] = np_.piecewise(ints, [ints == 1, ints >= 3], [-1, lambda v, k: v * k], 10)
        out["choose_clip"] = np_.choose(choice, choices, mode="clip")
        out["choose_wrap"] = np_.choose(choice, list(choices), mode="wrap")
        out["unwrap"] = np_.unwrap(phase)
        out["unwrap_period"] = np_.unwrap(m * 4, discont=2.0, axis=0, period=3.0)
        out["unwrap_ints"] = np_.unwrap(ints * 3, period=8)
        out["frexp"] = np_.frexp(special)
        out["frexp_float16_subnormals"] = np_.frexp(np_.array([1e-6, -6e-8, 3e-5, 6e4], np_.float16))
        out["spacing"] = np_.spacing(special[:-3])
        out["i0"] = np_.i0(np_.concatenate([a * 5, np_.array([0.0, 8.0, -20.0, 60.0])]))
        out["kaiser"] = np_.kaiser(9, 4.5)
        out["kaiser_short"] = (np_.kaiser(1, 2.0), np_.kaiser(0, 2.0))
        out["windows_of_float_length"] = (np_.kaiser(4.5, 2.0), np_.bartlett(4.5), np_.blackman(5.9),
                                          np_.hamming(4.5), np_.hanning(3.2))
        out["poly"] = np_.poly(roots)
        out["poly_scalar"] = np_.poly(2.5)
        out["polyfit_full"] = np_.polyfit(xs, np_.stack([ys, 2 * xs], axis=1), 2, full=True)
        out["polyfit_weighted_cov"] = np_.polyfit(xs, ys, 2, w=np_.linspace(0.5, 1.5, 11), cov=True)
        out["polydiv"] = np_.polydiv(np_.array([1.0, -3.0, 0.0, 2.0, 5.0]), np_.array([2.0, 1.0, -1.0]))
        out["polydiv_short"] = np_.polydiv(np_.array([3.0]), np_.array([1.0, 2.0]))
        return out

    return rows


def _compare(got, want, path="", rtol=1e-4, atol=1e-5):
    if isinstance(want, dict):
        assert set(got) == set(want), path
        for k in want:
            _compare(got[k], want[k], f"{path}.{k}", rtol, atol)
    elif isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _compare(g, w, f"{path}[{i}]", rtol, atol)
    else:
        g, w = np.asarray(got), np.asarray(want)
        assert g.shape == w.shape, f"{path}: shape {g.shape} != JAX's {w.shape}"
        assert g.dtype == w.dtype, f"{path}: dtype {g.dtype} != JAX's {w.dtype}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=path)


def test_values_match_jax_under_jit():
    got = tz.jit(table(tz))(*ARGS)
    want = jax.jit(table(jnp))(*ARGS)
    _compare(got, want)


def test_polynomial_of_a_matrix_matches_jax():
    a = np.array([[2.0, 1.0, 0.0], [0.5, -1.0, 3.0], [1.0, 0.0, 1.5]], np.float32)
    _compare(tz.jit(tz.poly)(a), jnp.poly(a), rtol=1e-4, atol=1e-4)


def loss(np_):
    def f(a, w, nans, phase, ys):
        h, _ = np_.histogram(a, 6, weights=w * w)
        return (np_.sum(h * np_.arange(6.0)) + np_.nansum(np_.nanquantile(nans * w[:24].reshape(4, 6),
                                                                                        np_.array([0.2, 0.7]), axis=1))
                + np_.sum(np_.nanmedian(nans * nans, axis=0) ** 2) + np_.sum(np_.unwrap(phase * w[:15]) ** 2)
                + np_.sum(np_.polyfit(np_.linspace(-1.0, 1.0, 11), ys * w[:11], 2) ** 2)
                + np_.sum(np_.partition(a * w, 5)[:6] ** 2) + np_.sum(np_.frexp(a * 3)[0] * w)
                + np_.sum(np_.i0(a * w))
                + np_.sum(np_.piecewise(a, [a < 0], [lambda v: v * v, lambda v: 3 * v]) * w))

    return f


def test_gradients_match_jax():
    args = (A, W, NANS, PHASE, YS)
    got = tz.jit(tz.grad(loss(tz), argnums=(0, 1, 3, 4)))(*args)
    want = jax.jit(jax.grad(loss(jnp), argnums=(0, 1, 3, 4)))(*args)
    _compare(got, want, rtol=2e-3, atol=2e-3)


def test_eager_calls_read_values():
    filt = np.array([0.0, 0.0, 1.0, 0.0, 2.0, 0.0], np.float32)
    box = np.zeros((4, 5), np.int32)
    box[1, 2], box[2, 3] = 1, 2
    _compare(tz.trim_zeros(filt), jnp.trim_zeros(filt))
    _compare(tz.trim_zeros(filt, "b"), jnp.trim_zeros(filt, "b"))
    _compare(tz.trim_zeros(box), jnp.trim_zeros(box))
    _compare(tz.trim_zeros(box, axis=1), jnp.trim_zeros(box, axis=1))
    _compare(tz.trim_zeros(np.zeros(3)), np.zeros(0))
    choice = np.array([[0, 2], [1, 3]])
    _compare(tz.choose(choice, CHOICES[:, :2]), jnp.choose(choice, CHOICES[:, :2]))
    u, v = np.array([1.0, 3.0, 2.0], np.float32), np.array([1.0, 1.0], np.float32)
    _compare(tz.polydiv(u, v, trim_leading_zeros=True), jnp.polydiv(u, v, trim_leading_zeros=True))
    _compare(tz.histogram(A, np.array(3)), jnp.histogram(A, np.array(3)))  # (bins read, not traced)
    points = np.stack([A.ravel(), A.ravel()[::-1]], 1)
    _compare(tz.histogramdd(points, np.array([2, 3]))[0], jnp.histogramdd(points, np.array([2, 3]))[0])
    _compare(tz.histogram2d(points[:, 0], points[:, 1], np.array(3))[0],
             jnp.histogram2d(points[:, 0], points[:, 1], np.array(3))[0])
    _compare(tz.kaiser(np.array(5), 2.0), jnp.kaiser(np.array(5), 2.0))
    _compare(tz.hanning(np.array(4)), jnp.hanning(np.array(4)))


def test_frexp_of_flushed_subnormals_gives_zero():
    """The backend flushes float32 subnormals to zero, as JAX's CPU does: frexp counts them
    as 0 (JAX's gives a mantissa of 0.5 for them)."""
    mantissa, exponent = tz.frexp(np.array([1e-40, -1e-39, 3.0], np.float32))
    np.testing.assert_array_equal(mantissa, [0.0, 0.0, 0.75])
    np.testing.assert_array_equal(exponent, [0, 0, 2])


def test_errors_are_clear():
    with pytest.raises(tz.TenzrError, match="mode='wrap' or mode='clip'"):
        tz.jit(lambda a: tz.choose(a, CHOICES))(np.array([0, 1]))
    with pytest.raises(tz.TenzrError, match=r"outside \[0, 4\)"):
        tz.choose(np.array([0, 4]), CHOICES)
    with pytest.raises(tz.TenzrError, match="call it outside jit"):
        tz.jit(tz.trim_zeros)(np.array([0.0, 1.0]))
    with pytest.raises(tz.TenzrError, match="kth=5 is out of bounds"):
        tz.jit(lambda x: tz.partition(x, 5))(np.ones(3, np.float32))
    with pytest.raises(tz.TenzrError, match="bins must be a positive int"):
        tz.jit(lambda x: tz.histogram(x, 2.5))(A)
    with pytest.raises(tz.TenzrError, match="choose: choices must be a sequence of arrays or an array, got 5"):
        tz.choose(np.array([0, 1]), 5)
    with pytest.raises(tz.TenzrError, match="trim_zeros: trim must be a string"):
        tz.trim_zeros(np.array([0.0, 1.0]), trim=1)
