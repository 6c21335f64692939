"""Tensor types as plain Python values: a shape tuple and an element-type name.

Shape rules, verifiers and emitters reason about `TensorSpec`s; conversion to and from
MLIR types happens here, once, with a cache because the bindings are slow to query.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np

from tenzr.dialect.context import on_context_eviction
from tenzr.dialect.ir_imports import ir

FLOAT_TYPES = ("f16", "bf16", "f32", "f64")
HALF_TYPES = ("f16", "bf16")
"""The float types whose sums and products are accumulated in float32 (as JAX's)."""
SIGNED_TYPES = ("i8", "i16", "i32", "i64")
UNSIGNED_TYPES = ("ui8", "ui16", "ui32", "ui64")
INT_TYPES = (*SIGNED_TYPES, *UNSIGNED_TYPES)
"""Integers, signed (signless in MLIR) and unsigned."""
COMPLEX_TYPES = ("complex<f32>", "complex<f64>")
ELEMENT_TYPES = (*FLOAT_TYPES, "i1", *INT_TYPES, *COMPLEX_TYPES)
"""The element types of tenzr's ops (and of Tenzr's arrays)."""

# NumPy has no bfloat16 of its own: bf16 is ml_dtypes' (which IREE's runtime uses), imported
# only when a bf16 array meets NumPy.
_NUMPY_DTYPES = {
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "i1": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "complex<f32>": np.complex64,
    "complex<f64>": np.complex128,
    "ui8": np.uint8,
    "ui16": np.uint16,
    "ui32": np.uint32,
    "ui64": np.uint64,
}


ITEM_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8,
              "complex<f32>": 8, "complex<f64>": 16, "ui8": 1, "ui16": 2, "ui32": 4, "ui64": 8}


def real_dtype(dtype: str) -> str:
    """The element type of the real and imaginary parts of `dtype` (`dtype` itself when real)."""
    return dtype[len("complex<"):-1] if dtype in COMPLEX_TYPES else dtype


def complex_dtype(dtype: str) -> str:
    """The complex type whose parts are `dtype` (float64 gives complex<f64>, narrower floats complex<f32>)."""
    if dtype in COMPLEX_TYPES:
        return dtype
    return "complex<f64>" if dtype == "f64" else "complex<f32>"


class TensorSpec(NamedTuple):
    """A ranked, statically shaped tensor type."""

    shape: tuple[int, ...]
    dtype: str

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)  # exact: NumPy would overflow on huge shapes

    @property
    def is_float(self) -> bool:
        """A real floating-point type."""
        return self.dtype in FLOAT_TYPES

    @property
    def is_complex(self) -> bool:
        return self.dtype in COMPLEX_TYPES

    @property
    def is_inexact(self) -> bool:
        """Real or complex floating point: the types that carry derivatives."""
        return self.dtype in FLOAT_TYPES or self.dtype in COMPLEX_TYPES

    def with_shape(self, shape: Iterable[int]) -> TensorSpec:
        return TensorSpec(tuple(shape), self.dtype)

    def with_dtype(self, dtype: str) -> TensorSpec:
        return TensorSpec(self.shape, dtype)

    def __str__(self) -> str:
        dims = "".join(f"{d}x" for d in self.shape)
        return f"tensor<{dims}{self.dtype}>"


def numpy_dtype(dtype: str) -> np.dtype:
    if dtype == "bf16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    if dtype not in _NUMPY_DTYPES:
        raise ValueError(f"element type {dtype} has no NumPy equivalent")
    return np.dtype(_NUMPY_DTYPES[dtype])


class Saturation(NamedTuple):
    """How a real float type becomes an integer type saturating, as JAX's: clamp into
    [low, top] (the floats the conversion is defined on), then the values at or past
    `past` (or at or below `floor`) are the integer type's max (or min), and NaN is 0."""

    low: float
    top: float
    past: float
    """The first float past the integer range, 2^bits (inf past the float type's range)."""
    floor: float
    """The integer minimum as a float (-inf past the float type's range)."""
    minimum: int
    maximum: int


def saturation(source: np.dtype, target: np.dtype) -> Saturation:
    """`Saturation` of float type `source` (bfloat16 too) into integer type `target`."""
    import ml_dtypes  # (its finfo knows bfloat16)

    ints, floats = np.iinfo(target), ml_dtypes.finfo(source)
    largest = float(floats.max)
    past, floor = float(ints.max) + 1, float(ints.min)  # (powers of two: exact wherever in range)
    top = min(past * (1 - 2.0 ** -(floats.nmant + 1)), largest)  # (the float just below 2^bits)
    return Saturation(max(floor, -largest), top, past if past <= largest else math.inf,
                      floor if floor >= -largest else -math.inf, int(ints.min), int(ints.max))


def element_type_of(dtype: np.dtype | type) -> str:
    """The tenzr element-type name of a NumPy dtype (ml_dtypes' bfloat16 included)."""
    dt = np.dtype(dtype)
    for name, np_type in _NUMPY_DTYPES.items():
        if dt == np_type and name in ELEMENT_TYPES:
            return name
    if dt.name == "bfloat16":
        return "bf16"
    raise ValueError(f"NumPy dtype {dt} is not a tenzr element type (tenzr has float16, bfloat16, float32, "
                     "float64, bool, int8 to int64, uint8 to uint64, complex64 and complex128)")


_ELEMENT_FACTORIES = {
    "f16": lambda: ir.F16Type.get(),
    "bf16": lambda: ir.BF16Type.get(),
    "f32": lambda: ir.F32Type.get(),
    "f64": lambda: ir.F64Type.get(),
    "i1": lambda: ir.IntegerType.get_signless(1),
    "i8": lambda: ir.IntegerType.get_signless(8),
    "i16": lambda: ir.IntegerType.get_signless(16),
    "i32": lambda: ir.IntegerType.get_signless(32),
    "i64": lambda: ir.IntegerType.get_signless(64),
    "complex<f32>": lambda: ir.ComplexType.get(ir.F32Type.get()),
    "complex<f64>": lambda: ir.ComplexType.get(ir.F64Type.get()),
    "ui8": lambda: ir.IntegerType.get_unsigned(8),
    "ui16": lambda: ir.IntegerType.get_unsigned(16),
    "ui32": lambda: ir.IntegerType.get_unsigned(32),
    "ui64": lambda: ir.IntegerType.get_unsigned(64),
}

# Keyed by (context, spec) and by ir.Type respectively; the bindings hash types by identity
# of the uniqued storage, so both caches stay small (one entry per distinct type).
_to_ir: dict[tuple[ir.Context, TensorSpec], ir.Type] = {}
_from_ir: dict[ir.Type, TensorSpec | None] = {}


@on_context_eviction
def _evict(kept: set[ir.Context]) -> None:
    for key in [k for k in _to_ir if k[0] not in kept]:
        del _to_ir[key]
    for type_ in [t for t in _from_ir if t.context not in kept]:
        del _from_ir[type_]


def element_ir_type(dtype: str) -> ir.Type:
    return _ELEMENT_FACTORIES[dtype]()


def ir_type(spec: TensorSpec) -> ir.Type:
    """The MLIR tensor type of `spec` in the current context."""
    key = (ir.Context.current, spec)
    found = _to_ir.get(key)
    if found is None:
        found = ir.RankedTensorType.get(list(spec.shape), element_ir_type(spec.dtype), loc=ir.Location.unknown())
        _to_ir[key] = found
    return found


def spec_of_type(type_: ir.Type) -> TensorSpec | None:
    """The TensorSpec of an MLIR type, or None when it is not a static tenzr tensor type."""
    try:
        return _from_ir[type_]
    except KeyError:
        pass
    spec = None
    if isinstance(type_, ir.RankedTensorType) and type_.has_static_shape:
        element = str(type_.element_type)
        if element in _ELEMENT_FACTORIES:
            spec = TensorSpec(tuple(type_.shape), element)
    _from_ir[type_] = spec
    return spec


def spec_of(value: ir.Value) -> TensorSpec:
    """The TensorSpec of a value known to have a tenzr tensor type."""
    type_ = value.type
    try:
        spec = _from_ir[type_]
    except KeyError:
        spec = spec_of_type(type_)
    if spec is None:
        raise ValueError(f"{value.type} is not a statically shaped tensor of a tenzr element type")
    return spec


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...] | None:
    """NumPy broadcasting of `shapes` (right-aligned, size-1 stretches), or None."""
    if all(s == shapes[0] for s in shapes[1:]):
        return tuple(shapes[0]) if shapes else ()
    rank = max((len(s) for s in shapes), default=0)
    result = []
    for axis in range(rank):
        dims = {s[len(s) - rank + axis] for s in shapes if len(s) - rank + axis >= 0}
        dims.discard(1)
        if len(dims) > 1:
            return None
        result.append(dims.pop() if dims else 1)
    return tuple(result)
