"""`tenzr-sort-rows`: IREE's sorts as StableHLO defines them.

- A sort asked to be stable (`is_stable`, as JAX's `jnp.argsort`, `lax.sort` and `top_k`
  export theirs) of several operands breaks ties by an iota along its dim (its own, or one
  added beside them): IREE
  3.13 ignores `is_stable` (jnp.argsort of [1, 0, 1, 0, 1, 0, 1, 0] came back
  [1, 5, 3, 7, ...], top_k's equal values in the wrong order, and a gradient through the
  sort reached another of the tied elements). A sort of one operand needs none: its equal
  elements are alike.
- A rank-1 sort of several operands is sorted as one row of a rank-2 one (IREE 3.13's
  Vulkan compiler crashes on the first). A sort along a dim of one element is its operands.

(tenzr-copy-in-place-operands gives a sort's constant operands and slices of arguments
copies of their own.)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import ir
from tenzr.dialect.types import TensorSpec
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.views import iota_along


def _stable(op: ir.Operation) -> bool:
    return "is_stable" in op.attributes and ir.BoolAttr(op.attributes["is_stable"]).value


def _inlined(comparator: ir.Block, values: list[ir.Value]) -> ir.Value:
    """What a copy of `comparator`, moved to the end of the insertion point's block, returns
    for `values`."""
    block = comparator.owner.operation.clone().regions[0].blocks[0]  # (a copy of the sort holding it)
    for argument, value in zip(block.arguments, values, strict=True):
        argument.replace_all_uses_with(value)
    operations = [o.operation for o in block.operations]
    here = ir.InsertionPoint.current.block  # (built at its end)
    for o in operations[:-1]:
        here.append(o)
    result = operations[-1].operands[0]
    block.owner.operation.erase()
    return result


def _ties_broken(op: ir.Operation) -> list[ir.Value]:
    """The results of a copy of a stable sort `op` whose ties go by position: its comparator
    less(a, b) becomes less(a, b) or (not less(b, a) and i < j) for the positions i, j of an
    iota along its dim, the one among its operands (as JAX's argsort and top_k have) or one
    added beside them (IREE failed to compile a sort given two: "write affecting operations
    on global resources are restricted to workgroup distributed contexts")."""
    dimension = ir.IntegerAttr(op.attributes["dimension"]).value
    operands = list(op.operands)
    specs = [sh.spec(v) for v in operands]
    at = next((k for k, v in enumerate(operands) if iota_along(v, dimension)), None)
    if at is None:
        at = len(operands)
        specs.append(specs[0].with_dtype("i32"))
        operands.append(sh.iota(specs[-1], dimension))
    comparator = op.regions[0].blocks[0]
    new = sh.create("stablehlo.sort", specs, operands, {
        "dimension": op.attributes["dimension"], "is_stable": ir.BoolAttr.get(False)}, regions=1)
    position = sh.ir_type(TensorSpec((), specs[at].dtype))
    added = [position] * 2 if at == len(op.operands) else []
    block = new.regions[0].blocks.append(*[a.type for a in comparator.arguments], *added)
    with ir.InsertionPoint(block):
        pairs = list(block.arguments)[:len(comparator.arguments)]
        less = _inlined(comparator, pairs)
        greater = _inlined(comparator, [pairs[k ^ 1] for k in range(len(pairs))])  # (each pair's two swapped)
        earlier = sh.compare(block.arguments[2 * at], block.arguments[2 * at + 1], "LT")
        sh.return_(sh.or_(less, sh.and_(sh.not_(greater), earlier)))
    return list(new.results)[:len(op.operands)]


def sort_rows(module: ir.Operation) -> None:
    for op in ops_named(module, {sh.sort.op_name}):
        if sh.spec(op.operands[0]).shape[ir.IntegerAttr(op.attributes["dimension"]).value] <= 1:
            replace_op(op, list(op.operands))  # (one element per row: nothing to sort)
            continue
        if _stable(op) and len(op.operands) > 1:
            with op.location, ir.InsertionPoint(op):
                stable = _ties_broken(op)
            replace_op(op, stable)
            op = sh.producer(stable[0])
        specs = [sh.spec(v) for v in op.operands]
        if specs[0].rank != 1 or len(specs) < 2:
            continue
        with op.location, ir.InsertionPoint(op):
            rows = [sh.reshape(v, (1, *s.shape)) for v, s in zip(op.operands, specs, strict=True)]
            sorted_rows = sh.sort_with(rows, 1, op.regions[0].blocks[0], _stable(op))
            replace_op(op, [sh.reshape(v, s.shape) for v, s in zip(sorted_rows, specs, strict=True)])


@register
@dataclass
class TenzrSortRows(Pass):
    flag: ClassVar[str] = "tenzr-sort-rows"
    summary: ClassVar[str] = ("Break the ties of a stable sort of several operands by position (IREE 3.13 ignores "
                              "is_stable); sort a rank-1 sort of several operands as one row of rank 2 (IREE 3.13's "
                              "Vulkan compiler crashes on the first); drop a sort along a dim of one element.")

    def run(self, module: ir.Operation) -> None:
        sort_rows(module)
