"""The same programs on Vulkan as on CPU. Vulkan runs on any Vulkan device (here Mesa's
lavapipe); without one these tests skip with the reason."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest
from harness import check_forward, check_vjp, compile_rows_vmfb
from op_table import GRAD_ROWS, ROWS

import tenzr as tz
from tenzr import runtime
from tenzr.runtime import Program, device_available, device_config
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
def vulkan_programs():
    """The forward and VJP tables compiled before the device opens (on lavapipe its polling
    threads would slow the compiles down), and the device closed after the module: the
    programs are dropped (pytest keeps the list itself until later) before tz.clear_caches
    collects them."""
    vmfbs = (compile_rows_vmfb(VULKAN_ROWS, grad=False, target=VULKAN),
             compile_rows_vmfb(VULKAN_GRAD_ROWS, grad=True, float64=False, target=VULKAN))
    programs = [Program(vmfb, VULKAN) for vmfb in vmfbs]
    yield programs
    programs.clear()
    tz.clear_caches()


@needs_vulkan
@pytest.mark.parametrize("index", range(len(VULKAN_ROWS)), ids=[r.name for r in VULKAN_ROWS])
def test_forward_on_vulkan(vulkan_programs, index):
    check_forward(vulkan_programs[0], index, VULKAN_ROWS[index])


@needs_vulkan
@pytest.mark.parametrize("index", range(len(VULKAN_GRAD_ROWS)), ids=[r.name for r in VULKAN_GRAD_ROWS])
def test_gradients_on_vulkan_match_finite_differences(vulkan_programs, index):
    """float32 VJPs on Vulkan against central differences of each row's NumPy reference."""
    check_vjp(vulkan_programs[1], index, VULKAN_GRAD_ROWS[index], directions=3, float64=False)


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
def test_results_stay_on_the_device_between_calls(monkeypatch):
    """A Vulkan program's results are DeviceArrays: fed to the next program on the device
    they are not read back (nor copied again), NumPy reads them once, a CPU program reads
    them, and tz.device_put copies host arrays there. A bool result, widened in device
    memory, is passed on as it is."""
    reads = []
    read_back = runtime._read_back
    monkeypatch.setattr(runtime, "_read_back", lambda *a: reads.append(1) or read_back(*a))
    x = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    step = tz.jit(lambda a, b: (a @ b, (a * 2).sum() > 0), target="vulkan")
    y, flag = step(x, x)
    assert isinstance(y, tz.DeviceArray) and (y.shape, y.dtype, flag.dtype) == ((4, 4), np.float32, np.bool_)
    z, _ = step(y, y)
    picked = tz.jit(lambda f: tz.where(f, 1.0, 2.0), target="vulkan")(flag)
    assert not reads
    np.testing.assert_allclose(z, (x @ x) @ (x @ x), rtol=1e-4)
    assert float(picked) == (1.0 if (x * 2).sum() > 0 else 2.0)
    np.testing.assert_allclose(np.asarray(z), np.asarray(z))  # (read once, then kept)
    assert len(reads) == 2
    np.testing.assert_allclose(tz.jit(lambda v: v * 3.0)(y), 3 * (x @ x), rtol=1e-5)  # (on the CPU)
    on_device = tz.device_put({"x": x}, "vulkan")["x"]
    assert isinstance(on_device, tz.DeviceArray)
    np.testing.assert_allclose(step(on_device, x)[0], x @ x, rtol=1e-5)
    np.testing.assert_allclose(y[0] + 1, (x @ x)[0] + 1, rtol=1e-5)
    assert type(tz.device_get(y)) is np.ndarray


@needs_vulkan
def test_float64_and_small_integers_on_portable_vulkan_are_clear_errors():
    """(8- and 16-bit integers: the max of five uint8s came back 0, their reversed sort and
    v + 1 beside it wrong, even widened at the function's boundary.)"""
    with pytest.raises(tz.TenzrError, match="float64 is not supported by IREE's portable Vulkan target"):
        tz.jit(lambda v: v * 2.0, target="vulkan")(np.ones(3))
    for dtype in (np.uint8, np.int16):
        with pytest.raises(tz.TenzrError, match="8- and 16-bit integers are not supported by IREE's portable Vulkan"):
            tz.jit(lambda v: v.max(), target="vulkan")(np.ones(5, dtype))


def _polling_threads() -> set[str]:
    """This process's threads (other than the caller) found runnable at each of 20 looks over
    0.2 s: threads that poll instead of sleeping."""
    me = str(threading.get_native_id())
    polling = None
    for _ in range(20):
        running = set()
        for tid in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{tid}/stat") as stat:
                    state = stat.read().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue  # the thread ended
            if tid != me and state == "R":
                running.add(tid)
        polling = running if polling is None else polling & running
        time.sleep(0.01)
    return polling


@needs_vulkan
@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads thread states from /proc")
def test_vulkan_devices_close_when_nothing_needs_them():
    """IREE's Vulkan device on lavapipe keeps two threads polling while it is open (two cores
    busy in an idle process): probing for a device must not leave one open, and
    tz.clear_caches closes the ones only the caches held."""
    tz.clear_caches()
    before = _polling_threads()
    assert device_available("vulkan")
    assert _polling_threads() <= before
    np.testing.assert_array_equal(tz.jit(lambda v: v * 2.0, target="vulkan")(np.ones(3, np.float32)), 2.0)
    if _polling_threads() <= before:
        pytest.skip("this Vulkan device does not poll while open")
    tz.clear_caches()
    assert _polling_threads() <= before


def test_devices_are_reused():
    assert device_config("local-task") is device_config("local-task")
    f = tz.jit(lambda v: v + 1.0)
    f(np.ones(2, np.float32))
    g = tz.jit(lambda v: v * 3.0)
    g(np.ones(2, np.float32))
    from tenzr.transforms import _COMPILED

    configs = {id(loaded.config) for c in _COMPILED.values() if c.program.target == Target()
               for loaded in c.program._loaded.values()}
    assert configs <= {id(device_config(driver)) for driver in ("local-task", "local-sync")}


def test_unknown_target_is_a_clear_error():
    with pytest.raises(tz.TenzrError, match="unknown target 'tpu'"):
        tz.jit(lambda v: v, target="tpu")


@needs_vulkan
def test_forward_mode_and_vmap_on_vulkan():
    """A Hessian (forward over reverse, its directions batched) and per-example gradients
    compile for Vulkan and agree with the CPU."""
    import warnings

    rng = np.random.default_rng(5)
    w, xs = rng.standard_normal((3, 2)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32)

    def loss(w, x):
        return (tz.tanh(x @ w) ** 2).sum()

    hessian = tz.hessian(loss)
    per_example = tz.vmap(tz.grad(loss), in_axes=(None, 0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (lavapipe emulates a GPU, slowly)
        h = tz.jit(hessian, target="vulkan")(w, xs)
        g = tz.jit(per_example, target="vulkan")(w, xs)
    np.testing.assert_allclose(h, tz.jit(hessian)(w, xs), rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(g, tz.jit(per_example)(w, xs), rtol=2e-5, atol=2e-6)
