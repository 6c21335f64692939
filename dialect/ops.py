"""The `tenzr` dialect: every op, declared once.

Each module-level `OpDef` is the op's definition and its builder:
`ops.add(x, y)` creates `tenzr.add` at the current insertion point. `OPS` maps op names
to definitions. Builders whose op name is a Python builtin carry a trailing underscore
(`abs_`, `pow_`, `round_`, `slice_`).

Contract (DESIGN section 3, widened): ranked static tensors of f16, bf16, f32, f64, i1,
i8, i16, i32, i64, ui8, ui16, ui32, ui64, complex<f32>, complex<f64>;
elementwise n-ary ops broadcast like NumPy; operand element types must match.
"""

from __future__ import annotations

from tenzr.dialect.context import terminator
from tenzr.dialect.opdef import (
    Attr,
    Axes,
    Axis,
    Bool,
    Elements,
    Int,
    Ints,
    Op,
    OpDef,
    PerDim,
    Str,
    fail,
)
from tenzr.dialect.types import (
    COMPLEX_TYPES,
    FLOAT_TYPES,
    INT_TYPES,
    ITEM_BYTES,
    TensorSpec,
    broadcast_shapes,
    complex_dtype,
    real_dtype,
    spec_of_type,
)

# --------------------------------------------------------------------------- shared rules


def _same_dtype(op: Op, specs: list[TensorSpec] | None = None) -> str:
    specs = op.specs if specs is None else specs
    dtypes = {s.dtype for s in specs}
    if len(dtypes) > 1:
        fail(f"operand element types {', '.join(s.dtype for s in specs)} differ "
             "(operand element types must match: no implicit promotion)")
    return specs[0].dtype


def _require_float(op: Op, dtype: str) -> None:
    if dtype not in FLOAT_TYPES:
        fail(f"takes floating-point tensors (f16, bf16, f32, f64), got {dtype}")


def _require_inexact(op: Op, dtype: str) -> None:
    if dtype not in FLOAT_TYPES and dtype not in COMPLEX_TYPES:
        fail(f"takes floating-point or complex tensors (f16, bf16, f32, f64, complex<f32>, complex<f64>), got {dtype}")


def _require_numeric(op: Op, dtype: str) -> None:
    if dtype == "i1":
        fail("takes numeric tensors, not i1")


def _require_real(op: Op, dtype: str) -> None:
    """Numeric and ordered: not i1, not complex."""
    _require_numeric(op, dtype)
    if dtype in COMPLEX_TYPES:
        fail(f"takes real tensors (complex numbers have no order), got {dtype}")


_REQUIRE = {"float": _require_float, "inexact": _require_inexact, "numeric": _require_numeric, "real": _require_real}
"""The element types an elementwise op takes: real floats; real or complex floats; any but
i1; any but i1 and complex."""


def _require_bits(op: Op, dtype: str, booleans: bool) -> None:
    if dtype not in INT_TYPES and not (booleans and dtype == "i1"):
        fail(f"takes integer tensors (i8 to i64, ui8 to ui64{', i1' if booleans else ''}), got {dtype}")


def _bits_rule(booleans: bool, arity: int):
    def rule(op: Op) -> TensorSpec:
        dtype = _same_dtype(op)
        _require_bits(op, dtype, booleans)
        return TensorSpec(_broadcast(op.specs), dtype) if arity == 2 else op.specs[0]

    return rule


def _bits(mnemonic: str, summary: str, booleans: bool = True, arity: int = 2) -> OpDef:
    return OpDef(mnemonic, summary, ("x", "y")[:arity], _bits_rule(booleans, arity), gradient="none",
                 elementwise=True)


def _require_index(spec: TensorSpec, what: str) -> None:
    if spec.dtype not in INT_TYPES:
        fail(f"{what} must be integers, got {spec.dtype}")


def _broadcast(specs: list[TensorSpec]) -> tuple[int, ...]:
    shape = broadcast_shapes(*(s.shape for s in specs))
    if shape is None:
        shapes = " and ".join(str(list(s.shape)) for s in specs)
        fail(f"operand shapes {shapes} do not broadcast (elementwise n-ary ops broadcast like NumPy)")
    return shape


def _check_length(op: Op, name: str, count: int, what: str = "the operand rank") -> tuple[int, ...]:
    value = op[name]
    if len(value) != count:
        fail(f"attribute '{name}' has {len(value)} entries, expected {count} ({what})")
    return value


def binary_rule(kind: str):
    def rule(op: Op) -> TensorSpec:
        dtype = _same_dtype(op)
        _REQUIRE[kind](op, dtype)
        return TensorSpec(_broadcast(op.specs), dtype)

    return rule


def unary_rule(kind: str):
    def rule(op: Op) -> TensorSpec:
        (x,) = op.specs
        if kind != "any":
            _REQUIRE[kind](op, x.dtype)
        return x

    return rule


def _binary(mnemonic: str, summary: str, kind: str = "numeric", transcendental: bool = False) -> OpDef:
    return OpDef(mnemonic, summary, ("x", "y"), binary_rule(kind), elementwise=True, transcendental=transcendental)


def _unary(mnemonic: str, summary: str, kind: str = "float", gradient: str = "rule",
           transcendental: bool = False) -> OpDef:
    return OpDef(mnemonic, summary, ("x",), unary_rule(kind), gradient=gradient, elementwise=True,
                 transcendental=transcendental)


# --------------------------------------------------------------------------- constants


def _constant_rule(op: Op) -> TensorSpec:
    spec = spec_of_type(op["value"].type)
    if spec is None:
        fail(f"value has type {op['value'].type}, not a static tensor of a tenzr element type")
    return spec


constant = OpDef("constant", "A constant tensor.", (), _constant_rule,
                 attrs=(Attr("value", Elements()),), gradient="none")

# --------------------------------------------------------------------------- elementwise

add = _binary("add", "x + y, broadcast.")
sub = _binary("sub", "x - y, broadcast.")
mul = _binary("mul", "x * y, broadcast.")
div = _binary("div", "x / y, broadcast (integer division truncates).")
pow_ = _binary("pow", "x ** y, broadcast.", transcendental=True)


def _part_rule(op: Op) -> TensorSpec:
    (x,) = op.specs
    if x.dtype not in COMPLEX_TYPES:
        fail(f"takes complex tensors (complex<f32>, complex<f64>), got {x.dtype}")
    return x.with_dtype(real_dtype(x.dtype))


real = OpDef("real", "The real part of a complex tensor.", ("x",), _part_rule, elementwise=True)
imag = OpDef("imag", "The imaginary part of a complex tensor.", ("x",), _part_rule, elementwise=True)


def _complex_rule(op: Op) -> TensorSpec:
    dtype = _same_dtype(op)
    if dtype not in ("f32", "f64"):
        fail(f"takes f32 or f64 parts, got {dtype}")
    return TensorSpec(_broadcast(op.specs), complex_dtype(dtype))


complex_ = OpDef("complex", "x + i·y from real parts x and y, broadcast.", ("x", "y"), _complex_rule,
                 elementwise=True)
atan2 = _binary("atan2", "atan2(y, x): the angle of the point (x, y), broadcast.", kind="float", transcendental=True)
rem = _binary("rem", "x - trunc(x/y)·y: the remainder with x's sign (C's fmod), broadcast.", kind="real")
maximum = _binary("maximum", "Elementwise maximum, broadcast.", kind="real")
minimum = _binary("minimum", "Elementwise minimum, broadcast.", kind="real")
nextafter = OpDef("nextafter", "The next float after x in the direction of y, broadcast (C's nextafter).",
                  ("x", "y"), binary_rule("float"), elementwise=True, gradient="none")


def _reduce_precision_rule(op: Op) -> TensorSpec:
    if op["exponent_bits"] < 1 or op["mantissa_bits"] < 0:
        fail(f"keeps {op['exponent_bits']} exponent and {op['mantissa_bits']} mantissa bits: it needs at least one "
             "exponent bit and no negative count")
    return unary_rule("float")(op)


reduce_precision = OpDef("reduce_precision", "x rounded to the nearest float with `exponent_bits` exponent and "
                         "`mantissa_bits` mantissa bits (ties to even; overflow gives infinity), kept in x's type.",
                         ("x",), _reduce_precision_rule, attrs=(Attr("exponent_bits", Int()),
                                                                Attr("mantissa_bits", Int())), elementwise=True)

DIRECTIONS = ("gt", "ge", "lt", "le", "eq", "ne")


def _compare_rule(op: Op) -> TensorSpec:
    if _same_dtype(op) in COMPLEX_TYPES and op["direction"] not in ("eq", "ne"):
        fail(f"direction '{op['direction']}' needs real operands (complex numbers compare only eq and ne)")
    return TensorSpec(_broadcast(op.specs), "i1")


compare = OpDef("compare", "Elementwise comparison giving i1, broadcast.", ("x", "y"), _compare_rule,
                attrs=(Attr("direction", Str(DIRECTIONS)),), gradient="none", elementwise=True)


def _select_rule(op: Op) -> TensorSpec:
    cond, a, b = op.specs
    if cond.dtype != "i1":
        fail(f"condition must be i1, got {cond.dtype}")
    dtype = _same_dtype(op, [a, b])
    return TensorSpec(_broadcast(op.specs), dtype)


select = OpDef("select", "cond ? a : b, broadcast over all three.", ("cond", "a", "b"), _select_rule, elementwise=True)

neg = _unary("neg", "-x.", kind="numeric")
exp = _unary("exp", "e^x.", kind="inexact", transcendental=True)
log = _unary("log", "Natural logarithm.", kind="inexact", transcendental=True)
sqrt = _unary("sqrt", "Square root.", kind="inexact", transcendental=True)
rsqrt = _unary("rsqrt", "1/sqrt(x).", kind="inexact", transcendental=True)
tanh = _unary("tanh", "Hyperbolic tangent.", kind="inexact", transcendental=True)
sigmoid = _unary("sigmoid", "Logistic function 1/(1+e^-x).", transcendental=True)
relu = _unary("relu", "max(x, 0).", kind="real")
sin = _unary("sin", "Sine.", kind="inexact", transcendental=True)
cos = _unary("cos", "Cosine.", kind="inexact", transcendental=True)


def _abs_rule(op: Op) -> TensorSpec:
    (x,) = op.specs
    _require_numeric(op, x.dtype)
    return x.with_dtype(real_dtype(x.dtype))


abs_ = OpDef("abs", "|x| (the modulus, a real tensor, for complex x).", ("x",), _abs_rule, elementwise=True)
log1p = _unary("log1p", "log(1 + x), accurate near 0.", kind="inexact", transcendental=True)
expm1 = _unary("expm1", "e^x - 1, accurate near 0.", kind="inexact", transcendental=True)
sign = _unary("sign", "-1, 0 or 1 (NaN stays NaN).", kind="real", gradient="none")
floor = _unary("floor", "Round toward -inf.", gradient="none")
ceil = _unary("ceil", "Round toward +inf.", gradient="none")
tan = _unary("tan", "Tangent.", kind="inexact", transcendental=True)
atan = _unary("atan", "Inverse tangent.", transcendental=True)
asin = _unary("asin", "Inverse sine.", transcendental=True)
acos = _unary("acos", "Inverse cosine.", transcendental=True)
sinh = _unary("sinh", "Hyperbolic sine.", transcendental=True)
cosh = _unary("cosh", "Hyperbolic cosine.", transcendental=True)
asinh = _unary("asinh", "Inverse hyperbolic sine.", transcendental=True)
acosh = _unary("acosh", "Inverse hyperbolic cosine.", transcendental=True)
atanh = _unary("atanh", "Inverse hyperbolic tangent.", transcendental=True)
erf = _unary("erf", "The error function.", transcendental=True)
erf_inv = _unary("erf_inv", "The inverse error function.", transcendental=True)
lgamma = _unary("lgamma", "log|Γ(x)|.", transcendental=True)
digamma = _unary("digamma", "d/dx log Γ(x).", transcendental=True)
round_ = _unary("round", "Round half to even, as NumPy.", gradient="none")
stop_gradient = _unary("stop_gradient", "Identity forward; blocks the gradient.", kind="any",
                       gradient="none")


# --------------------------------------------------------------------------- bits

bitwise_and = _bits("bitwise_and", "x & y on integers or booleans, broadcast.")
bitwise_or = _bits("bitwise_or", "x | y on integers or booleans, broadcast.")
bitwise_xor = _bits("bitwise_xor", "x ^ y on integers or booleans, broadcast.")
bitwise_not = _bits("bitwise_not", "~x on integers or booleans.", arity=1)
shift_left = _bits("shift_left", "x << y, broadcast; shifts of the bit width or more give 0.", booleans=False)
shift_right_logical = _bits("shift_right_logical", "x >> y filling with zeros (as unsigned), broadcast.",
                            booleans=False)
shift_right_arithmetic = _bits("shift_right_arithmetic", "x >> y keeping the sign (NumPy's >> on signed ints), "
                               "broadcast.", booleans=False)
population_count = _bits("population_count", "The number of bits set in each integer.", booleans=False, arity=1)
clz = _bits("clz", "The number of leading zero bits of each integer.", booleans=False, arity=1)


def _bitcast_rule(op: Op) -> TensorSpec:
    (x,), (out,) = op.specs, op.given
    if (out.shape != x.shape or ITEM_BYTES[out.dtype] != ITEM_BYTES[x.dtype]
            or {"i1", *COMPLEX_TYPES} & {x.dtype, out.dtype}):
        fail(f"reinterprets {x} as {out}: the shapes must be equal and the element types of one bit width (not i1, "
             "not complex)")
    return out


bitcast_convert = OpDef("bitcast_convert", "Reinterprets the bits as another element type of the same width; the "
                        "result type names it.", ("x",), _bitcast_rule, given_result=True, elementwise=True,
                        gradient="none")


def _convert_rule(op: Op) -> TensorSpec:
    (x,), (out,) = op.specs, op.given
    if out.shape != x.shape:
        fail(f"result shape {list(out.shape)} must equal the operand shape {list(x.shape)}")
    return out


convert = OpDef("convert", "Converts the element type; the result type names the new one. A real float becomes an "
                "integer saturating, NaN 0 (as JAX's).", ("x",),
                _convert_rule, given_result=True, elementwise=True)

# --------------------------------------------------------------------------- linear algebra


def _matmul_rule(op: Op) -> TensorSpec:
    a, b = op.specs
    dtype = _same_dtype(op)
    _require_numeric(op, dtype)
    if a.rank < 2 or b.rank < 2:
        fail(f"operands must have rank >= 2, got ranks {a.rank} and {b.rank}")
    if a.shape[-1] != b.shape[-2]:
        fail(f"contracting dimensions differ: a is [..., {a.shape[-2]}, {a.shape[-1]}], "
             f"b is [..., {b.shape[-2]}, {b.shape[-1]}] (a [..., M, K] @ b [..., K, N])")
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if batch is None:
        fail(f"batch dimensions {list(a.shape[:-2])} and {list(b.shape[:-2])} do not broadcast")
    return TensorSpec((*batch, a.shape[-2], b.shape[-1]), dtype)


matmul = OpDef("matmul", "a [..., M, K] @ b [..., K, N] -> [..., M, N]; batch dims broadcast.", ("a", "b"),
               _matmul_rule)

CONV_ATTRS = ("window_strides", "padding_low", "padding_high", "lhs_dilation", "rhs_dilation")


def _conv_rule(op: Op) -> TensorSpec:
    x, w = op.specs
    dtype = _same_dtype(op)
    _require_float(op, dtype)
    n = x.rank - 2
    if n not in (1, 2, 3) or w.rank != x.rank:
        fail(f"input and kernel must both have rank 3, 4 or 5 (1-3 spatial dims), got {x.rank} and {w.rank}")
    for name in CONV_ATTRS:
        _check_length(op, name, n, "the number of spatial dims")
    groups = op["feature_group_count"]
    if groups < 1:
        fail(f"feature_group_count must be >= 1, got {groups}")
    channels, out_features = x.shape[1], w.shape[0]
    if channels % groups or out_features % groups:
        fail(f"feature_group_count {groups} must divide input channels {channels} and kernel output "
             f"features {out_features}")
    if w.shape[1] * groups != channels:
        fail(f"kernel input features {w.shape[1]} times feature_group_count {groups} must equal input "
             f"channels {channels} (kernel [O, C/groups, spatial...])")
    if any(s < 1 for s in op["window_strides"]) or any(d < 1 for a in ("lhs_dilation", "rhs_dilation")
                                                       for d in op[a]):
        fail("window_strides, lhs_dilation and rhs_dilation must be >= 1")
    spatial = []
    for d in range(n):
        size = (x.shape[2 + d] - 1) * op["lhs_dilation"][d] + 1 + op["padding_low"][d] + op["padding_high"][d]
        window = (w.shape[2 + d] - 1) * op["rhs_dilation"][d] + 1
        if size < window:
            fail(f"spatial dim {d}: the dilated kernel ({window}) is larger than the padded input ({size})")
        spatial.append((size - window) // op["window_strides"][d] + 1)
    return TensorSpec((x.shape[0], out_features, *spatial), dtype)


convolution = OpDef(
    "convolution",
    "N-d convolution, input [N, C, spatial...] with kernel [O, C/groups, spatial...] -> [N, O, spatial...].",
    ("input", "kernel"),
    _conv_rule,
    attrs=(
        Attr("window_strides", Ints(), PerDim(1, skip=2)),
        Attr("padding_low", Ints(), PerDim(0, skip=2)),
        Attr("padding_high", Ints(), PerDim(0, skip=2)),
        Attr("lhs_dilation", Ints(), PerDim(1, skip=2)),
        Attr("rhs_dilation", Ints(), PerDim(1, skip=2)),
        Attr("feature_group_count", Int(), 1),
    ),
)

# --------------------------------------------------------------------------- shape ops


def _reshape_rule(op: Op) -> TensorSpec:
    (x,), (out,) = op.specs, op.given
    if out.dtype != x.dtype:
        fail(f"result element type {out.dtype} must equal the operand's {x.dtype}")
    if out.size != x.size:
        fail(f"result shape {list(out.shape)} has {out.size} elements, operand {list(x.shape)} has {x.size}")
    return out


reshape = OpDef("reshape", "Same elements, new shape (the result type).", ("x",), _reshape_rule,
                given_result=True)


def _transpose_rule(op: Op) -> TensorSpec:
    (x,) = op.specs
    perm = _check_length(op, "permutation", x.rank)
    if sorted(perm) != list(range(x.rank)):
        fail(f"permutation {list(perm)} is not a permutation of 0..{x.rank - 1}")
    return x.with_shape(x.shape[p] for p in perm)


transpose = OpDef("transpose", "Permutes dimensions: result dim i is operand dim permutation[i].", ("x",),
                  _transpose_rule, attrs=(Attr("permutation", Ints()),))


def _broadcast_to_rule(op: Op) -> TensorSpec:
    (x,), (out,) = op.specs, op.given
    if out.dtype != x.dtype:
        fail(f"result element type {out.dtype} must equal the operand's {x.dtype}")
    if out.rank < x.rank or broadcast_shapes(x.shape, out.shape) != out.shape:
        fail(f"operand shape {list(x.shape)} does not broadcast to {list(out.shape)} (NumPy rules)")
    return out


broadcast_to = OpDef("broadcast_to", "NumPy broadcast to the result shape.", ("x",), _broadcast_to_rule,
                     given_result=True)


def _pad_rule(op: Op) -> TensorSpec:
    x, value = op.specs
    dtype = _same_dtype(op)
    if value.rank != 0:
        fail(f"pad_value must be rank 0, got shape {list(value.shape)}")
    low, high = _check_length(op, "low", x.rank), _check_length(op, "high", x.rank)
    interior = _check_length(op, "interior", x.rank)
    if any(i < 0 for i in interior):
        fail(f"interior padding {list(interior)} must be >= 0")
    shape = [lo + hi + d + max(d - 1, 0) * i for d, lo, hi, i in zip(x.shape, low, high, interior, strict=True)]
    if any(d < 0 for d in shape):
        fail(f"negative padding removes more than the dimension holds (result {shape})")
    return TensorSpec(tuple(shape), dtype)


pad = OpDef("pad", "Pads with pad_value: `low`/`high` at the edges (negative crops), `interior` between.",
            ("x", "pad_value"), _pad_rule,
            attrs=(Attr("low", Ints()), Attr("high", Ints()), Attr("interior", Ints(), PerDim(0))))


def _slice_rule(op: Op) -> TensorSpec:
    (x,) = op.specs
    start, stop = _check_length(op, "start", x.rank), _check_length(op, "stop", x.rank)
    step = _check_length(op, "step", x.rank)
    shape = []
    for axis, (b, e, s, d) in enumerate(zip(start, stop, step, x.shape, strict=True)):
        if s < 1:
            fail(f"step {s} on axis {axis} must be >= 1")
        if not 0 <= b <= e <= d:
            fail(f"slice [{b}:{e}] on axis {axis} is out of range for size {d} (0 <= start <= stop <= size)")
        shape.append(-(-(e - b) // s))
    return x.with_shape(shape)


slice_ = OpDef("slice", "Strided slice x[start:stop:step] per dim.", ("x",), _slice_rule,
               attrs=(Attr("start", Ints()), Attr("stop", Ints()), Attr("step", Ints(), PerDim(1))))


def _reverse_rule(op: Op) -> TensorSpec:
    return op.specs[0]


reverse = OpDef("reverse", "Reverses along `dimensions`.", ("x",), _reverse_rule,
                attrs=(Attr("dimensions", Axes()),))


def _concatenate_rule(op: Op) -> TensorSpec:
    if not op.specs:
        fail("expects at least one operand")
    dtype = _same_dtype(op)
    first, axis = op.specs[0], op["axis"]
    total = 0
    for i, s in enumerate(op.specs):
        if s.rank != first.rank or any(a != b for d, (a, b) in enumerate(zip(s.shape, first.shape, strict=True))
                                       if d != axis):
            fail(f"operand #{i} shape {list(s.shape)} differs from {list(first.shape)} off axis {axis}")
        total += s.shape[axis]
    return TensorSpec(tuple(total if d == axis else n for d, n in enumerate(first.shape)), dtype)


concatenate = OpDef("concatenate", "Joins operands along `axis`.", ("x...",), _concatenate_rule,
                    attrs=(Attr("axis", Axis()),))

# --------------------------------------------------------------------------- indexing


def _gather_rule(op: Op) -> TensorSpec:
    x, indices = op.specs
    _require_index(indices, "indices")
    if indices.rank != 1:
        fail(f"indices must be rank 1 [K], got shape {list(indices.shape)}")
    axis = op["axis"]
    if x.shape[axis] == 0 and indices.shape[0]:
        fail(f"cannot gather {indices.shape[0]} slices from axis {axis}, which is empty")
    return x.with_shape(indices.shape[0] if d == axis else n for d, n in enumerate(x.shape))


gather = OpDef("gather", "take(x, indices, axis): dim `axis` becomes K. Negative indices count from the end; "
               "out-of-range ones clamp.", ("x", "indices"), _gather_rule, attrs=(Attr("axis", Axis()),))


def _take_along_axis_rule(op: Op) -> TensorSpec:
    x, indices = op.specs
    _require_index(indices, "indices")
    axis = op["axis"]
    if indices.rank != x.rank:
        fail(f"indices rank {indices.rank} must equal x's rank {x.rank}")
    for d, (a, b) in enumerate(zip(x.shape, indices.shape, strict=True)):
        if d != axis and a != b:
            fail(f"indices dim {d} is {b}, x's is {a}: only dim `axis` may differ")
    if x.shape[axis] == 0 and indices.size:
        fail(f"cannot take elements from axis {axis}, which is empty")
    return x.with_shape(indices.shape)


take_along_axis = OpDef("take_along_axis", "NumPy take_along_axis.", ("x", "indices"), _take_along_axis_rule,
                        attrs=(Attr("axis", Axis()),))

SCATTER_MODES = ("set", "add", "multiply", "min", "max")


def _scatter_rule(op: Op) -> TensorSpec:
    x, indices, updates = op.specs
    _require_index(indices, "indices")
    if indices.rank != 1:
        fail(f"indices must be rank 1 [K], got shape {list(indices.shape)}")
    dtype = _same_dtype(op, [x, updates])
    axis = op["axis"]
    want = tuple(indices.shape[0] if d == axis else n for d, n in enumerate(x.shape))
    if updates.shape != want:
        fail(f"updates shape {list(updates.shape)} must be {list(want)} (x's shape with dim {axis} = K)")
    return TensorSpec(x.shape, dtype)


scatter = OpDef(
    "scatter",
    "x with the slices at `indices` along `axis` combined with `updates` by `mode`; duplicates combine by mode, "
    "\"set\" keeps the last. Negative indices count from the end; out-of-range ones are dropped.",
    ("x", "indices", "updates"), _scatter_rule,
    attrs=(Attr("axis", Axis()), Attr("mode", Str(SCATTER_MODES))),
)


def _check_starts(starts: list[TensorSpec], rank: int) -> None:
    if len(starts) != rank:
        fail(f"expects {rank} start indices (one per dim), got {len(starts)}")
    for i, s in enumerate(starts):
        if s.rank != 0:
            fail(f"start #{i} must be a rank-0 integer tensor, got shape {list(s.shape)}")
        _require_index(s, f"start #{i}")


def _dynamic_slice_rule(op: Op) -> TensorSpec:
    x, *starts = op.specs
    _check_starts(starts, x.rank)
    sizes = _check_length(op, "sizes", x.rank)
    for d, (size, n) in enumerate(zip(sizes, x.shape, strict=True)):
        if not 0 <= size <= n:
            fail(f"size {size} on dim {d} must lie in [0, {n}]")
    return x.with_shape(sizes)


dynamic_slice = OpDef("dynamic_slice", "Slice of `sizes` at runtime starts, clamped into range.",
                      ("x", "start..."), _dynamic_slice_rule, attrs=(Attr("sizes", Ints()),))


def _dynamic_update_slice_rule(op: Op) -> TensorSpec:
    x, update, *starts = op.specs
    dtype = _same_dtype(op, [x, update])
    if update.rank != x.rank or any(u > n for u, n in zip(update.shape, x.shape, strict=True)):
        fail(f"update shape {list(update.shape)} must have x's rank and fit in {list(x.shape)}")
    _check_starts(starts, x.rank)
    return TensorSpec(x.shape, dtype)


dynamic_update_slice = OpDef("dynamic_update_slice", "x with `update` written at runtime starts, clamped.",
                             ("x", "update", "start..."), _dynamic_update_slice_rule)

# --------------------------------------------------------------------------- reductions


def reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    """`shape` reduced over `axes` (all when empty)."""
    axes = axes or tuple(range(len(shape)))
    if keepdims:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in axes)


def _reduce_rule(kind: str):
    def rule(op: Op) -> TensorSpec:
        (x,) = op.specs
        _REQUIRE[kind](op, x.dtype)
        return x.with_shape(reduced_shape(x.shape, op["axes"], op["keepdims"]))

    return rule


def _reduction(mnemonic: str, summary: str, adjoint: str, kind: str = "numeric") -> OpDef:
    return OpDef(mnemonic, summary + " Empty `axes` reduces all.", ("x",), _reduce_rule(kind),
                 attrs=(Attr("axes", Axes(), ()), Attr("keepdims", Bool(), False)))


reduce_sum = _reduction("reduce_sum", "Sum over `axes`.", "x̄ = broadcast(ȳ)")
reduce_prod = _reduction("reduce_prod", "Product over `axes`.",
                         "x̄ = ȳ·(product of the other elements), exact with zeros")
reduce_max = _reduction("reduce_max", "Maximum over `axes`.", "ȳ split evenly among the elements equal to the max",
                        kind="real")
reduce_min = _reduction("reduce_min", "Minimum over `axes`.", "ȳ split evenly among the elements equal to the min",
                        kind="real")


def _arg_rule(op: Op) -> TensorSpec:
    (x,) = op.specs
    _require_real(op, x.dtype)
    return TensorSpec(reduced_shape(x.shape, (op["axis"],), False), "i64")


argmax = OpDef("argmax", "i64 index of the first maximum along `axis`.", ("x",), _arg_rule,
               attrs=(Attr("axis", Axis()),), gradient="none")
argmin = OpDef("argmin", "i64 index of the first minimum along `axis`.", ("x",), _arg_rule,
               attrs=(Attr("axis", Axis()),), gradient="none")


def _sort_rule(op: Op) -> TensorSpec:
    if op.specs[0].dtype in COMPLEX_TYPES:
        fail("takes real tensors (complex numbers have no order)")
    return op.specs[0]


def _argsort_rule(op: Op) -> TensorSpec:
    return _sort_rule(op).with_dtype("i64")


SORT_ATTRS = (Attr("axis", Axis(), -1), Attr("descending", Bool(), False))
sort = OpDef("sort", "Stable sort along `axis`.", ("x",), _sort_rule, attrs=SORT_ATTRS)
argsort = OpDef("argsort", "i64 permutation that stably sorts along `axis`.", ("x",), _argsort_rule,
                attrs=SORT_ATTRS, gradient="none")


def _iota_rule(op: Op) -> TensorSpec:
    (out,) = op.given
    if not 0 <= op["dimension"] < out.rank:
        fail(f"dimension {op['dimension']} is out of range for rank {out.rank}")
    return out


iota = OpDef("iota", "Counts 0, 1, ... along `dimension` of the result type.", (), _iota_rule,
             attrs=(Attr("dimension", Int()),), given_result=True, gradient="none")


def _custom_call_rule(op: Op) -> list[TensorSpec]:
    return list(op.given)


custom_call = OpDef("custom_call", "A user op; its lowering and VJP come from the custom-op registry.",
                    ("x...",), _custom_call_rule, attrs=(Attr("call_target_name", Str()),),
                    given_result=True, open_attrs=True)



def _debug_print_rule(op: Op) -> list[TensorSpec]:
    return []


debug_print = OpDef("debug_print", "Prints its operands when the program runs (`tz.debug.print`), as `key` (a "
                    "JSON format and layout) says.", ("x...",), _debug_print_rule, attrs=(Attr("key", Str()),),
                    gradient="none")

# --------------------------------------------------------------------------- control flow
# Region ops with StableHLO's semantics (stablehlo.while, stablehlo.case). Their regions
# take their inputs as block arguments and end with `tenzr.yield`; they may also use values
# from outside, as StableHLO's regions may.


def _region_block(op: Op, index: int, arguments: list[TensorSpec], what: str) -> list[TensorSpec]:
    """The types region `index` yields, after checking it has one block taking `arguments`
    and ending with tenzr.yield."""
    assert op.operation is not None
    blocks = op.operation.regions[index].blocks
    if len(blocks) != 1:
        fail(f"{what} (region #{index}) must have one block, got {len(blocks)}")
    block = blocks[0]
    got = [spec_of_type(a.type) for a in block.arguments]
    if got != arguments:
        def listed(specs: list) -> str:
            return "(" + ", ".join(str(s) for s in specs) + ")"

        fail(f"{what} (region #{index}) must take {listed(arguments)}, got {listed(got)}")
    last = terminator(block)
    if last is None or last.name != yield_.name:
        fail(f"{what} (region #{index}) must end with '{yield_.name}'")
    return [spec_of_type(v.type) for v in last.operands]  # type: ignore[misc]


def _while_rule(op: Op) -> list[TensorSpec]:
    carried = list(op.specs)
    if op.operation is None or len(op.operation.regions) != 2:
        fail("must have two regions (cond, body)")
    if _region_block(op, 0, carried, "cond") != [TensorSpec((), "i1")]:
        fail("cond (region #0) must yield one tensor<i1>")
    yielded = _region_block(op, 1, carried, "body")
    if yielded != carried:
        fail(f"body (region #1) must yield the carried types ({', '.join(map(str, carried))}), got "
             f"({', '.join(map(str, yielded))})")
    return carried


while_ = OpDef("while", "`while cond(x): x = body(x)` from the operands; the result is the last x "
               "(stablehlo.while). Regions: cond (x...) -> i1, body (x...) -> x....",
               ("init...",), _while_rule, regions=2)


def _case_rule(op: Op) -> list[TensorSpec]:
    if not op.specs or op.specs[0] != TensorSpec((), "i32"):
        fail(f"index (operand #0) must be tensor<i32>, got {op.specs[0] if op.specs else 'none'}")
    assert op.operation is not None
    count = len(op.operation.regions)
    if count < 1:
        fail("must have at least one branch region")
    inputs = list(op.specs[1:])
    first = _region_block(op, 0, inputs, "branch 0")
    for i in range(1, count):
        got = _region_block(op, i, inputs, f"branch {i}")
        if got != first:
            fail(f"branch {i} yields ({', '.join(map(str, got))}), but branch 0 yields "
                 f"({', '.join(map(str, first))}): every branch must yield the same types")
    return first


case = OpDef("case", "Runs branch `index` on the other operands (an index out of range runs the last, "
             "as stablehlo.case) and returns what it yields. Each region takes the operands after the "
             "index.", ("index", "operands..."), _case_rule, regions=-1)


def _yield_rule(op: Op) -> list[TensorSpec]:
    assert op.operation is not None
    parent = op.operation.parent
    if parent is None or parent.name not in (while_.name, case.name):
        fail(f"ends a region of '{while_.name}' or '{case.name}', not of '{parent.name if parent else 'nothing'}'")
    return []


yield_ = OpDef("yield", "Ends a region of tenzr.while or tenzr.case with the values it yields.", ("values...",),
               _yield_rule, gradient="none", terminator=True)

# --------------------------------------------------------------------------- the table

OPS: dict[str, OpDef] = {d.name: d for d in globals().values() if isinstance(d, OpDef)}

