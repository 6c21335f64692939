"""Decoded views of ops, for the transformations' rules: `view(operation) -> Op`.

A tenzr op is decoded by its OpDef (attributes with their defaults, nothing verified
again). Any other op (StableHLO, CHLO) is decoded generically: operands, tensor types, and
each attribute as a Python value (`array<i64: ...>` a tuple, integers, floats, bools and
strings as such, StableHLO's enums their names, dot dimension numbers a `DotDims`,
convolution ones an `sh.ConvLayout`, gather and scatter ones a `GatherDims` or
`ScatterDims`; a reduce's, scatter's or reduce_window's body is its `combiner`, a name in
`sh.COMBINERS` or None, and a reduce_window's attributes are also its `window`, an
`sh.Window`; a select_and_scatter has its `window`, its scatter body's `combiner` and its
select body's comparison direction `select`); other attributes stay MLIR attributes. A
rule reads both kinds the same way (`op.operands`, `op.specs`, `op.result`, `op.out`,
`op[name]`).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import numpy as np

from tenzr.dialect import ops as T
from tenzr.dialect.ir_imports import ir
from tenzr.dialect.opdef import Op
from tenzr.dialect.ops import OPS
from tenzr.passes import stablehlo as sh


class DotDims(NamedTuple):
    """`#stablehlo.dot<...>`: batching and contracting dims of each operand."""

    lhs_batch: tuple[int, ...]
    rhs_batch: tuple[int, ...]
    lhs_contracting: tuple[int, ...]
    rhs_contracting: tuple[int, ...]


class GatherDims(NamedTuple):
    """`#stablehlo.gather<...>`, fields named as `sh.gather`'s arguments."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...]
    start_indices_batching_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    index_vector_dim: int


class ScatterDims(NamedTuple):
    """`#stablehlo.scatter<...>`, fields named as `sh.scatter`'s arguments."""

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    input_batching_dims: tuple[int, ...]
    scatter_indices_batching_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    index_vector_dim: int


_ENUM = re.compile(r"#stablehlo<\w+ (\w+)>")
_DIMS = re.compile(r"(\w+) = \[([\d, ]*)\]")
_INDEX_VECTOR_DIM = re.compile(r"index_vector_dim = (\d+)")


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
    if text.startswith(("#stablehlo.gather<", "#stablehlo.scatter<")):
        kind = GatherDims if text.startswith("#stablehlo.gather<") else ScatterDims
        dims = {key: _ints(values) for key, values in _DIMS.findall(text)}
        match = _INDEX_VECTOR_DIM.search(text)
        return kind._make([*(dims.get(field, ()) for field in kind._fields[:-1]), int(match.group(1)) if match else 0])
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


def _combiner(operation: ir.Operation, region: int = 0) -> str | None:
    """The name (in `sh.COMBINERS`) of the combiner a one-tensor reduce's or scatter's body
    is, if it is one: `add`, `max`, ... of its two arguments, or `set` (the second)."""
    block = operation.regions[region].blocks[0]
    body = [op.operation for op in block.operations]
    arguments = list(block.arguments)
    if len(arguments) != 2:
        return None
    if len(body) == 1:
        return "set" if list(body[0].operands) == [arguments[1]] else None
    combine = body[0]
    if len(body) != 2 or list(combine.operands) not in (arguments, arguments[::-1]) \
            or list(body[1].operands) != [combine.result]:
        return None
    return next((name for name, fn in sh.COMBINERS.items() if getattr(fn, "op_name", None) == combine.name), None)


_COMBINED = {sh.reduce.op_name, sh.scatter.op_name, sh.reduce_window.op_name}


def _selector(operation: ir.Operation) -> str | None:
    """The direction (GE, GT, LE, LT) of a select_and_scatter's select body that compares its
    two arguments in order, if it is one."""
    block = operation.regions[0].blocks[0]
    body = [op.operation for op in block.operations]
    if len(body) != 2 or body[0].name != sh.compare.op_name or list(body[0].operands) != list(block.arguments) \
            or list(body[1].operands) != [body[0].result]:
        return None
    direction = decode_attribute(body[0].attributes["comparison_direction"])
    return direction if direction in ("GE", "GT", "LE", "LT") else None


def _window(attrs: dict[str, Any], rank: int) -> sh.Window:
    """A reduce_window's `sh.Window`, absent attributes taking their defaults."""
    ones = (1,) * rank
    padding = attrs.get("padding")
    pairs = ((0, 0),) * rank if padding is None else tuple((int(lo), int(hi)) for lo, hi in np.array(padding))
    return sh.Window(attrs["window_dimensions"], attrs.get("window_strides") or ones, pairs,
                     attrs.get("base_dilations") or ones, attrs.get("window_dilations") or ones)


class ComplexSplat(NamedTuple):
    """The element of a complex splat constant (the bindings cannot read complex attributes)."""

    value: complex


_COMPLEX_SPLAT = re.compile(r"dense<\(([^,()]+),([^,()]+)\)>")


def splat_element(value: ir.Value) -> ir.Attribute | ComplexSplat | None:
    """The element attribute every element of a splat constant (tenzr's or StableHLO's)
    holds, or None."""
    made = sh.producer(value)
    if made is None or made.name not in (T.constant.name, sh.constant.op_name):
        return None
    if sh.spec(made.results[0]).is_complex:  # (as JAX exports them: reading the attribute raises)
        found = _COMPLEX_SPLAT.search(made.get_asm(large_elements_limit=1))  # (a splat prints whole, others elided)
        return None if found is None else ComplexSplat(complex(float(found[1]), float(found[2])))
    elements = made.attributes["value"]
    if not isinstance(elements, ir.DenseElementsAttr):  # (dense_resource: never a splat here)
        return None
    return elements.get_splat_value() if elements.is_splat else None


def iota_along(value: ir.Value, dimension: int) -> bool:
    """Whether `value` is a stablehlo.iota counting along `dimension`."""
    made = sh.producer(value)
    return made is not None and made.name == sh.iota.op_name \
        and ir.IntegerAttr(made.attributes["iota_dimension"]).value == dimension


def splat_value(value: ir.Value) -> float | int | bool | complex | None:
    """The number every element of a splat constant (tenzr's or StableHLO's) holds, or None."""
    element = splat_element(value)
    return None if element is None else element.value


def view(operation: ir.Operation, outputs: list[ir.Value] | None = None) -> Op:
    """The decoded op of `operation`, which the verifier has already accepted (`outputs`,
    when the caller has them, are its results)."""
    opdef = OPS.get(operation.name)
    if opdef is not None:
        return opdef.view(operation, outputs)
    operands = list(operation.operands)
    outputs = list(operation.results) if outputs is None else outputs
    attrs = {name: _decoded(operation, name) for name in operation.attributes}
    # (its types are read when a rule asks: None for an operand or result that is not a
    # tensor, as an i1 condition of scf.if)
    op = Op(None, operands, None, attrs, None, operation.location, None, outputs, operation=operation)
    if operation.name in _COMBINED:
        attrs["combiner"] = _combiner(operation)
    if operation.name in (sh.reduce_window.op_name, sh.select_and_scatter_add.op_name):
        attrs["window"] = _window(attrs, len(op.specs[0].shape))
    if operation.name == sh.select_and_scatter_add.op_name:
        attrs["select"], attrs["combiner"] = _selector(operation), _combiner(operation, 1)
    return op
