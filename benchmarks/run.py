"""Tenzr against JAX on the same machine, in the same run.

    python benchmarks/run.py            # every model, medians over interleaved runs
    python benchmarks/run.py --quick    # about 30 seconds: MLP and chain only
    python benchmarks/run.py --load 2   # the steps again beside 2 busy processes

For each model: forward and value_and_grad step times (medians of interleaved runs after
warm-up), the grad/forward ratio, the cold compile split into trace, tenzr-grad, lowering
and IREE, the warm disk-cache hit and the time to first result in a new process, the first
call's wall and CPU time in a new process with an empty cache, and the peak memory of a
process that runs the step. JAX runs when installed (`pip install -e .[bench]`);
every figure then gets a Tenzr/JAX ratio. Writes benchmarks/results.md and results.png.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from frameworks import block, jax_functions, tenzr_functions  # noqa: E402
from models import MODELS, Model  # noqa: E402


def interleaved_times(callables: dict, args: tuple, rounds: int, warmup: int = 3) -> dict[str, float]:
    """Each callable's median time, and its mean as `<name>_mean` (a median hides calls that
    now and then take twice as long; a mean does not)."""
    for fn in callables.values():
        for _ in range(warmup):
            block(fn(*args))
    times: dict[str, list[float]] = {k: [] for k in callables}
    order = list(callables.items())
    for i in range(rounds):
        # Each round starts one later, so no step always runs right after the same other
        # step (a step run just after JAX's gradient measured slower than after our own).
        for name, fn in order[i % len(order):] + order[:i % len(order)]:
            start = time.perf_counter()
            block(fn(*args))
            times[name].append(time.perf_counter() - start)
    return {**{k: statistics.median(v) for k, v in times.items()},
            **{f"{k}_mean": statistics.mean(v) for k, v in times.items()}}


CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {here!r})
from models import {name} as model
args = model.make_inputs()
from frameworks import block, jax_functions, tenzr_functions
step = (tenzr_functions if {framework!r} == "tenzr" else jax_functions)(model)[1]
def cpu():  # this process's and its children's (IREE's compiler's) CPU seconds
    usage = map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return sum(r.ru_utime + r.ru_stime for r in usage)
imported, cpu_imported = time.perf_counter(), cpu()
hit = None
if hasattr(step, "compiled"):  # Tenzr: trace, differentiate, lower, hash, load from the disk cache
    step.compiled(*args)
    hit = time.perf_counter() - imported
block(step(*args))
first, cpu_first = time.perf_counter(), cpu()
for _ in range(5):
    block(step(*args))
# VmHWM, not ru_maxrss: the latter starts from the parent's size after fork.
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(json.dumps({{"import": imported - t0, "hit": hit, "first": first - imported,
                  "first_cpu": cpu_first - cpu_imported, "peak_mb": peak / 1024}}))
"""


def child_run(model: Model, framework: str, cache: str) -> dict:
    code = CHILD.format(here=str(HERE), name=model.name.upper() if model.name != "chain" else "CHAIN",
                        framework=framework)
    env = {**os.environ, "TENZR_CACHE_DIR": cache}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def benchmark(model: Model, rounds: int, processes: bool, cache: str, load: int) -> dict:
    args = model.make_inputs()
    fwd, vag = tenzr_functions(model)
    cold = vag.compiled(*args).timings
    fwd.compiled(*args)
    result = {"model": model.name, "compile": cold}
    callables = {"tz_fwd": fwd, "tz_vag": vag}
    jax_fns = jax_functions(model)
    if jax_fns is not None:
        jfwd, jvag = jax_fns
        start = time.perf_counter()
        block(jvag(*args))
        result["jax_compile"] = time.perf_counter() - start
        callables.update({"jax_fwd": jfwd, "jax_vag": jvag})
        value_tz, value_jax = float(vag(*args)[0]), float(jvag(*args)[0])
        result["agree"] = abs(value_tz - value_jax) <= 1e-3 * (1 + abs(value_jax))
    with busy(load):
        result.update(interleaved_times(callables, args, rounds))
    if processes:
        result["tz_process"] = child_run(model, "tenzr", cache)
        with tempfile.TemporaryDirectory() as empty:
            result["tz_cold_process"] = child_run(model, "tenzr", empty)
        if jax_fns is not None:
            result["jax_process"] = child_run(model, "jax", cache)
    return result


@contextlib.contextmanager
def busy(count: int):
    """`count` processes spinning on the CPU for as long as the block runs (a busy machine)."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        time.sleep(0.5 if count else 0)
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}"


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a and b else "-"


def cpu_name() -> str:
    """The CPU model and whether it has AVX-512 (which decides IREE's flags: tenzr.targets)."""
    from tenzr.targets import Target, host_cpu_flags

    model = next((line.split(":", 1)[1].strip() for line in host_cpu_flags().splitlines()
                  if line.startswith("model name")), platform.processor() or platform.machine())
    return f"{model}, {'AVX-512' if Target().has_avx512() else 'no AVX-512'}"


def matmul_peak(n: int = 2048, runs: int = 10) -> float:
    """The practical peak of this machine, in GFLOP/s: NumPy's (BLAS) float32 n×n×n
    matmul, median of `runs`."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n), np.float32), rng.standard_normal((n, n), np.float32)
    a @ b
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    return 2 * n**3 / statistics.median(times) / 1e9


def gflops(model_name: str, seconds: float, peak: float) -> str:
    flops = next(m.step_flops for m in MODELS if m.name == model_name)
    return f"{flops / seconds / 1e9:.1f} | {flops / seconds / 1e9 / peak:.0%}" if flops else "- | -"


def report(results: list[dict], quick: bool, peak: float, load: int) -> str:
    cpu = cpu_name()
    lines = [f"# Tenzr benchmarks ({date.today().isoformat()}, {os.cpu_count()} cores, {cpu}, "
             f"{'quick' if quick else 'full'} run)", "",
             *([f"Steps timed beside {load} busy processes (--load {load}); compiles without them.", ""]
               if load else []),
             "Medians over interleaved runs after warm-up (and the means' ratio), float32, CPU. Ratios are "
             "Tenzr/JAX (lower is better "
             f"for Tenzr). Tenzr's v&g GFLOP/s counts the step's products (models.Model.step_flops); the peak is "
             f"NumPy's 2048³ float32 matmul in this run: {peak:.0f} GFLOP/s.", "",
             "| model | Tenzr fwd ms | Tenzr v&g ms | Tenzr grad/fwd | JAX fwd ms | JAX v&g ms | JAX grad/fwd | "
             "v&g Tenzr/JAX | v&g Tenzr/JAX, means | fwd Tenzr/JAX | GFLOP/s (v&g) | of peak |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(
            f"| {r['model']} | {ms(r['tz_fwd'])} | {ms(r['tz_vag'])} | {r['tz_vag'] / r['tz_fwd']:.2f} | "
            f"{ms(r['jax_fwd']) if 'jax_fwd' in r else '-'} | {ms(r['jax_vag']) if 'jax_vag' in r else '-'} | "
            f"{r['jax_vag'] / r['jax_fwd']:.2f} | " if 'jax_fwd' in r else f"| {r['model']} | {ms(r['tz_fwd'])} | "
            f"{ms(r['tz_vag'])} | {r['tz_vag'] / r['tz_fwd']:.2f} | - | - | - | ")
        lines[-1] += (f"{ratio(r['tz_vag'], r.get('jax_vag'))} | "
                      f"{ratio(r.get('tz_vag_mean'), r.get('jax_vag_mean'))} | "
                      f"{ratio(r['tz_fwd'], r.get('jax_fwd'))} | "
                      f"{gflops(r['model'], r['tz_vag'], peak)} |")
    lines += ["", "Cold compile of value_and_grad (seconds) and a new process with a warm cache:", "",
              "| model | trace | tenzr-grad | lowering | IREE | total | JAX compile | warm-cache hit | "
              "first result (warm cache) | import | peak MB Tenzr | peak MB JAX |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        c = r["compile"]
        total = sum(c.values())
        tp, jp = r.get("tz_process", {}), r.get("jax_process", {})
        lines.append(f"| {r['model']} | {c.get('trace', 0):.3f} | {c.get('tenzr-grad', 0):.3f} | "
                     f"{c.get('lowering', 0):.3f} | {c.get('iree', 0):.3f} | {total:.2f} | "
                     f"{r.get('jax_compile', 0):.2f} | {tp.get('hit') or float('nan'):.3f} | "
                     f"{tp.get('first', float('nan')):.3f} | "
                     f"{tp.get('import', float('nan')):.2f} | {tp.get('peak_mb', float('nan')):.0f} | "
                     f"{jp.get('peak_mb', float('nan')):.0f} |")
    if any("tz_cold_process" in r for r in results):
        lines += ["", "The first call in a new process with an empty cache (seconds; CPU: the process's and IREE's "
                  "compiler's, from the first call to its result):", "",
                  "| model | Tenzr wall | Tenzr CPU | JAX wall | JAX CPU | CPU Tenzr/JAX |",
                  "|---|---|---|---|---|---|"]
        for r in results:
            tc, jp = r.get("tz_cold_process"), r.get("jax_process", {})
            if tc:
                lines.append(f"| {r['model']} | {tc['first']:.2f} | {tc['first_cpu']:.2f} | "
                             f"{jp.get('first', float('nan')):.2f} | {jp.get('first_cpu', float('nan')):.2f} | "
                             f"{ratio(tc['first_cpu'], jp.get('first_cpu'))} |")
    return "\n".join(lines) + "\n"


def chart(results: list[dict], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    names = [r["model"] for r in results]
    x = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(x - 0.2, [r["tz_vag"] * 1e3 for r in results], 0.4, label="Tenzr value_and_grad")
    if all("jax_vag" in r for r in results):
        ax.bar(x + 0.2, [r["jax_vag"] * 1e3 for r in results], 0.4, label="JAX value_and_grad")
    ax.set_xticks(x, names)
    ax.set_yscale("log")
    ax.set_ylabel("ms per step (log scale)")
    ax.legend()
    ax.set_title("value_and_grad step time, CPU, lower is better")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="MLP and chain only, few rounds, no subprocesses")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--models", default=None, help="comma-separated subset, e.g. MLP,CNN")
    parser.add_argument("--out", default=str(HERE / "results"), help="output path stem (.md, .png, .json)")
    parser.add_argument("--load", type=int, default=0, metavar="N", help="time the steps beside N busy processes")
    args = parser.parse_args()
    chosen = [m for m in MODELS if (args.models is None and (not args.quick or m.name in ("MLP", "chain")))
              or (args.models and m.name in args.models.split(","))]
    rounds = args.rounds or (10 if args.quick else 100)
    peak = matmul_peak()
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TENZR_CACHE_DIR"] = cache
        results = []
        for model in chosen:
            print(f"benchmarking {model.name} ...", flush=True)
            results.append(benchmark(model, rounds, processes=not args.quick, cache=cache, load=args.load))
    peak = max(peak, matmul_peak())  # before and after the models: the better of a noisy pair
    text = report(results, args.quick, peak, args.load)
    out = Path(args.out)
    out.with_suffix(".md").write_text(text)
    out.with_suffix(".json").write_text(json.dumps({"matmul_peak_gflops": peak, "models": results}, indent=1))
    if chart(results, out.with_suffix(".png")):
        text += f"\n![chart]({out.with_suffix('.png').name})\n"
    print(text)


if __name__ == "__main__":
    main()
