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
from tenzr.forward import custom_jvp
from tenzr.pytree import flatten, unflatten


def relu(x: Any) -> Array:
    """max(x, 0); its gradient at 0 is 0."""
    return emit(T.relu, asarray(x))


def sigmoid(x: Any) -> Array:
    """1 / (1 + exp(-x)), without overflow for large |x|."""
    return emit(T.sigmoid, tnp._float(x))


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False, return_sign: bool = False,
              where: Any = None) -> Any:
    """log(sum(b * exp(a))) over `axis` without overflow (b = 1 when not given), over the
    entries `where` selects if given: the max is subtracted first, as a constant for the
    gradient (which is then exactly softmax). With return_sign, (log |sum|, the sum's sign)."""
    a = tnp._float(a)
    if b is not None:
        a, b = promote(a, b)
        shape = np.broadcast_shapes(a.shape, b.shape)
        a, b = tnp.broadcast_to(a, shape), tnp.broadcast_to(b, shape)
    if where is not None:
        a = _masked(a, where, -np.inf)
    peak = stop_gradient(tnp.max(a, axis, keepdims=True))
    peak = tnp.where(tnp.abs(peak) < np.inf, peak, 0.0)  # an infinite max (all -inf) shifts by 0
    total = tnp.sum(tnp.exp(a - peak) if b is None else b * tnp.exp(a - peak), axis, keepdims=True)
    out, sign = tnp.log(tnp.abs(total) if b is not None else total) + peak, tnp.sign(total)
    if not keepdims:
        axes = tnp._axes(axis, a.ndim)
        out, sign = tnp.squeeze(out, axes), tnp.squeeze(sign, axes)
    return (out, sign) if return_sign else out


def _masked(x: Array, where: Any, fill: float) -> Array:
    """x where `where` holds, else `fill` (both broadcast together, as JAX's)."""
    return tnp.where(asarray(where), x, fill)


def log_softmax(x: Any, axis: int = -1, where: Any = None) -> Array:
    """x - logsumexp(x) along `axis`; with `where`, over the entries it selects, the others
    -inf (as JAX's)."""
    x = tnp._float(x)
    out = x - logsumexp(x, axis, keepdims=True, where=where)
    return out if where is None else _masked(out, where, -np.inf)


def softmax(x: Any, axis: int = -1, where: Any = None) -> Array:
    """exp(x) normalised along `axis`; with `where`, over the entries it selects, the others
    0 (as JAX's: a masked attention's weights)."""
    x = tnp._float(x)
    if where is not None:
        x = _masked(x, where, -np.inf)
    peak = stop_gradient(tnp.max(x, axis, keepdims=True))
    if where is not None:  # (a row with nothing selected: its peak -inf, shift by 0)
        peak = tnp.where(tnp.abs(peak) < np.inf, peak, 0.0)
    shifted = tnp.exp(x - peak)
    # One reciprocal per row and a multiply (within 1.5 ulp of dividing; each row's sum is
    # >= 1): IREE then fuses the normalisation instead of running its own softmax kernel,
    # 711 -> 459 us on the transformer benchmark's attention.
    out = shifted * (1.0 / tnp.sum(shifted, axis, keepdims=True))
    return out if where is None else _masked(out, where, 0.0)


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


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Array:
    """1 where x's index equals the class, along a new axis `axis` of num_classes entries (an
    axis of the result, JAX's: -1 appends it); indices outside [0, num_classes) give zeros."""
    labels = asarray(x)
    if not isinstance(axis, (int, np.integer)):
        raise TenzrError(f"one_hot: axis must be an int (named axes are not supported), got {axis!r}",
                         user_location())
    (axis,) = tnp._axes(axis, labels.ndim + 1)
    classes = tnp.reshape(tnp.arange(num_classes, dtype=labels.dtype), (num_classes,) + (1,) * (labels.ndim - axis))
    return (tnp.expand_dims(labels, axis) == classes).astype(default_float() if dtype is None else dtype)


def identity(x: Any) -> Array:
    """x unchanged."""
    return asarray(x)


tanh = tnp.tanh  # (jax.nn.tanh is jnp.tanh)


def sparse_sigmoid(x: Any) -> Array:
    """0 up to -1, 1 from 1, and (x + 1)/2 between: the derivative of sparse_plus."""
    return 0.5 * tnp.clip(tnp._float(x) + 1.0, 0.0, 2.0)


def log1mexp(x: Any) -> Array:
    """log(1 - exp(-x)) for x >= 0, accurate at both ends (Mächler's switch at log 2); its
    derivative is 1 / expm1(x), as JAX's (inf at 0)."""
    return _log1mexp(tnp._float(x))


def _log1mexp_switch(x: Array) -> Array:
    return tnp.where(x < float(np.log(2.0)), tnp.log(-tnp.expm1(-x)), tnp.log1p(-tnp.exp(-x)))


# (A custom rule: differentiating the `where` would differentiate the branch not taken too,
# whose infinite slope near 0 turns the gradient into NaN.)
_log1mexp = custom_jvp(_log1mexp_switch)
_log1mexp.defjvps(lambda g, ans, x: g / tnp.expm1(x))


def logmeanexp(x: Any, axis: Any = None, where: Any = None, keepdims: bool = False) -> Array:
    """log(mean(exp(x))) over `axis` without overflow: logsumexp minus the log of the count
    (of the entries `where` selects, if given)."""
    x = tnp._float(x)
    if where is None:
        count: Any = float(np.prod([x.shape[a] for a in tnp._axes(axis, x.ndim)]))
    else:
        where = tnp.broadcast_to(asarray(where), x.shape)
        x = tnp.where(where, x, -np.inf)
        count = tnp.sum(where.astype(x.dtype), axis, keepdims=keepdims)
    return logsumexp(x, axis, keepdims=keepdims) - tnp.log(count)


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None, *,
                          scale: float | None = None, is_causal: bool = False, query_seq_lengths: Any = None,
                          key_value_seq_lengths: Any = None, local_window_size: int | tuple[int, int] | None = None,
                          implementation: str | None = None, return_residual: bool = False) -> Any:
    """JAX's scaled dot-product attention (its "xla" implementation):
    softmax(scale · Q Kᵀ + bias, masked) V per head.

    query is [B, T, N, H] (or [T, N, H]), key and value [B, S, K, H] (or [S, K, H]) with N a
    multiple of K (grouped-query heads: query head n uses key head n // (N / K)). bias and
    mask (boolean, True attends) broadcast to [B, N, T, S]; `scale` defaults to 1/sqrt(H).
    is_causal, query_seq_lengths / key_value_seq_lengths ([B] integers: the valid prefix of
    each sequence) and local_window_size ((left, right) or one int for both) mask more.
    Masked logits become -0.7 · float32's max (a fully masked row averages all values), the
    softmax runs in float32 as JAX's, and query rows past their length give zeros. With
    return_residual, also the logsumexp of the masked logits, [B, T, N] (or [T, N])."""
    if implementation == "cudnn":
        raise TenzrError("dot_product_attention: implementation='cudnn' (cuDNN's fused kernel) is not available "
                         "in tenzr; leave implementation None or 'xla'", user_location())
    if implementation not in (None, "xla"):
        raise TenzrError(f"dot_product_attention: unknown implementation {implementation!r} (None, 'xla' or "
                         "'cudnn')", user_location())
    query, key, value = asarray(query), asarray(key), asarray(value)
    out_shape = query.shape
    q, k, v = (_attention_4d(t, name) for t, name in ((query, "query"), (key, "key"), (value, "value")))
    b, s, kv_heads, h = k.shape
    _, t, n, _ = q.shape
    if v.shape != k.shape or v.dtype != k.dtype:
        raise TenzrError(f"dot_product_attention: value must have key's shape {key.shape} and dtype {key.dtype}, "
                         f"got {value.shape} {value.dtype}", user_location())
    if q.shape[0] != b or q.shape[3] != h or q.dtype != k.dtype:
        raise TenzrError(f"dot_product_attention: query {query.shape} {query.dtype} does not fit key {key.shape} "
                         f"{key.dtype} (the same batch, head size and dtype)", user_location())
    if not q.is_float:
        raise TenzrError(f"dot_product_attention: query, key and value must be floating, got {q.dtype}",
                         user_location())
    if n % kv_heads:
        raise TenzrError(f"dot_product_attention: the number of query heads ({n}) must be a multiple of the key/value "
                         f"heads ({kv_heads})", user_location())
    groups = n // kv_heads
    logits_dtype = np.promote_types(np.dtype(q.dtype), np.float32)
    logits = tnp.einsum("btkgh,bskh->bkgts", tnp.reshape(q, (b, t, kv_heads, groups, h)), k,
                        preferred_element_type=logits_dtype)
    logits = tnp.reshape(logits, (b, n, t, s)) * tnp.asarray(1.0 / np.sqrt(h) if scale is None else scale,
                                                             logits_dtype)
    if bias is not None:
        logits = (logits + _attention_4d(bias, "bias", (b, n, t, s))).astype(logits_dtype)
    keep = _attention_mask(mask, is_causal, query_seq_lengths, key_value_seq_lengths, local_window_size, b, n, t, s)
    if keep is not None:
        negative = -0.7 * min(float(np.finfo(logits_dtype).max), float(np.finfo(np.float32).max))
        logits = tnp.where(keep, logits, tnp.asarray(negative, logits_dtype))
    logits = logits.astype(np.float32)
    probs = softmax(logits, axis=-1).astype(k.dtype)
    encoded = tnp.einsum("bkgts,bskh->btkgh", tnp.reshape(probs, (b, kv_heads, groups, t, s)), v)
    encoded = tnp.reshape(encoded, (b, t, n, h))
    if query_seq_lengths is not None:
        valid = tnp.arange(t)[None, :] < asarray(query_seq_lengths)[:, None]
        encoded = encoded * valid[:, :, None, None].astype(encoded.dtype)
    encoded = tnp.reshape(encoded, out_shape)
    if not return_residual:
        return encoded
    residual = stop_gradient(tnp.transpose(logsumexp(logits, axis=-1).astype(k.dtype), (0, 2, 1)))
    return encoded, tnp.reshape(residual, out_shape[:-1])


def _attention_4d(x: Any, name: str, broadcast_to: tuple[int, ...] | None = None) -> Array:
    """An attention operand with leading 1s up to rank 4 (as JAX's), checked to broadcast to
    `broadcast_to` when given."""
    x = asarray(x)
    if x.ndim > 4 or (broadcast_to is None and x.ndim < 3):
        raise TenzrError(f"dot_product_attention: {name} must be {'3-d or ' if broadcast_to is None else ''}4-d, got "
                         f"shape {x.shape}", user_location())
    x = tnp.reshape(x, (1,) * (4 - x.ndim) + x.shape)
    if broadcast_to is not None:
        if any(d not in (1, want) for d, want in zip(x.shape, broadcast_to, strict=True)):
            raise TenzrError(f"dot_product_attention: {name} of shape {x.shape} does not broadcast to [B, N, T, S] "
                             f"= {broadcast_to}", user_location())
    return x


def _attention_mask(mask: Any, is_causal: bool, q_lengths: Any, kv_lengths: Any, window: Any, b: int, n: int,
                    t: int, s: int) -> Array | None:
    """Where the [B, N, T, S] logits take part (None: everywhere), as JAX's _apply_masks."""
    keep = None if mask is None else _attention_4d(mask, "mask", (b, n, t, s))
    if keep is not None and keep.dtype != "bool":
        raise TenzrError(f"dot_product_attention: mask must be boolean (True attends; pass an additive mask as bias), "
                         f"got {keep.dtype}", user_location())
    query_pos, key_pos = tnp.arange(t)[:, None], tnp.arange(s)[None, :]
    parts = [keep] if keep is not None else []
    if is_causal:
        parts.append(query_pos >= key_pos)
    if window is not None:
        left, right = (window, window) if isinstance(window, (int, np.integer)) else window
        parts.append((query_pos <= key_pos + int(left)) & (query_pos >= key_pos - int(right)))
    for lengths, positions, name in ((q_lengths, query_pos, "query_seq_lengths"),
                                     (kv_lengths, key_pos, "key_value_seq_lengths")):
        if lengths is None:
            continue
        lengths = asarray(lengths)
        if lengths.shape != (b,) or not np.issubdtype(lengths.dtype, np.integer):
            raise TenzrError(f"dot_product_attention: {name} must be integers of shape ({b},), got {lengths.shape} "
                             f"{lengths.dtype}", user_location())
        parts.append(positions[None, None] < lengths[:, None, None, None])
    if not parts:
        return None
    out = parts[0]
    for part in parts[1:]:
        out = out & part
    return out


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
