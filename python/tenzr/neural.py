"""Neural-network functions (`tz.nn`): activations, the stable softmax family, N-d
convolution. Names, arguments and formulas follow `jax.nn`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tenzr import numpy_api as tnp
from tenzr.core import Array, asarray, check_arguments, emit, promote, user_location
from tenzr.dialect import ops as T
from tenzr.dialect.diagnostics import TenzrError
from tenzr.flags import default_float
from tenzr.pytree import flatten, unflatten


def relu(x: Any) -> Array:
    """max(x, 0); its gradient at 0 is 0."""
    return emit(T.relu, asarray(x))


def sigmoid(x: Any) -> Array:
    """1 / (1 + exp(-x)), without overflow for large |x|."""
    return emit(T.sigmoid, tnp._float(x))


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False, return_sign: bool = False) -> Any:
    """log(sum(b * exp(a))) over `axis` without overflow (b = 1 when not given): the max is
    subtracted first, as a constant for the gradient (which is then exactly softmax). With
    return_sign, (log |sum|, the sum's sign)."""
    a = tnp._float(a)
    if b is not None:
        a, b = promote(a, b)
        shape = np.broadcast_shapes(a.shape, b.shape)
        a, b = tnp.broadcast_to(a, shape), tnp.broadcast_to(b, shape)
    peak = stop_gradient(tnp.max(a, axis, keepdims=True))
    peak = tnp.where(tnp.abs(peak) < np.inf, peak, 0.0)  # an infinite max (all -inf) shifts by 0
    total = tnp.sum(tnp.exp(a - peak) if b is None else b * tnp.exp(a - peak), axis, keepdims=True)
    out, sign = tnp.log(tnp.abs(total) if b is not None else total) + peak, tnp.sign(total)
    if not keepdims:
        axes = tnp._axes(axis, a.ndim)
        out, sign = tnp.squeeze(out, axes), tnp.squeeze(sign, axes)
    return (out, sign) if return_sign else out


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


def relu6(x: Any) -> Array:
    """min(max(x, 0), 6), whose derivative is 0 at 0 and at 6 (as JAX's)."""
    x = asarray(x)
    return tnp.where(x >= 6.0, 6.0, relu(x))


def silu(x: Any) -> Array:
    """x * sigmoid(x) (also called swish)."""
    x = tnp._float(x)
    return x * sigmoid(x)


swish = silu


def gelu(x: Any, approximate: bool = True) -> Array:
    """The Gaussian error linear unit: x * Phi(x), by default with JAX's tanh approximation
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    x = tnp._float(x)
    if approximate:
        return 0.5 * x * (1.0 + tnp.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * (x * x * x))))
    return 0.5 * x * (1.0 + emit(T.erf, x * (1 / np.sqrt(2))))


def softplus(x: Any) -> Array:
    """log(1 + exp(x)), without overflow."""
    return tnp.logaddexp(tnp._float(x), 0.0)


def mish(x: Any) -> Array:
    """x·tanh(softplus(x))."""
    x = tnp._float(x)
    return x * tnp.tanh(softplus(x))


def squareplus(x: Any, b: Any = 4) -> Array:
    """(x + sqrt(x² + b))/2, a smooth relu."""
    x = tnp._float(x)
    return (x + tnp.sqrt(x * x + b)) / 2


def sparse_plus(x: Any) -> Array:
    """0 up to -1, x from 1, and (x + 1)²/4 between: a softplus with flat ends."""
    x = tnp._float(x)
    return tnp.where(x <= -1.0, 0.0, tnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def log_sigmoid(x: Any) -> Array:
    """log(sigmoid(x)) = -softplus(-x), without overflow."""
    return -softplus(-tnp._float(x))


def soft_sign(x: Any) -> Array:
    """x / (|x| + 1)."""
    x = tnp._float(x)
    return x / (tnp.abs(x) + 1.0)


def elu(x: Any, alpha: Any = 1.0) -> Array:
    """x where x > 0, else alpha * (exp(x) - 1)."""
    x = tnp._float(x)
    positive = x > 0
    return tnp.where(positive, x, alpha * tnp.expm1(tnp.where(positive, 0.0, x)))


def celu(x: Any, alpha: Any = 1.0) -> Array:
    """max(x, 0) + alpha * min(exp(x / alpha) - 1, 0)."""
    x = tnp._float(x)
    return tnp.maximum(x, 0.0) + alpha * tnp.expm1(tnp.minimum(x, 0.0) / alpha)


def selu(x: Any) -> Array:
    """The scaled ELU, with its self-normalizing constants."""
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def leaky_relu(x: Any, negative_slope: Any = 1e-2) -> Array:
    """x where x >= 0, else negative_slope * x."""
    x = tnp._float(x)
    return tnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x: Any) -> Array:
    """x clipped to [-1, 1]."""
    return tnp.clip(tnp._float(x), -1.0, 1.0)


def hard_sigmoid(x: Any) -> Array:
    """relu6(x + 3) / 6."""
    return relu6(tnp._float(x) + 3.0) / 6.0


def hard_silu(x: Any) -> Array:
    """x * hard_sigmoid(x) (also called hard_swish)."""
    x = tnp._float(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def glu(x: Any, axis: int = -1) -> Array:
    """The gated linear unit: the first half of `axis` times the sigmoid of the second."""
    x = tnp._float(x)
    (dim,) = tnp._axes(axis, x.ndim)
    half, odd = divmod(x.shape[dim], 2)
    if odd:
        raise TenzrError(f"glu: axis {axis} has odd size {x.shape[dim]}; it must split into two halves",
                         user_location())
    first = tuple(slice(0, half) if d == dim else slice(None) for d in range(x.ndim))
    second = tuple(slice(half, None) if d == dim else slice(None) for d in range(x.ndim))
    return x[first] * sigmoid(x[second])


def standardize(x: Any, axis: Any = -1, mean: Any = None, variance: Any = None, epsilon: Any = 1e-5) -> Array:
    """(x - mean) / sqrt(variance + epsilon), with the mean and variance over `axis` unless
    given (JAX's variance: E[x^2] - E[x]^2)."""
    x = tnp._float(x)
    if mean is None:
        mean = tnp.mean(x, axis, keepdims=True)
    if variance is None:
        variance = tnp.mean(x * x, axis, keepdims=True) - mean * mean
    return (x - mean) / tnp.sqrt(variance + epsilon)


def one_hot(labels: Any, num_classes: int, dtype: Any = None) -> Array:
    labels = asarray(labels)
    dtype = default_float() if dtype is None else dtype
    classes = tnp.arange(num_classes, dtype=labels.dtype)
    return (tnp.expand_dims(labels, -1) == classes).astype(dtype)


def stop_gradient(x: Any) -> Any:
    """Identity forward; no gradient flows through. `x` may be a pytree of arrays (as JAX's:
    `stop_gradient(params)`)."""
    leaves, tree = flatten(x)
    return unflatten(tree, [emit(T.stop_gradient, asarray(leaf)) for leaf in leaves])


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
