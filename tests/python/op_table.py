"""The per-op test table: one row per op and edge case, each with a NumPy reference.

The same rows drive the forward tests (float32 where the row is float) and the VJP tests
(float64, central finite differences).
"""

from __future__ import annotations

import itertools

import numpy as np
from harness import Row, rng_for

from tenzr.dialect import TensorSpec, spec_of
from tenzr.dialect import ops as T
from tenzr.dialect.opdef import dense_constant
from tenzr.dialect.types import numpy_dtype

f32, f64, i32, i64 = np.float32, np.float64, np.int32, np.int64


def randn(name: str, *shape: int, dtype=f32) -> np.ndarray:
    return rng_for(name + str(shape)).standard_normal(shape).astype(dtype)


def positive(name: str, *shape: int) -> np.ndarray:
    return (rng_for(name + str(shape)).uniform(0.5, 2.0, shape)).astype(f32)


def like(v, shape) -> TensorSpec:
    """A result type of `shape` with the element type of value `v`."""
    return spec_of(v).with_shape(shape)


def _numpy_power(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.power(x, y)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


# --------------------------------------------------------------------------- NumPy references


def conv_ref(x, w, strides, low, high, lhs_dil, rhs_dil, groups):
    """A direct N-d convolution: dilate, pad (negative crops), slide the window."""
    n = x.ndim - 2
    shape = [*x.shape[:2], *((d - 1) * s + 1 for d, s in zip(x.shape[2:], lhs_dil, strict=True))]
    xd = np.zeros(shape, x.dtype)
    xd[(slice(None), slice(None), *(slice(None, None, s) for s in lhs_dil))] = x
    for d in range(n):
        lo, hi = low[d], high[d]
        pads = [(0, 0)] * xd.ndim
        pads[2 + d] = (max(lo, 0), max(hi, 0))
        xd = np.pad(xd, pads)
        end = xd.shape[2 + d] - max(-hi, 0)
        xd = np.take(xd, range(max(-lo, 0), end), axis=2 + d)
    kshape = [*w.shape[:2], *((k - 1) * r + 1 for k, r in zip(w.shape[2:], rhs_dil, strict=True))]
    wd = np.zeros(kshape, w.dtype)
    wd[(slice(None), slice(None), *(slice(None, None, r) for r in rhs_dil))] = w
    out_sp = [(xd.shape[2 + d] - wd.shape[2 + d]) // strides[d] + 1 for d in range(n)]
    O, C = w.shape[0], x.shape[1]
    og, cg = O // groups, C // groups
    out = np.zeros([x.shape[0], O, *out_sp], np.float64)
    for pos in itertools.product(*(range(s) for s in out_sp)):
        window = xd[(slice(None), slice(None),
                     *(slice(p * s, p * s + k) for p, s, k in zip(pos, strides, wd.shape[2:], strict=True)))]
        for g in range(groups):
            patch = window[:, g * cg:(g + 1) * cg].reshape(x.shape[0], -1).astype(np.float64)
            kern = wd[g * og:(g + 1) * og].reshape(og, -1).astype(np.float64)
            out[(slice(None), slice(g * og, (g + 1) * og), *pos)] = patch @ kern.T
    return out.astype(x.dtype)


def scatter_ref(x, idx, upd, axis, mode):
    out = np.moveaxis(x.copy(), axis, 0)
    u = np.moveaxis(upd, axis, 0)
    size = out.shape[0]
    for k, i in enumerate(idx):
        i = i + size if i < 0 else i
        if not 0 <= i < size:
            continue
        if mode == "set":
            out[i] = u[k]
        elif mode == "add":
            out[i] = out[i] + u[k]
        elif mode == "multiply":
            out[i] = out[i] * u[k]
        elif mode == "min":
            out[i] = np.minimum(out[i], u[k])
        else:
            out[i] = np.maximum(out[i], u[k])
    return np.moveaxis(out, 0, axis)


def dynamic_slice_ref(x, *starts, sizes):
    idx = tuple(slice(int(np.clip(s, 0, d - n)), int(np.clip(s, 0, d - n)) + n)
                for s, d, n in zip(starts, x.shape, sizes, strict=True))
    return x[idx]


def dynamic_update_slice_ref(x, u, *starts):
    out = x.copy()
    idx = tuple(slice(int(np.clip(s, 0, d - n)), int(np.clip(s, 0, d - n)) + n)
                for s, d, n in zip(starts, x.shape, u.shape, strict=True))
    out[idx] = u
    return out


def pad_ref(x, v, low, high, interior):
    shape = [(d - 1) * (i + 1) + 1 if d else 0 for d, i in zip(x.shape, interior, strict=True)]
    inner = np.full(shape, v, x.dtype)
    inner[tuple(slice(None, None, i + 1) for i in interior)] = x
    for d, (lo, hi) in enumerate(zip(low, high, strict=True)):
        pads = [(0, 0)] * x.ndim
        pads[d] = (max(lo, 0), max(hi, 0))
        inner = np.pad(inner, pads, constant_values=v)
        inner = np.take(inner, range(max(-lo, 0), inner.shape[d] - max(-hi, 0)), axis=d)
    return inner


# --------------------------------------------------------------------------- rows


def binary_rows() -> list[Row]:
    rows = []
    cases = [("same", (2, 3), (2, 3)), ("bcast", (2, 3), (3,)), ("outer", (2, 1), (1, 3)), ("scalar", (), (2, 3))]
    binaries = [
        ("add", T.add, np.add), ("sub", T.sub, np.subtract), ("mul", T.mul, np.multiply),
        ("div", T.div, np.divide), ("maximum", T.maximum, np.maximum), ("minimum", T.minimum, np.minimum),
        ("atan2", T.atan2, np.arctan2), ("rem", T.rem, np.fmod),
    ]
    for (op, build, ref), (case, sa, sb) in itertools.product(binaries, cases):
        name = f"{op}_{case}"
        b = positive(name + "b", *sb) if op == "div" else randn(name + "b", *sb)
        rows.append(Row(name, lambda a, build=build: build(*a), [randn(name + "a", *sa), b], ref))
    for case, sa, sb in cases:
        name = f"pow_{case}"
        rows.append(Row(name, lambda a: T.pow_(*a), [positive(name, *sa), randn(name + "b", *sb)], np.power))
    # IREE's own power gives NaN for every negative base and for 0^0; the lowering must not.
    rows.append(Row("pow_negative_and_zero_base", lambda a: T.pow_(*a),
                    [np.array([-2, -2, -2, 0, 0, 0, 2, -0.5], f32), np.array([2, 3, 0.5, 0, 2, -1, 0.5, -3], f32)],
                    _numpy_power, grad=False))
    rows.append(Row("pow_grad_negative_and_zero_base", lambda a: T.pow_(*a),
                    [np.array([-2.0, -1.5, -0.5, 0.0, 0.0, 3.0], f32), np.array([2, 3, -1, 2, 0, 2], f32)],
                    _numpy_power, wrt=(0,)))
    rows.append(Row("nextafter", lambda a: T.nextafter(*a), [np.array([1.0, 0.0, -2.0, 3.0], f32),
                                                             np.array([2.0, -1.0, -2.0, np.inf], f32)],
                    np.nextafter, grad=False))
    rows.append(Row("add_f64", lambda a: T.add(*a), [randn("a64", 3, dtype=f64), randn("b64", 3, dtype=f64)], np.add))
    rows.append(Row("add_i32", lambda a: T.add(*a), [np.array([1, -2, 3], i32), np.array([4, 5, -6], i32)], np.add))
    rows.append(Row("div_i64_truncates", lambda a: T.div(*a), [np.array([7, -7, 9], i64), np.array([2, 2, -4], i64)],
                    lambda x, y: (np.trunc(x / y)).astype(i64)))
    for direction, ref in [("gt", np.greater), ("ge", np.greater_equal), ("lt", np.less), ("le", np.less_equal),
                           ("eq", np.equal), ("ne", np.not_equal)]:
        x, y = np.array([1, 2, 3, 2], f32), np.array([2, 2, 1, 5], f32)
        rows.append(Row(f"compare_{direction}", lambda a, d=direction: T.compare(*a, direction=d), [x, y], ref,
                        grad=False))
    rows.append(Row("compare_bcast_i32", lambda a: T.compare(*a, direction="ge"),
                    [np.array([[1], [3]], i32), np.array([0, 2, 4], i32)], np.greater_equal, grad=False))
    ints = np.array([5, -6, 7, 2 ** 31 - 1, -1], i32), np.array([3, 1, 2, 4, 31], i32)
    unsigned = lambda f: lambda x, y: f(x.view(np.uint32), y.view(np.uint32)).view(i32)  # noqa: E731
    for name, build, ref, args in [
        ("bitwise_and", T.bitwise_and, np.bitwise_and, ints), ("bitwise_or", T.bitwise_or, np.bitwise_or, ints),
        ("bitwise_xor", T.bitwise_xor, np.bitwise_xor, ints),
        ("bitwise_and_bool", T.bitwise_and, np.logical_and, (np.array([True, True, False]), np.array([True, False,
                                                                                                     False]))),
        ("bitwise_or_i64_bcast", T.bitwise_or, np.bitwise_or, (np.array([[1], [6]], i64), np.array([8, 3], i64))),
        ("shift_left", T.shift_left, unsigned(np.left_shift), ints),
        ("shift_right_logical", T.shift_right_logical, unsigned(np.right_shift), ints),
        ("shift_right_arithmetic", T.shift_right_arithmetic, np.right_shift, ints),
    ]:
        rows.append(Row(name, lambda a, build=build: build(*a), list(args), ref, grad=False))
    cond = np.array([[True, False, True], [False, False, True]])
    rows.append(Row("select", lambda a: T.select(*a), [cond, randn("s1", 2, 3), randn("s2", 2, 3)], np.where))
    rows.append(Row("select_bcast", lambda a: T.select(*a), [np.array([True, False, True]), randn("sb1", 2, 1),
                                                             randn("sb2", 3)], np.where))
    return rows


def _special(name):
    """scipy.special's function (SciPy comes with the test extra's JAX)."""
    import scipy.special

    return getattr(scipy.special, name)


def unary_rows() -> list[Row]:
    def row(name, build, x, ref, grad=True):
        return Row(name, lambda a: build(a[0]), [x], ref, grad=grad)

    x = randn("unary", 2, 3)
    p = positive("unary", 2, 3)
    half = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.2, -0.7], f32)
    return [
        row("neg", T.neg, x, np.negative), row("exp", T.exp, x, np.exp), row("log", T.log, p, np.log),
        row("sqrt", T.sqrt, p, np.sqrt), row("rsqrt", T.rsqrt, p, lambda v: 1 / np.sqrt(v)),
        row("tanh", T.tanh, x, np.tanh), row("sigmoid", T.sigmoid, x, _sigmoid),
        row("relu", T.relu, x, lambda v: np.maximum(v, 0)), row("sin", T.sin, x, np.sin),
        row("cos", T.cos, x, np.cos), row("abs", T.abs_, x, np.abs), row("log1p", T.log1p, p - 0.4, np.log1p),
        row("expm1", T.expm1, x, np.expm1), row("sign", T.sign, x, np.sign, grad=False),
        row("floor", T.floor, x * 3, np.floor, grad=False), row("ceil", T.ceil, x * 3, np.ceil, grad=False),
        row("tan", T.tan, x * 0.5, np.tan), row("atan", T.atan, x, np.arctan),
        row("asin", T.asin, x * 0.3, np.arcsin), row("acos", T.acos, x * 0.3, np.arccos),
        row("sinh", T.sinh, x, np.sinh), row("cosh", T.cosh, x, np.cosh), row("asinh", T.asinh, x, np.arcsinh),
        row("acosh", T.acosh, p + 1.0, np.arccosh), row("atanh", T.atanh, x * 0.3, np.arctanh),
        row("erf", T.erf, x, _special("erf")), row("erf_inv", T.erf_inv, x * 0.3, _special("erfinv")),
        row("lgamma", T.lgamma, p + 0.5, _special("gammaln")), row("digamma", T.digamma, p + 0.5, _special("digamma")),
        row("round_half_even", T.round_, half, np.round, grad=False),
        row("stop_gradient", T.stop_gradient, x, lambda v: v, grad=False),
        row("abs_i32", T.abs_, np.array([-3, 0, 4], i32), np.abs, grad=False),
        row("bitwise_not", T.bitwise_not, np.array([0, -1, 7], i32), np.invert, grad=False),
        row("bitwise_not_bool", T.bitwise_not, np.array([True, False]), np.logical_not, grad=False),
        row("population_count", T.population_count, np.array([0, -1, 7, 2 ** 31 - 1], i32),
            lambda v: np.bitwise_count(v.view(np.uint32)).astype(i32), grad=False),
        row("clz_i64", T.clz, np.array([0, -1, 7, 2 ** 40], i64),
            lambda v: np.array([64 - int(u).bit_length() for u in v.view(np.uint64)], i64), grad=False),
        Row("reduce_precision_e5m2", lambda a: T.reduce_precision(a[0], exponent_bits=5, mantissa_bits=2),
            [np.array([1.1, 3.5, 1e-7, 7e4, -2.6, 1.125], f32)], _float8_e5m2, grad=False),
        Row("bitcast_convert_i32_f32", lambda a: T.bitcast_convert(a[0], result=TensorSpec((3,), "f32")),
            [np.array([1065353216, -1073741824, 0], i32)], lambda v: v.view(f32), grad=False),
        Row("bitcast_convert_f64_i64", lambda a: T.bitcast_convert(a[0], result=TensorSpec((2,), "i64")),
            [np.array([1.5, -0.25])], lambda v: v.view(i64), grad=False),
        row("neg_rank0", T.neg, np.array(1.5, f32), np.negative),
        row("exp_f16", T.exp, x.astype(np.float16), np.exp, grad=False),
    ]


def _float8_e5m2(v: np.ndarray) -> np.ndarray:
    """v rounded through float8_e5m2 (5 exponent bits, 2 mantissa bits), as JAX rounds."""
    import ml_dtypes

    return v.astype(ml_dtypes.float8_e5m2).astype(v.dtype)


def convert_rows() -> list[Row]:
    rows = []
    values = np.array([-2.7, -0.5, 0.0, 0.25, 1.0, 3.9], f32)
    pairs = [
        (f32, f64), (f64, f32), (f32, np.float16), (np.float16, f32), (f32, i32), (f32, i64), (i32, f32),
        (i64, f64), (i32, i64), (i64, i32), (f32, np.bool_), (np.bool_, f32), (np.bool_, i32), (i32, np.bool_),
        (f64, np.float16),
    ]
    for src, dst in pairs:
        x = values.astype(src)
        name = f"convert_{np.dtype(src).name}_{np.dtype(dst).name}"
        spec = TensorSpec(x.shape, {f32: "f32", f64: "f64", np.float16: "f16", i32: "i32", i64: "i64",
                                    np.bool_: "i1"}[dst])
        # Finite differences need float64 on both sides; the mixed-precision cotangent is
        # checked exactly in test_grad.py.
        grad = src is f32 and dst is f64
        rows.append(Row(name, lambda a, s=spec: T.convert(a[0], result=s), [x],
                        lambda v, d=dst: v.astype(d), grad=grad))
    # bfloat16 has no NumPy type: check a round trip that rounds to 8 mantissa bits.
    x = np.array([1.0, 1.00390625, 3.14159, -2.5], f32)

    def bf16_round_trip(a):
        mid = T.convert(a[0], result=TensorSpec((4,), "bf16"))
        return T.convert(mid, result=TensorSpec((4,), "f32"))

    def bf16_ref(v):
        bits = v.view(np.uint32)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return rounded.astype(np.uint32).view(f32)

    rows.append(Row("convert_bf16_round_trip", bf16_round_trip, [x], bf16_ref, grad=False))
    return rows


def matmul_rows() -> list[Row]:
    cases = [("2d", (3, 4), (4, 5)), ("batched", (2, 3, 4), (2, 4, 5)), ("rhs_2d", (2, 3, 4), (4, 5)),
             ("lhs_2d", (3, 4), (2, 4, 5)), ("bcast_batch", (2, 1, 3, 4), (5, 4, 2))]
    return [Row(f"matmul_{case}", lambda a: T.matmul(*a), [randn("mm" + case, *sa), randn("mmb" + case, *sb)],
                np.matmul) for case, sa, sb in cases]


def conv_rows() -> list[Row]:
    cases = [
        ("1d", (2, 3, 7), (4, 3, 3), dict()),
        ("2d_stride_asym_pad", (2, 3, 6, 5), (4, 3, 3, 2),
         dict(window_strides=[2, 1], padding_low=[1, 0], padding_high=[2, 1])),
        ("2d_rhs_dilation", (1, 2, 7, 7), (3, 2, 2, 3), dict(rhs_dilation=[2, 2], padding_low=[1, 1],
                                                            padding_high=[1, 1])),
        ("2d_lhs_dilation", (1, 2, 4, 4), (3, 2, 3, 3), dict(lhs_dilation=[2, 2], padding_low=[2, 2],
                                                            padding_high=[2, 2])),
        ("2d_groups", (2, 4, 5, 5), (6, 2, 3, 3), dict(feature_group_count=2, padding_low=[1, 1],
                                                      padding_high=[1, 1])),
        ("2d_depthwise_stride", (1, 3, 6, 6), (3, 1, 3, 3), dict(feature_group_count=3, window_strides=[2, 2])),
        ("3d", (1, 2, 4, 4, 3), (2, 2, 2, 2, 2), dict(window_strides=[1, 2, 1], padding_low=[0, 1, 1],
                                                      padding_high=[1, 0, 0])),
        # strided, ungrouped: the input cotangent is a matmul plus col2im by stride phase
        ("2d_stride2_pad1_odd", (2, 3, 7, 7), (4, 3, 3, 3), dict(window_strides=[2, 2], padding_low=[1, 1],
                                                                padding_high=[1, 1])),
        ("1d_stride3_dilated_cropped", (2, 2, 11), (3, 2, 3), dict(window_strides=[3], padding_low=[-1],
                                                                   padding_high=[2], rhs_dilation=[2])),
        ("2d_stride_beyond_kernel", (1, 2, 6, 5), (3, 2, 1, 2), dict(window_strides=[3, 2])),
        ("2d_everything", (2, 4, 5, 6), (4, 2, 2, 3),
         dict(window_strides=[2, 3], padding_low=[2, 1], padding_high=[0, 2], lhs_dilation=[1, 2],
              rhs_dilation=[2, 1], feature_group_count=2)),
    ]
    rows = []
    for case, sx, sw, attrs in cases:
        n = len(sx) - 2
        full = dict(window_strides=[1] * n, padding_low=[0] * n, padding_high=[0] * n, lhs_dilation=[1] * n,
                    rhs_dilation=[1] * n, feature_group_count=1) | attrs

        def ref(x, w, f=full):
            return conv_ref(x, w, f["window_strides"], f["padding_low"], f["padding_high"], f["lhs_dilation"],
                            f["rhs_dilation"], f["feature_group_count"])

        rows.append(Row(f"conv_{case}", lambda a, at=attrs: T.convolution(*a, **at),
                        [randn("cx" + case, *sx), randn("cw" + case, *sw)], ref))
    return rows


def shape_rows() -> list[Row]:
    x = randn("shape", 2, 3, 4)
    rows = [
        Row("reshape", lambda a: T.reshape(a[0], result=like(a[0], (6, 4))), [x], lambda v: v.reshape(6, 4)),
        Row("reshape_rank0", lambda a: T.reshape(a[0], result=like(a[0], ())), [randn("r0", 1, 1)],
            lambda v: v.reshape(())),
        Row("transpose", lambda a: T.transpose(a[0], permutation=[2, 0, 1]), [x], lambda v: v.transpose(2, 0, 1)),
        Row("broadcast_to", lambda a: T.broadcast_to(a[0], result=like(a[0], (2, 4, 3))), [randn("bt", 4, 1)],
            lambda v: np.broadcast_to(v, (2, 4, 3))),
        Row("broadcast_to_rank0", lambda a: T.broadcast_to(a[0], result=like(a[0], (3, 2))),
            [np.array(2.5, f32)], lambda v: np.broadcast_to(v, (3, 2))),
        Row("pad", lambda a: T.pad(*a, low=[1, 0], high=[0, 2], interior=[1, 2]),
            [randn("pad", 3, 2), np.array(0.5, f32)], lambda v, p: pad_ref(v, p, [1, 0], [0, 2], [1, 2])),
        Row("pad_negative", lambda a: T.pad(*a, low=[-1, 2], high=[1, -2], interior=[0, 1]),
            [randn("padn", 4, 3), np.array(-1.0, f32)], lambda v, p: pad_ref(v, p, [-1, 2], [1, -2], [0, 1])),
        Row("slice", lambda a: T.slice_(a[0], start=[0, 1, 0], stop=[2, 3, 4], step=[1, 1, 2]), [x],
            lambda v: v[0:2, 1:3, 0:4:2]),
        Row("slice_stepped", lambda a: T.slice_(a[0], start=[1, 0], stop=[7, 5], step=[3, 2]), [randn("sl", 8, 5)],
            lambda v: v[1:7:3, 0:5:2]),
        Row("reverse", lambda a: T.reverse(a[0], dimensions=[0, 2]), [x], lambda v: v[::-1, :, ::-1]),
        # IREE 3.13 cannot compile a strided slice feeding a reverse; the emitter reorders them.
        Row("strided_slice_then_reverse",
            lambda a: T.reverse(T.slice_(a[0], start=[0, 1], stop=[3, 4], step=[2, 2]), dimensions=[0, 1]),
            [randn("ssr", 3, 4)], lambda v: v[0:3:2, 1:4:2][::-1, ::-1]),
        Row("concatenate", lambda a: T.concatenate(*a, axis=1),
            [randn("c1", 2, 1), randn("c2", 2, 3), randn("c3", 2, 2)], lambda *v: np.concatenate(v, axis=1)),
        Row("concatenate_neg_axis", lambda a: T.concatenate(*a, axis=-2), [randn("c4", 1, 2), randn("c5", 3, 2)],
            lambda *v: np.concatenate(v, axis=0)),
        Row("iota", lambda a: T.add(a[0], T.iota(result=like(a[0], (2, 3)), dimension=1)),
            [randn("iota", 2, 3)], lambda v: v + np.arange(3, dtype=f32)),
        Row("constant", lambda a: T.mul(a[0], _constant(spec_of(a[0]).dtype)), [randn("const", 2, 2)],
            lambda v: v * np.array([[1, 2], [3, 4]], f32)),
    ]
    return rows


def _constant(dtype: str):
    spec = TensorSpec((2, 2), dtype)
    return T.constant(value=dense_constant(np.array([[1, 2], [3, 4]], numpy_dtype(dtype)), spec))


def indexing_rows() -> list[Row]:
    x = randn("idx", 4, 3)
    dup = np.array([2, 0, 2, -1], i64)
    rows = [
        Row("gather_axis0_dup_neg", lambda a: T.gather(*a, axis=0), [x, dup], lambda v, i: np.take(v, i, axis=0)),
        Row("gather_axis1_i32", lambda a: T.gather(*a, axis=1), [x, np.array([1, 1, 0], i32)],
            lambda v, i: np.take(v, i, axis=1)),
        Row("gather_out_of_range_clamps", lambda a: T.gather(*a, axis=0), [x, np.array([7, -9], i64)],
            lambda v, i: v[[3, 0]], grad=False),
        Row("take_along_axis0", lambda a: T.take_along_axis(*a, axis=0), [x, np.array([[3, 0, 1], [0, 0, 2]], i64)],
            lambda v, i: np.take_along_axis(v, i, axis=0)),
        Row("take_along_axis1", lambda a: T.take_along_axis(*a, axis=1), [x, np.array([[2, 2], [0, 1], [1, 1],
                                                                                       [0, -1]], i32)],
            lambda v, i: np.take_along_axis(v, np.where(i < 0, i + 3, i), axis=1)),
    ]
    for mode, axis in itertools.product(("set", "add", "multiply", "min", "max"), (0, 1)):
        sx = (4, 3)
        k = 4
        idx = np.array([2, 0, 2, -1], i64) if axis == 0 else np.array([1, 1, -3, 2], i64)
        su = (k, 3) if axis == 0 else (4, k)
        name = f"scatter_{mode}_axis{axis}"
        updates = randn(name + "u", *su)
        if mode == "multiply":
            updates[0, 0] = 0.0  # exact zero: the VJP must not divide by it
        rows.append(Row(name, lambda a, m=mode, ax=axis: T.scatter(*a, axis=ax, mode=m),
                        [randn(name, *sx), idx, updates], lambda v, i, u, m=mode, ax=axis: scatter_ref(v, i, u, ax, m)))
    rows.append(Row("scatter_add_out_of_range_dropped", lambda a: T.scatter(*a, axis=0, mode="add"),
                    [randn("sod", 3, 2), np.array([5, 1, -7], i32), randn("sodu", 3, 2)],
                    lambda v, i, u: scatter_ref(v, i, u, 0, "add")))
    rows += [
        Row("dynamic_slice_clamped", lambda a: T.dynamic_slice(*a, sizes=[2, 2]),
            [x, np.array(3, i64), np.array(-1, i64)], lambda v, s0, s1: dynamic_slice_ref(v, s0, s1, sizes=(2, 2))),
        Row("dynamic_slice_mixed_int", lambda a: T.dynamic_slice(*a, sizes=[3, 1]),
            [x, np.array(1, i32), np.array(2, i64)], lambda v, s0, s1: dynamic_slice_ref(v, s0, s1, sizes=(3, 1))),
        Row("dynamic_update_slice_clamped", lambda a: T.dynamic_update_slice(*a),
            [x, randn("dus", 2, 2), np.array(5, i32), np.array(1, i32)], dynamic_update_slice_ref),
    ]
    return rows


def reduction_rows() -> list[Row]:
    x = randn("red", 2, 3, 4)
    rows = []
    for name, build, ref in [("sum", T.reduce_sum, np.sum), ("prod", T.reduce_prod, np.prod),
                             ("max", T.reduce_max, np.max), ("min", T.reduce_min, np.min)]:
        rows += [
            Row(f"reduce_{name}_axis1", lambda a, b=build: b(a[0], axes=[1]), [x], lambda v, r=ref: r(v, axis=1)),
            Row(f"reduce_{name}_keepdims", lambda a, b=build: b(a[0], axes=[0, 2], keepdims=True), [x],
                lambda v, r=ref: r(v, axis=(0, 2), keepdims=True)),
            Row(f"reduce_{name}_all", lambda a, b=build: b(a[0]), [x], lambda v, r=ref: np.asarray(r(v))),
        ]
    zeros1 = randn("prod0", 3, 4)
    zeros1[1, 2] = 0.0
    zeros1[2, 0] = zeros1[2, 3] = 0.0
    rows.append(Row("reduce_prod_with_zeros", lambda a: T.reduce_prod(a[0], axes=[1]), [zeros1],
                    lambda v: np.prod(v, axis=1)))
    rows.append(Row("reduce_sum_i32", lambda a: T.reduce_sum(a[0], axes=[0]), [np.arange(6, dtype=i32).reshape(2, 3)],
                    lambda v: v.sum(axis=0, dtype=i32), grad=False))
    ties = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], f32)
    for name, build, ref in [("argmax", T.argmax, np.argmax), ("argmin", T.argmin, np.argmin)]:
        rows += [
            Row(f"{name}_axis1", lambda a, b=build: b(a[0], axis=1), [x], lambda v, r=ref: r(v, axis=1), grad=False),
            Row(f"{name}_ties_first", lambda a, b=build: b(a[0], axis=1), [ties], lambda v, r=ref: r(v, axis=1),
                grad=False),
            Row(f"{name}_nan_first", lambda a, b=build: b(a[0], axis=0),
                [np.array([1.0, np.nan, 5.0, np.nan], f32)], lambda v, r=ref: np.asarray(r(v, axis=0)), grad=False),
        ]
    s = randn("sort", 3, 5)
    rows += [
        Row("sort_last", lambda a: T.sort(a[0]), [s], np.sort),
        Row("sort_axis0_desc", lambda a: T.sort(a[0], axis=0, descending=True), [s], lambda v: -np.sort(-v, axis=0)),
        Row("argsort_last", lambda a: T.argsort(a[0]), [s], lambda v: np.argsort(v, kind="stable"), grad=False),
        Row("argsort_desc_stable", lambda a: T.argsort(a[0], descending=True),
            [np.array([2.0, 1.0, 2.0, 3.0, 1.0], f32)],
            lambda v: np.argsort(-v, kind="stable"), grad=False),
        Row("sort_nan_last", lambda a: T.sort(a[0]), [np.array([3.0, np.nan, -1.0, np.inf], f32)], np.sort,
            grad=False),
    ]
    return rows


ROWS = binary_rows() + unary_rows() + convert_rows() + matmul_rows() + conv_rows() + shape_rows() + \
    indexing_rows() + reduction_rows()
GRAD_ROWS = [r for r in ROWS if r.grad and any(np.issubdtype(a.dtype, np.floating) for a in r.inputs)]


# --------------------------------------------------------------------------- StableHLO twins


def _sh_index(value: int):
    from tenzr.passes import stablehlo as sh

    return sh.constant(value, TensorSpec((), "i32"))


def _sh_indices(values):
    from tenzr.passes import stablehlo as sh

    values = np.array(values, np.int32)
    return sh.constant(values, TensorSpec(values.shape, "i32"))


def _max_with_index(x):
    """Each row's maximum beside its index, reduced together as JAX's argmax is."""
    from tenzr.passes import stablehlo as sh

    s = sh.spec(x)
    ids = TensorSpec(s.shape, "i32")

    def pick(args):
        best, best_i, value, value_i = args
        first = sh.or_(sh.compare(best, value, "GT"), sh.and_(sh.compare(best, value, "EQ"),
                                                              sh.compare(best_i, value_i, "LT")))
        return [sh.select(first, best, value), sh.select(first, best_i, value_i)]

    inits = [sh.constant(-np.inf, TensorSpec((), s.dtype)), sh.constant(0, TensorSpec((), "i32"))]
    return sh.reduce_region([x, sh.iota(ids, 1)], inits, [1], pick)[0]


def _window(dims, strides=None, padding=None, base=None, dilation=None):
    from tenzr.passes import stablehlo as sh

    ones = (1,) * len(dims)
    return sh.Window(tuple(dims), tuple(strides or ones), tuple(padding or ((0, 0),) * len(dims)), tuple(base or ones),
                     tuple(dilation or ones))


def _unary_builder(fn):
    return lambda a: fn(a[0])


def _values_plus_indices(values, indices):
    """One result from top_k's two."""
    from tenzr.passes import stablehlo as sh

    return sh.add(values, sh.convert(indices, sh.spec(values).dtype))


def stablehlo_rows() -> list[Row]:
    """StableHLO ops as tenzr-grad meets them in its own output (grad of grad) and in
    imported modules: each built directly with the emitter, differentiated by its rule."""
    from tenzr.passes import stablehlo as sh

    unary = {"negate": sh.negate, "exponential": sh.exponential, "tanh": sh.tanh, "logistic": sh.logistic,
             "sine": sh.sine, "cosine": sh.cosine, "abs": sh.abs_, "exponential_minus_one": sh.exponential_minus_one}
    positive_unary = {"log": sh.log, "sqrt": sh.sqrt, "rsqrt": sh.rsqrt, "log_plus_one": sh.log_plus_one}
    binary = {"add": sh.add, "subtract": sh.subtract, "multiply": sh.multiply, "divide": sh.divide,
              "maximum": sh.maximum, "minimum": sh.minimum}
    rows = [Row(f"sh.{n}", lambda a, fn=fn: fn(a[0]), [randn(n, 2, 3)]) for n, fn in unary.items()]
    rows += [Row(f"sh.{n}", lambda a, fn=fn: fn(a[0]), [positive(n, 2, 3)]) for n, fn in positive_unary.items()]
    rows += [Row(f"sh.{n}", lambda a, fn=fn: fn(a[0], a[1]), [randn(n, 3, 2), randn(n + "y", 3, 2)])
             for n, fn in binary.items()]
    rows += [
        Row("sh.power", lambda a: sh.power(a[0], a[1]), [positive("pow", 2, 3), randn("powy", 2, 3)]),
        Row("sh.select", lambda a: sh.select(sh.compare(a[0], a[1], "GT"), a[0], a[1]),
            [randn("sel", 4), randn("sely", 4)]),
        Row("sh.clamp_scalars", lambda a: sh.clamp(a[1], a[0], a[2]),
            [randn("clamp", 6), np.array(-0.3, f32), np.array(0.4, f32)]),
        Row("sh.clamp_full", lambda a: sh.clamp(a[1], a[0], a[2]),
            [randn("clampf", 2, 3), randn("clampl", 2, 3) - 1, randn("clamph", 2, 3) + 1]),
        Row("sh.broadcast_in_dim", lambda a: sh.broadcast_in_dim(a[0], (4, 3, 2), [1, 2]), [randn("bid", 3, 1)]),
        Row("sh.broadcast_in_dim_transposing", lambda a: sh.broadcast_in_dim(a[0], (2, 5, 3), [2, 0]),
            [randn("bidt", 3, 2)]),
        Row("sh.reshape", lambda a: sh.reshape(a[0], (3, 2)), [randn("rs", 2, 3)]),
        Row("sh.transpose", lambda a: sh.transpose(a[0], (2, 0, 1)), [randn("tr", 2, 3, 4)]),
        Row("sh.slice", lambda a: sh.slice_(a[0], [1, 0], [5, 3], [2, 2]), [randn("sl", 6, 3)]),
        Row("sh.pad", lambda a: sh.pad(a[0], a[1], [1, -1], [0, 2], [1, 0]), [randn("pd", 3, 4), np.array(0.5, f32)]),
        Row("sh.reverse", lambda a: sh.reverse(a[0], [0, 1]), [randn("rv", 2, 3)]),
        Row("sh.concatenate", lambda a: sh.concatenate([a[0], a[1], a[0]], 1), [randn("cc", 2, 1), randn("cd", 2, 3)]),
        Row("sh.dot_general_matmul", lambda a: sh.dot_general(a[0], a[1], ((), ()), ((1,), (0,))),
            [randn("dg", 3, 4), randn("dh", 4, 2)]),
        Row("sh.dot_general_batched_odd_dims", lambda a: sh.dot_general(a[0], a[1], ((0,), (1,)), ((2,), (0,))),
            [randn("dj", 2, 3, 4), randn("dk", 4, 2, 5)]),
        Row("sh.dot_general_two_contracting", lambda a: sh.dot_general(a[0], a[1], ((), ()), ((0, 2), (2, 1))),
            [randn("dl", 3, 2, 4), randn("dm", 5, 4, 3)]),
        Row("sh.reduce_sum", lambda a: sh.reduce(a[0], 0, [0, 2], "add"), [randn("rd", 3, 2, 4)]),
        Row("sh.dynamic_slice", lambda a: sh.dynamic_slice(a[0], [_sh_index(1), _sh_index(2)], (2, 2)),
            [randn("ds", 4, 4)]),
        Row("sh.dynamic_update_slice", lambda a: sh.dynamic_update_slice(a[0], a[1], [_sh_index(0), _sh_index(1)]),
            [randn("dus", 3, 4), randn("dut", 2, 2)]),
        Row("sh.dynamic_slice_traced_starts", lambda a: sh.dynamic_slice(a[0], [a[1], a[2]], (2, 3)),
            [randn("dst", 4, 4), np.array(1, i32), np.array(3, i32)]),
        Row("sh.dynamic_update_slice_traced_starts", lambda a: sh.dynamic_update_slice(a[0], a[1], [a[2], a[3]]),
            [randn("dust", 3, 4), randn("duu", 2, 2), np.array(2, i32), np.array(0, i32)]),
        Row("sh.optimization_barrier", lambda a: sh.multiply(*sh.optimization_barrier(a[0], a[1])),
            [randn("ob", 3), randn("oc", 3)]),
        Row("sh.convolution_nhwc_hwio", lambda a: sh.convolution(
            a[0], a[1], sh.ConvLayout(0, 3, (1, 2), 2, 3, (0, 1), 0, 3, (1, 2)), strides=[2, 1], padding_low=[1, 0],
            padding_high=[0, 1], lhs_dilation=[1, 1], rhs_dilation=[1, 2]),
            [randn("cvx", 2, 5, 6, 3), randn("cvw", 3, 2, 3, 4)]),
        Row("sh.convolution_grouped_lhs_dilated", lambda a: sh.convolution(
            a[0], a[1], sh.ConvLayout.channels_first(1), strides=[1], padding_low=[1], padding_high=[2],
            lhs_dilation=[2], rhs_dilation=[1], feature_group_count=2), [randn("cgx", 1, 4, 5), randn("cgw", 6, 2, 3)]),
        # batch groups, as in JAX's gradient of a grouped convolution: the input's batch and the
        # kernel's outputs in two groups
        Row("sh.convolution_batch_groups", lambda a: sh.convolution(
            a[0], a[1], sh.ConvLayout(1, 0, (2,), 0, 1, (2,), 1, 0, (2,)), strides=[1], padding_low=[1],
            padding_high=[0], lhs_dilation=[1], rhs_dilation=[1], batch_group_count=2),
            [randn("cbx", 3, 4, 5), randn("cbw", 3, 4, 2)]),
        # gathers as JAX writes x[idx], x[:, idx] and take_along_axis (batching dims); starts out
        # of range clamp
        Row("sh.gather_rows", lambda a: sh.gather(
            a[0], _sh_indices([[2], [0], [2], [7]]), offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0],
            index_vector_dim=1, slice_sizes=[1, 4]), [randn("gr", 3, 4)]),
        Row("sh.gather_windows", lambda a: sh.gather(
            a[0], _sh_indices([[1, 0], [-1, 2], [0, 3]]), offset_dims=[1, 2], collapsed_slice_dims=[],
            start_index_map=[0, 1], index_vector_dim=1, slice_sizes=[2, 2]), [randn("gw", 3, 4)]),
        Row("sh.gather_batched", lambda a: sh.gather(
            a[0], _sh_indices([[[1], [1], [0]], [[3], [2], [3]]]), offset_dims=[], collapsed_slice_dims=[1],
            operand_batching_dims=[0], start_indices_batching_dims=[0], start_index_map=[1], index_vector_dim=2,
            slice_sizes=[1, 1]), [randn("gb", 2, 4)]),
        Row("sh.gather_traced_indices", lambda a: sh.gather(
            a[0], a[1], offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0], index_vector_dim=1,
            slice_sizes=[1, 4]), [randn("gti", 3, 4), np.array([[2], [0], [2], [1]], i32)]),
        Row("sh.scatter_add_traced_indices", lambda a: sh.scatter(
            a[0], a[1], a[2], update_window_dims=[1], inserted_window_dims=[0], scatter_dims_to_operand_dims=[0],
            index_vector_dim=1, combiner="add"),
            [randn("sti", 3, 2), np.array([[1], [1], [2], [0]], i32), randn("stu", 4, 2)]),
        # scatters as JAX writes x.at[idx].add / .set: duplicates, and a window out of range (dropped)
        Row("sh.scatter_add", lambda a: sh.scatter(
            a[0], _sh_indices([[1], [1], [5], [0]]), a[1], update_window_dims=[1], inserted_window_dims=[0],
            scatter_dims_to_operand_dims=[0], index_vector_dim=1, combiner="add"),
            [randn("sa", 3, 2), randn("sb", 4, 2)]),
        Row("sh.scatter_set", lambda a: sh.scatter(
            a[0], _sh_indices([[2], [0], [2], [9]]), a[1], update_window_dims=[1], inserted_window_dims=[0],
            scatter_dims_to_operand_dims=[0], index_vector_dim=1, combiner="set"),
            [randn("ss", 3, 2), randn("st", 4, 2)]),
        Row("sh.scatter_set_batched", lambda a: sh.scatter(
            a[0], _sh_indices([[[1], [1]], [[0], [2]]]), a[1], update_window_dims=[], inserted_window_dims=[1],
            input_batching_dims=[0], scatter_indices_batching_dims=[0], scatter_dims_to_operand_dims=[1],
            index_vector_dim=2, combiner="set"), [randn("sbt", 2, 3), randn("sbu", 2, 2)]),
        Row("sh.scatter_multiply_zeros", lambda a: sh.scatter(
            a[0], _sh_indices([[1], [1], [2], [1], [7]]), a[1], update_window_dims=[1], inserted_window_dims=[0],
            scatter_dims_to_operand_dims=[0], index_vector_dim=1, combiner="multiply"),
            [randn("smx", 3, 2), randn("smu", 5, 2) * np.array([[1, 0], [0, 0], [1, 1], [1, 1], [1, 1]], f32)]),
        Row("sh.scatter_max_windows", lambda a: sh.scatter(
            a[0], _sh_indices([[0, 1], [1, 0], [0, 1]]), a[1], update_window_dims=[1, 2], inserted_window_dims=[],
            scatter_dims_to_operand_dims=[0, 1], index_vector_dim=1, combiner="max"),
            [randn("sxx", 3, 4), randn("sxu", 3, 2, 3)]),
        Row("sh.scatter_min", lambda a: sh.scatter(
            a[0], _sh_indices([[2], [0], [2]]), a[1], update_window_dims=[], inserted_window_dims=[0],
            scatter_dims_to_operand_dims=[0], index_vector_dim=1, combiner="min"), [randn("snx", 4), randn("snu", 3)]),
        # windows: pooling, cumulative sums and products (with zeros), dilations, an active init
        Row("sh.reduce_window_sum_padded_strided", lambda a: sh.reduce_window(
            a[0], 0, _window((1, 3, 2), (1, 2, 1), ((0, 0), (1, 1), (0, 1))), "add"), [randn("rws", 2, 5, 3)]),
        Row("sh.reduce_window_sum_dilated", lambda a: sh.reduce_window(
            a[0], 0, _window((2, 2), (1, 2), ((1, 0), (0, 2)), base=(2, 1), dilation=(1, 2)), "add"),
            [randn("rwd", 3, 5)]),
        Row("sh.reduce_window_sum_init", lambda a: sh.reduce_window(
            a[0], a[1], _window((3,), padding=((2, 1),)), "add"), [randn("rwi", 4), np.array(0.7, f32)]),
        Row("sh.reduce_window_max_pool", lambda a: sh.reduce_window(
            a[0], -np.inf, _window((1, 2, 2), (1, 2, 1), ((0, 0), (0, 1), (1, 0))), "max"), [randn("rwm", 2, 4, 3)]),
        Row("sh.reduce_window_min_overlapping", lambda a: sh.reduce_window(
            a[0], np.inf, _window((3,), (1,), ((1, 1),)), "min"), [randn("rwn", 6)]),
        Row("sh.reduce_window_max_base_dilated", lambda a: sh.reduce_window(
            a[0], -np.inf, _window((2, 2), (1, 2), ((0, 1), (1, 0)), base=(2, 1)), "max"), [randn("rwb", 3, 4)]),
        Row("sh.select_and_scatter", lambda a: sh.select_and_scatter_add(
            a[0], a[1], a[2], _window((2, 3), (2, 1), ((1, 0), (1, 1))), "GE"),
            [randn("sas", 4, 4), randn("sat", 2, 4), np.array(0.25, f32)]),
        Row("sh.reduce_selecting_with_iota", lambda a: _max_with_index(a[0]), [randn("rsi", 3, 5)]),
        Row("sh.reduce_window_cumprod_zeros", lambda a: sh.reduce_window(
            a[0], 1, _window((1, 4), padding=((0, 0), (3, 0))), "multiply"),
            [randn("rwp", 2, 4) * np.array([[1, 0, 1, 1], [0, 1, 0, 1]], f32)]),
        Row("sh.sort_with_a_payload", lambda a: sh.add(*sh.sort([a[0], a[1]], 0, descending=True)),
            [randn("sos", 4, 3), randn("sop", 4, 3)]),
        Row("chlo.top_k", lambda a: _values_plus_indices(*sh.top_k(a[0], 2)), [randn("tpk", 3, 5)]),
        Row("sh.tan", lambda a: sh.tan(a[0]), [randn("tan", 2, 3) * 0.5]),
        Row("sh.atan2", lambda a: sh.atan2(a[0], a[1]), [randn("at2y", 2, 3), randn("at2x", 2, 3)]),
        Row("sh.remainder", lambda a: sh.remainder(a[0], a[1]), [randn("remx", 2, 3) * 4, randn("remy", 2, 3)]),
        Row("chlo.square", lambda a: sh.square(a[0]), [randn("sqr", 2, 3)]),
        Row("sh.cbrt", lambda a: sh.cbrt(a[0]), [positive("cbrt", 2, 3)]),
    ]
    # CHLO, as JAX exports it: inside each op's domain.
    inside = {"erf_inv": 0.4, "asin": 0.4, "acos": 0.4, "atanh": 0.4}
    above_one = {"acosh", "lgamma", "digamma"}
    for name in ("erf", "erfc", "erf_inv", "lgamma", "digamma", "atan", "asin", "acos", "sinh", "cosh", "asinh",
                 "acosh", "atanh"):
        x = positive(name, 2, 3) + 1.0 if name in above_one else randn(name, 2, 3) * inside.get(name, 1.0)
        rows.append(Row(f"chlo.{name}", _unary_builder(getattr(sh, name)), [x]))
    return rows


STABLEHLO_ROWS = stablehlo_rows()
