"""`tenzr.custom_call`: its lowering and VJP rule come from the registry of targets
(`tenzr.passes.custom_ops`). `tenzr.debug_print`: IREE's `flow.tensor.trace`, which hands
the values to the runtime's debug sink (`tenzr.runtime`) when the program runs."""

from __future__ import annotations

import json
from collections.abc import Sequence

from tenzr.dialect import ops as T
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.opdef import Op
from tenzr.dialect.types import TensorSpec
from tenzr.passes import stablehlo as sh
from tenzr.passes.custom_ops import CUSTOM_OPS
from tenzr.passes.rules import NO_DERIVATIVE, VJP_RULES, Cotangent, Cotangents, batch, lowers, vjp
from tenzr.passes.rules.batching import Batched, materialized

TRACE = "flow.tensor.trace"
"""IREE's op that hands tensors to the runtime's debug sink, under a key (in regions.PRINTS)."""


@lowers(T.custom_call)
def _lower_custom_call(op: Op) -> Sequence[Value]:
    target = op["call_target_name"]
    entry = CUSTOM_OPS.get(target)
    if entry is None:
        raise TenzrError(f"'tenzr.custom_call' op has no lowering registered for target '{target}' "
                         "(register it with tenzr.passes.custom_ops.register_custom_op)", op.location)
    out = entry.lower(op)
    return [out] if isinstance(out, ir.Value) else list(out)


@vjp(T.custom_call, adjoint="the rule registered for the target")
def _custom_call(op: Op, ct: Cotangent) -> Cotangents:
    target = op["call_target_name"]
    entry = CUSTOM_OPS.get(target)
    if entry is None or entry.vjp is None:
        why = "no rule is registered" if entry is None else "it is registered as non-differentiable"
        raise TenzrError(f"'tenzr.custom_call' op target '{target}' has no gradient: {why}", op.location)
    return entry.vjp(op, ct)


def trace(values: Sequence[Value], key: str) -> None:
    """A `flow.tensor.trace` of `values` (of a zero, where there are none: IREE 3.13 cannot
    parse the op without operands)."""
    values = list(values) or [sh.constant(0, TensorSpec((), "i32"))]
    ir.Operation.create(TRACE, results=[], operands=values, attributes={
        "key": ir.StringAttr.get(key), "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(values), 0])})


@lowers(T.debug_print)
def _lower_debug_print(op: Op) -> Sequence[Value]:
    trace(op.operands, op["key"])
    return []


BATCHED = "tz.debug.batched"
"""The key of a print under vmap: {BATCHED: the print's key}, its values the batch's."""


@batch(T.debug_print, TRACE)
def _batched_print(op: Op, batched: Batched) -> list[Value]:
    """Under vmap, the op prints the batch's values, one print per batch element (as JAX's)."""
    operation = op.operation
    assert operation is not None
    with ir.InsertionPoint(operation):  # (the batch's values, before the op that prints them)
        values = [materialized(op, batched, i) for i in range(len(op.operands))]
    for i, value in enumerate(values):
        operation.operands[i] = value
    key = ir.StringAttr(operation.attributes["key"]).value
    operation.attributes["key"] = ir.StringAttr.get(json.dumps({BATCHED: key}))
    return []


VJP_RULES[TRACE] = NO_DERIVATIVE
