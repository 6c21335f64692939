"""`tenzr-im2col`: small-window convolutions as one matmul on im2col patches.

IREE 3.13's CPU convolutions on NCHW data are several times slower than XLA's; a matmul on
channels-last patches is fast (benchmarks/conv_forms.md). An ungrouped convolution without
lhs dilation whose window has at most IM2COL_MAX_WINDOW taps becomes: the input transposed
to channels-last and padded, one strided slice per window offset, stacked elementwise
(`stack`, so IREE builds the patches in one fused loop), one dot_general with the kernel
as [window · in, out], and the output layout. tenzr.convolution's VJP rule uses the same
forms: its kernel cotangent contracts the same `patches` (shared with the forward's after
CSE), and the input cotangent of a strided one weaves stride phases (`interleave`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.types import TensorSpec
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.views import view

IM2COL_MAX_WINDOW = 27
"""Largest window (product of kernel spatial sizes) lowered through im2col patches, which
hold a copy of the input per window offset; larger ones stay convolutions."""


def uses_patches(window: Sequence[int], feature_group_count: int, lhs_dilation: Sequence[int],
                 batch_group_count: int = 1) -> bool:
    """Whether a convolution becomes a matmul on im2col `patches`: ungrouped, without lhs
    dilation, a window of at most IM2COL_MAX_WINDOW taps."""
    return (feature_group_count == 1 and batch_group_count == 1 and all(d == 1 for d in lhs_dilation)
            and math.prod(window) <= IM2COL_MAX_WINDOW)


def stack(xs: Sequence[Value], axis: int) -> Value:
    """`xs` (of one shape) stacked along a new `axis`, as selects between broadcasts on
    an iota: elementwise, so IREE fuses it, with its operands, into one loop (a
    concatenate of slices becomes one copy dispatch per slice)."""
    one = sh.spec(xs[0])
    shape = [*one.shape[:axis], len(xs), *one.shape[axis:]]
    dims = [d for d in range(len(shape)) if d != axis]
    index_spec = TensorSpec(tuple(shape), "i32")
    position = sh.iota(index_spec, axis)
    stacked = sh.broadcast_in_dim(xs[-1], shape, dims)
    for k in range(len(xs) - 2, -1, -1):
        stacked = sh.select(sh.compare(position, sh.full(index_spec, k), "EQ"), sh.broadcast_in_dim(xs[k], shape, dims),
                            stacked)
    return stacked


def patches(x: Value, layout: sh.ConvLayout, window: Sequence[int], *, strides: Sequence[int],
            padding_low: Sequence[int], padding_high: Sequence[int], rhs_dilation: Sequence[int],
            out_spatial: Sequence[int]) -> Value:
    """im2col, channels last: [batch · output positions, window · in] (window offsets
    row-major, then input channels): x transposed to channels-last once and padded, one
    strided slice per window offset, stacked elementwise."""
    n = len(layout.input_spatial)
    sx = sh.spec(x)
    x = sh.transpose(x, [layout.input_batch, *layout.input_spatial, layout.input_feature])
    if any(padding_low) or any(padding_high):
        x = sh.pad(x, sh.zeros(TensorSpec((), sx.dtype)), [0, *padding_low, 0], [0, *padding_high, 0], [0] * (n + 2))
    shape = sh.spec(x).shape
    pieces = []
    for offset in itertools.product(*(range(k) for k in window)):
        start, limit, step = [0] * (n + 2), list(shape), [1] * (n + 2)
        for d in range(n):
            start[1 + d] = offset[d] * rhs_dilation[d]
            limit[1 + d] = start[1 + d] + (out_spatial[d] - 1) * strides[d] + 1
            step[1 + d] = strides[d]
        pieces.append(sh.slice_(x, start, limit, step))
    stacked = stack(pieces, n + 1)  # [batch, out..., window, in]
    rows = int(np.prod(sh.spec(stacked).shape[:n + 1]))
    return sh.reshape(stacked, (rows, sh.spec(stacked).size // rows))


def interleave(parts: dict[tuple[int, ...], Value], factors: Sequence[int]) -> Value:
    """`parts[r]`, each [b, q_1, ..., q_n, c], woven into [b, q_1·s_1, ..., q_n·s_n, c] with
    out[:, q·s + r, :] = parts[r][:, q, :] (phases without a part are zero), as selects on a
    phase number from iotas: elementwise, so IREE fuses it with the parts (see `stack`)."""
    one = sh.spec(next(iter(parts.values())))
    n = len(factors)
    quotients = one.shape[1:-1]
    shape = [one.shape[0], *itertools.chain.from_iterable(zip(quotients, factors, strict=True)), one.shape[-1]]
    dims = [0, *range(1, 2 * n, 2), 2 * n + 1]
    index_spec = TensorSpec(tuple(shape), "i32")
    phase = sh.iota(index_spec, 2)
    for d in range(1, n):
        phase = sh.add(sh.multiply(phase, sh.full(index_spec, factors[d])), sh.iota(index_spec, 2 + 2 * d))
    order = sorted(parts)
    woven = (sh.broadcast_in_dim(parts[order.pop()], shape, dims) if len(parts) == math.prod(factors)
             else sh.zeros(one.with_shape(shape)))
    for r in order:
        number = int(np.ravel_multi_index(r, factors))
        woven = sh.select(sh.compare(phase, sh.full(index_spec, number), "EQ"),
                          sh.broadcast_in_dim(parts[r], shape, dims), woven)
    return sh.reshape(woven, (one.shape[0], *(q * f for q, f in zip(quotients, factors, strict=True)), one.shape[-1]))


def _as_matmul(x: Value, w: Value, layout: sh.ConvLayout, out_shape: Sequence[int], options: dict) -> Value:
    """A convolution as one matmul: channels-last im2col patches · kernel as [window · in, out]."""
    sw = sh.spec(w)
    n = len(layout.input_spatial)
    window = [sw.shape[d] for d in layout.kernel_spatial]
    out_spatial = [out_shape[d] for d in layout.output_spatial]
    p = patches(x, layout, window, out_spatial=out_spatial, **options)
    kernel = sh.transpose(w, [*layout.kernel_spatial, layout.kernel_in, layout.kernel_out])
    kernel = sh.reshape(kernel, (sh.spec(p).shape[1], sw.shape[layout.kernel_out]))
    y = sh.reshape(sh.dot_general(p, kernel, ((), ()), ((1,), (0,))),
                   (out_shape[layout.output_batch], *out_spatial, out_shape[layout.output_feature]))
    order = [0] * (n + 2)
    order[layout.output_batch] = 0
    order[layout.output_feature] = n + 1
    for d, dim in enumerate(layout.output_spatial):
        order[dim] = 1 + d
    return sh.transpose(y, order)


def convolution_options(op: ir.Operation) -> dict:
    """A stablehlo.convolution's layout and window options, with StableHLO's defaults."""
    conv = view(op)
    layout: sh.ConvLayout = conv["dimension_numbers"]
    n = len(layout.input_spatial)
    padding = np.array(conv.attrs["padding"]).reshape(n, 2) if "padding" in conv.attrs else np.zeros((n, 2), int)
    return {
        "layout": layout,
        "strides": conv.attrs.get("window_strides", (1,) * n),
        "padding_low": [int(v) for v in padding[:, 0]],
        "padding_high": [int(v) for v in padding[:, 1]],
        "lhs_dilation": conv.attrs.get("lhs_dilation", (1,) * n),
        "rhs_dilation": conv.attrs.get("rhs_dilation", (1,) * n),
        "feature_group_count": conv.attrs.get("feature_group_count", 1),
        "batch_group_count": conv.attrs.get("batch_group_count", 1),
    }


def im2col(module: ir.Operation) -> None:
    for op in ops_named(module, {sh.convolution.op_name}):
        options = convolution_options(op)
        layout = options.pop("layout")
        x, w = op.operands
        window = [sh.spec(w).shape[d] for d in layout.kernel_spatial]
        if not uses_patches(window, options.pop("feature_group_count"), options.pop("lhs_dilation"),
                            options.pop("batch_group_count")):
            continue
        with op.location, ir.InsertionPoint(op):
            replace_op(op, [_as_matmul(x, w, layout, sh.spec(op.results[0]).shape, options)])


@register
@dataclass
class TenzrIm2col(Pass):
    flag: ClassVar[str] = "tenzr-im2col"
    summary: ClassVar[str] = ("Rewrite ungrouped small-window convolutions into one matmul on channels-last im2col "
                              "patches (IREE's NCHW convolutions are several times slower).")
    example_input: ClassVar[str] = """\
func.func @f(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x2x2xf32>) -> tensor<1x3x4x4xf32> {
  %0 = stablehlo.convolution(%x, %w)
         dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {}
         {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
         : (tensor<1x2x5x5xf32>, tensor<3x2x2x2xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}
"""

    def run(self, module: ir.Operation) -> None:
        im2col(module)
