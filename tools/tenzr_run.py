"""`tenzr-run`: runs a function of a compiled `.vmfb` on NumPy inputs.

    tenzr-run model.vmfb --function=loss_grad --input=x.npy --input=2.5 --target=cpu
    tenzr-run model.vmfb --function=f --input="[[1, 2], [3, 4]]:f32" --output-dir=out/

Inputs are `.npy` files or literals (a number, nan, inf or nested list, optionally
`:dtype` with dtype one of f16 bf16 f32 f64 i1 i32 i64 complex<f32> complex<f64>; without
one, a literal takes the element type the function declares; a `.npy` file of 2-byte
voids, as NumPy saves bfloat16 arrays, is bfloat16). Results print to stdout, or are saved
as `result0.npy`, `result1.npy`, ... with --output-dir.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path
from typing import Any

import numpy as np

from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.types import ELEMENT_TYPES, TensorSpec, numpy_dtype
from tenzr.runtime import Program, element_type_of_array
from tenzr.targets import TARGET_NAMES, Target
from tenzr.tools.cli import UsageError, run_tool

NAME = "tenzr-run"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog=NAME, description="Run a function of a compiled Tenzr/IREE module on NumPy inputs.")
    p.add_argument("module", help="the .vmfb from tenzr-compile")
    p.add_argument("--function", required=True, help="the function to call")
    p.add_argument("--input", action="append", default=[], help=".npy file or literal[:dtype] (repeatable)")
    p.add_argument("--target", choices=TARGET_NAMES, default="cpu", help="the target the module was compiled for")
    p.add_argument("--output-dir", default=None, help="save results as resultN.npy there instead of printing")
    return p


def parse_input(text: str, declared: TensorSpec | None = None) -> np.ndarray:
    """An input from a `.npy` file, or from a literal with its `:dtype` (else the declared
    element type, else NumPy's)."""
    if text.endswith(".npy"):
        try:
            array = np.load(text, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise TenzrError(f"cannot read input '{text}': {e}") from None
        if array.dtype.kind == "V" and array.dtype.itemsize == 2:  # (bfloat16: .npy files cannot name it)
            import ml_dtypes

            array = array.view(ml_dtypes.bfloat16)
        return _checked(text, array.astype(array.dtype.newbyteorder("=")) if not array.dtype.isnative else array)
    literal, colon, dtype = text.rpartition(":") if ":" in text else (text, "", "")
    if colon and dtype not in ELEMENT_TYPES:
        raise TenzrError(f"cannot parse input '{text}': unknown dtype '{dtype}' (use one of {' '.join(ELEMENT_TYPES)})")
    try:
        array = np.asarray(_literal(ast.parse(literal.strip(), mode="eval").body),
                           dtype=numpy_dtype(dtype) if dtype else None)
    except (ValueError, SyntaxError, TypeError, OverflowError, MemoryError, RecursionError) as e:
        raise TenzrError(f"cannot parse input '{text}': expected a .npy file or a literal like '[1.0, 2.0]:f32' "
                         f"({e})") from None
    if not dtype and declared is not None and array.dtype.kind in "biuf":
        array = array.astype(numpy_dtype(declared.dtype))
    return _checked(text, array)


_NAMED = {"nan": float("nan"), "inf": float("inf"), "true": True, "false": False, "True": True, "False": False}


def _literal(node: ast.expr) -> Any:
    """A number (complex too: `1+2j`), bool, nan, inf, or a nested list or tuple of them
    (Python's syntax)."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        left, right = _literal(node.left), _literal(node.right)
        if not all(isinstance(v, (int, float, complex)) and not isinstance(v, bool) for v in (left, right)):
            raise ValueError(f"{ast.unparse(node)} is not a number")
        return left + right if isinstance(node.op, ast.Add) else left - right
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _literal(node.operand)
        if isinstance(value, list) or isinstance(value, bool):
            raise ValueError("a sign before something other than a number")
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex, bool)):
        return node.value
    if isinstance(node, ast.Name) and node.id in _NAMED:
        return _NAMED[node.id]
    raise ValueError(f"{ast.unparse(node)} is not a number")


def _checked(text: str, array: np.ndarray) -> np.ndarray:
    """`array`, if a tensor can hold it (unsigned integers too: IREE takes them, and JAX's
    exports declare them)."""
    if element_type_of_array(array) is None and array.dtype.kind != "u":
        raise TenzrError(f"input '{text}' has dtype {array.dtype}, which no tensor element type holds "
                         f"(use one of {' '.join(ELEMENT_TYPES)})")
    return array


def run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    try:
        vmfb = Path(args.module).read_bytes()
    except OSError as e:
        raise TenzrError(f"cannot open module '{args.module}': {e.strerror}") from None
    if not args.function:
        raise UsageError("--function needs the name of a function")
    program = Program(vmfb, Target(args.target))
    declared = program.signature(args.function)
    inputs = [parse_input(text, declared[i] if i < len(declared) else None) for i, text in enumerate(args.input)]
    results = program(args.function, *inputs)
    if args.output_dir:
        out = Path(args.output_dir)
        try:
            out.mkdir(parents=True, exist_ok=True)
            for i, r in enumerate(results):
                np.save(out / f"result{i}.npy", r)
        except OSError as e:
            raise TenzrError(f"cannot write the results to '{out}': {e.strerror or e}") from None
    else:
        for i, r in enumerate(results):
            print(f"result[{i}]: {r.dtype}{list(r.shape)} =\n{np.array2string(r, threshold=1000)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_tool(NAME, lambda: run(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
