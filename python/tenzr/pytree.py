"""Nested tuples, lists and dicts of arrays ("pytrees"), flattened to leaves and back.

Dicts flatten in sorted key order; None is an empty subtree; a type registered with
`register_node` flattens with its own functions; anything else is a leaf.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tenzr.dialect.diagnostics import TenzrError

MAX_DEPTH = 200
"""How deeply containers may nest (Python's own recursion limit would otherwise end it)."""


@dataclass(frozen=True)
class TreeDef:
    """The structure of a pytree without its leaves."""

    kind: str  # "leaf", "none", "tuple", "list", "namedtuple", "dict", "node"
    children: tuple[TreeDef, ...] = ()
    keys: tuple[Any, ...] = ()  # dict: its keys; namedtuple: (type,); node: (type, aux data)

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def __str__(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(f"{k!r}: {c}" for k, c in zip(self.keys, self.children, strict=True)) if \
            self.kind == "dict" else ", ".join(str(c) for c in self.children)
        if self.kind == "node":
            return f"{self.keys[0].__name__}({inner})"
        return {"tuple": f"({inner})", "namedtuple": f"({inner})", "list": f"[{inner}]",
                "dict": f"{{{inner}}}"}[self.kind]


LEAF = TreeDef("leaf")
_LEAF_TYPES = frozenset({np.ndarray, float, int, bool, complex})
"""Types that are always leaves, checked before anything else (a type registered with
`register_node` cannot be one of them)."""

_NODES: dict[type, tuple[Callable[[Any], tuple[Any, Any]], Callable[[Any, Any], Any]]] = {}
"""Registered node types: type -> (flatten: obj -> (children, aux data), unflatten: (aux data, children) -> obj)."""


def register_node(cls: type, flatten_fn: Callable[[Any], tuple[Any, Any]],
                  unflatten_fn: Callable[[Any, Any], Any]) -> None:
    """Make instances of `cls` pytree nodes: `flatten_fn(obj)` gives (children, aux data),
    where the aux data is hashable and static; `unflatten_fn(aux data, children)` rebuilds."""
    if not isinstance(cls, type):
        raise TenzrError(f"register_pytree_node: expected a class, got {cls!r}")
    if cls in _NODES or cls in (tuple, list, dict, type(None)):
        raise TenzrError(f"register_pytree_node: {cls.__name__} is already a pytree node type")
    if cls in _LEAF_TYPES:
        raise TenzrError(f"register_pytree_node: {cls.__name__} is always a leaf")
    _NODES[cls] = (flatten_fn, unflatten_fn)


def flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list[Any], TreeDef]:
    """(the leaves of `tree`, its structure); a subtree for which `is_leaf` is true is a leaf."""
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves, 0, is_leaf)


def _flatten(tree: Any, leaves: list[Any], depth: int, is_leaf: Callable[[Any], bool] | None) -> TreeDef:
    if type(tree) in _LEAF_TYPES or (is_leaf is not None and is_leaf(tree)):
        leaves.append(tree)  # (the common leaf first: a call's cost on small programs)
        return LEAF
    if tree is None:
        return TreeDef("none")
    node = _NODES.get(type(tree))
    if node is not None:
        children, aux = node[0](tree)
        kids = tuple(_flatten(c, leaves, depth + 1, is_leaf) for c in children)
        return TreeDef("node", kids, (type(tree), aux))
    if not isinstance(tree, (tuple, list, dict)):
        leaves.append(tree)
        return LEAF
    if depth >= MAX_DEPTH:
        raise TenzrError(f"a pytree nests more than {MAX_DEPTH} containers deep")
    if isinstance(tree, dict):
        keys = _sorted_keys(tree)
        return TreeDef("dict", tuple(_flatten(tree[k], leaves, depth + 1, is_leaf) for k in keys), keys)
    children = tuple(_flatten(t, leaves, depth + 1, is_leaf) for t in tree)
    if hasattr(tree, "_fields"):
        return TreeDef("namedtuple", children, (type(tree),))
    return TreeDef("list" if isinstance(tree, list) else "tuple", children)


def flatten_up_to(treedef: TreeDef, tree: Any) -> list[Any]:
    """The subtrees of `tree` at the leaves of `treedef`, a prefix of its structure (as JAX's
    `flatten_up_to`); an error names the first place where the structures differ."""
    found: list[Any] = []

    def walk(d: TreeDef, t: Any) -> None:
        if d.kind == "leaf":
            found.append(t)
            return
        sub = flatten(t, lambda x: x is not t)[1] if t is not None or d.kind != "none" else TreeDef("none")
        if sub.kind != d.kind or sub.keys != d.keys or len(sub.children) != len(d.children):
            raise TenzrError(f"the tree {sub} does not have the structure {d}")
        if d.kind == "none":
            return
        children = _NODES[type(t)][0](t)[0] if d.kind == "node" else \
            [t[k] for k in d.keys] if d.kind == "dict" else list(t)
        for c, child in zip(d.children, children, strict=True):
            walk(c, child)

    walk(treedef, tree)
    return found


def _sorted_keys(tree: dict) -> tuple:
    try:
        return tuple(sorted(tree))
    except TypeError:
        kinds = sorted({type(k).__name__ for k in tree})
        raise TenzrError(f"a dict in a pytree has keys that cannot be sorted against each other "
                         f"({', '.join(kinds)}); use keys of one type") from None


def unflatten(treedef: TreeDef, leaves: list[Any]) -> Any:
    return _build(treedef, iter(leaves))


def _build(treedef: TreeDef, it) -> Any:
    if treedef.kind == "leaf":
        return next(it)
    if treedef.kind == "none":
        return None
    children = []
    for c in treedef.children:
        children.append(_build(c, it))
    if treedef.kind == "node":
        return _NODES[treedef.keys[0]][1](treedef.keys[1], children)
    if treedef.kind == "dict":
        return dict(zip(treedef.keys, children, strict=True))
    if treedef.kind == "namedtuple":
        return treedef.keys[0](*children)
    return tuple(children) if treedef.kind == "tuple" else children
