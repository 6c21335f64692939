"""The CUDA tests for a GPU machine that cannot install Tenzr (no IREE compiler, no network).

    python tests/python/cuda_replay.py record BUNDLE [TARGET]  # here: compile for CUDA (or TARGET), record
    python tests/python/cuda_run_bundle.py BUNDLE OUT.npz   # there: run every call on the GPU
    python tests/python/cuda_replay.py check BUNDLE OUT.npz  # here: judge the GPU's results

`record` compiles the op table's forward rows and float64 VJP rows for CUDA, then runs the
same checks as test_targets_cuda.py on CPU, logging every call (function and inputs; the
checks' inputs never depend on output values). `check` replays those checks with the
GPU's outputs in place of the program: forward values against NumPy, VJPs against
central differences, exactly the assertions of the CUDA tests.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
from harness import check_forward, check_vjp, compile_rows, compile_rows_vmfb
from op_table import GRAD_ROWS, ROWS

from tenzr.targets import Target

CHECKS: dict[str, tuple[list, Callable, bool]] = {
    "forward": (ROWS, check_forward, False),
    "vjp": (GRAD_ROWS, check_vjp, True),
}


class _Recorder:
    def __init__(self, program, name: str, calls: list):
        self.program, self.name, self.calls = program, name, calls

    def __call__(self, function: str, *arrays: np.ndarray) -> list[np.ndarray]:
        out = self.program(function, *arrays)
        self.calls.append((self.name, function, [np.asarray(a) for a in arrays], len(out)))
        return out


class _Replayer:
    def __init__(self, name: str, calls: list, first: int, outputs, errors: dict):
        self.name, self.calls, self.next, self.outputs, self.errors = name, calls, first, outputs, errors

    def __call__(self, function: str, *arrays: np.ndarray) -> list[np.ndarray]:
        k = self.next
        self.next += 1
        program, recorded, _, count = self.calls[k]
        assert (program, recorded) == (self.name, function), "the replay left the recorded sequence"
        if str(k) in self.errors:
            raise RuntimeError(f"on the GPU: {self.errors[str(k)]}")
        return [self.outputs[f"c{k}_{j}"] for j in range(count)]


def record(bundle: Path, target: str = "cuda") -> None:
    bundle.mkdir(parents=True, exist_ok=True)
    calls: list = []
    rows_log = []
    for name, (rows, check, grad) in CHECKS.items():
        (bundle / f"{name}.vmfb").write_bytes(compile_rows_vmfb(rows, grad=grad, target=Target(target)))
        recorder = _Recorder(compile_rows(rows, grad=grad), name, calls)
        for i, row in enumerate(rows):
            first = len(calls)
            check(recorder, i, row)  # passes on CPU (the CPU tests say so)
            rows_log.append({"kind": name, "index": i, "first": first})
    arrays = {f"c{k}_{i}": a for k, (_, _, inputs, _) in enumerate(calls) for i, a in enumerate(inputs)}
    np.savez(bundle / "calls.npz", **arrays)
    manifest = {"programs": list(CHECKS), "rows": rows_log,
                "calls": [[program, function, len(inputs), count] for program, function, inputs, count in calls]}
    (bundle / "calls.json").write_text(json.dumps(manifest))
    size = sum(f.stat().st_size for f in bundle.iterdir()) / 2**20
    print(f"recorded {len(calls)} calls for {len(rows_log)} checks in {bundle} ({size:.1f} MiB)")


def check(bundle: Path, outputs_path: Path) -> int:
    manifest = json.loads((bundle / "calls.json").read_text())
    outputs = np.load(outputs_path)
    errors_path = outputs_path.with_suffix(".errors.json")
    errors = json.loads(errors_path.read_text()) if errors_path.exists() else {}
    failed = []
    counts = {name: 0 for name in CHECKS}
    for entry in manifest["rows"]:
        rows, check_row, _ = CHECKS[entry["kind"]]
        row = rows[entry["index"]]
        try:
            check_row(_Replayer(entry["kind"], manifest["calls"], entry["first"], outputs, errors), entry["index"], row)
            counts[entry["kind"]] += 1
        except (AssertionError, RuntimeError) as e:
            failed.append(f"{entry['kind']} {row.name}: {str(e).strip().splitlines()[0][:200]}")
    for name, (rows, _, _) in CHECKS.items():
        print(f"{name}: {counts[name]} of {len(rows)} rows pass")
    for line in failed:
        print("  FAILED", line)
    return 1 if failed else 0


def main() -> int:
    sys.path.insert(0, str(Path(__file__).parent))
    if len(sys.argv) in (3, 4) and sys.argv[1] == "record":
        record(Path(sys.argv[2]), *sys.argv[3:])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "check":
        return check(Path(sys.argv[2]), Path(sys.argv[3]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
