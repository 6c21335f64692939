"""CUDA: every op and every gradient compiles for CUDA here; with a GPU (`make gpu-check`)
they also run, the forward values against NumPy and the VJPs against finite differences.
On a GPU machine that cannot install Tenzr, cuda_replay.py runs the same checks from a
recorded bundle (`make gpu-bundle`)."""

from __future__ import annotations

import numpy as np
import pytest
from harness import check_forward, check_vjp, compile_rows, compile_rows_vmfb, rng_for
from op_table import GRAD_ROWS, ROWS

import tenzr as tz
from tenzr.compiler import compile_stablehlo
from tenzr.runtime import device_available
from tenzr.targets import Target

CUDA = Target("cuda")


def test_every_op_compiles_for_cuda():
    assert len(compile_rows_vmfb(ROWS, grad=False, target=CUDA)) > 0


def test_every_gradient_compiles_for_cuda_in_float64():
    assert len(compile_rows_vmfb(GRAD_ROWS, grad=True, target=CUDA)) > 0


# --------------------------------------------------------------------------- CUDA (needs a GPU)

needs_cuda = pytest.mark.skipif(not device_available("cuda"), reason="no CUDA device (run `make gpu-check` on a GPU)")


@pytest.fixture(scope="module")
def cuda_forward():
    return compile_rows(ROWS, grad=False, target=CUDA)


@pytest.fixture(scope="module")
def cuda_vjps():
    return compile_rows(GRAD_ROWS, grad=True, target=CUDA)


@needs_cuda
@pytest.mark.parametrize("index", range(len(ROWS)), ids=[r.name for r in ROWS])
def test_forward_on_cuda(cuda_forward, index):
    check_forward(cuda_forward, index, ROWS[index])


@needs_cuda
@pytest.mark.parametrize("index", range(len(GRAD_ROWS)), ids=[r.name for r in GRAD_ROWS])
def test_gradients_on_cuda_against_finite_differences(cuda_vjps, index):
    check_vjp(cuda_vjps, index, GRAD_ROWS[index])


@needs_cuda
def test_training_step_on_cuda_matches_cpu():
    rng = rng_for("cuda-mlp")
    params = {"w": rng.standard_normal((8, 4)).astype(np.float32), "b": np.zeros(4, np.float32)}
    x = rng.standard_normal((16, 8)).astype(np.float32)

    def loss(p, x):
        return tz.nn.logsumexp(tz.tanh(x @ p["w"] + p["b"]), axis=1).mean()

    got = tz.value_and_grad(loss, target="cuda")(params, x)
    want = tz.value_and_grad(loss)(params, x)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
    for k in params:
        np.testing.assert_allclose(got[1][k], want[1][k], rtol=1e-4, atol=1e-6)


def test_layer_norm_gradient_compiles_for_cuda():
    # sum(-x) used to reach IREE, which folds the negation into a subtracting accumulator
    # that its GPU backends cannot split ("failed to get neutral element for reduction").
    x = rng_for("cuda-layer-norm").standard_normal((4, 8, 32)).astype(np.float32)

    def loss(x):
        centered = x - x.mean(axis=-1, keepdims=True)
        return (centered / tz.sqrt((centered * centered).mean(axis=-1, keepdims=True) + 1e-5)).sum()

    assert len(compile_stablehlo(tz.jit(tz.value_and_grad(loss), target=CUDA).lower(x), CUDA)) > 0
