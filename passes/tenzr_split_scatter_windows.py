"""`tenzr-split-scatter-windows`: a scatter whose windows extend along an indexed dim (as a
vmapped dynamic_update_slice, or the transpose of a gather of such windows) becomes one that
scatters each position along those dims on its own: the dim is inserted, its window
positions become scatter dims, and the starts add the offsets. IREE 3.13 rejects the first
form ("'iree_linalg_ext.scatter' op expected indices to be equal to batch rank or batch
rank + 1").

Windows outside the operand drop whole in a scatter but piecewise here, so this runs after
`tenzr-bound-indices`, which leaves none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import Value, ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.views import ScatterDims, view


def _index_vectors_last(indices: Value, index_vector_dim: int) -> Value:
    """`indices` as [scatter dims..., components]."""
    si = sh.spec(indices)
    if index_vector_dim == si.rank:
        return sh.reshape(indices, (*si.shape, 1))
    order = [d for d in range(si.rank) if d != index_vector_dim] + [index_vector_dim]
    return sh.transpose(indices, order)


def split_scatter_windows(op: ir.Operation) -> None:
    dims: ScatterDims = view(op)["scatter_dimension_numbers"]
    windowed = [d for d in dims.scatter_dims_to_operand_dims if d not in dims.inserted_window_dims]
    if not windowed:
        return
    count = len(op.operands) // 2
    targets, indices, updates = list(op.operands[:count]), op.operands[count], list(op.operands[count + 1:])
    rank, su = sh.spec(targets[0]).rank, sh.spec(updates[0])
    # update dim of each operand dim's window, in operand order
    unit = {*dims.inserted_window_dims, *dims.input_batching_dims}
    window_of = dict(zip([d for d in range(rank) if d not in unit], dims.update_window_dims, strict=True))
    scatter_dims = [d for d in range(su.rank) if d not in dims.update_window_dims]
    split = [window_of[d] for d in windowed]
    kept = [u for u in dims.update_window_dims if u not in split]
    order = [*scatter_dims, *split, *kept]
    moved = [sh.transpose(u, order) for u in updates]
    new_shape = [su.shape[u] for u in order]
    lead = len(scatter_dims) + len(split)

    starts = _index_vectors_last(indices, dims.index_vector_dim)
    st = sh.spec(starts)
    depth = st.shape[-1]
    column = st.with_shape((*new_shape[:lead], 1))
    spread = sh.broadcast_in_dim(starts, (*column.shape[:-1], depth), [*range(len(scatter_dims)), lead])
    offsets = [sh.iota(column, len(scatter_dims) + windowed.index(d)) if d in windowed else sh.zeros(column)
               for d in dims.scatter_dims_to_operand_dims]
    starts = sh.add(spread, sh.concatenate(offsets, lead))

    def position(j: int) -> int:  # where indices dim j went in `starts`
        return j if dims.index_vector_dim > j else j - 1

    numbers = sh.scatter_numbers(range(lead, su.rank), sorted({*dims.inserted_window_dims, *windowed}),
                                 dims.scatter_dims_to_operand_dims, lead, dims.input_batching_dims,
                                 [position(j) for j in dims.scatter_indices_batching_dims])
    replace_op(op, sh.rescatter(op, targets, starts, moved, numbers))


def split_all_scatter_windows(module: ir.Operation) -> None:
    for op in ops_named(module, {sh.scatter.op_name}):
        with op.location, ir.InsertionPoint(op):
            split_scatter_windows(op)


@register
@dataclass
class TenzrSplitScatterWindows(Pass):
    flag: ClassVar[str] = "tenzr-split-scatter-windows"
    summary: ClassVar[str] = ("Scatter each position of a window along an indexed dim on its own (IREE 3.13 rejects "
                              "scatters whose windows extend along indexed dims).")

    def run(self, module: ir.Operation) -> None:
        split_all_scatter_windows(module)
