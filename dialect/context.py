"""The context factory and the parser every entry point shares."""

from __future__ import annotations

from tenzr.dialect.diagnostics import TenzrErrors, from_mlir_error
from tenzr.dialect.ir_imports import ir

_NOT_OPS = ("//", "!", "#")
"""How top-level lines that are not ops begin: comments, type and attribute aliases."""


def make_context() -> ir.Context:
    """A context with StableHLO, func, arith, tensor and the unregistered `tenzr` dialect."""
    context = ir.Context()
    context.allow_unregistered_dialects = True
    return context


def parse_module(text: str, filename: str = "<stdin>") -> ir.Operation:
    """Parses `text` in the current context into a `builtin.module` operation.

    Top-level ops other than one module are wrapped in a module, as mlir-opt does. The
    wrapper is prefixed to the line of the first op (after any type and attribute alias
    definitions, which must stay outside it), so only columns on that line shift.
    """
    try:
        op = ir.Operation.parse(text, source_name=filename)
    except ir.MLIRError as e:
        if "single top-level operation" not in str(e):
            raise TenzrErrors(from_mlir_error(e, "cannot parse input")) from None
        op = None
    if op is not None and op.operation.name == "builtin.module":
        return op.operation
    lines = text.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith(_NOT_OPS)),
                 len(lines) - 1)
    lines[first] = "module {" + lines[first]
    try:
        return ir.Operation.parse("\n".join(lines) + "\n}", source_name=filename).operation
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


def _defining_op(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.Block):
        owner = owner.owner
    return owner.operation if owner is not None else None


def _is_inside(op: ir.Operation | None, ancestor: ir.Operation) -> bool:
    while op is not None:
        if op == ancestor:
            return True
        parent = op.parent
        op = parent.operation if parent is not None else None
    return False


def captured_values(op: ir.Operation) -> list[ir.Value]:
    """Values defined outside `op` that ops in its regions use (empty for ops without
    regions), each once, in order of first use."""
    if not len(op.regions):
        return []
    found: dict[ir.Value, None] = {}

    def visit(inner: ir.Operation) -> ir.WalkResult:
        if inner != op:
            for v in inner.operands:
                if v not in found and not _is_inside(_defining_op(v), op):
                    found[v] = None
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return list(found)
