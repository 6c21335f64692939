"""Decoded views of ops, for the transformations' rules: `view(operation) -> Op`.

A tenzr op is decoded by its OpDef (attributes with their defaults, nothing verified
again). Any other op (StableHLO, CHLO) is decoded generically: operands, tensor types, and
each attribute as a Python value (`array<i64: ...>` a tuple, integers, floats, bools and
strings as such, StableHLO's enums their names, dot dimension numbers a `DotDims`,
convolution ones an `sh.ConvLayout`, and a
reduce's body its `combiner`, a name in `sh.COMBINERS` or None); other attributes stay MLIR
attributes. A rule reads both kinds the same way (`op.operands`,
`op.specs`, `op.result`, `op.out`, `op[name]`).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from tenzr.dialect.ir_imports import ir
from tenzr.dialect.opdef import Op
from tenzr.dialect.ops import OPS
from tenzr.dialect.types import spec_of_type
from tenzr.passes import stablehlo as sh


class DotDims(NamedTuple):
    """`#stablehlo.dot<...>`: batching and contracting dims of each operand."""

    lhs_batch: tuple[int, ...]
    rhs_batch: tuple[int, ...]
    lhs_contracting: tuple[int, ...]
    rhs_contracting: tuple[int, ...]


_ENUM = re.compile(r"#stablehlo<\w+ (\w+)>")
_DIMS = re.compile(r"(\w+) = \[([\d, ]*)\]")


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.split(",") if v.strip())


def _conv_layout(text: str) -> sh.ConvLayout:
    """`#stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>` as a ConvLayout."""
    lhs, rhs, out = (part.split(", ") for part in re.findall(r"\[([^\]]*)\]", text))
    n = len(lhs) - 2

    def spatial(dims: list[str]) -> tuple[int, ...]:
        return tuple(dims.index(str(d)) for d in range(n))

    return sh.ConvLayout(lhs.index("b"), lhs.index("f"), spatial(lhs), rhs.index("i"), rhs.index("o"), spatial(rhs),
                         out.index("b"), out.index("f"), spatial(out))


def decode_attribute(attribute: ir.Attribute) -> Any:
    """A Python value for the attribute kinds rules read; the attribute itself otherwise."""
    if isinstance(attribute, ir.DenseI64ArrayAttr):
        return tuple(attribute)
    if isinstance(attribute, ir.BoolAttr):
        return attribute.value
    if isinstance(attribute, (ir.IntegerAttr, ir.FloatAttr, ir.StringAttr)):
        return attribute.value
    if isinstance(attribute, ir.DenseElementsAttr):
        return attribute
    text = str(attribute)
    enum = _ENUM.fullmatch(text)
    if enum:
        return enum.group(1)
    if text.startswith("#stablehlo.conv<"):
        return _conv_layout(text)
    if text.startswith("#stablehlo.dot<"):
        dims = {key: _ints(values) for key, values in _DIMS.findall(text)}
        return DotDims(dims.get("lhs_batching_dimensions", ()), dims.get("rhs_batching_dimensions", ()),
                       dims.get("lhs_contracting_dimensions", ()), dims.get("rhs_contracting_dimensions", ()))
    return attribute


def _decoded(operation: ir.Operation, name: str) -> Any:
    try:
        return decode_attribute(operation.attributes[name])
    except TypeError:  # an attribute the bindings cannot represent (e.g. `array<i0: 0>`): no rule reads it
        return None


def _combiner(operation: ir.Operation) -> str | None:
    """The name (in `sh.COMBINERS`) of a one-operand reduce's combiner, if its body is one."""
    body = list(operation.regions[0].blocks[0].operations)
    if len(body) != 2 or len(operation.operands) != 2:
        return None
    arguments = list(operation.regions[0].blocks[0].arguments)
    combine = body[0].operation
    if list(combine.operands) not in (arguments, arguments[::-1]) or list(body[1].operands) != [combine.result]:
        return None
    return next((name for name, fn in sh.COMBINERS.items() if getattr(fn, "op_name", None) == combine.name), None)


def view(operation: ir.Operation) -> Op:
    """The decoded op of `operation`, which the verifier has already accepted."""
    opdef = OPS.get(operation.name)
    if opdef is not None:
        return opdef.view(operation)
    operands = list(operation.operands)
    outputs = list(operation.results)
    # (None for an operand or result that is not a tensor, as an i1 condition of scf.if)
    specs: list[Any] = [spec_of_type(v.type) for v in operands]
    results: list[Any] = [spec_of_type(r.type) for r in outputs]
    attrs = {name: _decoded(operation, name) for name in operation.attributes}
    if operation.name == sh.reduce.op_name:
        attrs["combiner"] = _combiner(operation)
    return Op(None, operands, specs, attrs, results, operation.location, results, outputs, operation=operation)
