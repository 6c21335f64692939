"""`tenzr-copy-updated-constants`: a scatter, dynamic_update_slice or loop of a value that
IREE computes from constants alone, or of an argument the function also returns, updates a
copy of it, one IREE neither folds nor shares.

IREE 3.13 lets such an update write into the buffer of the value it updates, which the
value's other uses then read, and leaves the update's own result unwritten:
`tz.arange(5).at[i].add(3), tz.arange(5)` gave zeros and the updated iota (int32 and int64
iotas; float ones came back right); with x64, `tz.ones(5).at[i].add(a), tz.ones(5)` gave the
update and zeros, as did a `fori_loop` over updates of `tz.ones(5)` beside it. The same
happens to a splat constant of a 64-bit element whose halves differ (a float64 or int64 one,
-0.0) or of a complex one (zeros too): IREE fills a buffer with a splat of 32 bits or fewer
per use (those, and dense constants, came back right), but computes a wider one once. Two
updates of one such splat wrote one buffer, and failed to compile under IREE's wave
schedule ("'stream.yield' op used resource not listed in explicit captures").

A function's argument that the function also returns (unchanged or reshaped) is another
such value: `x.at[i].add(a), x` returned the updated x twice (reads of x, such as `x * 2`,
came back right: IREE runs them before the update).

The copy is `sh.copy`: the value behind an optimization barrier (which stops IREE computing
it as a constant, but is no copy by itself: the update then wrote the barrier's operand),
reversed twice along its widest dim (which IREE does not fold).
"""

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
                     "stablehlo.dynamic_update_slice": lambda op: 1,
                     "stablehlo.while": lambda op: len(op.operands)}
"""The ops IREE may carry out in an operand's buffer (a loop: in the buffers its body updates
in place), and how many of their first operands they may write. (Sorts also sort in place,
but sort-rows already copies a slice of an argument and puts a constant behind a barrier,
and a sorted splat is the splat.)"""

_SPLAT_KEEPING = frozenset({"stablehlo.reshape", "stablehlo.broadcast_in_dim"})

_LOOKS_BACK = 16
"""How many ops back an operand is followed to the constants it is computed from."""


def copy_updated_constants(module: ir.Operation) -> None:
    for op in ops_named(module, set(_UPDATED_OPERANDS)):
        for i in range(_UPDATED_OPERANDS[op.name](op)):
            value = op.operands[i]
            if _written_in_place(value):
                with op.location, ir.InsertionPoint(op):
                    op.operands[i] = sh.copy(value)


def _written_in_place(value: Value) -> bool:
    """Whether IREE 3.13 would update `value` in the buffer its other uses read."""
    s = sh.spec(value)
    if s.rank == 0 or s.size == 0:
        return False
    if _returned_argument(value):
        return True
    leaf = value  # (a splat constant's reshapes and broadcasts are splats of its element)
    while (made := sh.producer(leaf)) is not None and made.name in _SPLAT_KEEPING:
        leaf = made.operands[0]
    if made is not None and made.name == sh.constant.op_name:
        element = splat_element(leaf)
        if element is None:
            return leaf is not value  # (a dense constant is right; IREE computes its reshapes and broadcasts)
        if not (s.is_complex or numpy_dtype(s.dtype).itemsize == 8):
            return False  # (splats IREE fills per use)
        if s.is_complex:
            return True
        data = np.asarray(element.value, numpy_dtype(s.dtype)).tobytes()
        return data[:4] != data[4:]  # (a 32-bit pattern, as zero's, is filled per use)
    return _from_constants(value, _LOOKS_BACK)


def _returned_argument(value: Value) -> bool:
    """Whether `value` is a function's argument (or a reshape of one) that the function also
    returns, unchanged or reshaped."""
    while (made := sh.producer(value)) is not None and made.name == sh.reshape.op_name:
        value = made.operands[0]
    if not (isinstance(value, ir.BlockArgument) and value.owner.owner.operation.name == "func.func"):
        return False
    escaping, seen = [value], 0
    while seen < len(escaping):
        for use in escaping[seen].uses:
            user = use.owner.operation
            if user.name == "func.return":
                return True
            if user.name == sh.reshape.op_name:
                escaping.append(user.results[0])
        seen += 1
    return False


def _from_constants(value: Value, depth: int) -> bool:
    """Whether `value` is computed from constants and iotas alone, by ops without regions
    (looking `depth` ops back)."""
    made = sh.producer(value)
    if made is None or depth == 0 or len(made.regions):
        return False
    if made.name in (sh.constant.op_name, sh.iota.op_name):
        return True
    return len(made.operands) > 0 and all(_from_constants(v, depth - 1) for v in made.operands)


@register
@dataclass
class TenzrCopyUpdatedConstants(Pass):
    flag: ClassVar[str] = "tenzr-copy-updated-constants"
    summary: ClassVar[str] = ("Let a scatter, dynamic_update_slice or loop of a value computed from constants alone "
                              "(an iota, a 64-bit or complex splat), or of an argument the function also returns, "
                              "update a copy of it (IREE 3.13 writes such an update into the buffer the value's other "
                              "uses read).")

    def run(self, module: ir.Operation) -> None:
        copy_updated_constants(module)
