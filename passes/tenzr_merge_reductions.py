"""`tenzr-merge-reductions`: independent reductions of operands of one type over the same
dims become one reduce of several operands (CPU).

IREE 3.13 makes every reduction the root of a dispatch of its own, so two sums of values
from one web of elementwise ops (a forward-mode derivative's `sum(h)` and `sum(ḣ)`) split
the web between two or more dispatches that pass intermediates through memory. As one
reduce of both operands they are one dispatch: the chain benchmark's jvp 12.2 -> 7.7 ms
(same process; 8 executables -> 2).

Reductions merge in a function's own block only, and reductions of constants (of values
that depend on no argument) stay apart: IREE 3.13 miscompiles a merged reduce whose
operands it finds constant. Hoisted into an initializer, the dispatch reading its second
result gets the first one's offset (`x.sum(1)` beside `x.max()` of a closed-over x: the
max came back as the last row's sum; turning IREE's hoisting off instead made other second
derivatives wrong); in a loop body IREE also folds loop-invariant carries and full-size
dynamic slices into constants, and a merged reduce there gave a scan's gradient 1.0 for 3.0.
(Loop bodies had merged: the gradient of a 1,000-step RNN, hidden 64, 5.96 -> 5.08 ms on
IREE's task system.) A reduction joins a group only when it does not depend on an earlier
member. The merged reduce takes the last member's place, and the ops between the first and
the last member that read an earlier member's result move after it, in their order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import functions
from tenzr.dialect.ir_imports import ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.views import view

MAX_MERGED = 4
"""Reductions per merged reduce (a jvp's primal and tangent need two; hundreds of
independent sums in one reduce would make one dispatch with hundreds of results)."""


def _key(op: ir.Operation) -> tuple | None:
    """What reductions must share to merge: a one-operand reduce with a known combiner, by
    its operand's type and dims. The row sums tenzr-tile-heavy-results sets beside a value
    (read only by an optimization barrier) stay apart: merged, the chain benchmark's
    value_and_grad step ran 17% slower. So do reductions read by a transpose or a pad
    (`_reaches_a_relayout`)."""
    if op.name != sh.reduce.op_name or len(op.operands) != 2:
        return None
    if all(use.owner.name == sh.optimization_barrier.op_name for use in op.results[0].uses):
        return None
    attrs = view(op).attrs
    if attrs.get("combiner") in (None, "set") or _reaches_a_relayout(op):
        return None
    return str(op.operands[0].type), tuple(attrs["dimensions"])


_RELAYOUTS = frozenset({sh.transpose.op_name, sh.pad.op_name})
_FUSED_WITH_A_REDUCTION = frozenset({*sh.ELEMENTWISE, sh.compare.op_name, sh.select.op_name, sh.convert.op_name,
                                     sh.reshape.op_name})


def _reaches_a_relayout(op: ir.Operation) -> bool:
    """Whether a transpose or pad reads `op`'s result, directly or through elementwise ops
    and reshapes. IREE 3.13 fails on such a merged reduce: a transpose it moves up into the
    reduction, keeping one of its results ("expected number of yield values (2) to match the
    number of inits"), under any flags, so `jit` of `x.sum(3).T, y.sum(3).T` did not
    compile; a pad it fuses into the reduction's dispatch ("write affecting operations on
    global resources are restricted to workgroup distributed contexts") under aggressive
    fusion, so a strided convolution's second derivative compiled without it, in 78 s
    instead of 45 (the test module of 30 rules). Through a broadcast a transpose compiled,
    and so did the GMM's gradient, whose merged reduces reach pads and transposes that way
    (and ran 2-12% faster merged), so the search stops at broadcasts."""
    seen = {op}
    stack = [op]
    while stack:
        for use in stack.pop().results[0].uses:
            reader = use.owner
            if reader.name in _RELAYOUTS:
                return True
            if reader.name in _FUSED_WITH_A_REDUCTION and reader not in seen:
                seen.add(reader)
                stack.append(reader)
    return False


def _constants(ops: list[ir.Operation]) -> set[ir.Operation]:
    """The ops of `ops` (in block order) that depend on no block argument, through their
    operands (a value from outside the block counts by its own producers)."""
    memo: dict[ir.Operation, bool] = {}

    def constant(op: ir.Operation) -> bool:
        stack = [op]
        while stack:
            top = stack[-1]
            if top in memo:
                stack.pop()
                continue
            producers = [sh.producer(v) for v in top.operands]
            if any(p is None for p in producers):
                memo[top] = False
                stack.pop()
                continue
            pending = [p for p in producers if p not in memo]
            if pending:
                stack.extend(pending)
                continue
            memo[top] = all(memo[p] for p in producers)
            stack.pop()
        return memo[op]

    return {op for op in ops if constant(op)}


def _readers(sources: list[ir.Operation], ops: list[ir.Operation]) -> list[ir.Operation]:
    """The ops of `ops` (in block order, after every source) that read a source's result,
    directly or through one another."""
    reached = set(sources)
    found = []
    for op in ops:
        if any(sh.producer(v) in reached for v in op.operands):
            reached.add(op)
            found.append(op)
    return found


def _merge(group: list[ir.Operation], between: list[ir.Operation]) -> None:
    last = group[-1]
    combiners = [view(op).attrs["combiner"] for op in group]
    dims = view(last).attrs["dimensions"]
    n = len(group)
    with last.location, ir.InsertionPoint(last):
        merged = sh.reduce_region([op.operands[0] for op in group], [op.operands[1] for op in group], dims,
                                  lambda args: [sh.COMBINERS[c](args[i], args[n + i]) for i, c in enumerate(combiners)])
    anchor = merged[0].owner.operation
    for op in _readers(group[:-1], between):
        op.move_after(anchor)
        anchor = op
    for op, result in zip(group, merged, strict=True):
        op.results[0].replace_all_uses_with(result)
        op.erase()


def _groups(ops: list[ir.Operation]) -> list[list[int]]:
    """Groups of mergeable reductions among `ops` (indices in block order). A reduction
    joins its key's open group unless it reads a member of it (it then stays apart); a full
    group (MAX_MERGED) closes, and the next reduction of its key opens another."""
    constants = _constants(ops)
    groups: list[list[int]] = []
    open_group: dict[tuple, int] = {}  # key -> index in groups
    reads: dict[ir.Operation, frozenset[int]] = {}  # op -> the groups of the members it reads, directly or not
    for i, op in enumerate(ops):
        read = frozenset().union(*(reads.get(sh.producer(v), frozenset()) for v in op.operands))
        key = _key(op) if op not in constants else None
        if key is not None:
            g = open_group.get(key)
            if g is None or len(groups[g]) == MAX_MERGED:
                g = open_group[key] = len(groups)
                groups.append([])
            if g not in read:  # (one reading a member stays apart)
                groups[g].append(i)
                read |= {g}
        if read:
            reads[op] = read
    return [members for members in groups if len(members) > 1]


def _merge_groups(block: ir.Block) -> bool:
    """Merges the groups of mergeable reductions found in `block` whose spans (first to last
    member) do not overlap, the earliest first; False if none. Merging moves ops within a
    group's span only, so groups apart stay valid, and overlapping ones wait for a rescan."""
    ops = [o.operation for o in block.operations]
    merged_to = -1
    for members in sorted(_groups(ops), key=lambda m: m[0]):
        if members[0] <= merged_to:
            continue
        between = [ops[i] for i in range(members[0] + 1, members[-1]) if i not in members]
        # (a region could read a member's result where _readers does not look)
        if not any(len(op.regions) for op in between if op.name != sh.reduce.op_name):
            _merge([ops[i] for i in members], between)
            merged_to = members[-1]
    return merged_to >= 0


def merge_reductions(module: ir.Operation) -> None:
    for func in functions(module).values():
        for region in func.regions:
            for block in region.blocks:
                while _merge_groups(block):
                    pass


@register
@dataclass
class TenzrMergeReductions(Pass):
    flag: ClassVar[str] = "tenzr-merge-reductions"
    summary: ClassVar[str] = ("CPU: merge independent reductions of operands of one type over the same dims into one "
                              "reduce of several operands, which IREE compiles as one dispatch.")

    def run(self, module: ir.Operation) -> None:
        merge_reductions(module)
