"""Forward mode: a jvp's cost over the forward pass, a Hessian-vector product's (jvp of
grad) over the gradient, on the benchmark models; and a full Hessian of a 100-parameter
function against `jax.hessian`, in one process.

    python benchmarks/forward.py [--rounds 20] [--models MLP,CNN]

Each figure is the median over `--rounds` interleaved runs after a warm-up, wall time with
the CPU time beside it; the machine's load average is printed first (these machines are
shared). Goals: jvp / forward <= 2.0, or the jvp's product FLOPs over the forward's where
products dominate and that ratio is higher (`Model.jvp_flop_ratio`: 2.40 for the MLP, 3.0
for the transformer); Hessian-vector product / gradient <= 3.0.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from frameworks import _JaxOps, block  # noqa: E402
from models import MODELS  # noqa: E402

import tenzr as tz  # noqa: E402


def medians(callables: dict, args: tuple, rounds: int) -> dict[str, tuple[float, float]]:
    """name -> (median wall seconds, median CPU seconds), the callables interleaved."""
    for fn in callables.values():
        for _ in range(3):
            block(fn(*args))
    walls: dict[str, list[float]] = {k: [] for k in callables}
    cpus: dict[str, list[float]] = {k: [] for k in callables}
    order = list(callables.items())
    for i in range(rounds):
        for name, fn in order[i % len(order):] + order[:i % len(order)]:
            wall, cpu = time.perf_counter(), time.process_time()
            block(fn(*args))
            walls[name].append(time.perf_counter() - wall)
            cpus[name].append(time.process_time() - cpu)
    return {k: (statistics.median(walls[k]), statistics.median(cpus[k])) for k in callables}


def forward_mode_functions(xp, ops, grad, jvp, jit, loss, data):
    def f(params):
        return loss(xp, ops, params, *data)

    return {
        "forward": jit(lambda p, t: f(p)),
        "jvp": jit(lambda p, t: jvp(f, (p,), (t,))),
        "grad": jit(lambda p, t: grad(f)(p)),
        "hvp": jit(lambda p, t: jvp(grad(f), (p,), (t,))[1]),
    }


def show(seconds: tuple[float, float]) -> str:
    return f"{seconds[0] * 1e3:8.2f} ms (CPU {seconds[1] * 1e3:7.2f})"


def hessian_problem():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((50, 100)) / 10

    def f(xp):
        return lambda x: (xp.tanh(w @ x) ** 2).sum() + (x ** 4).sum() * 0.01 + (x[:-1] * x[1:]).sum()

    return f, rng.standard_normal(100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--models", default=",".join(m.name for m in MODELS))
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        jax = None
    wanted = args.models.split(",")
    for model in [m for m in MODELS if m.name in wanted]:
        params, *data = model.make_inputs()
        rng = np.random.default_rng(1)
        tangent = jax_tree_map(lambda a, rng=rng: rng.standard_normal(a.shape).astype(a.dtype), params)
        ours = forward_mode_functions(tz, tz.nn, tz.grad, tz.jvp, tz.jit, model.loss, data)
        times = {f"tz {k}": v for k, v in medians(ours, (params, tangent), args.rounds).items()}
        if jax is not None:
            theirs = forward_mode_functions(jnp, _JaxOps(jax), jax.grad, jax.jvp, jax.jit, model.loss, data)
            times |= {f"jax {k}": v for k, v in medians(theirs, (params, tangent), args.rounds).items()}
        print(f"\n{model.name}")
        for name, t in times.items():
            print(f"  {name:12s} {show(t)}")
        for who in ("tz", "jax"):
            if f"{who} forward" in times:
                print(f"  {who}: jvp / forward {times[f'{who} jvp'][0] / times[f'{who} forward'][0]:.2f}, "
                      f"hvp / grad {times[f'{who} hvp'][0] / times[f'{who} grad'][0]:.2f}")
        if model.jvp_flop_ratio is not None:
            print(f"  the jvp's product FLOPs over the forward's: {model.jvp_flop_ratio:.2f}")
    f, x = hessian_problem()
    hessians = {"tz hessian": tz.jit(tz.hessian(f(tz)))}
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
        hessians["jax hessian"] = jax.jit(jax.hessian(f(jnp)))
    times = medians(hessians, (x,), args.rounds)
    print("\nfull Hessian of a 100-parameter function (float64, 100x100)")
    for name, t in times.items():
        print(f"  {name:12s} {show(t)}")
    if jax is not None:
        error = np.abs(hessians["tz hessian"](x) - np.asarray(hessians["jax hessian"](x))).max()
        print(f"  tz / jax {times['tz hessian'][0] / times['jax hessian'][0]:.2f}, max |difference| {error:.2e}")


def jax_tree_map(fn, tree):
    if isinstance(tree, dict):
        return {k: jax_tree_map(fn, v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(jax_tree_map(fn, v) for v in tree)
    return fn(tree)


if __name__ == "__main__":
    main()
