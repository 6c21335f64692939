"""How a module is prepared for IREE's CPU code generation: the optimization flags it gets
(chosen by what it contains) and what is added to it for IREE's tiling."""

from __future__ import annotations

import itertools
import platform

import numpy as np
import pytest

import tenzr as tz
from tenzr.compiler import _compile_once, _returns_a_value_twice
from tenzr.dialect.diagnostics import TenzrError
from tenzr.passes import tenzr_tile_heavy_results
from tenzr.runtime import CPU_DRIVER_ENV
from tenzr.targets import AGGRESSIVE_FUSION, LARGE_TILES, SEPARATE_MULTI_USE, TILING, Target


def first_flags(fn, *args) -> tuple[str, ...]:
    return Target().optimization_flags(tz.jit(fn).lower(*args))[0]


def test_data_tiling_only_for_real_matmuls_without_convolutions():
    rng = np.random.default_rng(0)
    big = rng.standard_normal((64, 48)).astype(np.float32), rng.standard_normal((48, 40)).astype(np.float32)
    assert TILING in first_flags(lambda a, b: a @ b, *big)
    # K = 10: the packing costs more than it gains (batched or not)
    small = rng.standard_normal((8, 100, 10)).astype(np.float32), rng.standard_normal((8, 10, 10)).astype(np.float32)
    assert TILING not in first_flags(lambda a, b: a @ b, *small)
    assert TILING not in first_flags(lambda v, m: v @ m, big[0][0], big[1])  # a vector-matrix product
    assert TILING not in first_flags(lambda x: tz.exp(x).sum(), big[0])  # no matmul at all
    # a large-window convolution stays a convolution: no tiling even beside a real matmul
    x, w = rng.standard_normal((2, 3, 8, 8)).astype(np.float32), rng.standard_normal((4, 3, 7, 7)).astype(np.float32)
    step = tz.value_and_grad(lambda x, w, a, b: tz.nn.conv(x, w, stride=2).sum() + (a @ b).sum())
    assert "stablehlo.convolution" in tz.jit(step).lower(x, w, *big)
    assert TILING not in first_flags(step, x, w, *big)


def test_large_results_of_long_transcendental_chains_get_a_row_sum_beside_them(monkeypatch):
    def heavy(xp, x):
        for _ in range(2):
            x = xp.exp(xp.sin(x) * 0.5)  # 4 transcendentals in all
        return x

    def row_sums_added(fn, *args) -> int:
        with_them = tz.jit(fn).lower(*args).count("stablehlo.optimization_barrier")
        with monkeypatch.context() as m:
            m.setattr(tenzr_tile_heavy_results, "MIN_TRANSCENDENTALS", 10**9)
            return with_them - tz.jit(fn).lower(*args).count("stablehlo.optimization_barrier")

    x = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)
    assert row_sums_added(lambda x: heavy(tz, x), x) == 1
    np.testing.assert_allclose(tz.jit(lambda x: heavy(tz, x))(x), heavy(np, x.astype(np.float64)), rtol=1e-5)
    # Left alone: fewer transcendentals, a small result, a rank-1 result, a gradient reduced
    # to its parameter's shape.
    assert row_sums_added(lambda x: tz.exp(tz.sin(x)) * 2, x) == 0
    assert row_sums_added(lambda x: heavy(tz, x), x[:16]) == 0
    assert row_sums_added(lambda x: heavy(tz, x), x.reshape(-1)) == 0
    assert row_sums_added(tz.grad(lambda b, x: heavy(tz, x + b).sum()), x[0], x) == 0
    # The gradient with respect to the whole input is such a chain.
    assert row_sums_added(tz.grad(lambda x: heavy(tz, x).sum()), x) == 1


def test_webs_of_elementwise_ops_become_one_map():
    """A Hessian-vector product reads each forward value several times: one stablehlo.map
    (IREE: one dispatch), equal to the closed form; mixed types and a float64 sine (which
    tenzr-expand-math writes out first) inside a map, equal to NumPy's."""
    def f(xp, x):
        return xp.exp(xp.sin(x) * 0.5).sum()

    def hvp(x, v):
        return tz.jvp(tz.grad(lambda x: f(tz, x)), (x,), (v,))[1]

    rng = np.random.default_rng(0)
    x, v = rng.standard_normal((2, 64, 64)).astype(np.float32)
    assert tz.jit(hvp).lower(x, v).count('"stablehlo.map"') == 1
    s, c = np.sin(x.astype(np.float64)), np.cos(x.astype(np.float64))
    np.testing.assert_allclose(tz.jit(hvp)(x, v), np.exp(0.5 * s) * (0.25 * c * c - 0.5 * s) * v, rtol=2e-5, atol=1e-6)

    def web(xp, x):
        s = xp.sin(x)
        n = (x * 4).astype(xp.int32)
        y = xp.where(s > 0, xp.exp(s) * s, n * n - n) + xp.cos(s)
        return y * s

    x64 = rng.standard_normal(1000) * 3
    for dtype in (np.float32, np.float64):
        tz.config.update("jax_enable_x64", dtype == np.float64)
        try:
            assert tz.jit(lambda x: web(tz, x)).lower(x64.astype(dtype)).count('"stablehlo.map"') == 1
            got = tz.jit(lambda x: web(tz, x))(x64.astype(dtype))
        finally:
            tz.config.update("jax_enable_x64", False)
        assert got.dtype == dtype
        tolerance = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, web(np, x64.astype(dtype)), rtol=tolerance, atol=tolerance)


def test_independent_reductions_become_one_reduce():
    """A jvp's primal and tangent sums are one reduce of two operands (in both stages of
    tenzr-split-reductions' sum); a sum that reads another (a variance after its mean)
    stays apart. Values against closed forms and NumPy."""
    rng = np.random.default_rng(0)
    x, v = rng.standard_normal((2, 64, 64)).astype(np.float32)

    def f(x):
        return (tz.exp(tz.sin(x)) * 0.5).sum()

    def jvp(x, v):
        return tz.jvp(f, (x,), (v,))

    text = tz.jit(jvp).lower(x, v)
    assert text.count("stablehlo.reduce(") == 2 and text.count("), (") == 2
    y, y_dot = tz.jit(jvp)(x, v)
    x64, v64 = x.astype(np.float64), v.astype(np.float64)
    np.testing.assert_allclose(y, (np.exp(np.sin(x64)) * 0.5).sum(), rtol=1e-5)
    np.testing.assert_allclose(y_dot, (np.exp(np.sin(x64)) * np.cos(x64) * 0.5 * v64).sum(), rtol=1e-4)

    def spread(x):
        return x.sum(axis=1), ((x - x.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)

    text = tz.jit(spread).lower(x)
    assert text.count("stablehlo.reduce(") == 2 and "), (" not in text
    np.testing.assert_allclose(tz.jit(spread)(x)[1], spread(x64)[1], rtol=1e-4)


def test_reductions_of_a_constant_stay_apart():
    """A row sum and a maximum of an array the function closes over stay two reduces: merged
    into one of two results, IREE 3.13 hoisted it into an initializer and read the maximum at
    the sums' offset (x.max() came back as the last row's sum)."""
    x = np.random.default_rng(7).standard_normal((3, 5))

    def f():
        return tz.sum(x, 1) + 1.5, tz.maximum(tz.max(x), -np.inf)

    assert "), (" not in tz.jit(f).lower()
    sums, largest = tz.jit(f)()
    np.testing.assert_allclose(sums, x.sum(1) + 1.5, rtol=1e-12)
    assert largest == x.max()
    merged = tz.jit(lambda y: (tz.sum(y, 1), tz.max(y)))  # (of an argument they still merge)
    assert "), (" in merged.lower(x)
    np.testing.assert_allclose(merged(x)[1], x.max())


def test_sums_read_by_transposes_compile_and_match_numpy():
    """Two sums over the same axis, each transposed after: merged into one reduce, IREE 3.13
    failed to compile them under any flags (it moves the transpose into the reduction)."""
    rng = np.random.default_rng(8)
    x, y = rng.standard_normal((2, 4, 5, 6, 3)), rng.standard_normal((2, 4, 5, 6, 3))
    got = tz.jit(lambda x, y: (tz.sum(x, 3).transpose(3, 2, 1, 0), tz.exp(tz.sum(y, 3)).T))(x, y)
    np.testing.assert_allclose(got[0], x.sum(3).transpose(3, 2, 1, 0), rtol=1e-12)
    np.testing.assert_allclose(got[1], np.exp(y.sum(3)).T, rtol=1e-12)


def test_a_scan_gradient_counts_each_loop_with_one_counter():
    """The adjoint's tape counter and the scan's own count alike and become one (IREE read
    the second back to the host every iteration): each loop carries two i32 values, its
    counter and the zero index of its row slices (before: three each). The gradient
    against backpropagation written out in NumPy (float64)."""
    rng = np.random.default_rng(0)
    w, xs = rng.standard_normal((6, 6)) * 0.4, rng.standard_normal((20, 6))

    def loss(w, xs):
        def step(h, x):
            h = tz.tanh(w @ h + x)
            return h, (h * h).sum()

        return tz.lax.scan(step, np.zeros(6), xs)[1].sum()

    text = tz.jit(tz.grad(loss)).lower(w, xs)
    loops = [line.split(") : ")[1] for line in text.splitlines() if "stablehlo.while(" in line]
    assert len(loops) == 2 and [t.split(", ").count("tensor<i32>") for t in loops] == [2, 2]
    hs = [np.zeros(6)]
    for x in xs:
        hs.append(np.tanh(w @ hs[-1] + x))
    dw, dh = np.zeros_like(w), np.zeros(6)
    for t in range(len(xs), 0, -1):
        dpre = (dh + 2 * hs[t]) * (1 - hs[t] ** 2)
        dw += np.outer(dpre, hs[t - 1])
        dh = w.T @ dpre
    np.testing.assert_allclose(tz.jit(tz.grad(loss))(w, xs), dw, rtol=1e-10)


def test_an_image_grid_of_transposed_tiles_needs_no_transpose():
    """JAX's MNIST VAE draws its samples with this grid: 101 transposes, each a dispatch of
    its own (9 s to compile); moved past the concatenations, none is left. Values and
    gradient (each tile's cotangent is its place in the grid) against NumPy."""
    def image_grid(xp, nrow, ncol, imagevecs, imshape):
        images = iter(imagevecs.reshape((-1, *imshape)))
        return xp.vstack([xp.hstack([next(images).T for _ in range(ncol)][::-1]) for _ in range(nrow)]).T

    rng = np.random.default_rng(0)
    x, w = rng.random((12, 20)).astype(np.float32), rng.random((16, 15)).astype(np.float32)
    grid = tz.jit(lambda x: image_grid(tz, 3, 4, x, (4, 5)))
    assert "stablehlo.transpose" not in grid.lower(x)
    np.testing.assert_array_equal(grid(x), image_grid(np, 3, 4, x, (4, 5)))
    cotangent = tz.grad(lambda x: (image_grid(tz, 3, 4, x, (4, 5)) * w).sum())(x)
    places = image_grid(np, 3, 4, np.arange(x.size).reshape(x.shape), (4, 5))
    expected = np.zeros(x.size, np.float32)
    expected[places.reshape(-1)] = w.reshape(-1)
    np.testing.assert_array_equal(cotangent, expected.reshape(x.shape))


def test_fallbacks_end_with_no_optimization_flags_then_separate_multi_use_producers():
    for text in ("", "stablehlo.convolution"):
        assert Target().optimization_flags(text)[-2:] == ((), (SEPARATE_MULTI_USE,))
    assert Target("vulkan").optimization_flags("") == ((), (SEPARATE_MULTI_USE,))


def test_a_module_iree_partitions_wrongly_compiles_on_the_last_fallback():
    """The vjp of gammainc at a = 1 (a loop whose result is read inside and after it) is
    rejected by IREE 3.13 under every other flag set ("circular dependency")."""
    x = np.array([1.5, 2.0, 0.7, 3.0])
    tz.config.update("jax_enable_x64", True)
    try:
        _, back = tz.vjp(lambda x: tz.scipy.special.gammainc(1, x), x)
        np.testing.assert_allclose(np.asarray(back(np.ones(4))[0]), np.exp(-x), rtol=1e-12)
    finally:
        tz.config.update("jax_enable_x64", False)


def test_a_region_returning_a_value_twice_compiles_without_multi_use_fusion():
    """`a * x` and `x * a` are two ops here; IREE 3.13's CSE merges them only after fusing
    them into one dispatch region, which then returns that value twice, and its
    canonicalization points the second copy's uses at the region's result 0 (this gave
    0.0891 for 0.0621). Such modules are compiled again without multi-use fusion."""

    def f(x):
        a = x * x
        p, q = a * x, x * a
        return p + q, (a * a + p) + q

    x = np.array([0.3], np.float32)
    text = tz.jit(f).lower(x)
    assert text.count("stablehlo.multiply") == 4  # the two products reach IREE apart
    _, miscompiled = _compile_once(text, Target(), Target().optimization_flags(text)[0])
    assert miscompiled
    np.testing.assert_allclose(tz.jit(f)(x), [[2 * 0.3**3], [0.3**4 + 2 * 0.3**3]], rtol=1e-6)


def test_the_miscompile_check_reads_tensor_returns_of_regions_only():
    printed = """
    %5:3 = flow.dispatch.region -> (tensor<f32>, tensor<f32>, tensor<f32>) {
      flow.return %12#0, %12#1, %12#2 : tensor<f32>, tensor<f32>, tensor<f32>
    } count() -> (index, index, index) {
      flow.return %c1, %c1, %c1 : index, index, index
    }"""
    assert not _returns_a_value_twice(printed)
    assert _returns_a_value_twice(printed.replace("%12#0, %12#1, %12#2", "%12#0, %12#1, %12#1"))


def test_second_derivatives_iree_miscompiled_through_a_repeated_region_result():
    """Forward over reverse of (sin x . sin x)^2 in float64, and reverse over reverse through
    a Cholesky factorization (autograd's GMM example), both met the fault above: 0.8896 for
    12 s^2 c^2 - 4 s^4 = 0.9260, and a Hessian-vector product about 50% off."""
    tz.config.update("jax_enable_x64", True)
    try:
        g = tz.grad(lambda x: (tz.sin(x) @ tz.sin(x)) ** 2)
        s, c = np.sin(0.3), np.cos(0.3)
        value, tangent = tz.jvp(g, (np.array([0.3]),), (np.array([1.0]),))
        np.testing.assert_allclose(value, [4 * s**3 * c], rtol=1e-12)
        np.testing.assert_allclose(tangent, [12 * s**2 * c**2 - 4 * s**4], rtol=1e-12)

        rng = np.random.default_rng(0)
        m, v, w = rng.standard_normal((2, 2)), rng.standard_normal((2, 2)), np.array([[1.0, 0.0], [2.0, 3.0]])

        def f(m):
            return tz.sum(tz.linalg.cholesky(m @ m.T + tz.eye(2)) * w)

        grad = tz.jit(tz.grad(f))
        step = 1e-5
        numeric = (np.asarray(grad(m + step * v)) - np.asarray(grad(m - step * v))) / (2 * step)
        hvp = tz.grad(lambda m: tz.sum(tz.grad(f)(m) * v))(m)
        np.testing.assert_allclose(hvp, numeric, rtol=1e-7, atol=1e-9)
    finally:
        tz.config.update("jax_enable_x64", False)


def test_cuda_keeps_float64():
    # IREE demotes float64 to float32 unless told not to (found running the op table on an H200)
    assert "--iree-input-demote-f64-to-f32=false" in Target("cuda").compiler_flags()
    assert "--iree-input-demote-f64-to-f32=false" in Target("cpu").compiler_flags()


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="x86-64 CPU names")
def test_unknown_llvm_cpus_and_features_are_refused_with_suggestions():
    # LLVM ignores them with a warning per use, then may fail elsewhere ("64-bit code
    # requested on a subtarget that doesn't support it")
    with pytest.raises(TenzrError, match=r"unknown CPU 'skylake-avx' .*did you mean skylake-avx512"):
        Target(cpu="skylake-avx")
    with pytest.raises(TenzrError, match=r"unknown CPU feature '\+avx513f' .*did you mean avx512f"):
        Target(cpu_features="+avx2,+avx513f")
    with pytest.raises(TenzrError, match="write \\+feature to enable one"):
        Target(cpu_features="avx2")
    assert Target(cpu="x86-64-v3", cpu_features="-avx512f,+fma").cpu == "x86-64-v3"


def test_cpus_without_avx512_get_data_tiling_without_aggressive_fusion():
    assert Target(cpu="znver4", cpu_features="+avx2,+avx512f").has_avx512()
    assert not Target(cpu="znver3").has_avx512()
    assert not Target(cpu_features="+avx2,+fma").has_avx512()
    rng = np.random.default_rng(0)
    params = [{"w": rng.standard_normal(shape).astype(np.float32), "b": np.zeros(shape[1], np.float32)}
              for shape in ((256, 256), (256, 10))]
    x = rng.standard_normal((128, 256)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]

    def loss(params, x, labels):
        hidden = tz.tanh(x @ params[0]["w"] + params[0]["b"])
        return -(tz.nn.log_softmax(hidden @ params[1]["w"] + params[1]["b"]) * labels).sum()

    text = tz.jit(tz.value_and_grad(loss)).lower(params, x, labels)
    zen3 = Target(cpu="znver3")
    first = zen3.optimization_flags(text)[0]
    assert first == (TILING,)
    # With AVX-512, fusion and tiling together first; where IREE rejects that, tiling alone.
    assert Target(cpu="znver4", cpu_features="+avx512f").optimization_flags(text)[:3] == (
        (AGGRESSIVE_FUSION, TILING), (TILING, *LARGE_TILES), (AGGRESSIVE_FUSION,))
    # That first choice must compile for this AVX2 CPU (with aggressive fusion as well, IREE
    # 3.13 rejects this module: "operations with large vector sizes"). compile_stablehlo
    # would hide a failure by falling back, so this compiles the one flag set directly.
    assert _compile_once(text, zen3, first)[0]


def test_a_normalization_before_a_product_starts_with_data_tiling_alone():
    """With aggressive fusion and data tiling, IREE 3.13 packs a layer norm's or a softmax's
    result into the next product's operand tiles, and rejects the module on AVX-512 ("large
    vector sizes", or the stack limit) after a costly start; data tiling alone comes first."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((8, 128, 64)).astype(np.float32)
    w, g = rng.standard_normal((64, 256)).astype(np.float32), np.ones(64, np.float32)

    def layer_norm(x, g):
        centred = x - x.mean(axis=-1, keepdims=True)
        return centred / tz.sqrt((centred ** 2).mean(axis=-1, keepdims=True) + 1e-5) * g

    def softmax(x, g):
        return tz.nn.softmax(x, axis=-1) * g

    def step(norm):
        return tz.jit(tz.value_and_grad(lambda w, g, x: tz.nn.relu(norm(x, g) @ w).sum(), argnums=(0, 1)))

    avx512 = Target(cpu="znver4", cpu_features="+avx512f")
    for norm in (layer_norm, softmax):
        text = step(norm).lower(w, g, x)
        assert avx512.optimization_flags(text)[0] == (TILING, *LARGE_TILES)
        assert _compile_once(text, avx512, (TILING, *LARGE_TILES))[0]
        with pytest.raises(TenzrError, match="could not compile"):
            _compile_once(text, avx512, (AGGRESSIVE_FUSION, TILING))
    # A product of a product's tanh, and a softmax after the last product, keep both.
    text = tz.jit(lambda w, x: tz.nn.softmax(tz.tanh(x @ w) @ w.T, axis=-1).sum()).lower(w, x)
    assert avx512.optimization_flags(text)[0] == (AGGRESSIVE_FUSION, TILING)


def test_a_boolean_matmul_operand_compiles_with_data_tiling():
    """A mask times weights: IREE 3.13's data tiling failed on the boolean operand it found
    through the conversion ("failed to legalize unresolved source materialization"), so
    every tiled flag set was a failed compile; tenzr-expand-math makes it a select."""
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((2, 64, 48)).astype(np.float32)
    w = rng.standard_normal((48, 40)).astype(np.float32)

    def masked(x, y, w):
        return tz.dot(x < y, w)

    text = tz.jit(masked).lower(x, y, w)
    flags = Target().optimization_flags(text)[0]
    assert TILING in flags
    _compile_once(text, Target(), flags)  # raised before
    np.testing.assert_allclose(tz.jit(masked)(x, y, w), (x < y).astype(np.float32) @ w, rtol=1e-5, atol=1e-5)


def test_a_hessian_vector_product_between_products_compiles_data_tiled():
    # Data tiling packs tanh'(a) * ȧ, a function of two matmul results, into the next
    # product's operand tile in one dispatch; IREE 3.13 refuses this module with its default
    # stack limit (33 KiB needed), and the step ran untiled.
    rng = np.random.default_rng(0)
    sizes = [256, 256, 256, 10]
    params = [{"w": rng.standard_normal((a, b)).astype(np.float32), "b": np.zeros(b, np.float32)}
              for a, b in itertools.pairwise(sizes)]
    x = rng.standard_normal((128, 256)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]

    def loss(params):
        h = x
        for layer in params[:-1]:
            h = tz.tanh(h @ layer["w"] + layer["b"])
        return -(tz.nn.log_softmax(h @ params[-1]["w"] + params[-1]["b"]) * labels).sum() / 128

    text = tz.jit(lambda p, t: tz.jvp(tz.grad(loss), (p,), (t,))[1]).lower(params, params)
    avx512 = Target(cpu="znver4", cpu_features="+avx512f")
    assert avx512.optimization_flags(text)[1] == (TILING, *LARGE_TILES)
    assert _compile_once(text, Target(), (TILING, *LARGE_TILES))[0]


def test_a_dispatch_with_a_large_stack_runs_right_on_the_cpu_workers(monkeypatch):
    # Tiled with aggressive fusion, this jvp's pack of relu'(x @ w1) * (x @ t1) needs 98 KiB
    # of stack (IREE refuses it by default); the CPU workers run it and get the jvp derived
    # by hand. (Compiled with those flags alone, about 55 s of CPU: load_program would add
    # them to each of the target's flag sets, and tiled 64x128 products take long.)
    from tenzr.runtime import Program

    rng = np.random.default_rng(5)
    x = rng.standard_normal((64, 64)).astype(np.float32)
    w1, t1 = (rng.standard_normal((64, 128)).astype(np.float32) for _ in range(2))
    w2, t2 = (rng.standard_normal((128, 64)).astype(np.float32) for _ in range(2))

    def f(w1, w2, t1, t2):
        return tz.jvp(lambda a, c: ((tz.nn.relu(x @ a) @ c) ** 2).sum(), (w1, w2), (t1, t2))[1]

    pre = x.astype(np.float64) @ w1
    y = np.maximum(pre, 0) @ w2
    expected = 2 * (y * (((pre > 0) * (x @ t1)) @ w2 + np.maximum(pre, 0) @ t2)).sum()
    monkeypatch.setenv("TENZR_CPU_DRIVER", "local-task")
    vmfb, _ = _compile_once(tz.jit(f).lower(w1, w2, t1, t2), Target(), (AGGRESSIVE_FUSION, TILING, *LARGE_TILES))
    program = Program(vmfb, Target())
    np.testing.assert_allclose(np.asarray(program("main", w1, w2, t1, t2)[0]), expected, rtol=1e-4)


@pytest.mark.parametrize("form", ["sliced", "flattened_beside_a_scatter"])
def test_a_slice_of_a_padded_reduction_waits_for_the_reduction(monkeypatch, form):
    """The copy of a reduction's result (a slice of it, padded again) raced the reduction on
    IREE 3.13's CPU workers, and with a reduction this long mostly read the buffer before the
    reduction wrote it: IREE 3.13's schedule put them in one wave. tenzr-fold-slices now
    reads the reduction instead of slicing the padded buffer; the flattened slice, which it
    does not fold, relies on targets.SERIAL_STREAM, also in a module that updates in place
    (a scatter beside it: before, such modules kept the waves, and this test failed 4 runs
    of 4)."""
    def padded_twice(x, ct):
        padded = tz.concatenate([ct.sum(0)[None], tz.zeros((1, 4), ct.dtype)], 0)
        first = padded[:1] if form == "sliced" else padded.reshape(-1)[:4].reshape(1, 4)
        again = tz.concatenate([first, tz.zeros((1, 4), ct.dtype)], 0) * 2.0
        return (padded + x, again) if form == "sliced" else (padded + x, again, x.at[np.array([1])].set(ct[0]))

    rng = np.random.default_rng(0)
    x, ct = rng.standard_normal((2, 4)), rng.standard_normal((1_000_000, 4))
    want = np.concatenate([ct.sum(0)[None], np.zeros((1, 4))])
    monkeypatch.setenv(CPU_DRIVER_ENV, "local-task")  # (the synchronous driver runs one op at a time anyway)
    step = tz.jit(padded_twice)
    for _ in range(12):
        padded, again, *scattered = step(x, ct)
        np.testing.assert_allclose(padded, want + x, rtol=1e-10)
        np.testing.assert_allclose(again, 2 * want, rtol=1e-10)
        for written in scattered:
            np.testing.assert_array_equal(written, [x[0], ct[0]])


def test_updates_of_values_computed_from_constants_leave_them_alone(x64):
    """IREE 3.13 wrote an in-place update of an iota, or of a float64, int64 or complex splat,
    into the buffer the value's other uses read: `ones.at[i].add(a), ones` gave zeros for the
    second (complex results swapped), `arange.at[i].add(3), arange` zeros for the first, a
    loop over updates of `ones` zeros for `ones`, and several updates of one such splat failed
    to compile. tenzr-copy-in-place-operands updates a copy instead."""
    def one_update(a, i):
        ones = tz.ones(5, dtype=a.dtype)
        return ones.at[i].add(a), ones

    for a in (np.float64(7), np.int64(7), np.complex64(7 + 1j), np.complex128(7 - 2j)):
        updated, ones = tz.jit(one_update)(a, np.int64(3))
        np.testing.assert_array_equal(ones, np.ones(5, a.dtype))
        np.testing.assert_array_equal(updated, [1, 1, 1, 1 + a, 1])

    def many_updates(a, i):
        ones, iota = tz.ones(5), tz.arange(5)
        looped = tz.lax.fori_loop(0, 3, lambda k, b: b.at[k].multiply(a), ones)
        return (ones.at[1].add(a), ones.at[i].multiply(a), ones.at[i].max(a), ones.at[i].set(a),
                tz.lax.dynamic_update_slice(ones, a[None], (i,)), ones.reshape(5, 1).at[i, 0].add(a), ones * a,
                looped, iota.at[i].add(3), iota.astype(np.int32).at[i].add(3), iota)

    a = np.float64(3)
    results = tz.jit(many_updates)(a, np.int64(3))
    expected = [np.ones(5) for _ in range(6)]
    expected[0][1] = 4
    for e in expected[1:]:
        e[3] = 3
    expected[5] = np.array([[1], [1], [1], [4], [1]])
    expected += [np.full(5, 3.0), np.array([3.0, 3, 3, 1, 1]), np.array([0, 1, 2, 6, 4]), np.array([0, 1, 2, 6, 4]),
                 np.arange(5)]
    for got, want in zip(results, expected, strict=True):
        np.testing.assert_array_equal(got, want)


def test_updating_an_argument_the_function_also_returns_leaves_the_argument_alone():
    """IREE 3.13 wrote an update or sort of an argument into the buffer it returned as the
    argument: `x.at[i].add(7), x` gave the updated x twice, `tz.sort(x), x` the sorted x twice
    (reads of x came back right), also where x came back through ops IREE folds away, such as
    `maximum(x, x)` or `-(-x)`; a sorted constant returned beside its sort came back sorted
    too. tenzr-copy-in-place-operands copies them first."""
    x = np.arange(10.0, dtype=np.float32).reshape(2, 5)
    updated = x.copy()
    updated[0, 3] += 7
    cases = {
        (lambda x, i: (x.at[0, i].add(7.0), x)): (updated, x),
        (lambda x, i: (x, tz.lax.dynamic_update_slice(x, updated[:1, 3:4], (0, i)))): (x, updated),
        (lambda x, i: (x.reshape(5, 2).reshape(10).at[i].add(7.0).reshape(2, 5), x.reshape(10))): (updated, x.ravel()),
        (lambda x, i: (tz.lax.fori_loop(0, 1, lambda k, b: b.at[0, i].add(7.0), x), x)): (updated, x),
        (lambda x, i: (x.at[0, i].add(7.0), x * 2)): (updated, 2 * x),
        # (returned through ops IREE folds away; out of a conditional, it came back right uncopied)
        (lambda x, i: (tz.maximum(x, x), x.at[0, i].add(7.0))): (x, updated),
        (lambda x, i: (x.at[0, i].add(7.0), tz.negative(tz.negative(x)))): (updated, x),
        (lambda x, i: (x.at[0, i].add(7.0), tz.clip(x, -np.inf, np.inf))): (updated, x),
        (lambda x, i: (x.at[0, i].add(7.0), tz.where(x > 3, x, x))): (updated, x),
        (lambda x, i: (x.at[0, i].add(7.0), x * 1.0)): (updated, x),
        (lambda x, i: (x.at[0, i].add(7.0), tz.lax.cond(i > 0, lambda: x, lambda: x + 1))): (updated, x),
        (lambda x, i: (x.at[0, i].add(7.0), tz.lax.fori_loop(0, i, lambda k, b: b, x))): (updated, x),
        (lambda x, i: (tz.sort(-x, axis=1), -x)): (np.sort(-x, axis=1), -x),  # (-x: a computed value, right)
        (lambda x, i: (tz.sort(x[::-1], axis=0), x)): (np.sort(x[::-1], axis=0), x),
        (lambda x, i: (tz.sort(x.reshape(10)), x)): (np.sort(x.reshape(10)), x),
        (lambda x, i: (tz.sort(tz.asarray(x[:, ::-1].copy()), axis=1), tz.asarray(x[:, ::-1].copy()))):
            (x, x[:, ::-1]),  # (a constant: sorted once in its own buffer, which later calls read)
    }
    for f, want in cases.items():
        for _ in range(2):
            for got, expected in zip(tz.jit(f)(x, np.int32(3)), want, strict=True):
                np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(x, np.arange(10.0).reshape(2, 5))  # (the caller's array is untouched)


def _three_steps(s: np.ndarray) -> np.float32:
    for _ in range(3):
        s = s + np.float32(0.1) * np.exp(np.float32(0.1) * s).sum()
    return s[0]


def test_concatenations_of_booleans_and_reductions_of_constants_run_right():
    """IREE 3.13 wrote two concatenations of booleans sharing an operand into one buffer (the
    first came out all false; tenzr-widen-bool-concatenates), and reduced an elementwise op
    of a splat it had folded over one element of the reduced dims (7 trues as int32 summed
    to 1, exp(zeros(7)) to 1, a gradient of 5 was 1, a loop of sums from zeros 0.92 instead
    of 1.25; a loop testing 100,000 of them failed to compile; tenzr-barrier-constant-reductions)."""
    f = np.array([0.5, 2.0, -1.0], np.float32)

    def program(f, y):
        first = tz.full((1,), True)
        return (tz.concatenate([first, tz.logical_and(f > 0, f < 1)]), tz.concatenate([first, f > 0]),
                tz.sum(tz.concatenate([tz.full((3,), True), tz.full((4,), True)]), dtype=np.int32),
                tz.pad(tz.full((2,), 2.0), 1, constant_values=2.0).astype(np.int32).sum(),
                tz.exp(tz.zeros(7)).sum(), tz.sqrt(tz.full((5, 4), 4.0)).sum(1),
                tz.full((7,), 1.5, np.float16).astype(np.float32).sum(),
                tz.grad(lambda y: (tz.exp(tz.zeros(5)) * y).sum())(y),
                tz.lax.fori_loop(0, 3, lambda i, s: s + 0.1 * tz.exp(0.1 * s).sum(), tz.zeros(4)),
                tz.lax.while_loop(lambda s: tz.any(s != 4), lambda s: s + 1, tz.zeros(100_000, np.int32))[-3:])

    got = tz.jit(program)(f, np.float32(1))
    want = (np.concatenate([[True], (f > 0) & (f < 1)]), np.concatenate([[True], f > 0]), 7, 8, 7.0,
            np.full(5, 8.0), 10.5, 5.0, np.full(4, _three_steps(np.zeros(4, np.float32))), [4, 4, 4])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6)
