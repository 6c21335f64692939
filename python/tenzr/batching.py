"""`vmap`, with JAX's name, signature and semantics: `fun` traced once on one element's
shapes, then `tenzr-batch` gives it the batch dimension.

`in_axes` and `out_axes` are an int or None for every leaf, or a tuple / list / dict prefix
of the arguments' (outputs') structure with an int or None per subtree, as in JAX.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from tenzr.core import ShapeDtype, api_boundary, asarray, check_callable, current_trace
from tenzr.dialect.diagnostics import TenzrError
from tenzr.numpy_api import broadcast_to, moveaxis
from tenzr.passes.regions import function_type, name_of
from tenzr.passes.tenzr_batch import batch_function
from tenzr.pytree import flatten, unflatten
from tenzr.targets import Target, as_target
from tenzr.transforms import Traceable, call_function, function_name, hold, phase, python_numbers, trace_into


def _leaf_axes(kind: str, axes: Any, tree: Any, what: str) -> list[int | None]:
    """One axis per leaf of `tree`, from the prefix `axes`."""
    if axes is None or (isinstance(axes, int) and not isinstance(axes, bool)):
        return [axes] * flatten(tree)[1].num_leaves
    if isinstance(axes, dict) and isinstance(tree, dict):
        if set(axes) != set(tree):
            raise TenzrError(f"vmap: {what} has keys {sorted(axes)} where the {kind} has {sorted(tree)}")
        return [a for k in sorted(tree) for a in _leaf_axes(kind, axes[k], tree[k], what)]
    if isinstance(axes, (tuple, list)) and isinstance(tree, (tuple, list)):
        if len(axes) != len(tree):
            raise TenzrError(f"vmap: {what} has {len(axes)} entries where the {kind} has {len(tree)}")
        return [a for ax, t in zip(axes, tree, strict=True) for a in _leaf_axes(kind, ax, t, what)]
    raise TenzrError(f"vmap: {what} must be an int, None, or a tuple/list/dict matching the {kind}'s structure, "
                     f"got {axes!r}")


class _Vmapped(Traceable):
    def __init__(self, fn: Callable, in_axes: Any, out_axes: Any, axis_size: int | None, target: Target):
        self.fn, self.in_axes, self.out_axes, self.axis_size, self.target = fn, in_axes, out_axes, axis_size, target
        functools.update_wrapper(self, fn, updated=())

    def cache_key(self) -> Any:
        return ("vmap", self.fn, repr(self.in_axes), repr(self.out_axes), self.axis_size)

    def with_keywords(self, args: tuple, kwargs: dict[str, Any]) -> tuple[Traceable, tuple]:
        """As JAX's: keyword arguments are mapped over their leading axis, whatever in_axes
        says of the positional ones."""
        fn = self.fn

        @functools.wraps(fn)
        def given_keywords(*args_and_keywords: Any) -> Any:
            return fn(*args_and_keywords[:-1], **args_and_keywords[-1])

        in_axes = self.in_axes
        if not isinstance(in_axes, (tuple, list)):
            in_axes = (in_axes,) * len(args)
        return _Vmapped(given_keywords, (*in_axes, 0), self.out_axes, self.axis_size, self.target), (*args, kwargs)

    def held_arguments(self, args: tuple) -> list[int]:
        """Positions of the unmapped arguments (in_axes None) that are Python numbers: JAX's
        vmap keeps them numbers."""
        in_axes = self.in_axes
        if not isinstance(in_axes, (tuple, list)) or len(in_axes) != len(args):
            return []
        return [n for n, (axis, arg) in enumerate(zip(in_axes, args, strict=True))
                if axis is None and python_numbers(arg)]

    def trace_call(self, *args: Any) -> Any:
        trace = current_trace()
        assert trace is not None
        fn, in_axes = self.fn, self.in_axes
        held = self.held_arguments(args)
        if held:
            fn, args, free = hold(fn, args, held)
            in_axes = [in_axes[n] for n in free]
        leaves = [asarray(leaf) for leaf in flatten(args)[0]]
        if isinstance(in_axes, list):
            in_axes = tuple(in_axes)  # (JAX reads a list as a tuple here)
        axes = _leaf_axes("arguments", in_axes, args, "in_axes")
        sizes: set[int] = set()
        examples: list[Any] = []
        for leaf, axis in zip(leaves, axes, strict=True):
            if axis is None:
                examples.append(leaf)
                continue
            if not -leaf.ndim <= axis < leaf.ndim:
                raise TenzrError(f"vmap: in_axes {axis} is out of range for an argument of shape {leaf.shape}")
            axis %= leaf.ndim
            sizes.add(leaf.shape[axis])
            shape = leaf.shape[:axis] + leaf.shape[axis + 1:]
            examples.append(ShapeDtype(shape, leaf.spec.dtype))
        if self.axis_size is not None:
            sizes.add(self.axis_size)
        if not sizes:
            raise TenzrError("vmap needs at least one batched argument (in_axes are all None) or axis_size")
        if len(sizes) > 1:
            raise TenzrError(f"vmap got inconsistent sizes for the array axes to be mapped: {sorted(sizes)}")
        size = sizes.pop()
        traced = trace_into(trace, fn, tuple(unflatten(flatten(args)[1], examples)), function_name(self.fn))
        out_example = unflatten(traced.out_tree, [ShapeDtype(s.shape, s.dtype) for s in traced.result_specs])
        out_axes = self.out_axes
        if isinstance(out_axes, list) and not isinstance(out_example, list):
            out_axes = tuple(out_axes)
        result_axes = _leaf_axes("output", out_axes, out_example, "out_axes")
        if all(axis is None for axis in axes):  # (axis_size alone: each element's results are the same)
            out = call_function(traced.name, [*leaves, *traced.captures], traced.result_types)
            stacked = [y if axis is None else moveaxis(broadcast_to(y, (size, *y.shape)), 0, axis)
                       for y, axis in zip(out, result_axes, strict=True)]
            return unflatten(traced.out_tree, stacked)
        with phase("tenzr-grad"):
            derived = batch_function(trace.module, traced.name, [*axes, *[None] * len(traced.captures)], size,
                                     result_axes)
        out = call_function(name_of(derived), [*leaves, *traced.captures], list(function_type(derived).results))
        return unflatten(traced.out_tree, out)


@api_boundary
def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: str | None = None,
         axis_size: int | None = None, target: str | Target = "cpu") -> Callable:
    """`fun` mapped over a batch dimension of its arguments (`in_axes`), the results
    stacked along `out_axes`.

    >>> tz.vmap(lambda x, w: (x * w).sum())(np.ones((4, 3), np.float32), np.ones((4, 3), np.float32))
    array([3., 3., 3., 3.], dtype=float32)
    """
    check_callable(fun, "vmap")
    if axis_name is not None:
        raise TenzrError("vmap: axis_name (collectives over the batch) is not supported")
    return _Vmapped(fun, in_axes, out_axes, axis_size, as_target(target))
