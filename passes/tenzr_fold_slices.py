"""`tenzr-fold-slices`: a slice that reads only one operand of a concatenation, only the
operand of an edge pad, or only its padding, or a slice of a slice, reads its source
directly; a slice of everything is its operand.

Gradients make these: the adjoint of a slice pads the cotangent, the adjoint of a
concatenation slices it again. Folded, they cost no copies, and they no longer race in
IREE 3.13, whose wave schedule could put the copy of a slice in one wave with the
dispatch writing the concatenation it reads (targets.SERIAL_STREAM)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import Value, ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.views import view


class _Cut:
    """The elements a slice reads, per dimension: `first`, then every `stride`-th up to `last`."""

    def __init__(self, start: list[int], limit: list[int], strides: list[int]):
        self.first, self.strides = start, strides
        self.last = [s + (-(-(lim - s) // st) - 1) * st for s, lim, st in zip(start, limit, strides, strict=True)]

    def within(self, d: int, begin: int, end: int) -> bool:
        return begin <= self.first[d] and self.last[d] < end

    def outside(self, d: int, begin: int, end: int) -> bool:
        """No element read along `d` lies in [begin, end)."""
        first, stride = self.first[d], self.strides[d]
        entering = first if first >= begin else first + -(-(begin - first) // stride) * stride
        return entering > self.last[d] or entering >= end

    def reads_all_of(self, shape: tuple[int, ...], offsets: list[int]) -> bool:
        """Whether this cut is every element of a source of `shape` placed at `offsets`."""
        return all(f == o and lst == o + n - 1 and st == 1
                   for f, lst, st, o, n in zip(self.first, self.last, self.strides, offsets, shape, strict=True))

    def shifted(self, source: Value, offsets: list[int]) -> Value:
        """This cut of `source`, whose element i is element i + offset of the sliced value."""
        if self.reads_all_of(sh.spec(source).shape, offsets):
            return source
        return sh.slice_(source, [f - o for f, o in zip(self.first, offsets, strict=True)],
                         [lst - o + 1 for lst, o in zip(self.last, offsets, strict=True)], self.strides)


def _folded(op: ir.Operation) -> Value | None:
    """What slice `op` reads, without the slice or the op before it; None if nothing folds."""
    decoded = view(op)
    source = op.operands[0]
    cut = _Cut(list(decoded["start_indices"]), list(decoded["limit_indices"]), list(decoded["strides"]))
    result = sh.spec(op.results[0])
    if 0 in result.shape:
        return None
    rank = len(result.shape)
    before = sh.producer(source)
    if before is not None and before.name == sh.concatenate.op_name:
        d, offset = view(before)["dimension"], 0
        for part in before.operands:
            size = sh.spec(part).shape[d]
            if cut.within(d, offset, offset + size):
                return cut.shifted(part, [offset if k == d else 0 for k in range(rank)])
            offset += size
    if before is not None and before.name == sh.pad.op_name:
        padding = view(before)
        if not any(padding["interior_padding"]):
            low, inner = list(padding["edge_padding_low"]), sh.spec(before.operands[0]).shape
            if all(cut.within(d, low[d], low[d] + inner[d]) for d in range(rank)):
                return cut.shifted(before.operands[0], low)
            if any(cut.outside(d, low[d], low[d] + inner[d]) for d in range(rank)):
                return sh.broadcast_in_dim(before.operands[1], result.shape, [])
    if before is not None and before.name == sh.slice_.op_name:
        inner_cut = view(before)
        start, strides = list(inner_cut["start_indices"]), list(inner_cut["strides"])
        first = [s + f * st for s, f, st in zip(start, cut.first, strides, strict=True)]
        last = [s + lst * st for s, lst, st in zip(start, cut.last, strides, strict=True)]
        return _Cut(first, [lst + 1 for lst in last],
                    [a * b for a, b in zip(strides, cut.strides, strict=True)]).shifted(before.operands[0], [0] * rank)
    return source if cut.reads_all_of(sh.spec(source).shape, [0] * rank) else None


def fold_slices(module: ir.Operation) -> None:
    for op in ops_named(module, {sh.slice_.op_name}):
        with op.location, ir.InsertionPoint(op):
            folded = _folded(op)
        if folded is not None:
            replace_op(op, [folded])


@register
@dataclass
class TenzrFoldSlices(Pass):
    flag: ClassVar[str] = "tenzr-fold-slices"
    summary: ClassVar[str] = ("Fold slices of concatenations, pads and slices into slices of what they read (no "
                              "copies, and none for IREE 3.13's wave schedule to race).")

    def run(self, module: ir.Operation) -> None:
        fold_slices(module)
