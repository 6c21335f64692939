"""`tenzr-split-reductions`: reductions in the order and stages IREE compiles well.

For a reduce of one operand whose body is a plain combiner and whose init is that
combiner's identity:
- -sum(x), not sum(-x): IREE 3.13 folds the negation into the accumulator as a
  subtraction, which its GPU backends cannot split ("failed to get neutral element for
  reduction"; every layer-norm gradient failed to compile for CUDA).
- Several dims are reduced one at a time, innermost first: IREE 3.13 fails to compile
  `sum(x * broadcast(c))` over two dims at once ("'vector.contract' op invalid
  accumulator/result vector shape"), and innermost-first is faster and more accurate on
  CPU than one fused multi-dim reduce (merging adjacent dims with a reshape made a
  [8, 128, 1024] bias gradient 0.34 -> 2.0 ms).
- A float sum over SPLIT_SUM_AT or more values becomes blocks of about sqrt(n) summed,
  then the block sums: one flat float32 reduce of 1M values fused after elementwise work
  loses 2e-4 relative (IREE accumulates serially); two stages keep it near 1e-7 and
  parallelise better.

A dot_general contracting SPLIT_SUM_AT or more float32 (or half) values along one dim, whose
partial sums (its result times the blocks) number at most SPLIT_DOT_PARTIALS, contracts
blocks of about sqrt(k) as a batch dim, then sums the blocks: IREE accumulated a long dot
product serially, and a float32 `v @ v` of 16M values was off by 6e-3 relative (1M: 9e-5;
`X.T @ X` of a [1M, 4] X: 9e-5), where JAX's was within 3e-8. Products with many results
(a large matmul) keep their one contraction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.types import TensorSpec
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.rules.indexing import identity_element
from tenzr.passes.views import splat_value, view

SPLIT_SUM_AT = 4096
SPLIT_DOT_PARTIALS = 1 << 20
"""The most partial sums a split dot_general may make (4 MiB of float32)."""


def _split_sum(x: Value, dim: int, init: float | int | bool) -> Value:
    s = sh.spec(x)
    n = s.shape[dim]
    block = 1 << max(1, (n.bit_length() + 1) // 2)
    blocks = -(-n // block)
    if blocks * block != n:  # pad with zeros up to whole blocks
        high = [blocks * block - n if d == dim else 0 for d in range(s.rank)]
        x = sh.pad(x, sh.zeros(TensorSpec((), s.dtype)), [0] * s.rank, high, [0] * s.rank)
    split = sh.reshape(x, (*s.shape[:dim], blocks, block, *s.shape[dim + 1:]))
    return reduce_in_stages(reduce_in_stages(split, init, [dim + 1], "add"), init, [dim], "add")


def reduce_in_stages(x: Value, init: float | int | bool, dims: Sequence[int], combiner: str) -> Value:
    """The reduction of `x` over `dims` from the identity `init`, as the module docstring says."""
    negated = sh.producer(x)
    if combiner == "add" and negated is not None and negated.name == sh.negate.op_name:
        return sh.negate(reduce_in_stages(negated.operands[0], init, dims, combiner))
    if len(dims) > 1:
        *rest, last = sorted(dims)
        return reduce_in_stages(reduce_in_stages(x, init, [last], combiner), init, rest, combiner)
    (dim,) = dims
    s = sh.spec(x)
    if combiner == "add" and s.is_float and s.shape[dim] >= SPLIT_SUM_AT:
        return _split_sum(x, dim, init)
    return sh.reduce(x, init, dims, combiner)


def _split_dot(op: ir.Operation) -> Value | None:
    """The dot_general `op` contracted in blocks and then summed (module docstring), or None
    where it stays as it is."""
    a, b = op.operands
    dims = view(op)["dot_dimension_numbers"]
    sa, sb, result = sh.spec(a), sh.spec(b), sh.spec(op.results[0])
    if (len(dims.lhs_contracting) != 1 or not sa.is_float or sa.dtype == "f64" or sb.dtype != sa.dtype
            or result.dtype != sa.dtype):
        return None
    (ca,), (cb,) = dims.lhs_contracting, dims.rhs_contracting
    k = sa.shape[ca]
    block = 1 << max(1, (k.bit_length() + 1) // 2)
    blocks = -(-k // block)
    if k < SPLIT_SUM_AT or blocks * max(1, result.size) > SPLIT_DOT_PARTIALS:
        return None

    def in_blocks(x: Value, dim: int) -> Value:
        s = sh.spec(x)
        if blocks * block != k:  # pad with zeros up to whole blocks
            high = [blocks * block - k if d == dim else 0 for d in range(s.rank)]
            x = sh.pad(x, sh.zeros(TensorSpec((), s.dtype)), [0] * s.rank, high, [0] * s.rank)
        return sh.reshape(x, (*s.shape[:dim], blocks, block, *s.shape[dim + 1:]))

    def moved(batch: Sequence[int], dim: int) -> list[int]:
        return [d if d < dim else d + 1 for d in batch]

    partial = sh.dot_general(in_blocks(a, ca), in_blocks(b, cb),
                             ([*moved(dims.lhs_batch, ca), ca], [*moved(dims.rhs_batch, cb), cb]), ([ca + 1], [cb + 1]))
    # (its dims: the batch dims, the blocks, then each operand's free dims, as the product's)
    return reduce_in_stages(partial, 0.0, [len(dims.lhs_batch)], "add")


def split_reductions(module: ir.Operation) -> None:
    for op in ops_named(module, {sh.dot_general.op_name}):
        with op.location, ir.InsertionPoint(op):
            split = _split_dot(op)
        if split is not None:
            replace_op(op, [split])
    for op in ops_named(module, {sh.reduce.op_name}):
        reduce = view(op)
        combiner, dims = reduce["combiner"], list(reduce["dimensions"])
        if combiner is None or len(op.operands) != 2:
            continue
        x, init = op.operands
        s = sh.spec(x)
        if splat_value(init) != identity_element(combiner, s.dtype):
            continue
        if not dims:  # (JAX's unique(size=) and sum(axis=()) reduce over no dims: x itself)
            replace_op(op, [x])
            continue
        negated = sh.producer(x)
        if (len(dims) == 1 and not (combiner == "add" and s.is_float and s.shape[dims[0]] >= SPLIT_SUM_AT)
                and not (combiner == "add" and negated is not None
                         and negated.name == sh.negate.op_name)):
            continue
        with op.location, ir.InsertionPoint(op):
            replace_op(op, [reduce_in_stages(x, identity_element(combiner, s.dtype), dims, combiner)])


@register
@dataclass
class TenzrSplitReductions(Pass):
    flag: ClassVar[str] = "tenzr-split-reductions"
    summary: ClassVar[str] = ("Reduce one dim at a time, innermost first; sum long float rows, and long float32 "
                              "contractions with few results, in two stages; take -sum(x) for sum(-x) (orders and "
                              "stages IREE compiles well); a reduction over no dims from its identity is its operand.")
    example_input: ClassVar[str] = """\
func.func @f(%x: tensor<8x4x3xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0, 2]
         : (tensor<8x4x3xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""

    def run(self, module: ir.Operation) -> None:
        split_reductions(module)
