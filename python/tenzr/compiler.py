"""From a tenzr module to a runnable IREE module: the pipeline, then IREE.

`lower_to_stablehlo` runs `convert-tenzr-to-stablehlo`, `tenzr-expand-math`, `canonicalize`
and `cse`.
`compile_stablehlo` hands StableHLO text to IREE's compiler and returns the VM flatbuffer.
"""

from __future__ import annotations

import functools
import re
import subprocess

from iree.compiler.tools.core import find_tool

from tenzr.dialect.context import body_ops, functions
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ir_imports import ir
from tenzr.dialect.types import ir_type, spec_of, spec_of_type
from tenzr.passes import stablehlo as sh
from tenzr.passes.registry import parse_pipeline, run_pipeline
from tenzr.targets import INPUTS_REFLECTION, WIDENED, Target

LOWERING_PIPELINE = "builtin.module(convert-tenzr-to-stablehlo,tenzr-expand-math,canonicalize,cse)"
COMPILE_TIMEOUT_S = 900


def lower_to_stablehlo(module: ir.Operation, target: Target | None = None) -> None:
    """Lowers every tenzr op, cleans up, and adjusts the result for `target` if given."""
    run_pipeline(module, parse_pipeline(LOWERING_PIPELINE), verify_each=False)
    if target is not None:
        prepare_for_target(module, target)


_UNSUPPORTED_ON_PORTABLE_VULKAN = re.compile(r"[x<]f64>")


# StableHLO ops that IREE 3.13 may carry out in the buffer of an operand: when that operand
# is a function argument, IREE writes into the caller's input (iree-org/iree#16168).
_MAY_WRITE_AN_OPERAND = frozenset(f"stablehlo.{name}" for name in (
    "scatter", "dynamic_update_slice", "sort", "select_and_scatter", "while", "case", "if", "custom_call"))


def prepare_for_target(module: ir.Operation, target: Target) -> None:
    """Target-specific adjustments of a lowered module.

    On CPU, large results of long transcendental chains get a row sum beside them
    (`_tile_heavy_elementwise_results`), and functions of a module that has no op IREE may
    carry out in place are marked (reflection `tenzr.inputs = "in-place"`): the runtime may
    then hand them the callers' arrays without a copy (runtime.Program).

    IREE's portable Vulkan target stores everything in 32-bit words; buffers of 1- and
    2-byte elements at a function's boundary come out wrong on lavapipe (bools of 3, 5 or
    6 elements, any float16). Such arguments and results cross the boundary widened
    (`targets.WIDENED`), and the runtime narrows them back.
    """
    if target.name == "cpu":
        in_place = not _has_op(module, _MAY_WRITE_AN_OPERAND)
        for func in functions(module).values():
            if func.regions[0].blocks:
                _tile_heavy_elementwise_results(func)
            if in_place:
                _add_reflection(func, {INPUTS_REFLECTION: "in-place"})
        return
    if target.name != "vulkan" or target.vulkan_target:
        return
    if _UNSUPPORTED_ON_PORTABLE_VULKAN.search(str(module)):
        raise TenzrError("float64 is not supported by IREE's portable Vulkan target (IREE would silently demote it "
                         "to float32); use float32, or name a GPU with float64 via Target(vulkan_target=...)")
    for func in functions(module).values():
        if func.regions[0].blocks:
            _widen_boundary(func)


HEAVY_RESULT_MIN_TRANSCENDENTALS = 4
HEAVY_RESULT_MIN_ELEMENTS = 1 << 16


def _tile_heavy_elementwise_results(func: ir.Operation) -> None:
    """IREE 3.13 vectorizes a dispatch of elementwise work one vector at a time, so a long
    chain of dependent polynomial evaluations (sin, exp, ...) waits on its own latency; a
    dispatch that also reduces along the last axis is tiled 8 rows by 8 columns and runs
    eight chains at once. A large returned value computed by such a chain therefore gets a
    row sum beside it, behind an optimization barrier (so nothing removes the unused sum),
    and IREE fuses the sum into the value's dispatch. Same process on Zen 3: a 50-op chain
    (25 transcendentals) returned whole 25-26 -> 15 ms, the chain benchmark's gradient
    45 -> 40 ms, 4 transcendentals 3.0 -> 2.3 ms; with 2 it broke even and with 1 it ran
    1.5x slower, hence HEAVY_RESULT_MIN_TRANSCENDENTALS."""
    ret = body_ops(func)[-1]
    for i, value in enumerate(list(ret.operands)):
        s = spec_of_type(value.type)
        if (s is None or not s.is_float or s.rank < 2 or s.shape[-1] < 8 or s.size < HEAVY_RESULT_MIN_ELEMENTS
                or _transcendentals_before(value) < HEAVY_RESULT_MIN_TRANSCENDENTALS):
            continue
        with ret.location, ir.InsertionPoint(ret):
            rows = sh.reduce(value, 0, [s.rank - 1], "add")
            ret.operands[i] = sh.optimization_barrier(value, rows)[0]


def _transcendentals_before(value: ir.Value) -> int:
    """Transcendental ops among the elementwise ops that compute `value` (IREE fuses those
    into one dispatch), each counted once."""
    seen: set[ir.Operation] = set()
    stack, count = [value], 0
    while stack:
        op = sh.producer(stack.pop())
        if op is None or op in seen or op.name not in sh.ELEMENTWISE:
            continue
        seen.add(op)
        count += op.name in sh.TRANSCENDENTAL
        stack.extend(op.operands)
    return count


def _widen_boundary(func: ir.Operation) -> None:
    block = func.regions[0].blocks[0]
    ops = body_ops(func)
    arg_dtypes = [spec_of(a).dtype for a in block.arguments]
    with func.location, ir.InsertionPoint(ops[0]):
        for arg, dtype in zip(block.arguments, arg_dtypes, strict=True):
            if dtype in WIDENED:
                arg.set_type(ir_type(spec_of(arg).with_dtype(WIDENED[dtype])))
                narrow = sh.convert(arg, dtype)
                arg.replace_all_uses_except(narrow, narrow.owner.operation)
    ret = ops[-1]
    result_dtypes = [spec_of(v).dtype for v in ret.operands]
    with func.location, ir.InsertionPoint(ret):
        for i, (value, dtype) in enumerate(zip(list(ret.operands), result_dtypes, strict=True)):
            if dtype in WIDENED:
                ret.operands[i] = sh.convert(value, WIDENED[dtype])
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [a.type for a in block.arguments], [v.type for v in ret.operands]))
    _add_reflection(func, {"tenzr.args": ",".join(arg_dtypes), "tenzr.results": ",".join(result_dtypes)})


def _add_reflection(func: ir.Operation, entries: dict[str, str]) -> None:
    """Adds string entries to the function's `iree.reflection`, which IREE keeps in the
    compiled module for the runtime to read."""
    found = func.attributes["iree.reflection"] if "iree.reflection" in func.attributes else None
    merged = {a.name: a.attr for a in ir.DictAttr(found)} if found is not None else {}
    merged.update({k: ir.StringAttr.get(v) for k, v in entries.items()})
    func.attributes["iree.reflection"] = ir.DictAttr.get(merged)


def _has_op(module: ir.Operation, names: frozenset[str]) -> bool:
    found = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in names:
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return bool(found)


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
