"""What tests/python/test_distributed.py runs under `mpirun -n 2` (and alone, as a world of
one): `python mpi_worker.py MODE [OUT]`."""

from __future__ import annotations

import sys
import time

import numpy as np

import tenzr as tz


def problem():
    """A batch of 8 for the loss mean((tanh(x w) - y)^2), in float64."""
    rng = np.random.default_rng(5)
    return rng.standard_normal((8, 3)), rng.standard_normal((3, 2)), rng.standard_normal((8, 2))


def loss(w, x, y):
    return ((tz.tanh(x @ w) - y) ** 2).mean(axis=0).sum()


def main() -> None:
    mode = sys.argv[1]
    tz.distributed.init(timeout_s=3.0)
    me = tz.distributed.rank()
    if mode == "gradient":
        x, w, y = problem()
        xs, ys = tz.distributed.shard((x, y))
        grad = tz.distributed.allreduce_mean(tz.grad(loss)(w, xs, ys))
        np.save(f"{sys.argv[2]}.rank{me}.npy", grad)
    elif mode == "mismatch":
        tree = {"w": np.ones(3)} if me == 0 else {"w": np.ones(3), "b": np.ones(2)}
        try:
            tz.distributed.allreduce_mean(tree)
        except tz.TenzrError as e:
            print(f"rank {me} caught: {e}", flush=True)
            sys.exit(3)
    elif mode == "fail":
        if me == 1:
            raise RuntimeError("a step failed on this rank")
        tz.distributed.allreduce_mean(np.ones(3))
    elif mode == "stuck":
        if me == 1:
            time.sleep(60)
        tz.distributed.allreduce_mean(np.ones(3))
    elif mode == "alone":
        assert (tz.distributed.rank(), tz.distributed.size()) == (0, 1)
        tree = {"a": np.arange(4.0), "b": np.float32(2.5)}
        same = tz.tree_util.tree_map(np.array_equal, tz.distributed.allreduce_mean(tree), tree)
        assert same == {"a": True, "b": True}, same
        for bad in (lambda: tz.distributed.allreduce_mean(np.arange(3)), lambda: tz.distributed.broadcast(tree, root=1),
                    lambda: tz.distributed.shard(np.float64(1.0))):
            try:
                bad()
            except tz.TenzrError as e:
                print(e)
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
