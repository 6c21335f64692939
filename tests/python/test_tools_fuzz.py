"""Hardening of the tools: mutated, truncated and random inputs, and extreme shapes, go
through tenzr-opt and tenzr-compile, and the API meets misuse. Every outcome is a success
or a clean `error:` with a non-zero exit: no traceback, no hang, no crash."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import fuzz_tools
import pytest


def test_fixed_seed_slice_of_the_fuzz_campaign():
    """`make fuzz` for a fixed seed, smaller: tenzr-opt mutants (in a worker process, so a
    segfault or hang shows as one), random API misuse, and the gradients of accepted
    mutants against finite differences. Every outcome must be a success or a clean error."""
    report = fuzz_tools.campaign(seed=0, opt_count=300, api_count=150, gradients=8)
    assert not report.failures, "\n\n".join(report.failures[:5])
    outcomes = report.outcomes
    assert outcomes["accepted"] and outcomes["rejected, located"] and outcomes["api clean error"], report.summary()
    assert report.gradients_checked >= 8, report.summary()


EXTREME = {
    "rank0": "func.func @f(%x: tensor<f32>) -> tensor<f32> {\n"
             '  %0 = "tenzr.exp"(%x) : (tensor<f32>) -> tensor<f32>\n  return %0 : tensor<f32>\n}\n',
    "size0": "func.func @f(%x: tensor<0x3xf32>) -> tensor<3xf32> {\n"
             '  %0 = "tenzr.reduce_max"(%x) {axes = array<i64: 0>} : (tensor<0x3xf32>) -> tensor<3xf32>\n'
             "  return %0 : tensor<3xf32>\n}\n",
    "rank6": "func.func @f(%x: tensor<1x2x1x2x1x2xf32>) -> tensor<f32> {\n"
             '  %0 = "tenzr.reduce_sum"(%x) : (tensor<1x2x1x2x1x2xf32>) -> tensor<f32>\n  return %0 : tensor<f32>\n}\n',
    "huge": "func.func @f(%x: tensor<100000000000xf32>) -> tensor<100000000000xf32> {\n"
            '  %0 = "tenzr.neg"(%x) : (tensor<100000000000xf32>) -> tensor<100000000000xf32>\n'
            "  return %0 : tensor<100000000000xf32>\n}\n",
    "overflowing": "func.func @f(%x: tensor<9223372036854775807xf32>) -> tensor<9223372036854775807xf32> {\n"
                   '  %0 = "tenzr.neg"(%x) : (tensor<9223372036854775807xf32>) -> tensor<9223372036854775807xf32>\n'
                   "  return %0 : tensor<9223372036854775807xf32>\n}\n",
    "empty": "",
    "binary": "\x00\x01\x02garbage\xff",
}
TOOLS = {"tenzr-opt": ["--tenzr-grad=mode=vjp", "--convert-tenzr-to-stablehlo"], "tenzr-compile": ["-o", "{out}"]}


@pytest.mark.parametrize("tool", sorted(TOOLS))
@pytest.mark.parametrize("case", sorted(EXTREME))
def test_extreme_inputs_as_processes(tool, case, tmp_path):
    src = tmp_path / "in.mlir"
    src.write_bytes(EXTREME[case].encode("latin-1"))
    exe = Path(sys.executable).with_name(tool)
    args = [a.format(out=tmp_path / "out.vmfb") for a in TOOLS[tool]]
    done = subprocess.run([str(exe), str(src), *args], capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    if done.returncode:
        assert "error:" in done.stderr
