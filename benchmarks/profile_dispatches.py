"""Where a compiled step spends its time, dispatch by dispatch.

    python benchmarks/profile_dispatches.py CNN [--top 25] [--forward | --jvp | --hvp] [IREE flags...]

Lowers the model's value_and_grad (or, with --forward, its loss; with --jvp, the loss's jvp
along a random tangent of the parameters; with --hvp, the Hessian-vector product along it,
as the jvp of the gradient) exactly as `tz.jit` does, compiles it with Tenzr's IREE
flags for this CPU, then runs it under IREE's benchmark tool with host-execution profiling
and prints each dispatch's mean time per step (largest first), the dispatch count and
their sum (any other argument, such as `--iree-llvmcpu-enable-ukernels=all`, is passed to
IREE's compiler). The sum excludes IREE's per-dispatch scheduling overhead, so fewer dispatches
also matter. This is how the forms in conv_forms.md were chosen.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from models import MODELS  # noqa: E402

import tenzr as tz  # noqa: E402
from tenzr.compiler import compile_stablehlo  # noqa: E402
from tenzr.pytree import flatten  # noqa: E402
from tenzr.targets import WORKER_STACK_BYTES, Target  # noqa: E402


def _tool(name: str) -> str:
    found = shutil.which(name) or str(Path(sys.executable).parent / name)
    if not os.path.exists(found):
        sys.exit(f"error: IREE's '{name}' tool was not found (it comes with iree-base-runtime)")
    return found


def dispatch_times(profile: Path) -> list[tuple[str, float, int]]:
    """(dispatch name, mean microseconds per step, runs per step) from a profile bundle."""
    out = subprocess.run([_tool("iree-profile"), "statistics", "--format=jsonl", str(profile)],
                         capture_output=True, text=True, check=True).stdout
    rows: dict[str, dict] = {}
    for line in out.splitlines():
        row = json.loads(line)
        if row.get("function_name"):
            rows.setdefault(row["function_name"], row)
    steps = min(r["sample_count"] for r in rows.values())
    return [(name, r["total_duration_ns"] / steps / 1e3, r["sample_count"] // steps) for name, r in rows.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=[m.name for m in MODELS])
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--steps", type=int, default=50)
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument("--forward", action="store_true", help="profile the loss alone, not value_and_grad")
    kind.add_argument("--jvp", action="store_true", help="profile the loss's jvp along a tangent of the parameters")
    kind.add_argument("--hvp", action="store_true", help="profile the Hessian-vector product along that tangent")
    args, iree_flags = parser.parse_known_args()
    model = next(m for m in MODELS if m.name == args.model)
    inputs = model.make_inputs()

    def loss(*a):
        return model.loss(tz, tz.nn, *a)

    def jvp(params, tangent, *data):
        return tz.jvp(lambda p: loss(p, *data), (params,), (tangent,))

    def hvp(params, tangent, *data):
        return tz.jvp(tz.grad(lambda p: loss(p, *data)), (params,), (tangent,))[1]

    if args.jvp or args.hvp:
        rng = np.random.default_rng(1)
        tangent = tz.tree_util.tree_map(lambda a: rng.standard_normal(a.shape).astype(a.dtype), inputs[0])
        inputs = (inputs[0], tangent, *inputs[1:])
    step = loss if args.forward else jvp if args.jvp else hvp if args.hvp else tz.value_and_grad(loss)
    text = tz.jit(step).lower(*inputs)
    vmfb = compile_stablehlo(text, Target(), tuple(iree_flags))
    with tempfile.TemporaryDirectory() as tmp:
        module = Path(tmp, "step.vmfb")
        module.write_bytes(vmfb)
        command = [_tool("iree-benchmark-module"), f"--module={module}", "--function=main", "--device=local-task",
                   f"--task_worker_stack_size={WORKER_STACK_BYTES}",
                   f"--benchmark_min_time={args.steps}x", "--device_profiling_mode=host-execution",
                   f"--device_profiling_output={tmp}/step.ireeprof"]
        for i, leaf in enumerate(flatten(inputs)[0]):
            np.save(f"{tmp}/in{i}.npy", np.asarray(leaf))
            command.append(f"--input=@{tmp}/in{i}.npy")
        subprocess.run(command, capture_output=True, check=True)
        times = dispatch_times(Path(tmp, "step.ireeprof"))
    times.sort(key=lambda t: -t[1])
    for name, us, runs in times[:args.top]:
        print(f"{us:9.1f} us  x{runs}  {name}")
    print(f"{sum(t[1] for t in times):9.1f} us  in {sum(t[2] for t in times)} dispatches per step")


if __name__ == "__main__":
    try:
        main()
    except tz.TenzrError as error:  # (a flag IREE's compiler does not know, say)
        sys.exit(str(error))
