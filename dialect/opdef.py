"""The machinery behind declarative op definitions: attribute kinds, `OpDef`, `Op`.

An `OpDef` declares one tenzr op: operand names, attributes (kind, default), the rule
that gives its result type, and whether it has a gradient. The same definition verifies
parsed IR (`OpDef.verify`), builds new ops (`OpDef.__call__`), documents itself, and gives
passes a decoded view of an operation (`OpDef.decode`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from tenzr.dialect.context import on_context_eviction
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ir_imports import ir
from tenzr.dialect.types import ELEMENT_TYPES, TensorSpec, element_ir_type, ir_type, numpy_dtype, spec_of_type

PREFIX = "tenzr."
REQUIRED = object()


class VerifyError(TenzrError):
    """A broken op rule; the verifier adds the op's name and location."""


def fail(message: str) -> NoReturn:
    raise VerifyError(message)


# --------------------------------------------------------------------------- attributes


class AttrKind:
    """How one attribute is spelled in IR and what Python value it decodes to."""

    spelling = ""

    def decode(self, attr: ir.Attribute, rank: int) -> Any:
        raise NotImplementedError

    def encode(self, value: Any) -> ir.Attribute:
        raise NotImplementedError

    def normalize(self, value: Any, rank: int) -> Any:
        return value


class Ints(AttrKind):
    spelling = "array<i64: ...>"

    def decode(self, attr: ir.Attribute, rank: int) -> tuple[int, ...] | None:
        return tuple(attr) if isinstance(attr, ir.DenseI64ArrayAttr) else None

    def encode(self, value: Sequence[int]) -> ir.Attribute:
        return ir.DenseI64ArrayAttr.get([int(v) for v in value])

    def normalize(self, value: Any, rank: int) -> tuple[int, ...]:
        return tuple(int(v) for v in value)


class Int(AttrKind):
    spelling = "i64"

    def decode(self, attr: ir.Attribute, rank: int) -> int | None:
        if isinstance(attr, ir.IntegerAttr) and not isinstance(attr, ir.BoolAttr):
            return attr.value
        return None

    def encode(self, value: int) -> ir.Attribute:
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))


def _normalize_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1) or (rank == 0 and axis != 0):
        fail(f"axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


class Axis(Int):
    """An axis of operand 0; negative values count from the end and are normalized."""

    def normalize(self, value: Any, rank: int) -> int:
        if rank == 0:
            fail(f"axis {value} is out of range for a rank-0 operand")
        return _normalize_axis(int(value), rank)


class Axes(Ints):
    """Distinct axes of operand 0, normalized and sorted."""

    def normalize(self, value: Any, rank: int) -> tuple[int, ...]:
        axes = tuple(sorted(_normalize_axis(int(a), rank) for a in value))
        if len(set(axes)) != len(axes):
            fail(f"axes {list(value)} repeat an axis")
        return axes


class Bool(AttrKind):
    spelling = "bool"

    def decode(self, attr: ir.Attribute, rank: int) -> bool | None:
        return attr.value if isinstance(attr, ir.BoolAttr) else None

    def encode(self, value: bool) -> ir.Attribute:
        return ir.BoolAttr.get(bool(value))


@dataclass(frozen=True)
class Str(AttrKind):
    choices: tuple[str, ...] = ()

    @property
    def spelling(self) -> str:  # type: ignore[override]
        return "string" + (f" ({' | '.join(repr(c) for c in self.choices)})" if self.choices else "")

    def decode(self, attr: ir.Attribute, rank: int) -> str | None:
        return attr.value if isinstance(attr, ir.StringAttr) else None

    def encode(self, value: str) -> ir.Attribute:
        return ir.StringAttr.get(value)

    def normalize(self, value: Any, rank: int) -> str:
        if self.choices and value not in self.choices:
            fail(f"'{value}' is not one of {', '.join(repr(c) for c in self.choices)}")
        return value


class Elements(AttrKind):
    spelling = "dense elements"

    def decode(self, attr: ir.Attribute, rank: int) -> ir.Attribute | None:
        return attr if isinstance(attr, ir.DenseElementsAttr) else None

    def encode(self, value: ir.Attribute) -> ir.Attribute:
        return value


@dataclass(frozen=True)
class PerDim:
    """A default of one `value` per dim of operand 0, less `skip` leading dims."""

    value: int
    skip: int = 0

    def __call__(self, rank: int) -> tuple[int, ...]:
        return (self.value,) * max(rank - self.skip, 0)


@dataclass(frozen=True, eq=False)
class Attr:
    """One declared attribute of an op (compared and hashed by identity: decoded values are
    kept per declaration)."""

    name: str
    kind: AttrKind
    default: Any = REQUIRED
    doc: str = ""


# --------------------------------------------------------------------------- ops


class Op:
    """A decoded op: what verifiers, lowerings and transformation rules read. Tenzr ops are
    decoded by their OpDef; others (StableHLO) by `tenzr.passes.views`, with `opdef` None.

    `specs` and `results` are the operands' and results' types; `given` the result types
    written in the IR (or passed to a builder), which rules of ops whose result type the
    user chooses read; `outputs` the result values, when the op exists in IR. A view of an
    op in IR reads the types from it when a rule first asks (passes read most ops' types
    through the emitter instead). During a transformation: `wanted` (which operands need a
    cotangent, empty meaning all), `seeded` (which results have a cotangent, empty meaning
    all; the driver passes zeros for the others), `driver` (which rules of region ops ask to
    transform their regions, see `passes.regions.RegionDriver`). `operation` is the op in IR
    (None while it is being built): rules of region ops read its regions.
    """

    __slots__ = (
        "_given",
        "_results",
        "_specs",
        "attrs",
        "driver",
        "location",
        "opdef",
        "operands",
        "operation",
        "outputs",
        "seeded",
        "wanted",
    )

    def __init__(self, opdef: OpDef | None, operands: list[ir.Value], specs: list[TensorSpec] | None,
                 attrs: dict[str, Any], given: list[TensorSpec] | None, location: ir.Location | None = None,
                 results: list[TensorSpec] | None = None, outputs: list[ir.Value] | None = None,
                 wanted: tuple[bool, ...] = (), seeded: tuple[bool, ...] = (),
                 operation: ir.Operation | None = None, driver: Any = None):
        self.opdef, self.operands, self._specs, self.attrs, self._given = opdef, operands, specs, attrs, given
        self.location, self._results, self.outputs = location, results, [] if outputs is None else outputs
        self.wanted, self.seeded, self.operation, self.driver = wanted, seeded, operation, driver

    @property
    def specs(self) -> list[TensorSpec]:
        if self._specs is None:
            self._specs = [spec_of_type(v.type) for v in self.operands]  # type: ignore[misc]
        return self._specs

    @property
    def results(self) -> list[TensorSpec]:
        if self._results is None:
            self._results = [spec_of_type(r.type) for r in self.outputs]  # type: ignore[misc]
        return self._results

    @results.setter
    def results(self, value: list[TensorSpec]) -> None:
        self._results = value

    @property
    def given(self) -> list[TensorSpec]:
        return self.results if self._given is None else self._given

    @property
    def result(self) -> TensorSpec:
        return self.results[0]

    @property
    def out(self) -> ir.Value:
        return self.outputs[0]

    def wants(self, index: int) -> bool:
        """Whether operand `index` needs a cotangent; rules may skip work for the others."""
        return not self.wanted or self.wanted[index]

    def has_cotangent(self, index: int) -> bool:
        """Whether result `index` has a cotangent; rules may skip work for the others."""
        return not self.seeded or self.seeded[index]

    def __getitem__(self, name: str) -> Any:
        return self.attrs[name]


ResultRule = Callable[[Op], TensorSpec | list[TensorSpec]]


@dataclass(eq=False)
class OpDef:
    """The declaration of one tenzr op."""

    mnemonic: str
    summary: str
    operands: tuple[str, ...]
    """Operand names; a name ending in `...` is variadic (zero or more) and comes last."""
    rule: ResultRule
    attrs: tuple[Attr, ...] = ()
    gradient: str = "rule"
    """"rule": differentiable through a VJP rule; "none": no gradient (contributes zero)."""
    given_result: bool = False
    """The result type is written by the user (reshape, convert, ...) and checked by `rule`."""
    open_attrs: bool = False
    """Accept attributes not declared here (custom_call)."""
    elementwise: bool = False
    """Each result element depends only on the operands' elements at the same (broadcast)
    position: cheap to recompute (tenzr-grad rematerializes such ops)."""
    transcendental: bool = False
    """Costs many instructions or a long latency per element (exp, sin, ...)."""
    regions: int = 0
    """How many regions the op has (-1: one or more); the rule checks them."""
    terminator: bool = False
    """Ends a region of a tenzr region op (tenzr.yield)."""

    @property
    def name(self) -> str:
        return PREFIX + self.mnemonic

    @property
    def variadic(self) -> bool:
        return bool(self.operands) and self.operands[-1].endswith("...")

    def _check_arity(self, count: int) -> None:
        fixed = len(self.operands) - self.variadic
        if count < fixed or (count > fixed and not self.variadic):
            expected = f"at least {fixed}" if self.variadic else str(fixed)
            names = ", ".join(self.operands) or "none"
            fail(f"expects {expected} operands ({names}), got {count}")

    def _decode_attrs(self, found: dict[str, Any], rank: int, *, parsed: bool) -> dict[str, Any]:
        known = {a.name: a for a in self.attrs}
        for name in found:
            if name not in known and not self.open_attrs and "." not in name:
                expected = ", ".join(known) or "none"
                fail(f"unknown attribute '{name}' (expected: {expected})")
        values: dict[str, Any] = {k: v for k, v in found.items() if k not in known}
        for attr in self.attrs:
            if attr.name not in found:
                if attr.default is REQUIRED:
                    fail(f"requires attribute '{attr.name}' ({attr.kind.spelling})")
                default = attr.default(rank) if isinstance(attr.default, PerDim) else attr.default
                values[attr.name] = attr.kind.normalize(default, rank)
                continue
            raw = found[attr.name]
            value = attr.kind.decode(raw, rank) if parsed else raw
            if value is None:
                fail(f"attribute '{attr.name}' must be {attr.kind.spelling}, got {raw}")
            try:
                values[attr.name] = attr.kind.normalize(value, rank)
            except VerifyError as e:
                fail(f"attribute '{attr.name}': {e.message}")
        return values

    def _results(self, op: Op) -> list[TensorSpec]:
        out = self.rule(op)
        return list(out) if isinstance(out, list) else [out]

    # --- reading IR

    def decode(self, operation: ir.Operation) -> Op:
        """Decodes and verifies `operation`; raises VerifyError on a broken rule."""
        if len(operation.successors):
            fail("has successors, but tenzr ops take none")
        if self.regions == 0 and len(operation.regions):
            fail("has regions, but takes none")
        if self.regions > 0 and len(operation.regions) != self.regions:
            fail(f"must have {self.regions} regions, got {len(operation.regions)}")
        operands = list(operation.operands)
        self._check_arity(len(operands))
        specs = [_spec_or_fail(v.type, f"operand #{i}") for i, v in enumerate(operands)]
        given = [_spec_or_fail(r.type, f"result #{i}") for i, r in enumerate(operation.results)]
        found = {name: _attribute(operation, name) for name in operation.attributes}
        attrs = self._decode_attrs(found, specs[0].rank if specs else _rank0(given), parsed=True)
        op = Op(self, operands, specs, attrs, given, operation.location, outputs=list(operation.results),
                operation=operation)
        op.results = self._results(op)
        if len(op.results) != len(given):
            fail(f"expects {len(op.results)} result(s), got {len(given)}")
        for i, (want, got) in enumerate(zip(op.results, given, strict=True)):
            if want != got:
                fail(f"result #{i} has type {got}, but the op's rule gives {want}")
        return op

    def view(self, operation: ir.Operation, outputs: list[ir.Value] | None = None) -> Op:
        """The decoded op of `operation` already verified (a pass's input): attributes are
        decoded (defaults filled in) but no rule is checked again. `outputs`, when the
        caller has them, are its results."""
        operands = list(operation.operands)
        outputs = list(operation.results) if outputs is None else outputs
        op = Op(self, operands, None, {}, None, operation.location, None, outputs, operation=operation)
        if self.attrs or self.open_attrs:
            rank = op.specs[0].rank if operands else op.results[0].rank if outputs else 0
            values = op.attrs
            attributes = dict(operation.attributes.items())
            for attr in self.attrs:
                found = attributes.get(attr.name)
                values[attr.name] = (_decoded(attr, found, rank) if found is not None
                                     else _default(attr, rank))
            if self.open_attrs:
                known = {a.name for a in self.attrs}
                values.update({name: value for name, value in attributes.items() if name not in known})
        return op

    # --- building IR

    def __call__(self, *operands: ir.Value, result: TensorSpec | Sequence[TensorSpec] | None = None,
                 **attrs: Any) -> Any:
        """Creates the op at the current insertion point and location; returns its result
        (a list of results for multi-result ops)."""
        if self.regions:
            raise TypeError(f"{self.name} has regions: build it with tenzr.dialect.control")
        self._check_arity(len(operands))
        specs = [_spec_or_fail(v.type, f"operand #{i}") for i, v in enumerate(operands)]
        given = [result] if isinstance(result, TensorSpec) else list(result or [])
        if self.given_result and not given:
            raise TypeError(f"building {self.name} needs result=<TensorSpec>")
        values = self._decode_attrs(attrs, specs[0].rank if specs else _rank0(given), parsed=False)
        op = Op(self, list(operands), specs, values, given)
        op.results = self._results(op)
        encoded = {}
        for attr in self.attrs:
            encoded[attr.name] = attr.kind.encode(values[attr.name])
        for name, value in values.items():
            if name not in encoded:
                encoded[name] = value
        operation = ir.Operation.create(
            self.name, results=[ir_type(s) for s in op.results], operands=list(operands), attributes=encoded
        )
        return operation.result if len(op.results) == 1 else list(operation.results)


@functools.lru_cache(maxsize=4096)
def _decoded(attr: Attr, value: ir.Attribute, rank: int) -> Any:
    """A verified attribute's value (attributes are immutable and uniqued, so the decoded
    value is kept)."""
    return attr.kind.normalize(attr.kind.decode(value, rank), rank)


@functools.lru_cache(maxsize=4096)
def _default(attr: Attr, rank: int) -> Any:
    default = attr.default(rank) if isinstance(attr.default, PerDim) else attr.default
    return attr.kind.normalize(default, rank)


def _attribute(operation: ir.Operation, name: str) -> ir.Attribute:
    try:
        return operation.attributes[name]
    except TypeError:  # the bindings cannot represent it (e.g. `array<i0: 0>`)
        fail(f"attribute '{name}' has a type the bindings cannot read")
        raise


def _rank0(given: list[TensorSpec]) -> int:
    return given[0].rank if given else 0


def _spec_or_fail(type_: ir.Type, what: str) -> TensorSpec:
    spec = spec_of_type(type_)
    if spec is None or spec.dtype not in ELEMENT_TYPES:
        fail(f"{what} has type {type_}; tenzr ops take ranked static tensors of f16, bf16, f32, f64, "
             "i1, i32 or i64")
    return spec


def dense_constant(array: np.ndarray, spec: TensorSpec) -> ir.Attribute:
    """A DenseElementsAttr holding `array` (splat when uniform) with type `spec`."""
    array = np.asarray(array)
    if array.size and is_uniform(array):
        return splat_constant(array.flat[0].item(), spec)
    data = np.ascontiguousarray(np.broadcast_to(array, spec.shape), dtype=numpy_dtype(spec.dtype))
    return ir.DenseElementsAttr.get(data, type=ir_type(spec).element_type, shape=list(spec.shape))


def splat_constant(value: float | int | bool, spec: TensorSpec) -> ir.Attribute:
    """The splat DenseElementsAttr of type `spec` holding `value`."""
    return _splat(ir.Context.current, spec, repr(value), value)


@on_context_eviction
def _evict(kept: set[ir.Context]) -> None:
    _splat.cache_clear()
    _decoded.cache_clear()


@functools.lru_cache(maxsize=4096)
def _splat(context: ir.Context, spec: TensorSpec, spelling: str, value: float | int | bool) -> ir.Attribute:
    """Kept per context, as MLIR attributes are immutable; `spelling` (the value's repr)
    keeps -0.0 apart from 0.0, which compare equal. A uint64 past int64's range goes to the
    bindings as the int64 of its bits (they take no wider integer)."""
    element = element_ir_type(spec.dtype)
    number = int(value) if not spec.is_float else 0
    if number >= 1 << 63:
        number -= 1 << 64
    scalar = ir.FloatAttr.get(element, float(value)) if spec.is_float else ir.IntegerAttr.get(element, number)
    return ir.DenseElementsAttr.get_splat(ir_type(spec), scalar)


def is_uniform(array: np.ndarray) -> bool:
    """Whether every element has the same bits (so -0.0 differs from 0.0, and NaN equals
    itself). Broadcast axes (stride 0) are looked at once, not copied out."""
    core = array[tuple(0 if stride == 0 else slice(None) for stride in array.strides)]
    flat = np.ravel(core)
    if flat.itemsize in (1, 2, 4, 8):
        flat = flat.view(f"u{flat.itemsize}")
    return bool(np.all(flat == flat[0]))
