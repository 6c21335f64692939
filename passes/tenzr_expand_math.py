"""`tenzr-expand-math`: StableHLO math that IREE lacks or gets wrong, rewritten into ops it
handles well (the lowering pipeline runs it after `convert-tenzr-to-stablehlo`).

- `power`: IREE's `stablehlo.power` returns NaN for every negative base (even (-2)^2) and
  for 0^0. The expansion gives NumPy's answers: integer exponents of negative bases keep
  their sign, 0^0 = 1, 0^y is 0 or inf.
- `sine`, `cosine`, `tan`, `tanh`, `atan2`, `cbrt`: IREE's CPU backend has no float64
  `sin`, `cos`, `tan`, `tanh`, `atan2` or `cbrt` (linking fails with "undefined symbol:
  sin", or cbrt is refused). For f64, tanh goes
  through expm1; sin and cos through a three-part Cody-Waite reduction by pi/2 and fdlibm's
  kernel polynomials (about 1 ulp for |x| < 2^20·pi/2), tan as their quotient; atan2
  through Cephes' atan (a rational approximation on three ranges); cbrt as exp(log|x|/3)
  and a Newton step. Other element types keep
  the StableHLO op. (CHLO's ops, once legalized, reach these too: atan, asin and acos are
  atan2s, lgamma and digamma use sin and cos.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from tenzr.dialect.ir_imports import Value, ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register

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
    """The angle of (x, y) in (-pi, pi], as C's atan2 (without its signed zeros)."""
    zero = sh.zeros(sh.spec(x))
    magnitude = _atan_of_nonnegative(sh.abs_(sh.divide(y, x)))
    y_negative = sh.compare(y, zero, "LT")
    angle = sh.select(sh.compare(x, zero, "LT"), sh.subtract(_c(np.pi, x), magnitude), magnitude)
    angle = sh.select(y_negative, sh.negate(angle), angle)
    on_axis = sh.select(sh.compare(y, zero, "EQ"), zero,
                        sh.select(y_negative, _c(-np.pi / 2, x), _c(np.pi / 2, x)))
    return sh.select(sh.compare(x, zero, "EQ"), on_axis, angle)


def cbrt(x: Value) -> Value:
    """sign(x)·exp(log|x|/3), then one Newton step (0 stays 0)."""
    zero = sh.zeros(sh.spec(x))
    y = sh.multiply(sh.sign(x), sh.exponential(sh.divide(sh.log(sh.abs_(x)), _c(3, x))))
    square = sh.multiply(y, y)
    y = sh.subtract(y, sh.divide(sh.subtract(sh.multiply(y, square), x), sh.multiply(_c(3, x), square)))
    return sh.select(sh.compare(x, zero, "EQ"), zero, y)


def tanh(x: Value) -> Value:
    # tanh|x| = -expm1(-2|x|) / (2 + expm1(-2|x|)), accurate near 0 and saturating cleanly.
    e = sh.exponential_minus_one(sh.multiply(_c(-2, x), sh.abs_(x)))
    magnitude = sh.divide(sh.negate(e), sh.add(_c(2, x), e))
    return sh.multiply(sh.sign(x), magnitude)


def power(x: Value, y: Value) -> Value:
    """x ** y with NumPy's results for negative and zero bases (floats)."""
    s = sh.spec(x)
    zero, one = sh.zeros(s), _c(1, x)
    magnitude = sh.abs_(x)
    is_zero = sh.compare(magnitude, zero, "EQ")
    raised = sh.power(sh.select(is_zero, one, magnitude), y)
    at_zero = sh.select(sh.compare(y, zero, "GT"), zero, sh.select(sh.compare(y, zero, "EQ"), one, _c(np.inf, x)))
    raised = sh.select(is_zero, at_zero, raised)
    integral = sh.compare(sh.floor(y), y, "EQ")
    half = sh.multiply(y, _c(0.5, y))
    odd = sh.and_(integral, sh.compare(sh.floor(half), half, "NE"))
    signed = sh.select(odd, sh.negate(raised), raised)
    negative_base = sh.select(integral, signed, _c(np.nan, x))
    return sh.select(sh.compare(x, zero, "LT"), negative_base, raised)


_EXPANSIONS: dict[str, tuple[Callable[..., Value], Callable[[str], bool]]] = {
    sh.power.op_name: (power, lambda dtype: dtype.startswith(("f", "bf"))),
    sh.sine.op_name: (sine, lambda dtype: dtype == "f64"),
    sh.cosine.op_name: (cosine, lambda dtype: dtype == "f64"),
    sh.tanh.op_name: (tanh, lambda dtype: dtype == "f64"),
    sh.tan.op_name: (tan, lambda dtype: dtype == "f64"),
    sh.atan2.op_name: (atan2, lambda dtype: dtype == "f64"),
    sh.cbrt.op_name: (cbrt, lambda dtype: dtype == "f64"),
}
"""The op each expansion replaces, and the element types it replaces it for."""


def expand_math(module: ir.Operation) -> None:
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        rule = _EXPANSIONS.get(op.name)
        if rule is not None and rule[1](sh.spec(op.results[0]).dtype):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    for op in found:
        with op.location, ir.InsertionPoint(op):
            expanded = _EXPANSIONS[op.name][0](*op.operands)
        op.results[0].replace_all_uses_with(expanded)
        op.erase()


@register
@dataclass
class TenzrExpandMath(Pass):
    flag: ClassVar[str] = "tenzr-expand-math"
    summary: ClassVar[str] = ("Rewrite float stablehlo.power, and float64 sine, cosine, tan, tanh, atan2 and cbrt, "
                              "into StableHLO that IREE compiles correctly (NumPy's results for negative and zero "
                              "bases; IREE's CPU backend has none of these in float64).")
    example_input: ClassVar[str] = """\
func.func @f(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = stablehlo.sine %x : tensor<3xf64>
  return %0 : tensor<3xf64>
}
"""

    def run(self, module: ir.Operation) -> None:
        expand_math(module)
