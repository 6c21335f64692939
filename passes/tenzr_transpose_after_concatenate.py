"""`tenzr-transpose-after-concatenate`: a concatenation of transposes of one permutation
becomes the transpose of one concatenation, and a transpose of a transpose one transpose
(or none).

IREE 3.13 compiles every transpose into a dispatch of its own, while it copies the pieces of
a concatenation without one. JAX's MNIST VAE draws its 10x10 image grid as
`vstack([hstack([image.T ...]) ...]).T`: 101 transposes, 9.0 s to compile; written this way
there are none left (the outer transpose undoes the two the concatenations gained).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import Value, ir
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.views import view


def _transposed(value: Value) -> tuple[Value, list[int]] | None:
    """(source, permutation) when `value` is a transpose."""
    made = sh.producer(value)
    if made is None or made.name != sh.transpose.op_name:
        return None
    return made.operands[0], list(view(made)["permutation"])


def transpose_after_concatenate(module: ir.Operation) -> None:
    for op in ops_named(module, {sh.concatenate.op_name, sh.transpose.op_name}):
        if op.name == sh.transpose.op_name:
            inner = _transposed(op.operands[0])
            if inner is not None:
                source, first = inner
                second = list(view(op)["permutation"])
                with op.location, ir.InsertionPoint(op):
                    replace_op(op, [sh.transpose(source, [first[i] for i in second])])
            continue
        found = [_transposed(v) for v in op.operands]
        pieces = [p for p in found if p is not None]
        if len(found) < 2 or len(pieces) < len(found) or any(p[1] != pieces[0][1] for p in pieces):
            continue
        permutation = pieces[0][1]
        with op.location, ir.InsertionPoint(op):
            joined = sh.concatenate([p[0] for p in pieces], permutation[view(op)["dimension"]])
            replace_op(op, [sh.transpose(joined, permutation)])


@register
@dataclass
class TenzrTransposeAfterConcatenate(Pass):
    flag: ClassVar[str] = "tenzr-transpose-after-concatenate"
    summary: ClassVar[str] = ("Write a concatenation of transposes of one permutation as the transpose of one "
                              "concatenation, and a transpose of a transpose as one (IREE 3.13 makes a dispatch of "
                              "every transpose).")

    def run(self, module: ir.Operation) -> None:
        transpose_after_concatenate(module)
