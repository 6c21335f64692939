"""`tenzr-single-window-strides`: a convolution with one window along a spatial dim takes
stride 1 there, its high padding lowered by what the window leaves over (negative padding
crops). IREE 3.13 fails to compile a strided convolution whose single window leaves part of
the input over ("'linalg.generic' op inferred input/output operand #1 has shape's dimension
#0 to be 3, but found 2": a length-3 input, a length-2 window, stride 2, found by the random
programs). The stride of a single window changes nothing, so the result is the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.tenzr_im2col import convolution_options


def single_window_strides(module: ir.Operation) -> None:
    for op in ops_named(module, {sh.convolution.op_name}):
        options = convolution_options(op)
        layout = options.pop("layout")
        x, w = op.operands
        out, sx, sw = sh.spec(op.results[0]).shape, sh.spec(x).shape, sh.spec(w).shape
        strides, high = list(options["strides"]), list(options["padding_high"])
        for d in range(len(strides)):
            if out[layout.output_spatial[d]] != 1 or strides[d] == 1:
                continue
            size = ((sx[layout.input_spatial[d]] - 1) * options["lhs_dilation"][d] + 1
                    + options["padding_low"][d] + high[d])
            window = (sw[layout.kernel_spatial[d]] - 1) * options["rhs_dilation"][d] + 1
            strides[d], high[d] = 1, high[d] - (size - window)
        if strides == list(options["strides"]):
            continue
        with op.location, ir.InsertionPoint(op):
            replace_op(op, [sh.convolution(x, w, layout, **{**options, "strides": strides, "padding_high": high})])


@register
@dataclass
class TenzrSingleWindowStrides(Pass):
    flag: ClassVar[str] = "tenzr-single-window-strides"
    summary: ClassVar[str] = ("Give a convolution stride 1 along a spatial dim where it has a single window, cropping "
                              "what the window leaves over (IREE 3.13 fails to compile the strided form).")

    def run(self, module: ir.Operation) -> None:
        single_window_strides(module)
