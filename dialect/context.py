"""The context factory and the parser every entry point shares."""

from __future__ import annotations

from tenzr.dialect.diagnostics import TenzrErrors, from_mlir_error
from tenzr.dialect.ir_imports import ir


def make_context() -> ir.Context:
    """A context with StableHLO, func, arith, tensor and the unregistered `tenzr` dialect."""
    context = ir.Context()
    context.allow_unregistered_dialects = True
    return context


def parse_module(text: str, filename: str = "<stdin>") -> ir.Operation:
    """Parses `text` in the current context into a `builtin.module` operation.

    Top-level ops other than one module are wrapped in a module, as mlir-opt does. The
    wrapper is prefixed to line 1, so only columns of ops on line 1 shift.
    """
    try:
        op = ir.Operation.parse(text, source_name=filename)
    except ir.MLIRError as e:
        if "single top-level operation" not in str(e):
            raise TenzrErrors(from_mlir_error(e, "cannot parse input")) from None
        op = None
    if op is not None and op.operation.name == "builtin.module":
        return op.operation
    try:
        return ir.Operation.parse("module {" + text + "\n}", source_name=filename).operation
    except ir.MLIRError as e:
        raise TenzrErrors(from_mlir_error(e, "cannot parse input")) from None


def module_body(module: ir.Operation) -> ir.Block:
    return module.regions[0].blocks[0]
