"""The typed StableHLO emitter: every StableHLO op Tenzr creates goes through here.

Import it as `sh`. Each function takes `ir.Value`s and plain Python values, infers the
result type, and creates the op at the current insertion point and location. Helpers that
would be no-ops (a reshape to the same shape, an identity transpose) return their input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, NamedTuple, Protocol, cast

import numpy as np

from tenzr.dialect.context import on_context_eviction
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.opdef import dense_constant, splat_constant
from tenzr.dialect.types import COMPLEX_TYPES, TensorSpec, complex_dtype, ir_type, numpy_dtype, real_dtype, spec_of

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


class Builder(Protocol):
    """A builder of this module: a function that creates one kind of op, named `op_name`."""

    op_name: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...


def builds(name: str) -> Callable[[Callable], Builder]:
    """Names the op a builder creates (`builder.op_name`): rule tables and passes match ops by it."""
    def mark(builder: Callable) -> Builder:
        builder.op_name = name  # type: ignore[attr-defined]
        return cast(Builder, builder)

    return mark


def create(name: str, results: Sequence[TensorSpec], operands: Sequence[Value],
           attributes: dict[str, ir.Attribute] | None = None, regions: int = 0) -> ir.Operation:
    return ir.Operation.create(name, results=[ir_type(r) for r in results], operands=operands,
                               attributes=attributes, regions=regions)


def _one(name: str, result: TensorSpec, operands: Sequence[Value],
         attributes: dict[str, ir.Attribute] | None = None) -> Value:
    return ir.Operation.create(name, results=[ir_type(result)], operands=operands, attributes=attributes).result


# --------------------------------------------------------------------------- elementwise


MAY_WRITE_AN_OPERAND = frozenset(f"stablehlo.{name}" for name in (
    "scatter", "dynamic_update_slice", "sort", "select_and_scatter", "while", "case", "if", "custom_call"))
"""Ops that IREE 3.13 may carry out in the buffer of an operand: when that operand is a
function argument, IREE writes into the caller's input (iree-org/iree#16168)."""

PURE_WITH_REGIONS = frozenset(f"stablehlo.{name}" for name in (
    "reduce", "reduce_window", "scatter", "select_and_scatter", "sort", "map", "while", "case", "if"))
"""Ops with regions that only compute their results (their regions are combiners and
comparators, loop bodies and branches, which hold nothing with side effects here), so one
whose results are unused can be erased."""

ELEMENTWISE: set[str] = set()
"""Names of the elementwise ops emitted here (IREE fuses chains of them into one loop)."""
TRANSCENDENTAL: set[str] = set()
"""Those of them that cost many instructions or a long latency per element."""


def _elementwise(name: str, *, transcendental: bool = False) -> Builder:
    ELEMENTWISE.add(name)
    if transcendental:
        TRANSCENDENTAL.add(name)

    def emit(*operands: Value) -> Value:
        # (the result has the type of the last operand: select's condition comes first)
        return ir.Operation.create(name, results=[operands[-1].type], operands=operands).result

    emit.__name__ = name.removeprefix("stablehlo.")
    emit.__doc__ = f"`{name}` on operands of one shape."
    return builds(name)(emit)


add = _elementwise("stablehlo.add")
subtract = _elementwise("stablehlo.subtract")
multiply = _elementwise("stablehlo.multiply")
divide = _elementwise("stablehlo.divide")
power = _elementwise("stablehlo.power", transcendental=True)
maximum = _elementwise("stablehlo.maximum")
minimum = _elementwise("stablehlo.minimum")
and_ = _elementwise("stablehlo.and")
or_ = _elementwise("stablehlo.or")
not_ = _elementwise("stablehlo.not")
xor = _elementwise("stablehlo.xor")
shift_left = _elementwise("stablehlo.shift_left")
shift_right_logical = _elementwise("stablehlo.shift_right_logical")
shift_right_arithmetic = _elementwise("stablehlo.shift_right_arithmetic")
popcnt = _elementwise("stablehlo.popcnt")
count_leading_zeros = _elementwise("stablehlo.count_leading_zeros")
negate = _elementwise("stablehlo.negate")
exponential = _elementwise("stablehlo.exponential", transcendental=True)
log = _elementwise("stablehlo.log", transcendental=True)
sqrt = _elementwise("stablehlo.sqrt", transcendental=True)
rsqrt = _elementwise("stablehlo.rsqrt", transcendental=True)
tanh = _elementwise("stablehlo.tanh", transcendental=True)
logistic = _elementwise("stablehlo.logistic", transcendental=True)
sine = _elementwise("stablehlo.sine", transcendental=True)
cosine = _elementwise("stablehlo.cosine", transcendental=True)


@builds("stablehlo.abs")
def abs_(x: Value) -> Value:
    """|x|; the modulus, a real tensor, for complex x."""
    s = spec(x)
    return _one("stablehlo.abs", s.with_dtype(real_dtype(s.dtype)), [x])


@builds("stablehlo.real")
def real(x: Value) -> Value:
    s = spec(x)
    return _one("stablehlo.real", s.with_dtype(real_dtype(s.dtype)), [x])


@builds("stablehlo.imag")
def imag(x: Value) -> Value:
    s = spec(x)
    return _one("stablehlo.imag", s.with_dtype(real_dtype(s.dtype)), [x])


@builds("stablehlo.complex")
def complex_(x: Value, y: Value) -> Value:
    """x + i·y from real parts of one shape."""
    s = spec(x)
    return _one("stablehlo.complex", s.with_dtype(complex_dtype(s.dtype)), [x, y])


log_plus_one = _elementwise("stablehlo.log_plus_one", transcendental=True)
exponential_minus_one = _elementwise("stablehlo.exponential_minus_one", transcendental=True)
sign = _elementwise("stablehlo.sign")
floor = _elementwise("stablehlo.floor")
ceil = _elementwise("stablehlo.ceil")
round_nearest_even = _elementwise("stablehlo.round_nearest_even")
round_nearest_afz = _elementwise("stablehlo.round_nearest_afz")
tan = _elementwise("stablehlo.tan", transcendental=True)
atan2 = _elementwise("stablehlo.atan2", transcendental=True)
remainder = _elementwise("stablehlo.remainder")
cbrt = _elementwise("stablehlo.cbrt", transcendental=True)
# The CHLO ops JAX exports (IREE legalizes them to StableHLO).
erf = _elementwise("chlo.erf", transcendental=True)
erfc = _elementwise("chlo.erfc", transcendental=True)
square = _elementwise("chlo.square")
next_after = _elementwise("chlo.next_after")
erf_inv = _elementwise("chlo.erf_inv", transcendental=True)
lgamma = _elementwise("chlo.lgamma", transcendental=True)
digamma = _elementwise("chlo.digamma", transcendental=True)
polygamma = _elementwise("chlo.polygamma", transcendental=True)
atan = _elementwise("chlo.atan", transcendental=True)
asin = _elementwise("chlo.asin", transcendental=True)
acos = _elementwise("chlo.acos", transcendental=True)
sinh = _elementwise("chlo.sinh", transcendental=True)
cosh = _elementwise("chlo.cosh", transcendental=True)
asinh = _elementwise("chlo.asinh", transcendental=True)
acosh = _elementwise("chlo.acosh", transcendental=True)
atanh = _elementwise("chlo.atanh", transcendental=True)


@builds("stablehlo.clamp")
def clamp(low: Value, x: Value, high: Value) -> Value:
    """min(max(x, low), high); bounds are rank 0 or x's shape."""
    return _one("stablehlo.clamp", spec(x), [low, x, high])


def _compare_type(dtype: str) -> str:
    if dtype.startswith(("f", "bf", "complex")):
        return "FLOAT"
    return "UNSIGNED" if dtype == "i1" or dtype.startswith("ui") else "SIGNED"


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
    """x as `dtype`; complex to real keeps the real part (NumPy's and JAX's rule), real to
    complex goes through the part type."""
    s = spec(x)
    if s.dtype == dtype:
        return x
    if s.is_complex and dtype not in COMPLEX_TYPES:
        return convert(real(x), dtype)
    if dtype in COMPLEX_TYPES and not s.is_complex and s.dtype != real_dtype(dtype):
        x = convert(x, real_dtype(dtype))
    return _one("stablehlo.convert", s.with_dtype(dtype), [x])


@builds("stablehlo.bitcast_convert")
def bitcast_convert(x: Value, dtype: str) -> Value:
    """x's bits as elements of `dtype` (of the same width)."""
    s = spec(x)
    return x if s.dtype == dtype else _one("stablehlo.bitcast_convert", s.with_dtype(dtype), [x])


@builds("stablehlo.reduce_precision")
def reduce_precision(x: Value, exponent_bits: int, mantissa_bits: int) -> Value:
    i32 = ir.IntegerType.get_signless(32)
    return _one("stablehlo.reduce_precision", spec(x), [x], {"exponent_bits": ir.IntegerAttr.get(i32, exponent_bits),
                                                            "mantissa_bits": ir.IntegerAttr.get(i32, mantissa_bits)})


ELEMENTWISE.update(f"stablehlo.{name}" for name in ("abs", "real", "imag", "complex", "clamp", "compare", "select",
                                                    "convert", "bitcast_convert"))


# --------------------------------------------------------------------------- constants


@builds("stablehlo.constant")
def constant(value: np.ndarray | complex | float | int | bool, like: TensorSpec) -> Value:
    """A constant of type `like` holding `value` (a scalar is splat). A complex one is
    `complex` of two real constants: the bindings cannot read complex attributes back."""
    if like.is_complex:
        parts = np.asarray(value, numpy_dtype(like.dtype))
        part = like.with_dtype(real_dtype(like.dtype))
        if parts.ndim == 0:
            return complex_(constant(float(parts.real), part), constant(float(parts.imag), part))
        return complex_(constant(parts.real, part), constant(parts.imag, part))
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
    s = spec(x)
    if s.shape == tuple(shape):
        return x
    return broadcast_in_dim(x, shape, range(len(shape) - s.rank, len(shape)))


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
    """Unsigned integers reverse as signless ones: IREE 3.13 fails to compile an unsigned
    reverse ("failed to legalize operation 'linalg.generic'")."""
    if not dims:
        return x
    dtype = spec(x).dtype
    if dtype.startswith("ui"):
        return bitcast_convert(reverse(bitcast_convert(x, dtype[1:]), dims), dtype)
    return _one("stablehlo.reverse", spec(x), [x], {"dimensions": _i64s(dims)})


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


def copy(x: Value) -> Value:
    """A copy of `x` in a buffer of its own, which IREE 3.13 neither folds into `x` nor computes
    as a constant: `x` behind a barrier (no copy by itself), reversed twice along its widest
    dim (a one-element `x` broadcast to two elements first, then sliced: `x + x.at[0].add(x)`
    of one element gave 4x instead of 3x). For the in-place ops (sorts, scatters, updates)
    IREE would otherwise carry out in a buffer it may not or must not write."""
    shape = spec(x).shape
    kept = optimization_barrier(x)[0]
    if spec(x).size == 1:  # (IREE folds a reverse along a dim of one element)
        two = broadcast_in_dim(kept, (2, *shape), range(1, len(shape) + 1))
        twice = reverse(reverse(two, [0]), [0])
        return reshape(slice_(twice, [0] * (len(shape) + 1), (1, *shape)), shape)
    widest = max(range(len(shape)), key=lambda d: shape[d])
    return reverse(reverse(kept, [widest]), [widest])


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


@builds("stablehlo.convolution")
def convolution(x: Value, w: Value, layout: ConvLayout, *, strides: Sequence[int], padding_low: Sequence[int],
                padding_high: Sequence[int], lhs_dilation: Sequence[int], rhs_dilation: Sequence[int],
                feature_group_count: int = 1, batch_group_count: int = 1) -> Value:
    sx, sw = spec(x), spec(w)
    shape = [0] * sx.rank
    shape[layout.output_batch] = sx.shape[layout.input_batch] // batch_group_count
    shape[layout.output_feature] = sw.shape[layout.kernel_out]
    for d in range(len(strides)):
        size = (sx.shape[layout.input_spatial[d]] - 1) * lhs_dilation[d] + 1 + padding_low[d] + padding_high[d]
        window = (sw.shape[layout.kernel_spatial[d]] - 1) * rhs_dilation[d] + 1
        shape[layout.output_spatial[d]] = max(size - window, -1) // strides[d] + 1
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


@builds("stablehlo.map")
def map_(inputs: Sequence[Value], dtype: str, body: Callable[[list[Value]], Value]) -> Value:
    """`body`, built on 0-d tensors (an element of each input), applied to every element
    of `inputs` (of one shape); its result has element type `dtype`."""
    s = spec(inputs[0])
    op = create("stablehlo.map", [s.with_dtype(dtype)], inputs, {"dimensions": _i64s(range(s.rank))}, regions=1)
    block = _scalar_block(op, [spec(v).dtype for v in inputs])
    with ir.InsertionPoint(block):
        return_(body(list(block.arguments)))
    return op.result


@builds("stablehlo.return")
def return_(*values: Value) -> None:
    """The terminator of a StableHLO region's block, yielding `values`."""
    ir.Operation.create("stablehlo.return", results=[], operands=list(values))


Combiner = Callable[[Value, Value], Value]

COMBINERS: dict[str, Combiner] = {
    "add": add,
    "multiply": multiply,
    "max": maximum,
    "min": minimum,
    "set": lambda old, new: new,
    "or": or_,
    "and": and_,
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
        return_(*body(list(block.arguments)))
    return list(op.results)


@builds("stablehlo.reduce")
def reduce(x: Value, init: float | int | bool, dims: Sequence[int], combiner: str) -> Value:
    """Reduces `x` over `dims` with one of COMBINERS, starting from `init` (tenzr-split-reductions
    later chooses the order and stages IREE handles best)."""
    if not dims:
        return x
    s = spec(x)
    init_value = constant(init, TensorSpec((), s.dtype))
    op = _reduce_template(ir.Context.current, s.dtype, combiner)[1].clone()
    op.location = ir.Location.current
    op.operands[0] = x
    op.operands[1] = init_value
    op.attributes["dimensions"] = _i64s(sorted(dims))
    result = op.result
    result.set_type(ir_type(s.with_shape(n for d, n in enumerate(s.shape) if d not in dims)))
    return result


@cache
def _reduce_template(context: ir.Context, dtype: str, combiner: str) -> tuple[ir.Module, ir.Operation]:
    """A reduce of `dtype` values with `combiner`, in a module of its own, which `reduce`
    clones and then gives its operands, dimensions and type: half the cost of building the
    combiner's region again (about 10 us against 18)."""
    with context, ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            element = TensorSpec((), dtype)
            op = reduce_region([constant(0, element.with_shape((1,)))], [constant(0, element)], [0],
                               lambda args: [COMBINERS[combiner](*args)])[0].owner.operation
    return module, op


on_context_eviction(lambda kept: _reduce_template.cache_clear())


def dilated(size: int, dilation: int) -> int:
    """The extent of `size` elements with `dilation - 1` holes between neighbours."""
    return 0 if size == 0 else 1 + dilation * (size - 1)


class Window(NamedTuple):
    """A reduce_window's window, one entry per dim: sizes, strides, (low, high) padding, and
    the input's (base) and the window's dilations."""

    dimensions: tuple[int, ...]
    strides: tuple[int, ...]
    padding: tuple[tuple[int, int], ...]
    base_dilations: tuple[int, ...]
    window_dilations: tuple[int, ...]

    def output_shape(self, shape: Sequence[int]) -> list[int]:
        out = []
        for n, w, stride, (lo, hi), base, dilation in zip(shape, *self, strict=True):
            extent, reach = dilated(n, base) + lo + hi, dilated(w, dilation)
            out.append(0 if extent < reach else (extent - reach) // stride + 1)
        return out

    def attributes(self) -> dict[str, ir.Attribute]:
        rank = len(self.dimensions)
        pairs = ", ".join(f"[{lo}, {hi}]" for lo, hi in self.padding)
        return {"window_dimensions": _i64s(self.dimensions), "window_strides": _i64s(self.strides),
                "base_dilations": _i64s(self.base_dilations), "window_dilations": _i64s(self.window_dilations),
                "padding": attr(f"dense<[{pairs}]> : tensor<{rank}x2xi64>")}


@builds("stablehlo.reduce_window")
def reduce_window(x: Value, init: Value | float | int, window: Window, combiner: str) -> Value:
    """Reduces each window of `x` with one of COMBINERS, starting from `init` (which also
    fills the padding and the holes of base dilations)."""
    s = spec(x)
    if not isinstance(init, ir.Value):
        init = constant(init, TensorSpec((), s.dtype))
    op = create("stablehlo.reduce_window", [s.with_shape(window.output_shape(s.shape))], [x, init],
                window.attributes(), regions=1)
    block = _scalar_block(op, [s.dtype, s.dtype])
    with ir.InsertionPoint(block):
        return_(COMBINERS[combiner](block.arguments[0], block.arguments[1]))
    return op.result


@builds("stablehlo.select_and_scatter")
def select_and_scatter_add(x: Value, source: Value, init: Value | float, window: Window, direction: str) -> Value:
    """init plus, at each element of `x`, the `source` elements (one per window) whose window
    selects it: the first element e of the window such that `compare(e, later, direction)` holds
    for each later one (GE: the first maximum). The window has no dilations."""
    s = spec(x)
    if not isinstance(init, ir.Value):
        init = constant(init, TensorSpec((), s.dtype))
    attributes = window.attributes()
    op = create("stablehlo.select_and_scatter", [s], [x, source, init], {
        name: attributes[name] for name in ("window_dimensions", "window_strides", "padding")}, regions=2)
    scalar = ir_type(TensorSpec((), s.dtype))
    select = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(select):
        return_(compare(select.arguments[0], select.arguments[1], direction))
    scatter = op.regions[1].blocks.append(scalar, scalar)
    with ir.InsertionPoint(scatter):
        return_(add(scatter.arguments[0], scatter.arguments[1]))
    return op.result


@builds("stablehlo.scatter")
def scatter(x: Value, indices: Value, updates: Value, *, update_window_dims: Sequence[int],
            inserted_window_dims: Sequence[int], scatter_dims_to_operand_dims: Sequence[int],
            index_vector_dim: int, combiner: str, unique_indices: bool = False,
            input_batching_dims: Sequence[int] = (), scatter_indices_batching_dims: Sequence[int] = ()) -> Value:
    s = spec(x)
    numbers = scatter_numbers(update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
                              index_vector_dim, input_batching_dims, scatter_indices_batching_dims)
    op = create("stablehlo.scatter", [s], [x, indices, updates], {
        "scatter_dimension_numbers": numbers,
        "indices_are_sorted": ir.BoolAttr.get(False),
        "unique_indices": ir.BoolAttr.get(unique_indices),
    }, regions=1)
    block = _scalar_block(op, [s.dtype, s.dtype])
    with ir.InsertionPoint(block):
        return_(COMBINERS[combiner](block.arguments[0], block.arguments[1]))
    return op.result


def rescatter(op: ir.Operation, targets: Sequence[Value], indices: Value, updates: Sequence[Value],
              numbers: ir.Attribute | None = None) -> list[Value]:
    """`op`, a scatter, again on these operands (and dimension numbers, if given): a new
    scatter here that takes over `op`'s combiner region, leaving `op` without one."""
    attributes = {name: op.attributes[name] for name in op.attributes}
    if numbers is not None:
        attributes["scatter_dimension_numbers"] = numbers
    new = ir.Operation.create(op.name, results=[t.type for t in targets], operands=[*targets, indices, *updates],
                              attributes=attributes, regions=1)
    op.regions[0].blocks[0].append_to(new.regions[0])
    return list(new.results)


def scatter_numbers(update_window_dims: Sequence[int], inserted_window_dims: Sequence[int],
                    scatter_dims_to_operand_dims: Sequence[int], index_vector_dim: int,
                    input_batching_dims: Sequence[int] = (),
                    scatter_indices_batching_dims: Sequence[int] = ()) -> ir.Attribute:
    """`#stablehlo.scatter<...>`."""
    return attr(
        f"#stablehlo.scatter<update_window_dims = {_list(update_window_dims)}, "
        f"inserted_window_dims = {_list(inserted_window_dims)}, "
        + _batching("input_batching_dims", input_batching_dims, "scatter_indices_batching_dims",
                    scatter_indices_batching_dims)
        + f"scatter_dims_to_operand_dims = {_list(scatter_dims_to_operand_dims)}, "
          f"index_vector_dim = {index_vector_dim}>")


@builds("stablehlo.gather")
def gather(x: Value, indices: Value, *, offset_dims: Sequence[int], collapsed_slice_dims: Sequence[int],
           start_index_map: Sequence[int], index_vector_dim: int, slice_sizes: Sequence[int],
           operand_batching_dims: Sequence[int] = (), start_indices_batching_dims: Sequence[int] = ()) -> Value:
    sx, si = spec(x), spec(indices)
    batch = [n for d, n in enumerate(si.shape) if d != index_vector_dim]
    dropped = {*collapsed_slice_dims, *operand_batching_dims}
    offsets = [n for d, n in enumerate(slice_sizes) if d not in dropped]
    rank = len(batch) + len(offsets)
    shape, b, o = [], iter(batch), iter(offsets)
    for d in range(rank):
        shape.append(next(o) if d in offset_dims else next(b))
    numbers = attr(
        f"#stablehlo.gather<offset_dims = {_list(offset_dims)}, collapsed_slice_dims = {_list(collapsed_slice_dims)}, "
        + _batching("operand_batching_dims", operand_batching_dims, "start_indices_batching_dims",
                    start_indices_batching_dims)
        + f"start_index_map = {_list(start_index_map)}, index_vector_dim = {index_vector_dim}>")
    return _one("stablehlo.gather", sx.with_shape(shape), [x, indices], {
        "dimension_numbers": numbers, "slice_sizes": _i64s(slice_sizes),
        "indices_are_sorted": ir.BoolAttr.get(False)})


def _batching(operand_key: str, operand_dims: Sequence[int], indices_key: str, indices_dims: Sequence[int]) -> str:
    """The batching-dims fields of gather and scatter dimension numbers (none when unbatched)."""
    if not operand_dims:
        return ""
    return f"{operand_key} = {_list(operand_dims)}, {indices_key} = {_list(indices_dims)}, "


@builds("chlo.top_k")
def top_k(x: Value, k: int) -> tuple[Value, Value]:
    """The k largest elements along the last dim, in descending order, and their indices."""
    s = spec(x)
    shape = (*s.shape[:-1], k)
    op = create("chlo.top_k", [s.with_shape(shape), TensorSpec(shape, "i32")], [x], {"k": _i64(k)})
    return op.results[0], op.results[1]


@builds("stablehlo.sort")
def sort(operands: Sequence[Value], dimension: int, descending: bool, order_by: int | None = None) -> list[Value]:
    """Sorts all `operands` along `dimension`, keyed on the first (NaN last, as NumPy).

    IREE's sort is not stable even when asked to be; pass `order_by`, the position of an
    iota operand, to break ties by original position (the sort is then marked unstable: its
    order is total, and tenzr-sort-rows need not add an iota of its own).
    """
    specs = [spec(v) for v in operands]
    op = create("stablehlo.sort", specs, operands, {
        "dimension": _i64(dimension), "is_stable": ir.BoolAttr.get(order_by is None)}, regions=1)
    block = _scalar_block(op, [d for s in specs for d in (s.dtype, s.dtype)])
    with ir.InsertionPoint(block):
        lhs, rhs = block.arguments[0], block.arguments[1]
        first, second = (rhs, lhs) if descending else (lhs, rhs)
        before = _total_order_less(first, second)
        if order_by is not None:
            tie = not_(_total_order_less(second, first))
            earlier = compare(block.arguments[2 * order_by], block.arguments[2 * order_by + 1], "LT")
            before = or_(before, and_(tie, earlier))
        return_(before)
    return list(op.results)


@builds("stablehlo.sort")
def sort_with(operands: Sequence[Value], dimension: int, comparator: ir.Block, is_stable: bool = True) -> list[Value]:
    """A sort of `operands` along `dimension` whose comparator is `comparator`, a block
    moved here from another sort."""
    op = create("stablehlo.sort", [spec(v) for v in operands], operands, {
        "dimension": _i64(dimension), "is_stable": ir.BoolAttr.get(is_stable)}, regions=1)
    comparator.append_to(op.regions[0])
    return list(op.results)


def _total_order_less(a: Value, b: Value) -> Value:
    """a < b, with NaN sorted last (after +inf) for floats, as NumPy does."""
    s = spec(a)
    less = compare(a, b, "LT")
    if not s.is_float:
        return less
    a_is_number, b_is_nan = compare(a, a, "EQ"), compare(b, b, "NE")
    return or_(less, and_(b_is_nan, a_is_number))


# --------------------------------------------------------------------------- control flow


@builds("stablehlo.while")
def while_loop(operands: Sequence[Value], cond: Callable[[list[Value]], Value],
               body: Callable[[list[Value]], Sequence[Value]]) -> list[Value]:
    """`while cond(x): x = body(x)` from `operands`. The builders get the carried values as
    block arguments and use nothing else from outside (IREE is surest of loops without
    captured values: pass what the regions read as carries)."""
    specs = [spec(v) for v in operands]
    op = create("stablehlo.while", specs, operands, regions=2)
    for region, build in zip(op.regions, (lambda xs: [cond(xs)], body), strict=True):
        block = region.blocks.append(*[ir_type(s) for s in specs])
        with ir.InsertionPoint(block):
            return_(*build(list(block.arguments)))
    return list(op.results)


@builds("stablehlo.if")
def if_(pred: Value, results: Sequence[TensorSpec], then: Callable[[], Sequence[Value]],
        otherwise: Callable[[], Sequence[Value]]) -> list[Value]:
    """`then()` if `pred` (a tensor<i1>) else `otherwise()`."""
    op = create("stablehlo.if", results, [pred], regions=2)
    for region, build in zip(op.regions, (then, otherwise), strict=True):
        with ir.InsertionPoint(region.blocks.append()):
            return_(*build())
    return list(op.results)


@builds("stablehlo.case")
def case(index: Value, results: Sequence[TensorSpec], branches: Sequence[Callable[[], Sequence[Value]]]) -> list[Value]:
    """Runs branch `index` (clamped: out of range runs the last) and returns its results;
    the branches read what they need from outside."""
    op = create("stablehlo.case", results, [index], regions=len(branches))
    for region, build in zip(op.regions, branches, strict=True):
        with ir.InsertionPoint(region.blocks.append()):
            return_(*build())
    return list(op.results)


