"""tz.distributed over MPI, two processes on this host under the `mpirun` of the
`distributed` extra: averaged shard gradients against the full batch's closed form, SGD
ranks in step with one process, and the errors (mismatched pytrees, a failing rank, a stuck
one, no MPI) arriving as clear errors, not hangs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mpi4py")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WORKER = HERE / "mpi_worker.py"
MPIRUN = Path(sys.executable).parent / "mpirun"


def run(*args: str, ranks: int | None = 2, timeout: float = 120) -> subprocess.CompletedProcess:
    """`python args...` under `mpirun -n ranks` (alone when ranks is None)."""
    env = dict(os.environ)
    if os.geteuid() == 0:  # (Open MPI refuses root unless told twice; CI runs as root)
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    command = [sys.executable, *args] if ranks is None else [str(MPIRUN), "-n", str(ranks), sys.executable, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)


def test_two_shards_average_to_the_full_batch_gradient(tmp_path):
    sys.path.insert(0, str(HERE))
    from mpi_worker import problem

    out = run(str(WORKER), "gradient", str(tmp_path / "g"))
    assert out.returncode == 0, out.stderr
    x, w, y = problem()
    t = np.tanh(x @ w)
    want = 2 / len(x) * x.T @ ((t - y) * (1 - t**2))  # d/dw of mean over the batch of (t - y)^2, summed
    for rank in (0, 1):
        np.testing.assert_allclose(np.load(tmp_path / f"g.rank{rank}.npy"), want, rtol=1e-12, atol=1e-14)


def test_sgd_keeps_both_ranks_identical_and_equal_to_one_process(tmp_path):
    example = str(ROOT / "examples" / "mlp_data_parallel.py")
    two = run(example, "--steps", "20", "--save", str(tmp_path / "two"))
    assert two.returncode == 0, two.stderr
    assert "parameters identical on all 2 rank(s): True" in two.stdout
    one = run(example, "--steps", "20", "--save", str(tmp_path / "one"), ranks=None)
    assert one.returncode == 0, one.stderr
    rank0, rank1, alone = (np.load(tmp_path / f"{name}.npz") for name in ("two.rank0", "two.rank1", "one.rank0"))
    sys.path.insert(0, str(ROOT / "examples"))
    from mlp import init

    from tenzr.tree_util import tree_leaves

    start = tree_leaves(init([2, 64, 64, 3]))
    assert len(alone.files) == len(start) == 6
    for key, first in zip(alone.files, start, strict=True):
        np.testing.assert_array_equal(rank0[key], rank1[key])
        np.testing.assert_allclose(rank0[key], alone[key], rtol=1e-4, atol=1e-5)
        assert np.abs(alone[key] - first).max() > 1e-3  # (20 steps moved every parameter array)


def test_mismatched_pytrees_are_an_error_on_every_rank():
    out = run(str(WORKER), "mismatch")
    assert out.returncode != 0
    for rank in (0, 1):
        assert f"rank {rank} caught: error: tz.distributed.allreduce_mean: the ranks' pytrees differ" in out.stdout
    assert "rank 1: {'b': *, 'w': *} with leaves float64[2], float64[3]" in out.stdout


def test_a_failing_rank_stops_every_rank_and_is_named():
    start = time.monotonic()
    out = run(str(WORKER), "fail")
    assert out.returncode != 0
    assert "RuntimeError: a step failed on this rank" in out.stderr
    assert "error: tz.distributed: rank 1 of 2 stopped (RuntimeError); stopping every rank" in out.stderr
    assert time.monotonic() - start < 60


def test_a_stuck_rank_is_a_timeout_on_the_one_waiting():
    start = time.monotonic()
    out = run(str(WORKER), "stuck")
    assert out.returncode != 0
    assert "tz.distributed.allreduce_mean: rank 0 waited 3 s for the other 1 rank(s)" in out.stderr
    assert time.monotonic() - start < 50  # (the stuck rank sleeps 60 s: the abort ended it)


def test_a_world_of_one_and_the_argument_errors():
    out = run(str(WORKER), "alone", ranks=None)
    assert out.returncode == 0, out.stderr
    assert "leaf 0 is int64; only floating-point leaves are averaged or broadcast" in out.stdout
    assert "broadcast: root 1 is not a rank (0 to 0)" in out.stdout
    assert "shard: leaf 0 is a scalar, which does not split into 1 equal shards" in out.stdout


def test_without_mpi_the_error_says_what_to_install():
    code = "import sys; sys.modules['mpi4py'] = None; import tenzr as tz; tz.distributed.init()"
    out = run("-c", code, ranks=None)
    assert out.returncode != 0
    assert "tz.distributed needs mpi4py and an MPI library" in out.stderr
    assert "pip install 'tenzr[distributed]'" in out.stderr
    before = run("-c", "import tenzr as tz; tz.distributed.rank()", ranks=None)
    assert "tz.distributed.rank: call tz.distributed.init() first" in before.stderr


def test_init_after_the_first_compiled_call_warns_and_adds_no_workers_beside_busy_ranks():
    """Ranks on one host see one another as busy processes: even where their thread counts
    are already fixed, `init` keeps them from opening the busy-machine workers."""
    code = ("import warnings, numpy as np, tenzr as tz; from tenzr import runtime\n"
            "tz.jit(lambda x: x + 1)(np.ones(2, np.float32))\n"
            "before = runtime.busy_task_allowed()\n"
            "with warnings.catch_warnings(record=True) as seen:\n"
            "    warnings.simplefilter('always')\n"
            "    tz.distributed.init()\n"
            "print(before, runtime.busy_task_allowed(), any('came after the first compiled call' in str(w.message)"
            " for w in seen))")
    out = run("-c", code, ranks=None)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(len(os.sched_getaffinity(0)) >= 2), "False", "True"]
