"""`tenzr-compute-updated-splats`: a scatter or dynamic_update_slice of a 64-bit or complex
splat updates a broadcast of the splat's element behind an optimization barrier instead, a
value IREE computes.

IREE 3.13 fills a buffer with a splat of 32 bits or fewer per use, but a splat of a 64-bit
element whose halves differ (a float64 or int64 one, for instance), or of a complex one
(zeros too), becomes one buffer that IREE's in-place updates then write: the splat's other uses
read the update (`tz.ones(5).at[i].add(a), tz.ones(5)` with x64 gave zeros for the second),
and two updates of one such splat wrote one buffer serially and failed to compile waved
("'stream.yield' op used resource not listed in explicit captures"). A computed operand is
copied before it is updated, as every other value is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from tenzr.dialect.context import ops_named
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.types import numpy_dtype
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.views import splat_element

_UPDATED_OPERANDS = {"stablehlo.scatter": lambda op: (len(op.operands) - 1) // 2,
                     "stablehlo.dynamic_update_slice": lambda op: 1}
"""The updates IREE carries out in an operand's buffer, and how many of their first operands
they write. (Sorts also sort in place, but a sorted splat is the splat; a loop's body updates
its block arguments, and a splat carried into one came back right.)"""

_OF_ITS_OPERANDS = sh.ELEMENTWISE | {"stablehlo.reshape", "stablehlo.broadcast_in_dim", "stablehlo.transpose",
                                     "stablehlo.reverse", "stablehlo.slice"}
"""Ops whose result is a splat when each operand is one: IREE folds them into splat constants."""


def compute_updated_splats(module: ir.Operation) -> None:
    for op in ops_named(module, set(_UPDATED_OPERANDS)):
        for i in range(_UPDATED_OPERANDS[op.name](op)):
            value = op.operands[i]
            if _written_through(value):
                with op.location, ir.InsertionPoint(op):
                    op.operands[i] = _computed(value)


def _written_through(value: Value) -> bool:
    """Whether IREE 3.13 would give `value`, a splat, one buffer with its in-place updates."""
    s = sh.spec(value)
    if s.size == 0 or not (s.is_complex or numpy_dtype(s.dtype).itemsize == 8) or not _splat(value, depth=8):
        return False
    element = splat_element(value)
    if element is None or s.is_complex:
        return True
    data = np.asarray(element.value, numpy_dtype(s.dtype)).tobytes()
    return data[:4] != data[4:]  # (a pattern of 32 bits IREE fills per use)


def _splat(value: Value, depth: int) -> bool:
    """Whether `value` is a splat constant or computed from them alone by elementwise and
    shape ops (looking `depth` ops back)."""
    if splat_element(value) is not None:
        return True
    made = sh.producer(value)
    return (depth > 0 and made is not None and made.name in _OF_ITS_OPERANDS
            and all(_splat(v, depth - 1) for v in made.operands))


def _computed(value: Value) -> Value:
    """`value`'s element behind an optimization barrier, broadcast to its shape."""
    s = sh.spec(value)
    element = sh.reshape(sh.slice_(value, [0] * s.rank, [1] * s.rank), ())
    return sh.broadcast_in_dim(sh.optimization_barrier(element)[0], s.shape, [])


@register
@dataclass
class TenzrComputeUpdatedSplats(Pass):
    flag: ClassVar[str] = "tenzr-compute-updated-splats"
    summary: ClassVar[str] = ("Let a scatter or dynamic_update_slice of a 64-bit or complex splat update a broadcast "
                              "of the splat's element behind an optimization barrier (IREE 3.13 writes such an update "
                              "into the splat's one buffer, which the splat's other uses read).")

    def run(self, module: ir.Operation) -> None:
        compute_updated_splats(module)
