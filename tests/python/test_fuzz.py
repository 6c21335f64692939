"""Differential fuzzing: random tenzr programs, differentiated by tenzr-grad (reverse) and
tenzr-jvp (forward) and compiled for CPU in float64, against an independent NumPy
evaluation of the same program (values) and central finite differences of it (both
derivatives).

CI runs a fixed-seed campaign of TENZR_FUZZ_EXAMPLES programs (default 40). `make fuzz`
runs fresh seeds for a given time. A failure shrinks to a minimal program, which is saved
in fuzz_regressions/ and replayed by test_saved_regressions from then on.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from programs import Program, programs

from tenzr.compiler import compile_stablehlo, lower_to_stablehlo
from tenzr.dialect import TensorSpec, make_context, parse_module
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.functions import build_function, new_module
from tenzr.passes.tenzr_grad import differentiate
from tenzr.passes.tenzr_jvp import jvp_function
from tenzr.runtime import Program as Compiled
from tenzr.targets import Target

H = 1e-6
REGRESSIONS = Path(__file__).parent / "fuzz_regressions"
EXAMPLES = int(os.environ.get("TENZR_FUZZ_EXAMPLES", "40"))
SEED = os.environ.get("TENZR_FUZZ_SEED")


def compile_program(text: str) -> Compiled:
    with make_context():
        module = parse_module(text)
        differentiate(module, "f", (), "vjp")
        jvp_function(module, "f")
        lower_to_stablehlo(module)
        return Compiled(compile_stablehlo(str(module), Target()), Target())


def program_text(prog: Program) -> str:
    with make_context():
        module = new_module()
        build_function(module, "f", [TensorSpec(s, "f64") for s in prog.inputs], prog.build)
        return str(module)


def derivatives(compiled: Compiled, outputs: int) -> tuple:
    """The compiled VJP and JVP of a program with `outputs` results, as directional_check
    takes them (each drops the values it returns first)."""
    return (lambda xs, cts: compiled("f_vjp", *xs, *cts)[outputs:],
            lambda xs, ts: compiled("f_jvp", *xs, *ts)[outputs:])


def directional_check(forward, vjp, jvp, inputs, rng, what):
    """`forward(inputs)` gives the returned values, `vjp(inputs, cotangents)` the gradients
    and `jvp(inputs, tangents)` the returned values' tangents: <ct, J v> three ways (finite
    differences, VJP, JVP) for two random directions v."""
    ys = forward(inputs)
    cts = [rng.standard_normal(np.shape(y)) for y in ys]
    grads = vjp(inputs, cts)
    scale = 1 + max(float(np.max(np.abs(y), initial=0)) for y in ys)
    for _ in range(2):
        v = [rng.standard_normal(a.shape) for a in inputs]
        plus = forward([a + H * d for a, d in zip(inputs, v, strict=True)])
        minus = forward([a - H * d for a, d in zip(inputs, v, strict=True)])
        numeric = float(sum(np.sum(ct * (p - m) / (2 * H)) for ct, p, m in zip(cts, plus, minus, strict=True)))
        for how, analytic in (("VJP", float(sum(np.sum(g * d) for g, d in zip(grads, v, strict=True)))),
                              ("JVP", float(sum(np.sum(ct * t) for ct, t in zip(cts, jvp(inputs, v), strict=True))))):
            tolerance = 1e-5 * (abs(numeric) + abs(analytic)) + 1e-7 * scale
            assert abs(numeric - analytic) <= tolerance, f"{what}: finite differences {numeric!r}, {how} {analytic!r}"


PENDING = REGRESSIONS / "pending.json"


def record_failure(prog: Program, text: str, value_seed: int, message: str) -> None:
    REGRESSIONS.mkdir(exist_ok=True)
    PENDING.write_text(json.dumps({"program": repr(prog), "ir": text, "inputs": [list(s) for s in prog.inputs],
                                   "outputs": len(prog.returned) + 1, "seed": value_seed, "failure": message},
                                  indent=1))


def keep_minimal_failure() -> Path | None:
    """Hypothesis reruns failing examples while shrinking, so the last recorded one is the
    minimal program; it becomes a named regression case."""
    if not PENDING.exists():
        return None
    case = json.loads(PENDING.read_text())
    path = REGRESSIONS / f"{hashlib.sha256(case['ir'].encode()).hexdigest()[:12]}.json"
    PENDING.replace(path)
    return path


def check_program(prog: Program, value_seed: int) -> None:
    text = program_text(prog)
    compiled = compile_program(text)
    rng = np.random.default_rng(value_seed)
    inputs = [rng.standard_normal(s) for s in prog.inputs]
    got = compiled("f", *inputs)
    want = prog.evaluate(inputs)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, err_msg=f"returned value {k} of {prog!r}")
    directional_check(prog.evaluate, *derivatives(compiled, len(want)), inputs, rng, repr(prog))


_settings = settings(max_examples=EXAMPLES, deadline=None, derandomize=SEED is None, database=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                            HealthCheck.data_too_large])


@_settings
@given(programs(), st.integers(0, 2**31 - 1))
def _campaign(prog, value_seed):
    try:
        check_program(prog, value_seed)
    except (AssertionError, TenzrError) as e:  # (a wrong value, or IREE failing to compile)
        record_failure(prog, program_text(prog), value_seed, str(e))
        raise


def test_random_programs_against_numpy():
    try:
        (seed(int(SEED))(_campaign) if SEED is not None else _campaign)()
    finally:
        saved = keep_minimal_failure()
        if saved is not None:
            print(f"minimal failing program saved as {saved}")


SAVED = sorted(REGRESSIONS.glob("*.json"))


@pytest.mark.parametrize("path", SAVED, ids=[p.stem for p in SAVED])
def test_saved_regressions(path):
    """A once-failing program, replayed: the VJP and JVP against finite differences of the
    compiled forward function (the NumPy reference is not stored)."""
    case = json.loads(path.read_text())
    compiled = compile_program(case["ir"])
    rng = np.random.default_rng(case["seed"])
    inputs = [rng.standard_normal(s) for s in case["inputs"]]
    directional_check(lambda xs: list(compiled("f", *xs)), *derivatives(compiled, case["outputs"]), inputs, rng,
                      case["program"])
