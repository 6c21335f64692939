"""Nested tuples, lists and dicts of arrays ("pytrees"), flattened to leaves and back.

Dicts flatten in sorted key order (an OrderedDict in its own order; an OrderedDict and a
defaultdict come back as such, the latter with its default factory); None is an empty
subtree; a type registered with `register_node` flattens with its own functions; anything
else is a leaf. Each leaf has a key path (`flatten_with_path`), as JAX's.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tenzr.dialect.diagnostics import TenzrError

MAX_DEPTH = 200
"""How deeply containers may nest (Python's own recursion limit would otherwise end it)."""


@dataclass(frozen=True)
class TreeDef:
    """The structure of a pytree without its leaves (JAX's PyTreeDef)."""

    kind: str  # "leaf", "none", "tuple", "list", "namedtuple", "dict", "node"
    subtrees: tuple[TreeDef, ...] = ()
    keys: tuple[Any, ...] = ()  # dict: its keys; namedtuple: (type,); node: (type, aux data)
    container: tuple[Any, ...] = ()
    """A dict's type other than dict: (OrderedDict,) or (defaultdict, its default factory)."""

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.subtrees)

    @property
    def num_nodes(self) -> int:
        """The nodes of the structure, leaves and Nones included (as JAX's)."""
        return 1 + sum(c.num_nodes for c in self.subtrees)

    def children(self) -> list[TreeDef]:
        """The structures of this node's children."""
        return list(self.subtrees)

    def unflatten(self, leaves: Any) -> Any:
        """The tree of this structure holding `leaves` (`tree_util.tree_unflatten`)."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise TenzrError(f"tree_unflatten: the structure {self} has {self.num_leaves} leaves, got {len(leaves)}")
        return unflatten(self, leaves)

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """The subtrees of `tree` at this structure's leaves."""
        return flatten_up_to(self, tree)

    def __repr__(self) -> str:
        return f"PyTreeDef({self})"

    def __str__(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(f"{k!r}: {c}" for k, c in zip(self.keys, self.subtrees, strict=True)) if \
            self.kind == "dict" else ", ".join(str(c) for c in self.subtrees)
        if self.kind == "node":
            return f"{self.keys[0].__name__}({inner})"
        if self.kind == "dict" and self.container:
            return f"{self.container[0].__name__}({{{inner}}})"
        return {"tuple": f"({inner})", "namedtuple": f"({inner})", "list": f"[{inner}]",
                "dict": f"{{{inner}}}"}[self.kind]


LEAF = TreeDef("leaf")
_LEAF_TYPES = frozenset({np.ndarray, float, int, bool, complex})
"""Types that are always leaves, checked before anything else (a type registered with
`register_node` cannot be one of them)."""


@dataclass(frozen=True)
class _Node:
    flatten: Callable[[Any], tuple[Any, Any]]
    """obj -> (children, aux data)"""
    unflatten: Callable[[Any, Any], Any]
    """(aux data, children) -> obj"""
    path_keys: Callable[[Any], list[Any]] | None = None
    """obj -> its children's key path entries (else their positions: `FlattenedIndexKey`)."""


_NODES: dict[type, _Node] = {}
"""Registered node types."""


def register_node(cls: type, flatten_fn: Callable[[Any], tuple[Any, Any]],
                  unflatten_fn: Callable[[Any, Any], Any], path_keys: Callable[[Any], list[Any]] | None = None
                  ) -> None:
    """Make instances of `cls` pytree nodes: `flatten_fn(obj)` gives (children, aux data),
    where the aux data is hashable and static; `unflatten_fn(aux data, children)` rebuilds;
    `path_keys(obj)`, where given, the children's key path entries."""
    if not isinstance(cls, type):
        raise TenzrError(f"register_pytree_node: expected a class, got {cls!r}")
    if cls in _NODES or cls in (tuple, list, dict, type(None), collections.OrderedDict, collections.defaultdict):
        raise TenzrError(f"register_pytree_node: {cls.__name__} is already a pytree node type")
    if cls in _LEAF_TYPES:
        raise TenzrError(f"register_pytree_node: {cls.__name__} is always a leaf")
    _NODES[cls] = _Node(flatten_fn, unflatten_fn, path_keys)


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
        children, aux = node.flatten(tree)
        kids = tuple(_flatten(c, leaves, depth + 1, is_leaf) for c in children)
        return TreeDef("node", kids, (type(tree), aux))
    if not isinstance(tree, (tuple, list, dict)):
        leaves.append(tree)
        return LEAF
    if depth >= MAX_DEPTH:
        raise TenzrError(f"a pytree nests more than {MAX_DEPTH} containers deep")
    if isinstance(tree, dict):
        keys, container = _dict_keys(tree)
        return TreeDef("dict", tuple(_flatten(tree[k], leaves, depth + 1, is_leaf) for k in keys), keys, container)
    children = tuple(_flatten(t, leaves, depth + 1, is_leaf) for t in tree)
    if hasattr(tree, "_fields"):
        return TreeDef("namedtuple", children, (type(tree),))
    return TreeDef("list" if isinstance(tree, list) else "tuple", children)


def _dict_keys(tree: dict) -> tuple[tuple, tuple]:
    """A dict's keys in flattening order, and its `TreeDef.container`."""
    if isinstance(tree, collections.OrderedDict):
        return tuple(tree), (collections.OrderedDict,)
    keys = _sorted_keys(tree)
    if isinstance(tree, collections.defaultdict):
        return keys, (collections.defaultdict, tree.default_factory)
    return keys, ()


def _children(d: TreeDef, t: Any) -> list[Any]:
    """The children of `t`, a node of structure `d`, in flattening order."""
    if d.kind == "node":
        return list(_NODES[type(t)].flatten(t)[0])
    return [t[k] for k in d.keys] if d.kind == "dict" else list(t)


def flatten_up_to(treedef: TreeDef, tree: Any) -> list[Any]:
    """The subtrees of `tree` at the leaves of `treedef`, a prefix of its structure (as JAX's
    `flatten_up_to`); an error names the first place where the structures differ."""
    found: list[Any] = []

    def walk(d: TreeDef, t: Any) -> None:
        if d.kind == "leaf":
            found.append(t)
            return
        sub = flatten(t, lambda x: x is not t)[1] if t is not None or d.kind != "none" else TreeDef("none")
        if sub.kind != d.kind or sub.keys != d.keys or sub.container[:1] != d.container[:1] or \
                len(sub.subtrees) != len(d.subtrees):
            raise TenzrError(f"the tree {sub} does not have the structure {d}")
        if d.kind == "none":
            return
        for c, child in zip(d.subtrees, _children(d, t), strict=True):
            walk(c, child)

    walk(treedef, tree)
    return found


@dataclass(frozen=True)
class DictKey:
    """A key path's step into a dict (JAX's)."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclass(frozen=True)
class SequenceKey:
    """A key path's step into a tuple or list (JAX's)."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx}]"


@dataclass(frozen=True)
class GetAttrKey:
    """A key path's step into a named field: a namedtuple's or a registered dataclass's (JAX's)."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclass(frozen=True)
class FlattenedIndexKey:
    """A key path's step into a registered node without field names: its child's position (JAX's)."""

    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


KeyEntry = DictKey | SequenceKey | GetAttrKey | FlattenedIndexKey


def flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                      ) -> tuple[list[tuple[tuple[KeyEntry, ...], Any]], TreeDef]:
    """([(key path, leaf), ...], the structure of `tree`), as JAX's `tree_flatten_with_path`."""
    leaves, treedef = flatten(tree, is_leaf)
    paths: list[tuple[KeyEntry, ...]] = []

    def walk(d: TreeDef, t: Any, path: tuple[KeyEntry, ...]) -> None:
        if d.kind == "leaf":
            paths.append(path)
            return
        if d.kind == "none":
            return
        children = _children(d, t)
        if d.kind == "dict":
            steps: list[KeyEntry] = [DictKey(k) for k in d.keys]
        elif d.kind == "namedtuple":
            steps = [GetAttrKey(name) for name in t._fields]
        elif d.kind == "node":
            path_keys = _NODES[type(t)].path_keys
            steps = list(path_keys(t)) if path_keys else [FlattenedIndexKey(i) for i in range(len(children))]
        else:
            steps = [SequenceKey(i) for i in range(len(children))]
        for c, child, step in zip(d.subtrees, children, steps, strict=True):
            walk(c, child, (*path, step))

    walk(treedef, tree, ())
    return list(zip(paths, leaves, strict=True)), treedef


def keystr(keys: Sequence[KeyEntry], *, simple: bool = False, separator: str = "") -> str:
    """A key path as text: `['a'][0].b` (as JAX's); `simple` gives each step's bare key,
    joined by `separator`."""
    if not simple:
        return separator.join(str(k) for k in keys)
    return separator.join(str(next(iter(vars(k).values()))) for k in keys)


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
    for c in treedef.subtrees:
        children.append(_build(c, it))
    if treedef.kind == "node":
        return _NODES[treedef.keys[0]].unflatten(treedef.keys[1], children)
    if treedef.kind == "dict":
        pairs = zip(treedef.keys, children, strict=True)
        if not treedef.container:
            return dict(pairs)
        if treedef.container[0] is collections.defaultdict:
            return collections.defaultdict(treedef.container[1], pairs)
        return treedef.container[0](pairs)
    if treedef.kind == "namedtuple":
        return treedef.keys[0](*children)
    return tuple(children) if treedef.kind == "tuple" else children
