"""`tz.scipy.stats.rankdata` and `tz.scipy.stats.sem`: statistics of samples."""

from __future__ import annotations

from typing import Any

import numpy as np

from tenzr import lax
from tenzr import numpy_api as tnp
from tenzr import numpy_lib as tlib
from tenzr.core import Array, check_arguments, default_float, user_location
from tenzr.dialect.diagnostics import TenzrError
from tenzr.numpy_routines import nanstd

__all__ = ["rankdata", "sem"]

_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def rankdata(a: Any, method: str = "average", *, axis: int | None = None, nan_policy: str = "propagate") -> Array:
    """The ranks (from 1) of the values of `a`, flattened or along `axis`; ties get the mean
    of their ranks ("average"), the least ("min"), the greatest ("max"), consecutive ranks per
    distinct value ("dense") or ranks in order of appearance ("ordinal"). A slice with a NaN
    is all NaN (JAX's "propagate", its only policy)."""
    if method not in _RANK_METHODS:
        raise TenzrError(f"rankdata: unknown method {method!r} (one of {', '.join(_RANK_METHODS)})", user_location())
    if nan_policy != "propagate":
        raise TenzrError(f"rankdata: nan_policy {nan_policy!r} is not implemented (as in JAX)", user_location())
    a = tnp.asarray(a)
    x = tlib.ravel(a) if axis is None else tnp.moveaxis(a, axis, -1)
    order = tnp.argsort(x, axis=-1, stable=True)
    first = tnp.argsort(order, axis=-1, stable=True)  # (each value's place in sorted order)
    values = tnp.take_along_axis(x, order, axis=-1)
    n = x.shape[-1]
    place = tnp.broadcast_to(tnp.arange(n), x.shape)
    new = tnp.concatenate([tnp.ones((*x.shape[:-1], 1), bool), values[..., 1:] != values[..., :-1]], axis=-1)
    last = tnp.concatenate([new[..., 1:], tnp.ones((*x.shape[:-1], 1), bool)], axis=-1)
    low = lax.cummax(tnp.where(new, place, 0), axis=x.ndim - 1) + 1  # (the first place of its run of ties)
    high = lax.cummin(tnp.where(last, place, n - 1), axis=x.ndim - 1, reverse=True) + 1
    ranks = {"average": (low + high) / 2, "min": low, "max": high, "dense": tlib.cumsum(new, axis=-1),
             "ordinal": place + 1}[method]
    dtype = default_float()
    out = tnp.take_along_axis(tnp.asarray(ranks).astype(dtype), first, axis=-1)
    out = tnp.where(tlib.any(tnp.isnan(x), axis=-1, keepdims=True), np.nan, out)
    return out if axis is None else tnp.moveaxis(out, -1, axis)


def sem(a: Any, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *, keepdims: bool = False) -> Array:
    """The standard error of the mean, std(a, ddof) / sqrt(n), over `axis` (all of `a` for
    None); "omit" leaves NaNs out of both."""
    b = tnp._float(a)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return tlib.std(b, axis, ddof=ddof, keepdims=keepdims) / np.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = tnp.sum(~tnp.isnan(b), axis, keepdims=keepdims)
        return nanstd(b, axis, ddof=ddof, keepdims=keepdims) / tnp.sqrt(count).astype(b.dtype)
    raise TenzrError(f"sem: nan_policy {nan_policy!r} is not implemented (as in JAX)", user_location())


check_arguments(globals(), "tz.scipy.stats.")
