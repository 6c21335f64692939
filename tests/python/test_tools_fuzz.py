"""Hardening of the tools: mutated, truncated and random inputs, and extreme shapes, go
through tenzr-opt and tenzr-compile. Every outcome is a success or a clean `error:` with a
non-zero exit: no traceback, no hang, no crash."""

from __future__ import annotations

import io
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tenzr.tools import tenzr_opt

LIT = Path(__file__).parents[1] / "lit"
CORPUS = [p.read_text() for p in sorted(LIT.rglob("*.mlir"))]
PIPELINES = [[], ["--convert-tenzr-to-stablehlo"], ["--tenzr-grad=mode=vjp"],
             ["--tenzr-grad", "--convert-tenzr-to-stablehlo", "--canonicalize"], ["--split-input-file"],
             ["--tenzr-grad=mode=value_and_grad", "--mlir-print-ir-after-all"]]


def mutate(rng: random.Random, text: str) -> str:
    kind = rng.choice(["truncate", "delete", "duplicate", "shuffle", "bytes", "digits", "types"])
    if kind == "truncate":
        return text[:rng.randrange(len(text))]
    if kind == "delete":
        a = rng.randrange(len(text))
        return text[:a] + text[a + rng.randrange(1, 40):]
    if kind == "duplicate":
        a = rng.randrange(len(text))
        b = min(len(text), a + rng.randrange(1, 80))
        return text[:b] + text[a:b] + text[b:]
    if kind == "shuffle":
        lines = text.splitlines()
        rng.shuffle(lines)
        return "\n".join(lines)
    if kind == "bytes":
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400))).decode("latin-1")
    if kind == "digits":
        return "".join(str(rng.randrange(10)) if c.isdigit() and rng.random() < 0.3 else c for c in text)
    swaps = [("f32", "f64"), ("f32", "i32"), ("xf32", "x0xf32"), ("tensor<", "tensor<6x"), ("f32", "i1"),
             ("tensor<3", "tensor<?"), ("tenzr.add", "tenzr.sub"), ("tenzr.", "tenzr.x")]
    old, new = rng.choice(swaps)
    return text.replace(old, new, rng.randrange(1, 4))


def run_in_process(text: str, args: list[str], capsys) -> tuple[int, str]:
    sys.stdin = io.StringIO(text)
    try:
        code = tenzr_opt.main(["-", *args])
    finally:
        sys.stdin = sys.__stdin__
    return code, capsys.readouterr().err


@pytest.mark.parametrize("seed", range(6))
def test_mutated_inputs_in_process(seed, capsys):
    rng = random.Random(seed)
    for _ in range(60):
        text = mutate(rng, rng.choice(CORPUS))
        args = rng.choice(PIPELINES)
        code, err = run_in_process(text, args, capsys)
        assert code in (0, 1), (code, err, args, text)
        assert "Traceback" not in err and "internal error" not in err, (err, args, text)
        if code:
            assert "error:" in err


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


@pytest.mark.parametrize("seed", range(3))
def test_mutated_inputs_as_processes(seed, tmp_path):
    """The same mutations through real processes, so a crash in native code would show."""
    rng = random.Random(100 + seed)
    for i in range(8):
        text = mutate(rng, rng.choice(CORPUS))
        tool = rng.choice(sorted(TOOLS))
        src = tmp_path / f"in{i}.mlir"
        src.write_text(text, encoding="utf-8", errors="replace")
        exe = Path(sys.executable).with_name(tool)
        args = [a.format(out=tmp_path / "out.vmfb") for a in TOOLS[tool]]
        done = subprocess.run([str(exe), str(src), *args], capture_output=True, text=True, timeout=300)
        assert done.returncode in (0, 1), (tool, done.returncode, done.stderr, text)
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr, (done.stderr, text)
