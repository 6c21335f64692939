"""Random tenzr programs for differential testing (Hypothesis strategies).

A `Program` is a list of steps over a pool of values: each step applies one op to earlier
values and adds its result. It returns its last value and up to two others drawn from the
pool, inputs included: a returned input or intermediate catches an op that writes its
operand's buffer in place while something else still reads it. Every step carries both
the tenzr builder call and an independent NumPy implementation, so a program can be
evaluated by NumPy (the reference) and differentiated by tenzr-grad and tenzr-jvp.
Programs print as readable pseudo-code for shrunk failures.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st
from op_table import conv_ref, pad_ref, scatter_ref

from tenzr.dialect import TensorSpec, spec_of
from tenzr.dialect import ops as T
from tenzr.dialect.ir_imports import ir
from tenzr.dialect.opdef import dense_constant


@dataclass(repr=False)
class Step:
    text: str
    operands: tuple[int, ...]
    build: Callable  # (values) -> ir.Value
    ref: Callable  # (arrays) -> np.ndarray
    shape: tuple[int, ...]

    def __repr__(self) -> str:
        return self.text


@dataclass(repr=False)
class Program:
    inputs: list[tuple[int, ...]]
    steps: list[Step] = field(default_factory=list)
    returned: list[int] = field(default_factory=list)  # pool indices returned before the last value

    def shapes(self) -> list[tuple[int, ...]]:
        return [*self.inputs, *(s.shape for s in self.steps)]

    def evaluate(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        values = [np.asarray(a, dtype=np.float64) for a in arrays]
        for s in self.steps:
            values.append(np.asarray(s.ref(*(values[i] for i in s.operands)), dtype=np.float64))
        return [values[i] for i in self.returned] + [values[-1]]

    def build(self, args: list) -> list:
        values = list(args)
        for s in self.steps:
            values.append(s.build(*(values[i] for i in s.operands)))
        return [values[i] for i in self.returned] + [values[-1]]

    def __repr__(self) -> str:
        lines = [f"v{i}: input{list(shape)}" for i, shape in enumerate(self.inputs)]
        n = len(self.inputs)
        lines += [f"v{n + k}{list(s.shape)} = {s.text.format(*(f'v{i}' for i in s.operands))}"
                  for k, s in enumerate(self.steps)]
        lines.append("return " + ", ".join(f"v{i}" for i in [*self.returned, n + len(self.steps) - 1]))
        return "Program(\n  " + "\n  ".join(lines) + "\n)"


def _like(v, shape) -> TensorSpec:
    return spec_of(v).with_shape(shape)


def _const(array: np.ndarray, dtype: str = "f64"):
    spec = TensorSpec(array.shape, dtype)
    return T.constant(value=dense_constant(array, spec))


def _smooth(x):
    """1 + x², a positive, smooth transform for denominators, logs and power bases."""
    one = _const(np.ones(spec_of(x).shape))
    return T.add(one, T.mul(x, x))


UNARY = {
    "tanh": (T.tanh, np.tanh), "sin": (T.sin, np.sin), "cos": (T.cos, np.cos), "neg": (T.neg, np.negative),
    "sigmoid": (T.sigmoid, lambda a: 1 / (1 + np.exp(-a))),
    "exp_tanh": (lambda x: T.exp(T.tanh(x)), lambda a: np.exp(np.tanh(a))),
    "log_smooth": (lambda x: T.log(_smooth(x)), lambda a: np.log(1 + a * a)),
    "sqrt_smooth": (lambda x: T.sqrt(_smooth(x)), lambda a: np.sqrt(1 + a * a)),
    "rsqrt_smooth": (lambda x: T.rsqrt(_smooth(x)), lambda a: 1 / np.sqrt(1 + a * a)),
    "log1p_smooth": (lambda x: T.log1p(T.mul(x, x)), lambda a: np.log1p(a * a)),
    "expm1_tanh": (lambda x: T.expm1(T.tanh(x)), lambda a: np.expm1(np.tanh(a))),
    "relu": (T.relu, lambda a: np.maximum(a, 0)), "abs": (T.abs_, np.abs),
}
BINARY = {
    "add": (T.add, np.add), "sub": (T.sub, np.subtract), "mul": (T.mul, np.multiply),
    "div_smooth": (lambda x, y: T.div(x, _smooth(y)), lambda a, b: a / (1 + b * b)),
    "pow_smooth": (lambda x, y: T.pow_(_smooth(x), T.tanh(y)), lambda a, b: (1 + a * a) ** np.tanh(b)),
    "maximum": (T.maximum, np.maximum), "minimum": (T.minimum, np.minimum),
    "select_gt": (lambda x, y: T.select(T.compare(x, y, direction="gt"), x, y), lambda a, b: np.where(a > b, a, b)),
}
REDUCTIONS = {"reduce_sum": (T.reduce_sum, np.sum), "reduce_max": (T.reduce_max, np.max),
              "reduce_min": (T.reduce_min, np.min), "reduce_prod": (T.reduce_prod, np.prod)}

shapes = st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple)


@st.composite
def programs(draw, max_steps: int = 6) -> Program:
    prog = Program([draw(shapes) for _ in range(draw(st.integers(1, 3)))])
    for _ in range(draw(st.integers(1, max_steps))):
        pool = prog.shapes()
        i = draw(st.integers(0, len(pool) - 1))
        kind = draw(st.sampled_from(["unary", "binary", "binary", "reduce", "shape", "index", "matmul", "conv",
                                     "sort", "scatter", "dynamic", "constant", "loop", "cond"]))
        step = _STEP_MAKERS[kind](draw, pool, i)
        if step is not None:
            prog.steps.append(step)
    if not prog.steps:
        name = "tanh"
        prog.steps.append(Step(f"{name}({{}})", (0,), UNARY[name][0], UNARY[name][1], prog.inputs[0]))
    prog.returned = draw(st.lists(st.integers(0, len(prog.shapes()) - 2), max_size=2))
    return prog


def _unary(draw, pool, i):
    name = draw(st.sampled_from(sorted(UNARY)))
    build, ref = UNARY[name]
    return Step(f"{name}({{}})", (i,), build, ref, pool[i])


def _broadcasts(a, b) -> tuple[int, ...] | None:
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


def _binary(draw, pool, i):
    partners = [j for j, s in enumerate(pool) if _broadcasts(pool[i], s) is not None]
    j = draw(st.sampled_from(partners))
    name = draw(st.sampled_from(sorted(BINARY)))
    build, ref = BINARY[name]
    return Step(f"{name}({{}}, {{}})", (i, j), build, ref, _broadcasts(pool[i], pool[j]))


def _reduce(draw, pool, i):
    shape = pool[i]
    name = draw(st.sampled_from(sorted(REDUCTIONS)))
    build, ref = REDUCTIONS[name]
    axes = tuple(sorted(draw(st.sets(st.integers(0, len(shape) - 1), max_size=len(shape))))) if shape else ()
    keep = draw(st.booleans())
    out = tuple(1 if (d in axes or not axes) else n for d, n in enumerate(shape)) if keep else \
        tuple(n for d, n in enumerate(shape) if axes and d not in axes)
    return Step(f"{name}({{}}, axes={list(axes)}, keepdims={keep})", (i,),
                lambda x: build(x, axes=axes, keepdims=keep),
                lambda a: ref(a, axis=axes or None, keepdims=keep), out)


def _shape_op(draw, pool, i):
    shape = pool[i]
    rank = len(shape)
    choice = draw(st.sampled_from(["transpose", "reshape", "broadcast", "pad", "slice", "reverse", "concat"]))
    if choice == "transpose" and rank >= 2:
        perm = tuple(draw(st.permutations(range(rank))))
        return Step(f"transpose({{}}, {list(perm)})", (i,), lambda x: T.transpose(x, permutation=perm),
                    lambda a: np.transpose(a, perm), tuple(shape[p] for p in perm))
    if choice == "reshape":
        size = int(np.prod(shape))
        new = (size,) if draw(st.booleans()) else (1, size)
        return Step(f"reshape({{}}, {list(new)})", (i,), lambda x: T.reshape(x, result=_like(x, new)),
                    lambda a: a.reshape(new), new)
    if choice == "broadcast":
        new = (draw(st.integers(1, 3)), *shape)
        return Step(f"broadcast_to({{}}, {list(new)})", (i,), lambda x: T.broadcast_to(x, result=_like(x, new)),
                    lambda a: np.broadcast_to(a, new), new)
    if choice == "pad" and rank:
        low = [draw(st.integers(-1 if n > 1 else 0, 2)) for n in shape]
        high = [draw(st.integers(-1 if n > 1 else 0, 2)) for n in shape]
        interior = [draw(st.integers(0, 2)) for _ in shape]
        out = tuple(lo + hi + n + (n - 1) * it for n, lo, hi, it in zip(shape, low, high, interior, strict=True))
        if min(out) < 1:
            return None
        value = float(draw(st.integers(-2, 2)))

        def build(x):
            return T.pad(x, _const(np.array(value), spec_of(x).dtype), low=low, high=high, interior=interior)

        return Step(f"pad({{}}, low={low}, high={high}, interior={interior}, value={value})", (i,), build,
                    lambda a: pad_ref(a, value, low, high, interior), out)
    if choice == "slice" and rank:
        start = [draw(st.integers(0, n - 1)) for n in shape]
        stop = [draw(st.integers(b + 1, n)) for b, n in zip(start, shape, strict=True)]
        step = [draw(st.integers(1, 3)) for _ in shape]
        out = tuple(-(-(e - b) // s) for b, e, s in zip(start, stop, step, strict=True))
        index = tuple(slice(b, e, s) for b, e, s in zip(start, stop, step, strict=True))
        return Step(f"{{}}[{index}]", (i,), lambda x: T.slice_(x, start=start, stop=stop, step=step),
                    lambda a: a[index], out)
    if choice == "reverse" and rank:
        dims = sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1)))
        return Step(f"reverse({{}}, {dims})", (i,), lambda x: T.reverse(x, dimensions=dims),
                    lambda a: np.flip(a, dims), shape)
    if choice == "concat" and rank:
        axis = draw(st.integers(0, rank - 1))
        out = tuple(2 * n if d == axis else n for d, n in enumerate(shape))
        return Step(f"concatenate({{}}, {{}}, axis={axis})", (i, i), lambda x, y: T.concatenate(x, y, axis=axis),
                    lambda a, b: np.concatenate([a, b], axis), out)
    return None


def _axis(draw, shape: tuple[int, ...]) -> int | None:
    """An axis of `shape`, drawn; None for a rank-0 shape."""
    return draw(st.integers(0, len(shape) - 1)) if shape else None


def _index(draw, pool, i):
    shape = pool[i]
    axis = _axis(draw, shape)
    if axis is None:
        return None
    n = shape[axis]
    if draw(st.booleans()):
        idx = np.array(draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=4)), np.int64)
        out = tuple(len(idx) if d == axis else m for d, m in enumerate(shape))
        return Step(f"gather({{}}, {idx.tolist()}, axis={axis})", (i,),
                    lambda x: T.gather(x, _const(idx, "i64"), axis=axis), lambda a: np.take(a, idx, axis=axis), out)
    k = draw(st.integers(1, 3))
    idx_shape = tuple(k if d == axis else m for d, m in enumerate(shape))
    idx = np.array(draw(st.lists(st.integers(0, n - 1), min_size=int(np.prod(idx_shape)),
                                 max_size=int(np.prod(idx_shape))))).reshape(idx_shape).astype(np.int64)
    return Step(f"take_along_axis({{}}, {idx.tolist()}, axis={axis})", (i,),
                lambda x: T.take_along_axis(x, _const(idx, "i64"), axis=axis),
                lambda a: np.take_along_axis(a, idx, axis), idx_shape)


def _matmul(draw, pool, i):
    a = pool[i]
    if len(a) < 2:
        return None
    k = a[-1]
    partners = [j for j, s in enumerate(pool) if len(s) >= 2 and s[-2] == k and
                _broadcasts(a[:-2], s[:-2]) is not None]
    if not partners:
        return None
    j = draw(st.sampled_from(partners))
    b = pool[j]
    n = b[-1]
    out = (*_broadcasts(a[:-2], b[:-2]), a[-2], n)
    return Step("matmul({}, {})", (i, j), T.matmul, np.matmul, out)


def _conv(draw, pool, i):
    shape = pool[i]
    if len(shape) not in (3, 4) or shape[1] > 3:
        return None
    n = len(shape) - 2
    groups = draw(st.sampled_from([g for g in (1, 2, 3) if shape[1] % g == 0]))
    out_ch = groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(n))
    strides = [draw(st.integers(1, 2)) for _ in range(n)]
    low = [draw(st.integers(0, 1)) for _ in range(n)]
    high = [draw(st.integers(0, 1)) for _ in range(n)]
    lhs_dil = [draw(st.integers(1, 2)) for _ in range(n)]
    rhs_dil = [draw(st.integers(1, 2)) for _ in range(n)]
    spatial = []
    for d in range(n):
        size = (shape[2 + d] - 1) * lhs_dil[d] + 1 + low[d] + high[d]
        window = (kernel[d] - 1) * rhs_dil[d] + 1
        if size < window:
            return None
        spatial.append((size - window) // strides[d] + 1)
    w = draw(st.lists(st.floats(-1, 1), min_size=out_ch * (shape[1] // groups) * int(np.prod(kernel)),
                      max_size=out_ch * (shape[1] // groups) * int(np.prod(kernel))))
    w = np.array(w, np.float64).reshape((out_ch, shape[1] // groups, *kernel))
    attrs = dict(window_strides=strides, padding_low=low, padding_high=high, lhs_dilation=lhs_dil,
                 rhs_dilation=rhs_dil, feature_group_count=groups)
    shown = str(attrs).replace("{", "{{").replace("}", "}}")  # step texts are format strings

    def build(x, y):
        return T.convolution(x, T.mul(y, _const(w)), **attrs)

    def ref(a, b):
        return conv_ref(a, b * w, strides, low, high, lhs_dil, rhs_dil, groups)

    # The kernel is the second operand: a fresh input-shaped value is not available, so
    # the kernel is w scaled by an input of w's shape when one exists, else by 1.
    partners = [j for j, s in enumerate(pool) if s == w.shape]
    if partners:
        j = draw(st.sampled_from(partners))
        return Step(f"convolution({{}}, {{}} * w, {shown})", (i, j), build, ref,
                    (shape[0], out_ch, *spatial))
    return Step(f"convolution({{}}, w, {shown})", (i,), lambda x: T.convolution(x, _const(w), **attrs),
                lambda a: conv_ref(a, w, strides, low, high, lhs_dil, rhs_dil, groups), (shape[0], out_ch, *spatial))


def _sort(draw, pool, i):
    shape = pool[i]
    axis = _axis(draw, shape)
    if axis is None:
        return None
    descending = draw(st.booleans())

    def ref(a):
        s = np.sort(a, axis=axis)
        return np.flip(s, axis) if descending else s

    return Step(f"sort({{}}, axis={axis}, descending={descending})", (i,),
                lambda x: T.sort(x, axis=axis, descending=descending), ref, shape)


def _scatter(draw, pool, i):
    shape = pool[i]
    axis = _axis(draw, shape)
    if axis is None:
        return None
    n = shape[axis]
    k = draw(st.integers(1, 3))
    upd_shape = tuple(k if d == axis else m for d, m in enumerate(shape))
    partners = [j for j, s in enumerate(pool) if s == upd_shape]
    if not partners:
        return None
    j = draw(st.sampled_from(partners))
    idx = np.array(draw(st.lists(st.integers(-n, n - 1), min_size=k, max_size=k)), np.int64)
    mode = draw(st.sampled_from(["set", "add", "multiply", "min", "max"]))
    return Step(f"scatter({{}}, {idx.tolist()}, {{}}, axis={axis}, mode={mode})", (i, j),
                lambda x, u: T.scatter(x, _const(idx, "i64"), u, axis=axis, mode=mode),
                lambda a, u: scatter_ref(a, idx, u, axis, mode), shape)


def _dynamic(draw, pool, i):
    shape = pool[i]
    if not shape:
        return None
    starts = [draw(st.integers(-1, n + 1)) for n in shape]
    clamp = [int(np.clip(s, 0, n)) for s, n in zip(starts, shape, strict=True)]
    if draw(st.booleans()):
        sizes = [draw(st.integers(1, n)) for n in shape]
        real = [min(c, n - z) for c, n, z in zip(clamp, shape, sizes, strict=True)]
        index = tuple(slice(r, r + z) for r, z in zip(real, sizes, strict=True))
        return Step(f"dynamic_slice({{}}, {starts}, sizes={sizes})", (i,),
                    lambda x: T.dynamic_slice(x, *(_const(np.array(s), "i32") for s in starts), sizes=sizes),
                    lambda a: a[index], tuple(sizes))
    partners = [j for j, s in enumerate(pool) if len(s) == len(shape) and all(a <= b for a, b in
                                                                               zip(s, shape, strict=True))]
    j = draw(st.sampled_from(partners))
    upd = pool[j]
    real = [min(c, n - z) for c, n, z in zip(clamp, shape, upd, strict=True)]

    def ref(a, u):
        out = a.copy()
        out[tuple(slice(r, r + z) for r, z in zip(real, upd, strict=True))] = u
        return out

    return Step(f"dynamic_update_slice({{}}, {{}}, {starts})", (i, j),
                lambda x, u: T.dynamic_update_slice(x, u, *(_const(np.array(s), "i32") for s in starts)), ref, shape)


def _region_op(name: str, operands: list, bodies: list[Callable]) -> ir.Operation:
    """Op `name` on `operands`, one region per body, each a block yielding `body(*arguments)`.
    The blocks take, and the op returns, values typed as the operands after a case's index,
    or as all of a loop's operands."""
    carried = operands if name == T.while_.name else operands[1:]
    types = [v.type for v in carried]
    op = ir.Operation.create(name, results=types, operands=operands, regions=len(bodies))
    for region, body in zip(op.regions, bodies, strict=True):
        block = region.blocks.append(*types)
        with ir.InsertionPoint(block):
            ir.Operation.create(T.yield_.name, results=[], operands=body(*block.arguments))
    return op


def _loop(draw, pool, i):
    """A loop of 1-3 steps carrying pool[i], each step combining a bounded function of the
    carry with a value the loop reads from outside."""
    j = draw(st.sampled_from([j for j, s in enumerate(pool) if s == pool[i]]))
    uname, bname = draw(st.sampled_from(["tanh", "sin", "sigmoid"])), draw(st.sampled_from(["add", "mul", "sub"]))
    steps = draw(st.integers(1, 3))
    (f, f_ref), (g, g_ref) = UNARY[uname], BINARY[bname]

    def build(x, y):
        def count(n):
            return _const(np.array(n, np.int32), "i32")

        loop = _region_op(T.while_.name, [count(0), x], [lambda k, c: [T.compare(k, count(steps), direction="lt")],
                                                         lambda k, c: [T.add(k, count(1)), g(f(c), y)]])
        return loop.results[1]

    def ref(a, b):
        for _ in range(steps):
            a = g_ref(f_ref(a), b)
        return a

    return Step(f"fori_loop(0, {steps}, lambda k, c: {bname}({uname}(c), y), {{}}) with y = {{}}", (i, j), build,
                ref, pool[i])


def _cond(draw, pool, i):
    """One of two functions of pool[i] (the second also reading a value from outside), as the
    sign of pool[j]'s sum picks."""
    j = draw(st.integers(0, len(pool) - 1))
    k = draw(st.sampled_from([k for k, s in enumerate(pool) if s == pool[i]]))
    (fname, (f, f_ref)), (gname, (g, g_ref)) = (
        (name, UNARY[name]) for name in draw(st.lists(st.sampled_from(sorted(UNARY)), min_size=2, max_size=2)))

    def build(x, p, y):
        total = T.reduce_sum(p, axes=tuple(range(len(pool[j]))), keepdims=False) if pool[j] else p
        positive = T.compare(total, _const(np.array(0.0)), direction="gt")
        index = T.convert(positive, result=TensorSpec((), "i32"))
        case = _region_op(T.case.name, [index, x], [lambda c: [f(c)], lambda c: [T.mul(g(c), y)]])
        return case.results[0]

    def ref(a, b, c):
        return g_ref(a) * c if np.sum(b) > 0 else f_ref(a)

    return Step(f"{gname}({{0}}) * {{2}} if sum({{1}}) > 0 else {fname}({{0}})", (i, j, k), build, ref, pool[i])


def _constant(draw, pool, i):
    """A splat constant shaped like value i, for later steps to update and read (IREE once
    wrote an update of a float64 splat into the splat's own buffer)."""
    shape, value = pool[i], draw(st.sampled_from([0.0, 1.0, -0.5, 2.0]))
    return Step(f"full({list(shape)}, {value})", (), lambda: _const(np.full(shape, value)),
                lambda: np.full(shape, value), shape)


_STEP_MAKERS = {"unary": _unary, "binary": _binary, "reduce": _reduce, "shape": _shape_op, "index": _index,
                "matmul": _matmul, "conv": _conv, "sort": _sort, "scatter": _scatter, "dynamic": _dynamic,
                "constant": _constant, "loop": _loop, "cond": _cond}

