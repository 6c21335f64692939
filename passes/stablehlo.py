"""The typed StableHLO emitter: every StableHLO op Tenzr creates goes through here.

Import it as `sh`. Each function takes `ir.Value`s and plain Python values, infers the
result type, and creates the op at the current insertion point and location. Helpers that
would be no-ops (a reshape to the same shape, an identity transpose) return their input.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from functools import cache
from typing import NamedTuple

import numpy as np

from tenzr.dialect.context import on_context_eviction
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.opdef import dense_constant, splat_constant
from tenzr.dialect.types import TensorSpec, ir_type, spec_of

spec = spec_of


@cache
def _parse_attr(text: str, context: ir.Context) -> ir.Attribute:
    return ir.Attribute.parse(text, context)


on_context_eviction(lambda kept: _parse_attr.cache_clear())


def attr(text: str) -> ir.Attribute:
    return _parse_attr(text, ir.Context.current)


def _i64s(values: Sequence[int]) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def _i64(value: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))


def _list(values: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def producer(x: Value) -> ir.Operation | None:
    """The op that computes `x`, or None for a block argument."""
    owner = x.owner
    return owner.operation if isinstance(owner, (ir.Operation, ir.OpView)) else None


def builds(name: str) -> Callable[[Callable], Callable]:
    """Names the op a builder creates (`builder.op_name`): rule tables are keyed by it."""
    def mark(builder: Callable) -> Callable:
        builder.op_name = name  # type: ignore[attr-defined]
        return builder

    return mark


def create(name: str, results: Sequence[TensorSpec], operands: Sequence[Value],
           attributes: dict[str, ir.Attribute] | None = None, regions: int = 0) -> ir.Operation:
    return ir.Operation.create(name, results=[ir_type(r) for r in results], operands=list(operands),
                               attributes=attributes, regions=regions)


def _one(name: str, result: TensorSpec, operands: Sequence[Value],
         attributes: dict[str, ir.Attribute] | None = None) -> Value:
    return create(name, [result], operands, attributes).result


# --------------------------------------------------------------------------- elementwise


ELEMENTWISE: set[str] = set()
"""Names of the elementwise ops emitted here (IREE fuses chains of them into one loop)."""
TRANSCENDENTAL = frozenset(f"stablehlo.{name}" for name in (
    "power", "exponential", "exponential_minus_one", "log", "log_plus_one", "sqrt", "rsqrt", "tanh", "logistic",
    "sine", "cosine"))
"""Those of them that cost many instructions or a long latency per element."""


def _elementwise(name: str) -> Callable[..., Value]:
    ELEMENTWISE.add(name)

    def emit(*operands: Value) -> Value:
        return _one(name, spec(operands[-1]), operands)  # select's condition comes first

    emit.__name__ = name.removeprefix("stablehlo.")
    emit.__doc__ = f"`{name}` on operands of one shape."
    return builds(name)(emit)


add = _elementwise("stablehlo.add")
subtract = _elementwise("stablehlo.subtract")
multiply = _elementwise("stablehlo.multiply")
divide = _elementwise("stablehlo.divide")
power = _elementwise("stablehlo.power")
maximum = _elementwise("stablehlo.maximum")
minimum = _elementwise("stablehlo.minimum")
and_ = _elementwise("stablehlo.and")
or_ = _elementwise("stablehlo.or")
not_ = _elementwise("stablehlo.not")
negate = _elementwise("stablehlo.negate")
exponential = _elementwise("stablehlo.exponential")
log = _elementwise("stablehlo.log")
sqrt = _elementwise("stablehlo.sqrt")
rsqrt = _elementwise("stablehlo.rsqrt")
tanh = _elementwise("stablehlo.tanh")
logistic = _elementwise("stablehlo.logistic")
sine = _elementwise("stablehlo.sine")
cosine = _elementwise("stablehlo.cosine")
abs_ = _elementwise("stablehlo.abs")
log_plus_one = _elementwise("stablehlo.log_plus_one")
exponential_minus_one = _elementwise("stablehlo.exponential_minus_one")
sign = _elementwise("stablehlo.sign")
floor = _elementwise("stablehlo.floor")
round_nearest_even = _elementwise("stablehlo.round_nearest_even")


@builds("stablehlo.clamp")
def clamp(low: Value, x: Value, high: Value) -> Value:
    """min(max(x, low), high); bounds are rank 0 or x's shape."""
    return _one("stablehlo.clamp", spec(x), [low, x, high])


def _compare_type(dtype: str) -> str:
    if dtype.startswith(("f", "bf")):
        return "FLOAT"
    return "UNSIGNED" if dtype == "i1" else "SIGNED"


@builds("stablehlo.compare")
def compare(x: Value, y: Value, direction: str) -> Value:
    """`direction` is one of EQ NE GE GT LE LT (case-insensitive)."""
    s = spec(x)
    return _one("stablehlo.compare", s.with_dtype("i1"), [x, y], {
        "comparison_direction": attr(f"#stablehlo<comparison_direction {direction.upper()}>"),
        "compare_type": attr(f"#stablehlo<comparison_type {_compare_type(s.dtype)}>"),
    })


@builds("stablehlo.select")
def select(cond: Value, a: Value, b: Value) -> Value:
    return _one("stablehlo.select", spec(a), [cond, a, b])


@builds("stablehlo.convert")
def convert(x: Value, dtype: str) -> Value:
    s = spec(x)
    return x if s.dtype == dtype else _one("stablehlo.convert", s.with_dtype(dtype), [x])


ELEMENTWISE.update(f"stablehlo.{name}" for name in ("clamp", "compare", "select", "convert"))


# --------------------------------------------------------------------------- constants


@builds("stablehlo.constant")
def constant(value: np.ndarray | float | int | bool, like: TensorSpec) -> Value:
    """A constant of type `like` holding `value` (a scalar is splat)."""
    if isinstance(value, (bool, int, float)):
        attr = splat_constant(value, like)
    else:
        attr = dense_constant(np.broadcast_to(np.asarray(value), like.shape), like)
    return _one("stablehlo.constant", like, [], {"value": attr})


def constant_attribute(value: ir.Attribute) -> Value:
    """A constant holding the dense elements attribute `value`."""
    return ir.Operation.create("stablehlo.constant", results=[value.type], attributes={"value": value}).result


def full(like: TensorSpec, value: float | int | bool) -> Value:
    return constant(value, like)


def zeros(like: TensorSpec) -> Value:
    return constant(0, like)


@builds("stablehlo.iota")
def iota(result: TensorSpec, dimension: int) -> Value:
    return _one("stablehlo.iota", result, [], {"iota_dimension": _i64(dimension)})


# --------------------------------------------------------------------------- shapes


@builds("stablehlo.broadcast_in_dim")
def broadcast_in_dim(x: Value, shape: Sequence[int], dims: Sequence[int]) -> Value:
    s = spec(x)
    if tuple(shape) == s.shape and list(dims) == list(range(s.rank)):
        return x
    return _one("stablehlo.broadcast_in_dim", s.with_shape(shape), [x], {"broadcast_dimensions": _i64s(dims)})


def broadcast_to(x: Value, shape: Sequence[int]) -> Value:
    """NumPy broadcast of `x` to `shape` (right-aligned)."""
    rank = spec(x).rank
    return broadcast_in_dim(x, shape, range(len(shape) - rank, len(shape)))


@builds("stablehlo.reshape")
def reshape(x: Value, shape: Sequence[int]) -> Value:
    s = spec(x)
    return x if tuple(shape) == s.shape else _one("stablehlo.reshape", s.with_shape(shape), [x])


@builds("stablehlo.transpose")
def transpose(x: Value, permutation: Sequence[int]) -> Value:
    s = spec(x)
    if list(permutation) == list(range(s.rank)):
        return x
    return _one("stablehlo.transpose", s.with_shape(s.shape[p] for p in permutation), [x],
                {"permutation": _i64s(permutation)})


@builds("stablehlo.slice")
def slice_(x: Value, start: Sequence[int], limit: Sequence[int], strides: Sequence[int] | None = None) -> Value:
    s = spec(x)
    strides = strides or [1] * s.rank
    if list(start) == [0] * s.rank and tuple(limit) == s.shape and list(strides) == [1] * s.rank:
        return x
    shape = [-(-(e - b) // st) for b, e, st in zip(start, limit, strides, strict=True)]
    return _one("stablehlo.slice", s.with_shape(shape), [x], {
        "start_indices": _i64s(start), "limit_indices": _i64s(limit), "strides": _i64s(strides)})


@builds("stablehlo.pad")
def pad(x: Value, value: Value, low: Sequence[int], high: Sequence[int], interior: Sequence[int]) -> Value:
    s = spec(x)
    if not any(low) and not any(high) and not any(interior):
        return x
    shape = [lo + hi + d + max(d - 1, 0) * i for d, lo, hi, i in zip(s.shape, low, high, interior, strict=True)]
    return _one("stablehlo.pad", s.with_shape(shape), [x, value], {
        "edge_padding_low": _i64s(low), "edge_padding_high": _i64s(high), "interior_padding": _i64s(interior)})


@builds("stablehlo.reverse")
def reverse(x: Value, dims: Sequence[int]) -> Value:
    if not dims:
        return x
    sliced = producer(x)
    if sliced is not None and sliced.name == "stablehlo.slice":
        strides = list(sliced.attributes["strides"])
        if any(st > 1 for st in strides):
            return _reverse_of_strided_slice(sliced, dims)
    return _one("stablehlo.reverse", spec(x), [x], {"dimensions": _i64s(dims)})


def _reverse_of_strided_slice(sliced: ir.Operation, dims: Sequence[int]) -> Value:
    """reverse(slice(x)) as slice(reverse(x)): IREE 3.13 fails to compile a strided slice
    feeding a reverse directly ("LLVM Translation failed for ...unrealized_conversion_cast")."""
    source = sliced.operands[0]
    shape = spec(source).shape
    start, limit = list(sliced.attributes["start_indices"]), list(sliced.attributes["limit_indices"])
    strides = list(sliced.attributes["strides"])
    for d in dims:
        count = -(-(limit[d] - start[d]) // strides[d])
        last = start[d] + (count - 1) * strides[d]
        start[d], limit[d] = shape[d] - 1 - last, shape[d] - start[d]
    flipped = _one("stablehlo.reverse", spec(source), [source], {"dimensions": _i64s(dims)})
    return slice_(flipped, start, limit, strides)


@builds("stablehlo.concatenate")
def concatenate(xs: Sequence[Value], axis: int) -> Value:
    if len(xs) == 1:
        return xs[0]
    first = spec(xs[0])
    total = sum(spec(x).shape[axis] for x in xs)
    shape = [total if d == axis else n for d, n in enumerate(first.shape)]
    return _one("stablehlo.concatenate", first.with_shape(shape), xs, {"dimension": _i64(axis)})


@builds("stablehlo.dynamic_slice")
def dynamic_slice(x: Value, starts: Sequence[Value], sizes: Sequence[int]) -> Value:
    return _one("stablehlo.dynamic_slice", spec(x).with_shape(sizes), [x, *starts], {"slice_sizes": _i64s(sizes)})


@builds("stablehlo.dynamic_update_slice")
def dynamic_update_slice(x: Value, update: Value, starts: Sequence[Value]) -> Value:
    return _one("stablehlo.dynamic_update_slice", spec(x), [x, update, *starts])


@builds("stablehlo.optimization_barrier")
def optimization_barrier(*values: Value) -> list[Value]:
    """The values, unchanged, but opaque to CSE and fusion across the barrier."""
    return list(create("stablehlo.optimization_barrier", [spec(v) for v in values], values).results)


# --------------------------------------------------------------------------- contractions


@builds("stablehlo.dot_general")
def dot_general(a: Value, b: Value, batch: tuple[Sequence[int], Sequence[int]],
                contract: tuple[Sequence[int], Sequence[int]]) -> Value:
    """Result dims: batch dims, then a's free dims, then b's free dims."""
    sa, sb = spec(a), spec(b)
    (ba, bb), (ca, cb) = batch, contract
    free_a = [n for d, n in enumerate(sa.shape) if d not in ba and d not in ca]
    free_b = [n for d, n in enumerate(sb.shape) if d not in bb and d not in cb]
    shape = [sa.shape[d] for d in ba] + free_a + free_b
    if sa.size == 0 or sb.size == 0:
        # An empty contraction is all zeros (and IREE 3.13 crashes compiling it).
        return zeros(sa.with_shape(shape))
    parts = []
    if ba:
        parts.append(f"lhs_batching_dimensions = {_list(ba)}, rhs_batching_dimensions = {_list(bb)}")
    parts.append(f"lhs_contracting_dimensions = {_list(ca)}, rhs_contracting_dimensions = {_list(cb)}")
    return _one("stablehlo.dot_general", sa.with_shape(shape), [a, b],
                {"dot_dimension_numbers": attr(f"#stablehlo.dot<{', '.join(parts)}>")})


class ConvLayout(NamedTuple):
    """Dimension numbers of a convolution: positions of each logical dim."""

    input_batch: int
    input_feature: int
    input_spatial: tuple[int, ...]
    kernel_in: int
    kernel_out: int
    kernel_spatial: tuple[int, ...]
    output_batch: int
    output_feature: int
    output_spatial: tuple[int, ...]

    @staticmethod
    def channels_first(n: int) -> ConvLayout:
        """NCHW input and output, OIHW kernel, with `n` spatial dims."""
        sp = tuple(range(2, 2 + n))
        return ConvLayout(0, 1, sp, 1, 0, sp, 0, 1, sp)

    def attribute(self) -> ir.Attribute:
        return attr(
            f"#stablehlo.conv<raw input_batch_dimension = {self.input_batch}, "
            f"input_feature_dimension = {self.input_feature}, input_spatial_dimensions = {_list(self.input_spatial)}, "
            f"kernel_input_feature_dimension = {self.kernel_in}, kernel_output_feature_dimension = {self.kernel_out}, "
            f"kernel_spatial_dimensions = {_list(self.kernel_spatial)}, output_batch_dimension = {self.output_batch}, "
            f"output_feature_dimension = {self.output_feature}, "
            f"output_spatial_dimensions = {_list(self.output_spatial)}>")


def convolution(x: Value, w: Value, layout: ConvLayout, *, strides: Sequence[int], padding_low: Sequence[int],
                padding_high: Sequence[int], lhs_dilation: Sequence[int], rhs_dilation: Sequence[int],
                feature_group_count: int = 1, batch_group_count: int = 1) -> Value:
    """A convolution; ungrouped ones without lhs dilation and with small windows become one
    matmul on im2col patches (IREE's CPU convolutions on NCHW data are several times slower:
    benchmarks/conv_forms.md)."""
    options = {"strides": strides, "padding_low": padding_low, "padding_high": padding_high,
               "lhs_dilation": lhs_dilation, "rhs_dilation": rhs_dilation}
    groups = feature_group_count
    if groups > 1 and spec(w).shape[layout.kernel_in] > 1:
        # IREE 3.13's Vulkan backend computes grouped convolutions with more than one
        # channel per group wrongly; one convolution per group is exact everywhere.
        # (Depthwise convolutions, one channel per group, are right and stay whole.)
        parts = [_one_conv(_group(x, layout.input_feature, g, groups), _group(w, layout.kernel_out, g, groups),
                           layout, 1, batch_group_count, options) for g in range(groups)]
        return concatenate(parts, layout.output_feature)
    return _one_conv(x, w, layout, groups, batch_group_count, options)


IM2COL_MAX_WINDOW = 27
"""Largest window (product of kernel spatial sizes) lowered through im2col patches, which
hold a copy of the input per window offset; larger ones stay convolutions."""


def uses_patches(window: Sequence[int], feature_group_count: int, lhs_dilation: Sequence[int],
                 batch_group_count: int = 1) -> bool:
    """Whether a convolution is lowered through im2col `patches`: ungrouped, without lhs
    dilation, window of at most IM2COL_MAX_WINDOW taps. (The kernel cotangent asks too, so
    it shares the forward's patches.)"""
    return (feature_group_count == 1 and batch_group_count == 1 and all(d == 1 for d in lhs_dilation)
            and math.prod(window) <= IM2COL_MAX_WINDOW)


def patches(x: Value, layout: ConvLayout, window: Sequence[int], *, strides: Sequence[int],
            padding_low: Sequence[int], padding_high: Sequence[int], rhs_dilation: Sequence[int],
            out_spatial: Sequence[int]) -> Value:
    """im2col, channels last: [batch · output positions, window · in] (window offsets
    row-major, then input channels): x transposed to channels-last once and padded, one
    strided slice per window offset, stacked elementwise (`stack`) so IREE builds the
    patches in one fused loop."""
    n = len(layout.input_spatial)
    sx = spec(x)
    x = transpose(x, [layout.input_batch, *layout.input_spatial, layout.input_feature])
    if any(padding_low) or any(padding_high):
        x = pad(x, zeros(TensorSpec((), sx.dtype)), [0, *padding_low, 0], [0, *padding_high, 0], [0] * (n + 2))
    shape = spec(x).shape
    pieces = []
    for offset in itertools.product(*(range(k) for k in window)):
        start, limit, step = [0] * (n + 2), list(shape), [1] * (n + 2)
        for d in range(n):
            start[1 + d] = offset[d] * rhs_dilation[d]
            limit[1 + d] = start[1 + d] + (out_spatial[d] - 1) * strides[d] + 1
            step[1 + d] = strides[d]
        pieces.append(slice_(x, start, limit, step))
    stacked = stack(pieces, n + 1)  # [batch, out..., window, in]
    rows = int(np.prod(spec(stacked).shape[:n + 1]))
    return reshape(stacked, (rows, spec(stacked).size // rows))


def stack(xs: Sequence[Value], axis: int) -> Value:
    """`xs` (of one shape) stacked along a new `axis`, as selects between broadcasts on
    an iota: elementwise, so IREE fuses it, with its operands, into one loop (a
    concatenate of slices becomes one copy dispatch per slice)."""
    one = spec(xs[0])
    shape = [*one.shape[:axis], len(xs), *one.shape[axis:]]
    dims = [d for d in range(len(shape)) if d != axis]
    index_spec = TensorSpec(tuple(shape), "i32")
    position = iota(index_spec, axis)
    stacked = broadcast_in_dim(xs[-1], shape, dims)
    for k in range(len(xs) - 2, -1, -1):
        stacked = select(compare(position, full(index_spec, k), "EQ"), broadcast_in_dim(xs[k], shape, dims), stacked)
    return stacked


def interleave(parts: dict[tuple[int, ...], Value], factors: Sequence[int]) -> Value:
    """`parts[r]`, each [b, q_1, ..., q_n, c], woven into [b, q_1·s_1, ..., q_n·s_n, c] with
    out[:, q·s + r, :] = parts[r][:, q, :] (phases without a part are zero), as selects on a
    phase number from iotas: elementwise, so IREE fuses it with the parts (see `stack`)."""
    one = spec(next(iter(parts.values())))
    n = len(factors)
    quotients = one.shape[1:-1]
    shape = [one.shape[0], *itertools.chain.from_iterable(zip(quotients, factors, strict=True)), one.shape[-1]]
    dims = [0, *range(1, 2 * n, 2), 2 * n + 1]
    index_spec = TensorSpec(tuple(shape), "i32")
    phase = iota(index_spec, 2)
    for d in range(1, n):
        phase = add(multiply(phase, full(index_spec, factors[d])), iota(index_spec, 2 + 2 * d))
    order = sorted(parts)
    woven = (broadcast_in_dim(parts[order.pop()], shape, dims) if len(parts) == math.prod(factors)
             else zeros(one.with_shape(shape)))
    for r in order:
        number = int(np.ravel_multi_index(r, factors))
        woven = select(compare(phase, full(index_spec, number), "EQ"), broadcast_in_dim(parts[r], shape, dims), woven)
    return reshape(woven, (one.shape[0], *(q * f for q, f in zip(quotients, factors, strict=True)), one.shape[-1]))


def _patches_conv(x: Value, w: Value, layout: ConvLayout, out_shape: Sequence[int], options: dict) -> Value:
    """A convolution as one matmul: channels-last im2col patches · kernel as [window · in, out]."""
    sw = spec(w)
    n = len(layout.input_spatial)
    window = [sw.shape[d] for d in layout.kernel_spatial]
    out_spatial = [out_shape[d] for d in layout.output_spatial]
    p = patches(x, layout, window, strides=options["strides"], padding_low=options["padding_low"],
                padding_high=options["padding_high"], rhs_dilation=options["rhs_dilation"], out_spatial=out_spatial)
    kernel = transpose(w, [*layout.kernel_spatial, layout.kernel_in, layout.kernel_out])
    kernel = reshape(kernel, (spec(p).shape[1], sw.shape[layout.kernel_out]))
    y = reshape(dot_general(p, kernel, ((), ()), ((1,), (0,))),
                (out_shape[layout.output_batch], *out_spatial, out_shape[layout.output_feature]))
    order = [0] * (n + 2)
    order[layout.output_batch] = 0
    order[layout.output_feature] = n + 1
    for d, dim in enumerate(layout.output_spatial):
        order[dim] = 1 + d
    return transpose(y, order)


def _group(x: Value, dim: int, g: int, groups: int) -> Value:
    shape = spec(x).shape
    size = shape[dim] // groups
    return slice_(x, [g * size if d == dim else 0 for d in range(len(shape))],
                  [(g + 1) * size if d == dim else n for d, n in enumerate(shape)])


def _one_conv(x: Value, w: Value, layout: ConvLayout, feature_group_count: int, batch_group_count: int,
              options: dict) -> Value:
    strides, padding_low, padding_high = options["strides"], options["padding_low"], options["padding_high"]
    lhs_dilation, rhs_dilation = options["lhs_dilation"], options["rhs_dilation"]
    sx, sw = spec(x), spec(w)
    rank = sx.rank
    shape = [0] * rank
    shape[layout.output_batch] = sx.shape[layout.input_batch] // batch_group_count
    shape[layout.output_feature] = sw.shape[layout.kernel_out]
    for d in range(len(strides)):
        size = (sx.shape[layout.input_spatial[d]] - 1) * lhs_dilation[d] + 1 + padding_low[d] + padding_high[d]
        window = (sw.shape[layout.kernel_spatial[d]] - 1) * rhs_dilation[d] + 1
        shape[layout.output_spatial[d]] = max(size - window, -1) // strides[d] + 1
    if sx.size == 0 or sw.size == 0:
        return zeros(sx.with_shape(shape))  # empty windows sum to zero (and IREE cannot compile them)
    if uses_patches([sw.shape[d] for d in layout.kernel_spatial], feature_group_count, lhs_dilation,
                    batch_group_count):
        return _patches_conv(x, w, layout, shape, options)
    padding = np.array([[lo, hi] for lo, hi in zip(padding_low, padding_high, strict=True)], dtype=np.int64)
    padding_type = ir.RankedTensorType.get(list(padding.shape), ir.IntegerType.get_signless(64))
    return _one("stablehlo.convolution", sx.with_shape(shape), [x, w], {
        "window_strides": _i64s(strides),
        "padding": ir.DenseElementsAttr.get(padding.reshape(padding.shape), type=padding_type.element_type,
                                            shape=list(padding.shape)),
        "lhs_dilation": _i64s(lhs_dilation),
        "rhs_dilation": _i64s(rhs_dilation),
        "dimension_numbers": layout.attribute(),
        "feature_group_count": _i64(feature_group_count),
        "batch_group_count": _i64(batch_group_count),
    })


# --------------------------------------------------------------------------- regions


def _scalar_block(op: ir.Operation, dtypes: Sequence[str]) -> ir.Block:
    types = [ir_type(TensorSpec((), d)) for d in dtypes]
    return op.regions[0].blocks.append(*types)


def _return(*values: Value) -> None:
    ir.Operation.create("stablehlo.return", results=[], operands=list(values))


Combiner = Callable[[Value, Value], Value]

COMBINERS: dict[str, Combiner] = {
    "add": add,
    "multiply": multiply,
    "max": maximum,
    "min": minimum,
    "set": lambda old, new: new,
    "or": or_,
}


@builds("stablehlo.reduce")
def reduce_region(operands: Sequence[Value], inits: Sequence[Value], dims: Sequence[int],
                  body: Callable[[list[Value]], Sequence[Value]]) -> list[Value]:
    """A reduce of `operands` (of one shape) over `dims` from `inits`; `body(arguments)`
    builds the combiner (arguments: each operand's accumulator, then each one's element)
    and returns the new accumulators."""
    specs = [spec(v) for v in operands]
    outs = [s.with_shape(n for d, n in enumerate(s.shape) if d not in dims) for s in specs]
    op = create("stablehlo.reduce", outs, [*operands, *inits], {"dimensions": _i64s(sorted(dims))}, regions=1)
    block = _scalar_block(op, [s.dtype for s in specs] * 2)
    with ir.InsertionPoint(block):
        _return(*body(list(block.arguments)))
    return list(op.results)


@builds("stablehlo.reduce")
def reduce(x: Value, init: float | int | bool, dims: Sequence[int], combiner: str) -> Value:
    """Reduces `x` over `dims` with one of COMBINERS, starting from `init`.

    Several dims are reduced one at a time, innermost first (merging adjacent ones with a
    reshape made a [8, 128, 1024] bias gradient 0.34 -> 2.0 ms): IREE 3.13 fails to compile
    `sum(x * broadcast(c))` over two dims at once ("'vector.contract' op invalid
    accumulator/result vector shape"), and the innermost-first order is faster and more
    accurate on CPU than one fused multi-dim reduce.
    """
    s = spec(x)
    if not dims:
        return x
    negated = producer(x)
    if combiner == "add" and init == 0 and negated is not None and negated.name == "stablehlo.negate":
        # -sum(x), not sum(-x): IREE 3.13 folds the negation into the accumulator as a
        # subtraction, which its GPU backends cannot split ("failed to get neutral element
        # for reduction"; every layer-norm gradient failed to compile for CUDA).
        return negate(reduce(negated.operands[0], init, dims, combiner))
    if len(dims) > 1:
        *rest, last = sorted(dims)
        return reduce(reduce(x, init, [last], combiner), init, rest, combiner)
    (dim,) = dims
    if combiner == "add" and s.is_float and s.shape[dim] >= SPLIT_SUM_AT:
        return _split_sum(x, dim, init)
    init_value = constant(init, TensorSpec((), s.dtype))
    return reduce_region([x], [init_value], dims, lambda args: [COMBINERS[combiner](*args)])[0]


SPLIT_SUM_AT = 4096


def _split_sum(x: Value, dim: int, init: float | int | bool) -> Value:
    """A long float sum as blocks of about sqrt(n) summed, then the block sums: one flat
    float32 reduce of 1M values fused after elementwise work loses 2e-4 relative (IREE
    accumulates serially); two stages keep it near 1e-7 and parallelise better."""
    s = spec(x)
    n = s.shape[dim]
    block = 1 << max(1, (n.bit_length() + 1) // 2)
    blocks = -(-n // block)
    if blocks * block != n:  # pad with zeros up to whole blocks
        high = [blocks * block - n if d == dim else 0 for d in range(s.rank)]
        x = pad(x, zeros(TensorSpec((), s.dtype)), [0] * s.rank, high, [0] * s.rank)
    split = reshape(x, (*s.shape[:dim], blocks, block, *s.shape[dim + 1:]))
    return reduce(reduce(split, init, [dim + 1], "add"), init, [dim], "add")


@builds("stablehlo.scatter")
def scatter(x: Value, indices: Value, updates: Value, *, update_window_dims: Sequence[int],
            inserted_window_dims: Sequence[int], scatter_dims_to_operand_dims: Sequence[int],
            index_vector_dim: int, combiner: str, unique_indices: bool = False) -> Value:
    s = spec(x)
    numbers = attr(
        f"#stablehlo.scatter<update_window_dims = {_list(update_window_dims)}, "
        f"inserted_window_dims = {_list(inserted_window_dims)}, "
        f"scatter_dims_to_operand_dims = {_list(scatter_dims_to_operand_dims)}, index_vector_dim = {index_vector_dim}>")
    op = create("stablehlo.scatter", [s], [x, indices, updates], {
        "scatter_dimension_numbers": numbers,
        "indices_are_sorted": ir.BoolAttr.get(False),
        "unique_indices": ir.BoolAttr.get(unique_indices),
    }, regions=1)
    block = _scalar_block(op, [s.dtype, s.dtype])
    with ir.InsertionPoint(block):
        _return(COMBINERS[combiner](block.arguments[0], block.arguments[1]))
    return op.result


@builds("stablehlo.gather")
def gather(x: Value, indices: Value, *, offset_dims: Sequence[int], collapsed_slice_dims: Sequence[int],
           start_index_map: Sequence[int], index_vector_dim: int, slice_sizes: Sequence[int]) -> Value:
    sx, si = spec(x), spec(indices)
    batch = [n for d, n in enumerate(si.shape) if d != index_vector_dim]
    offsets = [n for d, n in enumerate(slice_sizes) if d not in collapsed_slice_dims]
    rank = len(batch) + len(offsets)
    shape, b, o = [], iter(batch), iter(offsets)
    for d in range(rank):
        shape.append(next(o) if d in offset_dims else next(b))
    numbers = attr(
        f"#stablehlo.gather<offset_dims = {_list(offset_dims)}, collapsed_slice_dims = {_list(collapsed_slice_dims)}, "
        f"start_index_map = {_list(start_index_map)}, index_vector_dim = {index_vector_dim}>")
    return _one("stablehlo.gather", sx.with_shape(shape), [x, indices], {
        "dimension_numbers": numbers, "slice_sizes": _i64s(slice_sizes),
        "indices_are_sorted": ir.BoolAttr.get(False)})


@builds("stablehlo.sort")
def sort(operands: Sequence[Value], dimension: int, descending: bool, order_by: int | None = None) -> list[Value]:
    """Sorts all `operands` along `dimension`, keyed on the first (NaN last, as NumPy).

    IREE's sort is not stable even when asked to be; pass `order_by`, the position of an
    iota operand, to break ties by original position.
    """
    specs = [spec(v) for v in operands]
    if specs[0].rank == 1 and len(operands) > 1:
        # IREE 3.13's Vulkan compiler crashes on a rank-1 sort of several operands; sort
        # them as one row instead.
        rows = [reshape(v, (1, *s.shape)) for v, s in zip(operands, specs, strict=True)]
        return [reshape(v, s.shape) for v, s in
                zip(sort(rows, 1, descending, order_by), specs, strict=True)]
    op = create("stablehlo.sort", specs, operands, {
        "dimension": _i64(dimension), "is_stable": ir.BoolAttr.get(True)}, regions=1)
    block = _scalar_block(op, [d for s in specs for d in (s.dtype, s.dtype)])
    with ir.InsertionPoint(block):
        lhs, rhs = block.arguments[0], block.arguments[1]
        first, second = (rhs, lhs) if descending else (lhs, rhs)
        before = _total_order_less(first, second)
        if order_by is not None:
            tie = not_(_total_order_less(second, first))
            earlier = compare(block.arguments[2 * order_by], block.arguments[2 * order_by + 1], "LT")
            before = or_(before, and_(tie, earlier))
        _return(before)
    return list(op.results)


def _total_order_less(a: Value, b: Value) -> Value:
    """a < b, with NaN sorted last (after +inf) for floats, as NumPy does."""
    s = spec(a)
    less = compare(a, b, "LT")
    if not s.is_float:
        return less
    a_is_number, b_is_nan = compare(a, a, "EQ"), compare(b, b, "NE")
    return or_(less, and_(b_is_nan, a_is_number))
