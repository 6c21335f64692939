"""`tz.tree_util`, with JAX's names: pytrees (nested tuples, lists, dicts and registered
classes; None an empty subtree) flattened, rebuilt, mapped, transposed and reduced, with
their leaves' key paths. `tz.tree` has the short names of JAX's `jax.tree` (`map`,
`leaves`, `structure`, `flatten`, `unflatten`, `reduce`, `all`, `transpose`, and the
`_with_path` forms)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

from tenzr.dialect.diagnostics import TenzrError
from tenzr.pytree import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    KeyEntry,
    SequenceKey,
    TreeDef,
    flatten,
    flatten_up_to,
    flatten_with_path,
    keystr,
    register_node,
    unflatten,
)

PyTreeDef = TreeDef
KeyPath = tuple[KeyEntry, ...]
__all__ = ["DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial", "PyTreeDef", "SequenceKey",
           "keystr", "register_dataclass", "register_pytree_node", "register_pytree_node_class", "tree_all",
           "tree_flatten", "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path", "tree_map",
           "tree_map_with_path", "tree_reduce", "tree_structure", "tree_transpose", "tree_unflatten"]

IsLeaf = Callable[[Any], bool] | None
"""JAX's `is_leaf`: a subtree for which it is true is a leaf (it sees every subtree first)."""


def tree_flatten(tree: Any, is_leaf: IsLeaf = None) -> tuple[list[Any], TreeDef]:
    """(the leaves of `tree`, its structure)."""
    return flatten(tree, is_leaf)


def tree_unflatten(treedef: TreeDef, leaves: Any) -> Any:
    """The tree of structure `treedef` holding `leaves`."""
    return treedef.unflatten(leaves)


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
    others = [_up_to(treedef, other, k, "tree_map") for k, other in enumerate(rest)]
    return unflatten(treedef, [f(*args) for args in zip(leaves, *others, strict=True)])


def _up_to(treedef: TreeDef, other: Any, k: int, caller: str) -> list[Any]:
    try:
        return flatten_up_to(treedef, other)
    except TenzrError as e:
        raise TenzrError(f"{caller}: tree {k + 1} after the first differs from it: {e.message}") from None


def tree_flatten_with_path(tree: Any, is_leaf: IsLeaf = None) -> tuple[list[tuple[KeyPath, Any]], TreeDef]:
    """([(key path, leaf), ...], the structure of `tree`): each leaf with the keys that lead
    to it (`DictKey`, `SequenceKey`, `GetAttrKey`, `FlattenedIndexKey`; `keystr` prints them)."""
    return flatten_with_path(tree, is_leaf)


def tree_leaves_with_path(tree: Any, is_leaf: IsLeaf = None) -> list[tuple[KeyPath, Any]]:
    """[(key path, leaf), ...] of `tree`."""
    return flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: IsLeaf = None) -> Any:
    """`f(key path, leaf, *others)` for each leaf of `tree` and the subtrees at the same place
    in each of `rest` (as `tree_map`)."""
    pairs, treedef = flatten_with_path(tree, is_leaf)
    others = [_up_to(treedef, other, k, "tree_map_with_path") for k, other in enumerate(rest)]
    return unflatten(treedef, [f(path, leaf, *more) for (path, leaf), *more in zip(pairs, *others, strict=True)])


def tree_transpose(outer_treedef: TreeDef, inner_treedef: TreeDef | None, pytree_to_transpose: Any) -> Any:
    """A tree of structure outer(inner) turned into one of structure inner(outer), as JAX's
    (`inner_treedef` None: the structure of the first outer leaf's subtree)."""
    subtrees = flatten_up_to(outer_treedef, pytree_to_transpose)
    if inner_treedef is None:
        if not subtrees:
            raise TenzrError("tree_transpose: the outer structure has no leaves to find the inner one from")
        inner_treedef = flatten(subtrees[0])[1]
    rows = []
    for k, subtree in enumerate(subtrees):
        try:
            rows.append(flatten_up_to(inner_treedef, subtree))
        except TenzrError as e:
            raise TenzrError(f"tree_transpose: outer leaf {k} is not of the inner structure: {e.message}") from None
    columns = [unflatten(outer_treedef, list(column)) for column in zip(*rows, strict=True)] if rows else \
        [unflatten(outer_treedef, []) for _ in range(inner_treedef.num_leaves)]
    return unflatten(inner_treedef, columns)


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
                         unflatten_func: Callable[[Any, Any], Any],
                         flatten_with_keys_func: Callable[[Any], tuple[Any, Any]] | None = None) -> None:
    """Make `nodetype` a pytree node, as JAX's: `flatten_func(x)` returns (children, aux_data)
    with hashable, static aux_data; `unflatten_func(aux_data, children)` rebuilds x. With
    `flatten_with_keys_func(x)`, giving ([(key, child), ...], aux_data), those keys are the
    children's key path entries (else their positions, `FlattenedIndexKey`)."""
    path_keys = None if flatten_with_keys_func is None else (
        lambda x: [key for key, _ in flatten_with_keys_func(x)[0]])
    register_node(nodetype, flatten_func, unflatten_func, path_keys)


def register_dataclass(nodetype: type, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None, drop_fields: Sequence[str] = ()) -> type:
    """Make a dataclass a pytree node, as JAX's: its `data_fields` are children (key paths
    `.name`), its `meta_fields` static aux data; without either, a field whose metadata says
    `static=True` is a meta field and every other field with `init=True` a data field. Returns
    `nodetype` (a class decorator too)."""
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TenzrError(f"register_dataclass: {nodetype!r} is not a dataclass; name its data_fields and "
                             "meta_fields")
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop_fields]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    elif data_fields is None or meta_fields is None:
        raise TenzrError("register_dataclass: give both data_fields and meta_fields, or neither")
    data, meta = tuple(data_fields), tuple(meta_fields)

    def flatten_func(x: Any) -> tuple[list[Any], tuple[Any, ...]]:
        return [getattr(x, name) for name in data], tuple(getattr(x, name) for name in meta)

    def unflatten_func(aux: tuple[Any, ...], children: list[Any]) -> Any:
        return nodetype(**dict(zip(meta, aux, strict=True)), **dict(zip(data, children, strict=True)))

    register_node(nodetype, flatten_func, unflatten_func, lambda x: [GetAttrKey(name) for name in data])
    return nodetype


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: `cls` flattens with its `tree_flatten()` method and rebuilds with its
    `tree_unflatten(aux_data, children)` classmethod, as JAX's."""
    register_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)  # type: ignore[attr-defined]
    return cls


class Partial(functools.partial):
    """A `functools.partial` that is a pytree, as JAX's: its arguments are the children, its
    function static (so it may pass through `jit`, `grad` or `vmap` as an argument)."""


register_node(Partial, lambda p: ((p.args, p.keywords), p.func), lambda func, xs: Partial(func, *xs[0], **xs[1]))
