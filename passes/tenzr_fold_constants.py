"""`tenzr-fold-constants`: elementwise arithmetic on constants becomes a constant.

MLIR's canonicalizer folds none of StableHLO's arithmetic in these bindings, so a
gradient's constant factors (a mean's cotangent is `negate(divide(1, 128))`) reached IREE
as ops. IREE hoists each such expression into a global, computed at load by an
initializer dispatch of its own: one executable more to compile (the MLP's value_and_grad
26 instead of 25, about 4% of its compile time; the GMM's 32 instead of 29).

Folded here in NumPy with StableHLO's semantics: integers wrap, floats round as IEEE
(division of floats only, as integer division rounds otherwise in NumPy; comparisons
other than a float total order). A result is folded when it is a splat or has at most
MAX_ELEMENTS elements; complex and 16-bit floats are left to IREE. (Constant indices made
non-negative, `select(i < 0, i + n, i)`, then clamped, were one of the GMM's initializers.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from tenzr.dialect.context import ops_named, replace_op
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.types import numpy_dtype, spec_of_type
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import Pass, register
from tenzr.passes.views import decode_attribute, splat_value

MAX_ELEMENTS = 4096

_FOLDS: dict[str, Callable[..., np.ndarray]] = {
    sh.negate.op_name: np.negative,
    sh.add.op_name: np.add,
    sh.subtract.op_name: np.subtract,
    sh.multiply.op_name: np.multiply,
    sh.maximum.op_name: np.maximum,
    sh.minimum.op_name: np.minimum,
    sh.clamp.op_name: lambda low, x, high: np.minimum(np.maximum(x, low), high),
    sh.select.op_name: np.where,
    sh.convert.op_name: np.asarray,  # (cast to the result's dtype below; float to integer is left alone)
    sh.broadcast_in_dim.op_name: np.asarray,  # (of a splat only: it stays one)
    sh.reshape.op_name: np.asarray,
}
_SPLATS_ONLY = {sh.broadcast_in_dim.op_name, sh.reshape.op_name}
_FLOAT_FOLDS = {sh.divide.op_name: np.divide}
_COMPARISONS = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
                "GE": np.greater_equal}
_DTYPES = {"i1", "f32", "f64", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64"}


def _value(value: Value) -> np.ndarray | None:
    """The NumPy array a constant holds (0-d for a splat), or None."""
    made = sh.producer(value)
    if made is None or made.name != sh.constant.op_name or sh.spec(value).dtype not in _DTYPES:
        return None
    dtype = numpy_dtype(sh.spec(value).dtype)
    splat = splat_value(value)
    if splat is not None:
        return np.asarray(splat, dtype)
    attr = made.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr) or sh.spec(value).size > MAX_ELEMENTS:
        return None
    return np.asarray(np.array(attr), dtype)


def _fold(op: ir.Operation) -> Callable[..., np.ndarray] | None:
    """The NumPy function `op` computes, or None."""
    if op.name == sh.compare.op_name:
        kind = decode_attribute(op.attributes["compare_type"]) if "compare_type" in op.attributes else None
        return None if kind == "TOTALORDER" else _COMPARISONS[decode_attribute(op.attributes["comparison_direction"])]
    if op.name in _FLOAT_FOLDS:
        return _FLOAT_FOLDS[op.name] if sh.spec(op.results[0]).is_float else None
    return _FOLDS[op.name]


_SPLAT_MOVES = {sh.concatenate.op_name: None, sh.pad.op_name: None, sh.slice_.op_name: 1, sh.transpose.op_name: 1,
                sh.reverse.op_name: 1, sh.dynamic_slice.op_name: 1}
"""Ops that move elements: of splats (the first `n` operands, or all), a splat. IREE folds
them itself, and 3.13 then miscompiles a reduction of a conversion of the splat made (the
sum of a concatenation of true and true, as int32, was 1)."""


def _moved_splat(op: ir.Operation) -> np.ndarray | None:
    """The splat value `op` makes from splats of one value, or None."""
    read = [_value(v) for v in list(op.operands)[:_SPLAT_MOVES[op.name]]]
    if any(v is None or v.ndim for v in read) or any(v != read[0] for v in read[1:]):
        return None
    return read[0]


def fold_constants(module: ir.Operation) -> None:
    for op in ops_named(module, {*_FOLDS, *_FLOAT_FOLDS, *_SPLAT_MOVES, sh.compare.op_name}):
        if op.name in _SPLAT_MOVES:
            value = _moved_splat(op)
            if value is not None:
                with op.location, ir.InsertionPoint(op):
                    replace_op(op, [sh.constant(value.item(), sh.spec(op.results[0]))])
            continue
        if any(spec_of_type(v.type) is None for v in (*op.operands, *op.results)):
            continue  # (unsigned integers: left to IREE)
        result = sh.spec(op.results[0])
        fold = _fold(op)
        if fold is None or result.dtype not in _DTYPES:
            continue
        read = [_value(v) for v in op.operands]
        values = [v for v in read if v is not None]
        if len(values) < len(read) or (op.name in _SPLATS_ONLY and values[0].ndim) or \
                (op.name == sh.convert.op_name and not result.is_float and sh.spec(op.operands[0]).is_float):
            continue
        with np.errstate(all="ignore"):
            folded = np.asarray(fold(*values), numpy_dtype(result.dtype))
        with op.location, ir.InsertionPoint(op):
            replace_op(op, [sh.constant(folded.item() if folded.ndim == 0 else folded, result)])


@register
@dataclass
class TenzrFoldConstants(Pass):
    flag: ClassVar[str] = "tenzr-fold-constants"
    summary: ClassVar[str] = ("Fold elementwise arithmetic, comparisons, selects and conversions of constants, and "
                              "broadcasts and reshapes of splats, into a constant (IREE would compute each at load, "
                              "in a dispatch of its own).")

    def run(self, module: ir.Operation) -> None:
        fold_constants(module)
