"""Running compiled modules: one runtime device per driver, reused by every program.

On CPU, NumPy inputs are imported zero-copy by IREE's function invoker. On GPU drivers
(Vulkan, CUDA) plain host memory cannot always be imported (lavapipe requires 4096-byte
aligned host pointers), so inputs are copied into device buffers with the allocator and
results are copied back through a staging buffer.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import iree.runtime as rt
import numpy as np

from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.types import numpy_dtype
from tenzr.targets import WIDENED, Target


@functools.cache
def device_config(driver: str) -> rt.Config:
    """The process-wide runtime configuration (and device) of `driver`."""
    try:
        return rt.Config(driver)
    except (RuntimeError, ValueError) as e:
        raise TenzrError(f"no usable '{driver}' device: {e}") from None


def device_available(driver: str) -> bool:
    try:
        device_config(driver)
        return True
    except TenzrError:
        return False


class Program:
    """A compiled IREE module loaded on its target's device."""

    def __init__(self, vmfb: bytes, target: Target):
        self.target = target
        self._config = device_config(target.driver)
        self._context = rt.SystemContext(config=self._config)
        try:
            self._context.add_vm_module(rt.VmModule.copy_buffer(self._context.instance, vmfb))
        except (RuntimeError, ValueError) as e:
            raise TenzrError(f"cannot load the compiled module on '{target.driver}': {e}") from None
        self._module = self._context.modules.module
        self._functions: dict[str, object] = {}
        self._staged = target.name != "cpu"

    def function(self, name: str):
        fn = self._functions.get(name)
        if fn is None:
            try:
                fn = self._module[name]
            except (KeyError, AttributeError, RuntimeError):
                raise TenzrError(f"the compiled module has no function '{name}'") from None
            self._functions[name] = fn
        return fn

    def __call__(self, name: str, *arrays: np.ndarray) -> list[np.ndarray]:
        fn = self.function(name)
        # np.ascontiguousarray would turn rank-0 arrays into rank 1.
        inputs = [np.require(a, requirements="C") for a in arrays]
        try:
            if self._staged:
                return self._call_staged(fn, inputs)
            out = fn(*inputs)
        except (RuntimeError, ValueError) as e:
            raise TenzrError(f"running '{name}' on {self.target.name} failed: {e}") from None
        results: Sequence = out if isinstance(out, (list, tuple)) else [out]
        return [np.asarray(r.to_host()) for r in results]

    def _call_staged(self, fn, inputs: list[np.ndarray]) -> list[np.ndarray]:
        device = self._config.device
        reflection = fn.vm_function.reflection
        arg_types = reflection.get("tenzr.args", "").split(",")
        result_types = reflection.get("tenzr.results", "").split(",")
        args = rt.VmVariantList(len(inputs))
        for i, a in enumerate(inputs):
            if i < len(arg_types) and arg_types[i] in WIDENED:
                a = a.astype(numpy_dtype(WIDENED[arg_types[i]]))
            view = device.allocator.allocate_buffer_copy(
                memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT, device=device,
                buffer=a.astype(np.int8) if a.dtype == np.bool_ else a,
                element_type=rt.array_interop.map_dtype_to_element_type(a.dtype))
            args.push_ref(view)
        results = rt.VmVariantList(8)
        self._context.vm_context.invoke(fn.vm_function, args, results)
        out = [_read_back(device, results.get_as_object(i, rt.HalBufferView)) for i in range(len(results))]
        return [r.astype(numpy_dtype(result_types[i])) if i < len(result_types) and result_types[i] in WIDENED else r
                for i, r in enumerate(out)]


def _read_back(device: rt.HalDevice, view: rt.HalBufferView) -> np.ndarray:
    """Copies a device buffer into a host-visible staging buffer, then into NumPy.

    (IREE's DeviceArray.to_host imports host memory for the copy, which lavapipe refuses.)
    """
    source = view.get_buffer()
    staging = device.allocator.allocate_buffer(
        memory_type=int(rt.MemoryType.HOST_LOCAL) | int(rt.MemoryType.DEVICE_VISIBLE),
        allowed_usage=int(rt.BufferUsage.TRANSFER_TARGET) | int(rt.BufferUsage.MAPPING_SCOPED),
        allocation_size=source.byte_length())
    semaphore = device.create_semaphore(0)
    device.queue_copy(source, staging, wait_semaphores=rt.HalFence.create_at(semaphore, 0),
                      signal_semaphores=rt.HalFence.create_at(semaphore, 1))
    rt.HalFence.create_at(semaphore, 1).wait()
    dtype = rt.HalElementType.map_to_dtype(view.element_type)
    return np.array(staging.map().asarray(tuple(view.shape), dtype))
