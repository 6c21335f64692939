"""Reductions, arg-extrema and sorts; and StableHLO's reduce (sums)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tenzr.dialect import ops as T
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ir_imports import Value
from tenzr.dialect.opdef import Op
from tenzr.dialect.types import TensorSpec
from tenzr.passes import stablehlo as sh
from tenzr.passes.rules import Cotangents, Lowering, lowers, vjp
from tenzr.passes.rules.indexing import full_indices, identity_element, scatter_along
from tenzr.passes.rules.shape import unpad, unslice

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


def window_sum_transpose(ct: Value, shape: Sequence[int], window: sh.Window) -> Value:
    """The transpose of summing each window of an array of `shape`: each element gets the sum
    of ȳ over the windows that hold it (ȳ dilated by the strides, padded, summed over windows
    strided by the base dilations)."""
    rank = len(shape)
    low, high = [], []
    for n, w, stride, (lo, _), base, dilation, m in zip(shape, *window, sh.spec(ct).shape, strict=True):
        reach = sh.dilated(w, dilation)
        low.append(reach - lo - 1)
        high.append(sh.dilated(n, base) + reach - 1 - sh.dilated(m, stride) - low[-1])
    padded = sh.pad(ct, sh.zeros(TensorSpec((), sh.spec(ct).dtype)), low, high, [s - 1 for s in window.strides])
    back = sh.Window(window.dimensions, window.base_dilations, ((0, 0),) * rank, (1,) * rank, window.window_dilations)
    return sh.reduce_window(padded, 0, back, "add")


@vjp(sh.reduce_window, adjoint="by its body: a sum spreads ȳ back over each window (initē = ȳ summed, once per "
     "window and once per padded element); a max or min routes ȳ to the first extreme of each window "
     "(as JAX's select_and_scatter); a product gives each element ȳ times the product of the rest of its window")
def _stablehlo_reduce_window(op: Op, ct: Value) -> Cotangents:
    combiner, window = op["combiner"], op["window"]
    if combiner not in ("add", "multiply", "max", "min") or len(op.operands) != 2:
        raise TenzrError("'stablehlo.reduce_window' op has a gradient rule for one operand reduced by add, "
                         "multiply, max or min; this one has another body or several operands", op.location)
    sx = op.specs[0]
    if op.wants(1) and combiner != "add":
        raise TenzrError(f"'stablehlo.reduce_window' op: the init of a {combiner} reduction cannot be "
                         "differentiated", op.location)
    dinit = _window_init_cotangent(op, ct) if op.wants(1) else None
    if sx.size == 0 or op.result.size == 0:
        return sh.zeros(sx), dinit
    if combiner == "add":
        return window_sum_transpose(ct, sx.shape, window), dinit
    if combiner == "multiply":
        return _window_product_vjp(op, ct), None
    return _window_extremum_vjp(op, ct), None


def _window_extremum_vjp(op: Op, ct: Value) -> Value:
    """ȳ of each window goes to its first element (in row-major window order) equal to the
    result, as XLA's select_and_scatter picks it: one strided slice of the padded input per
    window position, compared with the result."""
    x, init = op.operands
    window = op["window"]
    low, high = [lo for lo, _ in window.padding], [hi for _, hi in window.padding]
    holes = [b - 1 for b in window.base_dilations]
    padded = sh.pad(x, init, low, high, holes)
    shape, out = sh.spec(padded).shape, op.result.shape
    none = sh.zeros(op.result)
    offsets = list(np.ndindex(*window.dimensions))
    taken = dpadded = None  # windows whose element is found; x̄ of the padded input
    for i, offset in enumerate(offsets):
        start = [k * d for k, d in zip(offset, window.window_dilations, strict=True)]
        limit = [b + (n - 1) * s + 1 for b, n, s in zip(start, out, window.strides, strict=True)]
        hit = sh.compare(sh.slice_(padded, start, limit, window.strides), op.out, "EQ")
        if taken is not None:
            hit = sh.and_(hit, sh.not_(taken))
        if i + 1 < len(offsets):
            taken = hit if taken is None else sh.or_(taken, hit)
        routed = unslice(sh.select(hit, ct, none), shape, start, window.strides)
        dpadded = routed if dpadded is None else sh.add(dpadded, routed)
    assert dpadded is not None
    return unpad(dpadded, low, high, holes)


def _window_init_cotangent(op: Op, ct: Value) -> Value:
    """A sum window starts from init and sees it at every padded element and base-dilation hole."""
    sx = op.specs[0]
    window = op["window"]
    held = sh.reduce_window(sh.full(sx, 1), 0, window, "add")  # real elements in each window
    size = int(np.prod(window.dimensions))
    uses = sh.subtract(sh.full(op.result, size + 1), held)
    return sh.reduce(sh.multiply(ct, uses), 0, tuple(range(op.result.rank)), "add")


def _window_product_vjp(op: Op, ct: Value) -> Value:
    """x̄ = Σ over x's windows of ȳ·(product of the window's other elements), exact with zeros:
    a window without zeros gives ȳ·y/x, one with a single zero gives the zero its product of
    the rest, and the other elements nothing."""
    x, init = op.operands
    sx = op.specs[0]
    window = op["window"]
    is_zero = sh.compare(x, sh.zeros(sx), "EQ")
    nonzero = sh.select(is_zero, sh.full(sx, 1), x)
    product = sh.multiply(ct, sh.reduce_window(nonzero, init, window, "multiply"))  # ȳ·(product of the non-zeros)
    zeros = sh.reduce_window(sh.convert(is_zero, sx.dtype), 0, window, "add")
    none = sh.zeros(op.result)

    def spread(count: int) -> Value:
        only = sh.select(sh.compare(zeros, sh.full(op.result, count), "EQ"), product, none)
        return window_sum_transpose(only, sx.shape, window)

    return sh.select(is_zero, spread(1), sh.divide(spread(0), nonzero))


@vjp(sh.sort, adjoint="each operand's x̄ = its ȳ scattered back through the permutation, found by sorting an iota "
     "beside the operands with the same comparator")
def _stablehlo_sort(op: Op, ct: Value | tuple[Value, ...]) -> Cotangents:
    cts = ct if isinstance(ct, tuple) else (ct,)
    dimension = op["dimension"]
    ids = TensorSpec(op.specs[0].shape, "i32")
    assert op.operation is not None
    copy = op.operation.clone()  # its comparator, with an iota's pair of arguments added
    comparator = copy.regions[0].blocks[0]
    for _ in range(2):
        comparator.add_argument(sh.ir_type(TensorSpec((), "i32")), op.location)
    permutation = sh.sort_with([*op.operands, sh.iota(ids, dimension)], dimension, comparator,
                               bool(op.attrs.get("is_stable", False)))[-1]
    copy.erase()
    tuples = full_indices(permutation, dimension)
    return tuple(scatter_along(sh.zeros(s), tuples, c, "add") if op.wants(i) else None
                 for i, (s, c) in enumerate(zip(op.specs, cts, strict=True)))


@vjp(sh.top_k, adjoint="x̄ = ȳ of the values scattered back to their indices")
def _top_k(op: Op, ct: Value | tuple[Value, ...]) -> Cotangents:
    values_ct = ct[0] if isinstance(ct, tuple) else ct
    assert op.operation is not None
    indices = op.operation.results[1]
    tuples = full_indices(indices, op.specs[0].rank - 1)
    return (scatter_along(sh.zeros(op.specs[0]), tuples, values_ct, "add"),)
