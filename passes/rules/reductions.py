"""Reductions, arg-extrema and sorts; and StableHLO's reduce (sums)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tenzr.dialect import ops as T
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.opdef import Op
from tenzr.dialect.types import HALF_TYPES, TensorSpec
from tenzr.passes import stablehlo as sh
from tenzr.passes.rules import Cotangents, Lowering, linear, lowers, vjp
from tenzr.passes.rules.indexing import full_indices, identity_element, scatter_along
from tenzr.passes.rules.shape import unpad, unslice
from tenzr.passes.views import iota_along

# --------------------------------------------------------------------------- lowerings


def reduce_axes(op: Op) -> tuple[int, ...]:
    return op["axes"] or tuple(range(op.specs[0].rank))


def _reduction(combiner: str) -> Lowering:
    def lower(op: Op) -> Value:
        (x,) = op.operands
        dtype = op.specs[0].dtype
        if combiner in ("add", "multiply") and dtype in HALF_TYPES:  # (accumulated in float32, as JAX's)
            x = sh.convert(x, "f32")
        init = identity_element(combiner, sh.spec(x).dtype)
        out = sh.reshape(sh.reduce(x, init, reduce_axes(op), combiner), op.result.shape)
        return sh.convert(out, dtype) if sh.spec(out).dtype != dtype else out

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


linear(T.reduce_sum)


@vjp(T.reduce_prod, adjoint='x̄ᵢ = ȳ·∏_{j≠i} xⱼ, the products before and after i (exact with zeros, and '
     'differentiable again)')
def _reduce_prod(op: Op, ct: Value) -> Cotangents:
    """x̄ᵢ = ȳ·∏_{j≠i} xⱼ without dividing: the reduced dims flattened into one, whose
    exclusive products are those of the elements before times those after."""
    x = op.operands[0]
    sx = op.specs[0]
    axes = _axes(op)
    kept = [d for d in range(sx.rank) if d not in axes]
    order = [*kept, *axes]
    moved = sh.transpose(x, order)
    moved_shape = sh.spec(moved).shape
    flat = sh.reshape(moved, (*moved_shape[:len(kept)], int(np.prod([sx.shape[d] for d in axes]))))
    others = sh.reshape(_products_of_the_others(flat), moved_shape)
    back = sh.transpose(others, [order.index(d) for d in range(sx.rank)])
    return (sh.multiply(_expand(op, ct), back),)


def _shifted(v: Value, by: int) -> Value:
    """v moved `by` places along its last dim (toward the end if positive, the start if
    negative), ones filling in."""
    s = sh.spec(v)
    n, rank = s.shape[-1], s.rank
    if abs(by) >= n:
        return sh.full(s, 1)
    start, limit = [0] * rank, list(s.shape)
    low, high = [0] * rank, [0] * rank
    if by > 0:
        limit[-1], low[-1] = n - by, by
    else:
        start[-1], high[-1] = -by, -by
    cut = sh.slice_(v, start, limit, [1] * rank)
    return sh.pad(cut, sh.full(TensorSpec((), s.dtype), 1), low, high, [0] * rank)


def _running_products(v: Value, direction: int) -> Value:
    """Inclusive products along the last dim from its start (direction 1) or its end (-1),
    in log₂(n) doubling steps."""
    step = 1
    while step < sh.spec(v).shape[-1]:
        v = sh.multiply(v, _shifted(v, direction * step))
        step *= 2
    return v


def _products_of_the_others(v: Value) -> Value:
    """∏_{j≠i} v_j along the last dim: the running product before i times the one after
    (no reverse: IREE 3.13 fails on a reverse of a pad of a slice, "'stream.yield' op used
    resource not listed in explicit captures")."""
    before = _shifted(_running_products(v, 1), 1)
    after = _shifted(_running_products(v, -1), -1)
    return sh.multiply(before, after)


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
     "min as reduce_max and reduce_min; the init of a product, max or min gets none. Several operands whose body "
     "selects (as argmax, beside an iota): ȳ of each goes to the element at the selected index")
def _stablehlo_reduce(op: Op, ct: Value | tuple[Value, ...]) -> Cotangents:
    if len(op.operands) > 2:
        return _selecting_reduce(op, ct if isinstance(ct, tuple) else (ct,))
    assert not isinstance(ct, tuple)
    combiner = op["combiner"]
    if combiner not in ("add", "multiply", "max", "min"):
        raise TenzrError("'stablehlo.reduce' op has a gradient rule for one operand reduced by add, multiply, max "
                         "or min; this one has another body", op.location)
    if combiner == "add":
        (dx,) = _reduce_sum(op, ct)
        return dx, sh.reduce(ct, 0, tuple(range(op.result.rank)), "add") if op.wants(1) else None
    if op.wants(1):
        raise TenzrError(f"'stablehlo.reduce' op: the init of a {combiner} reduction cannot be differentiated",
                         op.location)
    (dx,) = (_reduce_prod if combiner == "multiply" else _reduce_extremum)(op, ct)
    return dx, None


def _selecting_reduce(op: Op, cts: tuple[Value, ...]) -> Cotangents:
    """A reduce of n operands over one dim whose body selects (each result k is
    select(c, accumulator k, element k) or its swap) and one of whose operands is an iota
    along that dim: the iota's result is the selected position, where ȳ goes."""
    assert op.operation is not None
    n = len(op.operands) // 2
    dims = tuple(op["dimensions"])
    position = next((j for j in range(n) if len(dims) == 1 and iota_along(op.operands[j], dims[0])), None)
    if len(dims) != 1 or position is None or not _body_selects(op.operation, n) \
            or any(op.wants(n + j) for j in range(n)):
        raise TenzrError("'stablehlo.reduce' op with several operands has a gradient rule when its body selects "
                         "among them (as argmax's) over one dim, beside an iota along that dim; this one does not",
                         op.location)
    x = op.specs[0]
    kept = [d for d in range(x.rank) if d not in dims]
    iota, chosen = op.operands[position], op.operation.results[position]
    at = sh.compare(iota, sh.broadcast_in_dim(chosen, x.shape, kept), "EQ")
    grads: list[Value | None] = []
    for k in range(n):
        if not op.wants(k):
            grads.append(None)
            continue
        spec = op.specs[k]
        there = sh.and_(at, sh.compare(op.operands[k], sh.broadcast_in_dim(op.operation.results[k], x.shape, kept),
                                       "EQ"))
        grads.append(sh.select(there, sh.broadcast_in_dim(cts[k], x.shape, kept), sh.zeros(spec)))
    return (*grads, *[None] * n)


def _body_selects(operation: ir.Operation, n: int) -> bool:
    """Whether each result of the reduce's body is a select between accumulator k and element k."""
    block = operation.regions[0].blocks[0]
    arguments = list(block.arguments)
    returned = list(list(block.operations)[-1].operands)
    for k, value in enumerate(returned):
        chooser = sh.producer(value)
        if chooser is None or chooser.name != sh.select.op_name:
            return False
        if list(chooser.operands)[1:] not in ([arguments[k], arguments[k + n]], [arguments[k + n], arguments[k]]):
            return False
    return True


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
     "(a select_and_scatter, as JAX); a product gives each element ȳ times the product of the rest of its window")
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
    """As JAX: ȳ of each window goes to its first extreme element, by a select_and_scatter;
    base dilations make holes of the init in the input, sliced off after. Window dilations
    have no rule (nor in JAX)."""
    x, init = op.operands
    window = op["window"]
    rank = len(window.dimensions)
    if any(d != 1 for d in window.window_dilations):
        raise TenzrError(f"'stablehlo.reduce_window' op: a {op['combiner']} reduction with window dilations has no "
                         "gradient rule", op.location)
    holes = [b - 1 for b in window.base_dilations]
    dilated = sh.pad(x, init, [0] * rank, [0] * rank, holes)
    plain = sh.Window(window.dimensions, window.strides, window.padding, (1,) * rank, (1,) * rank)
    routed = sh.select_and_scatter_add(dilated, ct, 0, plain, "GE" if op["combiner"] == "max" else "LE")
    return sh.slice_(routed, [0] * rank, sh.spec(routed).shape, window.base_dilations)


def window_choices(x: Value, window: sh.Window, direction: str) -> tuple[Value, list[tuple[list[int], Value]]]:
    """Which element each window of `x` chooses, as select_and_scatter does (the padding is
    never chosen; the first element e such that compare(e, later, direction) for each later
    one): `x` padded, and for each window position, its start there and the i1 mask (of
    the windows' shape) of the windows that choose it."""
    sx = sh.spec(x)
    rank = sx.rank
    low, high = [lo for lo, _ in window.padding], [hi for _, hi in window.padding]
    padded = sh.pad(x, sh.zeros(TensorSpec((), sx.dtype)), low, high, [0] * rank)
    boolean = TensorSpec((), "i1")
    valid = sh.pad(sh.full(sx.with_dtype("i1"), True), sh.full(boolean, False), low, high, [0] * rank)
    out = window.output_shape(sx.shape)
    position = TensorSpec(tuple(out), "i32")
    starts, best, chosen, seen = [], None, None, None
    for k, offset in enumerate(np.ndindex(*window.dimensions)):
        start = list(offset)
        limit = [b + (n - 1) * s + 1 for b, n, s in zip(start, out, window.strides, strict=True)]
        value = sh.slice_(padded, start, limit, window.strides)
        inside = sh.slice_(valid, start, limit, window.strides)
        starts.append(start)
        if best is None or chosen is None or seen is None:
            best, chosen, seen = value, sh.zeros(position), inside
            continue
        take = sh.and_(inside, sh.or_(sh.not_(seen), sh.not_(sh.compare(best, value, direction))))
        best = sh.select(take, value, best)
        chosen = sh.select(take, sh.full(position, k), chosen)
        seen = sh.or_(seen, inside)
    assert chosen is not None and seen is not None
    return padded, [(start, sh.and_(seen, sh.compare(chosen, sh.full(position, k), "EQ")))
                    for k, start in enumerate(starts)]


def expand_select_and_scatter(x: Value, source: Value, init: Value, window: sh.Window, direction: str) -> Value:
    """select_and_scatter with an add body, from slices, selects and pads."""
    padded, choices = window_choices(x, window, direction)
    shape = sh.spec(padded).shape
    none = sh.zeros(sh.spec(source))
    total = None
    for start, chosen in choices:
        routed = unslice(sh.select(chosen, source, none), shape, start, window.strides)
        total = routed if total is None else sh.add(total, routed)
    assert total is not None
    low, high = [lo for lo, _ in window.padding], [hi for _, hi in window.padding]
    summed = unpad(total, low, high, [0] * len(low))
    return sh.add(summed, sh.broadcast_in_dim(init, sh.spec(x).shape, []))


@vjp(sh.select_and_scatter_add, adjoint="sourcē = ȳ at the element each window chose; initē = sum(ȳ); the "
     "operand, which only chooses, gets none")
def _select_and_scatter(op: Op, ct: Value) -> Cotangents:
    direction, window = op["select"], op["window"]
    if direction is None or op["combiner"] != "add":
        raise TenzrError("'stablehlo.select_and_scatter' op has a gradient rule for a select body that compares its "
                         "arguments (GE, GT, LE or LT) and an add scatter body; this one has others", op.location)
    x = op.operands[0]
    dsource = dinit = None
    if op.wants(1):
        _, choices = window_choices(x, window, direction)
        ct_padded = sh.pad(ct, sh.zeros(TensorSpec((), op.result.dtype)), [lo for lo, _ in window.padding],
                           [hi for _, hi in window.padding], [0] * op.result.rank)
        sx = op.specs[1]
        none = sh.zeros(sx)
        for start, chosen in choices:
            limit = [b + (n - 1) * s + 1 for b, n, s in zip(start, sx.shape, window.strides, strict=True)]
            picked = sh.select(chosen, sh.slice_(ct_padded, start, limit, window.strides), none)
            dsource = picked if dsource is None else sh.add(dsource, picked)
    if op.wants(2):
        dinit = sh.reduce(ct, 0, tuple(range(op.result.rank)), "add")
    return None, dsource, dinit


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
    return tuple(scatter_along(sh.zeros(s), tuples, c, "add") if op.wants(i) and op.has_cotangent(i) else None
                 for i, (s, c) in enumerate(zip(op.specs, cts, strict=True)))


@vjp(sh.top_k, adjoint="x̄ = ȳ of the values scattered back to their indices")
def _top_k(op: Op, ct: Value | tuple[Value, ...]) -> Cotangents:
    values_ct = ct[0] if isinstance(ct, tuple) else ct
    assert op.operation is not None
    indices = op.operation.results[1]
    tuples = full_indices(indices, op.specs[0].rank - 1)
    return (scatter_along(sh.zeros(op.specs[0]), tuples, values_ct, "add"),)
