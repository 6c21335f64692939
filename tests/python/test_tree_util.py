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
    with pytest.raises(tz.TenzrError, match=r"tree_map: tree 1 has the structure \[\*\], the first has \(\*, \*\)"):
        tz.tree_util.tree_map(lambda a, b: a, (1.0, 2.0), [1.0])
    _, treedef = tz.tree_util.tree_flatten((1.0, 2.0))
    with pytest.raises(tz.TenzrError, match="has 2 leaves, got 3"):
        tz.tree_util.tree_unflatten(treedef, [1, 2, 3])
