"""Reductions, arg-extrema and sorts; and StableHLO's reduce (sums)."""

from __future__ import annotations

from tenzr.dialect import ops as T
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ir_imports import Value
from tenzr.dialect.opdef import Op
from tenzr.dialect.types import TensorSpec
from tenzr.passes import stablehlo as sh
from tenzr.passes.rules import Cotangents, Lowering, lowers, vjp
from tenzr.passes.rules.indexing import full_indices, identity_element, scatter_along

# --------------------------------------------------------------------------- lowerings


def reduce_axes(op: Op) -> tuple[int, ...]:
    return op["axes"] or tuple(range(op.specs[0].rank))


def _reduction(combiner: str) -> Lowering:
    def lower(op: Op) -> Value:
        (x,) = op.operands
        dtype = op.specs[0].dtype
        init = identity_element(combiner, dtype)
        return sh.reshape(sh.reduce(x, init, reduce_axes(op), combiner), op.result.shape)

    return lower


for _opdef, _combiner in ((T.reduce_sum, "add"), (T.reduce_prod, "multiply"), (T.reduce_max, "max"),
                          (T.reduce_min, "min")):
    lowers(_opdef)(_reduction(_combiner))


def _arg_extremum(direction: str) -> Lowering:
    def lower(op: Op) -> Value:
        (x,) = op.operands
        sx = op.specs[0]
        axis = op["axis"]
        values_init = sh.constant(identity_element("max" if direction == "GT" else "min", sx.dtype),
                                  TensorSpec((), sx.dtype))
        index_init = sh.zeros(TensorSpec((), "i64"))

        def better(args: list[Value]) -> list[Value]:
            a, ia, b, ib = args
            take_a = sh.or_(sh.compare(a, b, direction), sh.and_(sh.compare(a, b, "EQ"), sh.compare(ia, ib, "LT")))
            if sx.is_float:  # the first NaN wins, as in NumPy
                a_nan, b_nan = sh.compare(a, a, "NE"), sh.compare(b, b, "NE")
                take_a = sh.select(a_nan, sh.or_(sh.not_(b_nan), sh.compare(ia, ib, "LT")),
                                   sh.and_(take_a, sh.not_(b_nan)))
            return [sh.select(take_a, a, b), sh.select(take_a, ia, ib)]

        ids = sh.iota(sx.with_dtype("i64"), axis)
        return sh.reduce_region([x, ids], [values_init, index_init], [axis], better)[1]

    return lower


lowers(T.argmax)(_arg_extremum("GT"))
lowers(T.argmin)(_arg_extremum("LT"))


@lowers(T.sort)
def _lower_sort(op: Op) -> Value:
    return sh.sort([op.operands[0]], op["axis"], op["descending"])[0]


@lowers(T.argsort)
def _lower_argsort(op: Op) -> Value:
    (x,) = op.operands
    ids = sh.iota(op.result, op["axis"])
    return sh.sort([x, ids], op["axis"], op["descending"], order_by=1)[1]



# --------------------------------------------------------------------------- VJP rules


def _axes(op: Op) -> tuple[int, ...]:
    """The dims a reduction (tenzr's, or a stablehlo.reduce) reduces."""
    return reduce_axes(op) if op.opdef is not None else tuple(op["dimensions"])


def _expand(op: Op, reduced: Value) -> Value:
    """Broadcasts a reduction's result (or cotangent) back to the operand's shape."""
    x = op.specs[0]
    axes = _axes(op)
    keep = op.opdef is not None and op["keepdims"]
    kept = range(x.rank) if keep else [d for d in range(x.rank) if d not in axes]
    return sh.broadcast_in_dim(reduced, x.shape, list(kept))


@vjp(T.reduce_sum, adjoint='x̄ = ȳ broadcast back over the reduced axes')
def _reduce_sum(op: Op, ct: Value) -> Cotangents:
    return (_expand(op, ct),)


@vjp(T.reduce_prod, adjoint='x̄ᵢ = ȳ·∏_{j≠i} xⱼ, exact with zeros')
def _reduce_prod(op: Op, ct: Value) -> Cotangents:
    """x̄ᵢ = ȳ·∏_{j≠i} xⱼ without dividing by zero: with no zero, P/xᵢ; with exactly one
    zero, the product of the nonzeros at that zero; with more, 0."""
    x = op.operands[0]
    sx = op.specs[0]
    axes = _axes(op)
    zero, one = sh.zeros(sx), sh.full(sx, 1)
    is_zero = sh.compare(x, zero, "EQ")
    nonzero = sh.select(is_zero, one, x)
    product = _expand(op, sh.reshape(sh.reduce(nonzero, 1, axes, "multiply"), op.result.shape))
    zeros = _expand(op, sh.reshape(sh.reduce(sh.convert(is_zero, sx.dtype), 0, axes, "add"), op.result.shape))
    no_zero = sh.compare(zeros, zero, "EQ")
    one_zero = sh.and_(sh.compare(zeros, one, "EQ"), is_zero)
    grad = sh.select(no_zero, sh.divide(product, nonzero), sh.select(one_zero, product, zero))
    return (sh.multiply(_expand(op, ct), grad),)


@vjp(T.reduce_max, T.reduce_min, adjoint='ȳ split evenly among the elements equal to the result (as JAX)')
def _reduce_extremum(op: Op, ct: Value) -> Cotangents:
    x = op.operands[0]
    sx = op.specs[0]
    hits = sh.convert(sh.compare(x, _expand(op, op.out), "EQ"), sx.dtype)
    counts = sh.reshape(sh.reduce(hits, 0, _axes(op), "add"), op.result.shape)
    return (sh.multiply(hits, _expand(op, sh.divide(ct, counts))),)


@vjp(T.sort, adjoint='x̄ = ȳ scattered back through the sorting permutation')
def _sort(op: Op, ct: Value) -> Cotangents:
    (x,) = op.operands
    axis = op["axis"]
    ids = sh.iota(op.specs[0].with_dtype("i64"), axis)
    permutation = sh.convert(sh.sort([x, ids], axis, op["descending"], order_by=1)[1], "i32")
    return (scatter_along(sh.zeros(op.specs[0]), full_indices(permutation, axis), ct, "add"),)



@vjp(sh.reduce, adjoint="by its body: a sum as reduce_sum (initē = sum(ȳ)), a product as reduce_prod, a max or "
     "min as reduce_max and reduce_min; the init of a product, max or min gets none")
def _stablehlo_reduce(op: Op, ct: Value) -> Cotangents:
    combiner = op["combiner"]
    if combiner not in ("add", "multiply", "max", "min") or len(op.operands) != 2:
        raise TenzrError("'stablehlo.reduce' op has a gradient rule for one operand reduced by add, multiply, max "
                         "or min; this one has another body or several operands", op.location)
    if combiner == "add":
        (dx,) = _reduce_sum(op, ct)
        return dx, sh.reduce(ct, 0, tuple(range(op.result.rank)), "add") if op.wants(1) else None
    if op.wants(1):
        raise TenzrError(f"'stablehlo.reduce' op: the init of a {combiner} reduction cannot be differentiated",
                         op.location)
    (dx,) = (_reduce_prod if combiner == "multiply" else _reduce_extremum)(op, ct)
    return dx, None
