"""`tenzr-copy-in-place-operands`: an op that IREE 3.13 carries out in the buffer of an
operand (a scatter, dynamic_update_slice, sort or loop) gets a copy of that operand where
IREE would otherwise write a buffer that other uses read or that it may not write.

Which operands, all measured on IREE 3.13:
- Anything computed from constants alone. IREE writes the update into the buffer the value's
  other uses read, and leaves the update's own result unwritten:
  `tz.arange(5).at[i].add(3), tz.arange(5)` gave zeros and the updated iota (integer iotas;
  float ones came back right); with x64, `tz.ones(5).at[i].add(a), tz.ones(5)` gave the
  update and zeros, as did a `fori_loop` over updates of `tz.ones(5)` beside it. Of bare
  constants (and their reshapes and broadcasts) only splats of a 64-bit element whose halves
  differ (a float64 or int64 one, -0.0) or of a complex one (zeros too) go wrong: IREE fills
  a buffer with a splat of 32 bits or fewer per use and reads dense constants from a copy,
  but computes a wider splat once. Two updates of one such splat wrote one buffer, and failed
  to compile under IREE's wave schedule ("'stream.yield' op used resource not listed in
  explicit captures").
- A function's argument that the function also returns (unchanged, reshaped, through ops IREE
  folds away such as `maximum(x, x)` or `-(-x)`, or carried through a loop):
  `x.at[i].add(a), x` returned the updated x twice, `tz.sort(x), x` the sorted x twice
  (reads of x, such as `x * 2`, came back right: IREE runs them before the update).
- A value that a scatter also takes as its updates (through ops that may fold away): IREE
  crashed (in `DispatchWorkgroupsOp::getResultAccess`) on the scatter of `x.at[:, [0]].add(x)`
  with x an argument of shape (2, 1, 2), whose updates are x behind an index bounds check that
  folds away late, and on the scatter of a convolution's result into itself.
- Of a loop with a conditional in its body, another loop's result (through ops that may
  fold away): IREE ran the loop without one of its buffers ("binding table slot requires a
  buffer but none was provided"; with the task system's driver, "transient buffer has not
  been committed"), in the jvp and gradient of JAX's `expm` (a solve's loops, then a scan
  over `cond`), where either of the two results handed on copied was enough.
- Of a sort, every constant (`tz.sort(c), c` returned c sorted, and a sort of a constant
  once failed to compile: "write affecting operations on global resources are restricted to
  workgroup distributed contexts", from `tz.sort` of an array a jitted function closes over)
  and every slice of an argument (the same error, from `tz.sort(x[:2])`).

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

_IN_PLACE = {"stablehlo.scatter": lambda op: (len(op.operands) - 1) // 2,
             "stablehlo.dynamic_update_slice": lambda op: 1,
             "stablehlo.while": lambda op: len(op.operands),
             "stablehlo.sort": lambda op: len(op.operands)}
"""The ops IREE may carry out in an operand's buffer (a loop: in the buffers its body updates
in place), and how many of their first operands they may write."""

_SPLAT_KEEPING = frozenset({"stablehlo.reshape", "stablehlo.broadcast_in_dim"})

_LOOKS_AT = 64
"""How many values an operand's computation is followed through to the constants it is
computed from."""


def copy_in_place_operands(module: ir.Operation) -> None:
    for op in ops_named(module, set(_IN_PLACE)):
        for i in range(_IN_PLACE[op.name](op)):
            value = op.operands[i]
            if _needs_a_copy(op, value):
                with op.location, ir.InsertionPoint(op):
                    op.operands[i] = sh.copy(value)


def _needs_a_copy(op: ir.Operation, value: Value) -> bool:
    """Whether IREE 3.13 would carry `op` out in a buffer that other uses of `value` read, or
    that it may not write, or crash on it."""
    s = sh.spec(value)
    if s.rank == 0 or s.size == 0:
        return False
    if _returned_argument(op, value) or _scatter_of_itself(op, value) or _loop_result_into_a_branching_loop(op, value):
        return True
    if op.name == sh.sort.op_name:
        made = sh.producer(value)
        return _from_constants(value) or (made is not None and made.name == sh.slice_.op_name
                                          and isinstance(made.operands[0], ir.BlockArgument))
    leaf = value  # (a constant's reshapes and broadcasts: splats of its element, if it is one)
    while (made := sh.producer(leaf)) is not None and made.name in _SPLAT_KEEPING:
        leaf = made.operands[0]
    if made is None or made.name != sh.constant.op_name:
        # (a loop's operand computed from constants, such as an iota of pivots, came back right,
        # and its copy made IREE 3.13's aggressive fusion fail: "operand #0 does not dominate")
        return op.name != sh.while_loop.op_name and _from_constants(value)
    element = splat_element(leaf)
    if element is None:
        return leaf is not value  # (a dense constant is right; IREE computes its reshapes and broadcasts)
    if s.is_complex:
        return True
    data = np.asarray(element.value, numpy_dtype(s.dtype)).tobytes()
    return len(data) == 8 and data[:4] != data[4:]  # (IREE fills 32-bit patterns, as zero's, per use)


_MAY_FOLD_AWAY = frozenset(f"stablehlo.{name}" for name in (
    "reshape", "transpose", "broadcast_in_dim", "slice", "dynamic_slice", "pad", "concatenate", "convert",
    "bitcast_convert", "real", "reduce_precision", "negate", "not", "add", "subtract", "multiply", "divide", "power",
    "maximum", "minimum", "clamp", "select", "and", "or", "xor", "shift_left", "shift_right_arithmetic",
    "shift_right_logical"))
"""Ops IREE 3.13 may fold to an operand, given operands that are constants or that operand:
each of `maximum(x, x)`, `select(p, x, x)`, `x * 1`, `x - 0`, `x / 1`, `clamp(-inf, x, inf)`,
`maximum(x, -inf)`, `-(-x)`, an identity `convert`, `transpose`, `broadcast_in_dim` or
`dynamic_slice`, returned beside `tz.sort(x)`, came back sorted."""


def _returned_argument(op: ir.Operation, value: Value) -> bool:
    """Whether `value` is a function's argument (or a reshape of one) that the function may
    also return."""
    while (made := sh.producer(value)) is not None and made.name == sh.reshape.op_name:
        value = made.operands[0]
    if not (isinstance(value, ir.BlockArgument) and value.owner.owner.operation.name == "func.func"):
        return False
    size = sh.spec(value).size  # (a smaller slice returned came back right)
    return any(use.owner.operation.name == "func.return" and sh.spec(v).size == size
               for v in _may_fold_to(value, op) for use in v.uses)


def _loop_result_into_a_branching_loop(op: ir.Operation, value: Value) -> bool:
    """Whether `op` is a loop with a conditional in its body and `value` another loop's result
    (through ops that may fold away)."""
    if op.name != sh.while_loop.op_name:
        return False
    made = sh.producer(_source(value))
    if made is None or made.name != sh.while_loop.op_name:
        return False
    return bool(ops_named(op, {"stablehlo.case", "stablehlo.if"}))


def _source(value: Value) -> Value:
    """What `value` is computed from through ops of one operand that may fold away."""
    while (made := sh.producer(value)) is not None and made.name in _MAY_FOLD_AWAY and len(made.operands) == 1:
        value = made.operands[0]
    return value


def _scatter_of_itself(op: ir.Operation, value: Value) -> bool:
    """Whether `op` is a scatter whose updates may be `value`, its operand, itself."""
    if op.name != sh.scatter.op_name:
        return False
    aliases = _may_fold_to(_source(value), op)  # (tenzr-order-scatter-dims transposes both)
    return any(v in aliases for v in op.operands[_IN_PLACE[op.name](op) + 1:])


def _may_fold_to(value: Value, op: ir.Operation) -> set[Value]:
    """The values IREE 3.13 may compute as `value` itself: `value`, and what it gives through
    ops that may fold away (_MAY_FOLD_AWAY), loops other than `op` and conditionals."""
    aliases, walk = {value}, [value]
    for v in walk:  # (grows while it is walked)
        for use in v.uses:
            user = use.owner.operation
            found = None
            if user.name in _MAY_FOLD_AWAY:
                others = [w for k, w in enumerate(user.operands)
                          if k != use.operand_number and not (user.name == sh.select.op_name and k == 0)]
                if all(_from_constants(w) or (user.name in _IDEMPOTENT and w in aliases) for w in others):
                    found = user.results[0]
            elif user.name == sh.while_loop.op_name and user != op:  # (it may hand the buffer on)
                found = user.results[use.operand_number]
            elif user.name == "stablehlo.return" and user.parent.operation.name in _YIELDING:
                found = user.parent.results[use.operand_number]
            if found is not None and found not in aliases:
                aliases.add(found)
                walk.append(found)
    return aliases


_IDEMPOTENT = frozenset(f"stablehlo.{name}" for name in ("maximum", "minimum", "clamp", "select", "and", "or"))
"""Of those, the ops that give x where every operand is x (or a constant)."""

_YIELDING = frozenset({"stablehlo.case", "stablehlo.if", "stablehlo.while"})
"""Region ops whose regions' `stablehlo.return` operands become their results."""


def _from_constants(value: Value) -> bool:
    """Whether `value` is computed from constants and iotas alone, by ops without regions
    (looking at _LOOKS_AT values at most)."""
    pending, seen = [value], {value}
    while pending:
        made = sh.producer(pending.pop())
        if made is None or len(made.regions) or len(seen) > _LOOKS_AT:
            return False
        if made.name in (sh.constant.op_name, sh.iota.op_name):
            continue
        if not len(made.operands):
            return False
        for v in made.operands:
            if v not in seen:
                seen.add(v)
                pending.append(v)
    return True


@register
@dataclass
class TenzrCopyInPlaceOperands(Pass):
    flag: ClassVar[str] = "tenzr-copy-in-place-operands"
    summary: ClassVar[str] = ("Give a scatter, dynamic_update_slice, sort or loop a copy of an operand computed from "
                              "constants alone (an iota, a 64-bit or complex splat; for a sort, any constant or slice "
                              "of an argument), of an argument the function may also return, of a value a scatter "
                              "also takes as its updates, or of another loop's result for a loop that branches "
                              "(IREE 3.13 carries such ops out in a buffer that other uses read, or that it may not "
                              "write, or loses, or crashes).")

    def run(self, module: ir.Operation) -> None:
        copy_in_place_operands(module)
