"""Generates the reference docs from the code, so they cannot drift:

- docs/dialect.md from the op definitions in dialect/ops.py,
- docs/passes.md from the pass registry (each pass run on its example),
- the supported-op table in README.md (between the `<!-- ops -->` markers).

    python -m tenzr.tools.gen_docs [--check]

`--check` exits 1 when a file is stale (the test suite runs it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from tenzr.dialect import TensorSpec, make_context, parse_module
from tenzr.dialect import ops as T
from tenzr.dialect.functions import build_function, new_module
from tenzr.dialect.opdef import REQUIRED, OpDef, PerDim, dense_constant
from tenzr.dialect.verify import verify_module
from tenzr.passes import PASSES
from tenzr.passes.registry import option_help
from tenzr.passes.rules import ADJOINTS, JVP_RULES, NO_DERIVATIVE, TRANSPOSED, VJP_RULES

ROOT = Path(__file__).resolve().parents[1]


def f32(*shape: int) -> TensorSpec:
    return TensorSpec(shape, "f32")


def i64(*shape: int) -> TensorSpec:
    return TensorSpec(shape, "i64")


# op -> (operand types, attributes, builder keyword arguments)
EXAMPLES: dict[str, tuple] = {
    "constant": ([], {"value": "dense"}, {}),
    "compare": ([f32(2, 3), f32(3)], {"direction": "lt"}, {}),
    "select": ([TensorSpec((2, 3), "i1"), f32(2, 3), f32()], {}, {}),
    "convert": ([f32(3)], {}, {"result": TensorSpec((3,), "f16")}),
    "bitcast_convert": ([f32(3)], {}, {"result": TensorSpec((3,), "i32")}),
    **{name: ([TensorSpec((2, 3), "i32"), TensorSpec((3,), "i32")], {}, {}) for name in (
        "bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right_logical", "shift_right_arithmetic")},
    **{name: ([TensorSpec((3,), "i32")], {}, {}) for name in ("bitwise_not", "population_count", "clz")},
    "reduce_precision": ([f32(3)], {"exponent_bits": 5, "mantissa_bits": 2}, {}),
    "real": ([TensorSpec((3,), "complex<f32>")], {}, {}),
    "imag": ([TensorSpec((3,), "complex<f32>")], {}, {}),
    "matmul": ([f32(2, 3, 4), f32(4, 5)], {}, {}),
    "convolution": ([f32(1, 2, 5, 5), f32(4, 2, 3, 3)], {"window_strides": [2, 2], "padding_low": [1, 1],
                                                        "padding_high": [1, 1]}, {}),
    "reshape": ([f32(2, 3)], {}, {"result": f32(3, 2)}),
    "transpose": ([f32(2, 3)], {"permutation": [1, 0]}, {}),
    "broadcast_to": ([f32(3)], {}, {"result": f32(2, 3)}),
    "pad": ([f32(2, 3), f32()], {"low": [1, 0], "high": [0, 1], "interior": [0, 1]}, {}),
    "slice": ([f32(4, 6)], {"start": [0, 1], "stop": [4, 6], "step": [2, 2]}, {}),
    "reverse": ([f32(2, 3)], {"dimensions": [1]}, {}),
    "concatenate": ([f32(2, 3), f32(1, 3)], {"axis": 0}, {}),
    "gather": ([f32(4, 3), i64(2)], {"axis": 0}, {}),
    "take_along_axis": ([f32(4, 3), i64(4, 1)], {"axis": 1}, {}),
    "scatter": ([f32(4, 3), i64(2), f32(2, 3)], {"axis": 0, "mode": "add"}, {}),
    "dynamic_slice": ([f32(4, 3), TensorSpec((), "i32"), TensorSpec((), "i32")], {"sizes": [2, 2]}, {}),
    "dynamic_update_slice": ([f32(4, 3), f32(2, 2), TensorSpec((), "i32"), TensorSpec((), "i32")], {}, {}),
    "argmax": ([f32(2, 3)], {"axis": 1}, {}),
    "argmin": ([f32(2, 3)], {"axis": 1}, {}),
    "sort": ([f32(2, 3)], {"axis": 1, "descending": True}, {}),
    "argsort": ([f32(2, 3)], {"axis": 1}, {}),
    "iota": ([], {"dimension": 0}, {"result": TensorSpec((4,), "i32")}),
    "custom_call": ([f32(3)], {"call_target_name": "my.softplus"}, {"result": f32(3)}),
    "debug_print": ([f32(3)], {"key": '{"tz.debug.print": "x = {}", "args": {"l": [{"l": [{"a": 0}]}, {"d": []}]}}'},
                    {}),
}


_LOOP = """func.func @example(%x: tensor<3xf32>) -> tensor<3xf32> {
  %zero = "tenzr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %r:2 = "tenzr.while"(%zero, %x) ({
  ^bb0(%i: tensor<i32>, %v: tensor<3xf32>):
    %n = "tenzr.constant"() {value = dense<10> : tensor<i32>} : () -> tensor<i32>
    %c = "tenzr.compare"(%i, %n) {direction = "lt"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "tenzr.yield"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %v: tensor<3xf32>):
    %one = "tenzr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %next = "tenzr.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %w = "tenzr.sin"(%v) : (tensor<3xf32>) -> tensor<3xf32>
    "tenzr.yield"(%next, %w) : (tensor<i32>, tensor<3xf32>) -> ()
  }) : (tensor<i32>, tensor<3xf32>) -> (tensor<i32>, tensor<3xf32>)
  return %r#1 : tensor<3xf32>
}"""
_CASE = """func.func @example(%i: tensor<i32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %r = "tenzr.case"(%i, %x) ({
  ^bb0(%v: tensor<3xf32>):
    %e = "tenzr.exp"(%v) : (tensor<3xf32>) -> tensor<3xf32>
    "tenzr.yield"(%e) : (tensor<3xf32>) -> ()
  }, {
  ^bb0(%v: tensor<3xf32>):
    "tenzr.yield"(%v) : (tensor<3xf32>) -> ()
  }) : (tensor<i32>, tensor<3xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}"""
REGION_EXAMPLES = {"while": _LOOP, "case": _CASE, "yield": _CASE}
"""Region ops are shown in a function (parsed and verified here, so they stay valid)."""


def _region_example(text: str) -> str:
    with make_context():
        module = parse_module(text)
        errors = verify_module(module)
        assert not errors, errors
        body = str(module).splitlines()[2:-3]
    return "\n".join(line[4:] for line in body)


def _example(opdef: OpDef) -> str:
    name = opdef.mnemonic
    if name in REGION_EXAMPLES:
        return _region_example(REGION_EXAMPLES[name])
    if name in EXAMPLES:
        specs, attrs, extra = EXAMPLES[name]
    elif name.startswith("reduce_"):
        specs, attrs, extra = [f32(2, 3)], {"axes": [1]}, {}
    elif opdef.operands == ("x", "y"):
        specs, attrs, extra = [f32(2, 3), f32(3)], {}, {}
    else:
        specs, attrs, extra = [f32(2, 3)], {}, {}
    if attrs.get("value") == "dense":
        attrs = {"value": None}
    with make_context():
        module = new_module()

        def body(args):
            if name == "constant":
                return T.constant(value=dense_constant(np.array([1.0, 2.0], np.float32), f32(2)))
            return opdef(*args, **extra, **attrs)

        build_function(module, "example", specs, body)
        text = module.get_asm(print_generic_op_form=True)
    lines = [line.strip() for line in text.splitlines() if '"tenzr.' in line]
    return "\n".join(lines)


def _attr_row(attr) -> str:
    if attr.default is REQUIRED:
        default = "required"
    elif isinstance(attr.default, PerDim):
        default = f"{attr.default.value} per {'spatial ' if attr.default.skip else ''}dim"
    else:
        default = repr(attr.default).replace("()", "[] (all)")
    return f"| `{attr.name}` | {attr.kind.spelling} | {default} |"


def dialect_md() -> str:
    out = ["# The `tenzr` dialect", "",
           "Generated from `dialect/ops.py` by `python -m tenzr.tools.gen_docs`; do not edit.", "",
           "Types are ranked, statically shaped builtin tensors of f16, bf16, f32, f64, i1, the signless "
           "integers i8, i16, i32 and i64, the unsigned ui8, ui16, ui32 and ui64, complex<f32> or complex<f64>. "
           "Elementwise n-ary ops broadcast like NumPy; operand element types must match. Ops are written in "
           "MLIR's generic form. Every op below is verified by `tenzr-verify`, lowered by "
           "`convert-tenzr-to-stablehlo` and differentiated by `tenzr-grad` (reverse) and `tenzr-jvp` (forward). "
           "A tangent given as \"the adjoint, transposed\" is derived from the op's VJP rule, which is linear in "
           "its cotangent.", ""]
    for name in sorted(T.OPS):
        opdef = T.OPS[name]
        out += [f"## `{name}`", "", opdef.summary, ""]
        operands = ", ".join(f"`{o}`" for o in opdef.operands) or "none"
        out += [f"- Operands: {operands}"]
        rule = "written by the user and checked" if opdef.given_result else "inferred from operands and attributes"
        out += [f"- Result type: {rule}"]
        gradient = ("with the region it ends, by its region op's rule" if opdef.terminator else
                    "none (contributes zero)" if opdef.gradient == "none" else ADJOINTS[name])
        out += [f"- Adjoint: {gradient}"]
        if name in JVP_RULES:
            out += [f"- Tangent: {_tangent(name)}"]
        out += [""]
        if opdef.attrs:
            out += ["| attribute | type | default |", "|---|---|---|", *(_attr_row(a) for a in opdef.attrs), ""]
        out += ["```mlir", _example(opdef), "```", ""]
    return "\n".join(out + _imported_ops())


def _tangent(name: str) -> str:
    """How tenzr-jvp pushes a tangent through op `name`: its JVP rule's docstring, or the
    adjoint transposed."""
    rule = JVP_RULES[name]
    if rule is NO_DERIVATIVE:
        return "none (zero)"
    if rule is TRANSPOSED:
        return "the adjoint, transposed"
    return " ".join((rule.__doc__ or "").split("\n\n")[0].split())


def _imported_ops() -> list[str]:
    """The StableHLO and CHLO ops tenzr-grad differentiates: those of its own output (so a
    gradient can be differentiated again) and of imported modules (JAX's exports)."""
    names = sorted(n for n in VJP_RULES if n not in T.OPS and n != "func.call")
    out = ["## StableHLO and CHLO", "",
           "`tenzr-grad` and `tenzr-jvp` differentiate these too, wherever they appear: in their own output (so "
           "a derivative can be differentiated again) and in imported modules such as "
           "`jax.jit(f).lower(...).as_text()`.", "",
           "| op | adjoint | tangent (`tenzr-jvp`) |", "|---|---|---|"]
    for name in names:
        adjoint = "none (contributes zero)" if VJP_RULES[name] is NO_DERIVATIVE else ADJOINTS[name]
        out.append(f"| `{name}` | {adjoint.replace('|', '¦')} | {_tangent(name).replace('|', '¦')} |")
    return [*out, ""]


def passes_md() -> str:
    out = ["# Passes", "", "Generated from the pass registry by `python -m tenzr.tools.gen_docs`; do not edit.", "",
           "Run them with `tenzr-opt --<flag>[=\"options\"]` or inside "
           "`--pass-pipeline=\"builtin.module(<flag>{options},...)\"`, mixed freely with MLIR's own passes.", ""]
    for flag in sorted(PASSES):
        cls = PASSES[flag]
        out += [f"## `--{flag}`", "", cls.summary, ""]
        rows = option_help(cls)
        if rows:
            out += ["| option | type (default) | meaning |", "|---|---|---|",
                    *(f"| `{n}` | {k.replace('|', ' or ')} | {h} |" for n, k, h in rows), ""]
        if cls.example_input:
            shown = f'--{flag}="{cls.example_options}"' if cls.example_options else f"--{flag}"
            out += ["Before:", "", "```mlir", cls.example_input.rstrip(), "```", "", f"After `{shown}`:", "",
                    "```mlir", _run_pass(flag, cls.example_input, cls.example_options).rstrip(), "```", ""]
    return "\n".join(out)


def _run_pass(flag: str, text: str, options: str = "") -> str:
    from tenzr.passes.registry import make_step, run_pipeline

    with make_context():
        module = parse_module(text, "example.mlir")
        run_pipeline(module, [make_step(flag, options)])
        return str(module)


def op_table() -> str:
    rows = ["| op | operands | attributes | gradient |", "|---|---|---|---|"]
    for name in sorted(T.OPS):
        opdef = T.OPS[name]
        attrs = ", ".join(a.name for a in opdef.attrs) or "-"
        gradient = "zero / none" if opdef.gradient == "none" else "VJP rule"
        rows.append(f"| `{opdef.mnemonic}` | {', '.join(opdef.operands) or '-'} | {attrs} | {gradient} |")
    return "\n".join(rows)


START, END = "<!-- ops -->", "<!-- /ops -->"


def readme_with_table(readme: str) -> str:
    head, _, rest = readme.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{op_table()}\n{END}{tail}"


def outputs() -> dict[Path, str]:
    readme = (ROOT / "README.md").read_text()
    return {ROOT / "docs" / "dialect.md": dialect_md(), ROOT / "docs" / "passes.md": passes_md(),
            ROOT / "README.md": readme_with_table(readme)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate Tenzr's reference docs from the code.")
    parser.add_argument("--check", action="store_true", help="exit 1 if a generated file is stale")
    args = parser.parse_args(argv)
    stale = []
    for path, text in outputs().items():
        current = path.read_text() if path.exists() else ""
        if current != text:
            stale.append(path)
            if not args.check:
                path.parent.mkdir(exist_ok=True)
                path.write_text(text)
    if args.check and stale:
        print("stale: " + ", ".join(str(p.relative_to(ROOT)) for p in stale) +
              " (run `python -m tenzr.tools.gen_docs`)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
