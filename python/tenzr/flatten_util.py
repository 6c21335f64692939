"""`tz.flatten_util`, as JAX's `jax.flatten_util`: a pytree of arrays as one flat vector."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import tenzr as tz  # (its public functions: they run eagerly too)
from tenzr.core import canonical
from tenzr.dialect.diagnostics import TenzrError
from tenzr.pytree import flatten, unflatten


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """(every leaf raveled and concatenated in leaf order, in the leaves' promoted dtype; a
    function taking such a vector back to a pytree like `pytree`, each leaf in its own
    shape and dtype). An empty tree gives an empty float32 vector."""
    leaves, treedef = flatten(pytree)
    if not leaves:
        return tz.zeros(0, np.float32), lambda flat: unflatten(treedef, [])
    arrays = [tz.asarray(leaf) for leaf in leaves]
    shapes = [a.shape for a in arrays]
    dtypes = [np.dtype(a.dtype) for a in arrays]
    joined = tz.result_type(*arrays)
    ends = np.cumsum([int(np.prod(s, dtype=np.int64)) for s in shapes]).tolist()
    flat = tz.concatenate([tz.ravel(a).astype(joined) for a in arrays])

    def unravel(vector: Any) -> Any:
        vector = tz.asarray(vector)
        if vector.shape != (ends[-1],):
            raise TenzrError(f"unravel: expected a vector of shape ({ends[-1]},), got {vector.shape}")
        if isinstance(vector, np.ndarray) and canonical(vector.dtype) == joined:  # (a float64 NumPy vector
            vector = vector.astype(joined)  # for float32 leaves, as JAX without x64 takes it: scipy.optimize's)
        if np.dtype(vector.dtype) != joined:
            raise TenzrError(f"unravel: expected a vector of dtype {np.dtype(joined).name}, got "
                             f"{np.dtype(vector.dtype).name}")
        parts = [vector[start:end] for start, end in zip([0, *ends[:-1]], ends, strict=True)]
        return unflatten(treedef, [p.reshape(s).astype(d) for p, s, d in zip(parts, shapes, dtypes, strict=True)])

    return flat, unravel
