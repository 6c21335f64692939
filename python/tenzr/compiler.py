"""From a tenzr module to a runnable IREE module: the pipeline, then IREE.

`lower_to_stablehlo` runs `convert-tenzr-to-stablehlo`, `canonicalize` and `cse`.
`compile_stablehlo` hands StableHLO text to IREE in-process and returns the VM flatbuffer.
"""

from __future__ import annotations

import functools

from iree.compiler.api import Output, Session, Source

from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ir_imports import ir
from tenzr.passes.registry import parse_pipeline, run_pipeline
from tenzr.targets import Target

LOWERING_PIPELINE = "builtin.module(convert-tenzr-to-stablehlo,canonicalize,cse)"


def lower_to_stablehlo(module: ir.Operation) -> None:
    run_pipeline(module, parse_pipeline(LOWERING_PIPELINE), verify_each=False)


@functools.cache
def _session(flags: tuple[str, ...]) -> Session:
    session = Session()
    session.set_flags(*flags)
    return session


def compile_stablehlo(text: str, target: Target, extra_flags: tuple[str, ...] = ()) -> bytes:
    """IREE-compiles StableHLO `text` for `target`; returns the .vmfb bytes."""
    session = _session((*target.compiler_flags(), *extra_flags))
    invocation = session.invocation()
    try:
        invocation.enable_console_diagnostics()
        source = Source.wrap_buffer(session, text.encode())
        if not (invocation.parse_source(source) and invocation.execute()):
            raise TenzrError(f"IREE could not compile the module for {target.name} (its diagnostics are above)")
        output = Output.open_membuffer()
        invocation.output_vm_bytecode(output)
        return bytes(output.map_memory())
    finally:
        invocation.close()
