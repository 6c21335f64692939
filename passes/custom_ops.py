"""The registry of `tenzr.custom_call` targets: each one's lowering and VJP rule.

    register_custom_op("my.softplus", lower=..., vjp=...)

`lower(op)` gets the decoded op (operands already StableHLO values) and returns the
result values. `vjp(op, ct)` is a VJP rule like every other (`tenzr.passes.rules`): `ct`
is the result's cotangent (a tuple of them for several results), and it returns one
cotangent (or None) per operand. A target with `vjp=None` must say
`differentiable=False`; then it contributes no gradient.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (rules imports this module)
    from tenzr.passes.rules import Lowering, VjpRule


@dataclass(frozen=True)
class CustomOp:
    target: str
    lower: Lowering
    vjp: VjpRule | None


CUSTOM_OPS: dict[str, CustomOp] = {}


def register_custom_op(target: str, *, lower: Lowering, vjp: VjpRule | None = None,
                       differentiable: bool = True) -> CustomOp:
    """Registers (or replaces) the rules of custom-call target `target`."""
    if differentiable and vjp is None:
        raise ValueError(f"custom op '{target}': give a vjp rule or declare differentiable=False")
    entry = CustomOp(target, lower, vjp if differentiable else None)
    CUSTOM_OPS[target] = entry
    return entry
