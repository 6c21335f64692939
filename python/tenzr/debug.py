"""`tz.debug`: JAX's `jax.debug.print`, which prints values while a compiled program runs.

Inside a trace the values become the operands of a `tenzr.debug_print` op, whose key holds
the format string and where each value goes among the arguments (JSON, so a program read
from the disk cache prints as it did when compiled). IREE hands them to the runtime's debug
sink, which formats and prints them (`show`). Outside a trace the call prints at once.
"""

from __future__ import annotations

import builtins
import json
from typing import Any

import numpy as np

from tenzr.core import Array, api_boundary, current_trace, user_location
from tenzr.dialect import ops as T
from tenzr.dialect.diagnostics import TenzrError
from tenzr.passes.rules.custom import BATCHED
from tenzr.passes.tenzr_order_prints import MERGED

KEY = "tz.debug.print"
"""The key's field holding the format string (keys without it are not Tenzr's)."""


@api_boundary
def print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:  # noqa: A001 (JAX's name)
    """JAX's `jax.debug.print`: `fmt.format(*args, **kwargs)`, printed when the program runs
    (each time it runs: every step of a loop, as JAX's), with the arrays' values. A loop's
    steps print in order, and so do the prints of one stretch of code between loops and
    conditionals (`tenzr-order-prints`); prints of different stretches come in an order
    IREE chooses, as JAX's unordered prints do. `ordered=True` is accepted but does not
    order them."""
    del ordered
    if not isinstance(fmt, str):
        raise TenzrError(f"tz.debug.print: fmt must be a string, got {type(fmt).__name__}", user_location())
    if current_trace() is None:
        builtins.print(fmt.format(*args, **kwargs))
        return
    traced: list[Array] = []
    layout = _layout([list(args), kwargs], traced)
    try:
        key = json.dumps({KEY: fmt, "args": layout})
    except (TypeError, ValueError) as e:
        raise TenzrError(f"tz.debug.print: cannot print an argument of this kind: {e}", user_location()) from None
    with user_location():
        T.debug_print(*(a.value for a in traced), key=key)


def _layout(x: Any, traced: list[Array]) -> Any:
    """x as JSON, each traced array replaced by its position among `traced`."""
    if isinstance(x, Array):
        traced.append(x)
        return {"a": len(traced) - 1}
    if isinstance(x, dict):
        return {"d": [[str(k), _layout(v, traced)] for k, v in x.items()]}
    if isinstance(x, (list, tuple)):
        return {"l" if isinstance(x, list) else "t": [_layout(v, traced) for v in x]}
    if isinstance(x, (np.ndarray, np.generic)):
        return {"n": np.asarray(x).tolist(), "dtype": np.asarray(x).dtype.str}
    return {"v": x}


def _rebuilt(layout: Any, values: list[np.ndarray]) -> Any:
    tag, content = next(iter(layout.items()))
    if tag == "a":
        return values[content]
    if tag == "d":
        return {k: _rebuilt(v, values) for k, v in content}
    if tag in ("l", "t"):
        parts = [_rebuilt(v, values) for v in content]
        return parts if tag == "l" else tuple(parts)
    if tag == "n":
        array = np.array(content, layout["dtype"])
        return array[()] if array.ndim == 0 else array  # (a NumPy scalar stays one)
    return content


def show(key: str, values: list[np.ndarray]) -> bool:
    """Prints what the `tz.debug.print` keyed `key` asked for (or the prints merged under it,
    `tenzr-order-prints`), in order; False for a key not Tenzr's."""
    try:
        request = json.loads(key)
    except ValueError:
        return False
    if not isinstance(request, dict):
        return False
    if MERGED in request:
        for one, count in zip(request[MERGED], request["counts"], strict=True):
            show(one, values[:count])
            values = values[count:]
        return True
    if BATCHED in request:
        for row in range(values[0].shape[0] if values else 0):
            show(request[BATCHED], [v[row] for v in values])
        return True
    if KEY not in request:
        return False
    args, kwargs = _rebuilt(request["args"], values)
    builtins.print(request[KEY].format(*args, **kwargs), flush=True)
    return True
