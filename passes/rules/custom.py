"""`tenzr.custom_call`: its lowering and VJP rule come from the registry of targets
(`tenzr.passes.custom_ops`)."""

from __future__ import annotations

from collections.abc import Sequence

from tenzr.dialect import ops as T
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.opdef import Op
from tenzr.passes.custom_ops import CUSTOM_OPS
from tenzr.passes.rules import Cotangent, Cotangents, lowers, vjp


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
