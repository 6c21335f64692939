"""What one compiled call costs beyond its kernels: Tenzr against JAX on programs too small
to take time of their own.

    python benchmarks/call_overhead.py [--calls 2000]

Times, interleaved in one process, a one-op function (one input, one output) and the
value_and_grad of a three-layer 4-wide MLP (seven inputs, seven outputs: the MLP
benchmark's call shape), each called on NumPy arrays, and prints the medians, the
Tenzr/JAX ratio, the CPU time per call and the machine's load. Tenzr's part is Python
(flattening the arguments, importing them, mapping the results) and IREE's invocation.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np


def _cases(tz, jax):
    x = np.ones(4, np.float32)
    params = [{"w": np.ones((4, 4), np.float32), "b": np.ones(4, np.float32)} for _ in range(3)]

    def mlp(p, a):  # (the arrays' own methods: the same code traces in both frameworks)
        return sum(((a @ layer["w"] + layer["b"]) ** 2).sum() for layer in p)

    return {
        "one op (1 in, 1 out)": ((x,), tz.jit(lambda a: a + 1), jax.jit(lambda a: a + 1)),
        "MLP value_and_grad (7 in, 7 out)": ((params, x), tz.jit(tz.value_and_grad(mlp)),
                                             jax.jit(jax.value_and_grad(mlp))),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    import jax

    import tenzr as tz

    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    print("| program | Tenzr us | JAX us | Tenzr/JAX | Tenzr CPU us | JAX CPU us |\n|---|---|---|---|---|---|")
    for name, (inputs, ours, theirs) in _cases(tz, jax).items():
        times: dict[str, list[float]] = {"tz": [], "jax": []}
        cpu = {"tz": 0.0, "jax": 0.0}
        for fn in (ours, theirs):
            for _ in range(200):
                jax.block_until_ready(fn(*inputs))
        for i in range(args.calls):
            for key, fn in (("tz", ours), ("jax", theirs)) if i % 2 else (("jax", theirs), ("tz", ours)):
                c, start = time.process_time(), time.perf_counter()
                jax.block_until_ready(fn(*inputs))
                times[key].append(time.perf_counter() - start)
                cpu[key] += time.process_time() - c
        ours_us, theirs_us = (statistics.median(times[k]) * 1e6 for k in ("tz", "jax"))
        print(f"| {name} | {ours_us:.1f} | {theirs_us:.1f} | {ours_us / theirs_us:.2f}x | "
              f"{cpu['tz'] / args.calls * 1e6:.1f} | {cpu['jax'] / args.calls * 1e6:.1f} |")


if __name__ == "__main__":
    main()
