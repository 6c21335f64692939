"""`tenzr-concatenate-wide-pads`: an edge pad of 64-bit elements (f64, i64) as a
concatenation with broadcast pad values. IREE 3.13 fills a 64-bit pad by a splat it
emulates with a dispatch, and in some chains of pads and slices (second derivatives of
products) fails to compile it ("'stream.yield' op used resource not listed in explicit
captures"); concatenations of broadcasts compile.

Pads with interior padding stay; negative edges are sliced off first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import Value, ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.views import view

WIDE = frozenset({"f64", "i64", "ui64"})


def _concatenated(x: Value, value: Value, low: list[int], high: list[int]) -> Value:
    s = sh.spec(x)
    x = sh.slice_(x, [max(-lo, 0) for lo in low], [n - max(-hi, 0) for n, hi in zip(s.shape, high, strict=True)])
    for d, (lo, hi) in enumerate(zip(low, high, strict=True)):
        shape = sh.spec(x).shape
        parts = [x]
        if lo > 0:
            parts.insert(0, sh.broadcast_in_dim(value, tuple(lo if k == d else n for k, n in enumerate(shape)), []))
        if hi > 0:
            parts.append(sh.broadcast_in_dim(value, tuple(hi if k == d else n for k, n in enumerate(shape)), []))
        if len(parts) > 1:
            x = sh.concatenate(parts, d)
    return x


def concatenate_wide_pads(module: ir.Operation) -> None:
    for op in ops_named(module, {sh.pad.op_name}):
        decoded = view(op)
        if decoded.specs[0].dtype not in WIDE or any(decoded["interior_padding"]):
            continue
        with op.location, ir.InsertionPoint(op):
            replace_op(op, [_concatenated(op.operands[0], op.operands[1], list(decoded["edge_padding_low"]),
                                          list(decoded["edge_padding_high"]))])


@register
@dataclass
class TenzrConcatenateWidePads(Pass):
    flag: ClassVar[str] = "tenzr-concatenate-wide-pads"
    summary: ClassVar[str] = ("Write edge pads of 64-bit elements as concatenations with broadcasts (IREE 3.13 fails "
                              "to compile some chains of them).")

    def run(self, module: ir.Operation) -> None:
        concatenate_wide_pads(module)
