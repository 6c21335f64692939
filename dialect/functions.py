"""Building `func.func` ops from Python: the tracer, the tests and the docs use this."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tenzr.dialect.context import module_body
from tenzr.dialect.ir_imports import ir
from tenzr.dialect.types import TensorSpec, ir_type

Body = Callable[[list[ir.Value]], "ir.Value | Sequence[ir.Value]"]


def build_function(module: ir.Operation, name: str, args: Sequence[TensorSpec], body: Body,
                   location: ir.Location | None = None) -> ir.Operation:
    """Appends `func.func @name(args) -> (...)` to `module`; `body(arguments)` emits the ops
    at the current insertion point and returns the results."""
    location = location or ir.Location.unknown()
    arg_types = [ir_type(s) for s in args]
    with location, ir.InsertionPoint(module_body(module)):
        func = ir.Operation.create("func.func", attributes={
            "sym_name": ir.StringAttr.get(name),
            "function_type": ir.TypeAttr.get(ir.FunctionType.get(arg_types, [])),
        }, regions=1)
        block = func.regions[0].blocks.append(*arg_types)
    with location, ir.InsertionPoint(block):
        out = body(list(block.arguments))
        results = [out] if isinstance(out, ir.Value) else list(out)
        ir.Operation.create("func.return", results=[], operands=results)
    # (`body` may have appended arguments to the block)
    arg_types = [a.type for a in block.arguments]
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(arg_types, [r.type for r in results]))
    return func


def new_module() -> ir.Operation:
    """An empty `builtin.module` in the current context."""
    return ir.Module.create(ir.Location.unknown()).operation


def inline_call(call: ir.Operation, callee: ir.Operation) -> list[ir.Value]:
    """Replaces `call` by a copy of `callee`'s body (regions included: the copy's nested ops
    read the call's operands too); returns the values that replace the call's results."""
    copy = callee.clone()
    block = copy.regions[0].blocks[0]
    for argument, operand in zip(block.arguments, call.operands, strict=True):
        argument.replace_all_uses_with(operand)
    operations = [op.operation for op in block.operations]
    for op in operations[:-1]:
        op.move_before(call)
    returned = list(operations[-1].operands)
    for result, value in zip(call.results, returned, strict=True):
        result.replace_all_uses_with(value)
    call.erase()
    copy.erase()
    return returned
