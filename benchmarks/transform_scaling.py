"""How fast tenzr-grad and the lowering run on large programs (ops per second).

    python benchmarks/transform_scaling.py [--sizes 10000,100000] [--profile 20]

Builds a program of N tenzr ops (a mix of elementwise, broadcasting, reductions, matmuls
and shape ops with fan-out), then times tenzr-grad (mode=value_and_grad) and
convert-tenzr-to-stablehlo separately on it. `--profile N` adds, for the first size, the
N functions with the most time of their own under cProfile (which roughly doubles the
timings). Measured 2026-12-04 (AMD EPYC, 100,000 ops, 5.0-5.2 CPU-s in all at load 1-2.4):
the reverse sweep's rules and accumulation 2.5 s, activity analysis 0.3 s, dead-code removal
under 0.1 s (it looks only at the forward ops and the cotangents the sweep dropped; reading
back all 425,000 ops of the derived function took 0.6 s), the lowering 1.8 s (0.25 s of it
finding the tenzr ops among them). A bare `ir.Operation.create` takes about 1 us, an
elementwise `sh.*` op 1.5-2.5 us, a `sh.reduce` 10 us (a clone of a template; building its
region took 18), reading one operand or result back with its type about 0.5 us, and
decoding a tenzr op (`view`) 3-5 us. Deterministically (callgrind, 5,000 ops, the build
subtracted): 343,000 instructions per source op (592,000 on 2026-12-03).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import time

import numpy as np

from tenzr.dialect import TensorSpec, make_context
from tenzr.dialect import ops as T
from tenzr.dialect.context import functions
from tenzr.dialect.functions import build_function, new_module
from tenzr.dialect.opdef import dense_constant
from tenzr.passes.convert_tenzr_to_stablehlo import lower_module
from tenzr.passes.tenzr_grad import differentiate


def build(n: int):
    """@f(x: 8x8, w: 8x8) -> scalar with about n tenzr ops."""
    module = new_module()

    def body(args):
        x, w = args
        ops = 0
        h = x
        half = T.constant(value=dense_constant(np.array(0.5), TensorSpec((), "f32")))
        while ops < n - 2:
            k = ops % 8
            if k == 0:
                h = T.tanh(h)
            elif k == 1:
                h = T.mul(h, half)
            elif k == 2:
                h = T.add(h, x)
            elif k == 3:
                h = T.matmul(h, w)
            elif k == 4:
                h = T.sin(h)
            elif k == 5:
                h = T.transpose(h, permutation=[1, 0])
            elif k == 6:
                s = T.reduce_sum(h, axes=[1], keepdims=True)
                h = T.sub(h, s)
                ops += 1
            else:
                h = T.maximum(h, x)
            ops += 1
        return T.reduce_sum(h)

    build_function(module, "f", [TensorSpec((8, 8), "f32"), TensorSpec((8, 8), "f32")], body)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="print the top N functions")
    args = parser.parse_args()
    profiler = cProfile.Profile() if args.profile else None
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print("| tenzr ops | tenzr-grad CPU s | lowering CPU s | total CPU s (wall s) | ops per CPU-s | ops after grad |")
    print("|---|---|---|---|---|---|")
    for n in (int(s) for s in args.sizes.split(",")):
        with make_context():
            module = build(n)
            count = str(module).count('"tenzr.')
            if profiler:
                profiler.enable()
            wall, cpu = time.perf_counter(), time.process_time()
            derived = differentiate(module, "f", (), "value_and_grad")
            grad_cpu, grad_wall = time.process_time() - cpu, time.perf_counter() - wall
            if profiler:
                profiler.disable()
            functions(module)["f"].erase()  # only the derived function is lowered (and measured)
            grown = str(derived).count("\n")  # (printing is not part of either timing)
            if profiler:
                profiler.enable()
            wall, cpu = time.perf_counter(), time.process_time()
            lower_module(module)
            lower_cpu, lower_wall = time.process_time() - cpu, time.perf_counter() - wall
            if profiler:
                profiler.disable()
        total = grad_cpu + lower_cpu
        print(f"| {count} | {grad_cpu:.2f} | {lower_cpu:.2f} | {total:.2f} ({grad_wall + lower_wall:.2f}) | "
              f"{count / total:,.0f} | {grown} |")
        if profiler:
            pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile)
            profiler = None


if __name__ == "__main__":
    main()
