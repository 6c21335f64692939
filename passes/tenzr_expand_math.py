"""`tenzr-expand-math`: StableHLO math that IREE lacks or gets wrong, rewritten into ops it
handles well (the lowering pipeline runs it after `convert-tenzr-to-stablehlo`).

- `power`: IREE's `stablehlo.power` returns NaN for every negative base (even (-2)^2) and
  for 0^0. The expansion gives NumPy's answers: integer exponents of negative bases keep
  their sign, 0^0 = 1, 0^y is 0 or inf.
- float32 (and narrower) `sine` and `tan`: IREE's lose their relative precision below 0
  (sin(-3e-7) gave -1.5e-7), not above; both are odd, so x's sign times the op on |x|.
- float64 `log_plus_one` and `exponential_minus_one`: IREE's lose their relative precision
  near 0 (log1p(1e-10) 8e-8 off, log1p(1e-19) and expm1(1e-19) gave 0), so they come from
  log and exp by Goldberg's and Kahan's identities, to a few ulp.
- `sine`, `cosine`, `tan`, `tanh`, `atan2`, `cbrt`, `remainder`: IREE's CPU backend has no
  float64 `sin`, `cos`, `tan`, `tanh`, `atan2`, `cbrt` or `fmod` (linking fails with
  "undefined symbol: sin", or cbrt is refused). For f64, tanh goes
  through expm1; sin and cos through a three-part Cody-Waite reduction by pi/2 and fdlibm's
  kernel polynomials (about 1 ulp for |x| < 2^20·pi/2), tan as their quotient; atan2
  through Cephes' atan (a rational approximation on three ranges); cbrt as exp(log|x|/3)
  and a Newton step; fmod as x - trunc(x/y)·y with one correcting step. Other element types keep
  the StableHLO op. (CHLO's ops, once legalized, reach these too: atan, asin and acos are
  atan2s, lgamma and digamma use sin and cos.)
- Complex `exponential`, `log`, `sqrt`, `rsqrt`, `sine`, `cosine`, `tan`, `tanh`,
  `log_plus_one`, `exponential_minus_one` and `power`: IREE expands them into calls of
  libm functions its CPU backend lacks for float64 ("undefined symbol: cos/sin/atan2").
  They are written here on the real and imaginary parts (the textbook identities, with
  sqrt in Kahan's stable form), for every complex type, before the float64 expansions
  above reach the real ops they make. A complex `pad` pads the parts apart (IREE fills it
  with an i128 splat it cannot lower), and a complex `dot_general` is four real ones (IREE
  computes some with a constant operand wrong).
- A 0-d integer `convert` to float64 (a loop index in float64 arithmetic): IREE runs such
  scalar code in its host VM, which has no integer to float64 conversion (compiling fails
  with "failed to legalize operation 'arith.sitofp'"). It is rebuilt from parts that
  float32 holds exactly (12 and 20 bits of an i32, three 21-bit parts of an i64), each
  widened to float64 and summed: the same float64 the conversion gives.
- An int64 `popcnt` or `count_leading_zeros` counts the two 32-bit halves: IREE 3.13's
  portable Vulkan target, which emulates 64-bit integers, fails on them ("failed to
  legalize unresolved target materialization from ('i64') to ('vector<2xi32>')").
- A 0-d `convert` between 32- and 64-bit integers, one unsigned (JAX's random numbers with
  x64 turn int64 counters into uint32 words): IREE runs it in its host VM, which has no
  unsigned integers ("failed to legalize operation 'arith.trunci' ... (i64) -> ui32"). It
  goes through signless integers: bitcasts, a truncation or sign extension, and a mask
  after extending an unsigned value.
- An unsigned integer `convert` to a float goes through a wider signed integer (a uint64's
  halves through float64): IREE 3.13 converts as signed where it looks through such a
  conversion into a data-tiled matmul (`x.astype(float32) @ w` of a uint8 x: 200 became -56).
- A `reverse` of unsigned integers reverses their bits as signless ones: IREE 3.13 fails to
  compile it ("failed to legalize operation 'linalg.generic'": `flip` of a uint8 image).
- A boolean `convert` to a real float is a `select` of 1 and 0: IREE 3.13 looks through such
  a conversion into a data-tiled matmul (`dot(x < y, w)`, a dropout mask or a binarized batch
  times weights) and fails to compile it ("failed to legalize unresolved source
  materialization ... element_types = [i1, f32, f32]"), which cost a failed compile per
  flag set with data tiling before the others were tried.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.types import INT_TYPES, UNSIGNED_TYPES, real_dtype, spec_of_type
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.views import view

_PIO2 = (1.57079632673412561417e00, 6.07710050630396597660e-11, 2.02226624871116645580e-21)
_SIN = (-1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
        2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10)
_COS = (4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
        -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11)


def _c(value: float, like: Value) -> Value:
    return sh.full(sh.spec(like), value)


def _poly(z: Value, coefficients: tuple[float, ...]) -> Value:
    acc = _c(coefficients[-1], z)
    for c in reversed(coefficients[:-1]):
        acc = sh.add(_c(c, z), sh.multiply(z, acc))
    return acc


def _reduce(x: Value) -> tuple[Value, Value]:
    """(r, quadrant) with x = r + quadrant·pi/2 (mod 2pi), |r| <= pi/4, quadrant in 0..3."""
    n = sh.round_nearest_even(sh.multiply(x, _c(0.63661977236758134308, x)))
    r = x
    for part in _PIO2:
        r = sh.subtract(r, sh.multiply(n, _c(part, x)))
    quadrant = sh.subtract(n, sh.multiply(_c(4, x), sh.floor(sh.multiply(n, _c(0.25, x)))))
    return r, quadrant


def _kernels(r: Value) -> tuple[Value, Value]:
    z = sh.multiply(r, r)
    sin_r = sh.add(r, sh.multiply(sh.multiply(r, z), _poly(z, _SIN)))
    cos_r = sh.add(sh.subtract(_c(1, r), sh.multiply(_c(0.5, r), z)), sh.multiply(sh.multiply(z, z), _poly(z, _COS)))
    return sin_r, cos_r


def _by_quadrant(quadrant: Value, values: tuple[Value, Value, Value, Value]) -> Value:
    out = values[3]
    for q in (2, 1, 0):
        out = sh.select(sh.compare(quadrant, _c(q, quadrant), "EQ"), values[q], out)
    return out


def sine(x: Value) -> Value:
    r, quadrant = _reduce(x)
    s, c = _kernels(r)
    return _by_quadrant(quadrant, (s, c, sh.negate(s), sh.negate(c)))


def cosine(x: Value) -> Value:
    r, quadrant = _reduce(x)
    s, c = _kernels(r)
    return _by_quadrant(quadrant, (c, sh.negate(s), sh.negate(c), s))


def tan(x: Value) -> Value:
    r, quadrant = _reduce(x)
    s, c = _kernels(r)
    return sh.divide(_by_quadrant(quadrant, (s, c, sh.negate(s), sh.negate(c))),
                     _by_quadrant(quadrant, (c, sh.negate(s), sh.negate(c), s)))


_ATAN_P = (-8.750608600031904122785e-1, -1.615753718733365076637e1, -7.500855792314704667340e1,
           -1.228866684490136173410e2, -6.485021904942025371773e1)
_ATAN_Q = (1.0, 2.485846490142306297962e1, 1.650270098316988542046e2, 4.328810604912902668951e2,
           4.853903996359136964868e2, 1.945506571482613964425e2)
_MOREBITS = 6.123233995736765886130e-17
_TAN_3PI_8 = 2.41421356237309504880


def _horner(z: Value, coefficients: tuple[float, ...]) -> Value:
    """c0·z^n + c1·z^(n-1) + ... + cn."""
    acc = _c(coefficients[0], z)
    for c in coefficients[1:]:
        acc = sh.add(sh.multiply(acc, z), _c(c, z))
    return acc


def _atan_of_nonnegative(t: Value) -> Value:
    """Cephes' atan for t >= 0: reduced to |x| <= 0.66 around 0, pi/4 or pi/2."""
    large = sh.compare(t, _c(_TAN_3PI_8, t), "GT")
    middle = sh.and_(sh.not_(large), sh.compare(t, _c(0.66, t), "GT"))
    x = sh.select(large, sh.divide(_c(-1, t), t),
                  sh.select(middle, sh.divide(sh.subtract(t, _c(1, t)), sh.add(t, _c(1, t))), t))
    base = sh.select(large, _c(np.pi / 2, t), sh.select(middle, _c(np.pi / 4, t), _c(0, t)))
    extra = sh.select(large, _c(_MOREBITS, t), sh.select(middle, _c(0.5 * _MOREBITS, t), _c(0, t)))
    z = sh.multiply(x, x)
    ratio = sh.divide(sh.multiply(z, _horner(z, _ATAN_P)), _horner(z, _ATAN_Q))
    return sh.add(base, sh.add(sh.add(sh.multiply(x, ratio), x), extra))


def atan2(y: Value, x: Value) -> Value:
    """The angle of (x, y) in (-pi, pi], as C's atan2 (tz.arctan2 adds the signed zeros
    and infinities beside x <= 0)."""
    zero = sh.zeros(sh.spec(x))
    magnitude = _atan_of_nonnegative(sh.abs_(sh.divide(y, x)))
    y_negative = sh.compare(y, zero, "LT")
    angle = sh.select(sh.compare(x, zero, "LT"), sh.subtract(_c(np.pi, x), magnitude), magnitude)
    angle = sh.select(y_negative, sh.negate(angle), angle)
    on_axis = sh.select(sh.compare(y, zero, "EQ"), zero,
                        sh.select(y_negative, _c(-np.pi / 2, x), _c(np.pi / 2, x)))
    angle = sh.select(sh.compare(x, zero, "EQ"), on_axis, angle)
    # y = ±0 beside x > 0 is y itself (C's signed zero), and NaN stays NaN
    angle = sh.select(sh.and_(sh.compare(y, zero, "EQ"), sh.compare(x, zero, "GT")), y, angle)
    return sh.select(sh.compare(y, y, "NE"), y, angle)


def fmod(x: Value, y: Value) -> Value:
    """x - trunc(x/y)·y with x's sign: the quotient truncated, then one step of |y| where its
    rounding left the remainder outside [0, |y|) (x's sign); fmod(x, ±inf) = x. Exact while
    |x/y| < 2^53; beyond, the quotient itself is rounded (1e20 % 3.0 gives 4,093, not 1)."""
    zero = sh.zeros(sh.spec(x))
    quotient = sh.divide(x, y)
    r = sh.subtract(x, sh.multiply(sh.multiply(sh.sign(quotient), sh.floor(sh.abs_(quotient))), y))
    step = sh.multiply(sh.sign(x), sh.abs_(y))
    r = sh.select(sh.and_(sh.compare(r, zero, "NE"), sh.compare(sh.sign(r), sh.sign(x), "NE")), sh.add(r, step), r)
    r = sh.select(sh.compare(sh.abs_(r), sh.abs_(y), "GE"), sh.subtract(r, step), r)
    infinite_y = sh.and_(sh.compare(sh.abs_(y), _c(np.inf, y), "EQ"), sh.compare(sh.abs_(x), _c(np.inf, x), "LT"))
    return sh.select(infinite_y, x, r)


def cbrt(x: Value) -> Value:
    """sign(x)·exp(log|x|/3), then one Newton step (0 stays 0)."""
    zero = sh.zeros(sh.spec(x))
    y = sh.multiply(sh.sign(x), sh.exponential(sh.divide(sh.log(sh.abs_(x)), _c(3, x))))
    square = sh.multiply(y, y)
    y = sh.subtract(y, sh.divide(sh.subtract(sh.multiply(y, square), x), sh.multiply(_c(3, x), square)))
    return sh.select(sh.compare(x, zero, "EQ"), zero, y)


def log_plus_one(x: Value) -> Value:
    """log(1 + x) as log(u)·x/(u - 1) for u = 1 + x rounded (Goldberg's), x where u is 1 or
    infinite: IREE's float64 log1p loses its precision near 0 (log1p(1e-10) was 8e-8 off
    relatively, log1p(1e-19) gave 0)."""
    u = sh.add(_c(1, x), x)
    d = sh.subtract(u, _c(1, x))
    plain = sh.or_(sh.compare(d, _c(0, x), "EQ"), sh.compare(u, _c(np.inf, x), "EQ"))
    return sh.select(plain, x, sh.multiply(sh.log(u), sh.divide(x, sh.select(plain, _c(1, x), d))))


def exponential_minus_one(x: Value) -> Value:
    """exp(x) - 1 as (u - 1)·x/log(u) for u = exp(x) (Kahan's): x where u is 1, -1 where u - 1
    is, u where it is infinite. IREE's float64 expm1 loses its precision near 0 as its log1p."""
    u = sh.exponential(x)
    d = sh.subtract(u, _c(1, x))
    near = sh.compare(u, _c(1, x), "EQ")
    far = sh.or_(sh.compare(d, _c(-1, x), "EQ"), sh.compare(u, _c(np.inf, x), "EQ"))
    ratio = sh.multiply(d, sh.divide(x, sh.log(sh.select(near, _c(2, x), u))))
    return sh.select(near, x, sh.select(far, d, ratio))


def tanh(x: Value) -> Value:
    # tanh|x| = -expm1(-2|x|) / (2 + expm1(-2|x|)), accurate near 0 and saturating cleanly.
    e = exponential_minus_one(sh.multiply(_c(-2, x), sh.abs_(x)))
    magnitude = sh.divide(sh.negate(e), sh.add(_c(2, x), e))
    return sh.multiply(sh.sign(x), magnitude)


def power(x: Value, y: Value) -> Value:
    """x ** y with C's (NumPy's, JAX's) results where IREE's exp(y·log x) has none: negative
    and zero bases (integer exponents of negative bases keep their sign, 0^0 = 1, 0^y is
    0 or ±inf), x^0 = 1 and 1^y = 1 even for NaN or infinite x or y, (-1)^±inf = 1, and
    (-inf)^y as inf^y with the sign of an odd integer y."""
    s = sh.spec(x)
    zero, one, infinity = sh.zeros(s), _c(1, x), _c(np.inf, x)
    magnitude = sh.abs_(x)
    is_zero = sh.compare(magnitude, zero, "EQ")
    raised = sh.power(sh.select(is_zero, one, magnitude), y)
    at_zero = sh.select(sh.compare(y, zero, "GT"), zero, sh.select(sh.compare(y, zero, "EQ"), one, sh.select(
        sh.compare(y, zero, "LT"), infinity, _c(np.nan, x))))
    raised = sh.select(is_zero, at_zero, raised)
    integral = sh.compare(sh.floor(y), y, "EQ")
    half = sh.multiply(y, _c(0.5, y))
    odd = sh.and_(integral, sh.compare(sh.floor(half), half, "NE"))
    signed = sh.select(odd, sh.negate(raised), raised)
    has_value = sh.or_(sh.or_(integral, is_zero), sh.compare(magnitude, infinity, "EQ"))
    negative_base = sh.select(has_value, signed, _c(np.nan, x))
    below = sh.or_(sh.compare(x, zero, "LT"), sh.and_(is_zero, sh.compare(sh.divide(one, x), zero, "LT")))
    out = sh.select(below, negative_base, raised)
    unit = sh.or_(sh.compare(x, one, "EQ"), sh.and_(sh.compare(magnitude, one, "EQ"),
                                                   sh.compare(sh.abs_(y), infinity, "EQ")))
    return sh.select(sh.or_(sh.compare(y, zero, "EQ"), unit), one, out)


def _parts(z: Value) -> tuple[Value, Value]:
    return sh.real(z), sh.imag(z)


def _sinh_cosh(b: Value) -> tuple[Value, Value]:
    """sinh b through expm1 (accurate near 0) and cosh b."""
    up, down = sh.exponential_minus_one(b), sh.exponential_minus_one(sh.negate(b))
    half = _c(0.5, b)
    return sh.multiply(half, sh.subtract(up, down)), sh.add(_c(1, b), sh.multiply(half, sh.add(up, down)))


def complex_exponential(z: Value) -> Value:
    a, b = _parts(z)
    m = sh.exponential(a)
    return sh.complex_(sh.multiply(m, sh.cosine(b)), sh.multiply(m, sh.sine(b)))


def complex_log(z: Value) -> Value:
    a, b = _parts(z)
    return sh.complex_(sh.log(sh.abs_(z)), sh.atan2(b, a))


def complex_log_plus_one(z: Value) -> Value:
    """log|1 + z| = log1p(2a + a² + b²)/2, accurate near 0."""
    a, b = _parts(z)
    r = sh.add(sh.multiply(_c(2, a), a), sh.add(sh.multiply(a, a), sh.multiply(b, b)))
    return sh.complex_(sh.multiply(_c(0.5, a), sh.log_plus_one(r)), sh.atan2(b, sh.add(_c(1, a), a)))


def complex_exponential_minus_one(z: Value) -> Value:
    """Re = expm1(a)·cos b - 2 sin²(b/2), accurate near 0."""
    a, b = _parts(z)
    half_sine = sh.sine(sh.multiply(_c(0.5, b), b))
    real = sh.subtract(sh.multiply(sh.exponential_minus_one(a), sh.cosine(b)),
                       sh.multiply(_c(2, b), sh.multiply(half_sine, half_sine)))
    return sh.complex_(real, sh.multiply(sh.exponential(a), sh.sine(b)))


def complex_sqrt(z: Value) -> Value:
    """The principal root: t = sqrt((|z| + |a|)/2), then (t, b/2t) for a >= 0 and
    (|b|/2t, ±t) for a < 0; 0 at 0."""
    a, b = _parts(z)
    zero = sh.zeros(sh.spec(a))
    t = sh.sqrt(sh.multiply(_c(0.5, a), sh.add(sh.abs_(z), sh.abs_(a))))
    other = sh.divide(sh.abs_(b), sh.multiply(_c(2, a), t))
    negative_a = sh.compare(a, zero, "LT")
    real = sh.select(negative_a, other, t)
    imag = sh.select(negative_a, sh.select(sh.compare(b, zero, "LT"), sh.negate(t), t),
                     sh.divide(b, sh.multiply(_c(2, a), t)))
    at_zero = sh.compare(t, zero, "EQ")
    return sh.complex_(sh.select(at_zero, zero, real), sh.select(at_zero, b, imag))


def complex_rsqrt(z: Value) -> Value:
    return sh.divide(_c(1, z), complex_sqrt(z))


def complex_sine(z: Value) -> Value:
    a, b = _parts(z)
    sinh_b, cosh_b = _sinh_cosh(b)
    return sh.complex_(sh.multiply(sh.sine(a), cosh_b), sh.multiply(sh.cosine(a), sinh_b))


def complex_cosine(z: Value) -> Value:
    a, b = _parts(z)
    sinh_b, cosh_b = _sinh_cosh(b)
    return sh.complex_(sh.multiply(sh.cosine(a), cosh_b), sh.negate(sh.multiply(sh.sine(a), sinh_b)))


def complex_tan(z: Value) -> Value:
    """(sin 2a + i sinh 2b) / (cos 2a + cosh 2b)."""
    a, b = _parts(z)
    sinh_2b, cosh_2b = _sinh_cosh(sh.multiply(_c(2, b), b))
    a2 = sh.multiply(_c(2, a), a)
    d = sh.add(sh.cosine(a2), cosh_2b)
    return sh.complex_(sh.divide(sh.sine(a2), d), sh.divide(sinh_2b, d))


def complex_tanh(z: Value) -> Value:
    """(sinh 2a + i sin 2b) / (cosh 2a + cos 2b)."""
    a, b = _parts(z)
    sinh_2a, cosh_2a = _sinh_cosh(sh.multiply(_c(2, a), a))
    b2 = sh.multiply(_c(2, b), b)
    d = sh.add(cosh_2a, sh.cosine(b2))
    return sh.complex_(sh.divide(sinh_2a, d), sh.divide(sh.sine(b2), d))


def complex_power(x: Value, y: Value) -> Value:
    """exp(y·log x); 0^0 = 1 and 0^y = 0 otherwise."""
    zero = sh.zeros(sh.spec(x))
    raised = complex_exponential(sh.multiply(y, complex_log(x)))
    at_zero = sh.select(sh.compare(y, zero, "EQ"), _c(1, x), zero)
    return sh.select(sh.compare(x, zero, "EQ"), at_zero, raised)


def complex_pad(op: ir.Operation) -> Callable[..., Value]:
    """The parts padded apart: IREE 3.13 fills a complex pad with an i128 splat it cannot
    lower ("'stream.async.splat' op operand #0 must be ... signless integer")."""
    widths = [list(ir.DenseI64ArrayAttr(op.attributes[name])) for name in
              ("edge_padding_low", "edge_padding_high", "interior_padding")]

    def expand(x: Value, value: Value) -> Value:
        return sh.complex_(sh.pad(sh.real(x), sh.real(value), *widths), sh.pad(sh.imag(x), sh.imag(value), *widths))

    return expand


def complex_dot_general(op: ir.Operation) -> Callable[..., Value]:
    """Four real products of the parts: IREE 3.13 gets a complex dot_general with a constant
    operand wrong when it contracts that operand's last dim (the transposed product the VJP
    of a matmul makes)."""
    attributes = {name: op.attributes[name] for name in op.attributes}
    result = sh.spec(op.results[0])
    part = result.with_dtype(real_dtype(result.dtype))

    def product(a: Value, b: Value) -> Value:
        return sh.create(op.name, [part], [a, b], attributes).result

    def expand(a: Value, b: Value) -> Value:
        (ar, ai), (br, bi) = _parts(a), _parts(b)
        return sh.complex_(sh.subtract(product(ar, br), product(ai, bi)),
                           sh.add(product(ar, bi), product(ai, br)))

    return expand


_COMPLEX_EXPANSIONS: dict[str, Callable[..., Value]] = {
    sh.exponential.op_name: complex_exponential, sh.log.op_name: complex_log, sh.sqrt.op_name: complex_sqrt,
    sh.rsqrt.op_name: complex_rsqrt, sh.sine.op_name: complex_sine, sh.cosine.op_name: complex_cosine,
    sh.tan.op_name: complex_tan, sh.tanh.op_name: complex_tanh, sh.log_plus_one.op_name: complex_log_plus_one,
    sh.exponential_minus_one.op_name: complex_exponential_minus_one, sh.power.op_name: complex_power,
}
"""Complex ops, rewritten on their parts for every complex type."""

def _halves(x: Value) -> tuple[Value, Value]:
    """The low and high 32 bits of an int64 x, as int32s."""
    return sh.convert(x, "i32"), sh.convert(sh.shift_right_logical(x, _c(32, x)), "i32")


def popcnt64(x: Value) -> Value:
    low, high = _halves(x)
    return sh.convert(sh.add(sh.popcnt(low), sh.popcnt(high)), "i64")


def count_leading_zeros64(x: Value) -> Value:
    low, high = _halves(x)
    in_low = sh.add(sh.count_leading_zeros(low), _c(32, low))
    return sh.convert(sh.select(sh.compare(high, _c(0, high), "EQ"), in_low, sh.count_leading_zeros(high)), "i64")


def _odd(expansion: Callable[[Value], Value], op: Callable[[Value], Value]) -> Callable[[Value], Value]:
    """Float64: `expansion`. Narrower floats: IREE's op on |x|, given x's sign back. IREE's
    float32 sine (and tan) lose their relative precision below 0 (sin(-3e-7) gave -1.5e-7,
    an absolute error of 1.5e-7 at every small negative x) but not above."""
    def rule(x: Value) -> Value:
        if sh.spec(x).dtype == "f64":
            return expansion(x)
        return sh.multiply(sh.sign(x), op(sh.abs_(x)))

    return rule


_EXPANSIONS: dict[str, tuple[Callable[..., Value], Callable[[str], bool]]] = {
    sh.power.op_name: (power, lambda dtype: dtype.startswith(("f", "bf"))),
    sh.sine.op_name: (_odd(sine, sh.sine), lambda dtype: dtype.startswith(("f", "bf"))),
    sh.cosine.op_name: (cosine, lambda dtype: dtype == "f64"),
    sh.tanh.op_name: (tanh, lambda dtype: dtype == "f64"),
    sh.log_plus_one.op_name: (log_plus_one, lambda dtype: dtype == "f64"),
    sh.exponential_minus_one.op_name: (exponential_minus_one, lambda dtype: dtype == "f64"),
    sh.tan.op_name: (_odd(tan, sh.tan), lambda dtype: dtype.startswith(("f", "bf"))),
    sh.atan2.op_name: (atan2, lambda dtype: dtype == "f64"),
    sh.cbrt.op_name: (cbrt, lambda dtype: dtype == "f64"),
    sh.remainder.op_name: (fmod, lambda dtype: dtype == "f64"),
    sh.popcnt.op_name: (popcnt64, lambda dtype: dtype in ("i64", "ui64")),
    sh.count_leading_zeros.op_name: (count_leading_zeros64, lambda dtype: dtype in ("i64", "ui64")),
}
"""The op each expansion replaces, and the element types it replaces it for."""


_INTEGER = re.compile(r"(u?)i(8|16|32|64)")


def int_to_float64(x: Value) -> Value:
    """float64(x) for an integer x, exactly, converting to float64 only from float32 parts."""
    unsigned, bits = _INTEGER.fullmatch(sh.spec(x).dtype).groups()  # type: ignore[union-attr]
    if int(bits) <= 16:
        return sh.convert(sh.convert(x, "f32"), "f64")
    count, width = (2, 12) if bits == "32" else (3, 21)
    shift = sh.shift_right_logical if unsigned else sh.shift_right_arithmetic
    total: Value | None = None
    for k in reversed(range(count)):  # the most significant part first: it keeps x's sign
        part = shift(x, _c(width * k, x)) if k else x
        if k < count - 1:
            part = sh.and_(part, _c((1 << width) - 1, x))
        wide = sh.convert(sh.convert(sh.convert(part, "i32"), "f32"), "f64")
        total = wide if total is None else sh.add(sh.multiply(total, _c(float(1 << width), total)), wide)
    assert total is not None
    return total




def integer_convert(x: Value, dtype: str) -> Value:
    """convert(x) to the integer type `dtype` through signless integers alone: widened from
    an unsigned type by sign extension and a mask, narrowed by truncation; bitcasts give
    the signedness."""
    unsigned, bits = _INTEGER.fullmatch(sh.spec(x).dtype).groups()  # type: ignore[union-attr]
    wanted = int(_INTEGER.fullmatch(dtype)[2])  # type: ignore[index]
    v = sh.bitcast_convert(x, f"i{bits}")
    if wanted != int(bits):
        v = sh.convert(v, f"i{wanted}")
        if unsigned and wanted > int(bits):
            v = sh.and_(v, _c((1 << int(bits)) - 1, v))
    return sh.bitcast_convert(v, dtype)


def _scalar_unsigned_convert(op: ir.Operation) -> Callable[[Value], Value] | None:
    result, operand = sh.spec(op.results[0]), sh.spec(op.operands[0])
    if result.rank or not (result.dtype.startswith("u") or operand.dtype.startswith("u")) \
            or not all(s.dtype in INT_TYPES for s in (result, operand)):
        return None
    return lambda x: integer_convert(x, result.dtype)


def _bool_to_float(op: ir.Operation) -> Callable[[Value], Value] | None:
    result = sh.spec(op.results[0])
    if sh.spec(op.operands[0]).dtype != "i1" or not result.is_float or result.is_complex:
        return None
    return lambda x: sh.select(x, sh.full(result, 1.0), sh.full(result, 0.0))


def _unsigned_to_float(op: ir.Operation) -> Callable[[Value], Value] | None:
    result, operand = sh.spec(op.results[0]), sh.spec(op.operands[0])
    if operand.dtype not in UNSIGNED_TYPES or not result.is_float:
        return None

    def rule(x: Value) -> Value:
        if operand.dtype != "ui64":
            return sh.convert(integer_convert(x, "i64" if operand.dtype == "ui32" else "i32"), result.dtype)
        high = sh.bitcast_convert(sh.shift_right_logical(x, _c(32, x)), "i64")
        low = sh.bitcast_convert(sh.and_(x, _c(0xFFFFFFFF, x)), "i64")
        total = sh.add(sh.multiply(sh.convert(high, "f64"), sh.full(result.with_dtype("f64"), 2.0**32)),
                       sh.convert(low, "f64"))
        return sh.convert(total, result.dtype)  # (no op for float64)

    return rule


def _unsigned_reverse(op: ir.Operation) -> Callable[[Value], Value] | None:
    """(sh.reverse reverses unsigned integers as signless ones.)"""
    if sh.spec(op.results[0]).dtype not in UNSIGNED_TYPES:
        return None
    dims = view(op).attrs["dimensions"]
    return lambda x: sh.reverse(x, dims)


def _scalar_int_to_float64(op: ir.Operation) -> bool:
    result, operand = sh.spec(op.results[0]), sh.spec(op.operands[0])
    return result.dtype == "f64" and result.rank == 0 and _INTEGER.fullmatch(operand.dtype) is not None


def _expand(module: ir.Operation, expansion: Callable[[ir.Operation], Callable[..., Value] | None]) -> None:
    found: list[tuple[ir.Operation, Callable[..., Value]]] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        rule = expansion(op)
        if rule is not None:
            found.append((op, rule))
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    for op, rule in found:
        with op.location, ir.InsertionPoint(op):
            expanded = rule(*op.operands)
        op.results[0].replace_all_uses_with(expanded)
        op.erase()


def _complex_rule(op: ir.Operation) -> Callable[..., Value] | None:
    if not op.results or spec_of_type(op.results[0].type) is None:
        return None
    if op.name in (sh.pad.op_name, sh.dot_general.op_name):
        if not sh.spec(op.results[0]).is_complex:
            return None
        return complex_pad(op) if op.name == sh.pad.op_name else complex_dot_general(op)
    rule = _COMPLEX_EXPANSIONS.get(op.name)
    return rule if rule is not None and sh.spec(op.results[0]).is_complex else None


def _real_rule(op: ir.Operation) -> Callable[..., Value] | None:
    if any(spec_of_type(v.type) is None for v in (*op.operands, *op.results)):
        return None  # (unsigned integers, tokens: nothing here rewrites them)
    if op.name == sh.convert.op_name:
        if _scalar_int_to_float64(op):
            return int_to_float64
        return _scalar_unsigned_convert(op) or _unsigned_to_float(op) or _bool_to_float(op)
    if op.name == sh.reverse.op_name:
        return _unsigned_reverse(op)
    rule = _EXPANSIONS.get(op.name)
    return rule[0] if rule is not None and rule[1](sh.spec(op.results[0]).dtype) else None


def expand_math(module: ir.Operation) -> None:
    _expand(module, _complex_rule)  # first: it makes real sines, cosines and atan2s the second expands
    _expand(module, _real_rule)


@register
@dataclass
class TenzrExpandMath(Pass):
    flag: ClassVar[str] = "tenzr-expand-math"
    summary: ClassVar[str] = ("Rewrite float stablehlo.power, float32 sine and tan of negative numbers, float64 sine, "
                              "cosine, tan, tanh, atan2, cbrt, remainder, log_plus_one and exponential_minus_one, "
                              "complex exponential, log, sqrt, rsqrt, sine, cosine, tan, tanh, log_plus_one, "
                              "exponential_minus_one and power, 0-d integer to float64 and unsigned integer "
                              "conversions, unsigned reverses, boolean to float conversions and int64 popcnt and "
                              "count_leading_zeros, into StableHLO that IREE compiles correctly (NumPy's results for "
                              "negative and zero bases; IREE's CPU backend has none of these in float64, its host VM no"
                              " integer to float64 conversion nor unsigned integers, its data tiling converts unsigned "
                              "integers as signed and fails on boolean matmul operands, its portable Vulkan target on "
                              "64-bit bit counts).")
    example_input: ClassVar[str] = """\
func.func @f(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = stablehlo.sine %x : tensor<3xf64>
  return %0 : tensor<3xf64>
}
"""

    def run(self, module: ir.Operation) -> None:
        expand_math(module)
