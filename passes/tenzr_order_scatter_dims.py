"""`tenzr-order-scatter-dims`: a scatter gets its operand's dims in the order [batching
dims, indexed dims, the rest] and its updates' in the order [scatter dims, window dims], by
transposes around it. IREE 3.13 rejects or miscompiles other orders:
- with batching dims, it rejects them ("'iree_linalg_ext.scatter' op expected indices to be
  equal to batch rank or batch rank + 1"): `tz.jacrev` of `m[:, idx]` scattered its
  cotangent into dim 1 of each batch, past a window along dim 0, and failed to compile;
- without, a window dim before two indexed dims failed the same way (JAX's
  `x.at[:, i, j].add(u)`, and the gradient of JAX's batched `det`, which gathers the
  diagonals), and a window dim between two indexed ones compiled but wrote the wrong
  elements (`x.at[i, :, j].add(u)`).

This runs after `tenzr-split-scatter-windows`, which leaves every indexed dim inserted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.views import ScatterDims, view


def order_scatter_dims(op: ir.Operation) -> None:
    dims: ScatterDims = view(op)["scatter_dimension_numbers"]
    if not set(dims.scatter_dims_to_operand_dims) <= set(dims.inserted_window_dims):
        return
    count = len(op.operands) // 2
    targets, indices, updates = list(op.operands[:count]), op.operands[count], list(op.operands[count + 1:])
    rank, update_rank = sh.spec(targets[0]).rank, sh.spec(updates[0]).rank
    leading = [*dims.input_batching_dims, *dims.scatter_dims_to_operand_dims]
    order = [*leading, *(d for d in range(rank) if d not in leading)]
    scatter_dims = [d for d in range(update_rank) if d not in dims.update_window_dims]
    update_order = [*scatter_dims, *dims.update_window_dims]
    if order == list(range(rank)) and update_order == list(range(update_rank)):
        return
    moved_to = {d: order.index(d) for d in range(rank)}
    numbers = sh.scatter_numbers(range(len(scatter_dims), update_rank),
                                 sorted(moved_to[d] for d in dims.inserted_window_dims),
                                 [moved_to[d] for d in dims.scatter_dims_to_operand_dims], dims.index_vector_dim,
                                 [moved_to[d] for d in dims.input_batching_dims], dims.scatter_indices_batching_dims)
    ordered = sh.rescatter(op, [sh.transpose(t, order) for t in targets], indices,
                           [sh.transpose(u, update_order) for u in updates], numbers)
    back = [order.index(d) for d in range(rank)]
    replace_op(op, [sh.transpose(r, back) for r in ordered])


def order_all_scatter_dims(module: ir.Operation) -> None:
    for op in ops_named(module, {sh.scatter.op_name}):
        with op.location, ir.InsertionPoint(op):
            order_scatter_dims(op)


@register
@dataclass
class TenzrOrderScatterDims(Pass):
    flag: ClassVar[str] = "tenzr-order-scatter-dims"
    summary: ClassVar[str] = ("Transpose a scatter to [batching, indexed, other] operand dims and [scatter, window] "
                              "update dims (IREE 3.13 rejects or miscompiles other orders).")

    def run(self, module: ir.Operation) -> None:
        order_all_scatter_dims(module)
