"""Data-parallel scaling on this machine: one MLP (784-512-512-10, float32) training step
on a global batch of 512, as 1 process of 2 CPU threads against 2 processes of 1 thread
each (`mpirun -n 2`, each on half the batch, gradients averaged by tz.distributed); the
allreduce's share of the step; the measured allreduce bandwidth; and a paper estimate for
8 and 64 hosts.

    python benchmarks/distributed.py [--rounds 50]

Medians over `--rounds` steps after a warm-up, wall time with CPU time beside it; the load
average is printed first (these machines are shared). Scaling efficiency is the one-process
step time over the two-process one (the same two cores either way).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SIZES = [784, 512, 512, 10]
BATCH = 512
NETWORKS = {"10 Gb/s Ethernet": (1.25e9, 25e-6), "100 Gb/s InfiniBand": (12.5e9, 2e-6)}
"""Per-host bandwidth (bytes/s) and per-message latency (s) assumed for the paper estimate."""


def child(rounds: int, threads: int) -> None:
    import tenzr as tz

    tz.distributed.init(cpu_threads=threads)
    from mpi4py import MPI

    rng = np.random.default_rng(0)
    params = [{"w": (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32), "b": np.zeros(b, np.float32)}
              for a, b in itertools.pairwise(SIZES)]
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    labels = rng.integers(0, SIZES[-1], BATCH).astype(np.int32)

    def loss(params, x, labels):
        for layer in params[:-1]:
            x = tz.tanh(x @ layer["w"] + layer["b"])
        logits = x @ params[-1]["w"] + params[-1]["b"]
        return -(tz.nn.log_softmax(logits) * tz.nn.one_hot(labels, SIZES[-1])).sum(axis=-1).mean()

    params = tz.distributed.broadcast(params)
    xs, ys = tz.distributed.shard((x, labels))
    value_and_grad = tz.jit(tz.value_and_grad(loss))
    walls, cpus, computes, reduces = [], [], [], []
    for i in range(rounds + 5):
        MPI.COMM_WORLD.Barrier()
        wall, cpu = time.perf_counter(), time.process_time()
        value, grads = value_and_grad(params, xs, ys)
        computed = time.perf_counter()
        value, grads = tz.distributed.allreduce_mean((value, grads))
        reduced = time.perf_counter()
        params = tz.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
        if i >= 5:
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
            computes.append(computed - wall)
            reduces.append(reduced - computed)
    bandwidth = {}
    for mb in (1, 4, 16):
        buffer = np.ones(mb * 2**18, np.float32)
        out = np.empty_like(buffer)
        times = []
        for _ in range(10):
            MPI.COMM_WORLD.Barrier()
            start = time.perf_counter()
            MPI.COMM_WORLD.Allreduce(buffer, out)
            times.append(time.perf_counter() - start)
        bandwidth[mb] = statistics.median(times)
    if tz.distributed.rank() == 0:
        grad_bytes = sum(a.nbytes for a in tz.tree_util.tree_leaves(grads))
        print(json.dumps({"ranks": tz.distributed.size(), "threads": threads, "wall": statistics.median(walls),
                          "cpu": statistics.median(cpus), "compute": statistics.median(computes),
                          "allreduce": statistics.median(reduces), "bytes": grad_bytes, "bandwidth": bandwidth}))


def run(command: list[str]) -> dict:
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def ring_allreduce(size_bytes: float, hosts: int, bandwidth: float, latency: float) -> float:
    """A ring allreduce's time: 2(H-1)/H of the buffer through each host's link, 2(H-1) steps."""
    return 2 * (hosts - 1) / hosts * size_bytes / bandwidth + 2 * (hosts - 1) * latency


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.rounds, args.threads)
        return
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    me = [sys.executable, str(Path(__file__).resolve()), "--child", "--rounds", str(args.rounds)]
    mpirun = str(Path(sys.executable).parent / "mpirun")
    one = run([*me, "--threads", "2"])
    two = run([mpirun, "-n", "2", *me, "--threads", "1"])
    for name, r in (("1 process x 2 threads", one), ("2 processes x 1 thread", two)):
        print(f"  {name:24s} step {r['wall'] * 1e3:7.2f} ms (CPU {r['cpu'] * 1e3:6.2f}); gradient "
              f"{r['compute'] * 1e3:6.2f} ms; allreduce_mean {r['allreduce'] * 1e3:5.2f} ms "
              f"({r['allreduce'] / r['wall']:.0%} of the step)")
    print(f"  scaling efficiency (1-process step / 2-process step, same 2 cores): {one['wall'] / two['wall']:.2f}")
    size = two["bytes"]
    for mb, seconds in two["bandwidth"].items():
        moved = 2 * (2 - 1) / 2 * int(mb) * 2**20
        print(f"  Allreduce of {mb:>2} MB between the 2 processes: {seconds * 1e3:6.2f} ms, "
              f"{moved / seconds / 1e9:5.2f} GB/s bus bandwidth (shared memory, one host)")
    compute = two["compute"]
    print(f"paper estimate, weak scaling (each host keeps {BATCH // 2} examples, gradient {compute * 1e3:.2f} ms, "
          f"{size / 2**20:.1f} MB of gradients, ring allreduce):")
    for network, (bandwidth, latency) in NETWORKS.items():
        for hosts in (8, 64):
            t = ring_allreduce(size, hosts, bandwidth, latency)
            print(f"  {hosts:2d} hosts, {network}: allreduce {t * 1e3:6.2f} ms, efficiency "
                  f"{compute / (compute + t):.0%} (no overlap of communication with compute)")


if __name__ == "__main__":
    main()
