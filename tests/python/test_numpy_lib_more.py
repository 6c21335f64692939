"""JAX's NumPy routines for inserting, deleting and placing entries, packing bits, index
tricks and small predicates (`insert`, `delete`, `compress`, `put`, `packbits`, `mgrid`,
`ravel_multi_index`, `block`, `isdtype`, ...): values against JAX's under jit (every case
in one function each side), gradients against jax.grad, eager calls, and the errors for
what JAX refuses too."""

from __future__ import annotations

import numpy as np
import pytest

import tenzr as tz

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.usefixtures("jax_without_x64")
jnp = jax.numpy

X = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5) * 0.5
CUBE = np.arange(27, dtype=np.float32).reshape(3, 3, 3)
I32 = np.array([2, 0, -1], np.int32)
BITS = np.array([[1, 0, 1, 1, 0, 0, 1, 0, 1, 1], [0, 1, 1, 1, 1, 0, 0, 0, 0, 7]], np.int32)
BYTES = np.array([[3, 200], [255, 16]], np.uint8)


def ints(*values):
    return np.array(values, np.int32)


# name: the call, for xp tz or jax.numpy, of arrays that are traced: x (X), i (I32), b (BITS), u (BYTES)
CASES = {
    "insert_scalar": lambda xp, x, i, b, u: xp.insert(x, 1, 9.0, axis=1),
    "insert_repeated_negative": lambda xp, x, i, b, u: xp.insert(x, ints(0, 2, 2, -1), ints(7, 8, 9, 6), axis=1),
    "insert_slice_flat": lambda xp, x, i, b, u: xp.insert(x, slice(1, 9, 3), -1.0),
    "insert_rows": lambda xp, x, i, b, u: xp.insert(x, 2, x[:2] * 3, axis=0),
    "insert_at_end_clipped": lambda xp, x, i, b, u: xp.insert(x, ints(4, 9), x[:, :1], axis=1),
    "insert_traced": lambda xp, x, i, b, u: xp.insert(x, i, x[0, :3], axis=1),
    "insert_traced_scalar": lambda xp, x, i, b, u: xp.insert(x, i[0], x[0], axis=0),
    "delete_int": lambda xp, x, i, b, u: (xp.delete(x, 1, axis=1), xp.delete(x, -1)),
    "delete_list": lambda xp, x, i, b, u: xp.delete(x, ints(0, 2, 0), axis=1),
    "delete_slice": lambda xp, x, i, b, u: (xp.delete(x, slice(None, None, 2)), xp.delete(x, slice(1, None), 0)),
    "delete_mask": lambda xp, x, i, b, u: xp.delete(x, np.array([True, False, True]), axis=0),
    "delete_unique": lambda xp, x, i, b, u: xp.delete(x, ints(3, -4), axis=1, assume_unique_indices=True),
    "delete_traced": lambda xp, x, i, b, u: xp.delete(x, i[:2], axis=1, assume_unique_indices=True),
    "compress": lambda xp, x, i, b, u: (xp.compress(x[:, 0] > -2, x, axis=0, size=2),
                                        xp.compress(x[0] > -2, x, axis=1, size=3, fill_value=-5)),
    "compress_flat_short_condition": lambda xp, x, i, b, u: xp.compress(x[0] > -2.5, x, size=2),
    "extract": lambda xp, x, i, b, u: xp.extract(x > 0, x, size=7, fill_value=-1),
    "place": lambda xp, x, i, b, u: xp.place(x, x > 0.2, x[0, :2], inplace=False),
    "put": lambda xp, x, i, b, u: (xp.put(x, ints(0, 5, 30, -2), x[1, :2], inplace=False),
                                   xp.put(x, ints(0, 13, -14), 5.0, mode="wrap", inplace=False),
                                   xp.put(x, i * 9, x[0], mode="clip", inplace=False)),
    "put_along_axis": lambda xp, x, i, b, u: (
        xp.put_along_axis(x, ints(1, 0, 3)[:, None], 100.0, axis=1, inplace=False),
        xp.put_along_axis(x, xp.concatenate([i, i[:1]])[None, :], x[2:], axis=0, inplace=False),
        xp.put_along_axis(x, ints(1, 11), x[0, :2], axis=None, inplace=False)),
    "fill_diagonal": lambda xp, x, i, b, u: (xp.fill_diagonal(x, x[0, :2], inplace=False),
                                             xp.fill_diagonal(x[:, :3] * 2, -1, inplace=False),
                                             xp.fill_diagonal(CUBE, 0.5, inplace=False)),
    "packbits": lambda xp, x, i, b, u: (xp.packbits(b, axis=1), xp.packbits(b), xp.packbits(b > 0, 0, "little"),
                                        xp.packbits(u)),
    "unpackbits": lambda xp, x, i, b, u: (xp.unpackbits(u, axis=0), xp.unpackbits(u, count=-5, bitorder="little"),
                                          xp.unpackbits(u, axis=1, count=20), xp.unpackbits(u[0], count=3)),
    "mgrid": lambda xp, x, i, b, u: (xp.mgrid[0:2, 0:3], xp.mgrid[0:1:3j, 0:2], xp.mgrid[1:7:2]),
    "ogrid": lambda xp, x, i, b, u: (xp.ogrid[0:2, 1:4:2], xp.ogrid[-1:1:5j], xp.ogrid[0:2, 0:1:0.25]),
    "s_index_exp": lambda xp, x, i, b, u: (x[xp.s_[::2, 1]], x[xp.index_exp[1:]]),
    "ix_": lambda xp, x, i, b, u: (xp.ix_(ints(0, 2), i), x[xp.ix_(ints(0, 2), i)], xp.ix_(ints())),
    "ravel_multi_index": lambda xp, x, i, b, u: (
        xp.ravel_multi_index((ints(0, 2, 1), ints(3, 1, 0)), (3, 4), mode="ignore"),
        xp.ravel_multi_index((ints(0, 2, 5), i), (3, 4), mode="clip", order="F"),
        xp.ravel_multi_index((i, ints(7, -1, 2), ints(0, 1, 1)), (3, 4, 2), mode="wrap"),
        xp.ravel_multi_index((ints(1),), (5,), mode="wrap", dtype=np.int8)),
    "diag_indices_from": lambda xp, x, i, b, u: (xp.diag_indices_from(x[:3, :3]), xp.diag_indices_from(CUBE)),
    "mask_indices": lambda xp, x, i, b, u: (xp.mask_indices(3, xp.triu, 1, size=3),
                                            xp.mask_indices(4, xp.tril, size=12)),
    "array_equiv": lambda xp, x, i, b, u: (xp.array_equiv(x, x[0:1] * 0 + x), xp.array_equiv(x[0], x[0:1]),
                                           xp.array_equiv(x, x + 1)),
    "fromfunction": lambda xp, x, i, b, u: (xp.fromfunction(lambda r, c: r * 10 + c, (2, 3)),
                                            xp.fromfunction(lambda r: r * 2, (3,), dtype=int),
                                            xp.fromfunction(lambda r, c, k: r - c * k, (2, 2, 3))),
    "block": lambda xp, x, i, b, u: (xp.block([[x[:2, :2], x[:2, 2:]], [x[2:, :3], x[2:, 3:]]]),
                                     xp.block([x[0], 1.0, x[1]]), xp.block(x), xp.block([[x], [x]])),
    "resize": lambda xp, x, i, b, u: (xp.resize(x[0], (3, 3)), xp.resize(x, 5), xp.resize(i, (2, 0))),
    "apply_over_axes": lambda xp, x, i, b, u: (xp.apply_over_axes(xp.sum, x, [0, 1]),
                                               xp.apply_over_axes(lambda a, k: xp.max(a, k, keepdims=True), x, [1]),
                                               xp.apply_over_axes(xp.mean, CUBE, [0, 2])),
}


def _assert_same(got, want, name):
    got_leaves, want_leaves = jax.tree.leaves(got), jax.tree.leaves(want)
    assert len(got_leaves) == len(want_leaves), name
    for g, w in zip(got_leaves, want_leaves, strict=True):
        w = np.asarray(w)
        assert np.shape(g) == w.shape and np.asarray(g).dtype == w.dtype, (name, np.asarray(g), w)
        np.testing.assert_allclose(g, w, rtol=1e-6, err_msg=name)


def test_routines_match_jax_under_jit():
    args = (X, I32, BITS, BYTES)
    got = tz.jit(lambda *a: {name: fn(tz, *a) for name, fn in CASES.items()})(*args)
    want = jax.jit(lambda *a: {name: fn(jnp, *a) for name, fn in CASES.items()})(*args)
    for name in CASES:
        _assert_same(got[name], want[name], name)


def _losses(xp, x, v, i):
    w = xp.cos(xp.arange(30.0))
    return (xp.sum(xp.sin(xp.insert(x, ints(0, 2, 2), v[:3], axis=1)) * w[:21].reshape(3, 7))
            + xp.sum(xp.insert(x, i, v[1:4], axis=1) ** 2 * w[:21].reshape(3, 7))
            + xp.sum(xp.delete(x, ints(1, 3), axis=1) ** 3) + xp.sum(xp.delete(x, i[:2], 1, assume_unique_indices=True)
                                                                   * w[:6].reshape(3, 2))
            + xp.sum(xp.put_along_axis(x, ints(1, 0, 3)[:, None], v[:3, None], axis=1, inplace=False) ** 2 * w[3:15]
                     .reshape(3, 4))
            + xp.sum(xp.compress(x[1] > -1, x, axis=1, size=2) * w[:6].reshape(3, 2))
            + xp.sum(xp.fill_diagonal(x, v[0] * v, inplace=False) * w[:12].reshape(3, 4)))


def test_gradients_match_jax():
    v = np.linspace(-1, 1, 5, dtype=np.float32)
    got = tz.grad(lambda x, v, i: _losses(tz, x, v, i), argnums=(0, 1))(X, v, I32)
    want = jax.jit(jax.grad(lambda x, v, i: _losses(jnp, x, v, i), argnums=(0, 1)))(X, v, I32)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_eager_calls_match_jax():
    """Outside jit, compress and extract need no size (as in JAX), mask_indices neither,
    ravel_multi_index checks its indices (mode "raise"), and delete and insert read the
    NumPy arrays they are given (not traced: JAX's eager calls see concrete values)."""
    keep = np.array([True, False, True, False, False])
    for name, fn in {
        "compress": lambda xp: xp.compress(keep, X, axis=1),
        "extract": lambda xp: xp.extract(X > 0.2, X),
        "mask_indices": lambda xp: xp.mask_indices(3, xp.triu),
        "ravel_multi_index": lambda xp: xp.ravel_multi_index((ints(0, 2), ints(3, 1)), (3, 4)),
        "delete_indices": lambda xp: xp.delete(I32, ints(0, 2)),
        "delete_mask": lambda xp: xp.delete(X, keep[:4], axis=1),
        "insert_nothing": lambda xp: xp.insert(I32, np.array([]), 5),
    }.items():
        _assert_same(fn(tz), fn(jnp), name)
    # (JAX 0.10's resize refuses a NumPy array as the shape, which it cannot hash; NumPy's takes it)
    _assert_same(tz.resize(I32, np.array([2, 2])), np.resize(I32, (2, 2)), "resize")
    # (under jit too, a condition known while tracing needs no size)
    _assert_same(tz.jit(lambda x: tz.compress(keep, x, axis=1))(X), jnp.compress(keep, X, axis=1), "compress_jit")


def test_batched_under_vmap_match_jax():
    def calls(xp, x):
        return (xp.insert(x, ints(0, 2), 5.0), xp.delete(x, 1, axis=1), xp.packbits(x > 3),
                xp.put_along_axis(x, ints(1, 0, 2)[:, None], x[:, :1] * 2, axis=1, inplace=False))

    cube = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    _assert_same(tz.jit(tz.vmap(lambda x: calls(tz, x)))(cube), jax.vmap(lambda x: calls(jnp, x))(cube), "vmap")


def test_predicates_and_dtype_names_match_jax():
    for value in (1.0, np.float32(2), np.ones(()), np.ones(3), [1], "a", None):
        assert tz.isscalar(value) == jnp.isscalar(value), value
        assert tz.iterable(value) == jnp.iterable(value), value
    for a, b in ((np.int32, np.float64), (np.float32, np.int32), (np.uint8, "int16"), (np.int64, np.float32)):
        assert tz.can_cast(a, b) == jnp.can_cast(a, b)
        assert tz.can_cast(a, b, "same_kind") == jnp.can_cast(a, b, "same_kind")
    kinds = ("bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric",
             np.float32, ("bool", np.int8))
    for dtype in (np.bool_, np.int8, np.uint32, np.float32, np.float64, np.complex64, tz.bfloat16):
        for kind in kinds:
            assert tz.isdtype(dtype, kind) == jnp.isdtype(dtype, kind), (dtype, kind)
    for name in ("bool", "int_", "uint", "float_", "double", "single", "cdouble", "csingle", "complex_"):
        assert np.dtype(getattr(tz, name)) == np.dtype(getattr(jnp, name)), name
    assert tz.array_repr(X[0]) == jnp.array_repr(X[0]) and tz.array_str(X[0]) == jnp.array_str(X[0])
    # (JAX 0.10's array_equiv raises where the shapes do not broadcast; NumPy's answer is False)
    assert not tz.array_equiv(X, X[:2]) and not np.array_equiv(X, X[:2])
    traced = {}
    tz.jit(lambda x: traced.update(scalar=tz.isscalar(x[0, 0]), row=tz.isscalar(x[0]), iterable=tz.iterable(x[0, 0]),
                                   cast=tz.can_cast(x, np.float64)) or x)(X)
    assert traced == {"scalar": True, "row": False, "iterable": False, "cast": True}


ERRORS = [
    ("put_in_place", lambda x: tz.put(x, ints(0), 1.0), "put: tenzr arrays are immutable.*inplace=False"),
    ("place_in_place", lambda x: tz.place(x, x > 0, 1.0), "place: .*inplace=False"),
    ("put_along_axis_in_place", lambda x: tz.put_along_axis(x, ints(0, 0, 0)[:, None], 1.0, 1),
     "put_along_axis: .*inplace=False"),
    ("fill_diagonal_in_place", lambda x: tz.fill_diagonal(x, 1.0), "fill_diagonal: .*inplace=False"),
    ("fill_diagonal_wrap", lambda x: tz.fill_diagonal(x, 1.0, wrap=True, inplace=False), "wrap=True is not supported"),
    ("put_mode", lambda x: tz.put(x, ints(0), 1.0, mode="raise", inplace=False), "put: mode must be"),
    ("place_sizes", lambda x: tz.place(x, x[0] > 0, 1.0, inplace=False), "place: arr and mask must have one size"),
    ("unpackbits_int32", lambda x: tz.unpackbits(x.astype(np.int32)), "unpackbits: takes uint8, got int32"),
    ("packbits_float", lambda x: tz.packbits(x), "packbits: takes integers or booleans, got float32"),
    ("packbits_order", lambda x: tz.packbits(x > 0, bitorder="middle"), "bitorder must be 'big' or 'little'"),
    ("compress_traced_no_size", lambda x: tz.compress(x[0] > 0, x, axis=1), "compress: pass size="),
    ("compress_size", lambda x: tz.compress(x[0] > 0, x, axis=1, size=5), r"compress: size must be in \[0, 4\]"),
    ("compress_2d_condition", lambda x: tz.compress(x > 0, x, size=1), "compress: the condition must be 1-D"),
    ("compress_past_end", lambda x: tz.compress(np.ones(5, bool), x, axis=1), "true past the end of the axis"),
    ("delete_traced", lambda x: tz.delete(x, x[0].astype(np.int32), 1), "delete: a traced obj needs assume_unique"),
    ("delete_out_of_range", lambda x: tz.delete(x, 4, axis=1), "delete: index 4 is out of bounds for an axis of 4"),
    ("delete_list_out_of_range", lambda x: tz.delete(x, ints(0, 7), axis=1), r"delete: indices \[0, 7\] are out"),
    ("delete_float", lambda x: tz.delete(x, np.array([0.5]), axis=1), "delete: obj must be integers or booleans"),
    ("insert_2d", lambda x: tz.insert(x, np.zeros((2, 2), np.int32), 1.0), "insert: obj must be a slice, a 1-D"),
    ("insert_float", lambda x: tz.insert(x, np.array([0.5]), 1.0), "insert: the indices must be integers"),
    ("insert_counts", lambda x: tz.insert(x, ints(0, 1, 2), x[:2, :2], axis=1), "insert: 3 indices for 2 values"),
    ("ravel_multi_index_traced_raise", lambda x: tz.ravel_multi_index((x[0].astype(np.int32),), (4,)),
     "mode='raise' needs indices known while tracing"),
    ("ravel_multi_index_out_of_range", lambda x: tz.ravel_multi_index((ints(0, 4),), (4,)),
     "an index is out of range for a dim of 4"),
    ("ravel_multi_index_dtype", lambda x: tz.ravel_multi_index((ints(0),), (300,), "clip", dtype=np.int8),
     "int8 cannot hold the flat indices"),
    ("ravel_multi_index_count", lambda x: tz.ravel_multi_index((ints(0),), (3, 4), "clip"), "1 index arrays for 2"),
    ("mask_indices_no_size", lambda x: tz.mask_indices(3, tz.triu), "nonzero: pass size="),
    ("mask_indices_float", lambda x: tz.mask_indices(3.5, tz.triu), "mask_indices: n must be an int, got 3.5"),
    ("mask_indices_name", lambda x: tz.mask_indices(3, "triu"), "mask_indices: mask_func must be a function"),
    ("ravel_multi_index_dims", lambda x: tz.ravel_multi_index((ints(1),), "ab"),
     "ravel_multi_index: a shape must be an int or a sequence of ints, got 'ab'"),
    ("extract_ragged", lambda x: tz.extract([[True], [True, False]], x), "extract: .* is not an array"),
    ("ix_2d", lambda x: tz.ix_(x.astype(np.int32)), "ix_: the arguments must be 1-D"),
    ("ix_bool", lambda x: tz.ix_(x[0] > 0), "ix_: boolean arguments are not supported"),
    ("mgrid_not_slices", lambda x: tz.mgrid[0:2, 3], "tz.mgrid: index it with slices"),
    ("diag_indices_from_1d", lambda x: tz.diag_indices_from(x[0]), "at least 2 dimensions, got 1"),
    ("diag_indices_from_rectangle", lambda x: tz.diag_indices_from(x), r"all dimensions must be equal, got \[3, 4\]"),
    ("block_tuple", lambda x: tz.block((x, x)), "block: takes nested lists, not tuples"),
    ("block_depths", lambda x: tz.block([x, [x]]), "block: lists are nested to different depths"),
    ("resize_negative", lambda x: tz.resize(x, (2, -1)), "resize: the new shape must not be negative"),
    ("apply_over_axes_rank", lambda x: tz.apply_over_axes(lambda a, k: tz.sum(a), x, [0]),
     "apply_over_axes: func must keep the rank 2"),
    ("array_repr_traced", lambda x: tz.array_repr(x), "array_repr: a traced array has no values to print"),
]


@pytest.mark.parametrize("call, message", [row[1:] for row in ERRORS], ids=[row[0] for row in ERRORS])
def test_bad_arguments_raise_clear_errors(call, message):
    with pytest.raises(tz.TenzrError, match=message):
        tz.trace(call, X)


def test_isdtype_and_can_cast_reject_what_is_not_a_dtype():
    with pytest.raises(tz.TenzrError, match="isdtype: kind must be a dtype"):
        tz.isdtype(np.float32, "floaty")
    with pytest.raises(tz.TenzrError, match="can_cast"):
        tz.can_cast(1.0, np.float32)
