"""`tenzr-tile-heavy-results`: large results of long transcendental chains get a row sum
beside them, so IREE tiles their dispatch (CPU).

IREE 3.13 vectorizes a dispatch of elementwise work one vector at a time, so a long chain
of dependent polynomial evaluations (sin, exp, ...) waits on its own latency; a dispatch
that also reduces along the last axis is tiled 8 rows by 8 columns and runs eight chains
at once. A large returned value computed by such a chain therefore gets a row sum beside
it, behind an optimization barrier (so nothing removes the unused sum), and IREE fuses the
sum into the value's dispatch. Same process on Zen 3: a 50-op chain (25 transcendentals)
returned whole 25-26 -> 15 ms, the chain benchmark's gradient 45 -> 40 ms, 4
transcendentals 3.0 -> 2.3 ms; with 2 it broke even and with 1 it ran 1.5x slower, hence
MIN_TRANSCENDENTALS.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import body_ops, functions
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.types import spec_of_type
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register

MIN_TRANSCENDENTALS = 4
MIN_ELEMENTS = 1 << 16


def _transcendentals_before(value: Value) -> int:
    """Transcendental ops among the elementwise ops that compute `value` (IREE fuses those
    into one dispatch), each counted once."""
    seen: set[ir.Operation] = set()
    stack, count = [value], 0
    while stack:
        op = sh.producer(stack.pop())
        if op is None or op in seen or op.name not in sh.ELEMENTWISE:
            continue
        seen.add(op)
        count += op.name in sh.TRANSCENDENTAL
        stack.extend(op.operands)
    return count


def tile_heavy_results(module: ir.Operation) -> None:
    for func in functions(module).values():
        if not func.regions[0].blocks:
            continue
        ret = body_ops(func)[-1]
        for i, value in enumerate(list(ret.operands)):
            s = spec_of_type(value.type)
            if (s is None or not s.is_float or s.rank < 2 or s.shape[-1] < 8 or s.size < MIN_ELEMENTS
                    or _transcendentals_before(value) < MIN_TRANSCENDENTALS):
                continue
            with ret.location, ir.InsertionPoint(ret):
                rows = sh.reduce(value, 0, [s.rank - 1], "add")
                ret.operands[i] = sh.optimization_barrier(value, rows)[0]


@register
@dataclass
class TenzrTileHeavyResults(Pass):
    flag: ClassVar[str] = "tenzr-tile-heavy-results"
    summary: ClassVar[str] = ("CPU: give a large result of a long transcendental chain a row sum behind a barrier, "
                              "so IREE tiles its dispatch 8x8 instead of one vector at a time.")

    def run(self, module: ir.Operation) -> None:
        tile_heavy_results(module)
