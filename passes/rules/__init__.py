"""The rule tables, one per transformation, keyed by op name across dialects.

    LOWERINGS["tenzr.exp"](op) -> values               (convert-tenzr-to-stablehlo)
    VJP_RULES["tenzr.exp"](op, ct) -> cotangents       (tenzr-grad)
    VJP_RULES["stablehlo.exponential"](op, ct) -> ...  (the same rule: its twin)

Each op family's module (`elementwise`, `linalg`, `shape`, `indexing`, `reductions`,
`custom`) defines, next to each other, an op's lowering and its rules, and registers them
here with `lowers` and `vjp`. A rule reads the decoded op (`passes.views.view`:
`op.operands`, `op.specs`, `op.result`, `op.out`, `op[attribute]`).

A VJP rule gets `ct`, the cotangent of the op's result (for an op with several results, a
tuple with one per result; the driver makes zeros for those without one), and returns one
cotangent per operand (None: none). A cotangent may have the broadcast result shape: the
driver (`tenzr_grad`), not the rule, sums it back to the operand's shape, checks the count
and the dtypes, and accumulates fan-out. `NO_DERIVATIVE` marks an op that contributes no
gradient: every tenzr op declared `gradient="none"`, and StableHLO's comparisons, iota,
rounding and logic ops.

A JVP rule (`tenzr-jvp`) gets the tangents of the op's operands (None: zero) and returns
one tangent per result (None: zero). A linear op declares itself `linear` (its JVP is the op on
the tangents), a bilinear one `bilinear` (mul, matmul, convolution). Other ops need none
written: their entry is `TRANSPOSED`, and the driver derives their JVP from their VJP rule, which is linear in the
cotangent, by transposing it (reverse mode over the rule's own StableHLO), so the math of
each op is written once. Region ops have JVP rules of their own (a loop carries tangents
beside its values; a conditional's branches are their JVPs); the table holds an entry for
every op of `VJP_RULES`, and NO_DERIVATIVE ops have no tangents.

A batching rule (`tenzr-batch`) gets, per operand, its batched value (a leading batch
dimension of the driver's size) or None where the operand is not batched, and returns the
batched results. Ops without a rule of their own are `LOOPED`: the driver runs them once
per batch element in a loop, which is right for any op (region ops, custom calls) but slow;
the rules in `batching` vectorize the common ones.

A tenzr op and its StableHLO twin share one rule where their math is one (`tenzr.exp` and
`stablehlo.exponential`); a tenzr op keeps its own where the tenzr level knows more
(`reduce_prod`'s zeros, scatter's modes, sort's permutation, the convolution strategy).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tenzr.dialect.ir_imports import Value
from tenzr.dialect.opdef import Op, OpDef
from tenzr.dialect.ops import OPS
from tenzr.passes import stablehlo as sh
from tenzr.passes.stablehlo import Builder

Lowering = Callable[[Op], "Value | Sequence[Value]"]
Cotangent = Any
"""The cotangent a VJP rule gets: a Value, or a tuple of Values for an op with several results."""
Cotangents = Sequence["Value | None"]
VjpRule = Callable[[Op, Cotangent], Cotangents]
Tangents = Sequence["Value | None"]
JvpRule = Callable[[Op, Tangents], Tangents]
BatchRule = Callable[[Op, Sequence["Value | None"]], Sequence[Value]]


class NoDerivative:
    """The table entry of an op that contributes no gradient."""

    def __repr__(self) -> str:
        return "NO_DERIVATIVE"


NO_DERIVATIVE = NoDerivative()


class Transposed:
    """The JVP table entry of an op whose JVP is its VJP rule transposed (see above)."""

    def __repr__(self) -> str:
        return "TRANSPOSED"


TRANSPOSED = Transposed()


class Looped:
    """The batching table entry of an op that runs once per batch element, in a loop."""

    def __repr__(self) -> str:
        return "LOOPED"


LOOPED = Looped()

LOWERINGS: dict[str, Lowering] = {}
VJP_RULES: dict[str, VjpRule | NoDerivative] = {}
JVP_RULES: dict[str, JvpRule | NoDerivative | Transposed] = {}
BATCH_RULES: dict[str, BatchRule | Looped] = {}
ADJOINTS: dict[str, str] = {}
"""The adjoint each VJP rule computes, as a formula (the docs print it)."""


def op_name(key: OpDef | Builder) -> str:
    """The op name of a tenzr OpDef or of a StableHLO builder of the emitter (`sh.exp`)."""
    return key.name if isinstance(key, OpDef) else key.op_name


def lowers(*defs: OpDef) -> Callable[[Lowering], Lowering]:
    """Registers the decorated function as the lowering of the tenzr ops `defs`."""
    def register(fn: Lowering) -> Lowering:
        for opdef in defs:
            assert opdef.name not in LOWERINGS, f"{opdef.name} has two lowerings"
            LOWERINGS[opdef.name] = fn
        return fn

    return register


def vjp(*keys: OpDef | Builder, adjoint: str) -> Callable[[VjpRule], VjpRule]:
    """Registers the decorated function as the VJP rule of ops `keys` (tenzr OpDefs and the
    emitter's builders of their StableHLO twins), computing `adjoint`."""
    def register(fn: VjpRule) -> VjpRule:
        for key in keys:
            name = op_name(key)
            assert name not in VJP_RULES, f"{name} has two VJP rules"
            assert not (isinstance(key, OpDef) and key.gradient == "none"), f"{name} is declared gradient='none'"
            VJP_RULES[name] = fn
            ADJOINTS[name] = adjoint
        return fn

    return register


def jvp(*keys: OpDef | Builder) -> Callable[[JvpRule], JvpRule]:
    """Registers the decorated function as the JVP rule of ops `keys` (instead of the
    transposed VJP rule)."""
    def register(fn: JvpRule) -> JvpRule:
        for key in keys:
            name = op_name(key)
            assert name not in JVP_RULES, f"{name} has two JVP rules"
            JVP_RULES[name] = fn
        return fn

    return register


def batch(*keys: OpDef | Builder | str) -> Callable[[BatchRule], BatchRule]:
    """Registers the decorated function as the batching rule of ops `keys` (OpDefs,
    builders, or op names)."""
    def register(fn: BatchRule) -> BatchRule:
        for key in keys:
            name = key if isinstance(key, str) else op_name(key)
            assert name not in BATCH_RULES, f"{name} has two batching rules"
            BATCH_RULES[name] = fn
        return fn

    return register


def _again(op: Op, operands: Sequence[Value]) -> list[Value]:
    """The op built again here, on `operands` (its attributes and regions copied)."""
    assert op.operation is not None
    copy = op.operation.clone()
    for i, value in enumerate(operands):
        copy.operands[i] = value
    return list(copy.results)


def linear_jvp(op: Op, tangents: Tangents) -> Tangents:
    """Linear: the op applied to the tangents.

    Its floating-point operands without a tangent get zeros; the others (indices,
    predicates) stay."""
    operands = [t if t is not None else sh.zeros(s) if s.is_inexact else v
                for t, s, v in zip(tangents, op.specs, op.operands, strict=True)]
    return [r if s.is_inexact else None for r, s in zip(_again(op, operands), op.results, strict=True)]


def bilinear_jvp(op: Op, tangents: Tangents) -> Tangents:
    """Bilinear: op(ȧ, b) + op(a, ḃ)."""
    (a, b), (ta, tb) = op.operands, tangents
    terms = ([_again(op, [ta, b])[0]] if ta is not None else []) + ([_again(op, [a, tb])[0]] if tb is not None else [])
    return [terms[0] if len(terms) == 1 else sh.add(*terms)]


def linear(*keys: OpDef | Builder) -> None:
    """Declares ops (tenzr OpDefs, StableHLO builders) linear: their JVP is `linear_jvp`."""
    jvp(*keys)(linear_jvp)


def bilinear(*keys: OpDef | Builder) -> None:
    """Declares two-operand ops bilinear: their JVP is `bilinear_jvp`."""
    jvp(*keys)(bilinear_jvp)


def no_derivative(*builders: Builder) -> None:
    """Declares StableHLO ops (by their builders) to contribute no gradient."""
    for builder in builders:
        VJP_RULES[op_name(builder)] = NO_DERIVATIVE


for _opdef in OPS.values():
    if _opdef.gradient == "none":
        VJP_RULES[_opdef.name] = NO_DERIVATIVE

# The families register their rules when imported (after the helpers above exist).
from tenzr.passes.rules import (  # noqa: E402, F401
    batching,
    control,
    custom,
    elementwise,
    indexing,
    linalg,
    reductions,
    shape,
)

for _name, _rule in VJP_RULES.items():
    JVP_RULES.setdefault(_name, NO_DERIVATIVE if _rule is NO_DERIVATIVE else TRANSPOSED)
for _name in [*OPS, *VJP_RULES]:
    if _name != "func.call":
        BATCH_RULES.setdefault(_name, LOOPED)
