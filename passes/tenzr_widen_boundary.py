"""`tenzr-widen-boundary`: 1- and 2-byte arguments and results cross a public function's
boundary widened (IREE's portable Vulkan target).

IREE's portable Vulkan target stores everything in 32-bit words; buffers of 1- and 2-byte
elements at a function's boundary come out wrong on lavapipe (bools of 3, 5 or 6 elements,
any float16). Such arguments and results are passed widened (`WIDENED`), converted
inside the function, and the reflection entries `tenzr.args` / `tenzr.results` name the
original types so the runtime narrows them back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import body_ops, functions
from tenzr.dialect.ir_imports import ir
from tenzr.dialect.types import ir_type, spec_of
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.tenzr_mark_in_place import add_reflection

WIDENED = {"i1": "i32", "f16": "f32", "bf16": "f32"}
"""Element types that cross the boundary of a function compiled for IREE's portable Vulkan
target widened."""


def _widen(func: ir.Operation) -> None:
    block = func.regions[0].blocks[0]
    ops = body_ops(func)
    arg_dtypes = [spec_of(a).dtype for a in block.arguments]
    with func.location, ir.InsertionPoint(ops[0]):
        for arg, dtype in zip(block.arguments, arg_dtypes, strict=True):
            if dtype in WIDENED:
                arg.set_type(ir_type(spec_of(arg).with_dtype(WIDENED[dtype])))
                narrow = sh.convert(arg, dtype)
                arg.replace_all_uses_except(narrow, narrow.owner.operation)
    ret = ops[-1]
    result_dtypes = [spec_of(v).dtype for v in ret.operands]
    with func.location, ir.InsertionPoint(ret):
        for i, (value, dtype) in enumerate(zip(list(ret.operands), result_dtypes, strict=True)):
            if dtype in WIDENED:
                ret.operands[i] = sh.convert(value, WIDENED[dtype])
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [a.type for a in block.arguments], [v.type for v in ret.operands]))
    add_reflection(func, {"tenzr.args": ",".join(arg_dtypes), "tenzr.results": ",".join(result_dtypes)})


def _is_private(func: ir.Operation) -> bool:
    visibility = func.attributes["sym_visibility"] if "sym_visibility" in func.attributes else None
    return visibility is not None and ir.StringAttr(visibility).value == "private"


def widen_boundary(module: ir.Operation) -> None:
    """Widens the public functions' boundaries (private ones, called inside, keep theirs)."""
    for func in functions(module).values():
        if func.regions[0].blocks and not _is_private(func):
            _widen(func)


@register
@dataclass
class TenzrWidenBoundary(Pass):
    flag: ClassVar[str] = "tenzr-widen-boundary"
    summary: ClassVar[str] = ("Vulkan: pass 1- and 2-byte arguments and results widened to 32 bits (IREE's portable "
                              "Vulkan target gets them wrong), recording the original types for the runtime.")

    def run(self, module: ir.Operation) -> None:
        widen_boundary(module)
