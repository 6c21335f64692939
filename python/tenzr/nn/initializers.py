"""`tz.nn.initializers`: JAX's `jax.nn.initializers`. Each builder returns an initializer
`init(key, shape, dtype=None) -> array` drawing from `tz.random` with that key."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr import random
from tenzr.core import dtype_name
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.types import numpy_dtype
from tenzr.flags import default_float

Initializer = Callable[..., Any]


def _dtype(dtype: Any) -> Any:
    return default_float() if dtype is None else dtype


def _scalar(value: Any, dtype: Any) -> np.ndarray:
    """`value` as a NumPy scalar of `dtype` (the default float when None)."""
    return np.asarray(value, numpy_dtype(dtype_name(_dtype(dtype))))


def zeros(key: Any, shape: Sequence[int], dtype: Any = None) -> Any:
    """An array of zeros (the key is unused)."""
    return tnp.zeros(shape, _dtype(dtype))


def ones(key: Any, shape: Sequence[int], dtype: Any = None) -> Any:
    """An array of ones (the key is unused)."""
    return tnp.ones(shape, _dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """Arrays full of `value`."""
    return lambda key, shape, dtype=dtype: tnp.full(shape, value, _dtype(dtype))


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """Uniform numbers in [0, scale)."""
    return lambda key, shape, dtype=dtype: random.uniform(key, shape, _dtype(dtype)) * _scalar(scale, dtype)


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """Normal numbers of mean 0 and standard deviation `stddev`."""
    return lambda key, shape, dtype=dtype: random.normal(key, shape, _dtype(dtype)) * _scalar(stddev, dtype)


def truncated_normal(stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0, upper: Any = 2.0) -> Initializer:
    """stddev * (standard normal numbers conditioned on lower < x < upper); no correction
    of the standard deviation for the truncation (as JAX's)."""
    return lambda key, shape, dtype=dtype: random.truncated_normal(key, lower, upper, shape, _dtype(dtype)) * \
        _scalar(stddev, dtype)


def _fans(shape: Sequence[int], in_axis: Any, out_axis: Any, batch_axis: Any) -> tuple[float, float]:
    """(fan in, fan out): the input and output sizes times the receptive field (the dims
    that are neither input, output nor batch), as JAX's."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise TenzrError(f"variance_scaling: a {len(shape)}-dimensional weights array has no input dim at the "
                         "default in_axis=-2; give in_axis")

    def size(axes: Any) -> int:
        return shape[axes] if isinstance(axes, int) else math.prod(shape[a] for a in axes)

    in_size, out_size, batch = size(in_axis), size(out_axis), size(batch_axis)
    field = math.prod(shape) / in_size / out_size / batch
    return in_size * field, out_size * field


_TRUNCATED_STD = 0.87962566103423978
"""The standard deviation of a standard normal truncated to (-2, 2)."""


def variance_scaling(scale: float, mode: str, distribution: str, in_axis: Any = -2, out_axis: Any = -1,
                     batch_axis: Any = (), dtype: Any = None) -> Initializer:
    """Numbers of variance scale / n, n the fan in, fan out, their mean ("fan_avg") or
    geometric mean ("fan_geo_avg"), drawn from a "truncated_normal", "normal" or "uniform"."""
    modes = {"fan_in": lambda i, o: i, "fan_out": lambda i, o: o, "fan_avg": lambda i, o: (i + o) / 2,
             "fan_geo_avg": lambda i, o: (i * o) ** 0.5}
    if mode not in modes:
        raise TenzrError(f"variance_scaling: mode '{mode}' is not one of {', '.join(modes)}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise TenzrError(f"variance_scaling: distribution '{distribution}' is not truncated_normal, normal or uniform")

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        shape = tuple(int(d) for d in shape)
        dtype = _dtype(dtype)
        fan_in, fan_out = _fans(shape, in_axis, out_axis, batch_axis)
        variance = scale / modes[mode](fan_in, fan_out)
        if distribution == "truncated_normal":
            return random.truncated_normal(key, -2.0, 2.0, shape, dtype) * _scalar(
                math.sqrt(variance) / _TRUNCATED_STD, dtype)
        if distribution == "normal":
            return random.normal(key, shape, dtype) * _scalar(math.sqrt(variance), dtype)
        return random.uniform(key, shape, dtype, -1.0) * _scalar(math.sqrt(3 * variance), dtype)

    return init


def glorot_uniform(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (), dtype: Any = None) -> Initializer:
    """Glorot (Xavier) uniform: variance_scaling(1, "fan_avg", "uniform")."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (), dtype: Any = None) -> Initializer:
    """Glorot (Xavier) normal: variance_scaling(1, "fan_avg", "truncated_normal")."""
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


def lecun_uniform(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (), dtype: Any = None) -> Initializer:
    """LeCun uniform: variance_scaling(1, "fan_in", "uniform")."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (), dtype: Any = None) -> Initializer:
    """LeCun normal: variance_scaling(1, "fan_in", "truncated_normal")."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


def he_uniform(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (), dtype: Any = None) -> Initializer:
    """He (Kaiming) uniform: variance_scaling(2, "fan_in", "uniform")."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (), dtype: Any = None) -> Initializer:
    """He (Kaiming) normal: variance_scaling(2, "fan_in", "truncated_normal")."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal
