"""`tz.ops`, as JAX's `jax.ops`: reductions of an array's rows into segments (a graph's
messages summed per node, say)."""

from __future__ import annotations

from typing import Any

import numpy as np

import tenzr as tz  # (its public functions: they run eagerly too)
from tenzr.core import user_location
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.types import element_type_of
from tenzr.passes.rules.indexing import identity_element


def _segments(name: str, combine: str, data: Any, segment_ids: Any, num_segments: int | None, mode: Any) -> Any:
    """`data`'s rows combined per segment id by `combine` ("add", "multiply", "max", "min")
    into `num_segments` rows from its identity (that of a segment no row goes to); ids outside
    [0, num_segments) are dropped, as JAX's."""
    data = tz.asarray(data)
    ids = tz.asarray(segment_ids)
    if ids.ndim != 1 or data.ndim < 1 or ids.shape[0] != data.shape[0]:
        raise TenzrError(f"tz.ops.{name}: segment_ids must be 1-d, one per row of data: got shapes {ids.shape} "
                         f"and {data.shape}", user_location())
    if num_segments is None:
        if not isinstance(segment_ids, np.ndarray | list | tuple):
            raise TenzrError(f"tz.ops.{name}: pass num_segments= (the number of segments depends on the values of "
                             "segment_ids, and must be known while tracing, as in JAX under jit)", user_location())
        num_segments = int(np.max(segment_ids)) + 1 if np.size(segment_ids) else 0
    if mode not in (None, "drop", "fill"):
        raise TenzrError(f"tz.ops.{name}: mode must be None or 'drop' (JAX's default here), got {mode!r}",
                         user_location())
    identity = identity_element(combine, element_type_of(data.dtype))
    start = tz.full((int(num_segments), *data.shape[1:]), identity, data.dtype)
    ids = tz.where(ids < 0, int(num_segments), ids)  # (dropped, as JAX's: `.at` counts negative ids from the end)
    return getattr(start.at[ids], combine)(data, mode="drop")


def segment_sum(data: Any, segment_ids: Any, num_segments: int | None = None, indices_are_sorted: bool = False,
                unique_indices: bool = False, bucket_size: int | None = None, mode: Any = None) -> Any:
    """The sum of `data`'s rows per segment (0 where none): out[i] = sum of data[j] where
    segment_ids[j] == i. `num_segments` defaults to max(segment_ids) + 1 outside a trace;
    the sortedness, uniqueness and bucket hints are accepted and need not hold."""
    return _segments("segment_sum", "add", data, segment_ids, num_segments, mode)


def segment_prod(data: Any, segment_ids: Any, num_segments: int | None = None, indices_are_sorted: bool = False,
                 unique_indices: bool = False, bucket_size: int | None = None, mode: Any = None) -> Any:
    """The product of `data`'s rows per segment (1 where none)."""
    return _segments("segment_prod", "multiply", data, segment_ids, num_segments, mode)


def segment_max(data: Any, segment_ids: Any, num_segments: int | None = None, indices_are_sorted: bool = False,
                unique_indices: bool = False, bucket_size: int | None = None, mode: Any = None) -> Any:
    """The maximum of `data`'s rows per segment (-inf, or the lowest integer, where none)."""
    return _segments("segment_max", "max", data, segment_ids, num_segments, mode)


def segment_min(data: Any, segment_ids: Any, num_segments: int | None = None, indices_are_sorted: bool = False,
                unique_indices: bool = False, bucket_size: int | None = None, mode: Any = None) -> Any:
    """The minimum of `data`'s rows per segment (inf, or the highest integer, where none)."""
    return _segments("segment_min", "min", data, segment_ids, num_segments, mode)
