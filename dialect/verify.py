"""Checks every op of a module against its rules: MLIR's own verifier, then tenzr's."""

from __future__ import annotations

from tenzr.dialect.diagnostics import TenzrError, from_mlir_error
from tenzr.dialect.ir_imports import ir
from tenzr.dialect.opdef import PREFIX, Op, VerifyError
from tenzr.dialect.ops import OPS


def tenzr_ops(root: ir.Operation) -> list[ir.Operation]:
    """Every `tenzr.*` op nested in `root`, in program order."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith(PREFIX):
            found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return found


def decode(operation: ir.Operation) -> Op:
    """The decoded view of one tenzr op; raises TenzrError at its location when invalid."""
    opdef = OPS.get(operation.name)
    if opdef is None:
        known = ", ".join(sorted(o.removeprefix(PREFIX) for o in OPS))
        raise TenzrError(f"unknown op '{operation.name}' (the tenzr dialect has: {known})", operation.location)
    try:
        return opdef.decode(operation)
    except VerifyError as e:
        raise TenzrError(f"'{operation.name}' op {e.message}", operation.location) from None


def verify_module(module: ir.Operation) -> list[TenzrError]:
    """All errors in `module`; empty when it is valid."""
    try:
        module.verify()
    except ir.MLIRError as e:
        return from_mlir_error(e, "invalid IR")
    errors = []
    for operation in tenzr_ops(module):
        try:
            decode(operation)
        except TenzrError as e:
            errors.append(e)
    return errors
