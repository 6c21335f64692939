"""Per-example gradients: 64 gradients of an MLP (784-256-10) by `tz.vmap(tz.grad(loss))`
against the batch gradient of the same 64 examples, and against JAX's `vmap(grad)`, in one
process. Then 16 per-example gradients of a tanh RNN scanned over 100 steps (hidden 32):
the vmapped scan against 16 gradient calls one after the other, and against JAX.

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
    rnn(args.rounds)


def rnn_loss(np_, lax):
    def one(w, h, seq):
        return lax.scan(lambda c, x: (np_.tanh(c @ w + x), None), h, seq)[0].sum()

    return one


def rnn(rounds: int) -> None:
    rng = np.random.default_rng(1)
    w = (rng.standard_normal((32, 32)) / 6).astype(np.float32)
    h = rng.standard_normal((16, 32)).astype(np.float32)
    seqs = rng.standard_normal((16, 100, 32)).astype(np.float32)
    one = tz.jit(tz.grad(rnn_loss(tz, tz.lax)))
    fns = {"tz vmapped scan": tz.jit(tz.vmap(tz.grad(rnn_loss(tz, tz.lax)), in_axes=(None, 0, 0))),
           "tz one by one": lambda w, h, seqs: [one(w, h[k], seqs[k]) for k in range(len(h))]}
    try:
        import jax
        fns["jax vmapped scan"] = jax.jit(jax.vmap(jax.grad(rnn_loss(jax.numpy, jax.lax)), in_axes=(None, 0, 0)))
    except ImportError:
        pass
    error = float(np.abs(fns["tz vmapped scan"](w, h, seqs) - np.stack(fns["tz one by one"](w, h, seqs))).max())
    times = medians(fns, (w, h, seqs), rounds)
    print("16 per-example gradients of a 100-step RNN (hidden 32)")
    for name, t in times.items():
        print(f"  {name:16s} {show(t)}")
    print(f"  vmapped / one by one {times['tz vmapped scan'][0] / times['tz one by one'][0]:.2f}")
    if "jax vmapped scan" in times:
        print(f"  vmapped tz / jax {times['tz vmapped scan'][0] / times['jax vmapped scan'][0]:.2f}")
    print(f"  max |vmapped - one by one| {error:.2e}")


if __name__ == "__main__":
    main()
