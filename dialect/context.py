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


def _children(parent: ir.Operation, keep) -> list[ir.Operation]:
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op == parent:
            return ir.WalkResult.ADVANCE
        if keep(op):
            found.append(op)
        return ir.WalkResult.SKIP

    parent.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def body_ops(func: ir.Operation) -> list[ir.Operation]:
    """The top-level ops of a function body, in order (nested regions are not entered)."""
    return _children(func, lambda op: True)


def functions(module: ir.Operation) -> dict[str, ir.Operation]:
    """The module's `func.func` ops by symbol name."""
    return {f.attributes["sym_name"].value: f for f in _children(module, lambda op: op.name == "func.func")}
