"""`tz.tree_util`, with JAX's names: pytrees (nested tuples, lists, dicts and registered
classes; None an empty subtree) flattened, rebuilt, mapped and reduced. `tz.tree` has the
short names of JAX's `jax.tree` (`map`, `leaves`, `structure`, `flatten`, `unflatten`,
`reduce`, `all`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from tenzr.dialect.diagnostics import TenzrError
from tenzr.pytree import TreeDef, flatten, flatten_up_to, register_node, unflatten

IsLeaf = Callable[[Any], bool] | None
"""JAX's `is_leaf`: a subtree for which it is true is a leaf (it sees every subtree first)."""


def tree_flatten(tree: Any, is_leaf: IsLeaf = None) -> tuple[list[Any], TreeDef]:
    """(the leaves of `tree`, its structure)."""
    return flatten(tree, is_leaf)


def tree_unflatten(treedef: TreeDef, leaves: Any) -> Any:
    """The tree of structure `treedef` holding `leaves`."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise TenzrError(f"tree_unflatten: the structure {treedef} has {treedef.num_leaves} leaves, got {len(leaves)}")
    return unflatten(treedef, leaves)


def tree_leaves(tree: Any, is_leaf: IsLeaf = None) -> list[Any]:
    """The leaves of `tree`, in order (dicts by sorted key)."""
    return flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: IsLeaf = None) -> TreeDef:
    """The structure of `tree` without its leaves."""
    return flatten(tree, is_leaf)[1]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: IsLeaf = None) -> Any:
    """`f` applied to each leaf of `tree` and the subtrees at the same place in each of
    `rest`, whose structures `tree`'s is a prefix of (as JAX's)."""
    leaves, treedef = flatten(tree, is_leaf)
    others = []
    for k, other in enumerate(rest):
        try:
            others.append(flatten_up_to(treedef, other))
        except TenzrError as e:
            raise TenzrError(f"tree_map: tree {k + 1} after the first differs from it: {e.message}") from None
    return unflatten(treedef, [f(*args) for args in zip(leaves, *others, strict=True)])


def tree_reduce(function: Callable[[Any, Any], Any], tree: Any, initializer: Any = ..., is_leaf: IsLeaf = None) -> Any:
    """The leaves of `tree` combined by `function`, left to right (from `initializer` if
    given)."""
    leaves = flatten(tree, is_leaf)[0]
    if initializer is ...:
        if not leaves:
            raise TenzrError("tree_reduce: an empty tree needs an initializer")
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree: Any, *, is_leaf: IsLeaf = None) -> bool:
    """Whether every leaf of `tree` is true."""
    return all(flatten(tree, is_leaf)[0])


def register_pytree_node(nodetype: type, flatten_func: Callable[[Any], tuple[Any, Any]],
                         unflatten_func: Callable[[Any, Any], Any]) -> None:
    """Make `nodetype` a pytree node, as JAX's: `flatten_func(x)` returns (children, aux_data)
    with hashable, static aux_data; `unflatten_func(aux_data, children)` rebuilds x."""
    register_node(nodetype, flatten_func, unflatten_func)


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: `cls` flattens with its `tree_flatten()` method and rebuilds with its
    `tree_unflatten(aux_data, children)` classmethod, as JAX's."""
    register_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)  # type: ignore[attr-defined]
    return cls
