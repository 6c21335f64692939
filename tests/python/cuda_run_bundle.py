"""Runs a recorded CUDA bundle on a GPU machine that has only NumPy and IREE's runtime.

    python cuda_run_bundle.py BUNDLE OUTPUTS.npz [DRIVER]   (DRIVER: cuda, or local-task for a CPU bundle)

BUNDLE (made by `cuda_replay.py record`) holds compiled CUDA modules and every call the
CUDA tests make, with its inputs. Each call runs on the GPU, inputs copied into device
buffers and results copied back through a staging buffer (as tenzr.runtime does); the
results go to OUTPUTS.npz, for `cuda_replay.py check` to judge. Deliberately free of
Tenzr imports: the GPU machine has no IREE compiler and cannot install one.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import iree.runtime as rt
import numpy as np


def read_back(device: rt.HalDevice, view: rt.HalBufferView) -> np.ndarray:
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


def main() -> None:
    bundle, out = Path(sys.argv[1]), Path(sys.argv[2])
    manifest = json.loads((bundle / "calls.json").read_text())
    inputs = np.load(bundle / "calls.npz")
    config = rt.Config(sys.argv[3] if len(sys.argv) > 3 else "cuda")
    device = config.device
    contexts = {}
    for name in manifest["programs"]:
        context = rt.SystemContext(config=config)
        context.add_vm_module(rt.VmModule.copy_buffer(context.instance, (bundle / f"{name}.vmfb").read_bytes()))
        contexts[name] = context
    results, errors = {}, {}
    start = time.perf_counter()
    for k, (program, function, count, _) in enumerate(manifest["calls"]):
        try:
            context = contexts[program]
            vm_function = context.modules.module[function].vm_function
            args = rt.VmVariantList(count)
            for i in range(count):
                a = inputs[f"c{k}_{i}"]
                args.push_ref(device.allocator.allocate_buffer_copy(
                    memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT, device=device,
                    buffer=a.astype(np.int8) if a.dtype == np.bool_ else a,
                    element_type=rt.array_interop.map_dtype_to_element_type(a.dtype)))
            returned = rt.VmVariantList(8)
            context.vm_context.invoke(vm_function, args, returned)
            for j in range(len(returned)):
                results[f"c{k}_{j}"] = read_back(device, returned.get_as_object(j, rt.HalBufferView))
        except Exception as e:
            errors[str(k)] = f"{type(e).__name__}: {e}"
    np.savez(out, **results)
    out.with_suffix(".errors.json").write_text(json.dumps(errors, indent=1))
    print(f"ran {len(manifest['calls'])} calls on {device} in {time.perf_counter() - start:.1f} s; "
          f"{len(errors)} raised")
    for k, message in list(errors.items())[:10]:
        print(f"  call {k} {manifest['calls'][int(k)][:2]}: {message[:300]}")


if __name__ == "__main__":
    main()
