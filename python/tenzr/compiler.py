"""From a tenzr module to a runnable IREE module: the pipeline, then IREE.

`lower_to_stablehlo` runs LOWERING_PIPELINE, then the target's passes.
`compile_stablehlo` hands StableHLO text to IREE's compiler and returns the VM flatbuffer.
"""

from __future__ import annotations

import functools
import re
import subprocess
import tempfile

from iree.compiler.tools.core import find_tool

from tenzr.dialect.context import check_static_shapes, functions, make_context, parse_module
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ir_imports import ir
from tenzr.passes.registry import parse_pipeline, run_pipeline
from tenzr.passes.rules.custom import TRACE
from tenzr.passes.tenzr_barrier_loop_results import barrier_loop_results
from tenzr.targets import SEPARATE_MULTI_USE, Target

LOWERING_PIPELINE = ("builtin.module(tenzr-expand-lapack,tenzr-expand-fft,convert-tenzr-to-stablehlo,"
                     "func.func(chlo-legalize-to-stablehlo),inline,tenzr-expand-math,tenzr-expand-select-and-scatter,tenzr-fold-empty-contractions,"
                     "tenzr-split-grouped-convolutions,tenzr-single-window-strides,tenzr-im2col,"
                     "tenzr-transpose-after-concatenate,tenzr-fold-slices,tenzr-reverse-before-strided-slice,"
                     "tenzr-split-reductions,tenzr-sort-rows,tenzr-bound-indices,tenzr-split-scatter-windows,"
                     "tenzr-order-scatter-dims,tenzr-simplify-loops,tenzr-block-loop-writes,tenzr-elementwise-before-reshapes,"
                     "tenzr-widen-bool-concatenates,tenzr-fold-constants,canonicalize,tenzr-concatenate-wide-pads,cse,tenzr-copy-in-place-operands,tenzr-barrier-constant-reductions,tenzr-order-prints)")
"""Lowering (JAX's LAPACK calls, FFTs and CHLO's ops, as JAX exports them, become StableHLO too),
then the forms IREE compiles well and the workarounds of its bugs and departures from
StableHLO's semantics (each a pass with its own lit test), then MLIR's cleanups."""
TARGET_PIPELINES = {"cpu": ("builtin.module(tenzr-tile-heavy-results,tenzr-merge-reductions,tenzr-fuse-elementwise,"
                            "tenzr-mark-in-place)"),
                    "vulkan": "builtin.module(tenzr-widen-boundary)"}
"""What each target's IREE needs after that (Vulkan's only on its portable target)."""
COMPILE_TIMEOUT_S = 900


def lower_to_stablehlo(module: ir.Operation, target: Target | None = None) -> None:
    """Lowers every tenzr op, cleans up, and adjusts the result for `target` if given."""
    check_static_shapes(module)
    run_pipeline(module, parse_pipeline(LOWERING_PIPELINE), verify_each=False)
    check_compilable(module)
    if target is not None:
        prepare_for_target(module, target)


def check_compilable(module: ir.Operation) -> None:
    """Refuses, at their locations, what IREE would crash on, reject obscurely or never finish
    compiling: a module without a function, an op of no dialect it knows ("foo.bar", kept
    by tenzr-opt as mlir-opt keeps it with --allow-unregistered-dialect), and recursion
    among the module's own functions (calls that reach their own function)."""
    unknown: list[ir.Operation] = []
    context = module.context

    def visit(op: ir.Operation) -> ir.WalkResult:
        if not context.is_registered_operation(op.name) and op.name != TRACE:
            unknown.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    if not any(f.regions[0].blocks for f in functions(module).values()):
        raise TenzrError("nothing to compile: the module defines no function", module.location)
    if unknown:  # (raised outside the walk, whose callback cannot raise)
        raise TenzrError(f"unknown op '{unknown[0].name}': no dialect IREE compiles has it", unknown[0].location)
    callees = {name: _calls(func) for name, func in functions(module).items()}
    done: set[str] = set()

    def reach(name: str, path: list[str]) -> None:
        for callee, location in callees.get(name, []):
            if callee in path:
                cycle = " -> ".join(f"@{n}" for n in [*path[path.index(callee):], callee])
                raise TenzrError(f"recursion ({cycle}): IREE cannot compile a function that calls itself", location)
            if callee not in done:
                reach(callee, [*path, callee])
        done.add(name)

    for name in callees:
        reach(name, [name])


def _calls(func: ir.Operation) -> list[tuple[str, ir.Location]]:
    """(callee, location) of every func.call in `func`."""
    found: list[tuple[str, ir.Location]] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.call":
            found.append((ir.FlatSymbolRefAttr(op.attributes["callee"]).value, op.location))
        return ir.WalkResult.ADVANCE

    func.walk(visit)
    return found


_UNSUPPORTED_ON_PORTABLE_VULKAN = {
    re.compile(r"[x<]f64>"): "float64 is not supported by IREE's portable Vulkan target (IREE would silently demote it "
                             "to float32); use float32, or name a GPU with float64 via Target(vulkan_target=...)",
    re.compile(r"[x<]u?i(?:8|16)>"): "8- and 16-bit integers are not supported by IREE's portable Vulkan target (IREE "
                                     "3.13 computed wrong sorts and sums with them on lavapipe); use int32, or name a "
                                     "GPU via Target(vulkan_target=...)"}
"""What IREE's portable Vulkan target cannot be trusted with, and what to say."""


def prepare_for_target(module: ir.Operation, target: Target) -> None:
    """Runs `target`'s pipeline (TARGET_PIPELINES) on a lowered module. Float64 and 8- and
    16-bit integers are refused on IREE's portable Vulkan target (_UNSUPPORTED_ON_PORTABLE_VULKAN)."""
    if target.name == "vulkan" and not target.vulkan_target:
        text = str(module)
        for unsupported, why in _UNSUPPORTED_ON_PORTABLE_VULKAN.items():
            if unsupported.search(text):
                raise TenzrError(why)
    pipeline = TARGET_PIPELINES.get(target.name) if target.name != "vulkan" or not target.vulkan_target else None
    if pipeline is not None:
        run_pipeline(module, parse_pipeline(pipeline), verify_each=False)


@functools.cache
def _iree_compile() -> str:
    return find_tool("iree-compile")


COMPILE_REVISION = "8"
"""Part of every compile-cache key: changed whenever `compile_stablehlo` starts compiling some
module differently in a way its flags (`flag_sets`, also in the key) do not show, so that
modules cached the old way are not reused. 2: modules that IREE 3.13 miscompiled through a
region returning a value twice (below) are compiled again. 3-7: flag changes (from 8 on,
the key holds the flags). 5: tenzr-merge-reductions leaves reductions of constants apart.
8: the key holds every flag set tried (and the serial schedule reaches modules that update
in place, unless they update one splat constant twice)."""


NO_MEMOIZATION = "--iree-hal-memoization=false"
"""For modules with a loop inside a region. A checkpointed scan's adjoint runs loops inside
its loop over segments, on which IREE 3.13 sometimes fails at run time ("indirect buffer
reference slot 0 is out range of the declared binding capacity of the command buffer"):
of eight RNN gradients (hidden 16-64, 300-1,000 steps, checkpointed every 8-64), two
failed with memoized command buffers, one without (and without, the RNN gradient's step
was no slower: 3.67 vs 3.70 ms)."""
_LOOP_IN_A_REGION = re.compile(r"^ {6,}%\S+ = stablehlo\.while\(", re.MULTILINE)


def flag_sets(text: str, target: Target, extra_flags: tuple[str, ...] = ()) -> tuple[tuple[str, ...], ...]:
    """The IREE flags `compile_stablehlo` tries for `text`, in turn (beside the target's own).

    Each of the target's optimization flag sets comes in turn (the fastest first): IREE
    3.13 rejects some modules under its faster options. A module with a loop inside a
    region runs without memoized command buffers (NO_MEMOIZATION).
    The compile cache's key holds them all, so a change here needs no COMPILE_REVISION."""
    if _LOOP_IN_A_REGION.search(text):
        extra_flags = (*extra_flags, NO_MEMOIZATION)
    return tuple((*optimization, *extra_flags) for optimization in target.optimization_flags(text))


_CIRCULAR_PARTITION = "circular dependency: input operation uses partition output"
"""What IREE 3.13's stream partitioner says of a module it would order wrongly around a loop
(tenzr-barrier-loop-results)."""


def compile_stablehlo(text: str, target: Target, extra_flags: tuple[str, ...] = ()) -> bytes:
    """IREE-compiles StableHLO `text` for `target` with the first of `flag_sets` that IREE
    accepts; returns the .vmfb bytes. A module that IREE would miscompile through a region
    returning a value twice (`_returns_a_value_twice`) is compiled again without
    multi-use fusion, which does not form such regions.

    A module whose loops IREE's stream partitioner orders in a cycle with the dispatches
    around them (_CIRCULAR_PARTITION under every flag set) is compiled again with each loop's
    results behind a barrier (tenzr-barrier-loop-results) and without memoized command
    buffers. Only then: barriers behind every loop made IREE 3.13 fail at run time on a
    scan's gradient that compiled without them ("indirect buffer reference slot 0 is out
    range", NO_MEMOIZATION's failure)."""
    try:
        return _compile_first_accepted(text, target, extra_flags)
    except TenzrError as error:
        if not any(_CIRCULAR_PARTITION in note for note, _ in error.notes):
            raise
    with make_context():
        module = parse_module(text)
        barrier_loop_results(module)
        text = str(module)
    return _compile_first_accepted(text, target, (*extra_flags, NO_MEMOIZATION))


def _compile_first_accepted(text: str, target: Target, extra_flags: tuple[str, ...]) -> bytes:
    variants = flag_sets(text, target, extra_flags)
    for i, flags in enumerate(variants):
        try:
            return _compile_safely(text, target, flags)
        except TenzrError:
            if i == len(variants) - 1:
                raise
    raise AssertionError("unreachable")


def _compile_safely(text: str, target: Target, flags: tuple[str, ...]) -> bytes:
    vmfb, miscompiled = _compile_once(text, target, flags)
    if not miscompiled:
        return vmfb
    if SEPARATE_MULTI_USE not in flags:
        vmfb, miscompiled = _compile_once(text, target, (*flags, SEPARATE_MULTI_USE))
    if miscompiled:
        raise TenzrError(f"IREE would miscompile this module for {target.name}: a dispatch region returns one "
                         "value twice, and IREE 3.13 points the second copy's uses at the region's first result")
    return vmfb


_CHECKED_AFTER = ("iree-dispatch-creation-elementwise-op-fusion",
                  "iree-dispatch-creation-fuse-multi-use-elementwise-producer",
                  "iree-dispatch-creation-clone-producers-into-dispatch-regions",
                  "iree-dispatch-creation-collapse-dimensions",
                  "iree-dispatch-creation-hoist-uniform-scalar-compute")
"""The passes after which IREE's IR is printed for `_returns_a_value_twice`: those that run
between forming dispatch regions and the first canonicalization of them (in both the plain
and the data-tiled pipeline), the only window in which a region can return a value twice."""
_PRINT_FLAGS = (f"--mlir-print-ir-after={','.join(_CHECKED_AFTER)}", "--mlir-elide-elementsattrs-if-larger=16")
_REGION_RETURN = re.compile(r"flow\.return ([^:\n]+) : [^\n]*tensor<")


def _returns_a_value_twice(printed_ir: str) -> bool:
    """Whether some dispatch region in IREE's printed IR returns one value twice.

    IREE 3.13's canonicalization of such a region (dropUnusedAndRedundantDispatchRegionResults)
    keeps the first copy and points the uses of a later one at the region's result 0, which is
    another value unless the first copy happens to be result 0: a silent wrong answer. The
    regions appear when multi-use fusion yields two values that IREE's CSE then finds equal,
    as `a * x` and `x * a` (seen in a second derivative: 0.8896 for 0.9260)."""
    for operands in _REGION_RETURN.findall(printed_ir):
        values = [v.strip() for v in operands.split(",")]
        if len(set(values)) < len(values):
            return True
    return False


UNVERIFIED = "--verify=false"
"""IREE's compiler does not verify the IR after each of its passes. That verification took a
quarter to a third of the CPU time of a cold compile (Zen 4, medians of 4-8 alternating
runs: the MLP's value_and_grad 2.37 -> 1.76 s, the CNN's 2.23 -> 1.50, the GMM's 2.07 ->
1.69, the chain's 1.48 -> 1.14) and changes nothing it emits (the MLP's module came out
byte for byte the same). It only reports IREE's own bugs, and those IREE reports anyway: of
the test suite's 1,086 compiles, the 25 that IREE rejected (seven of them for IR it had made
invalid: "operand #1 does not dominate this use") were rejected unverified too, a later pass
failing ("failed to schedule execution partitions without cyclic dependencies"), so the next
flag set followed as before; 350 random programs of the fuzzer, compiled unverified, all
compiled verified too. IREE still verifies the module it is given, as it parses it."""


def _compile_once(text: str, target: Target, flags: tuple[str, ...]) -> tuple[bytes, bool]:
    """One run of IREE's compiler, as a separate process: a crash inside the compiler (IREE
    3.13 segfaults on some Vulkan targets) becomes an error here instead of taking the
    caller down. Returns the module and whether IREE miscompiled it (`_returns_a_value_twice`).

    Its output goes to files, not pipes: IREE writes the IR it prints line by line, and
    reading a pipe woke this process for each piece (the op table's forward module printed
    11 MB: 1.5 s of this process's CPU through a pipe, 0.01 s through files)."""
    command = [_iree_compile(), "-", "--output-format=vm-bytecode", "-o", "-", UNVERIFIED, *target.compiler_flags(),
               *flags, *_PRINT_FLAGS]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            done = subprocess.run(command, input=text.encode(), stdout=out, stderr=err, timeout=COMPILE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise TenzrError(f"IREE did not finish compiling for {target.name} within {COMPILE_TIMEOUT_S} s") from None
        out.seek(0)
        err.seek(0)
        vmfb, stderr = out.read(), err.read().decode(errors="replace")
    if done.returncode != 0:
        errors = [line.strip() for line in stderr.splitlines() if "error:" in line]
        why = "it crashed" if done.returncode < 0 else "it reported errors"
        raise TenzrError(f"IREE could not compile the module for {target.name} ({why})",
                         notes=tuple((e, None) for e in errors[:5]) or ((stderr.strip()[-500:], None),))
    return vmfb, _returns_a_value_twice(stderr)
