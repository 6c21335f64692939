"""NumPy's and JAX's keywords and modes on tz functions, checked against JAX: take's
out-of-range modes, reductions' where= and initial=, descending sorts, index dtypes,
rounding of integers, x.at's modes and methods, np.pad's modes, nonzero and unique with
size=, lstsq, var with ddof >= N (NaN, as JAX's). Many results come from one compiled program, to keep compiles few."""

from __future__ import annotations

import numpy as np
import pytest

import tenzr as tz

jax = pytest.importorskip("jax")
jnp = jax.numpy

X = np.array([[0.5, -1.0, 2.0, np.nan], [3.0, 3.0, -2.5, 0.25], [1.0, -0.5, 4.0, 2.0]], np.float32)
FINITE = np.nan_to_num(X, nan=1.5)
MASK = np.array([[True, False, True, True], [False, False, False, False], [True, True, False, True]])
INDICES = np.array([0, 3, 11, 12, -1, -12, -13, 40])


def _cases(np_):
    """(name, fn of x) pairs whose tenzr and JAX versions differ only in the module."""
    return [
        ("take fill", lambda x: np_.take(x, INDICES)),
        ("take fill axis", lambda x: np_.take(x, np.array([[1, 4], [-1, -5]]), axis=1)),
        ("take fill value", lambda x: np_.take(x, INDICES, fill_value=-7.0)),
        ("take clip", lambda x: np_.take(x, INDICES, mode="clip")),
        ("take wrap", lambda x: np_.take(x, INDICES, axis=None, mode="wrap")),
        ("take ints fill", lambda x: np_.take(np_.nan_to_num(x).astype(np.int32), INDICES)),
        ("take_along fill", lambda x: np_.take_along_axis(x, np.array([[0, 5, -1, -5]]), axis=1)),
        ("take_along clip", lambda x: np_.take_along_axis(x, np.array([[0, 5, -1, 2]]), axis=1, mode="clip")),
        ("take_along flat", lambda x: np_.take_along_axis(x, np.array([2, 30, 7]), axis=None)),
        ("sum where", lambda x: np_.sum(x, axis=1, where=MASK)),
        ("sum where all", lambda x: np_.sum(x, where=MASK[0])),
        ("sum initial", lambda x: np_.sum(x, axis=0, initial=10.0, keepdims=True)),
        ("prod where initial", lambda x: np_.prod(x, axis=1, where=MASK, initial=2.0)),
        ("max where initial", lambda x: np_.max(x, axis=1, where=MASK, initial=-9.0)),
        ("min initial", lambda x: np_.min(x, axis=0, initial=0.0)),
        ("max ints where", lambda x: np_.max(x.astype(np.int32), axis=1, where=MASK, initial=-3)),
        ("mean where", lambda x: np_.mean(x, axis=1, where=MASK)),
        ("mean where keepdims", lambda x: np_.mean(x, axis=0, where=MASK, keepdims=True)),
        ("var where ddof", lambda x: np_.var(x, axis=1, ddof=1, where=MASK)),
        ("std where", lambda x: np_.std(x, axis=0, where=MASK)),
        ("var correction", lambda x: np_.var(x, axis=1, correction=1)),
        ("var ddof too large", lambda x: np_.var(x, axis=1, ddof=4)),
        ("var where ddof too large", lambda x: np_.var(x, axis=1, ddof=2, where=MASK)),
        ("any where", lambda x: np_.any(x > 2, axis=1, where=MASK)),
        ("all where", lambda x: np_.all(x > 0, axis=1, where=MASK)),
        ("nansum where", lambda x: np_.nansum(x, axis=1, where=MASK, initial=1.0)),
        ("nanmax initial", lambda x: np_.nanmax(x, axis=1, initial=2.5)),
        ("nanmin where", lambda x: np_.nanmin(x, axis=1, where=MASK, initial=9.0)),
        ("nanmean where", lambda x: np_.nanmean(x, axis=1, where=MASK)),
        ("sort descending", lambda x: np_.sort(x, axis=1, descending=True)),
        ("sort flat descending", lambda x: np_.sort(x, axis=None, descending=True)),
        ("argsort descending", lambda x: np_.argsort(np_.round(x), axis=1, descending=True)),
        ("argsort", lambda x: np_.argsort(x, axis=0)),
        ("argmax keepdims", lambda x: np_.argmax(x, axis=1, keepdims=True)),
        ("argmin flat keepdims", lambda x: np_.argmin(x, keepdims=True)),
        ("argmax method", lambda x: x.argmax(axis=0)),
        ("max method", lambda x: x.max(0, keepdims=True)),
        ("sum method where", lambda x: x.sum(axis=1, where=MASK)),
        ("clip min max", lambda x: np_.clip(x, min=-1.0, max=2.0)),
        ("clip max only", lambda x: np_.clip(x, max=0.0)),
        ("clip method", lambda x: x.clip(max=1.0)),
        ("floor ints", lambda x: np_.floor(np_.nan_to_num(x).astype(np.int32))),
        ("ceil bools", lambda x: np_.ceil(x > 0)),
        ("rint ints", lambda x: np_.rint(np_.nan_to_num(x).astype(np.int32))),
    ] + [(f"pad {mode}", lambda x, mode=mode: np_.pad(np_.nan_to_num(x), ((1, 2), (3, 1)), mode=mode))
         for mode in ("edge", "wrap", "reflect", "symmetric", "maximum", "minimum", "mean", "median", "linear_ramp",
                      "empty")] + [
        ("pad wrap wide", lambda x: np_.pad(np_.nan_to_num(x), ((7, 5), (9, 10)), mode="wrap")),
        ("pad reflect wide", lambda x: np_.pad(np_.nan_to_num(x), ((7, 5), (9, 10)), mode="reflect")),
        ("pad symmetric wide", lambda x: np_.pad(np_.nan_to_num(x), ((7, 5), (9, 10)), mode="symmetric")),
        ("pad reflect odd", lambda x: np_.pad(np_.nan_to_num(x), ((2, 1), (3, 2)), mode="reflect", reflect_type="odd")),
        ("pad symmetric odd", lambda x: np_.pad(np_.nan_to_num(x), ((3, 1), (4, 2)), mode="symmetric",
                                                reflect_type="odd")),
        ("pad stat_length", lambda x: np_.pad(np_.nan_to_num(x), ((1, 2), (3, 1)), mode="mean",
                                              stat_length=((1, 2), (2, 3)))),
        ("pad median stat_length", lambda x: np_.pad(np_.nan_to_num(x), 2, mode="median", stat_length=2)),
        ("pad ramp end_values", lambda x: np_.pad(np_.nan_to_num(x), ((1, 2), (3, 1)), mode="linear_ramp",
                                                  end_values=((1, -1), (5, 2)))),
        ("pad constants per side", lambda x: np_.pad(x, ((1, 2), (3, 1)), constant_values=((1, -1), (5, 2)))),
        ("pad ints linear_ramp", lambda x: np_.pad(np_.nan_to_num(x * 3).astype(np.int32), 3, mode="linear_ramp",
                                                   end_values=-7)),
        ("pad ints mean", lambda x: np_.pad(np_.nan_to_num(x * 3).astype(np.int32), 2, mode="mean")),
        ("pad ints edge", lambda x: np_.pad(np_.nan_to_num(x[0]).astype(np.int32), (3, 0), mode="edge")),
        ("pad median of a NaN", lambda x: np_.pad(x, 1, mode="median")),
        ("pad bools", lambda x: np_.pad(x > 1, 1)),
        ("pad bools maximum", lambda x: np_.pad(x > 1, 1, mode="maximum")),
        ("max bools", lambda x: np_.max(x > 1, axis=1)),
        ("argmax bools", lambda x: np_.argmax(x > 1, axis=1)),
        ("nanmax ints", lambda x: np_.nanmax(np_.nan_to_num(x).astype(np.int32), axis=0)),
        ("pad bools mean", lambda x: np_.pad(x > 2, 1, mode="mean")),
        ("nonzero rows", lambda x: np_.nonzero(x > 1, size=5)[0]),
        ("nonzero columns", lambda x: np_.nonzero(x > 1, size=5)[1]),
        ("nonzero padded", lambda x: np_.nonzero(x > 1, size=14, fill_value=(-1, 7))[1]),
        ("flatnonzero", lambda x: np_.flatnonzero(x, size=9)),
        ("argwhere", lambda x: np_.argwhere(x < 1, size=7, fill_value=-2)),
        ("unique", lambda x: np_.unique(x, size=12)),
        ("unique fill", lambda x: np_.unique(x, size=12, fill_value=9.0)),
        ("unique nan apart", lambda x: np_.unique(np_.concatenate([x.ravel(), x[0]]), size=14, equal_nan=False)),
        ("unique index", lambda x: np_.unique(x, return_index=True, size=12)[1]),
        ("unique inverse", lambda x: np_.unique(x, return_inverse=True, size=12)[1]),
        ("unique counts", lambda x: np_.unique(x, return_counts=True, size=12)[1]),
        ("unique of nothing", lambda x: np_.unique(x[:0, 0], size=3, fill_value=5.0)),
        ("unique of nothing counts", lambda x: np_.unique(x[:0], return_counts=True, size=3, fill_value=5.0)[1]),
        ("unique counts cut", lambda x: np_.unique(np_.round(np_.nan_to_num(x)), return_counts=True, size=3)[1]),
    ]


NAMES = [name for name, _ in _cases(np)]


@pytest.fixture(scope="module")
def results():
    """Every case's tenzr result from one compiled program, and JAX's."""
    ours = tz.jit(lambda x: [fn(x) for _, fn in _cases(tz)])(X)
    theirs = [np.asarray(out) for out in jax.jit(lambda x: [fn(x) for _, fn in _cases(jnp)])(X)]
    return dict(zip(NAMES, zip(ours, theirs, strict=True), strict=True))


@pytest.mark.parametrize("name", NAMES)
def test_matches_jax(results, name):
    ours, theirs = results[name]
    assert ours.shape == theirs.shape
    assert ours.dtype.kind == theirs.dtype.kind
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("ddof", [4, 5])
def test_var_past_its_degrees_of_freedom_differentiates_as_jax(ddof):
    """NaN, and JAX's derivative: NaN where N = ddof (that of the division by 0 the NaN
    replaces), 0 past it; with `where`, per row (the rows of MASK pick 3, 0 and 3 values)."""
    x = FINITE.astype(np.float64)
    for f in (lambda np_, x: np_.sum(np_.var(x, axis=1, ddof=ddof)),
              lambda np_, x: np_.sum(np_.var(x, axis=1, ddof=ddof - 1, where=MASK))):
        ours = tz.grad(lambda x, f=f: f(tz, x))(x)
        theirs = jax.jit(jax.grad(lambda x, f=f: f(jnp, x)))(x)
        np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, equal_nan=True)


def test_index_results_are_int32_as_jaxs_without_x64():
    # (JAX's dtypes here would be int64: this test process runs JAX with x64 on)
    out = tz.jit(lambda x: (tz.argmax(x), tz.argmin(x, axis=0), tz.argsort(x), tz.floor(x.astype(np.int64))))(FINITE)
    assert [o.dtype for o in out] == [np.int32, np.int32, np.int32, np.int64]
    np.testing.assert_array_equal(out[0], np.argmax(FINITE))
    np.testing.assert_array_equal(out[2], np.argsort(FINITE, kind="stable"))


def test_gradients_through_fill_and_where_match_jax():
    def f(np_, x):
        picked = np_.take(x, INDICES)
        kept = np_.where(np_.isnan(picked), 0.0, picked)
        return (np_.sum(kept ** 2) + np_.sum(np_.sin(x), where=MASK) + np_.sum(np_.max(x, axis=1, where=MASK,
                initial=-9.0)) + np_.sum(np_.mean(x * x, axis=0, where=MASK)) + np_.sum(np_.var(x, axis=1, where=MASK)))

    ours = tz.grad(lambda x: f(tz, x))(FINITE)
    theirs = jax.grad(lambda x: f(jnp, x))(FINITE.astype(np.float64))
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_pad_gradients_match_jax():
    def f(np_, x):
        return sum(np_.sum(np_.sin(np_.pad(x, ((2, 3), (1, 4)), mode=mode, **kw)))
                   for mode, kw in [("edge", {}), ("reflect", {}), ("symmetric", {"reflect_type": "odd"}), ("wrap", {}),
                                    ("maximum", {"stat_length": 2}), ("mean", {}), ("linear_ramp", {"end_values": 1})])

    ours = tz.grad(lambda x: f(tz, x))(FINITE)
    theirs = jax.grad(lambda x: f(jnp, x))(FINITE)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_lstsq_matches_jax_and_numpy():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    singular = a.copy()
    singular[:, 2] = a[:, 0] + a[:, 1]
    cases = [(a, b), (a, b[:, 0]), (a.T, b[:3]), (singular, b)]
    ours = tz.jit(lambda cases: [tz.linalg.lstsq(*c) for c in cases])(cases)
    for (x, y), (solution, residuals, rank, s) in zip(cases, ours, strict=True):
        ref = np.linalg.lstsq(x, y, rcond=None)
        np.testing.assert_allclose(solution, ref[0], atol=1e-10)
        assert rank == ref[2] and rank.dtype == np.int32
        np.testing.assert_allclose(s, ref[3], rtol=1e-10, atol=1e-14)
        columns = y.reshape(len(y), -1) - x @ ref[0].reshape(x.shape[1], -1)
        np.testing.assert_allclose(residuals, np.sum(columns ** 2, axis=0), atol=1e-10)
    ours = tz.grad(lambda a, b: tz.sum(tz.linalg.lstsq(a, b)[0] ** 2), (0, 1))(a, b)
    theirs = jax.grad(lambda a, b: jnp.sum(jnp.linalg.lstsq(a, b)[0] ** 2), (0, 1))(a, b)
    for g, j in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(g, j, rtol=1e-4, atol=1e-5)  # (JAX's is float32 unless x64 is on)


def test_repeat_with_traced_repeats_matches_jax():
    x, repeats = FINITE[:2, :3], np.array([1, 0, 2])
    ours = tz.jit(lambda x, r: [tz.repeat(x, r, axis=1, total_repeat_length=n) for n in (2, 3, 5)]
                  + [tz.repeat(x, r[2], total_repeat_length=9), tz.repeat(x, repeats, axis=1, total_repeat_length=4)])(
        x, repeats)
    theirs = [jnp.repeat(x, repeats, axis=1, total_repeat_length=n) for n in (2, 3, 5)] + [
        jnp.repeat(x, 2, total_repeat_length=9), jnp.repeat(x, repeats, axis=1, total_repeat_length=4)]
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(o, t)
    with pytest.raises(tz.TenzrError, match="traced repeats need total_repeat_length="):
        tz.jit(lambda x, r: tz.repeat(x, r))(x, repeats)


def test_bad_keywords_are_clear_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(tz.TenzrError, match="mode must be one of"):
        tz.jit(lambda x: tz.take(x, np.array([0]), mode="raise"))(x)
    with pytest.raises(tz.TenzrError, match="where= needs initial="):
        tz.jit(lambda x: tz.max(x, where=x > 0))(x)
    with pytest.raises(tz.TenzrError, match="out= is not supported"):
        tz.jit(lambda x: tz.sum(x, out=x))(x)
    with pytest.raises(tz.TenzrError, match="give ddof or correction"):
        tz.jit(lambda x: tz.var(x, ddof=1, correction=1))(x)
    with pytest.raises(tz.TenzrError, match="pad: mode must be one of"):
        tz.jit(lambda x: tz.pad(x, 1, mode="bogus"))(x)
    with pytest.raises(tz.TenzrError, match="reflect_type='odd' takes pads no wider than the axis"):
        tz.jit(lambda x: tz.pad(x, 3, mode="reflect", reflect_type="odd"))(x)
    with pytest.raises(tz.TenzrError, match="pad_width must be a number"):
        tz.jit(lambda x: tz.pad(x, ((1, 2, 3),)))(x)
    with pytest.raises(tz.TenzrError, match="must not be negative"):
        tz.jit(lambda x: tz.pad(x, -1, mode="edge"))(x)
    for fn in (tz.nonzero, tz.argwhere, tz.flatnonzero, tz.unique):
        with pytest.raises(tz.TenzrError, match="pass size="):
            tz.jit(fn)(x)
    assert tz.jit(lambda x: tz.argwhere(x[0, 0], size=2))(x).shape == (2, 0)  # (JAX's, for a 0-d array)
    with pytest.raises(tz.TenzrError, match="numpy_resid=True is not supported"):
        tz.jit(lambda x: tz.linalg.lstsq(x, x, numpy_resid=True))(x)


AT = np.array([0, 2, 0, 7, -1, -9, 2, 0])  # (repeats, out of range both ways)
AT_CASES = [
    ("get fill", lambda np_, x: x.at[AT].get(mode="fill", fill_value=-1.0)),
    ("get fill default", lambda np_, x: x.at[AT, 1].get(mode="fill")),
    ("get clip", lambda np_, x: x.at[AT].get(mode="clip")),
    ("set clip", lambda np_, x: x.at[AT, 1].set(9.0, mode="clip")),
    ("add drop", lambda np_, x: x.at[AT, 1].add(1.0, mode="drop", indices_are_sorted=False)),
    ("subtract", lambda np_, x: x.at[AT].subtract(1.0)),
    ("apply repeats", lambda np_, x: x.at[AT, 1].apply(np_.sqrt)),
    ("apply slice", lambda np_, x: x.at[1:, AT].apply(lambda v: v * 2)),
    ("apply mask", lambda np_, x: x.at[FINITE > 2].apply(lambda v: -v)),
    ("power repeats", lambda np_, x: x.at[AT, 2].power(np.arange(8, dtype=np.float32) / 4 + 0.5)),
    ("divide ints", lambda np_, x: (x * 4).astype(np.int32).at[AT, 1].divide(3)),
    ("divide repeats", lambda np_, x: x.at[AT, 2].divide(np.arange(1, 9, dtype=np.float32) * 1.7)),
    ("power clip", lambda np_, x: x.at[AT, 2].power(2.0, mode="clip")),
    # (out-of-range integers: reads clamp or fill, writes drop or clamp, as with index arrays)
    ("int get fill", lambda np_, x: x.at[5].get(mode="fill")),
    ("int pair get fill", lambda np_, x: x.at[1, 7].get(mode="fill")),
    ("int get clamps", lambda np_, x: x.at[-9].get()),
    ("int set clip", lambda np_, x: x.at[7, 1].set(9.0, mode="clip")),
    ("int set drops", lambda np_, x: x.at[5].set(7.0)),
    ("int ellipsis drops", lambda np_, x: x.at[..., 4].add(1.0)),
]


@pytest.fixture(scope="module")
def at_results():
    x = np.abs(FINITE) + 0.25
    ours = tz.jit(lambda x: [fn(tz, x) for _, fn in AT_CASES])(x)
    theirs = [np.asarray(fn(jnp, jnp.asarray(x))) for _, fn in AT_CASES]
    return dict(zip([n for n, _ in AT_CASES], zip(ours, theirs, strict=True), strict=True))


@pytest.mark.parametrize("name", [n for n, _ in AT_CASES])
def test_indexed_updates_match_jax(at_results, name):
    ours, theirs = at_results[name]
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, equal_nan=True)


def test_indexed_update_gradients():
    x = np.abs(FINITE).astype(np.float64) + 0.25

    def common(np_, x):
        return np_.sum(x.at[AT, 2].power(3.0) * x) + np_.sum(x.at[AT].get(mode="fill", fill_value=0.0) ** 2)

    np.testing.assert_allclose(tz.grad(lambda x: common(tz, x))(x), jax.grad(lambda x: common(jnp, x))(x),
                               rtol=1e-6)  # (JAX's is float32 unless another test file turned x64 on)

    def applied(x):  # (JAX has no derivative of apply: checked against central differences)
        return tz.sum(x.at[AT, 1].apply(tz.sin) * x)

    g = tz.grad(applied)(x)
    value = tz.jit(applied)
    fd = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = 1e-6
        fd[i] = (value(x + step) - value(x - step)) / 2e-6
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    # sin applied twice at the repeated positions: d/dx x·sin(sin(x)) at x[0, 1]
    a = x[0, 1]
    assert g[0, 1] == pytest.approx(np.sin(np.sin(np.sin(a))) + a * np.cos(np.sin(np.sin(a))) * np.cos(np.sin(a))
                                    * np.cos(a), rel=1e-10)


def test_indexed_updates_of_a_0d_array():
    x = np.float32(3.0)
    out = tz.jit(lambda x: (x.at[()].set(4.0), x.at[()].add(1.0), x.at[...].get(mode="fill"),
                            x.at[()].apply(tz.sin)))(x)
    np.testing.assert_allclose(out, [4.0, 4.0, 3.0, np.sin(3.0)], rtol=1e-6)
    assert tz.array(3.0).at[()].set(4.0) == 4.0


def test_indexed_update_errors():
    x, i = np.ones(4, np.float32), np.array([0, 2])
    with pytest.raises(tz.TenzrError, match="pass unique_indices=True"):
        tz.jit(lambda x, i: x.at[i].apply(tz.exp))(x, i)
    np.testing.assert_allclose(tz.jit(lambda x, i: x.at[i].apply(tz.exp, unique_indices=True))(x, i),
                               [np.e, 1, np.e, 1], rtol=1e-6)
    with pytest.raises(tz.TenzrError, match="mode must be one of"):
        tz.jit(lambda x: x.at[0].set(1.0, mode="wrap"))(x)
    with pytest.raises(tz.TenzrError, match="wrap_negative_indices=False is not supported"):
        tz.jit(lambda x: x.at[0].get(wrap_negative_indices=False))(x)


def test_nonzero_argwhere_and_flatnonzero_run_eagerly_without_size_as_jax():
    """Outside jit, as JAX's, the entries found are all returned (under jit, size= is needed)."""
    a = np.array([[0, 1, 2], [3, 0, 0]], np.int32)
    for ours, theirs in [(tz.nonzero(a), jnp.nonzero(a)), (tz.flatnonzero(a), jnp.flatnonzero(a)),
                         (tz.argwhere(a), jnp.argwhere(a)), (tz.argwhere(np.int32(3)), jnp.argwhere(3)),
                         (tz.argwhere(np.int32(0)), jnp.argwhere(0)),
                         (tz.nonzero(np.zeros(4)), jnp.nonzero(np.zeros(4)))]:
        for g, w in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs), strict=True):
            assert np.asarray(g).shape == w.shape
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
