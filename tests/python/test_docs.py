"""The docs stay true: generated references are current, every tutorial step runs, and the
docstring examples of the public API pass as doctests."""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tenzr as tz
from tenzr.runtime import device_available
from tenzr.tools import gen_docs

ROOT = Path(__file__).parents[2]
TUTORIAL = ROOT / "docs" / "tutorial.md"
BLOCK = re.compile(r"```(\w+)([^\n]*)\n(.*?)```", re.S)


def test_generated_docs_are_current():
    assert gen_docs.main(["--check"]) == 0, "run `python -m tenzr.tools.gen_docs`"


def test_every_op_is_documented_with_an_example():
    text = (ROOT / "docs" / "dialect.md").read_text()
    from tenzr.dialect.ops import OPS

    for name in OPS:
        section = text.split(f"## `{name}`", 1)[1].split("\n## ", 1)[0]
        assert f'"{name}"' in section, f"{name} has no generic-form example"


NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+)")


def _same_output(shown: str, printed: str) -> bool:
    """Whether `printed` ends with the output a doc shows (that of a block's last command):
    the same text, with numbers equal to 1e-5 relative (the last digits of float32 math
    differ between CPUs)."""
    lines = shown.strip().splitlines()
    printed = "\n".join(printed.strip().splitlines()[-len(lines):])
    shown_numbers, printed_numbers = NUMBER.findall(shown), NUMBER.findall(printed)
    if NUMBER.sub("#", shown).split() != NUMBER.sub("#", printed).split():
        return False
    return np.allclose([float(n) for n in shown_numbers], [float(n) for n in printed_numbers], rtol=1e-5,
                       atol=1e-7)


def run_doc(path: Path, folder: Path) -> int:
    """Runs a Markdown page's blocks in order in `folder`: ```mlir file=NAME is written
    there, ```sh runs in bash and ```python in one namespace (a ```text block after either
    is what it must print last); ```sh vulkan and ```python vulkan run where a Vulkan
    device exists, and
    ```sh setup is the repository's own setup (test_quick_start_demo_runs runs it). Returns
    how many blocks ran."""
    env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]}
    namespace: dict = {}
    ran, printed, skipped = 0, None, False
    for kind, info, body in BLOCK.findall(path.read_text()):
        info = info.strip()
        if kind == "text" and skipped:  # (the output of a block this machine cannot run)
            skipped = False
            continue
        skipped = False
        if kind == "text":
            assert printed is not None, f"{path.name}: an output block follows nothing that ran:\n{body}"
            assert _same_output(body, printed), f"{path.name}: expected\n{body}\ngot\n{printed}"
            printed = None
            continue
        printed = None
        if kind == "mlir" and info.startswith("file="):
            (folder / info.removeprefix("file=")).write_text(body)
        elif kind == "sh" and info != "setup":
            if info == "vulkan" and not device_available("vulkan"):
                skipped = True
                continue
            done = subprocess.run(["bash", "-e", "-c", body], cwd=folder, env=env, capture_output=True, text=True,
                                  timeout=600)
            assert done.returncode == 0, f"{path.name}:\n{body}\n{done.stderr}"
            assert "error" not in done.stderr.lower(), done.stderr
            printed = done.stdout
            ran += 1
        elif kind == "python":
            if info == "vulkan" and not device_available("vulkan"):
                skipped = True
                continue
            cwd = os.getcwd()
            os.chdir(folder)
            out = io.StringIO()
            try:
                with contextlib.redirect_stdout(out):
                    exec(compile(body, str(path), "exec"), namespace)
            finally:
                os.chdir(cwd)
            printed = out.getvalue()
            ran += 1
    return ran


def test_tutorial_runs_step_by_step(tmp_path):
    assert run_doc(TUTORIAL, tmp_path) >= 8
    assert (ROOT / "docs" / "loss_grad.svg").exists()  # the picture the tutorial shows


def test_readme_runs_step_by_step(tmp_path):
    assert run_doc(ROOT / "README.md", tmp_path) >= 3


@pytest.mark.skipif(Path(sys.prefix) != ROOT / ".venv", reason="make demo uses the repository's .venv")
def test_quick_start_demo_runs():
    """The README's `make demo` (its `make test` is the suite itself, which CI runs)."""
    done = subprocess.run(["make", "demo"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "training accuracy" in done.stdout and ". .venv/bin/activate" in done.stdout


def test_graph_tool_draws_the_gradient(tmp_path):
    src = tmp_path / "m.mlir"
    src.write_text(BLOCK.search(TUTORIAL.read_text()).group(3))
    exe = Path(sys.executable).with_name("tenzr-graph")
    done = subprocess.run([str(exe), str(src), "--func=loss_grad", "--tenzr-grad=func=loss"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('digraph "loss_grad"') and "stablehlo.dot_general" in done.stdout


def _public_functions():
    names = [n for n in dir(tz) if not n.startswith("_")]
    return [(n, getattr(tz, n)) for n in names
            if (callable(getattr(tz, n)) and not isinstance(getattr(tz, n), type)) or n in ("jit", "custom_vjp")]


@pytest.mark.parametrize("name, fn", _public_functions(), ids=[n for n, _ in _public_functions()])
def test_public_functions_have_docstrings(name, fn):
    assert (fn.__doc__ or "").strip(), f"tz.{name} has no docstring"


def test_docstring_examples_run():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    seen = 0
    for name, fn in _public_functions():
        for test in finder.find(fn, f"tz.{name}", globs={"tz": tz, "np": np}):
            if test.examples:
                runner.run(test)
                seen += 1
    assert runner.failures == 0
    assert seen >= 5
