"""Running compiled modules: one runtime device per driver, reused by every program.

On CPU, results are mapped, not copied, and NumPy inputs are imported without a copy
into functions marked for it at compile time (the tenzr-mark-in-place pass: IREE 3.13
writes into the input buffers of some ops, so modules with them get copies; read-only
arrays are copied too, as IREE imports only writable memory). Code for CPU
is compiled to assume 16-byte aligned buffers (`targets.HOST_BUFFER_ALIGNMENT`, which
NumPy's allocations meet; IREE's default of 64 would make its vector loads fault on them).
IREE's own function invoker copied every input: 0.6 ms of a 6 ms MLP step.
On GPU drivers (Vulkan, CUDA) plain host memory cannot always be imported (lavapipe
requires 4096-byte aligned host pointers), so inputs are copied into device buffers with
the allocator and results are copied back through a staging buffer.
"""

from __future__ import annotations

import functools
import os
import re
import time
from collections.abc import Callable
from typing import Any, ClassVar

import iree.runtime as rt
import numpy as np
from iree._runtime_libs import _runtime as iree_runtime_module
from iree.runtime._binding import create_hal_driver

from tenzr.core import ConcreteArray, OnDevice
from tenzr.core import devices as devices_of
from tenzr.dialect.diagnostics import TenzrError, warn
from tenzr.dialect.types import ELEMENT_TYPES, TensorSpec, element_type_of, numpy_dtype
from tenzr.passes.tenzr_mark_in_place import INPUTS_REFLECTION
from tenzr.passes.tenzr_widen_boundary import WIDENED
from tenzr.targets import (
    ABI_MODEL_REFLECTION,
    FENCED_ABI,
    HOST_BUFFER_ALIGNMENT,
    TARGET_NAMES,
    WORKER_STACK_BYTES,
    Device,
    Target,
)

_CONFIGS: dict[str, rt.Config] = {}

# The CPU device stays open for the process (KEPT_OPEN), and programs stay loaded in the
# caches: at exit nanobind counted their objects as leaked and printed 133-146 lines of
# "leaked instance" on stderr after a script's last eager call. Freeing them first crashed
# at exit where a result still lived in the device's memory, so IREE's report is turned off.
iree_runtime_module.disable_leak_checker()


def device_config(driver: str) -> rt.Config:
    """The process-wide runtime configuration (and device) of `driver`, opened on first use."""
    config = _CONFIGS.get(driver)
    if config is None:
        config = _CONFIGS[driver] = rt.Config(device=_open_device(driver))
        # (with a debug sink, for the values `tz.debug.print` hands over while a program runs)
        sink = rt.HalModuleDebugSink(functools.partial(_printed, config.device))
        config.default_vm_modules = (rt.create_hal_module(config.vm_instance, config.device, debug_sink=sink),)
        _warn_if_emulated(driver)
    return config


def _printed(device: rt.HalDevice, key: str, views: list[rt.HalBufferView]) -> None:
    """The debug sink: prints what `tz.debug.print` asked for, other keys as IREE does."""
    from tenzr.debug import show  # (the debug module builds on the tracer)

    values = [_read_back(device, v) for v in views]
    if not show(key, values):
        print(f"=== {key} ===", *values, sep="\n", flush=True)


def device_open(driver: str) -> bool:
    """Whether `driver`'s device is open (`device_config` opened it and nothing closed it)."""
    return driver in _CONFIGS


_cores_shared = False
"""Whether this process shares its host's cores with others of its kind (`share_cores`,
`set_cpu_threads`): then no BUSY_TASK device opens."""


def share_cores() -> None:
    """Opens no BUSY_TASK device from now on: this process shares its host's cores with
    others (the ranks of `tz.distributed`), which more workers would oversubscribe."""
    global _cores_shared
    _cores_shared = True


def set_cpu_threads(count: int) -> None:
    """Runs CPU programs on `count` worker threads (IREE's task topology: one group of
    workers per thread). Must come before the CPU device opens (the first compiled call)."""
    if device_open("local-task"):
        raise TenzrError("the CPU device is already open, so its thread count is fixed: set it before the first "
                         "compiled call (for tz.distributed, call tz.distributed.init() first)")
    rt.flags.parse_flags(f"--task_topology_group_count={int(count)}")
    share_cores()


_MPI_WORLD_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MPIEXEC_HOSTNAME")
"""What IREE's runtime reads to decide that it runs under mpirun: it then loads an MPI of its
own (`libmpi.so`, from the library path) and initializes it for collective channels, which
Tenzr's programs do not use (tz.distributed's MPI is mpi4py's). Hidden while a device opens."""


def _open_device(driver: str) -> rt.HalDevice:
    if iree_driver(driver) == "local-task":
        rt.flags.parse_flags(f"--task_worker_stack_size={WORKER_STACK_BYTES}")
    hidden = {name: os.environ.pop(name) for name in _MPI_WORLD_VARIABLES if name in os.environ}
    try:
        if driver == BUSY_TASK:
            return _busy_task_device()
        return rt.get_device(driver, cache=False)
    except (RuntimeError, ValueError) as e:
        raise TenzrError(f"no usable '{iree_driver(driver)}' device: {e}") from None
    finally:
        os.environ.update(hidden)


def _busy_task_device() -> rt.HalDevice:
    """A task-system device with workers of its own: IREE's task driver makes its workers
    when it is created, from the topology flags, and `rt.get_device` reuses one driver per
    name, so this one is a new driver (then the default topology is set again)."""
    rt.flags.parse_flags(f"--task_topology_group_count={BUSY_WORKERS_PER_CORE * _usable_cores()}")
    try:
        return create_hal_driver("local-task").create_default_device()
    finally:
        rt.flags.parse_flags("--task_topology_group_count=0")


def device_names(driver: str) -> list[str]:
    """The names of the devices `driver` sees (empty when it sees none)."""
    try:
        return [d["name"] for d in rt.get_driver(driver).query_available_devices()]
    except (RuntimeError, ValueError, KeyError):
        return []


def _warn_if_emulated(driver: str) -> None:
    names = device_names(driver) if driver == "vulkan" else []
    if names and all("llvmpipe" in n for n in names):
        warn("the Vulkan device is Mesa's lavapipe (llvmpipe), which emulates a GPU on the CPU: programs run on it "
             "about 1,000x slower than with target='cpu'")


def device_available(driver: str) -> bool:
    """Whether `driver` has a usable device. One not open yet is opened and closed again,
    not kept: IREE's Vulkan device on Mesa's lavapipe keeps two threads polling while it is
    open (an idle process then holds two cores busy)."""
    if driver in _CONFIGS:
        return True
    try:
        _open_device(driver)
    except TenzrError:
        return False
    return True


CPU_DRIVERS = ("local-task", "local-sync")
"""IREE's CPU drivers: its task system (a pool of worker threads) and its synchronous driver
(everything on the calling thread)."""
BUSY_TASK = "local-task-busy"
"""A second device of IREE's task system, with BUSY_WORKERS_PER_CORE workers per core this
process may use, none pinned to a core, on which `_DriverChoice` runs the task system's
calls beside busy processes (and only there). Why: the kernel shares a core's time among
the threads that want it, so one pinned worker per core gets at best half of each core
beside two busy processes on two cores, and the step waits for whichever worker ran last.
More workers take a larger share of the cores from the other processes. Same process, two
busy processes, 300-400 calls interleaved with JAX's (Intel Xeon, AVX-512), medians of the
MLP step: one pinned worker per core 5.5-6.0 ms (1.37-1.52x JAX's), 2 unpinned per core
1.02-1.16x, 3 per core 0.90-0.95x, 4 per core 2.9-3.5 ms (0.80-0.83x); the CNN step 3.0-3.1
ms pinned, 1.68 with 4 per core (JAX 4.0-4.8). On a quiet machine extra workers cost: with
2 per core the GMM step took 1.94-1.96 ms against 1.66-1.72, the MLP's mean 3.0-3.1 against
2.8-3.0."""
BUSY_WORKERS_PER_CORE = 4


def iree_driver(driver: str) -> str:
    """The IREE driver behind a device name (BUSY_TASK is a "local-task" device)."""
    return "local-task" if driver == BUSY_TASK else driver


_busy_task_refused = False
"""Whether the BUSY_TASK device failed to open (its workers could not start): it is not
tried again."""


def busy_task_allowed() -> bool:
    """Whether BUSY_TASK may open: not where the process shares its host's cores on purpose
    (`share_cores`), nor where it failed to open, nor on a single core (which counts as
    busy whenever anything else runs)."""
    return not (_cores_shared or _busy_task_refused) and _usable_cores() >= 2


def cpu_devices() -> tuple[str, ...]:
    """The CPU devices a program's calls may run on: CPU_DRIVERS and, where
    `busy_task_allowed`, BUSY_TASK (after the task system, so ties go to it)."""
    task, sync = CPU_DRIVERS
    return (task, BUSY_TASK, sync) if busy_task_allowed() else CPU_DRIVERS


CPU_DRIVER_ENV = "TENZR_CPU_DRIVER"
"""Names the one CPU driver to use; unset or empty, `_DriverChoice` measures which is faster."""


KEPT_OPEN = frozenset((*CPU_DRIVERS, BUSY_TASK))
"""Drivers whose device stays open for the process: results on CPU are NumPy views of the
device's memory (not copies), and closing the device under them would leave them dangling.
(GPU results are copied to the host, so their devices can close.)"""


def close_devices() -> None:
    """Forgets the open GPU devices: each closes once no loaded Program still holds it."""
    for driver in list(_CONFIGS):
        if driver not in KEPT_OPEN:
            del _CONFIGS[driver]


_ARCHIVE_MAGIC = b"PK\x03\x04"  # iree-compile wraps the VM flatbuffer in a zip archive
_EXECUTABLE_FORMATS = {"cpu": (b"embedded-elf-", b"system-elf-"), "vulkan": (b"vulkan-spirv-fb",),
                       "cuda": (b"cuda-nvptx-fb",)}
_DECLARED_INPUT = re.compile(r"%input\d+: ([^,)]*)")


def compiled_for(vmfb: bytes) -> list[str]:
    """The targets whose code a compiled module holds (none for a module without kernels)."""
    return [name for name, formats in _EXECUTABLE_FORMATS.items() if any(f in vmfb for f in formats)]


def _check_module(vmfb: bytes, target: Target) -> None:
    if not vmfb.startswith(_ARCHIVE_MAGIC):
        text = vmfb[:4096].decode("utf-8", "replace")
        hint = (" it looks like MLIR text: compile it first (tenzr-compile in.mlir -o out.vmfb)"
                if "func.func" in text or "module" in text else " it is not what tenzr-compile writes")
        raise TenzrError(f"not a compiled module (.vmfb):{hint}")
    found = compiled_for(vmfb)
    if found and target.name not in found:
        raise TenzrError(f"the module was compiled for {' and '.join(found)}, so it cannot run on {target.name}: "
                         f"run it on {found[0]} (tenzr-run --target={found[0]}), or compile it again for "
                         f"{target.name} (tenzr-compile --target={target.name})")


def _declared_spec(text: str) -> TensorSpec | None:
    match = re.fullmatch(r"tensor<((?:\d+x)*)(\w+)>", text.strip())
    if match is None or match.group(2) not in ELEMENT_TYPES:
        return None
    return TensorSpec(tuple(int(d) for d in match.group(1).split("x") if d), match.group(2))


class _Loaded:
    """A compiled module loaded on one driver's device."""

    def __init__(self, vmfb: bytes, driver: str):
        self.config = device_config(driver)
        self.context = rt.SystemContext(config=self.config)
        try:
            vm_module = rt.VmModule.copy_buffer(self.context.instance, vmfb)
            self.context.add_vm_module(vm_module)
        except (RuntimeError, ValueError) as e:
            raise TenzrError(f"cannot load the compiled module on '{driver}': {e}") from None
        self.module = self.context.modules[vm_module.name]  # `module`, or an import's own name
        self.functions: dict[str, rt.VmFunction] = {}
        self.allocator = self.config.device.allocator
        self.invoke = self.context.vm_context.invoke


_TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_CPU_LINE = re.compile(rb"^cpu(\d+) (.*)$", re.MULTILINE)


def machine_sample() -> tuple[float, float, float] | None:
    """(CPU seconds the CPUs this process may run on have been busy, CPU seconds of this
    process and of the children it waited for (IREE's compiler), wall seconds) now, or None
    where the kernel does not say (no /proc/stat). Busy counts the hypervisor's steal: time
    those CPUs could not run anything here."""
    try:
        with open("/proc/stat", "rb") as f:
            text = f.read()
    except OSError:
        return None
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    busy = 0
    for cpu, fields in _CPU_LINE.findall(text):
        if allowed is None or int(cpu) in allowed:
            user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields.split()[:8])
            busy += user + nice + system + irq + softirq + steal
    own = os.times()
    spent = own.user + own.system + own.children_user + own.children_system
    return busy / _TICKS_PER_SECOND, spent, time.perf_counter()


def _usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class _DriverChoice:
    """Which CPU driver runs one function, measured. Worker threads (the task system) win
    on programs with much work per dispatch; the synchronous driver (the calling thread
    alone) on small ones, whose dispatches cost more to hand out than to run.

    The first FIRST calls run on the task system (a function called once or twice is not
    loaded twice); then timed calls on both drivers are spread among one another, PROBES of
    each (the first call on the driver not running until then is one more: it warms up), and
    the driver whose QUANTILE of them is lower runs the next RUN calls, after which both are
    measured again, as the machine's load changes.

    Why a low quantile of uneven counts: beside another framework's threads in one process
    (JAX's), a third to a half of the MLP step's calls on the task system took two or three
    times as long, while an RNN gradient's thousands of tiny dispatches spread its times
    evenly. Resampling both, medians of four calls each picked the slower driver for the MLP
    19-27% of the time; the 3/8 quantiles of sixteen and four 4-7% for the MLP and 18% for
    the RNN, where a wrong pick costs +55% and +18%. (Calls on the task system cost nothing
    while it runs anyway.)

    Beside busy processes no quantile of a few calls ranks the drivers: the task system's
    calls fall into two groups, both workers scheduled or one waited for. So when the CPU
    time other processes took while the calls were timed (`machine_sample`) leaves fewer
    than FREE_CORES of the cores this process may use, the choice goes by the mean of each
    driver's last BUSY_PROBES calls (twice as many where the means are within CLOSE), made
    as soon as each driver has made them, and the task system runs on the BUSY_TASK device
    (more workers, none pinned). JAX's threads are this process's own and IREE's compiler
    runs for it: neither counts. Calls made before that verdict changed do not count: the
    task system's waited the other way (`waiting`; giving way beside busy processes took up
    to 12 ms), and the synchronous driver's ran while nothing else did (4 ms against 8 for
    the MLP step; kept, they chose it in one of three benchmark runs that started the load
    after warming up). Resampling 150 calls of each beside two busy processes on two cores,
    the means of six (now BUSY_PROBES) picked wrongly in 0.7% of the choices for the MLP
    step (task system median 5.4 ms, synchronous 9.2) and 0.9% for the GMM's (3.9 and 1.7
    ms).
    """

    FIRST = 2
    """(At least one: the machine is sampled as the timed calls begin.)"""
    PROBES: ClassVar[dict[str, int]] = {"local-task": 16, "local-sync": 4}
    QUANTILE = 3 / 8
    RUN = 500
    FREE_CORES = 1.5
    BUSY_PROBES = 8
    """Beside two busy processes, the MLP step on the BUSY_TASK device (mean 4.4 ms) against
    the synchronous driver (mean 7.4, now 4 ms, now 8): resampled, means of six calls each
    chose wrongly 0.7% of the time, of eight 0.2%; in the benchmark, whose slow calls come in
    runs, six chose the synchronous driver in one of seven runs."""
    CLOSE = 1.15
    """Beside busy processes, means of BUSY_PROBES calls closer than this ratio are measured
    again over twice as many calls before one is chosen. Beside one busy process on two
    cores the MLP step's means were 3.9-4.1 ms (BUSY_TASK) and 4.9-5.0 (synchronous), each
    call's spread wide: in windows of 500 interleaved calls of each (three runs), means of
    eight chose wrongly 4-7% of the time, of sixteen 0-2%, and eight then sixteen where
    closer than 1.15 0.4-2%, taking sixteen in 23-34% of the choices. Beside two busy
    processes (means 4.7-4.9 and 6.8-6.9) eight chose wrongly 0-1% of the time, and this
    rule took sixteen in 7-15%."""
    SHORTEST_WINDOW = 0.05
    """Seconds of timed calls below which the other processes' CPU time (counted in the
    kernel's 10 ms ticks) says too little to go by."""

    def __init__(self, drivers: tuple[str, ...] = CPU_DRIVERS,
                 sample: Callable[[], tuple[float, float, float] | None] = machine_sample) -> None:
        self.drivers = drivers
        """The devices to choose from (one where TENZR_CPU_DRIVER names it: the machine's
        load is still followed, for `waiting`); BUSY_TASK among them only beside busy
        processes (`_candidates`)."""
        self.chosen = drivers[0]
        self.left = self.FIRST
        self.times: dict[str, list[float]] = {d: [] for d in drivers}
        self.sample = sample
        self.since: tuple[float, float, float] | None = None
        """The machine when this round of timed calls began."""
        self.busy = False
        """Whether other processes have kept the cores busy during this round (`_busy`)."""
        self.busy_probes = self.BUSY_PROBES
        """The calls of each driver whose mean counts beside busy processes, this round (CLOSE)."""

    def _busy(self) -> bool:
        """Whether other processes kept more than all but FREE_CORES of this process's cores
        busy, on average, since this round of timed calls began (False when unknown; the last
        round's verdict while this one is too short to tell)."""
        now, then = self.sample(), self.since
        if now is None or then is None:
            return False
        if now[2] - then[2] < self.SHORTEST_WINDOW:
            return self.busy
        taken = max(0.0, (now[0] - then[0]) - (now[1] - then[1])) / (now[2] - then[2])
        return _usable_cores() - taken < self.FREE_CORES

    def _wanted(self, driver: str) -> int:
        return (self.busy_probes if self.busy else self.PROBES[driver]) + (driver != self.chosen)

    def _candidates(self) -> tuple[str, ...]:
        """The devices measured now: beside busy processes BUSY_TASK stands in for the task
        system's own device (it was as fast or faster there on every benchmark model, and
        three devices measured picked wrongly more often than two), elsewhere it is left out."""
        if BUSY_TASK not in self.drivers:
            return self.drivers
        left_out = "local-task" if self.busy else BUSY_TASK
        return tuple(d for d in self.drivers if d != left_out)

    def next(self) -> str:
        """The driver for the next call."""
        if self.left > 0:
            return self.chosen
        # (ties: the first candidate, the task system as `cpu_devices` orders them)
        return min(self._candidates(), key=lambda d: len(self.times[d]) / self._wanted(d))

    def waiting(self, driver: str) -> str:
        """How the calling thread waits for a call on `driver` to end: on the task system it
        gives way to IREE's workers (`_giving_way`) on a machine no other process keeps busy,
        and polls (`_wait_for`) beside busy processes, whose threads a thread giving way would
        wait behind too; it just blocks for a synchronous call, ended when IREE returns."""
        if iree_driver(driver) != "local-task":
            return "block"
        return "poll" if self.busy else "give way"

    def record(self, driver: str, seconds: float) -> None:
        """How long a call on `driver` took."""
        if self.left > 0:
            self.left -= 1
            if self.left == 0:
                self.since = self.sample()
            return
        self.times[driver].append(seconds)
        busy = self._busy()
        if busy != self.busy:
            # The calls so far ran on another machine, so to speak: they do not count, and
            # the load is followed from now on.
            self._restart()
            self.since = self.sample()
        self.busy = busy
        if not all(len(self.times[d]) >= self._wanted(d) for d in self._candidates()):
            return
        ranked = sorted(self._candidates(), key=self._mean if self.busy else self._quantile)
        if self.busy and self.busy_probes == self.BUSY_PROBES and len(ranked) > 1 and (
                self._mean(ranked[1]) < self.CLOSE * self._mean(ranked[0])):
            self.busy_probes *= 2
            return
        self.chosen = ranked[0]
        self.left = self.RUN
        self._restart()

    def _restart(self) -> None:
        """Forgets the calls timed this round."""
        self.times = {d: [] for d in self.drivers}
        self.busy_probes = self.BUSY_PROBES

    def drop(self, driver: str) -> bool:
        """Stops using `driver` (a call on it failed), and any other device of its IREE
        driver, and runs the first one left; whether one is left."""
        if not self.leave_out(*(d for d in self.drivers if iree_driver(d) == iree_driver(driver))):
            return False
        self.left = self.RUN
        return True

    def leave_out(self, *devices: str) -> bool:
        """Stops using `devices` (a round of timed calls goes on without them); whether
        another is left."""
        self.drivers = tuple(d for d in self.drivers if d not in devices)
        if not self.drivers:
            return False
        self.chosen = self.drivers[0]
        self._restart()
        return True

    def _mean(self, driver: str) -> float:
        return sum(self.times[driver][-self.busy_probes:]) / self.busy_probes

    def _quantile(self, driver: str) -> float:
        kept = sorted(self.times[driver][-self.PROBES[driver]:])
        return kept[int(len(kept) * self.QUANTILE)]


_can_give_way = hasattr(os, "SCHED_BATCH")
"""False off Linux, and once the kernel refused a change of policy (a sandbox may)."""


def _giving_way() -> bool:
    """Makes the calling thread, if it is a normal one (SCHED_OTHER), a thread that does not
    preempt the one running on a core when it wakes (SCHED_BATCH) until `_as_before`; says
    whether it did.

    Why: the IREE worker that finishes a call wakes the thread waiting for it while still
    holding the semaphore's lock; woken on that worker's core and preempting it, the waiting
    thread then spins for the lock until the kernel's next tick. On two cores and two pinned
    workers 15-40% of the MLP step's calls took 2 or 4 ms longer than the usual 1.9-2.0 ms
    (mean 2.75-2.86 ms, process CPU 4.4 ms a call); waiting as SCHED_BATCH none did (mean
    1.89 ms, CPU 3.5 ms). The CNN's mean went from 1.85 to 0.94 ms, the chain's from 7.1 to
    6.1, the GMM's from 1.55 to 1.30. Beside busy processes the same thread, woken, waits
    for them too (the MLP's median went from 4.2 to 7.0 ms): `_DriverChoice.waiting`."""
    global _can_give_way
    if not _can_give_way:
        return False
    try:
        if os.sched_getscheduler(0) != os.SCHED_OTHER:
            return False  # (the caller's own choice, left as it is)
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    except OSError:
        _can_give_way = False
        return False
    return True


def _as_before() -> None:
    """Makes the calling thread a normal one again after `_giving_way` (which any thread may:
    only leaving SCHED_IDLE takes a privilege)."""
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


_NOTHING_TO_WAIT_FOR = rt.HalFence(0)
"""The fence a call waits on before it starts: none."""


POLL_SECONDS = 1e-4
"""How long a polling caller sleeps between two looks at a call's semaphore (`_wait_for`)."""


def _wait_for(signal: rt.HalFence, done: rt.HalSemaphore, poll: bool) -> None:
    """Waits until a fenced call signals `signal` (`done` reaching 1): blocking, or asking IREE
    again and again where `poll`.

    Why poll beside busy processes: a blocked thread is woken by the worker that ends the
    call, which may then be preempted while it holds the semaphore's lock (and the woken
    thread spins for it), whether the thread gave way or not. With two processes busy on the
    two cores (Emerald Rapids) the MLP step's calls on the task system took a median of
    5.9-6.2 ms blocking (4.0 giving way), 2.4-2.8 polling by yielding (JAX 2.8-3.1, mean
    3.5-4.0); the CNN's mean went from 3.4-4.6 ms to 1.9, the GMM's from 3.9-5.0 to 1.8. On
    a quiet machine polling was 3-6% slower than giving way.

    Between two looks it sleeps POLL_SECONDS: a thread that only yields (`time.sleep(0)`)
    kept taking the workers' cores. Beside two busy processes (Zen 4, 100 interleaved calls
    of each, medians): MLP 6.9-10.5 ms yielding, 6.0 sleeping 100 us, 6.0-8.6 sleeping
    200 us, 7.9-9.0 sleeping 500 us or more (JAX 7.7-8.6); CNN 2.65 yielding, 2.17 at
    200 us, 2.42 at 500 us (JAX 4.5); GMM 4.1 yielding, 3.5 at 100 us, 3.8 at 200-300 us
    (JAX 2.9)."""
    try:
        while poll and done.query() < 1:
            time.sleep(POLL_SECONDS)
    finally:
        # (at once where signalled; raises where the call failed; and an interrupt of the
        # polling waits here for IREE to be done with the inputs before they may be freed)
        signal.wait()


class Program:
    """A compiled IREE module loaded on its target's device (on CPU, on both of IREE's CPU
    drivers once it is called often: `_DriverChoice`)."""

    def __init__(self, vmfb: bytes, target: Target):
        self.target = target
        _check_module(vmfb, target)
        self._vmfb = vmfb
        self._staged = target.name != "cpu"
        forced = (os.environ.get(CPU_DRIVER_ENV) or None) if not self._staged else None
        if forced is not None and forced not in CPU_DRIVERS:
            raise TenzrError(f"{CPU_DRIVER_ENV}={forced!r} is not a CPU driver (choose one of: "
                             f"{', '.join(CPU_DRIVERS)}, or leave it unset to have each program measure both)")
        self._driver = forced or target.driver
        self._loaded = {self._driver: _Loaded(vmfb, self._driver)}
        self._drivers = (forced,) if forced else cpu_devices()
        self._choices: dict[str, _DriverChoice] = {}
        self._reflections: dict[str, dict[str, str]] = {}

    def _on(self, driver: str) -> _Loaded:
        loaded = self._loaded.get(driver)
        if loaded is None:
            loaded = self._loaded[driver] = _Loaded(self._vmfb, driver)
        return loaded

    @property
    def function_names(self) -> list[str]:
        """The functions a caller can run (IREE's own `__init` and the like left out)."""
        return [n for n in self._loaded[self._driver].module.vm_module.function_names if not n.startswith("__")]

    def _function(self, loaded: _Loaded, name: str) -> rt.VmFunction:
        fn = loaded.functions.get(name)
        if fn is None:
            try:
                fn = loaded.functions[name] = loaded.module[name].vm_function
            except (KeyError, AttributeError, RuntimeError):
                known = ", ".join(self.function_names) or "none"
                raise TenzrError(f"the compiled module has no function '{name}' (it has: {known})") from None
        return fn

    def function(self, name: str) -> tuple[rt.VmFunction, dict[str, str]]:
        """The VM function `name` (on the target's own driver) and its reflection entries."""
        fn = self._function(self._loaded[self._driver], name)
        reflection = self._reflections.get(name)
        if reflection is None:
            reflection = self._reflections[name] = dict(fn.reflection)
        return fn, reflection

    def signature(self, name: str) -> list[TensorSpec | None]:
        """The tensor types function `name` takes, as the caller passes them (None where the
        declaration holds something else)."""
        _, reflection = self.function(name)
        specs = [_declared_spec(t) for t in _DECLARED_INPUT.findall(reflection.get("iree.abi.declaration", ""))]
        original = reflection.get("tenzr.args", "")  # types widened at a Vulkan boundary
        for i, dtype in enumerate(original.split(",") if original else []):
            if i < len(specs) and specs[i] is not None:
                specs[i] = specs[i].with_dtype(dtype)  # type: ignore[union-attr]
        return specs

    def __call__(self, name: str, *arrays: Any) -> list[Any]:
        fn, reflection = self.function(name)
        # np.ascontiguousarray would turn rank-0 arrays into rank 1; np.require also turns NumPy
        # scalars into arrays. (A DeviceArray stays one for a program on its device.)
        inputs: list[Any] = [a if (type(a) in _PLAIN_ARRAYS and a.flags.c_contiguous)
                             or (self._staged and isinstance(a, DeviceArray)) else np.require(a, requirements="C")
                             for a in arrays]
        try:
            if self._staged:
                return self._call_staged(fn, reflection, inputs)
            in_place = reflection.get(INPUTS_REFLECTION) == "in-place"
            choice = self._choices.get(name)
            if choice is None:
                choice = self._choices[name] = _DriverChoice(self._drivers)
            driver = self._opened(choice, choice.next())
            start = time.perf_counter()
            fenced = reflection.get(ABI_MODEL_REFLECTION) == FENCED_ABI
            try:
                out = self._call_in_place(self._on(driver), name, in_place, inputs, fenced, choice.waiting(driver))
            except RuntimeError:
                # IREE 3.13's task system fails some programs with a conditional inside a loop
                # ("transient buffer has not been committed") that the synchronous driver runs:
                # the function moves there (a call never writes the caller's arrays, so the
                # same inputs serve again).
                if iree_driver(driver) != "local-task" or not choice.drop(driver):
                    raise
                driver = choice.next()
                out = self._call_in_place(self._on(driver), name, in_place, inputs, fenced, choice.waiting(driver))
            choice.record(driver, time.perf_counter() - start)
            return out
        except (RuntimeError, ValueError, IndexError) as e:  # (IREE raises IndexError for OUT_OF_RANGE)
            mismatch = self._mismatch(name, inputs)
            raise TenzrError(mismatch or f"running '{name}' on {self.target.name} failed: {e}") from None

    def _opened(self, choice: _DriverChoice, driver: str) -> str:
        """`driver`, its device open; or, where it is BUSY_TASK and that may not or cannot
        open, the driver `choice` picks without it (once the device failed to open, with a
        warning, once per process), its round of timed calls going on."""
        global _busy_task_refused
        if driver != BUSY_TASK:
            return driver
        if not (_cores_shared or _busy_task_refused):  # (the cores were counted in `cpu_devices`)
            try:
                device_config(BUSY_TASK)
                return driver
            except TenzrError as e:
                warn(f"the CPU workers for a busy machine could not start, so calls keep the usual ones: {e}")
                _busy_task_refused = True
        choice.leave_out(BUSY_TASK)
        return choice.next()

    def _mismatch(self, name: str, inputs: list[Any]) -> str | None:
        """What is wrong with the inputs of a call IREE refused, said against the declaration."""
        specs = self.signature(name)
        declared = ", ".join(str(s) for s in specs)
        if len(inputs) != len(specs):
            return f"'{name}' takes {len(specs)} input(s) ({declared}), but was given {len(inputs)}"
        for i, (a, want) in enumerate(zip(inputs, specs, strict=True)):
            if want is None:
                continue
            got_dtype = element_type_of_array(a)
            if tuple(a.shape) != want.shape or got_dtype != want.dtype:
                return (f"input {i} of '{name}' must be {want}, but was given {got_dtype or a.dtype} of shape "
                        f"{list(a.shape)} (declared: {name}({declared}))")
        return None

    @staticmethod
    def _invoke(loaded: _Loaded, fn: rt.VmFunction, args: rt.VmVariantList, fenced: bool = False,
                waiting: str = "block") -> list[rt.HalBufferView]:
        """Runs `fn` and waits for its end as `waiting` says (`_DriverChoice.waiting`); a
        `fenced` function takes the fences it waits on and signals after its inputs, and
        returns before its work is done (`_wait_for`)."""
        results = rt.VmVariantList(8)
        gave_way = waiting == "give way" and _giving_way()  # (IREE may wait inside the call too)
        try:
            if fenced:
                done = loaded.config.device.create_semaphore(0)
                signal = rt.HalFence.create_at(done, 1)
                args.push_ref(_NOTHING_TO_WAIT_FOR)
                args.push_ref(signal)
                loaded.invoke(fn, args, results)
                _wait_for(signal, done, poll=waiting == "poll")
            else:
                loaded.invoke(fn, args, results)
        finally:
            if gave_way:
                _as_before()
        return [results.get_as_object(i, rt.HalBufferView) for i in range(len(results))]

    def _call_in_place(self, loaded: _Loaded, name: str, in_place: bool, inputs: list[Any], fenced: bool,
                       waiting: str) -> list[np.ndarray]:
        """Host memory serves as device memory: inputs are imported (copies of them unless
        the function is marked `in_place`) and results mapped."""
        fn = self._function(loaded, name)
        allocator = loaded.allocator
        args = rt.VmVariantList(len(inputs) + 2)
        imported, spans = [], []  # imported: the arrays IREE reads, kept alive until we return
        for a in inputs:
            start = a.ctypes.data
            if not in_place or start % HOST_BUFFER_ALIGNMENT or not a.flags.writeable:
                a = _aligned_copy(a)
                start = a.ctypes.data
            imported.append(a)
            spans.append((start, start + a.nbytes))
            args.push_ref(rt.HalBufferView(allocator.import_host_allocation(a, _HOST_MEMORY, _HOST_USAGE), a.shape,
                                           _element_type(a.dtype)))
        out = [_result_array(view) for view in self._invoke(loaded, fn, args, fenced, waiting)]
        # IREE returns an input passed through (or a slice of one) as that very memory, and the
        # mapping does not keep the imported array alive: such results are copied while it is.
        low = min((s for s, _ in spans), default=0)
        high = max((e for _, e in spans), default=0)
        return [r.copy() if _overlaps(r, spans, low, high) else r for r in out]

    def _call_staged(self, fn: rt.VmFunction, reflection: dict[str, str], inputs: list[Any]) -> list[Any]:
        """Inputs are copied into device buffers (a DeviceArray already there is passed as it
        is) and results stay there, as DeviceArrays."""
        loaded = self._loaded[self._driver]
        device = loaded.config.device
        arg_types = reflection.get("tenzr.args", "").split(",")
        result_types = reflection.get("tenzr.results", "").split(",")
        args = rt.VmVariantList(len(inputs))
        for i, a in enumerate(inputs):
            widened = numpy_dtype(WIDENED[arg_types[i]]) if i < len(arg_types) and arg_types[i] in WIDENED else None
            view = a.view_on(device, widened or a.dtype) if isinstance(a, DeviceArray) else None
            if view is None:
                host = np.asarray(a)
                view = _upload(device, host if widened is None else host.astype(widened))
            args.push_ref(view)
        return [DeviceArray(view, device, numpy_dtype(result_types[i]) if i < len(result_types)
                            and result_types[i] in WIDENED else None)
                for i, view in enumerate(self._invoke(loaded, fn, args))]


def _upload(device: rt.HalDevice, a: np.ndarray) -> rt.HalBufferView:
    """A device buffer holding a copy of `a`."""
    return device.allocator.allocate_buffer_copy(
        memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT, device=device,
        buffer=a.astype(np.int8) if a.dtype == np.bool_ else a, element_type=_element_type(a.dtype))


class DeviceArray(OnDevice):
    """An array in a GPU's (or Vulkan device's) memory: what a program compiled for such a
    target returns, as JAX's arrays stay on their device. Passed to another program on the
    same device it is not copied; NumPy (np.asarray, printing, indexing, arithmetic, any of
    NumPy's methods) reads it back to the host once and keeps that copy. `shape`, `dtype`
    and `block_until_ready()` need no copy."""

    __array_priority__ = 100

    def __init__(self, view: rt.HalBufferView, device: rt.HalDevice, dtype: np.dtype | None = None):
        self._view, self._device = view, device
        self._stored = _dtype_of(view.element_type)
        self.dtype = np.dtype(dtype) if dtype is not None else self._stored
        """The element type as the program declared it (a Vulkan program's boundary widens
        bools and 16-bit floats in device memory)."""
        self.shape = tuple(int(n) for n in view.shape)
        self._host: np.ndarray | None = None

    @classmethod
    def put(cls, a: np.ndarray, driver: str) -> DeviceArray:
        """A copy of `a` in the memory of `driver`'s device."""
        device = device_config(driver).device
        return cls(_upload(device, a), device, a.dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def device(self) -> Device:
        """JAX's `x.device`: the device whose memory holds the array."""
        driver = next(d for d, config in _CONFIGS.items() if config.device == self._device)
        platform = next(t for t in TARGET_NAMES if Target(t).driver == driver)
        return devices_of(platform)[0]  # (the driver's first device, the one opened)

    def devices(self) -> set[Device]:
        """JAX's `x.devices()`: {x.device}."""
        return {self.device}

    def view_on(self, device: rt.HalDevice, stored: np.dtype) -> rt.HalBufferView | None:
        """Its buffer, if it lies on `device` stored as `stored`."""
        return self._view if device is self._device and self._stored == np.dtype(stored) else None

    def block_until_ready(self) -> DeviceArray:
        return self  # (programs return once their results are computed)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self._host is None:
            host = _read_back(self._device, self._view)
            self._host = host if host.dtype == self.dtype else host.astype(self.dtype)
            self._host.flags.writeable = False
        return self._host if dtype is None else self._host.astype(dtype)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_view", "_device", "_stored", "_host"):
            raise AttributeError(name)
        return getattr(np.asarray(self), name)

    def __repr__(self) -> str:
        return f"DeviceArray({np.array2string(np.asarray(self), separator=', ')}, dtype={self.dtype})"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    __hash__ = None  # type: ignore[assignment]


def _on_host(name: str) -> Any:
    def method(self: DeviceArray, *args: Any) -> Any:
        return getattr(np.asarray(self), name)(*args)

    method.__name__ = name
    return method


for _name in ("__getitem__", "__iter__", "__float__", "__int__", "__bool__", "__index__", "__complex__", "__neg__",
              "__pos__", "__abs__", "__invert__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__",
              "__rpow__", "__matmul__", "__rmatmul__", "__and__", "__rand__", "__or__", "__ror__", "__xor__",
              "__rxor__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__format__"):
    setattr(DeviceArray, _name, _on_host(_name))


_HOST_MEMORY = int(rt.MemoryType.HOST_LOCAL) | int(rt.MemoryType.DEVICE_VISIBLE)
_HOST_USAGE = int(rt.BufferUsage.DEFAULT)


class _ResultMemory:
    """Keeps an IREE result alive for as long as any NumPy array viewing its memory lives.

    IREE's `MappedMemory.asarray` ties the mapping's lifetime to the array object it returns
    (a keep-alive on that object), but a view of that array (a row, `a, b = result`) is based
    on an object below it: once the returned array was dropped, the view read memory IREE
    had freed and the next call's results overwrote (JAX's `key, subkey = split(key)` lost
    both keys). The arrays Tenzr returns are based on an object that holds IREE's array, so
    their views keep it alive: a memoryview of it (`_result_array`), or this holder for the
    dtypes the buffer protocol cannot spell (its array interface costs 2.6 us a result, a
    memoryview 0.4)."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray):
        self.array = array

    @property
    def __array_interface__(self) -> dict:
        return self.array.__array_interface__


def _result_array(view: rt.HalBufferView) -> ConcreteArray:
    """A result mapped from device memory, based on a memoryview of IREE's array (which the
    memoryview keeps alive, and with it the mapping: see `_ResultMemory`); a ConcreteArray,
    so that JAX's array methods (`x.at`, `block_until_ready`) work on it."""
    mapped = view.map().asarray(tuple(view.shape), _dtype_of(view.element_type))
    try:
        return np.asarray(memoryview(mapped)).view(ConcreteArray)
    except ValueError:  # a dtype the buffer protocol cannot spell (ml_dtypes' bfloat16, float8)
        # (the array interface spells it as raw bytes)
        return np.asarray(_ResultMemory(mapped)).view(mapped.dtype).view(ConcreteArray)


_PLAIN_ARRAYS = (np.ndarray, ConcreteArray)
"""Array types a program reads as they are (others, np.matrix say, become ndarrays first)."""


@functools.cache
def _element_type(dtype: np.dtype) -> rt.HalElementType:
    return rt.array_interop.map_dtype_to_element_type(dtype)


@functools.cache
def _dtype_of(element_type: rt.HalElementType) -> np.dtype:
    return rt.HalElementType.map_to_dtype(element_type)


def element_type_of_array(a: np.ndarray) -> str | None:
    try:
        return element_type_of(a.dtype)
    except ValueError:
        return None


def _overlaps(a: np.ndarray, spans: list[tuple[int, int]], low: int, high: int) -> bool:
    """Whether the bytes of `a` (contiguous) overlap one of the [start, end) address spans,
    all of which lie in [low, high)."""
    start = a.ctypes.data
    end = start + a.nbytes
    return low < end and start < high and any(s < end and start < e for s, e in spans)


def _aligned_copy(a: np.ndarray) -> np.ndarray:
    """A copy of `a` starting at a multiple of HOST_BUFFER_ALIGNMENT bytes."""
    raw = np.empty(a.nbytes + HOST_BUFFER_ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % HOST_BUFFER_ALIGNMENT
    copy = raw[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    copy[...] = a
    return copy


def _read_back(device: rt.HalDevice, view: rt.HalBufferView) -> np.ndarray:
    """Copies a device buffer into a host-visible staging buffer, then into NumPy.

    (IREE's DeviceArray.to_host imports host memory for the copy, which lavapipe refuses.)
    """
    source = view.get_buffer()
    staging = device.allocator.allocate_buffer(
        memory_type=int(rt.MemoryType.HOST_LOCAL) | int(rt.MemoryType.DEVICE_VISIBLE),
        allowed_usage=int(rt.BufferUsage.TRANSFER_TARGET) | int(rt.BufferUsage.MAPPING_SCOPED),
        allocation_size=source.byte_length())
    semaphore = device.create_semaphore(0)
    device.queue_copy(source, staging, wait_semaphores=rt.HalFence.create_at(semaphore, 0),
                      signal_semaphores=rt.HalFence.create_at(semaphore, 1))
    rt.HalFence.create_at(semaphore, 1).wait()
    return np.array(staging.map().asarray(tuple(view.shape), _dtype_of(view.element_type)))
