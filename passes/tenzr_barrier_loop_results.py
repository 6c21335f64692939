"""`tenzr-barrier-loop-results`: what a loop returns is read through an optimization barrier.

IREE 3.13 turns a loop of known trip count into an `scf.for`, which its stream partitioner
does not order against the dispatches around it: a dispatch computing both a value the loop
starts from and a value read after the loop, with the loop's result, went into one partition
with that later read ("circular dependency: input operation uses partition output"), and
the module failed to compile. The gradient of a 17-step `scan` with a scalar carry did so:
the loop runs two blocks of eight steps, and the seventeenth step's cotangent, computed
before the adjoint loop, is added to the adjoint loop's result after it (lengths 16, 24 and
32 have no such step and compiled). Behind a barrier the later read is a partition of its
own, and the module compiles.

Not in the lowering pipeline: `compiler.compile_stablehlo` runs it on the modules IREE
refused so, and only on them (behind every loop's results, a scan's gradient that compiled
without barriers failed at run time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named
from tenzr.dialect.ir_imports import ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.regions import has_uses
from tenzr.passes.registry import Pass, register


def barrier_loop_results(module: ir.Operation) -> None:
    for loop in ops_named(module, {sh.while_loop.op_name}):
        read = [result for result in loop.results if has_uses(result)]
        if not read:
            continue
        with loop.location, ir.InsertionPoint.after(loop):
            kept = sh.optimization_barrier(*read)
        barrier = kept[0].owner
        for result, value in zip(read, kept, strict=True):
            for use in list(result.uses):
                if use.owner != barrier:
                    use.owner.operands[use.operand_number] = value


@register
@dataclass
class TenzrBarrierLoopResults(Pass):
    flag: ClassVar[str] = "tenzr-barrier-loop-results"
    summary: ClassVar[str] = ("Read each loop's results through an optimization barrier (IREE 3.13's stream "
                              "partitioner put a dispatch feeding a loop and one reading its result into one "
                              "partition: a circular dependency, and no module).")

    def run(self, module: ir.Operation) -> None:
        barrier_loop_results(module)
