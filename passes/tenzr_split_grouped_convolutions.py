"""`tenzr-split-grouped-convolutions`: a grouped convolution as one convolution per group.

IREE 3.13's Vulkan backend computes grouped convolutions with more than one input channel
per group wrongly; one convolution per group, joined along the output features, is exact
on every target (and each part may then become a matmul, see tenzr-im2col). Depthwise
convolutions (one channel per group) are right and stay whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import Value, ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.tenzr_im2col import convolution_options


def _group(x: Value, dim: int, g: int, groups: int) -> Value:
    shape = sh.spec(x).shape
    size = shape[dim] // groups
    return sh.slice_(x, [g * size if d == dim else 0 for d in range(len(shape))],
                     [(g + 1) * size if d == dim else n for d, n in enumerate(shape)])


def split_grouped_convolutions(module: ir.Operation) -> None:
    for op in ops_named(module, {sh.convolution.op_name}):
        options = convolution_options(op)
        layout, groups = options.pop("layout"), options.pop("feature_group_count")
        x, w = op.operands
        if groups == 1 or sh.spec(w).shape[layout.kernel_in] == 1:
            continue
        with op.location, ir.InsertionPoint(op):
            parts = [sh.convolution(_group(x, layout.input_feature, g, groups), _group(w, layout.kernel_out, g, groups),
                                    layout, **options) for g in range(groups)]
            replace_op(op, [sh.concatenate(parts, layout.output_feature)])


@register
@dataclass
class TenzrSplitGroupedConvolutions(Pass):
    flag: ClassVar[str] = "tenzr-split-grouped-convolutions"
    summary: ClassVar[str] = ("Rewrite a grouped convolution with several channels per group into one convolution "
                              "per group (IREE 3.13's Vulkan backend computes them wrongly).")

    def run(self, module: ir.Operation) -> None:
        split_grouped_convolutions(module)
