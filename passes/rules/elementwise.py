"""Elementwise ops: lowerings and VJP rules, for tenzr ops and their StableHLO twins.

A tenzr op broadcasts like NumPy; its lowering makes that explicit (`broadcast_operands`),
and its rule may return cotangents of the broadcast shape (the driver sums them back).
StableHLO operands already have the result's shape, so the same rule serves both.
"""

from __future__ import annotations

from collections.abc import Callable

from tenzr.dialect import ops as T
from tenzr.dialect.ir_imports import Value
from tenzr.dialect.opdef import Op, OpDef
from tenzr.dialect.types import INT_TYPES, UNSIGNED_TYPES, numpy_dtype, saturation
from tenzr.passes import stablehlo as sh
from tenzr.passes.rules import Cotangents, Lowering, Tangents, bilinear, jvp, linear, lowers, no_derivative, vjp


def broadcast_operands(op: Op) -> list[Value]:
    """The operands, each broadcast (NumPy rules) to the result shape."""
    shape = op.result.shape
    return [v if s.shape == shape else sh.broadcast_to(v, shape) for v, s in zip(op.operands, op.specs, strict=True)]


def broadcast_operand(op: Op, index: int) -> Value:
    """Operand `index` broadcast to the result shape (for a rule that reads only that one)."""
    value, shape = op.operands[index], op.result.shape
    return value if op.specs[index].shape == shape else sh.broadcast_to(value, shape)


def _scalar(value: float, like: Value) -> Value:
    return sh.full(sh.spec(like), value)


# --------------------------------------------------------------------------- lowerings

_ONE_TO_ONE: dict[OpDef, Callable[..., Value]] = {
    T.add: sh.add, T.sub: sh.subtract, T.mul: sh.multiply, T.div: sh.divide, T.pow_: sh.power,
    T.maximum: sh.maximum, T.minimum: sh.minimum, T.select: sh.select, T.neg: sh.negate, T.exp: sh.exponential,
    T.log: sh.log, T.sqrt: sh.sqrt, T.rsqrt: sh.rsqrt, T.tanh: sh.tanh, T.sigmoid: sh.logistic,
    T.sin: sh.sine, T.cos: sh.cosine, T.real: sh.real, T.imag: sh.imag, T.complex_: sh.complex_,
    T.log1p: sh.log_plus_one,
    T.expm1: sh.exponential_minus_one, T.floor: sh.floor, T.round_: sh.round_nearest_even,
    T.ceil: sh.ceil, T.tan: sh.tan, T.atan2: sh.atan2, T.rem: sh.remainder, T.atan: sh.atan, T.asin: sh.asin,
    T.acos: sh.acos, T.sinh: sh.sinh, T.cosh: sh.cosh, T.asinh: sh.asinh, T.acosh: sh.acosh, T.atanh: sh.atanh,
    T.erf: sh.erf, T.erf_inv: sh.erf_inv, T.lgamma: sh.lgamma, T.digamma: sh.digamma, T.bitwise_and: sh.and_,
    T.bitwise_or: sh.or_, T.bitwise_xor: sh.xor, T.bitwise_not: sh.not_, T.shift_left: sh.shift_left,
    T.shift_right_logical: sh.shift_right_logical, T.shift_right_arithmetic: sh.shift_right_arithmetic,
    T.population_count: sh.popcnt, T.clz: sh.count_leading_zeros, T.nextafter: sh.next_after,
}
"""tenzr ops that lower to one StableHLO op on broadcast operands (tenzr-expand-math later
rewrites those IREE gets wrong)."""


def _on_broadcast_operands(emit: Callable[..., Value]) -> Lowering:
    return lambda op: emit(*broadcast_operands(op))


for _opdef, _emit in _ONE_TO_ONE.items():
    lowers(_opdef)(_on_broadcast_operands(_emit))


@lowers(T.abs_)
def _lower_abs(op: Op) -> Value:
    """StableHLO's abs takes no unsigned integers: they are their own."""
    x = op.operands[0]
    return x if sh.spec(x).dtype in UNSIGNED_TYPES else sh.abs_(x)


@lowers(T.sign)
def _lower_sign(op: Op) -> Value:
    """StableHLO's sign takes no unsigned integers: theirs is min(x, 1)."""
    x = op.operands[0]
    return sh.minimum(x, _scalar(1, x)) if sh.spec(x).dtype in UNSIGNED_TYPES else sh.sign(x)


@lowers(T.compare)
def _lower_compare(op: Op) -> Value:
    x, y = broadcast_operands(op)
    return sh.compare(x, y, op["direction"])


@lowers(T.relu)
def _lower_relu(op: Op) -> Value:
    return sh.maximum(op.operands[0], sh.zeros(op.result))


@lowers(T.stop_gradient)
def _lower_stop_gradient(op: Op) -> Value:
    return op.operands[0]


@lowers(T.convert)
def _lower_convert(op: Op) -> Value:
    """A real float becomes an integer saturating, NaN 0 (as JAX's; StableHLO leaves values
    out of range undefined, and IREE gave the type's minimum for NaN and 1e10 alike)."""
    x, dtype = op.operands[0], op.result.dtype
    s = sh.spec(x)
    if not s.is_float or dtype not in INT_TYPES:
        return sh.convert(x, dtype)
    bounds = saturation(numpy_dtype(s.dtype), numpy_dtype(dtype))
    ints = s.with_dtype(dtype)
    # (max and min, not a clamp with scalar bounds: tenzr-fuse-elementwise fuses them with the rest)
    inside = sh.convert(sh.minimum(sh.maximum(x, sh.full(s, bounds.low)), sh.full(s, bounds.top)), dtype)
    out = sh.select(sh.compare(x, sh.full(s, bounds.past), "GE"), sh.full(ints, bounds.maximum), inside)
    out = sh.select(sh.compare(x, sh.full(s, bounds.floor), "LE"), sh.full(ints, bounds.minimum), out)
    return sh.select(sh.compare(x, x, "NE"), sh.zeros(ints), out)


@lowers(T.bitcast_convert)
def _lower_bitcast_convert(op: Op) -> Value:
    return sh.bitcast_convert(op.operands[0], op.result.dtype)


@lowers(T.constant)
def _lower_constant(op: Op) -> Value:
    return sh.constant_attribute(op["value"])


# --------------------------------------------------------------------------- VJP rules


@vjp(T.add, sh.add, adjoint="x̄ = ȳ, ȳ' = ȳ")
def _add(op: Op, ct: Value) -> Cotangents:
    return ct, ct


linear(T.add, sh.add)


@vjp(T.sub, sh.subtract, adjoint="x̄ = ȳ, ȳ' = -ȳ")
def _sub(op: Op, ct: Value) -> Cotangents:
    return ct, sh.negate(ct) if op.wants(1) else None


linear(T.sub, sh.subtract)


@vjp(T.mul, sh.multiply, adjoint="x̄ = ȳ·y, ȳ' = ȳ·x")
def _mul(op: Op, ct: Value) -> Cotangents:
    x, y = op.operands
    shape = op.result.shape
    return (sh.multiply(ct, sh.broadcast_to(y, shape)) if op.wants(0) else None,
            sh.multiply(ct, sh.broadcast_to(x, shape)) if op.wants(1) else None)


bilinear(T.mul, sh.multiply)


@vjp(T.div, sh.divide, adjoint="x̄ = ȳ/y, ȳ' = -ȳ·out/y")
def _div(op: Op, ct: Value) -> Cotangents:
    y = broadcast_operand(op, 1)
    dy = sh.negate(sh.divide(sh.multiply(ct, op.out), y)) if op.wants(1) else None
    return sh.divide(ct, y), dy


@vjp(T.pow_, sh.power, adjoint="x̄ = ȳ·y·x^(y-1) (0 where y = 0), ȳ' = ȳ·log(x)·out with log(0) read as 0: at "
     "x = 0 that is 0 for y ≥ 0 and NaN (0·∞) for y < 0, as in JAX")
def _pow(op: Op, ct: Value) -> Cotangents:
    x = broadcast_operand(op, 0)
    zero = sh.zeros(sh.spec(ct))
    dx = dy = None
    if op.wants(0):  # y·x^(y-1), 0 where y = 0: the exponent is 1 there (so 0^-1 never appears, nor in the
        # derivative of this, where a select would pass it a zero cotangent times infinity)
        y = broadcast_operand(op, 1)
        exponent = sh.select(sh.compare(y, zero, "EQ"), _scalar(1, y), sh.subtract(y, _scalar(1, y)))
        dx = sh.multiply(ct, sh.multiply(y, sh.power(x, exponent)))
    if op.wants(1):  # log(x)·x^y, with log(0) read as 0
        safe_x = sh.select(sh.compare(x, zero, "EQ"), _scalar(1, x), x)
        dy = sh.multiply(ct, sh.multiply(sh.log(safe_x), op.out))
    return dx, dy


def _extremum(direction: str, op: Op, ct: Value) -> Cotangents:
    x, y = broadcast_operands(op)
    half, zero = _scalar(0.5, ct), sh.zeros(sh.spec(ct))
    wins = sh.select(sh.compare(x, y, direction), _scalar(1, ct), sh.select(sh.compare(x, y, "EQ"), half, zero))
    dx = sh.multiply(ct, wins)
    return dx, sh.subtract(ct, dx)


@vjp(T.maximum, sh.maximum, adjoint="ȳ to the larger operand; ties split ȳ/2 each (as JAX)")
def _maximum(op: Op, ct: Value) -> Cotangents:
    return _extremum("GT", op, ct)


@vjp(T.minimum, sh.minimum, adjoint="ȳ to the smaller operand; ties split ȳ/2 each (as JAX)")
def _minimum(op: Op, ct: Value) -> Cotangents:
    return _extremum("LT", op, ct)


@vjp(T.select, sh.select, adjoint="ā = select(cond, ȳ, 0), b̄ = select(cond, 0, ȳ); cond gets none")
def _select(op: Op, ct: Value) -> Cotangents:
    cond = sh.broadcast_to(op.operands[0], op.result.shape)
    zero = sh.zeros(sh.spec(ct))
    return (None, sh.select(cond, ct, zero) if op.wants(1) else None,
            sh.select(cond, zero, ct) if op.wants(2) else None)


linear(T.select, sh.select)


@vjp(sh.clamp, adjoint="as JAX: x̄ = ȳ where low < x < high; low gets ȳ where x < low < high, high where "
     "high < x; ties give 0")
def _clamp(op: Op, ct: Value) -> Cotangents:
    low, x, high = (sh.broadcast_to(v, op.result.shape) for v in op.operands)
    zero = sh.zeros(sh.spec(ct))
    below, above = sh.compare(x, low, "LT"), sh.compare(high, x, "LT")
    inside = sh.and_(sh.compare(x, low, "GT"), sh.compare(x, high, "LT"))
    return (sh.select(sh.and_(below, sh.compare(low, high, "LT")), ct, zero), sh.select(inside, ct, zero),
            sh.select(above, ct, zero))


@vjp(T.neg, sh.negate, adjoint="x̄ = -ȳ")
def _neg(op: Op, ct: Value) -> Cotangents:
    return (sh.negate(ct),)


linear(T.neg, sh.negate)


@vjp(T.exp, sh.exponential, adjoint="x̄ = ȳ·out")
def _exp(op: Op, ct: Value) -> Cotangents:
    return (sh.multiply(ct, op.out),)


@vjp(T.log, sh.log, adjoint="x̄ = ȳ/x")
def _log(op: Op, ct: Value) -> Cotangents:
    return (sh.divide(ct, op.operands[0]),)


@vjp(T.sqrt, sh.sqrt, adjoint="x̄ = ȳ·0.5/out")
def _sqrt(op: Op, ct: Value) -> Cotangents:
    return (sh.divide(sh.multiply(ct, _scalar(0.5, ct)), op.out),)


@vjp(T.rsqrt, sh.rsqrt, adjoint="x̄ = -0.5·ȳ·out/x")
def _rsqrt(op: Op, ct: Value) -> Cotangents:
    return (sh.divide(sh.multiply(ct, sh.multiply(_scalar(-0.5, ct), op.out)), op.operands[0]),)


@vjp(T.tanh, sh.tanh, adjoint="x̄ = ȳ·sech²(x), computed as 4e/(1 + e)² with e = exp(-2|x|) (1 - out² for "
     "complex x)")
def _tanh(op: Op, ct: Value) -> Cotangents:
    """1 - out² would give exactly 0 where tanh rounds to ±1 (|x| > 8 in float32)
    instead of the true small slope."""
    if op.specs[0].is_complex:
        return (sh.multiply(ct, sh.subtract(_scalar(1, ct), sh.multiply(op.out, op.out))),)
    e = sh.exponential(sh.multiply(_scalar(-2, ct), sh.abs_(op.operands[0])))
    one_plus = sh.add(_scalar(1, ct), e)
    sech2 = sh.divide(sh.multiply(_scalar(4, ct), e), sh.multiply(one_plus, one_plus))
    return (sh.multiply(ct, sech2),)


@vjp(T.sigmoid, sh.logistic, adjoint="x̄ = ȳ·σ(x)·σ(-x)")
def _sigmoid(op: Op, ct: Value) -> Cotangents:
    """1 - σ(x) would round to 0 for large x."""
    return (sh.multiply(ct, sh.multiply(op.out, sh.logistic(sh.negate(op.operands[0])))),)


@vjp(T.relu, adjoint="x̄ = ȳ where x > 0, else 0")
def _relu(op: Op, ct: Value) -> Cotangents:
    (x,) = op.operands
    return (sh.select(sh.compare(x, sh.zeros(op.specs[0]), "GT"), ct, sh.zeros(sh.spec(ct))),)


@vjp(T.sin, sh.sine, adjoint="x̄ = ȳ·cos(x)")
def _sin(op: Op, ct: Value) -> Cotangents:
    return (sh.multiply(ct, sh.cosine(op.operands[0])),)


@vjp(T.cos, sh.cosine, adjoint="x̄ = -ȳ·sin(x)")
def _cos(op: Op, ct: Value) -> Cotangents:
    return (sh.negate(sh.multiply(ct, sh.sine(op.operands[0]))),)


@vjp(T.abs_, sh.abs_, adjoint="x̄ = ȳ where x ≥ 0, else -ȳ (as JAX: 1 at 0); for complex x, ȳ·conj(x)/|x|")
def _abs(op: Op, ct: Value) -> Cotangents:
    (x,) = op.operands
    if op.specs[0].is_complex:  # JAX's transpose of t ↦ Re(conj(x)·t)/|x|
        scaled = sh.divide(ct, op.out)
        return (sh.complex_(sh.multiply(scaled, sh.real(x)), sh.negate(sh.multiply(scaled, sh.imag(x)))),)
    return (sh.select(sh.compare(x, sh.zeros(op.specs[0]), "GE"), ct, sh.negate(ct)),)


@jvp(T.abs_, sh.abs_)
def _abs_jvp(op: Op, tangents: Tangents) -> Tangents:
    """ẏ = ẋ where x ≥ 0, else -ẋ; for complex x, Re(conj(x)·ẋ)/|x|."""
    (x,), (t,) = op.operands, tangents
    if not op.specs[0].is_complex:
        return [sh.select(sh.compare(x, sh.zeros(op.specs[0]), "GE"), t, sh.negate(t))]
    dot = sh.add(sh.multiply(sh.real(x), sh.real(t)), sh.multiply(sh.imag(x), sh.imag(t)))
    return [sh.divide(dot, op.out)]


@vjp(T.real, sh.real, adjoint="x̄ = ȳ + 0i")
def _real(op: Op, ct: Value) -> Cotangents:
    return (sh.complex_(ct, sh.zeros(sh.spec(ct))),)


@vjp(T.imag, sh.imag, adjoint="x̄ = 0 - ȳi (JAX's transpose)")
def _imag(op: Op, ct: Value) -> Cotangents:
    return (sh.complex_(sh.zeros(sh.spec(ct)), sh.negate(ct)),)


@vjp(T.complex_, sh.complex_, adjoint="x̄ = Re ȳ, ȳ' = -Im ȳ (JAX's transpose)")
def _complex(op: Op, ct: Value) -> Cotangents:
    return (sh.real(ct) if op.wants(0) else None, sh.negate(sh.imag(ct)) if op.wants(1) else None)


linear(T.real, sh.real, T.imag, sh.imag, T.complex_, sh.complex_)


@vjp(T.log1p, sh.log_plus_one, adjoint="x̄ = ȳ/(1 + x)")
def _log1p(op: Op, ct: Value) -> Cotangents:
    return (sh.divide(ct, sh.add(op.operands[0], _scalar(1, ct))),)


@vjp(T.expm1, sh.exponential_minus_one, adjoint="x̄ = ȳ·(out + 1)")
def _expm1(op: Op, ct: Value) -> Cotangents:
    return (sh.multiply(ct, sh.add(op.out, _scalar(1, ct))),)


@vjp(T.convert, sh.convert, adjoint="x̄ = convert(ȳ) back to x's type (its real part for real x; none for "
     "integer x)")
def _convert(op: Op, ct: Value) -> Cotangents:
    source = op.specs[0]
    return (sh.convert(ct, source.dtype) if source.is_inexact else None,)


linear(T.convert, sh.convert)


# --------------------------------------------------------------------------- lowered to StableHLO's or CHLO's twin


def _scaled(ct: Value, slope: Value) -> Cotangents:
    return (sh.multiply(ct, slope),)


@vjp(T.tan, sh.tan, adjoint="x̄ = ȳ·(1 + out²)")
def _tan(op: Op, ct: Value) -> Cotangents:
    return _scaled(ct, sh.add(_scalar(1, ct), sh.multiply(op.out, op.out)))


@vjp(T.atan2, sh.atan2, adjoint="ȳ'·x/(x² + y²) for y, -ȳ'·y/(x² + y²) for x (atan2(y, x))")
def _atan2(op: Op, ct: Value) -> Cotangents:
    y, x = broadcast_operands(op)
    scale = sh.divide(ct, sh.add(sh.multiply(x, x), sh.multiply(y, y)))
    return sh.multiply(scale, x), sh.negate(sh.multiply(scale, y))


@vjp(T.rem, sh.remainder, adjoint="x̄ = ȳ, ȳ_y = -ȳ·trunc(x/y)")
def _rem(op: Op, ct: Value) -> Cotangents:
    x, y = broadcast_operands(op)
    quotient = sh.divide(x, y)
    return ct, sh.negate(sh.multiply(ct, sh.multiply(sh.sign(quotient), sh.floor(sh.abs_(quotient)))))


@vjp(sh.square, adjoint="x̄ = ȳ·2x (CHLO's square: JAX's jnp.square, var and std export it)")
def _square(op: Op, ct: Value) -> Cotangents:
    return (sh.multiply(ct, sh.multiply(_scalar(2, ct), op.operands[0])),)


@vjp(sh.cbrt, adjoint="x̄ = ȳ/(3·out²)")
def _cbrt(op: Op, ct: Value) -> Cotangents:
    return (sh.divide(ct, sh.multiply(_scalar(3, ct), sh.multiply(op.out, op.out))),)


@vjp(T.erf, sh.erf, adjoint="x̄ = ȳ·2/√π·exp(-x²)")
def _erf(op: Op, ct: Value) -> Cotangents:
    x = op.operands[0]
    return _scaled(ct, sh.multiply(_scalar(1.1283791670955126, ct), sh.exponential(sh.negate(sh.multiply(x, x)))))


@vjp(sh.erfc, adjoint="x̄ = -ȳ·2/√π·exp(-x²) (CHLO's erfc: JAX's erfc, log_ndtr and norm.logcdf export it)")
def _erfc(op: Op, ct: Value) -> Cotangents:
    x = op.operands[0]
    return _scaled(ct, sh.multiply(_scalar(-1.1283791670955126, ct), sh.exponential(sh.negate(sh.multiply(x, x)))))


@vjp(T.erf_inv, sh.erf_inv, adjoint="x̄ = ȳ·√π/2·exp(out²)")
def _erf_inv(op: Op, ct: Value) -> Cotangents:
    return _scaled(ct, sh.multiply(_scalar(0.886226925452758, ct), sh.exponential(sh.multiply(op.out, op.out))))


@vjp(T.lgamma, sh.lgamma, adjoint="x̄ = ȳ·digamma(x)")
def _lgamma(op: Op, ct: Value) -> Cotangents:
    return _scaled(ct, sh.digamma(op.operands[0]))


@vjp(T.digamma, sh.digamma, adjoint="x̄ = ȳ·polygamma(1, x)")
def _digamma(op: Op, ct: Value) -> Cotangents:
    x = op.operands[0]
    return _scaled(ct, sh.polygamma(_scalar(1, x), x))


@vjp(sh.polygamma, adjoint="x̄ = ȳ·polygamma(n + 1, x); n gets none")
def _polygamma(op: Op, ct: Value) -> Cotangents:
    n, x = op.operands
    return None, sh.multiply(ct, sh.polygamma(sh.add(n, _scalar(1, n)), x))


def _inverse_sqrt_slope(ct: Value, radicand: Value) -> Value:
    return sh.multiply(ct, sh.rsqrt(radicand))


@vjp(T.atan, sh.atan, adjoint="x̄ = ȳ/(1 + x²)")
def _atan(op: Op, ct: Value) -> Cotangents:
    x = op.operands[0]
    return (sh.divide(ct, sh.add(_scalar(1, ct), sh.multiply(x, x))),)


@vjp(T.asin, sh.asin, adjoint="x̄ = ȳ/√(1 - x²)")
def _asin(op: Op, ct: Value) -> Cotangents:
    x = op.operands[0]
    return (_inverse_sqrt_slope(ct, sh.subtract(_scalar(1, ct), sh.multiply(x, x))),)


@vjp(T.acos, sh.acos, adjoint="x̄ = -ȳ/√(1 - x²)")
def _acos(op: Op, ct: Value) -> Cotangents:
    x = op.operands[0]
    return (sh.negate(_inverse_sqrt_slope(ct, sh.subtract(_scalar(1, ct), sh.multiply(x, x)))),)


@vjp(T.sinh, sh.sinh, adjoint="x̄ = ȳ·cosh(x)")
def _sinh(op: Op, ct: Value) -> Cotangents:
    return _scaled(ct, sh.cosh(op.operands[0]))


@vjp(T.cosh, sh.cosh, adjoint="x̄ = ȳ·sinh(x)")
def _cosh(op: Op, ct: Value) -> Cotangents:
    return _scaled(ct, sh.sinh(op.operands[0]))


@vjp(T.asinh, sh.asinh, adjoint="x̄ = ȳ/√(x² + 1)")
def _asinh(op: Op, ct: Value) -> Cotangents:
    x = op.operands[0]
    return (_inverse_sqrt_slope(ct, sh.add(sh.multiply(x, x), _scalar(1, ct))),)


@vjp(T.acosh, sh.acosh, adjoint="x̄ = ȳ/√(x² - 1)")
def _acosh(op: Op, ct: Value) -> Cotangents:
    x = op.operands[0]
    return (_inverse_sqrt_slope(ct, sh.subtract(sh.multiply(x, x), _scalar(1, ct))),)


@vjp(T.atanh, sh.atanh, adjoint="x̄ = ȳ/(1 - x²)")
def _atanh(op: Op, ct: Value) -> Cotangents:
    x = op.operands[0]
    return (sh.divide(ct, sh.subtract(_scalar(1, ct), sh.multiply(x, x))),)


no_derivative(sh.compare, sh.sign, sh.floor, sh.ceil, sh.round_nearest_even, sh.round_nearest_afz, sh.and_, sh.or_,
              sh.not_, sh.xor, sh.shift_left, sh.shift_right_logical, sh.shift_right_arithmetic, sh.popcnt,
              sh.count_leading_zeros, sh.next_after, sh.bitcast_convert, sh.constant)


@lowers(T.reduce_precision)
def _lower_reduce_precision(op: Op) -> Value:
    return sh.reduce_precision(op.operands[0], op["exponent_bits"], op["mantissa_bits"])


@vjp(T.reduce_precision, sh.reduce_precision, adjoint="x̄ = reduce_precision(ȳ) (JAX's)")
def _reduce_precision(op: Op, ct: Value) -> Cotangents:
    return (sh.reduce_precision(ct, op["exponent_bits"], op["mantissa_bits"]),)


linear(T.reduce_precision, sh.reduce_precision)
