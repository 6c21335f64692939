"""tenzr-grad at the IR level: coverage of the rule table, modes, activity analysis, calls,
custom VJPs and errors. Numeric checks compile with IREE in float64."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from harness import HESSIAN_SRC

from tenzr.compiler import compile_stablehlo, lower_to_stablehlo
from tenzr.dialect import make_context, parse_module
from tenzr.dialect.context import body_ops, functions
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ops import OPS
from tenzr.passes.rules import ADJOINTS, LOWERINGS, NO_DERIVATIVE, VJP_RULES
from tenzr.passes.tenzr_grad import differentiate
from tenzr.runtime import Program
from tenzr.targets import Target
from tenzr.tools import tenzr_opt


def test_every_op_has_a_lowering_and_a_rule_or_is_declared_non_differentiable():
    for name, opdef in OPS.items():
        assert name in LOWERINGS, f"{name} has no lowering"
        assert name in VJP_RULES, f"{name} has no VJP rule and is not declared non-differentiable"
        assert (VJP_RULES[name] is NO_DERIVATIVE) == (opdef.gradient == "none"), name
    assert set(LOWERINGS) == set(OPS)
    for name, rule in VJP_RULES.items():
        assert rule is NO_DERIVATIVE or ADJOINTS[name], f"{name}'s rule states no adjoint formula"


def compile_module(text: str, passes) -> Program:
    with make_context():
        module = parse_module(text)
        passes(module)
        lower_to_stablehlo(module)
        return Program(compile_stablehlo(str(module), Target()), Target())


def signature(module, name):
    f = functions(module)[name]
    return str(f.attributes["function_type"])


SRC = """
func.func @f(%x: tensor<3xf64>, %n: tensor<3xi32>, %y: tensor<3xf64>) -> tensor<f64> {
  %0 = "tenzr.mul"(%x, %x) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %1 = "tenzr.exp"(%y) : (tensor<3xf64>) -> tensor<3xf64>
  %2 = "tenzr.add"(%0, %1) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %3 = "tenzr.reduce_sum"(%2) : (tensor<3xf64>) -> tensor<f64>
  return %3 : tensor<f64>
}
"""


@pytest.mark.parametrize("mode, want", [
    ("grad", "(tensor<3xf64>, tensor<3xi32>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)"),
    ("value_and_grad", "(tensor<3xf64>, tensor<3xi32>, tensor<3xf64>) -> (tensor<f64>, tensor<3xf64>, tensor<3xf64>)"),
    ("vjp", "(tensor<3xf64>, tensor<3xi32>, tensor<3xf64>, tensor<f64>) -> (tensor<f64>, tensor<3xf64>, "
            "tensor<3xf64>)"),
])
def test_modes_add_the_contracted_signature(mode, want):
    with make_context():
        module = parse_module(SRC)
        differentiate(module, "f", (), mode)
        assert signature(module, f"f_{mode}") == want
        assert "f" in functions(module)


def test_activity_analysis_leaves_no_dead_adjoint_code():
    with make_context():
        module = parse_module(SRC)
        new = differentiate(module, "f", (0,), "grad")
        names = [op.name for op in body_ops(new)]
        # exp(y) reaches the output but does not depend on x: neither it nor an adjoint of it remains.
        assert "tenzr.exp" not in names and "stablehlo.exponential" not in names
        assert "tenzr.reduce_sum" not in names  # the forward value is not returned in grad mode


def test_inactive_arguments_get_zero_gradients():
    src = SRC.replace('"tenzr.exp"(%y)', '"tenzr.exp"(%x)')
    program = compile_module(src, lambda m: differentiate(m, "f", (0, 2), "grad"))
    x = np.array([0.5, -1.0, 2.0])
    gx, gy = program("f_grad", x, np.zeros(3, np.int32), np.ones(3))
    np.testing.assert_allclose(gx, 2 * x + np.exp(x))
    np.testing.assert_array_equal(gy, np.zeros(3))


def test_zero_gradient_ops_give_zero():
    src = """
    func.func @f(%x: tensor<4xf64>) -> tensor<f64> {
      %a = "tenzr.sign"(%x) : (tensor<4xf64>) -> tensor<4xf64>
      %b = "tenzr.floor"(%x) : (tensor<4xf64>) -> tensor<4xf64>
      %c = "tenzr.round"(%x) : (tensor<4xf64>) -> tensor<4xf64>
      %d = "tenzr.stop_gradient"(%x) : (tensor<4xf64>) -> tensor<4xf64>
      %i = "tenzr.argmax"(%x) {axis = 0} : (tensor<4xf64>) -> tensor<i64>
      %f = "tenzr.convert"(%i) : (tensor<i64>) -> tensor<f64>
      %s = "tenzr.add"(%a, %b) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
      %t = "tenzr.add"(%s, %c) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
      %u = "tenzr.mul"(%t, %d) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
      %v = "tenzr.reduce_sum"(%u) : (tensor<4xf64>) -> tensor<f64>
      %w = "tenzr.add"(%v, %f) : (tensor<f64>, tensor<f64>) -> tensor<f64>
      return %w : tensor<f64>
    }
    """
    program = compile_module(src, lambda m: differentiate(m, "f", (), "grad"))
    (g,) = program("f_grad", np.array([0.3, -1.7, 2.5, 4.2]))
    np.testing.assert_array_equal(g, np.zeros(4))


def test_convert_cotangent_converts_back_exactly():
    src = """
    func.func @f(%x: tensor<3xf32>) -> tensor<3xf64> {
      %0 = "tenzr.convert"(%x) : (tensor<3xf32>) -> tensor<3xf64>
      return %0 : tensor<3xf64>
    }
    """
    program = compile_module(src, lambda m: differentiate(m, "f", (), "vjp"))
    ct = np.array([1.0 / 3.0, 2.5e-8, -7.0])
    _, g = program("f_vjp", np.ones(3, np.float32), ct)
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g, ct.astype(np.float32))


def test_large_elementwise_values_are_recomputed_for_the_sweep():
    """y = exp(sin(x) * a) + b·x over 256x256 values: value_and_grad and vjp read recomputed
    copies (after an optimization barrier) and match the analytic derivative."""
    src = """
    func.func @f(%x: tensor<256x256xf64>, %a: tensor<f64>, %b: tensor<256x1xf64>) -> tensor<256x256xf64> {
      %0 = "tenzr.sin"(%x) : (tensor<256x256xf64>) -> tensor<256x256xf64>
      %1 = "tenzr.mul"(%0, %a) : (tensor<256x256xf64>, tensor<f64>) -> tensor<256x256xf64>
      %2 = "tenzr.exp"(%1) : (tensor<256x256xf64>) -> tensor<256x256xf64>
      %3 = "tenzr.mul"(%b, %x) : (tensor<256x1xf64>, tensor<256x256xf64>) -> tensor<256x256xf64>
      %4 = "tenzr.add"(%2, %3) : (tensor<256x256xf64>, tensor<256x256xf64>) -> tensor<256x256xf64>
      return %4 : tensor<256x256xf64>
    }
    func.func @g(%x: tensor<256x256xf64>, %a: tensor<f64>, %b: tensor<256x1xf64>) -> tensor<f64> {
      %0 = func.call @f(%x, %a, %b) : (tensor<256x256xf64>, tensor<f64>, tensor<256x1xf64>) -> tensor<256x256xf64>
      %1 = "tenzr.reduce_sum"(%0) : (tensor<256x256xf64>) -> tensor<f64>
      return %1 : tensor<f64>
    }
    """
    rng = np.random.default_rng(7)
    x, a, b = rng.standard_normal((256, 256)), np.array(0.7), rng.standard_normal((256, 1))
    ct = rng.standard_normal((256, 256))
    inner = np.exp(np.sin(x) * a)
    dx = inner * a * np.cos(x) + b  # d/dx, elementwise
    barriers = []

    def transform(module):
        differentiate(module, "f", (), "vjp")
        differentiate(module, "g", (), "value_and_grad")
        barriers.extend(op for name in ("f_vjp", "g_value_and_grad")
                        for op in body_ops(functions(module)[name]) if op.name == "stablehlo.optimization_barrier")

    program = compile_module(src, transform)
    assert len(barriers) == 2
    y, gx, ga, gb = program("f_vjp", x, a, b, ct)
    np.testing.assert_allclose(y, inner + b * x, rtol=1e-12)
    np.testing.assert_allclose(gx, ct * dx, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ga, np.sum(ct * inner * np.sin(x)), rtol=1e-10)
    np.testing.assert_allclose(gb, np.sum(ct * x, axis=1, keepdims=True), rtol=1e-10)
    value, gx, ga, gb = program("g_value_and_grad", x, a, b)
    np.testing.assert_allclose(value, np.sum(inner + b * x), rtol=1e-12)
    np.testing.assert_allclose(gx, dx, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gb, np.sum(x, axis=1, keepdims=True), rtol=1e-10)


def test_long_transcendental_cones_are_left_to_iree():
    """exp(sin(exp(sin(x)))) over 256x256 values holds 4 transcendental ops: recomputing it
    for the sweep would cost more than the values IREE stores, so no copy (and no barrier)
    is made, and the gradient still matches the analytic one."""
    src = """
    func.func @g(%x: tensor<256x256xf64>) -> tensor<f64> {
      %0 = "tenzr.sin"(%x) : (tensor<256x256xf64>) -> tensor<256x256xf64>
      %1 = "tenzr.exp"(%0) : (tensor<256x256xf64>) -> tensor<256x256xf64>
      %2 = "tenzr.sin"(%1) : (tensor<256x256xf64>) -> tensor<256x256xf64>
      %3 = "tenzr.exp"(%2) : (tensor<256x256xf64>) -> tensor<256x256xf64>
      %4 = "tenzr.reduce_sum"(%3) : (tensor<256x256xf64>) -> tensor<f64>
      return %4 : tensor<f64>
    }
    """
    x = np.random.default_rng(8).standard_normal((256, 256))
    barriers = []

    def transform(module):
        differentiate(module, "g", (), "value_and_grad")
        barriers.extend(op for op in body_ops(functions(module)["g_value_and_grad"])
                        if op.name == "stablehlo.optimization_barrier")

    program = compile_module(src, transform)
    assert barriers == []
    value, gx = program("g_value_and_grad", x)
    y = np.exp(np.sin(np.exp(np.sin(x))))
    np.testing.assert_allclose(value, np.sum(y), rtol=1e-12)
    np.testing.assert_allclose(gx, y * np.cos(np.exp(np.sin(x))) * np.exp(np.sin(x)) * np.cos(x), rtol=1e-12,
                               atol=1e-14)


def test_calls_are_differentiated_through():
    src = """
    func.func private @square(%x: tensor<2xf64>) -> tensor<2xf64> {
      %0 = "tenzr.mul"(%x, %x) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
      return %0 : tensor<2xf64>
    }
    func.func @f(%x: tensor<2xf64>) -> tensor<f64> {
      %0 = call @square(%x) : (tensor<2xf64>) -> tensor<2xf64>
      %1 = call @square(%0) : (tensor<2xf64>) -> tensor<2xf64>
      %2 = "tenzr.reduce_sum"(%1) : (tensor<2xf64>) -> tensor<f64>
      return %2 : tensor<f64>
    }
    """
    program = compile_module(src, lambda m: differentiate(m, "f", (), "grad"))
    x = np.array([0.5, -2.0])
    np.testing.assert_allclose(program("f_grad", x)[0], 4 * x ** 3)


CUSTOM = """
func.func @g(%x: tensor<2xf64>) -> tensor<2xf64> attributes {tenzr.custom_vjp = @g_bwd} {
  %0 = "tenzr.exp"(%x) : (tensor<2xf64>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}
func.func @g_bwd(%x: tensor<2xf64>, %ct: tensor<2xf64>) -> tensor<2xf64> {
  %c = "tenzr.constant"() {value = dense<10.0> : tensor<2xf64>} : () -> tensor<2xf64>
  %0 = "tenzr.mul"(%ct, %c) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}
func.func @f(%x: tensor<2xf64>) -> tensor<f64> {
  %0 = call @g(%x) : (tensor<2xf64>) -> tensor<2xf64>
  %1 = "tenzr.mul"(%0, %x) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  %2 = "tenzr.reduce_sum"(%1) : (tensor<2xf64>) -> tensor<f64>
  return %2 : tensor<f64>
}
"""


def test_custom_vjp_attribute_routes_through_bwd():
    program = compile_module(CUSTOM, lambda m: (differentiate(m, "f", (), "grad"), differentiate(m, "g", (), "vjp")))
    x = np.array([0.2, -1.0])
    # d/dx [g(x)·x] with g's derivative replaced by 10: 10·x + g(x)
    np.testing.assert_allclose(program("f_grad", x)[0], 10 * x + np.exp(x))
    _, g = program("g_vjp", x, np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, [10.0, 20.0])


def opt(capsys, text, *args) -> tuple[int, str]:
    import io
    import sys

    sys.stdin = io.StringIO(text)
    try:
        code = tenzr_opt.main(["-", *args])
    finally:
        sys.stdin = sys.__stdin__
    captured = capsys.readouterr()
    return code, captured.err


@pytest.mark.parametrize("options, message", [
    ("func=h", "tenzr-grad: no function named '@h' (functions: @f)"),
    ("func=f wrt=3", "wrt index 3 is out of range: '@f' has 3 arguments"),
    ("func=f wrt=1", "argument 1 of '@f' has type tensor<3xi32>; only floating-point arguments can be differentiated"),
    ("func=f mode=sideways", "option 'mode' of pass 'tenzr-grad' must be one of grad, vjp, value_and_grad"),
])
def test_option_errors(capsys, options, message):
    code, err = opt(capsys, SRC, f"--tenzr-grad={options}")
    assert code != 0 and message in err and "Traceback" not in err


def test_non_scalar_result_in_grad_mode(capsys):
    src = SRC.replace("tensor<f64>", "tensor<1xf64>").replace('"tenzr.reduce_sum"(%2) :',
                                                               '"tenzr.reduce_sum"(%2) {keepdims = true} :')
    code, err = opt(capsys, src, "--tenzr-grad=func=f")
    assert code == 1
    assert "<stdin>:2:1: error: tenzr-grad: mode=grad needs a floating-point scalar result" in err


def test_op_without_rule_names_op_and_location(capsys):
    src = """func.func @f(%x: tensor<2xf32>) -> tensor<f32> {
      %0 = chlo.bessel_i1e %x : tensor<2xf32> -> tensor<2xf32>
      %1 = "tenzr.reduce_sum"(%0) : (tensor<2xf32>) -> tensor<f32>
      return %1 : tensor<f32>
    }"""
    code, err = opt(capsys, src, "--tenzr-grad=func=f")
    assert code == 1
    assert "<stdin>:2:12: error: 'chlo.bessel_i1e' op has no gradient rule" in err


def test_custom_vjp_with_wrong_signature(capsys):
    src = CUSTOM.replace("func.func @g_bwd(%x: tensor<2xf64>, %ct: tensor<2xf64>)",
                         "func.func @g_bwd(%ct: tensor<2xf64>)")
    code, err = opt(capsys, src, "--tenzr-grad=func=f")
    assert code == 1 and "custom VJP '@g_bwd' of '@g' must have type" in err


def test_error_messages_are_tenzr_errors():
    with make_context():
        module = parse_module(SRC)
        with pytest.raises(TenzrError, match="already exists"):
            differentiate(module, "f", (), "grad")
            differentiate(module, "f", (), "grad")


def test_rematerialized_cones_keep_their_attributes():
    """A comparison (which has an attribute) inside a recomputed cone: where(x > 0, x², eˣ)
    over 256x256 values, against the analytic value and gradient."""
    src = """
    !t = tensor<256x256xf64>
    func.func @g(%x: !t) -> tensor<f64> {
      %z = "tenzr.constant"() {value = dense<0.0> : !t} : () -> !t
      %c = "tenzr.compare"(%x, %z) {direction = "gt"} : (!t, !t) -> tensor<256x256xi1>
      %0 = "tenzr.mul"(%x, %x) : (!t, !t) -> !t
      %1 = "tenzr.exp"(%x) : (!t) -> !t
      %2 = "tenzr.select"(%c, %0, %1) : (tensor<256x256xi1>, !t, !t) -> !t
      %3 = "tenzr.reduce_sum"(%2) : (!t) -> tensor<f64>
      return %3 : tensor<f64>
    }
    """
    x = np.random.default_rng(9).standard_normal((256, 256))
    barriers = []

    def transform(module):
        differentiate(module, "g", (), "value_and_grad")
        barriers.extend(op for op in body_ops(functions(module)["g_value_and_grad"])
                        if op.name == "stablehlo.optimization_barrier")

    program = compile_module(src, transform)
    assert len(barriers) == 1  # the cone was recomputed
    value, gx = program("g_value_and_grad", x)
    np.testing.assert_allclose(value, np.sum(np.where(x > 0, x * x, np.exp(x))), rtol=1e-12)
    np.testing.assert_allclose(gx, np.where(x > 0, 2 * x, np.exp(x)), rtol=1e-12)


def test_the_tools_take_a_gradient_of_a_gradient(tmp_path):
    """`--tenzr-grad=func=f --tenzr-grad="func=f_grad mode=vjp"` is a Hessian-vector
    product, through tenzr-opt, tenzr-compile and tenzr-run as a user runs them. For
    f = Σ tanh(A w): ∇f = Aᵀ(1 - t²), H = Aᵀ diag(-2t(1 - t²)) A with t = tanh(A w)."""
    rng = np.random.default_rng(7)
    a, w, v = rng.standard_normal((4, 3)), rng.standard_normal((3, 1)), rng.standard_normal((3, 1))
    (tmp_path / "f.mlir").write_text(HESSIAN_SRC)
    for i, x in enumerate([a, w, v]):
        np.save(tmp_path / f"in{i}.npy", x)
    tools = Path(sys.executable).parent
    commands = [
        [tools / "tenzr-opt", "f.mlir", "--tenzr-grad=func=f wrt=1", "--tenzr-grad=func=f_grad wrt=1 mode=vjp",
         "-o", "h.mlir"],
        [tools / "tenzr-compile", "h.mlir", "--target=cpu", "-o", "h.vmfb"],
        [tools / "tenzr-run", "h.vmfb", "--function", "f_grad_vjp", "--input", "in0.npy", "--input", "in1.npy",
         "--input", "in2.npy", "--output-dir", "out"],
    ]
    for command in commands:
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    grad, hvp = (np.load(tmp_path / "out" / f"result{i}.npy") for i in range(2))
    t = np.tanh(a @ w)
    np.testing.assert_allclose(grad, a.T @ (1 - t ** 2), rtol=1e-12)
    np.testing.assert_allclose(hvp, a.T @ (-2 * t * (1 - t ** 2) * (a @ v)), rtol=1e-12, atol=1e-14)


IF_SRC = """
func.func @f(%p: tensor<i1>, %x: tensor<3xf64>) -> tensor<3xf64> {
  %r = "stablehlo.if"(%p) ({
    %e = stablehlo.exponential %x : tensor<3xf64>
    stablehlo.return %e : tensor<3xf64>
  }, {
    %s = stablehlo.multiply %x, %x : tensor<3xf64>
    stablehlo.return %s : tensor<3xf64>
  }) : (tensor<i1>) -> tensor<3xf64>
  return %r : tensor<3xf64>
}
"""


@pytest.mark.parametrize("pred", [True, False])
def test_stablehlo_if_differentiates_the_branch_taken(pred):
    program = compile_module(IF_SRC, lambda m: differentiate(m, "f", (1,), "vjp"))
    x, ybar = np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.5, -2.0])
    y, xbar = program("f_vjp", np.array(pred), x, ybar)
    np.testing.assert_allclose(y, np.exp(x) if pred else x * x, rtol=1e-14)
    np.testing.assert_allclose(xbar, ybar * (np.exp(x) if pred else 2 * x), rtol=1e-14)
