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
