"""The same programs on Vulkan as on CPU. Vulkan runs on any Vulkan device (here Mesa's
lavapipe); without one these tests skip with the reason."""

from __future__ import annotations

import numpy as np
import pytest
from harness import check_forward, check_vjp, compile_rows
from op_table import GRAD_ROWS, ROWS

import tenzr as tz
from tenzr.runtime import device_available, device_config
from tenzr.targets import Target

VULKAN = Target("vulkan")
needs_vulkan = pytest.mark.skipif(
    not device_available("vulkan"),
    reason="no Vulkan device (install Mesa's lavapipe: apt-get install mesa-vulkan-drivers)")


def _portable_vulkan(row) -> bool:
    """Rows IREE's portable Vulkan target can run: no float64 (unsupported there, see
    test_float64_on_portable_vulkan_is_a_clear_error), and no 64-bit integer division
    (IREE 3.13's Vulkan compiler crashes on it)."""
    return not (any(a.dtype == np.float64 for a in row.inputs) or "f64" in row.name or "float64" in row.name
                or row.name == "div_i64_truncates")


VULKAN_ROWS = [r for r in ROWS if _portable_vulkan(r)]
VULKAN_GRAD_ROWS = [r for r in GRAD_ROWS if _portable_vulkan(r) and all(a.dtype != np.float16 for a in r.inputs)]


@pytest.fixture(scope="module")
def vulkan_forward():
    return compile_rows(VULKAN_ROWS, grad=False, target=VULKAN)


@needs_vulkan
@pytest.mark.parametrize("index", range(len(VULKAN_ROWS)), ids=[r.name for r in VULKAN_ROWS])
def test_forward_on_vulkan(vulkan_forward, index):
    check_forward(vulkan_forward, index, VULKAN_ROWS[index])


@pytest.fixture(scope="module")
def vulkan_vjps():
    return compile_rows(VULKAN_GRAD_ROWS, grad=True, float64=False, target=VULKAN)


@needs_vulkan
@pytest.mark.parametrize("index", range(len(VULKAN_GRAD_ROWS)), ids=[r.name for r in VULKAN_GRAD_ROWS])
def test_gradients_on_vulkan_match_finite_differences(vulkan_vjps, index):
    """float32 VJPs on Vulkan against central differences of each row's NumPy reference."""
    check_vjp(vulkan_vjps, index, VULKAN_GRAD_ROWS[index], directions=3, float64=False)


@needs_vulkan
def test_api_on_vulkan_reads_results_back():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    value, g = tz.value_and_grad(lambda v: (tz.tanh(v) ** 2).sum(), target="vulkan")(x)
    want_value, want_g = tz.value_and_grad(lambda v: (tz.tanh(v) ** 2).sum())(x)
    np.testing.assert_allclose(value, want_value, rtol=1e-5)
    np.testing.assert_allclose(g, want_g, rtol=1e-4, atol=1e-6)
    flags = tz.jit(lambda v: v > 2.5, target="vulkan")(x)
    np.testing.assert_array_equal(flags, x > 2.5)


@needs_vulkan
def test_float64_on_portable_vulkan_is_a_clear_error():
    with pytest.raises(tz.TenzrError, match="float64 is not supported by IREE's portable Vulkan target"):
        tz.jit(lambda v: v * 2.0, target="vulkan")(np.ones(3))


def test_devices_are_reused():
    assert device_config("local-task") is device_config("local-task")
    f = tz.jit(lambda v: v + 1.0)
    f(np.ones(2, np.float32))
    g = tz.jit(lambda v: v * 3.0)
    g(np.ones(2, np.float32))
    from tenzr.transforms import _COMPILED

    programs = {c.program._config for c in _COMPILED.values() if c.program.target == Target()}
    assert len(programs) == 1


def test_unknown_target_is_a_clear_error():
    with pytest.raises(tz.TenzrError, match="unknown target 'tpu'"):
        tz.jit(lambda v: v, target="tpu")
