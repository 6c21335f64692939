"""`tenzr-elementwise-before-reshapes`: a unary elementwise op of a reshape or transpose,
`f(reshape(x))`, as `reshape(f(x))`.

IREE 3.13 runs StableHLO's `ReorderElementwiseAndShapeOp` inside its conversion to its input
dialects, where the pattern's in-place retyping goes wrong: where that conversion was the first
to see `negate(reshape(x))` with the reshape used once (its earlier cleanups had just merged
two such negates), it left a `divide` of the 5-element `negate(x)` by a 5x1 tensor and
failed ("failed to legalize operation 'stablehlo.divide'"). `tz.hessian` of
`sum(1 / sum(s * s, keepdims=True))`, and of a softmax, gave that module. Doing the reorder
here, for every such op, leaves that pattern nothing to do. The elementwise op runs on as
many elements either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register

_SHAPE_OPS = frozenset({sh.reshape.op_name, sh.transpose.op_name})
_ELEMENTWISE = frozenset(sh.ELEMENTWISE - {sh.bitcast_convert.op_name})  # (a bitcast may change the shape)


def elementwise_before_reshapes(module: ir.Operation) -> None:
    pending = ops_named(module, _ELEMENTWISE)
    while pending:
        op = pending.pop()
        shaped = sh.producer(op.operands[0])
        if len(op.operands) != 1 or shaped is None or shaped.name not in _SHAPE_OPS:
            continue
        source = shaped.operands[0]
        result_type = ir.RankedTensorType(op.results[0].type)
        with op.location, ir.InsertionPoint(op):
            inner = ir.Operation.create(
                op.name, operands=[source], attributes={name: op.attributes[name] for name in op.attributes},
                results=[ir.RankedTensorType.get(ir.RankedTensorType(source.type).shape, result_type.element_type)])
            outer = ir.Operation.create(shaped.name, results=[result_type], operands=[inner.result],
                                        attributes={name: shaped.attributes[name] for name in shaped.attributes})
            replace_op(op, [outer.result])
        if not list(shaped.results[0].uses):
            shaped.erase()
        # (the new op's operand may be a reshape or transpose too, and the reshape's users unary ops)
        pending += [inner, *(u.owner for u in outer.result.uses if u.owner.name in _ELEMENTWISE)]


@register
@dataclass
class TenzrElementwiseBeforeReshapes(Pass):
    flag: ClassVar[str] = "tenzr-elementwise-before-reshapes"
    summary: ClassVar[str] = ("Rewrite a unary elementwise op of a reshape or transpose as the reshape or transpose of "
                              "the op (IREE 3.13 does this reorder itself, and gets it wrong inside its input "
                              "conversion).")

    def run(self, module: ir.Operation) -> None:
        elementwise_before_reshapes(module)
