"""Compile targets: the IREE flags and runtime driver of CPU, Vulkan and CUDA."""

from __future__ import annotations

import difflib
import functools
import math
import platform
import re
import subprocess
from dataclasses import dataclass

from iree.compiler.tools.core import find_tool

from tenzr.dialect.diagnostics import TenzrError
from tenzr.passes import stablehlo as sh

TARGET_NAMES = ("cpu", "vulkan", "cuda")

# The alignment code compiled for CPU assumes of the buffers it is handed (IREE's default
# is 64). NumPy allocates on 16-byte boundaries, so at 16 the runtime can hand IREE the
# callers' arrays themselves (runtime.Program); same-process runs on Zen 3 showed no
# slowdown of the generated code (MLP, CNN, chain, transformer).
HOST_BUFFER_ALIGNMENT = 16
FENCED_CALLS = "--iree-execution-model=async-external"
"""On CPU: each function takes, after its inputs, the fence it waits on and the one it signals
when its work is done, and returns before then (IREE's reflection `iree.abi.model =
coarse-fences`), so the caller chooses how to wait (runtime._wait_for). The steps ran as fast
as with IREE's own blocking functions: medians MLP 1.97 ms against 1.99 (both blocking), CNN
0.97 against 0.96 and GMM 1.16 against 1.17 (both as SCHED_BATCH threads)."""
ABI_MODEL_REFLECTION, FENCED_ABI = "iree.abi.model", "coarse-fences"
NO_MICROKERNELS = "--iree-llvmcpu-enable-ukernels=none"
"""On x86-64 CPUs. IREE 3.13's default links its microkernel library's bitcode into every
module with a data-tiled matmul, though it calls none of them on x86-64 (no microkernel is
left in the module), and then optimizes the unused library away. Without it (Zen 4,
`iree-compile` CPU, medians of 10 alternating runs) the MLP's value_and_grad compiled in
1.58 s against 1.84, the chain's in 1.28 against 1.36; for Zen 3 and Haswell CPUs 1.40 and
1.46 s against 1.94 and 2.07. The steps were the same (same process, medians: MLP 3.19 ms
against 3.23, chain 9.57 against 9.58; Zen 3 code: MLP 4.67 against 4.72, transformer 50.1
against 49.9). Modules without data tiling link no library either way. Other architectures
(whose defaults may call microkernels) keep IREE's default."""

SEPARATE_MULTI_USE = "--iree-dispatch-creation-fuse-multi-use=false"
"""The last resort of every target: IREE 3.13 fuses some producers with several uses (the
gradient of a loop's result read both inside and after it, as in tz.scipy.special.gammainc)
into a multi-result dispatch its stream partitioner then rejects ("circular dependency:
input operation uses partition output")."""

SERIAL_STREAM = "--iree-stream-partitioning-favor=debug"
"""For every module, on every target (Target.compiler_flags): IREE 3.13 then runs the ops of a
program one after another instead of in waves of ops it finds independent. Its wave
partitioning misses a dependency that passes through an op updating another part of the
same buffer: a dispatch writes its result into one half of a concatenation, a fill writes
zeros into the other half, and a copy reading the first half ran in the dispatch's wave,
racing with it. A reduction padded with zeros and sliced again (the gradient of `vsplit`
gave one) came back wrong in 42 of 3,000 calls of the NumPy API's VJP table with two busy
processes beside it, and in 5-17 of 20 calls when the reduction read 32 MB.
tenzr-fold-slices now removes that slice; the same concatenation flattened before its
slice (which no pass folds) came back wrong in 47-81 of 200 calls waved, in 0 of 1,000
serially. Same process (Emerald Rapids, each CPU driver), the value_and_grad steps of the
five benchmark models ran within -13%..+2% of the waved schedule (noise); GPU targets
unmeasured. Two updates of one 64-bit splat, which went wrong serially (and failed to
compile waved), update copies instead (tenzr-copy-in-place-operands)."""

TILING = "--iree-dispatch-creation-data-tiling"
AGGRESSIVE_FUSION = "--iree-dispatch-creation-enable-aggressive-fusion"
TILED_STACK_LIMIT = 128 * 1024
"""The stack a data-tiled dispatch may use on an AVX-512 CPU (IREE's default limit is 32 KiB).
Data tiling alone packs a pointwise function of two matmul results (a jvp's `relu'(a) * ȧ`)
into the next product's operand tile in one dispatch, which IREE 3.13 refused (large vectors,
then 33-67 KiB of stack) in the transformer's jvp and the transformer's and MLP's
Hessian-vector products, whose steps then ran untiled. Tiled, in one process (Emerald Rapids):
transformer jvp 51.1 -> 48.7 ms, its Hessian-vector product 166.5 -> 140.5 ms, the MLP's
11.5 -> 9.1 ms. The runtime's CPU workers get WORKER_STACK_BYTES for it."""
WORKER_STACK_BYTES = 4 * TILED_STACK_LIMIT
"""Stack of each CPU worker thread. IREE's default, 128 KiB, holds its own frames and one
dispatch of up to 32 KiB: the transformer's Hessian-vector product compiled with aggressive
fusion and LARGE_TILES (a 98 KiB dispatch) crashed with it."""
LARGE_TILES = (f"--iree-llvmcpu-stack-allocation-limit={TILED_STACK_LIMIT}",
               "--iree-llvmcpu-fail-on-large-vector=false")
"""Lets those packs compile: the stack they need, and IREE's large-vector check (which
rejects the same packs before the stack check sees them) off. Neither changes the code of
a module that compiles without them. Measured with AVX-512 only."""


@dataclass(frozen=True)
class Target:
    """Where a program runs: `name` picks the IREE backend, the rest refine it."""

    name: str = "cpu"
    cpu: str = "host"
    """LLVM CPU name for `cpu` (`host` tunes for this machine; a generic CPU ran 4x slower)."""
    cpu_features: str = ""
    """LLVM features (`+avx2,+fma`): on `host`, added to the architecture's baseline CPU
    (x86-64, or generic), as LLVM knows no CPU named host once features are given."""
    vulkan_target: str = ""
    """An IREE Vulkan target such as `rdna3` or `valhall`; empty picks IREE's portable default."""
    cuda_arch: str = "sm_80"
    """An `sm_XX` that IREE accepts (3.13 rejects sm_90 with "missing GPU target")."""

    def __post_init__(self) -> None:
        if self.name not in TARGET_NAMES:
            raise TenzrError(f"unknown target '{self.name}' (choose one of: {', '.join(TARGET_NAMES)})")
        if self.name == "cpu" and (self.cpu != "host" or self.cpu_features):
            self._check_llvm_names()

    def _check_llvm_names(self) -> None:
        """LLVM ignores a CPU or feature it does not know, with a warning per use, and then
        may fail with an unrelated error ("64-bit code requested on a subtarget that doesn't
        support it"); so both are checked against its list before compiling."""
        cpus, features = llvm_cpu_names()
        if not cpus:
            return  # (no listing to check against: LLVM's own messages will have to do)
        if self.cpu != "host" and self.cpu not in cpus:
            raise TenzrError(f"unknown CPU '{self.cpu}' for {platform.machine()}" + _suggest(self.cpu, cpus | {"host"}))
        for feature in filter(None, self.cpu_features.split(",")):
            if feature[:1] not in "+-" or feature[1:] not in features:
                hint = _suggest(feature.lstrip("+-"), features) if feature[:1] in "+-" else (
                    "; write +feature to enable one or -feature to disable it")
                raise TenzrError(f"unknown CPU feature '{feature}' for {platform.machine()}" + hint)

    @property
    def driver(self) -> str:
        return {"cpu": "local-task", "vulkan": "vulkan", "cuda": "cuda"}[self.name]

    def optimization_flags(self, module_text: str = "") -> tuple[tuple[str, ...], ...]:
        """Optimization flag sets to try, fastest first (measured in benchmarks/): on CPU,
        data-tiled matmuls (with aggressive fusion where the CPU has AVX-512), else aggressive
        fusion alone, else none.

        Data tiling packs every matmul operand into tiles: it pays for real matmuls (the MLP
        step 3.1 -> 2.5 ms) but not for small ones (the GMM's 10x10 batched products:
        1.27 -> 1.97 ms), and makes convolutions about 2.7x slower; so it is used only when
        the module has a matmul with all of M, N, K >= 32 and no convolution.

        Aggressive fusion with data tiling was measured on an AVX-512 machine. On Zen 3 (AVX2)
        IREE 3.13 fails to compile it for the MLP and the transformer ("operations with large
        vector sizes"): a failed compile, then untiled matmuls at half speed. Without AVX-512,
        data tiling therefore comes alone; same process on Zen 3: MLP step 7.05 ms (fusion,
        untiled) -> 5.60 ms, transformer 65.6 -> 45.3 ms (IREE's packing microkernels also
        avoid the failure but ran 5% slower). Where aggressive fusion with data tiling fails on
        AVX-512 (the transformer: "exceeded stack allocation limit"), data tiling alone comes
        next: its step ran 37.7-42.5 ms against 47.7-54.5 for fusion alone (same process,
        Zen 4), with LARGE_TILES: the flags that only let it compile what it would otherwise
        refuse. It comes first where a large matmul's operand is computed from a reduction
        (`_reduction_reaches_a_product`: a layer norm or a softmax before a product), which
        aggressive fusion packs into the product's operand tiles: IREE 3.13 then failed after
        0.5-1.9 s of CPU (the transformer's gradient; a layer norm over 64-1,024 features or a
        softmax over 32-256 before a product, float32), and where it did not (a softmax over
        384-1,024), data tiling alone compiled in 1.10-1.18 s instead of 1.74-3.04 and its step
        was as fast (4.25 ms against 4.38, 6.05 against 6.18; Zen 4).
        Every target ends with SEPARATE_MULTI_USE."""
        if self.name == "cpu":
            if sh.convolution.op_name in module_text or not _has_large_matmul(module_text):
                return ((AGGRESSIVE_FUSION,), (), (SEPARATE_MULTI_USE,))
            if not self.has_avx512():
                tiled: tuple[tuple[str, ...], ...] = ((TILING,),)
            elif _reduction_reaches_a_product(module_text):
                tiled = ((TILING, *LARGE_TILES),)
            else:
                tiled = ((AGGRESSIVE_FUSION, TILING), (TILING, *LARGE_TILES))
            return (*tiled, (AGGRESSIVE_FUSION,), (), (SEPARATE_MULTI_USE,))
        return ((), (SEPARATE_MULTI_USE,))

    def has_avx512(self) -> bool:
        """Whether the CPU compiled for is known to have AVX-512: `+avx512f` in `cpu_features`,
        or, for `host`, in this machine's /proc/cpuinfo flags."""
        if self.cpu_features:
            return "+avx512f" in self.cpu_features.split(",")
        return self.cpu == "host" and "avx512f" in host_cpu_flags().split()

    def compiler_flags(self) -> tuple[str, ...]:
        """IREE flags selecting this target, and running a program's ops in program order
        (SERIAL_STREAM). On CPU, compile-time evaluation of constant expressions is off: it
        JIT-compiles them, costing about 0.3 s of a 2.9 s MLP gradient compile, and gained
        nothing at run time on the benchmarks; buffers are assumed aligned to
        HOST_BUFFER_ALIGNMENT only; functions take fences (FENCED_CALLS); no microkernels on
        x86-64 (NO_MICROKERNELS)."""
        return (*self._device_flags(), SERIAL_STREAM)

    def _device_flags(self) -> tuple[str, ...]:
        if self.name == "cpu":
            cpu = self.cpu
            if cpu == "host" and self.cpu_features:
                cpu = "x86-64" if platform.machine().lower() in ("x86_64", "amd64") else "generic"
            flags = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
                     f"--iree-llvmcpu-target-cpu={cpu}", "--iree-input-demote-f64-to-f32=false",
                     "--iree-opt-const-eval=false",
                     f"--iree-stream-resource-min-offset-alignment={HOST_BUFFER_ALIGNMENT}", FENCED_CALLS]
            if platform.machine().lower() in ("x86_64", "amd64"):
                flags.append(NO_MICROKERNELS)
            if self.cpu_features:
                flags.append(f"--iree-llvmcpu-target-cpu-features={self.cpu_features}")
            return tuple(flags)
        if self.name == "vulkan":
            flags = ["--iree-hal-target-device=vulkan"]
            if self.vulkan_target:
                flags.append(f"--iree-vulkan-target={self.vulkan_target}")
            return tuple(flags)
        # IREE demotes float64 to float32 by default, silently (seen on an H200: every
        # float64 argument was rejected as "expected f32").
        return ("--iree-hal-target-device=cuda", f"--iree-cuda-target={self.cuda_arch}",
                "--iree-input-demote-f64-to-f32=false")


_DOT_GENERAL = re.compile(
    re.escape(sh.dot_general.op_name) + r" [^:\n]*?(?:batching_dims = \[([\d, ]*)\] x \[[\d, ]*\], )?"
    r"contracting_dims = \[([\d, ]*)\] x \[[\d, ]*\][^:\n]*: "
    r"\(tensor<([\dx]*?)x?[a-z]+\d*>, tensor<([\dx]*?)x?[a-z]+\d*>\)")


def _has_large_matmul(module_text: str, smallest: int = 32) -> bool:
    """Whether some dot_general in the StableHLO text has M, N and K all >= `smallest`."""
    for batch, contracting, lhs, rhs in _DOT_GENERAL.findall(module_text):
        lhs_dims = [int(d) for d in lhs.split("x") if d]
        rhs_size = math.prod(int(d) for d in rhs.split("x") if d)
        batch_size = math.prod(lhs_dims[int(i)] for i in batch.split(",") if i.strip())
        k = math.prod(lhs_dims[int(i)] for i in contracting.split(",") if i.strip())
        m = math.prod(lhs_dims) // max(batch_size * k, 1)
        n = rhs_size // max(batch_size * k, 1)
        if min(m, n, k) >= smallest:
            return True
    return False


_OP = re.compile(r"^\s*(%[\w.$-]+)(?::\d+)? = \"?(stablehlo\.\w+)(.*)$", re.MULTILINE)
_VALUE = re.compile(r"%[\w.$-]+")


def _reduction_reaches_a_product(module_text: str) -> bool:
    """Whether some dot_general with M, N and K >= 32 in the StableHLO text takes an operand
    computed from a reduction's result by ops other than products and reductions (as a layer
    norm's or a softmax's result)."""
    from_reduction: set[str] = set()
    for name, op, rest in _OP.findall(module_text):
        operands = set(_VALUE.findall(rest.split(" : ", 1)[0]))
        if op == sh.reduce.op_name:
            from_reduction.add(name)
        elif op == sh.dot_general.op_name:
            if operands & from_reduction and _has_large_matmul(op + rest):
                return True
        elif operands & from_reduction:
            from_reduction.add(name)
    return False


@functools.cache
def host_cpu_flags() -> str:
    """This machine's CPU model and feature flags (from /proc/cpuinfo where there is one):
    code compiled for `host` is only valid where these match."""
    try:
        with open("/proc/cpuinfo") as info:
            lines = [line for line in info if line.startswith(("model name", "flags"))]
    except OSError:
        return platform.machine()
    return "".join(sorted(set(lines)))


@functools.cache
def llvm_cpu_names() -> tuple[frozenset[str], frozenset[str]]:
    """The CPU names and features that IREE's LLVM knows for this machine's architecture, read
    from the listing LLVM prints for the CPU `help` (empty where it prints none)."""
    command = [find_tool("iree-compile"), "-", "-o", "-", "--iree-hal-target-device=local",
               "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=help"]
    try:
        listing = subprocess.run(command, input=b"module {}", capture_output=True, timeout=60).stderr.decode()
    except (OSError, subprocess.TimeoutExpired):
        return frozenset(), frozenset()
    sections = re.split(r"^Available (CPUs|features) for this target:$", listing, flags=re.MULTILINE)
    named = dict(zip(sections[1::2], sections[2::2], strict=True))

    def names(section: str) -> frozenset[str]:
        return frozenset(re.findall(r"^  (\S+)\s+- ", named.get(section, ""), flags=re.MULTILINE))

    return names("CPUs"), names("features")


def _suggest(name: str, known: frozenset[str] | set[str]) -> str:
    close = difflib.get_close_matches(name, sorted(known), n=3)
    return (f" (did you mean {' or '.join(close)}?)" if close
            else f" ({len(known)} are known: `iree-compile --iree-llvmcpu-target-cpu=help` lists them)")


@dataclass(frozen=True)
class Device:
    """JAX's `jax.Device`: one place programs run, of a `platform` ("cpu", "vulkan" or
    "cuda"), numbered `id`, which its driver calls `device_kind`. Where a target is taken
    (`tz.device_put(x, device)`, `tz.jit(f, target=device)`), a device means its platform."""

    platform: str
    id: int = 0
    device_kind: str = ""

    def __repr__(self) -> str:
        return f"{self.platform.capitalize()}Device(id={self.id})"  # (JAX's: CpuDevice(id=0))

    def __str__(self) -> str:
        return f"{self.platform}:{self.id}"  # (JAX's: cpu:0)


def as_target(target: str | Target | Device) -> Target:
    if isinstance(target, Device):
        return Target(target.platform)
    return target if isinstance(target, Target) else Target(target)
