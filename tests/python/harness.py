"""Shared test machinery: build one module from a table of single-op rows, compile it
once with IREE, and check forward values and VJPs numerically."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from tenzr.compiler import compile_stablehlo, lower_to_stablehlo
from tenzr.dialect import TensorSpec, make_context
from tenzr.dialect.functions import build_function, new_module
from tenzr.dialect.types import element_type_of
from tenzr.passes.tenzr_grad import differentiate
from tenzr.runtime import Program
from tenzr.targets import Target


def close(got, want, rtol=1e-10, atol=1e-12):
    """Asserts the pytree `got` equals JAX's `want` (same structure and shapes), or want()
    run as one program under jax.jit: JAX run op by op compiles each op apart, about 10x
    the time of a reference as a whole (test_forward.py: 98 -> 67 s)."""
    import jax

    if callable(want):
        want = jax.jit(want)()
    got_leaves, got_tree = jax.tree_util.tree_flatten(got)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    assert got_tree == want_tree, (got_tree, want_tree)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        assert np.shape(g) == np.shape(w), (np.shape(g), np.shape(w))
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


# Tolerances per element type: forward values against NumPy.
FORWARD_TOL = {"float16": (2e-2, 2e-2), "float32": (2e-5, 2e-6), "float64": (1e-12, 1e-13)}
# Directional-derivative agreement (central differences in float64, step H) of a VJP
# computed in float64, and of one computed in float32.
GRAD_RTOL = 1e-6
GRAD_RTOL_F32 = 1e-4
H = 1e-6


@dataclass
class Row:
    """One op under test: `build(args)` emits it from the function's arguments, `ref` is an
    independent NumPy implementation of the forward value."""

    name: str
    build: Callable[[list], object]
    inputs: Sequence[np.ndarray]
    ref: Callable[..., np.ndarray] | None = None
    grad: bool = True
    wrt: tuple[int, ...] = ()
    extra: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return self.name


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def spec_of_array(a: np.ndarray) -> TensorSpec:
    return TensorSpec(tuple(a.shape), element_type_of(a.dtype))


def wrt_of(row: Row, inputs: Sequence[np.ndarray]) -> tuple[int, ...]:
    """The inputs a row differentiates: its `wrt`, else every floating-point one."""
    return row.wrt or tuple(i for i, a in enumerate(inputs) if np.issubdtype(a.dtype, np.floating))


def as_f64(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64) if np.issubdtype(a.dtype, np.floating) else a


def compile_rows(rows: Sequence[Row], *, grad: bool, target: Target | None = None, float64: bool = True) -> Program:
    """One module holding `@rN` for each row, and `@rN_vjp` when `grad` (then in float64,
    unless `float64` is False)."""
    target = target or Target()
    return Program(compile_rows_vmfb(rows, grad=grad, target=target, float64=float64), target)


def compile_rows_vmfb(rows: Sequence[Row], *, grad: bool, target: Target, float64: bool = True) -> bytes:
    """`compile_rows`' compiled module, not loaded (it compiles for any target here)."""
    with make_context():
        module = new_module()
        for i, row in enumerate(rows):
            inputs = [as_f64(a) for a in row.inputs] if grad and float64 else row.inputs
            build_function(module, f"r{i}", [spec_of_array(a) for a in inputs], row.build)
            if grad:
                differentiate(module, f"r{i}", row.wrt, "vjp")
        lower_to_stablehlo(module, target)
        text = str(module)
    return compile_stablehlo(text, target)


def compile_second_order_rows(rows: Sequence[Row]) -> Program:
    """For each row, `@rN_obj(inputs, ȳ, w) = Σ <vjp(inputs, ȳ), w>` (its first-order VJP,
    dotted with fixed weights) and that objective's gradient `@rN_obj_grad`, in float64. The
    op `@rN` and its VJP are private: inlined there, not compiled again (the VJP table has them)."""
    from tenzr.dialect.context import functions
    from tenzr.dialect.ir_imports import ir
    from tenzr.dialect.types import spec_of_type

    def add(module) -> None:
        for i, row in enumerate(rows):
            inputs = [as_f64(a) for a in row.inputs]
            wrt = wrt_of(row, inputs)
            build_function(module, f"r{i}", [spec_of_array(a) for a in inputs], row.build)
            vjp = differentiate(module, f"r{i}", wrt, "vjp")
            vjp_type = ir.FunctionType(ir.TypeAttr(vjp.attributes["function_type"]).value)
            specs = [spec_of_array(a) for a in inputs]
            cts = [spec_of_array(inputs[k]) for k in wrt]
            build_function(module, f"r{i}_obj", [*specs, spec_of_type(vjp_type.results[0]), *cts],
                           _dotted_vjp(f"r{i}_vjp", vjp_type, len(inputs)))
            differentiate(module, f"r{i}_obj", wrt, "grad")
        for name, func in functions(module).items():
            if not name.endswith(("_obj", "_obj_grad")):
                func.attributes["sym_visibility"] = ir.StringAttr.get("private")

    return _cpu_program(add)


def _cpu_program(add: Callable[[object], None]) -> Program:
    """A module filled by `add(module)`, lowered and compiled for the CPU."""
    target = Target()
    with make_context():
        module = new_module()
        add(module)
        lower_to_stablehlo(module, target)
        text = str(module)
    return Program(compile_stablehlo(text, target), target)


def _dotted_vjp(callee: str, vjp_type, count: int) -> Callable[[list], object]:
    """The body of Σ <callee(inputs, ȳ)[1:], w> over the arguments (inputs, ȳ, w...)."""
    from tenzr.dialect.ir_imports import ir
    from tenzr.passes import stablehlo as sh

    def body(args: list):
        call = ir.Operation.create("func.call", results=list(vjp_type.results), operands=args[:count + 1],
                                   attributes={"callee": ir.FlatSymbolRefAttr.get(callee)})
        total = None
        for g, w in zip(list(call.results)[1:], args[count + 1:], strict=True):
            term = sh.reduce(sh.multiply(g, w), 0, tuple(range(sh.spec(g).rank)), "add")
            total = term if total is None else sh.add(total, term)
        return total

    return body


def check_second_order(program: Program, index: int, row: Row) -> None:
    """The gradient of `@rN_obj` (second derivatives of the op) against central
    differences of `@rN_obj`, along random directions."""
    inputs = [as_f64(a) for a in row.inputs]
    wrt = wrt_of(row, inputs)
    rng = rng_for(row.name + "/second")
    ct = rng.standard_normal(np.shape(row.ref(*inputs)))
    weights = [rng.standard_normal(inputs[k].shape) for k in wrt]
    args = [*inputs, ct, *weights]
    grads = program(f"r{index}_obj_grad", *args)
    for _ in range(2):
        v = [rng.standard_normal(inputs[k].shape) for k in wrt]

        def shifted(sign: float, v: list[np.ndarray] = v) -> float:
            moved = list(args)
            for d, k in zip(v, wrt, strict=True):
                moved[k] = inputs[k] + sign * H * d
            return float(program(f"r{index}_obj", *moved)[0])

        numeric = (shifted(1) - shifted(-1)) / (2 * H)
        analytic = float(sum(np.sum(g * d) for g, d in zip(grads, v, strict=True)))
        scale = abs(numeric) + abs(analytic) + 1e-8
        assert abs(numeric - analytic) <= 1e-5 * scale + 1e-6, (
            f"{row.name}: finite differences of the VJP give {numeric!r}, its gradient gives {analytic!r}")


def check_forward(program: Program, index: int, row: Row) -> None:
    (out,) = program(f"r{index}", *row.inputs)
    want = np.asarray(row.ref(*row.inputs))
    assert out.shape == want.shape, f"{row.name}: shape {out.shape} != {want.shape}"
    assert out.dtype == want.dtype, f"{row.name}: dtype {out.dtype} != {want.dtype}"
    if np.issubdtype(want.dtype, np.floating):
        rtol, atol = FORWARD_TOL[want.dtype.name]
        np.testing.assert_allclose(out, want, rtol=rtol, atol=atol, err_msg=row.name)
    else:
        np.testing.assert_array_equal(out, want, err_msg=row.name)


def check_vjp(program: Program, index: int, row: Row, directions: int = 2, *, float64: bool = True) -> None:
    """<ȳ, J v> by central differences in float64 against <vjp(ȳ), v>.

    With `float64` the program was compiled in float64 and differences its own forward;
    otherwise (a float32 program) they come from the row's NumPy reference, and the VJP's
    float32 rounding sets the tolerance."""
    inputs = [as_f64(a) for a in row.inputs] if float64 else list(row.inputs)
    wrt = wrt_of(row, inputs)
    rng = rng_for(row.name + "/vjp")
    (y,) = program(f"r{index}", *inputs)
    ct = rng.standard_normal(y.shape).astype(y.dtype)
    out = program(f"r{index}_vjp", *inputs, ct)
    np.testing.assert_allclose(out[0], y, rtol=1e-12 if float64 else 1e-6, err_msg=f"{row.name}: vjp's primal output")
    grads = out[1:]
    assert len(grads) == len(wrt)
    for g, i in zip(grads, wrt, strict=True):
        assert g.shape == inputs[i].shape and g.dtype == inputs[i].dtype, row.name
    exact = [as_f64(a) for a in inputs]

    def forward(moved: list[np.ndarray]) -> np.ndarray:
        return program(f"r{index}", *moved)[0] if float64 else np.asarray(row.ref(*moved), np.float64)

    rtol, atol = (GRAD_RTOL, 1e-7) if float64 else (GRAD_RTOL_F32, 1e-5)
    for _ in range(directions):
        v = [rng.standard_normal(exact[i].shape) for i in wrt]

        def shifted(sign: float, v: list[np.ndarray] = v) -> np.ndarray:
            moved = list(exact)
            for d, i in zip(v, wrt, strict=True):
                moved[i] = exact[i] + sign * H * d
            return forward(moved)

        numeric = float(np.sum(as_f64(ct) * (shifted(1) - shifted(-1)) / (2 * H)))
        analytic = float(sum(np.sum(as_f64(g) * d) for g, d in zip(grads, v, strict=True)))
        scale = abs(numeric) + abs(analytic) + 1e-8
        assert abs(numeric - analytic) <= rtol * scale + atol, (
            f"{row.name}: finite differences give {numeric!r}, the VJP gives {analytic!r}")


def compile_jvp_rows(rows: Sequence[Row]) -> Program:
    """For each row, `@rN`, its JVP `@rN_jvp` (tenzr-jvp) and its VJP `@rN_vjp`, in float64."""
    from tenzr.passes.tenzr_jvp import jvp_function

    def add(module) -> None:
        for i, row in enumerate(rows):
            inputs = [as_f64(a) for a in row.inputs]
            wrt = wrt_of(row, inputs)
            build_function(module, f"r{i}", [spec_of_array(a) for a in inputs], row.build)
            jvp_function(module, f"r{i}", wrt)
            differentiate(module, f"r{i}", wrt, "vjp")

    return _cpu_program(add)


def check_jvp(program: Program, index: int, row: Row) -> None:
    """The JVP along random directions against central differences of the forward, and
    against the VJP: <J v, u> == <v, Jᵀ u>."""
    inputs = [as_f64(a) for a in row.inputs]
    wrt = wrt_of(row, inputs)
    rng = rng_for(row.name + "/jvp")
    (y,) = program(f"r{index}", *inputs)
    for _ in range(2):
        v = [rng.standard_normal(inputs[i].shape) for i in wrt]
        value, tangent = program(f"r{index}_jvp", *inputs, *v)
        np.testing.assert_allclose(value, y, rtol=1e-12, err_msg=f"{row.name}: jvp's primal output")
        assert tangent.shape == y.shape and tangent.dtype == y.dtype, row.name

        def shifted(sign: float, v: list[np.ndarray] = v) -> np.ndarray:
            moved = list(inputs)
            for d, i in zip(v, wrt, strict=True):
                moved[i] = inputs[i] + sign * H * d
            return program(f"r{index}", *moved)[0]

        numeric = (shifted(1) - shifted(-1)) / (2 * H)
        error = float(np.linalg.norm(tangent - numeric))
        scale = float(np.linalg.norm(tangent) + np.linalg.norm(numeric))
        assert error <= GRAD_RTOL * scale + 1e-7, (
            f"{row.name}: the JVP differs from finite differences by {error:.3g} (norms {scale:.3g})")
        u = rng.standard_normal(y.shape)
        grads = program(f"r{index}_vjp", *inputs, u)[1:]
        forward = float(np.sum(tangent * u))
        reverse = float(sum(np.sum(g * d) for g, d in zip(grads, v, strict=True)))
        assert abs(forward - reverse) <= 1e-10 * (abs(forward) + abs(reverse)) + 1e-12, (
            f"{row.name}: <jvp(v), u> = {forward!r} but <v, vjp(u)> = {reverse!r}")


BATCH = 3
"""The batch size of the batching tests."""


def batched_inputs(row: Row) -> list[np.ndarray]:
    """BATCH versions of each input, stacked: permutations of its elements (so values stay
    in the op's domain and indices in range); an integer scalar (a start index) moves by
    -1, 0, +1 ..., so each element slices somewhere else."""
    rng = rng_for(row.name + "/batch")

    def versions(a: np.ndarray) -> np.ndarray:
        if a.ndim == 0 and a.dtype.kind == "i":
            return a + np.arange(BATCH, dtype=a.dtype) - 1
        return np.stack([rng.permutation(a.ravel()).reshape(a.shape) for _ in range(BATCH)])

    return [versions(a) for a in row.inputs]


def compile_batch_rows(rows: Sequence[Row]) -> Program:
    """For each row, `@rN`, `@rN_batch` (tenzr-batch, every argument batched at 0) and
    `@rN_first_batch` (only the first argument batched, at its last axis)."""
    from tenzr.dialect.ir_imports import ir
    from tenzr.passes.tenzr_batch import batch_function

    def add(module) -> None:
        for i, row in enumerate(rows):
            build_function(module, f"r{i}", [spec_of_array(a) for a in row.inputs], row.build)
            first = batch_function(module, f"r{i}", [-1, *[None] * (len(row.inputs) - 1)], BATCH)
            first.attributes["sym_name"] = ir.StringAttr.get(f"r{i}_first_batch")
            batch_function(module, f"r{i}", [0] * len(row.inputs), BATCH)

    return _cpu_program(add)


def check_batch(program: Program, index: int, row: Row) -> None:
    """The batched op against the op run on each element: every operand batched, then the
    first alone (batched along its last axis, the others as they are)."""
    inputs = batched_inputs(row)
    (got,) = program(f"r{index}_batch", *inputs)
    want = np.stack([program(f"r{index}", *(a[k] for a in inputs))[0] for k in range(BATCH)])
    assert got.shape == want.shape and got.dtype == want.dtype, (row.name, got.shape, want.shape)
    np.testing.assert_array_equal(got, want, err_msg=row.name)
    first = np.moveaxis(inputs[0], 0, -1)
    (got,) = program(f"r{index}_first_batch", first, *row.inputs[1:])
    want = np.stack([program(f"r{index}", first[..., k], *row.inputs[1:])[0] for k in range(BATCH)])
    np.testing.assert_array_equal(got, want, err_msg=f"{row.name}, the first operand batched")


# f = Σ tanh(A w), whose gradient and Hessian the tools tests know in closed form:
# ∇f = Aᵀ(1 - t²), H = Aᵀ diag(-2t(1 - t²)) A with t = tanh(A w).
HESSIAN_SRC = """
func.func @f(%a: tensor<4x3xf64>, %w: tensor<3x1xf64>) -> tensor<f64> {
  %0 = "tenzr.matmul"(%a, %w) : (tensor<4x3xf64>, tensor<3x1xf64>) -> tensor<4x1xf64>
  %1 = "tenzr.tanh"(%0) : (tensor<4x1xf64>) -> tensor<4x1xf64>
  %2 = "tenzr.reduce_sum"(%1) : (tensor<4x1xf64>) -> tensor<f64>
  return %2 : tensor<f64>
}
"""
