"""`tenzr-mark-in-place`: functions IREE may hand the callers' own arrays (CPU).

IREE 3.13 may carry out some ops in the buffer of an operand; when that operand is a
function argument, IREE writes into the caller's input (iree-org/iree#16168). A module with
none of those ops has its functions marked (reflection `tenzr.inputs = "in-place"`), and
the runtime then imports NumPy inputs without a copy (runtime.Program).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import functions, ops_named
from tenzr.dialect.ir_imports import ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register

INPUTS_REFLECTION = "tenzr.inputs"
"""The reflection entry of a compiled function that IREE may run on the callers' arrays."""


def add_reflection(func: ir.Operation, entries: dict[str, str]) -> None:
    """Adds string entries to the function's `iree.reflection`, which IREE keeps in the
    compiled module for the runtime to read."""
    found = func.attributes["iree.reflection"] if "iree.reflection" in func.attributes else None
    merged = {a.name: a.attr for a in ir.DictAttr(found)} if found is not None else {}
    merged.update({k: ir.StringAttr.get(v) for k, v in entries.items()})
    func.attributes["iree.reflection"] = ir.DictAttr.get(merged)


def mark_in_place(module: ir.Operation) -> None:
    if ops_named(module, sh.MAY_WRITE_AN_OPERAND):
        return
    for func in functions(module).values():
        add_reflection(func, {INPUTS_REFLECTION: "in-place"})


@register
@dataclass
class TenzrMarkInPlace(Pass):
    flag: ClassVar[str] = "tenzr-mark-in-place"
    summary: ClassVar[str] = ("CPU: mark the functions of a module without ops IREE carries out in an operand's "
                              "buffer, so the runtime passes the callers' arrays without a copy.")

    def run(self, module: ir.Operation) -> None:
        mark_in_place(module)
