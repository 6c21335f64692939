"""tz.tree_util against jax.tree_util (the test extra's reference)."""

from __future__ import annotations

import numpy as np
import pytest

import tenzr as tz

jax = pytest.importorskip("jax")

TREES = [
    {"b": np.ones(2), "a": [np.zeros(3), (np.float64(1.5), None)]},
    (np.arange(3.0), [], {"z": np.eye(2), "y": {"x": np.ones(1)}}),
    np.float32(2.0),
    [None, (None,)],
]


@pytest.mark.parametrize("tree", TREES)
def test_leaves_flatten_unflatten_and_map_match_jax(tree):
    got, want = tz.tree_util.tree_leaves(tree), jax.tree_util.tree_leaves(tree)
    assert len(got) == len(want) and all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
    leaves, treedef = tz.tree_util.tree_flatten(tree)
    assert tz.tree_util.tree_structure(tree).num_leaves == jax.tree_util.tree_structure(tree).num_leaves
    rebuilt = tz.tree_util.tree_unflatten(treedef, [np.asarray(v) * 2 for v in leaves])
    doubled = jax.tree_util.tree_map(lambda v: np.asarray(v) * 2, tree)
    assert jax.tree_util.tree_structure(rebuilt) == jax.tree_util.tree_structure(doubled)
    summed = tz.tree_util.tree_map(lambda a, b: a + b, tree, rebuilt)
    want = jax.tree_util.tree_map(lambda a, b: a + b, tree, doubled)
    assert jax.tree_util.tree_structure(summed) == jax.tree_util.tree_structure(want)
    for g, w in zip(jax.tree_util.tree_leaves(summed), jax.tree_util.tree_leaves(want), strict=True):
        np.testing.assert_array_equal(g, w)


def test_mismatched_trees_are_clear_errors():
    with pytest.raises(tz.TenzrError, match=r"tree_map: tree 1 after the first differs from it: the tree \[\*\] does "
                                            r"not have the structure \(\*, \*\)"):
        tz.tree_util.tree_map(lambda a, b: a, (1.0, 2.0), [1.0])
    _, treedef = tz.tree_util.tree_flatten((1.0, 2.0))
    with pytest.raises(tz.TenzrError, match="has 2 leaves, got 3"):
        tz.tree_util.tree_unflatten(treedef, [1, 2, 3])


class _Point:
    """A user class registered as a pytree node in both libraries, for the tests below."""

    def __init__(self, xy, label):
        self.xy, self.label = xy, label


tz.tree_util.register_pytree_node(_Point, lambda p: ((p.xy,), p.label), lambda label, kids: _Point(kids[0], label))
jax.tree_util.register_pytree_node(_Point, lambda p: ((p.xy,), p.label), lambda label, kids: _Point(kids[0], label))


@tz.tree_util.register_pytree_node_class
class _Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def tree_flatten(self):
        return (self.a, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def test_registered_classes_flatten_as_in_jax_and_pass_through_jit_and_grad():
    tree = {"p": _Point((np.ones(2), np.arange(3.0)), "origin"), "q": np.float64(2.0)}
    got, want = tz.tree_util.tree_leaves(tree), jax.tree_util.tree_leaves(tree)
    assert len(got) == len(want) == 3 and all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
    assert str(tz.tree_util.tree_structure(tree)) == "{'p': _Point((*, *)), 'q': *}"
    moved = tz.jit(lambda t: _Point(tuple(v * t["q"] for v in t["p"].xy), t["p"].label))(tree)
    assert isinstance(moved, _Point) and moved.label == "origin"
    np.testing.assert_array_equal(moved.xy[1], [0.0, 2.0, 4.0])
    g = tz.grad(lambda pair: tz.sum(pair.a * pair.b))(_Pair(np.arange(3.0), np.full(3, 2.0)))
    assert isinstance(g, _Pair)
    np.testing.assert_array_equal(g.a, 2.0)  # d(a.b)/da = b, d/db = a
    np.testing.assert_array_equal(g.b, [0.0, 1.0, 2.0])


def test_registering_twice_or_a_builtin_is_a_clear_error():
    with pytest.raises(tz.TenzrError, match="_Point is already a pytree node type"):
        tz.tree_util.register_pytree_node(_Point, lambda p: ((), None), lambda aux, kids: None)
    with pytest.raises(tz.TenzrError, match="tuple is already a pytree node type"):
        tz.tree_util.register_pytree_node(tuple, lambda p: ((), None), lambda aux, kids: None)
    with pytest.raises(tz.TenzrError, match="ndarray is always a leaf"):
        tz.tree_util.register_pytree_node(np.ndarray, lambda p: ((), None), lambda aux, kids: None)


def test_is_leaf_and_prefix_trees_as_jax():
    """`is_leaf` stops flattening at the subtrees it picks, and tree_map's later trees may go
    deeper than the first (each leaf of the first meets a subtree), as in JAX."""
    tree = [(1, 2), (3,), {"a": None, "b": (4,)}]
    def is_tuple(t):
        return isinstance(t, tuple)

    for name in ("tree_leaves", "tree_flatten"):
        got = getattr(tz.tree_util, name)(tree, is_leaf=is_tuple)
        want = getattr(jax.tree_util, name)(tree, is_leaf=is_tuple)
        assert (got if name == "tree_leaves" else got[0]) == (want if name == "tree_leaves" else want[0])
    assert tz.tree_util.tree_map(len, tree, is_leaf=is_tuple) == jax.tree_util.tree_map(len, tree, is_leaf=is_tuple)
    assert tz.tree_util.tree_leaves([1, None], is_leaf=lambda t: t is None) == [1, None]
    first, second = {"x": 1, "y": (2, 3)}, {"x": [5, 6], "y": ({"k": 7}, 8)}
    assert tz.tree.map(lambda a, b: (a, b), first, second) == jax.tree.map(lambda a, b: (a, b), first, second)
    with pytest.raises(tz.TenzrError, match=r"tree 1 after the first differs from it: the tree \{'b': \*\} does "
                                            r"not have the structure \{'a': \*\}"):
        tz.tree_util.tree_map(lambda a, b: a, {"a": 1}, {"b": 1})


def test_ordered_and_default_dicts_keep_their_type_and_order_as_jax():
    """An OrderedDict flattens in its own order and comes back one; a defaultdict in sorted
    order, with its default factory; through tree_map and grad alike."""
    import collections

    od = collections.OrderedDict([("b", np.float32(1.0)), ("a", np.float32(2.0))])
    dd = collections.defaultdict(list, {"y": np.float32(1.0), "x": np.float32(2.0)})
    for tree in (od, dd, {"o": od, "d": [dd]}):
        assert [float(v) for v in tz.tree_util.tree_leaves(tree)] == [float(v) for v in jax.tree_util.tree_leaves(tree)]
        got, want = tz.tree.map(lambda v: v * 2, tree), jax.tree.map(lambda v: v * 2, tree)
        assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want) and got == want
    grads = tz.grad(lambda p: p["a"] * 3 + p["b"])(od)
    assert type(grads) is collections.OrderedDict and list(grads) == ["b", "a"]
    assert [float(v) for v in grads.values()] == [1.0, 3.0]
    assert tz.tree.map(lambda v: v, dd).default_factory is list
    with pytest.raises(tz.TenzrError, match="does not have the structure OrderedDict"):  # (JAX: different types)
        tz.tree.map(lambda a, b: a + b, collections.OrderedDict(a=1, b=2), {"a": 1, "b": 2})


def test_key_paths_and_keystr_match_jax():
    import collections

    Point = collections.namedtuple("Point", "x y")
    tree = {"a": [1.0, (2.0, None)], "b": collections.OrderedDict([("z", 3.0), ("c", Point(4.0, 5.0))])}
    got, got_def = tz.tree_util.tree_flatten_with_path(tree)
    want, _ = jax.tree_util.tree_flatten_with_path(tree)
    assert [tz.tree_util.keystr(p) for p, _ in got] == [jax.tree_util.keystr(p) for p, _ in want]
    assert [v for _, v in got] == [v for _, v in want]
    assert [tz.tree_util.keystr(p, simple=True, separator="/") for p, _ in got] == \
        [jax.tree_util.keystr(p, simple=True, separator="/") for p, _ in want]
    assert tz.tree.leaves_with_path(tree) == got
    named = tz.tree.map_with_path(lambda p, v, w: f"{tz.tree_util.keystr(p)}={v + w}", tree, tree)
    assert named == jax.tree.map_with_path(lambda p, v, w: f"{jax.tree_util.keystr(p)}={v + w}", tree, tree)
    assert got_def.unflatten([v for _, v in got]) == tree
    assert got_def.num_nodes == jax.tree_util.tree_structure(tree).num_nodes
    assert len(got_def.children()) == 2


def test_registered_dataclasses_and_partial_pass_through_transformations():
    """register_dataclass (explicit fields, or a field's `static` metadata) and Partial, as
    JAX's: the data fields are differentiated and keyed by name, the meta fields static."""
    import dataclasses
    import functools

    @functools.partial(tz.tree_util.register_dataclass, data_fields=["w", "b"], meta_fields=["name"])
    @dataclasses.dataclass
    class Layer:
        w: np.ndarray
        b: np.ndarray
        name: str

    layer = Layer(np.full(2, 2.0), np.zeros(2), "first")
    grads = tz.grad(lambda m: (m.w ** 2 + m.b).sum())(layer)
    assert isinstance(grads, Layer) and grads.name == "first"
    np.testing.assert_allclose(grads.w, 2 * layer.w)
    np.testing.assert_allclose(grads.b, np.ones(2))
    assert [tz.tree_util.keystr(p) for p, _ in tz.tree_util.tree_leaves_with_path(layer)] == [".w", ".b"]

    @tz.tree_util.register_dataclass
    @dataclasses.dataclass
    class Scaled:
        x: np.ndarray
        times: int = dataclasses.field(default=3, metadata={"static": True})

    np.testing.assert_allclose(tz.jit(lambda s: s.x * s.times)(Scaled(np.ones(2))), [3.0, 3.0])
    assert tz.tree_util.tree_leaves(Scaled(np.ones(2))) == [pytest.approx(np.ones(2))]
    double = tz.tree_util.Partial(lambda a, x: a * x, np.float64(2.0))
    np.testing.assert_allclose(tz.jit(lambda f, x: f(x))(double, np.ones(2)), [2.0, 2.0])
    np.testing.assert_allclose(tz.grad(lambda f: f(np.float64(3.0)))(double).args[0], 3.0)


def test_tree_transpose_matches_jax():
    rows = [{"a": 1, "b": (2, 3)}, {"a": 4, "b": (5, 6)}]
    outer, inner = tz.tree.structure([0, 0]), tz.tree.structure({"a": 0, "b": (0, 0)})
    want = jax.tree.transpose(jax.tree.structure([0, 0]), jax.tree.structure({"a": 0, "b": (0, 0)}), rows)
    assert tz.tree.transpose(outer, inner, rows) == want
    assert tz.tree_util.tree_transpose(outer, None, rows) == want
    with pytest.raises(tz.TenzrError, match="outer leaf 1 is not of the inner structure"):
        tz.tree.transpose(outer, inner, [rows[0], {"a": 1}])


def test_ravel_pytree_matches_jax_and_its_unravel_is_differentiable():
    import jax.flatten_util

    tree = {"w": np.arange(6.0).reshape(2, 3), "b": np.ones(3), "n": [np.float64(5.0)]}
    flat, unravel = tz.flatten_util.ravel_pytree(tree)
    want, junravel = jax.flatten_util.ravel_pytree(tree)
    np.testing.assert_array_equal(np.asarray(flat), np.asarray(want))
    assert jax.tree_util.tree_structure(unravel(flat)) == jax.tree_util.tree_structure(tree)

    def loss(f):
        def of(v):
            p = f(v)
            return (p["w"].sum(0) * p["b"]).sum() + p["n"][0] ** 2
        return of

    np.testing.assert_allclose(tz.grad(loss(unravel))(flat), jax.grad(loss(junravel))(want))
    np.testing.assert_array_equal(tz.jit(lambda t: tz.flatten_util.ravel_pytree(t)[0])(tree), np.asarray(want))
    mixed = {"i": np.ones(2, np.int32), "f": np.ones(2, np.float32)}
    flat, unravel = tz.flatten_util.ravel_pytree(mixed)
    assert flat.dtype == jax.flatten_util.ravel_pytree(mixed)[0].dtype
    assert {k: v.dtype for k, v in unravel(flat).items()} == {"i": np.int32, "f": np.float32}
    with pytest.raises(tz.TenzrError, match=r"expected a vector of shape \(4,\)"):
        unravel(np.ones(3, np.float32))
    # (a float64 NumPy vector for float32 leaves, as JAX without x64 takes it: scipy.optimize's)
    assert unravel(np.ones(4))["f"].dtype == np.float32


def test_concrete_arrays_are_instances_of_tz_array_as_jax_arrays_are():
    assert isinstance(tz.ones(2), tz.Array) and not isinstance(np.ones(2), tz.Array)
    assert tz.jit(lambda x: x * 2 if isinstance(x, tz.Array) else x)(np.ones(2)).tolist() == [2.0, 2.0]
    assert isinstance(tz.grad(lambda x: (x * x).sum())(np.ones(2)), tz.Array)
