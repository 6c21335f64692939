"""Eager calls: a `tz` function called outside any trace, on concrete values, runs now.

As JAX runs `jnp` functions op by op, a call such as `tz.prod(np.array(shape))` in a
model's set-up code, a notebook or a debugging print compiles the program of that one
call and runs it. The NumPy arrays among its arguments become the program's inputs; every
other argument (Python and NumPy scalars, shapes, axes, dtypes, functions) is fixed in it,
exactly as inside `tz.jit`, so an eager call returns what the same call in a jitted
function would. Programs are cached per function, fixed arguments and input signature (in
memory, and on disk as every compiled program is), so a call repeated on new values of the
same shapes runs without compiling. Results are NumPy arrays; a result that does not
depend on any array's values (`tz.shape`, `tz.ndim`, an `allclose` of constants) comes
back as the function returned it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tenzr.core import Array, OnDevice, Trace, context
from tenzr.dialect.functions import new_module
from tenzr.dialect.ir_imports import ir
from tenzr.flags import config
from tenzr.pytree import TreeDef, flatten, unflatten
from tenzr.targets import as_target
from tenzr.transforms import _TRACING, Compiled, compile_traceable, trace_into

_CPU = as_target("cpu")


@dataclass
class _Plan:
    """How one eager signature runs: its program (None when no result depends on an
    input's values), and where the program's results go among the Python results."""

    program: Compiled | None
    out_tree: TreeDef
    template: list[Any]
    """The result's leaves: the fixed ones as they are, None where a program result goes."""


_PLANS: dict[Any, _Plan] = {}


def forget_plans() -> None:
    """Forgets the eager calls' programs (`tz.clear_caches`)."""
    _PLANS.clear()


def call_eagerly(fn: Callable, args: tuple, kwargs: dict) -> Any:
    """`fn(*args, **kwargs)` run now (compiled once per signature, see the module doc)."""
    leaves, tree = flatten((args, kwargs))
    leaves = [np.asarray(leaf) if isinstance(leaf, OnDevice) else leaf for leaf in leaves]  # (eager runs on the CPU)
    inputs = [leaf for leaf in leaves if isinstance(leaf, np.ndarray)]
    fixed = tuple((i, type(leaf), leaf) for i, leaf in enumerate(leaves) if not isinstance(leaf, np.ndarray))
    key: Any = ("eager", fn, tree, fixed, tuple((x.shape, x.dtype.str) for x in inputs), config.state())
    try:
        plan = _PLANS.get(key)
    except TypeError:  # a fixed argument that cannot be hashed: nothing is kept in memory
        key, plan = None, None

    def program(*arrays: Array) -> list[Array]:
        it = iter(arrays)
        call_args, call_kwargs = unflatten(tree, [next(it) if isinstance(leaf, np.ndarray) else leaf
                                                  for leaf in leaves])
        out_leaves, out_tree = flatten(fn(*call_args, **call_kwargs))
        layout.append((out_tree, [None if isinstance(leaf, Array) else leaf for leaf in out_leaves]))
        return [leaf for leaf in out_leaves if isinstance(leaf, Array)]

    if plan is None:
        layout: list[tuple[TreeDef, list[Any]]] = []
        _trace_once(program, inputs)
        out_tree, template = layout[0]
        needs_program = any(leaf is None for leaf in template)
        compiled = compile_traceable(program, tuple(inputs), _CPU, ("eager", fn, tree, fixed) if key else object()) \
            if needs_program else None
        plan = _Plan(compiled, out_tree, template)
        if key is not None:
            _PLANS[key] = plan
    results = iter(plan.program(inputs) if plan.program is not None else ())
    return unflatten(plan.out_tree, [next(results) if leaf is None else leaf for leaf in plan.template])


def _trace_once(program: Callable, inputs: list[np.ndarray]) -> None:
    """Traces `program` into a module that is then dropped, to learn what it returns."""
    with _TRACING, context(), ir.Location.unknown():
        trace_into(Trace(new_module(), set()), program, tuple(inputs), "eager")
