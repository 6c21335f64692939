"""`tz.tree_util`, with JAX's names: pytrees (nested tuples, lists, dicts and registered
classes; None an empty subtree) flattened, rebuilt, mapped and reduced. `tz.tree` has the
short names of JAX's `jax.tree` (`map`, `leaves`, `structure`, `flatten`, `unflatten`,
`reduce`, `all`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from tenzr.dialect.diagnostics import TenzrError
from tenzr.pytree import TreeDef, flatten, register_node, unflatten


def tree_flatten(tree: Any) -> tuple[list[Any], TreeDef]:
    """(the leaves of `tree`, its structure)."""
    return flatten(tree)


def tree_unflatten(treedef: TreeDef, leaves: Any) -> Any:
    """The tree of structure `treedef` holding `leaves`."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise TenzrError(f"tree_unflatten: the structure {treedef} has {treedef.num_leaves} leaves, got {len(leaves)}")
    return unflatten(treedef, leaves)


def tree_leaves(tree: Any) -> list[Any]:
    """The leaves of `tree`, in order (dicts by sorted key)."""
    return flatten(tree)[0]


def tree_structure(tree: Any) -> TreeDef:
    """The structure of `tree` without its leaves."""
    return flatten(tree)[1]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """`f` applied to each leaf of `tree` (and the leaves at the same place in each of
    `rest`, which have `tree`'s structure)."""
    leaves, treedef = flatten(tree)
    others = []
    for k, other in enumerate(rest):
        other_leaves, other_def = flatten(other)
        if other_def != treedef:
            raise TenzrError(f"tree_map: tree {k + 1} has the structure {other_def}, the first has {treedef}")
        others.append(other_leaves)
    return unflatten(treedef, [f(*args) for args in zip(leaves, *others, strict=True)])


def tree_reduce(function: Callable[[Any, Any], Any], tree: Any, initializer: Any = ...) -> Any:
    """The leaves of `tree` combined by `function`, left to right (from `initializer` if
    given)."""
    leaves = flatten(tree)[0]
    if initializer is ...:
        if not leaves:
            raise TenzrError("tree_reduce: an empty tree needs an initializer")
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree: Any) -> bool:
    """Whether every leaf of `tree` is true."""
    return all(flatten(tree)[0])


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
