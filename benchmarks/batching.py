"""Per-example gradients: 64 gradients of an MLP (784-256-10) by `tz.vmap(tz.grad(loss))`
against the batch gradient of the same 64 examples, and against JAX's `vmap(grad)`, in one
process.

    python benchmarks/batching.py [--rounds 30]

Medians over `--rounds` interleaved runs after a warm-up, wall time with CPU time beside
it; the load average is printed first (these machines are shared). Goal: per-example over
batch gradient <= 2 (JAX measures about 1 here).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from forward import medians, show

import tenzr as tz


def loss(np_, nn):
    def one(params, x, y):
        h = np_.tanh(x @ params["w1"] + params["b1"])
        return -(nn.log_softmax(h @ params["w2"] + params["b2"]) * y).sum()

    return one


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    rng = np.random.default_rng(0)
    params = {"w1": (rng.standard_normal((784, 256)) / 28).astype(np.float32), "b1": np.zeros(256, np.float32),
              "w2": (rng.standard_normal((256, 10)) / 16).astype(np.float32), "b2": np.zeros(10, np.float32)}
    x = rng.standard_normal((64, 784)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)]
    one = loss(tz, tz.nn)
    fns = {"tz per-example": tz.jit(tz.vmap(tz.grad(one), in_axes=(None, 0, 0))),
           "tz batch": tz.jit(tz.grad(lambda p, x, y: one(p, x, y)))}
    try:
        import jax
        import jax.numpy as jnp
        jone = loss(jnp, jax.nn)
        fns["jax per-example"] = jax.jit(jax.vmap(jax.grad(jone), in_axes=(None, 0, 0)))
        fns["jax batch"] = jax.jit(jax.grad(jone))
    except ImportError:
        pass
    per = tz.jit(tz.vmap(tz.grad(one), in_axes=(None, 0, 0)))(params, x, y)
    total = fns["tz batch"](params, x, y)
    error = max(float(np.abs(per[k].sum(axis=0) - total[k]).max()) for k in total)
    times = medians(fns, (params, x, y), args.rounds)
    for name, t in times.items():
        print(f"  {name:16s} {show(t)}")
    for who in ("tz", "jax"):
        if f"{who} batch" in times:
            print(f"  {who}: per-example / batch {times[f'{who} per-example'][0] / times[f'{who} batch'][0]:.2f}")
    if "jax per-example" in times:
        print(f"  per-example tz / jax {times['tz per-example'][0] / times['jax per-example'][0]:.2f}")
    print(f"  max |sum of per-example gradients - batch gradient| {error:.2e}")


if __name__ == "__main__":
    main()
