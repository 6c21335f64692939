"""Neural-network functions: activations, stable softmax family, N-d convolution."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, asarray, check_arguments, emit, promote, user_location
from tenzr.dialect import ops as T
from tenzr.dialect.diagnostics import TenzrError


def relu(x: Any) -> Array:
    """max(x, 0); its gradient at 0 is 0."""
    return emit(T.relu, asarray(x))


def sigmoid(x: Any) -> Array:
    """1 / (1 + exp(-x)), without overflow for large |x|."""
    return emit(T.sigmoid, tnp._float(x))


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Array:
    """log(sum(exp(x))) without overflow: the max is subtracted first (and is a constant
    for the gradient, which is then exactly softmax)."""
    x = tnp._float(x)
    peak = stop_gradient(tnp.max(x, axis, keepdims=True))
    peak = tnp.where(tnp.abs(peak) < np.inf, peak, 0.0)  # an infinite max (all -inf) shifts by 0
    out = tnp.log(tnp.sum(tnp.exp(x - peak), axis, keepdims=True)) + peak
    return out if keepdims else tnp.squeeze(out, tnp._axes(axis, x.ndim))


def log_softmax(x: Any, axis: int = -1) -> Array:
    x = tnp._float(x)
    return x - logsumexp(x, axis, keepdims=True)


def softmax(x: Any, axis: int = -1) -> Array:
    x = tnp._float(x)
    shifted = tnp.exp(x - stop_gradient(tnp.max(x, axis, keepdims=True)))
    # One reciprocal per row and a multiply (within 1.5 ulp of dividing; each row's sum is
    # >= 1): IREE then fuses the normalisation instead of running its own softmax kernel,
    # 711 -> 459 us on the transformer benchmark's attention.
    return shifted * (1.0 / tnp.sum(shifted, axis, keepdims=True))


def one_hot(labels: Any, num_classes: int, dtype: Any = np.float32) -> Array:
    labels = asarray(labels)
    classes = tnp.arange(num_classes, dtype=labels.dtype)
    return (tnp.expand_dims(labels, -1) == classes).astype(dtype)


def stop_gradient(x: Any) -> Array:
    return emit(T.stop_gradient, asarray(x))


def _per_dim(value: Any, n: int, what: str) -> list[int]:
    values = [int(value)] * n if isinstance(value, (int, np.integer)) else [int(v) for v in value]
    if len(values) != n:
        raise TenzrError(f"conv: {what} needs {n} values (one per spatial dim), got {len(values)}", user_location())
    return values


def conv(x: Any, w: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1,
         lhs_dilation: Any = 1) -> Array:
    """N-d convolution of x [N, C, spatial...] with w [O, C/groups, spatial...].

    `padding` is an int, one int per spatial dim, (low, high) pairs per dim, "VALID" or
    "SAME" (output size ceil(input / stride), extra padding at the end, as JAX).
    """
    x, w = promote(x, w)
    n = x.ndim - 2
    strides = _per_dim(stride, n, "stride")
    rhs_dilation = _per_dim(dilation, n, "dilation")
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            low = high = [0] * n
        elif mode == "SAME":
            low, high = [], []
            for d in range(n):
                size, window = x.shape[2 + d], (w.shape[2 + d] - 1) * rhs_dilation[d] + 1
                out = -(-size // strides[d])
                total = max((out - 1) * strides[d] + window - size, 0)
                low.append(total // 2)
                high.append(total - total // 2)
        else:
            raise TenzrError(f"conv: padding '{padding}' is not 'SAME', 'VALID' or numbers", user_location())
    elif isinstance(padding, (int, np.integer)):
        low = high = [int(padding)] * n
    else:
        pairs: Sequence[Any] = list(padding)
        if all(isinstance(p, (int, np.integer)) for p in pairs):
            low = high = _per_dim(pairs, n, "padding")
        else:
            low, high = [int(p[0]) for p in pairs], [int(p[1]) for p in pairs]
            _per_dim(low, n, "padding")
    return emit(T.convolution, x, w, window_strides=strides, padding_low=low, padding_high=high,
                lhs_dilation=_per_dim(lhs_dilation, n, "lhs_dilation"), rhs_dilation=rhs_dilation,
                feature_group_count=groups)


check_arguments(globals(), "tz.nn.")
