"""The pass registry and pipelines: options, mixed tenzr/MLIR pipelines, and the verifier
that runs after every pass and blames the pass that broke the IR."""

from __future__ import annotations

import contextlib
import io
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from tenzr.dialect import make_context, parse_module
from tenzr.dialect.context import body_ops, functions
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ir_imports import ir
from tenzr.passes.registry import PASSES, Pass, make_pass, parse_pipeline, run_pipeline
from tenzr.tools import tenzr_opt

SRC = """
func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "tenzr.mul"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "tenzr.reduce_sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
"""


@dataclass
class BreakShapes(Pass):
    """A deliberately buggy pass: retypes the first op's result."""

    flag: ClassVar[str] = "test-break-shapes"
    summary: ClassVar[str] = "test only"

    def run(self, module: ir.Operation) -> None:
        op = body_ops(functions(module)["f"])[0]
        op.results[0].set_type(ir.RankedTensorType.get([4], ir.F32Type.get(), loc=ir.Location.unknown()))


def test_verifier_after_each_pass_blames_the_pass():
    with make_context():
        module = parse_module(SRC)
        from tenzr.passes.registry import tenzr_step

        with pytest.raises(TenzrError, match="pass 'test-break-shapes' produced invalid IR \\(a bug in that pass\\)"):
            run_pipeline(module, [tenzr_step(BreakShapes())])


def test_verify_each_can_be_turned_off():
    with make_context():
        module = parse_module(SRC)
        from tenzr.passes.registry import tenzr_step

        run_pipeline(module, [tenzr_step(BreakShapes())], verify_each=False)


def test_pipeline_mixes_tenzr_and_mlir_passes_in_order():
    with make_context():
        module = parse_module(SRC)
        steps = parse_pipeline("builtin.module(tenzr-grad{func=f mode=value_and_grad},convert-tenzr-to-stablehlo,"
                               "canonicalize,cse,symbol-dce)")
        assert [s.name for s in steps] == ["tenzr-grad{func=f wrt= mode=value_and_grad recompute=true}",
                                           "convert-tenzr-to-stablehlo", "canonicalize", "cse", "symbol-dce"]
        run_pipeline(module, steps)
        assert "tenzr." not in str(module) and "f_value_and_grad" in str(module)


@pytest.mark.parametrize("text, message", [
    ("wrt=0,x", "option 'wrt' of pass 'tenzr-grad' expects int,int,..., got '0,x'"),
    ("mode", "option 'mode' of pass 'tenzr-grad' must be written key=value"),
    ("depth=3", "pass 'tenzr-grad' has no option 'depth'"),
    ("wrt=0,99999999999999999999", "option 'wrt' of pass 'tenzr-grad' must be between -2147483647 and 2147483647"),
    ("tenzr-batch size=100000000000", "option 'size' of pass 'tenzr-batch' must be between"),
    ("tenzr-jvp width=99999999999999999999", "option 'width' of pass 'tenzr-jvp' must be between"),
])
def test_bad_options(text, message):
    """(A batch size or width too large for a tensor's dim crashed the bindings, or passed.)"""
    flag, _, options = text.rpartition(" ") if text.startswith("tenzr-") else ("tenzr-grad", "", text)
    with pytest.raises(TenzrError, match=message):
        make_pass(flag, options)


def test_options_parse_to_typed_fields():
    p = make_pass("tenzr-grad", "func=loss wrt=0,2 mode=vjp")
    assert (p.func, p.wrt, p.mode) == ("loss", (0, 2), "vjp")
    assert set(PASSES) >= {"tenzr-grad", "tenzr-verify", "convert-tenzr-to-stablehlo"}


def test_wrapping_ops_imports_no_dialect_module_twice():
    # the bindings import a Python module for an op's dialect whenever they wrap an op and
    # forget a failure; op_views gives stablehlo and tenzr one, so no import repeats
    import sys

    from tenzr.passes.tenzr_grad import differentiate

    attempts: list[str] = []

    class Spy:
        def find_spec(self, name, path=None, target=None):
            attempts.append(name)

    with make_context():
        module = parse_module(SRC)
        sys.meta_path.insert(0, Spy())
        try:
            differentiate(module, "f", (), "value_and_grad")
            run_pipeline(module, parse_pipeline("builtin.module(convert-tenzr-to-stablehlo)"))
            for func in functions(module).values():
                for op in body_ops(func):
                    _ = [result.owner for result in op.results]
        finally:
            sys.meta_path.pop(0)
    assert len(attempts) == len(set(attempts)), attempts


def test_caches_do_not_keep_every_context_alive():
    """tenzr-opt run in-process once per input (as the fuzz campaign does) grew by 3.3 MB a
    run: the type and attribute caches held every context ever made."""
    from tenzr.dialect import context as contexts
    from tenzr.dialect import types
    from tenzr.passes import stablehlo as sh

    text = (Path(__file__).parents[1] / "lit" / "grad" / "elementwise.mlir").read_text()
    for _ in range(3 * contexts.MAX_CACHED_CONTEXTS):
        sys.stdin = io.StringIO(text)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                assert tenzr_opt.main(["-", "--tenzr-grad=mode=vjp", "--split-input-file",
                                       "--convert-tenzr-to-stablehlo"]) == 0
        finally:
            sys.stdin = sys.__stdin__
    held = {key[0] for key in types._to_ir} | {t.context for t in types._from_ir}
    assert len(held) <= contexts.MAX_CACHED_CONTEXTS + len(contexts._PINNED)
    assert sh._parse_attr.cache_info().currsize < 1000
