"""Nested tuples, lists and dicts of arrays ("pytrees"), flattened to leaves and back.

Dicts flatten in sorted key order; None is an empty subtree; anything else is a leaf.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TreeDef:
    """The structure of a pytree without its leaves."""

    kind: str  # "leaf", "none", "tuple", "list", "namedtuple", "dict"
    children: tuple[TreeDef, ...] = ()
    keys: tuple[Any, ...] = ()

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
        return {"tuple": f"({inner})", "namedtuple": f"({inner})", "list": f"[{inner}]",
                "dict": f"{{{inner}}}"}[self.kind]


LEAF = TreeDef("leaf")


def flatten(tree: Any) -> tuple[list[Any], TreeDef]:
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree: Any, leaves: list[Any]) -> TreeDef:
    if tree is None:
        return TreeDef("none")
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return TreeDef("namedtuple", tuple(_flatten(t, leaves) for t in tree), (type(tree),))
    if isinstance(tree, (tuple, list)):
        return TreeDef("list" if isinstance(tree, list) else "tuple", tuple(_flatten(t, leaves) for t in tree))
    if isinstance(tree, dict):
        keys = tuple(sorted(tree))
        return TreeDef("dict", tuple(_flatten(tree[k], leaves) for k in keys), keys)
    leaves.append(tree)
    return LEAF


def unflatten(treedef: TreeDef, leaves: list[Any]) -> Any:
    return _build(treedef, iter(leaves))


def _build(treedef: TreeDef, it) -> Any:
    if treedef.kind == "leaf":
        return next(it)
    if treedef.kind == "none":
        return None
    children = [_build(c, it) for c in treedef.children]
    if treedef.kind == "dict":
        return dict(zip(treedef.keys, children, strict=True))
    if treedef.kind == "namedtuple":
        return treedef.keys[0](*children)
    return tuple(children) if treedef.kind == "tuple" else children

