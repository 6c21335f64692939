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
    wrt = row.wrt or tuple(i for i, a in enumerate(inputs) if np.issubdtype(a.dtype, np.floating))
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
