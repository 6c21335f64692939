"""Tenzr's passes, their options, and pipelines that mix them with MLIR's own passes.

A pass is a dataclass deriving `Pass`; its `flag` is its command-line name and its fields
are its options (`--tenzr-grad="func=f mode=vjp"`). `PASSES` feeds `tenzr-opt --help`.
A pipeline is a list of `Step`s: tenzr passes run as Python, everything else is handed to
MLIR's `PassManager`, in the order given.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import sys
import tempfile
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from tenzr.dialect.diagnostics import TenzrError, TenzrErrors, from_mlir_error
from tenzr.dialect.ir_imports import ir, passmanager
from tenzr.dialect.verify import verify_module


class Pass:
    """Base of tenzr passes. Subclasses are dataclasses; fields are options, with
    `dataclasses.field(metadata={"help": ..., "choices": (...)})`."""

    flag: ClassVar[str]
    summary: ClassVar[str]
    example_input: ClassVar[str] = ""
    example_options: ClassVar[str] = ""
    """The options the docs run the example with (for passes that need some)."""

    def run(self, module: ir.Operation) -> None:
        raise NotImplementedError

    def describe(self) -> str:
        options = " ".join(f"{f.name}={_show(getattr(self, f.name))}" for f in dataclasses.fields(self))  # type: ignore[arg-type]
        return f"{self.flag}{{{options}}}" if options else self.flag


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    return str(value)


PASSES: dict[str, type[Pass]] = {}


def register(cls: type[Pass]) -> type[Pass]:
    PASSES[cls.flag] = cls
    return cls


def option_help(cls: type[Pass]) -> list[tuple[str, str, str]]:
    """(name, type and default, help) of each option of `cls`."""
    hints = typing.get_type_hints(cls)
    rows = []
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        choices = f.metadata.get("choices")
        kind = "|".join(choices) if choices else _type_name(hints[f.name])
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[operator]
        rows.append((f.name, f"{kind} (default: {_show(default) or 'none'})", f.metadata.get("help", "")))
    return rows


def _type_name(hint: Any) -> str:
    return {str: "string", int: "int", bool: "bool"}.get(hint, "int,int,...")


MAX_INT_OPTION = 2**31 - 1
"""The largest integer a pass option takes (a batch size or a number of tangents is a dim of
a tensor type; a larger one crashed the bindings or made types no program could hold)."""


def _bounded(value: int, where: str) -> int:
    if abs(value) > MAX_INT_OPTION:
        raise TenzrError(f"{where} must be between -{MAX_INT_OPTION} and {MAX_INT_OPTION}, got {value}")
    return value


def _convert(cls: type[Pass], name: str, text: str, hint: Any, choices: tuple[str, ...] | None) -> Any:
    where = f"option '{name}' of pass '{cls.flag}'"
    try:
        if hint is bool:
            if text.lower() not in ("true", "false", "1", "0"):
                raise ValueError
            return text.lower() in ("true", "1")
        if hint is int:
            return _bounded(int(text), where)
        if hint is str:
            if choices and text not in choices:
                raise TenzrError(f"{where} must be one of {', '.join(choices)}, got '{text}'")
            return text
        return tuple(_bounded(int(v), where) for v in text.split(",") if v.strip())
    except ValueError:
        raise TenzrError(f"{where} expects {_type_name(hint)}, got '{text}'") from None


def make_pass(flag: str, options: str = "") -> Pass:
    """An instance of tenzr pass `flag` configured by mlir-opt style `key=value key=value`."""
    cls = PASSES[flag]
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    values: dict[str, Any] = {}
    for item in _option_items(options):
        key, sep, text = item.partition("=")
        if not sep:
            raise TenzrError(f"option '{item}' of pass '{flag}' must be written key=value")
        if key not in fields:
            known = ", ".join(fields) or "none"
            raise TenzrError(f"pass '{flag}' has no option '{key}' (options: {known})")
        values[key] = _convert(cls, key, text.strip('"'), hints[key], fields[key].metadata.get("choices"))
    return cls(**values)


def _option_items(options: str) -> list[str]:
    """`key=value` items separated by spaces or, as MLIR also accepts, commas: a comma piece
    without `=` continues the list value before it (`wrt=0,2,mode=vjp`)."""
    items: list[str] = []
    for word in options.split():
        for piece in word.split(","):
            if "=" in piece or not items:
                items.append(piece)
            else:
                items[-1] += "," + piece
    return [item for item in items if item]


# --------------------------------------------------------------------------- pipelines


@dataclass
class Step:
    """One pass of a pipeline: a tenzr pass, or MLIR pipeline text such as `canonicalize`."""

    name: str
    run: Callable[[ir.Operation], None]


def tenzr_step(p: Pass) -> Step:
    return Step(p.describe(), p.run)


def mlir_step(text: str) -> Step:
    """A step that runs MLIR pass(es) `text` (e.g. `canonicalize` or `func.func(cse)`)."""
    failure = ""
    with _native_stderr() as printed:  # (MLIR prints some option errors itself, and may go on)
        try:
            manager = passmanager.PassManager.parse(f"builtin.module({text})")
            if "pipeline" in text:  # (the inliner parses default-pipeline whenever it runs on a function)
                with ir.Location.unknown():
                    manager.run(ir.Module.parse("func.func @probe() { return }").operation)
        except (ValueError, ir.MLIRError) as e:
            failure = str(e)
    problems = [p for p in map(_problem, (printed[0] + "\n" + failure).splitlines()) if p]
    if not problems:
        sys.stderr.write(printed[0])
    else:
        detail = next((p.partition("error: ")[2] for p in problems if "error: " in p), problems[0])
        unknown = re.match(r"'([^']*)' does not refer to a registered pass", detail)
        if unknown and text.startswith(unknown[1]):
            raise TenzrError(f"unknown pass or bad pipeline '{text}': {detail}")
        raise TenzrError(f"bad options or pipeline in '{text}': {detail}")

    def run(module: ir.Operation) -> None:
        try:
            manager.run(module)
        except ir.MLIRError as e:
            raise TenzrErrors(from_mlir_error(e, f"pass '{text}' failed")) from None

    return Step(text, run)


def _problem(line: str) -> str:
    """A line of MLIR's pipeline errors that says something: not an echo of the input, its
    caret, nor the bindings' "failed to add" trailer."""
    line = line.strip().lstrip(": ")
    if not line or line == "^" or line.startswith("failed to add") or ("error: " not in line and " " not in line):
        return ""
    return line


@contextlib.contextmanager
def _native_stderr() -> Iterator[list[str]]:
    """Captures what native code writes to file descriptor 2 meanwhile, as the one string in
    the list it yields."""
    sys.stderr.flush()
    saved = os.dup(2)
    printed: list[str] = []
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield printed
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            printed.append(sink.read().decode(errors="replace"))


def make_step(name: str, options: str = "") -> Step:
    if name in PASSES:
        return tenzr_step(make_pass(name, options))
    return mlir_step(f"{name}{{{options}}}" if options else name)


def split_top_level(text: str) -> list[str]:
    """Splits on commas outside (), {} and quotes."""
    parts: list[str] = []
    current: list[str] = []
    depth, quote = 0, False
    for ch in text:
        if ch == '"':
            quote = not quote
        elif not quote and ch in "({":
            depth += 1
        elif not quote and ch in ")}":
            depth -= 1
        if ch == "," and depth == 0 and not quote:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    if depth != 0 or quote:
        raise TenzrError(f"unbalanced brackets or quotes in pass pipeline '{text}'")
    parts.append("".join(current).strip())
    return [p for p in parts if p]


def parse_pipeline(text: str) -> list[Step]:
    """Steps of `builtin.module(a,b{opt=1},c)` (the `builtin.module(...)` wrapper is optional)."""
    body = text.strip()
    if body.startswith("builtin.module(") and body.endswith(")"):
        body = body[len("builtin.module("):-1]
    elif body.startswith(("builtin.module", "any(")):
        raise TenzrError(f"cannot parse pass pipeline '{text}': expected builtin.module(...)")
    steps = []
    for element in split_top_level(body):
        name, brace, rest = element.partition("{")
        if brace:
            if not rest.endswith("}"):
                raise TenzrError(f"cannot parse pass '{element}': options must be written name{{k=v ...}}")
            steps.append(make_step(name.strip(), rest[:-1]))
        elif "(" in element:
            steps.append(mlir_step(element))
        else:
            steps.append(make_step(element))
    return steps


def run_pipeline(module: ir.Operation, steps: list[Step], *, verify_each: bool = True,
                 after_each: Callable[[Step, ir.Operation], None] | None = None) -> None:
    """Runs `steps` in order; with `verify_each`, a step that leaves invalid IR is reported
    as a bug in that step."""
    for step in steps:
        step.run(module)
        if verify_each:
            errors = verify_module(module)
            if errors:
                first = errors[0]
                raise TenzrError(f"pass '{step.name}' produced invalid IR (a bug in that pass): {first.message}",
                                 first.location)
        if after_each is not None:
            after_each(step, module)
