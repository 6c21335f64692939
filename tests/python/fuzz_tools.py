"""A mutation fuzz of `tenzr-opt`'s input, and of the Python API's arguments.

Mutants of the lit corpus (and random misuse of `tz` calls) run in a worker process, so
that a segfault or a hang is seen as one instead of ending the campaign. Every outcome is
classified; the only acceptable ones are success and a clean error (`file:line:col:
error: ...`, or `error: ...` where no location applies). An accepted mutant's gradients
are checked against central finite differences of its own compiled forward function in
float64 (an oracle independent of the VJP rules).

    python tests/python/fuzz_tools.py --seconds 600 [--seed S] [--gradients 40]

`make fuzz` runs it; `test_tools_fuzz.py` runs a fixed-seed slice of it in `make test`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import select
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

LIT = Path(__file__).parents[1] / "lit"
CORPUS = [chunk for p in sorted(LIT.rglob("*.mlir")) for chunk in p.read_text().split("// -----")]
PIPELINES = [[], ["--convert-tenzr-to-stablehlo"], ["--tenzr-grad=mode=vjp"],
             ["--tenzr-grad", "--convert-tenzr-to-stablehlo", "--canonicalize"], ["--split-input-file"],
             ["--tenzr-grad=mode=value_and_grad", "--mlir-print-ir-after-all"]]
TIMEOUT_S = 60
LOCATED = re.compile(r"^(?:\S+:\d+(?::\d+)?: )?(?:error|note): ", re.M)


# --------------------------------------------------------------------------- mutations


def _swap_types(rng: random.Random, text: str) -> str:
    swaps = [("f32", "f64"), ("f32", "i32"), ("xf32", "x0xf32"), ("tensor<", "tensor<6x"), ("f32", "i1"),
             ("tensor<3", "tensor<?"), ("tenzr.add", "tenzr.sub"), ("tenzr.", "tenzr.x"), ("f32", "bf16"),
             ("array<i64:", "array<i0:")]
    old, new = rng.choice(swaps)
    return text.replace(old, new, rng.randrange(1, 4))


def _digits(rng: random.Random, text: str) -> str:
    return "".join(str(rng.randrange(10)) if c.isdigit() and rng.random() < 0.3 else c for c in text)


def _huge_integer(rng: random.Random, text: str) -> str:
    numbers = list(re.finditer(r"\d+", text))
    if not numbers:
        return text
    m = rng.choice(numbers)
    return text[:m.start()] + rng.choice(["9" * rng.randrange(19, 500), "-1", "0", str(2**63)]) + text[m.end():]


def _nest(rng: random.Random, text: str) -> str:
    depth = rng.choice([2, 50, 300, 3000])
    return "module {\n" * depth + text + "\n}" * depth


def _drop_line(rng: random.Random, text: str) -> str:
    lines = text.splitlines()
    if not lines:
        return text
    del lines[rng.randrange(len(lines))]
    return "\n".join(lines)


def _swap_values(rng: random.Random, text: str) -> str:
    names = sorted(set(re.findall(r"%[\w]+", text)))
    if len(names) < 2:
        return text
    a, b = rng.sample(names, 2)
    return re.sub(re.escape(a) + r"\b", "\0", text).replace(b, a).replace("\0", b)


def _attribute(rng: random.Random, text: str) -> str:
    arrays = list(re.finditer(r"array<i64:[^>]*>", text))
    if not arrays:
        return _huge_integer(rng, text)
    m = rng.choice(arrays)
    values = ", ".join(str(rng.choice([-3, -1, 0, 1, 2, 7, 10**12])) for _ in range(rng.randrange(0, 5)))
    return text[:m.start()] + (f"array<i64: {values}>" if values else "array<i64>") + text[m.end():]


def _splice(rng: random.Random, text: str) -> str:
    donor = rng.choice(CORPUS).splitlines() or [""]
    lines = text.splitlines()
    lines.insert(rng.randrange(len(lines) + 1), rng.choice(donor))
    return "\n".join(lines)


def mutate(rng: random.Random, text: str) -> str:
    """One random mutation of `text`: structural, lexical or semantic."""
    kind = rng.choice(["truncate", "delete", "duplicate", "shuffle", "bytes", "digits", "types", "huge_integer",
                       "nest", "drop_line", "swap_values", "attribute", "splice"])
    if kind == "truncate":
        return text[:rng.randrange(len(text))] if text else text
    if kind == "delete":
        a = rng.randrange(len(text) or 1)
        return text[:a] + text[a + rng.randrange(1, 40):]
    if kind == "duplicate":
        a = rng.randrange(len(text) or 1)
        b = min(len(text), a + rng.randrange(1, 80))
        return text[:b] + text[a:b] + text[b:]
    if kind == "shuffle":
        lines = text.splitlines()
        rng.shuffle(lines)
        return "\n".join(lines)
    if kind == "bytes":
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400))).decode("latin-1")
    return {"digits": _digits, "types": _swap_types, "huge_integer": _huge_integer, "nest": _nest,
            "drop_line": _drop_line, "swap_values": _swap_values, "attribute": _attribute,
            "splice": _splice}[kind](rng, text)


_ODD_OPTIONS = ["func=", "func=f,", "wrt=" + "9" * 30, "wrt=-1", "wrt=0,,1", "wrt=a", "mode=", "mode=vjp mode=grad",
                "func=f wrt=0 mode=value_and_grad", 'func="f"', "func=@f", "=", "x=y", "wrt=0 wrt=1"]


def mutate_args(rng: random.Random, args: list[str]) -> list[str]:
    """Pass flags with odd options, pipelines with odd text, flags repeated or unknown."""
    kind = rng.choice(["option", "pipeline", "flag"])
    if kind == "option":
        return [*args, f"--tenzr-grad={rng.choice(_ODD_OPTIONS)}"]
    if kind == "pipeline":
        pipeline = rng.choice(["builtin.module(tenzr-grad{" + rng.choice(_ODD_OPTIONS) + "})", "builtin.module(",
                               "builtin.module(func.func(tenzr-grad))", "builtin.module(canonicalize,,cse)",
                               "any(tenzr-grad)", "builtin.module(tenzr-grad{func=f}" * 40])
        return [*args, f"--pass-pipeline={pipeline}"]
    return [*args, rng.choice(["--split-input-file", "--verify-diagnostics", "--verify-each=maybe", "-o",
                               "--mlir-print-op-generic", "--tenzr-verify", "--inline", "--symbol-dce", "--no-flag"])]


def opt_cases(seed: int):
    """(text, tenzr-opt arguments) of mutants, endlessly."""
    rng = random.Random(seed)
    while True:
        text = rng.choice(CORPUS)
        for _ in range(rng.choice([1, 1, 2, 3])):
            text = mutate(rng, text)
        args = rng.choice(PIPELINES)
        yield text, mutate_args(rng, args) if rng.random() < 0.2 else args


# --------------------------------------------------------------------------- API misuse

_ODD = [None, "x", -1, 0, 3, 1.5, True, (), (0, 0), [0, 5], {"a": 1}, {1: 2, "b": 3}, 1 + 2j, 10**30, np.float64(2.0),
        np.ones(3, np.complex64), np.ones((2, 0)), np.ones(2, np.uint8), [[1, 2], [3]], object()]
_CALLS = ["exp", "sum", "reshape", "transpose", "matmul", "take", "where", "concatenate", "pad", "zeros", "full",
          "einsum", "mean", "argmax", "sort", "clip", "expand_dims", "squeeze", "broadcast_to", "stack", "getitem"]


def api_case(seed: int) -> str:
    """Runs one random misuse of the API; returns "ok" or "clean error", raises otherwise."""
    import tenzr as tz

    rng = random.Random(seed)
    x = np.linspace(-1, 1, 6).reshape(2, 3)
    args = [rng.choice(_ODD) for _ in range(rng.randrange(0, 3))]
    name = rng.choice(_CALLS)

    def body(v):
        operands = [v if rng.random() < 0.6 else a for a in args]
        if name == "getitem":
            return v[tuple(operands)] if operands else v[rng.choice([5, -7, None, ..., (1, 2, 3)])]
        return getattr(tz, name)(v, *operands)

    transform = rng.choice(["jit", "grad", "vjp", "value_and_grad"])
    here = os.path.abspath(__file__)
    try:
        if transform == "jit":
            tz.jit(body)(x)
        elif transform == "vjp":
            out, pullback = tz.vjp(body, x)
            pullback(out)
        else:
            argnums = rng.choice([0, 0, 1, (0,), (0, 0), "x", -1, ()])
            fn = tz.grad if transform == "grad" else tz.value_and_grad
            fn(lambda v: tz.sum(body(v)), argnums=argnums, has_aux=rng.random() < 0.2)(x)
    except tz.TenzrError:
        return "clean error"
    except (TypeError, ValueError) as e:  # Python's own, raised at the call itself (a wrong arity)
        tb = e.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        if tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) == here:
            return "Python error at the call"
        raise
    return "ok"


# --------------------------------------------------------------------------- gradients of accepted mutants


def gradient_problems(text: str, seed: int = 0) -> tuple[int, list[str]]:
    """(functions checked, problems): each public function of `text` with floating-point
    arguments and results, made float64, differentiated in vjp mode and compiled; its VJP
    against central differences of its own compiled forward. Modules with custom rules
    are left out."""
    from tenzr.compiler import compile_stablehlo, lower_to_stablehlo
    from tenzr.dialect import make_context, parse_module
    from tenzr.dialect.context import functions
    from tenzr.dialect.diagnostics import TenzrError
    from tenzr.dialect.types import spec_of_type
    from tenzr.dialect.verify import verify_module
    from tenzr.passes.tenzr_grad import differentiate, function_type
    from tenzr.runtime import Program
    from tenzr.targets import Target

    if "tenzr.custom_vjp" in text or "tenzr.custom_call" in text:
        return 0, []  # their rules are whatever the user wrote, not the derivative
    wide = re.sub(r"b?f(?:16|32)(?!\d)", "f64", text)
    with make_context():
        try:
            module = parse_module(wide)
        except TenzrError:
            return 0, []
        if verify_module(module):
            return 0, []
        chosen = {}
        for name, f in functions(module).items():
            if not f.regions[0].blocks or "sym_visibility" in f.attributes:
                continue
            ftype = function_type(f)
            args = [spec_of_type(t) for t in ftype.inputs]
            results = [spec_of_type(t) for t in ftype.results]
            if not results or any(s is None or not s.is_float for s in results) or any(s is None for s in args):
                continue
            if not any(s.is_float for s in args) or any(s.size > 4096 for s in args + results):
                continue
            try:
                differentiate(module, name, (), "vjp")
                chosen[name] = (args, results)
            except TenzrError:
                continue
        if not chosen:
            return 0, []
        try:
            lower_to_stablehlo(module)
            program = Program(compile_stablehlo(str(module), Target()), Target())
        except TenzrError:
            return 0, []
    problems = []
    for name, (args, results) in chosen.items():
        problem = _check_one(program, name, args, results, seed)
        if problem:
            problems.append(problem)
    return len(chosen), problems


def _check_one(program, name, args, results, seed) -> str | None:
    """A directional check, retried with new inputs before calling it a mismatch (kinks of
    floor, sign, comparisons and max can sit near a random input)."""
    h = 1e-6
    message = None
    for attempt in range(3):
        rng = np.random.default_rng([seed, attempt])
        inputs = [rng.uniform(0.5, 1.5, s.shape) if s.is_float else rng.integers(0, 2, s.shape).astype(
            {"i1": np.bool_, "i32": np.int32, "i64": np.int64}[s.dtype]) for s in args]
        try:
            ys = program(name, *inputs)
            cts = [rng.standard_normal(s.shape) for s in results]
            grads = program(f"{name}_vjp", *inputs, *cts)[len(results):]
        except Exception as e:  # an IREE runtime failure is a finding too
            return f"@{name}: running failed: {e}"
        floats = [i for i, s in enumerate(args) if s.is_float]
        directions = {i: rng.standard_normal(args[i].shape) for i in floats}

        def forward(sign, inputs=inputs, directions=directions):
            moved = [a + sign * h * directions[i] if i in directions else a for i, a in enumerate(inputs)]
            return program(name, *moved)

        plus, minus = forward(1.0), forward(-1.0)
        numeric = sum(float(np.sum(c * (p - m) / (2 * h))) for c, p, m in zip(cts, plus, minus, strict=True))
        analytic = sum(float(np.sum(g * directions[i])) for g, i in zip(grads, floats, strict=True))
        scale = abs(numeric) + abs(analytic) + 1e-6 * (1 + max(float(np.max(np.abs(y), initial=0)) for y in ys))
        if not (np.isfinite(numeric) and np.isfinite(analytic)) or abs(numeric - analytic) <= 1e-5 * scale:
            return None
        message = f"@{name}: finite differences {numeric!r}, VJP {analytic!r}"
    return message


# --------------------------------------------------------------------------- the worker


def _serve() -> None:
    """The worker: one JSON request per line on stdin, one JSON reply per line on stdout."""
    from tenzr.tools import tenzr_opt

    replies = sys.stdout
    sys.stdout = io.StringIO()  # anything else printed must not mix with the replies
    for line in sys.stdin:
        request = json.loads(line)
        if request["kind"] == "opt":
            err = io.StringIO()
            sys.stdin, stdin = io.StringIO(request["text"]), sys.stdin
            try:
                with contextlib.redirect_stderr(err):
                    code = tenzr_opt.main(["-", *request["args"]])
            finally:
                sys.stdin = stdin
            reply = {"code": code, "err": err.getvalue()[-2000:]}
        elif request["kind"] == "api":
            try:
                reply = {"outcome": api_case(request["seed"])}
            except Exception as e:
                reply = {"outcome": "exception", "err": f"{type(e).__name__}: {e}"[-2000:]}
        else:
            checked, problems = gradient_problems(request["text"], request["seed"])
            reply = {"checked": checked, "problems": problems}
        sys.stdout.truncate(0)
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


class Worker:
    """A worker process, restarted after it crashes or hangs."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None

    def ask(self, request: dict, timeout: float = TIMEOUT_S) -> dict:
        """The worker's reply, or {"crash": signal} / {"hang": True}."""
        if self.process is None or self.process.poll() is not None:
            env = {**os.environ, "PYTHONFAULTHANDLER": "0"}
            self.process = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        line = self.process.stdout.readline() if ready else ""
        if line:
            return json.loads(line)
        if not ready:
            self.process.kill()
            self.process.wait()
            self.process = None
            return {"hang": True}
        code = self.process.wait()
        self.process = None
        return {"crash": code}

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()


# --------------------------------------------------------------------------- a campaign


@dataclass
class Report:
    outcomes: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)
    gradients_checked: int = 0

    def add(self, outcome: str, detail: str = "") -> None:
        self.outcomes[outcome] += 1
        if outcome in ("crash", "hang", "traceback", "internal error", "unlocated output", "exception",
                       "gradient mismatch"):
            self.failures.append(f"{outcome}: {detail}"[:3000])

    def summary(self) -> str:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items()))
        return f"{sum(self.outcomes.values())} cases: {counts}; gradients checked for {self.gradients_checked} " \
               "functions"


API_OUTCOMES = {"ok": "api ok", "clean error": "api clean error",
                "Python error at the call": "api Python error at the call"}


def classify_opt(reply: dict, args: list[str]) -> str:
    if "hang" in reply:
        return "hang"
    if "crash" in reply:
        return "crash"
    err = reply["err"]
    if "Traceback" in err:
        return "traceback"
    if reply["code"] == 3 or "internal error" in err:
        return "internal error"
    if reply["code"] == 0:
        return "accepted"
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("//")]
    if "--mlir-print-ir-after-all" in args:  # the IR dumps go to stderr too
        lines = [line for line in lines if re.search(r"\b(?:error|note): ", line)]
    if reply["code"] not in (1, 2) or not lines or not all(LOCATED.match(line) for line in lines):
        return "unlocated output"
    if reply["code"] == 2:
        return "bad command line"
    return "rejected, located" if re.match(r"^\S+:\d+(?::\d+)?: error", lines[0]) else "rejected, no location"


def campaign(*, seed: int, opt_count: int = 0, api_count: int = 0, gradients: int = 0, seconds: float = 0,
             log=None) -> Report:
    """Runs tenzr-opt mutants and API misuse cases (counts, or with `seconds`, 60% and 20% of
    that time), then checks the gradients of up to `gradients` functions of accepted
    mutants (in what time is left)."""
    report = Report()
    worker = Worker()
    start = time.monotonic()

    def more(count: int, done: int, share: float) -> bool:
        return time.monotonic() < start + share * seconds if seconds else done < count

    try:
        cases = opt_cases(seed)
        done = 0
        while more(opt_count, done, 0.6):
            text, args = next(cases)
            reply = worker.ask({"kind": "opt", "text": text, "args": args})
            outcome = classify_opt(reply, args)
            report.add(outcome, f"tenzr-opt {' '.join(args)}\n{reply.get('err', '')}\n--- input ---\n{text[:1500]}")
            if outcome == "accepted":
                report.accepted.append(text)
            done += 1
        done = 0
        while more(api_count, done, 0.8):
            case = seed * 100003 + done
            reply = worker.ask({"kind": "api", "seed": case})
            outcome = "hang" if "hang" in reply else "crash" if "crash" in reply else API_OUTCOMES.get(
                reply["outcome"], "exception")
            report.add(outcome, f"API case {case}: {reply}")
            done += 1
        for text in dict.fromkeys(report.accepted):  # distinct texts
            if report.gradients_checked >= gradients or (seconds and time.monotonic() > start + seconds):
                break
            reply = worker.ask({"kind": "grad", "text": text, "seed": seed}, timeout=300)
            if "problems" not in reply:
                report.add("hang" if "hang" in reply else "crash", f"gradient check\n{text[:1500]}")
                continue
            report.gradients_checked += reply["checked"]
            for problem in reply["problems"]:
                report.add("gradient mismatch", f"{problem}\n{text[:1500]}")
            if log:
                log(f"gradients: {report.gradients_checked} functions checked")
    finally:
        worker.close()
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--gradients", type=int, default=40, help="functions of accepted mutants to check")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _serve()
        return 0
    seed = args.seed if args.seed is not None else int(time.time())
    report = campaign(seed=seed, seconds=args.seconds, gradients=args.gradients,
                      log=lambda m: print(m, file=sys.stderr))
    for failure in report.failures:
        print(f"\n=== {failure}", file=sys.stderr)
    print(f"seed {seed}: {report.summary()}")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
