"""Data-parallel training of examples/mlp.py's classifier over MPI: each rank computes the
gradient of its shard of the batch, the gradients are averaged, and every rank takes the
same SGD step, so the parameters stay identical (and equal to one process's on the whole
batch, up to float rounding).

    mpirun -n 2 python examples/mlp_data_parallel.py [--steps N] [--save PREFIX]

Without mpirun it runs as a world of one, on the whole batch. `--save PREFIX` writes each
rank's final parameters to PREFIX.rankR.npz.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from mlp import init, loss, spirals

import tenzr as tz


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--learning-rate", type=float, default=0.5)
    parser.add_argument("--save", default="", help="write each rank's final parameters to PREFIX.rankR.npz")
    args = parser.parse_args()

    tz.distributed.init()
    me, ranks = tz.distributed.rank(), tz.distributed.size()
    x, labels = spirals(200)  # 600 points: equal shards for 1 to 6 ranks
    params = tz.distributed.broadcast(init([2, 64, 64, 3]))  # every rank starts from rank 0's
    shard_x, shard_labels = tz.distributed.shard((x, labels))
    value_and_grad = tz.jit(tz.value_and_grad(loss))

    times = []
    for i in range(1, args.steps + 1):
        start = time.perf_counter()
        value, grads = value_and_grad(params, shard_x, shard_labels)
        value, grads = tz.distributed.allreduce_mean((value, grads))  # one Allreduce: every leaf is float32
        params = tz.tree_util.tree_map(lambda p, g: p - args.learning_rate * g, params, grads)
        times.append(time.perf_counter() - start)
        if me == 0 and i % (args.steps // 5 or 1) == 0:
            print(f"step {i:4d}  loss {float(value):.4f}  step time {np.median(times[1:] or times) * 1e3:.2f} ms "
                  f"(median, {ranks} rank(s) of {len(shard_x)} points each)")

    same = tz.distributed.broadcast(params)  # rank 0's parameters, compared on every rank
    identical = all(np.array_equal(a, b) for a, b in zip(tz.tree_util.tree_leaves(params),
                                                         tz.tree_util.tree_leaves(same), strict=True))
    agreed = tz.distributed.allreduce_mean(np.array(float(identical)))
    if me == 0:
        print(f"parameters identical on all {ranks} rank(s): {bool(agreed == 1.0)}")
    if args.save:
        leaves = tz.tree_util.tree_leaves(params)
        np.savez(f"{args.save}.rank{me}.npz", *leaves)


if __name__ == "__main__":
    main()
