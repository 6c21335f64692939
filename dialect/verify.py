"""Checks every op of a module against its rules: MLIR's own verifier, then tenzr's."""

from __future__ import annotations

import difflib

from tenzr.dialect.diagnostics import TenzrError, from_mlir_error
from tenzr.dialect.ir_imports import ir
from tenzr.dialect.opdef import PREFIX, Op, VerifyError
from tenzr.dialect.ops import OPS


def tenzr_ops(root: ir.Operation) -> list[ir.Operation]:
    """Every `tenzr.*` op nested in `root`, in program order, the ops in a region before the
    op that holds it (as MLIR's post-order walk)."""
    found: list[ir.Operation] = []
    for region in root.regions:
        for block in region.blocks:
            for view in block.operations:
                op = view.operation
                if len(op.regions):
                    found.extend(tenzr_ops(op))
                if op.name.startswith(PREFIX):
                    found.append(op)
    return found


def decode(operation: ir.Operation) -> Op:
    """The decoded view of one tenzr op; raises TenzrError at its location when invalid."""
    opdef = OPS.get(operation.name)
    if opdef is None:
        raise TenzrError(unknown_op(operation.name), operation.location)
    try:
        return opdef.decode(operation)
    except VerifyError as e:
        raise TenzrError(f"'{operation.name}' op {e.message}", operation.location) from None


def unknown_op(name: str) -> str:
    """The error for a `tenzr.` op the dialect does not have, naming the nearest ones."""
    mnemonics = sorted(o.removeprefix(PREFIX) for o in OPS)
    close = difflib.get_close_matches(name.removeprefix(PREFIX), mnemonics, n=2, cutoff=0.75)
    if close:
        return f"unknown op '{name}'; did you mean {' or '.join(repr(PREFIX + c) for c in close)}?"
    known = ", ".join(mnemonics)
    return f"unknown op '{name}' (the tenzr dialect has: {known})"


def verify_module(module: ir.Operation) -> list[TenzrError]:
    """All errors in `module`; empty when it is valid."""
    try:
        module.verify()
    except ir.MLIRError as e:
        return from_mlir_error(e, "invalid IR")
    found: list[ir.Operation] = []
    with_regions: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith(PREFIX):
            found.append(op)
        elif len(op.regions):
            with_regions.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    errors = _unterminated_blocks(with_regions)
    for operation in found:
        try:
            decode(operation)
        except TenzrError as e:
            errors.append(e)
    return errors


def _unterminated_blocks(ops: list[ir.Operation]) -> list[TenzrError]:
    """MLIR takes an unregistered op at the end of a block for its terminator; a tenzr op
    never is one (a function body without `return`)."""
    errors = []
    for op in ops:
        for region in op.regions:
            for block in region.blocks:
                operations = block.operations
                count = len(operations)
                last = operations[count - 1].operation if count else None
                if last is not None and last.name.startswith(PREFIX) and not getattr(OPS.get(last.name),
                                                                                      "terminator", False):
                    errors.append(TenzrError(f"'{last.name}' op ends a block of '{op.name}', but tenzr ops are not "
                                             "terminators (is a 'return' missing?)", last.location))
    return errors
