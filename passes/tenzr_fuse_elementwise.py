"""`tenzr-fuse-elementwise`: a web of elementwise ops with one result becomes one
`stablehlo.map` (CPU).

IREE 3.13 fuses a tree of elementwise ops into one dispatch, but splits a web of them
(values read by several later ops: a forward-mode derivative, and still more a derivative
of a derivative, reads each forward value two or three times) into many dispatches that
pass their intermediate tensors through memory and recompute the cones they share. The
chain benchmark's Hessian-vector product (277 elementwise ops on 1024x1024, one result)
became 10 executables, 122 ms a call; as one `stablehlo.map` (one dispatch) it ran 13.4 ms
(same process). A map applies its body, the same ops on 0-d tensors, to every element.

Only webs with a single result read outside them are rewritten (where several results
leave a web, IREE computes them in one dispatch without recomputation, which one map per
result would not); trees are left to IREE. Splat constants, broadcast or not, move into the
body; every other operand from outside becomes an input of the map.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import functions
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.types import spec_of_type
from tenzr.passes import stablehlo as sh
from tenzr.passes.regions import nested_blocks
from tenzr.passes.registry import Pass, register
from tenzr.passes.views import splat_element


def _fusible(op: ir.Operation) -> bool:
    """Whether `op` is an elementwise op this pass fuses: one result of rank >= 1, real
    element types, every operand of its result's shape (so ops joined through their
    operands all have one shape)."""
    if op.name not in sh.ELEMENTWISE or len(op.results) != 1:
        return False
    result = spec_of_type(op.results[0].type)
    if result is None or result.rank == 0 or result.is_complex:
        return False
    specs = [spec_of_type(v.type) for v in op.operands]
    return all(s is not None and s.shape == result.shape and not s.is_complex for s in specs)


def _splat(value: Value) -> ir.Attribute | None:
    """The element of a splat constant `value` (or of a broadcast of a 0-d one), else None."""
    made = sh.producer(value)
    if made is not None and made.name == sh.broadcast_in_dim.op_name:
        value = made.operands[0]
    return splat_element(value)


def _result(web: list[ir.Operation], members: set[ir.Operation]) -> Value | None:
    """The web's one value read outside it, when it has one, its op is the web's last, and
    some value inside it is read by two of its ops (a web, not a tree); else None."""
    leaving: list[Value] = []
    shared = False
    for op in web:
        value = op.results[0]
        readers = {use.owner for use in value.uses}
        if any(r not in members for r in readers):
            leaving.append(value)
        shared = shared or sum(r in members for r in readers) > 1
    return leaving[0] if shared and len(leaving) == 1 and leaving[0] == web[-1].results[0] else None


def _webs(block: ir.Block) -> list[list[ir.Operation]]:
    """The block's groups of more than two fusible ops joined through their operands, each
    in block order (union-find over the block)."""
    root: dict[ir.Operation, ir.Operation] = {}

    def find(op: ir.Operation) -> ir.Operation:
        while root[op] != op:
            root[op] = root[root[op]]
            op = root[op]
        return op

    order: list[ir.Operation] = []
    for op in (o.operation for o in block.operations):
        if not _fusible(op):
            continue
        root[op] = op
        order.append(op)
        for operand in op.operands:
            made = sh.producer(operand)
            if made is not None and made in root:
                a, b = find(made), find(op)
                if a != b:
                    root[b] = a
    webs: dict[ir.Operation, list[ir.Operation]] = {}
    for op in order:
        webs.setdefault(find(op), []).append(op)
    return [w for w in webs.values() if len(w) > 2]


def _as_map(web: list[ir.Operation], members: set[ir.Operation], result: Value) -> Value:
    """One `stablehlo.map` computing `result` from the web's inputs (built before its op),
    or `result` itself when the web reads nothing but constants."""
    inputs: list[Value] = []
    splats: dict[Value, ir.Attribute] = {}
    for op in web:
        for operand in op.operands:
            if sh.producer(operand) in members or operand in inputs or operand in splats:
                continue
            element = _splat(operand)
            if element is None:
                inputs.append(operand)
            else:
                splats[operand] = element
    if not inputs:
        return result

    def body(arguments: list[Value]) -> Value:
        inside: dict[Value, Value] = dict(zip(inputs, arguments, strict=True))
        for value, element in splats.items():
            inside[value] = sh.constant_attribute(ir.DenseElementsAttr.get_splat(
                ir.RankedTensorType.get([], element.type), element))
        for op in web:
            scalar = spec_of_type(op.results[0].type).with_shape(())  # type: ignore[union-attr]
            operands = [inside[v] for v in op.operands]
            inside[op.results[0]] = sh.create(op.name, [scalar], operands, dict(op.attributes.items())).result
        return inside[result]

    last = result.owner.operation
    with last.location, ir.InsertionPoint(last):
        return sh.map_(inputs, spec_of_type(result.type).dtype, body)  # type: ignore[union-attr]


def fuse_elementwise(module: ir.Operation) -> None:
    for func in functions(module).values():
        for block in nested_blocks(func):
            for web in _webs(block):
                members = set(web)
                result = _result(web, members)
                if result is None:
                    continue
                fused = _as_map(web, members, result)
                if fused is result:
                    continue
                result.replace_all_uses_with(fused)
                for op in reversed(web):
                    op.erase()


@register
@dataclass
class TenzrFuseElementwise(Pass):
    flag: ClassVar[str] = "tenzr-fuse-elementwise"
    summary: ClassVar[str] = ("CPU: make a web of elementwise ops with one result (values read by several of its "
                              "ops) one stablehlo.map, which IREE compiles as one dispatch instead of many.")

    def run(self, module: ir.Operation) -> None:
        fuse_elementwise(module)

