"""Which IREE optimization flags a module gets (chosen by what it contains)."""

from __future__ import annotations

import numpy as np

import tenzr as tz
from tenzr.targets import Target

TILING = "--iree-dispatch-creation-data-tiling"


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
    # a strided convolution's input cotangent stays a convolution: no tiling even beside a real matmul
    x, w = rng.standard_normal((2, 3, 8, 8)).astype(np.float32), rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    step = tz.value_and_grad(lambda x, w, a, b: tz.nn.conv(x, w, stride=2).sum() + (a @ b).sum())
    assert "stablehlo.convolution" in tz.jit(step).lower(x, w, *big)
    assert TILING not in first_flags(step, x, w, *big)


def test_fallbacks_end_with_no_optimization_flags():
    for text in ("", "stablehlo.convolution"):
        assert Target().optimization_flags(text)[-1] == ()
    assert Target("vulkan").optimization_flags("") == ((),)


def test_cuda_keeps_float64():
    # IREE demotes float64 to float32 unless told not to (found running the op table on an H200)
    assert "--iree-input-demote-f64-to-f32=false" in Target("cuda").compiler_flags()
    assert "--iree-input-demote-f64-to-f32=false" in Target("cpu").compiler_flags()
