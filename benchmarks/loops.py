"""Loops: compile time against the trip count, the step times of a scanned RNN's gradient
and of a scan stacking a wide carry (and its gradient) against JAX's `lax.scan` in one
process, and the peak memory of a 10,000-step gradient with and without `checkpoint_every`.

    python benchmarks/loops.py [--repeats 7]

Compile times are medians over `--repeats` compiles, each in a fresh disk cache (so IREE
really compiles). Step times are medians over 30 runs after WARM_UP calls, wall and CPU time;
the machine's load average is printed first (these machines are shared). Peak memory is
each new process's peak resident set, beside what it held before the first call.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

import tenzr as tz
from tenzr.runtime import _DriverChoice


def rnn_loss(np_, lax_, h0):
    def loss(w, xs):
        def step(h, x):
            h = np_.tanh(w @ h + x)
            return h, (h * h).sum()

        return lax_.scan(step, h0, xs)[1].sum()

    return loss


def stacking_loss(np_, lax_, steps: int):
    """A scan stacking its wide carry at every step (its body past scan's automatic unrolling):
    what tenzr-block-loop-writes writes in blocks."""
    def loss(c):
        def step(h, _):
            for _ in range(30):
                h = h * h * 0.3 + 0.1
            return h, h

        return lax_.scan(step, c, None, length=steps)[1].sum()

    return loss


def compile_seconds(steps: int, hidden: int, repeats: int) -> float:
    w = np.zeros((hidden, hidden), np.float32)
    xs = np.zeros((steps, hidden), np.float32)
    times = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as cache:
            os.environ["TENZR_CACHE_DIR"] = cache
            tz.clear_caches()
            start = time.perf_counter()
            tz.jit(tz.grad(rnn_loss(tz, tz.lax, np.zeros(hidden, np.float32)))).compiled(w, xs)
            times.append(time.perf_counter() - start)
    return float(np.median(times))


WARM_UP = _DriverChoice.FIRST + sum(_DriverChoice.PROBES.values()) + 1
"""Calls before timing: past the first measurement of Tenzr's CPU drivers (its first calls
and probes, one of them a warm-up), whose slower driver's calls would count otherwise."""


def timed(fn, *args, runs: int = 30) -> tuple[float, float]:
    """Median wall and CPU seconds of fn(*args), after WARM_UP calls."""
    for _ in range(WARM_UP):
        fn(*args)
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        out = fn(*args)
        if hasattr(out, "block_until_ready"):
            out.block_until_ready()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return float(np.median(walls)), float(np.median(cpus))


PEAK_STEPS, PEAK_STATE = 10_000, 10_000


def peak_child(every: int) -> None:
    """In a new process: the gradient of an Euler integration of PEAK_STEPS steps of a
    PEAK_STATE-wide state (a scan without xs, so the carries are what the gradient keeps);
    prints the peak resident set (MB) before and after the call, and the call's seconds."""
    w = np.linspace(0.5, 1.5, PEAK_STATE, dtype=np.float32)

    def loss(w):
        def step(y, _):
            return y + 0.001 * tz.sin(y) * w, None

        return tz.lax.scan(step, w, None, length=PEAK_STEPS, checkpoint_every=every or None)[0].sum()

    f = tz.jit(tz.grad(loss))
    f.compiled(w)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    np.asarray(f(w))
    print(before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, time.perf_counter() - start)


def peak_mb(every: int) -> tuple[float, float, float]:
    done = subprocess.run([sys.executable, __file__, "--peak-child", str(every)], capture_output=True, text=True,
                          check=True)
    before, after, seconds = done.stdout.split()
    return float(before), float(after), float(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--peak-child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peak_child is not None:
        peak_child(args.peak_child)
        return
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for every in (0, 100):
        before, after, seconds = peak_mb(every)
        print(f"gradient of a {PEAK_STEPS:,}-step scan of a {PEAK_STATE:,}-float state, "
              f"{f'checkpoint_every={every}' if every else 'every carry kept'}: peak {after:.0f} MB "
              f"({after - before:.0f} MB more than before the call), {seconds:.2f} s")
    short, long = compile_seconds(10, 64, args.repeats), compile_seconds(1000, 64, args.repeats)
    print(f"compile tz.jit(tz.grad(rnn)), scan of 10 steps {short:.2f} s, of 1,000 steps {long:.2f} s "
          f"(ratio {long / short:.2f})")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        print("(JAX is not installed: no step-time comparison)")
        return
    rng = np.random.default_rng(0)
    for hidden, steps in [(64, 1000), (256, 1000)]:
        w = (rng.standard_normal((hidden, hidden)) * 0.1).astype(np.float32)
        xs = rng.standard_normal((steps, hidden)).astype(np.float32)
        h0 = np.zeros(hidden, np.float32)
        ours = tz.jit(tz.grad(rnn_loss(tz, tz.lax, h0)))
        theirs = jax.jit(jax.grad(rnn_loss(jnp, jax.lax, h0)))
        np.testing.assert_allclose(ours(w, xs), theirs(w, xs), rtol=1e-3, atol=1e-3)
        (tw, tc), (jw, jc) = timed(ours, w, xs), timed(theirs, w, xs)
        print(f"grad of a {steps}-step scan, hidden {hidden}: tenzr {tw * 1e3:.1f} ms (cpu {tc * 1e3:.1f}), "
              f"jax {jw * 1e3:.2f} ms (cpu {jc * 1e3:.2f}), ratio {tw / jw:.1f}")
    jax.config.update("jax_enable_x64", True)
    for width, steps in [(1024, 256), (256, 1000)]:
        c = np.linspace(0.0, 1.0, width)
        for what, ours, theirs in [("", tz.jit(stacking_loss(tz, tz.lax, steps)),
                                    jax.jit(stacking_loss(jnp, jax.lax, steps))),
                                   ("grad of ", tz.jit(tz.grad(stacking_loss(tz, tz.lax, steps))),
                                    jax.jit(jax.grad(stacking_loss(jnp, jax.lax, steps))))]:
            np.testing.assert_allclose(ours(c), theirs(c), rtol=1e-9)
            (tw, tc), (jw, jc) = timed(ours, c), timed(theirs, c)
            print(f"{what}a {steps}-step scan stacking {width} float64s a step: tenzr {tw * 1e3:.1f} ms "
                  f"(cpu {tc * 1e3:.1f}), jax {jw * 1e3:.2f} ms (cpu {jc * 1e3:.2f}), ratio {tw / jw:.1f}")


if __name__ == "__main__":
    main()
