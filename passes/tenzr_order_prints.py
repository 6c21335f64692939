"""`tenzr-order-prints`: the prints (`tz.debug.print`, lowered to IREE's `flow.tensor.trace`)
between two ops with regions become one print, of all their values, where the last of them
was. IREE 3.13 runs the prints of one stretch of code in an order of its own: five prints in
a row came out 4, 0, 1, 2, 3, and the three steps of an unrolled loop body 0, 2, 1. One print
per stretch keeps them in program order; loops and conditionals between stretches order
the stretches.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.ir_imports import ir
from tenzr.passes.registry import Pass, register
from tenzr.passes.rules.custom import TRACE, trace

MERGED = "tz.debug.prints"
"""The key of a merged print: {MERGED: [each print's key], "counts": [its value count]}."""


def _key(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["key"]).value


def _merge(stretch: list[ir.Operation]) -> None:
    last = stretch[-1]
    keys = [_key(op) for op in stretch]
    values = [v for op in stretch for v in op.operands]
    with last.location, ir.InsertionPoint(last):
        trace(values, json.dumps({MERGED: keys, "counts": [len(op.operands) for op in stretch]}))
    for op in stretch:
        op.erase()


def _order_block(block: ir.Block) -> None:
    stretch: list[ir.Operation] = []
    for op in [o.operation for o in block.operations]:
        if op.name == TRACE:
            stretch.append(op)
        elif len(op.regions):
            if len(stretch) > 1:
                _merge(stretch)
            stretch = []
            for region in op.regions:
                for inner in region.blocks:
                    _order_block(inner)
    if len(stretch) > 1:
        _merge(stretch)


def order_prints(module: ir.Operation) -> None:
    for region in module.regions:
        for block in region.blocks:
            _order_block(block)


@register
@dataclass
class TenzrOrderPrints(Pass):
    flag: ClassVar[str] = "tenzr-order-prints"
    summary: ClassVar[str] = ("Merge the prints of each stretch of code between ops with regions into one, of all "
                              "their values (IREE 3.13 runs the prints of one stretch in an order of its own).")

    def run(self, module: ir.Operation) -> None:
        order_prints(module)
