"""`tenzr-expand-select-and-scatter`: select_and_scatter (max pooling's gradient, as JAX
and tenzr-grad write it) as strided slices, selects and pads. IREE 3.13 cannot compile one
with padding ("failed to legalize operation 'stablehlo.select_and_scatter'").

Each window position is one strided slice of the padded operand; a running choice per
window follows the select body (GE keeps the first maximum), and each source element is
padded back to the element its window chose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.rules.reductions import expand_select_and_scatter
from tenzr.passes.views import view


def expand_all_select_and_scatter(module: ir.Operation) -> None:
    """Expands those whose select body compares its arguments and whose scatter body adds."""
    for op in ops_named(module, {sh.select_and_scatter_add.op_name}):
        decoded = view(op)
        if decoded["select"] is None or decoded["combiner"] != "add":
            continue
        x, source, init = op.operands
        with op.location, ir.InsertionPoint(op):
            replace_op(op, [expand_select_and_scatter(x, source, init, decoded["window"], decoded["select"])])


@register
@dataclass
class TenzrExpandSelectAndScatter(Pass):
    flag: ClassVar[str] = "tenzr-expand-select-and-scatter"
    summary: ClassVar[str] = ("Rewrite select_and_scatter as strided slices, selects and pads (IREE 3.13 cannot "
                              "compile one with padding).")

    def run(self, module: ir.Operation) -> None:
        expand_all_select_and_scatter(module)
