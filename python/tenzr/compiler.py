"""From a tenzr module to a runnable IREE module: the pipeline, then IREE.

`lower_to_stablehlo` runs LOWERING_PIPELINE, then the target's passes.
`compile_stablehlo` hands StableHLO text to IREE's compiler and returns the VM flatbuffer.
"""

from __future__ import annotations

import functools
import re
import subprocess

from iree.compiler.tools.core import find_tool

from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ir_imports import ir
from tenzr.passes.registry import parse_pipeline, run_pipeline
from tenzr.targets import Target

LOWERING_PIPELINE = ("builtin.module(convert-tenzr-to-stablehlo,func.func(chlo-legalize-to-stablehlo),inline,"
                     "tenzr-expand-math,tenzr-expand-select-and-scatter,tenzr-fold-empty-contractions,"
                     "tenzr-split-grouped-convolutions,tenzr-im2col,tenzr-reverse-before-strided-slice,"
                     "tenzr-split-reductions,tenzr-sort-rows,tenzr-bound-indices,tenzr-split-scatter-windows,"
                     "canonicalize,tenzr-concatenate-wide-pads,cse)")
"""Lowering (CHLO's ops, as JAX exports them, become StableHLO too), then the forms IREE
compiles well and the workarounds of its bugs and departures from StableHLO's semantics
(each a pass with its own lit test), then MLIR's cleanups."""
TARGET_PIPELINES = {"cpu": "builtin.module(tenzr-tile-heavy-results,tenzr-mark-in-place)",
                    "vulkan": "builtin.module(tenzr-widen-boundary)"}
"""What each target's IREE needs after that (Vulkan's only on its portable target)."""
COMPILE_TIMEOUT_S = 900


def lower_to_stablehlo(module: ir.Operation, target: Target | None = None) -> None:
    """Lowers every tenzr op, cleans up, and adjusts the result for `target` if given."""
    run_pipeline(module, parse_pipeline(LOWERING_PIPELINE), verify_each=False)
    if target is not None:
        prepare_for_target(module, target)


_UNSUPPORTED_ON_PORTABLE_VULKAN = re.compile(r"[x<]f64>")


def prepare_for_target(module: ir.Operation, target: Target) -> None:
    """Runs `target`'s pipeline (TARGET_PIPELINES) on a lowered module. Float64 is refused
    on IREE's portable Vulkan target, which would silently demote it."""
    if target.name == "vulkan" and not target.vulkan_target and _UNSUPPORTED_ON_PORTABLE_VULKAN.search(str(module)):
        raise TenzrError("float64 is not supported by IREE's portable Vulkan target (IREE would silently demote it "
                         "to float32); use float32, or name a GPU with float64 via Target(vulkan_target=...)")
    pipeline = TARGET_PIPELINES.get(target.name) if target.name != "vulkan" or not target.vulkan_target else None
    if pipeline is not None:
        run_pipeline(module, parse_pipeline(pipeline), verify_each=False)


@functools.cache
def _iree_compile() -> str:
    return find_tool("iree-compile")


def compile_stablehlo(text: str, target: Target, extra_flags: tuple[str, ...] = ()) -> bytes:
    """IREE-compiles StableHLO `text` for `target`; returns the .vmfb bytes.

    Each of the target's optimization flag sets is tried in turn (the fastest first): IREE
    3.13 rejects some modules under its faster options.
    """
    variants = target.optimization_flags(text)
    for i, optimization in enumerate(variants):
        try:
            return _compile_once(text, target, (*optimization, *extra_flags))
        except TenzrError:
            if i == len(variants) - 1:
                raise
    raise AssertionError("unreachable")


def _compile_once(text: str, target: Target, flags: tuple[str, ...]) -> bytes:
    """One run of IREE's compiler, as a separate process: a crash inside the compiler (IREE
    3.13 segfaults on some Vulkan targets) becomes an error here instead of taking the
    caller down."""
    command = [_iree_compile(), "-", "--output-format=vm-bytecode", "-o", "-", *target.compiler_flags(), *flags]
    try:
        done = subprocess.run(command, input=text.encode(), capture_output=True, timeout=COMPILE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise TenzrError(f"IREE did not finish compiling for {target.name} within {COMPILE_TIMEOUT_S} s") from None
    if done.returncode != 0:
        stderr = done.stderr.decode(errors="replace")
        errors = [line.strip() for line in stderr.splitlines() if "error:" in line]
        why = "it crashed" if done.returncode < 0 else "it reported errors"
        raise TenzrError(f"IREE could not compile the module for {target.name} ({why})",
                         notes=tuple((e, None) for e in errors[:5]) or ((stderr.strip()[-500:], None),))
    return done.stdout
