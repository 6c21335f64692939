"""`tenzr-opt`: the mlir-opt of Tenzr.

    tenzr-opt [input.mlir|-] [--pass[=options]]... [--pass-pipeline=...] [-o out.mlir]

Passes run in command-line order. Tenzr's own passes run as Python; any other pass name
goes to MLIR's pass manager (`--canonicalize`, `--cse`, `--inline`, `--symbol-dce`, ...).
"""

from __future__ import annotations

import importlib.util
import re
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from tenzr import __version__
from tenzr.dialect.context import make_context, parse_module
from tenzr.dialect.diagnostics import TenzrError, TenzrErrors, format_location
from tenzr.dialect.ir_imports import ir
from tenzr.dialect.verify import verify_module
from tenzr.passes import PASSES
from tenzr.passes.registry import Step, make_step, option_help, parse_pipeline, run_pipeline
from tenzr.tools.cli import UsageError, read_input, run_tool, write_output

NAME = "tenzr-opt"
SPLIT_MARKER = re.compile(r"^// -----", re.MULTILINE)
EXPECTED = re.compile(r"expected-(error|warning|note|remark)\s*(?:@([+-]\d+|above|below))?\s*\{\{(.*?)\}\}")

FLAGS = [
    ("-o FILE", "write output to FILE (default: stdout)"),
    ("--pass-pipeline=PIPELINE", "run a textual pipeline, e.g. 'builtin.module(tenzr-grad{func=f},canonicalize)'"),
    ("--split-input-file", "process each '// -----' chunk of the input as its own module"),
    ("--verify-diagnostics", "check errors against '// expected-error {{...}}' annotations"),
    ("--verify-each=BOOL", "verify the IR after every pass (default: true)"),
    ("--mlir-print-ir-after-all", "print the IR to stderr after every pass"),
    ("--mlir-print-op-generic", "print every op in MLIR's generic form"),
    ("--load=FILE.py", "import a Python file first (e.g. to register custom_call rules)"),
    ("--list-passes", "list the passes and exit"),
    ("--version", "print the version and exit"),
    ("-h, --help", "print this help and exit"),
]


@dataclass
class Options:
    input: str = "-"
    output: str = "-"
    passes: list[tuple[str, str]] = field(default_factory=list)
    """In command-line order: ("pipeline", text) or (pass name, option text)."""
    split_input_file: bool = False
    verify_diagnostics: bool = False
    verify_each: bool = True
    print_after_all: bool = False
    print_generic: bool = False
    action: str = "run"


def _bool(flag: str, text: str) -> bool:
    if text.lower() in ("1", "true", "on"):
        return True
    if text.lower() in ("0", "false", "off"):
        return False
    raise UsageError(f"option '{flag}' expects true or false, got '{text}'")


def parse_args(argv: list[str]) -> Options:
    opts = Options()
    inputs: list[str] = []
    args = iter(argv)
    for arg in args:
        name, eq, value = arg.partition("=")
        if arg in ("-h", "--help", "-help"):
            opts.action = "help"
        elif arg in ("--version", "-version"):
            opts.action = "version"
        elif arg in ("--list-passes", "-list-passes"):
            opts.action = "list"
        elif name == "-o" or name == "--o":
            opts.output = value if eq else next(args, None) or _missing(arg)
        elif name in ("--pass-pipeline", "-pass-pipeline"):
            opts.passes.append(("pipeline", value if eq else next(args, None) or _missing(arg)))
        elif name in ("--load", "-load"):
            _load_plugin(value if eq else next(args, None) or _missing(arg))
        elif arg in ("--split-input-file", "-split-input-file"):
            opts.split_input_file = True
        elif arg in ("--verify-diagnostics", "-verify-diagnostics"):
            opts.verify_diagnostics = True
        elif name in ("--verify-each", "-verify-each"):
            opts.verify_each = _bool(name, value) if eq else True
        elif arg in ("--mlir-print-ir-after-all", "-mlir-print-ir-after-all"):
            opts.print_after_all = True
        elif arg in ("--mlir-print-op-generic", "-mlir-print-op-generic"):
            opts.print_generic = True
        elif arg in ("--allow-unregistered-dialect", "-allow-unregistered-dialect"):
            pass  # always on: tenzr ops are unregistered operations
        elif arg == "-" or not arg.startswith("-"):
            inputs.append(arg)
        elif arg.startswith("--") and len(name) > 2:
            opts.passes.append((name[2:], value.strip('"').strip("'")))
        else:
            raise UsageError(f"unknown option '{arg}'")
    if len(inputs) > 1:
        raise UsageError(f"expects one input file, got {len(inputs)}: {' '.join(inputs)}")
    opts.input = inputs[0] if inputs else "-"
    return opts


def _missing(flag: str) -> str:
    raise UsageError(f"option '{flag}' needs a value")


def _load_plugin(path: str) -> None:
    if not Path(path).exists():
        raise UsageError(f"cannot load plugin '{path}': no such file")
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    if spec is None or spec.loader is None or not Path(path).is_file():
        raise UsageError(f"cannot load plugin '{path}': not a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except TenzrError:
        raise
    except Exception as e:  # (the plugin's own bug, reported as such: not tenzr-opt's)
        if isinstance(e, SyntaxError):
            where = f"{path}:{e.lineno}:{e.offset}: "
        else:
            where = next((f"{path}:{frame.lineno}: " for frame in reversed(traceback.extract_tb(e.__traceback__))
                          if Path(frame.filename).resolve() == Path(path).resolve()), "")
        raise TenzrError(f"{where}plugin '{path}' failed: {type(e).__name__}: {e}") from None


def pass_flags(flags: list[str]) -> Options:
    """Options holding the `--pass[=options]` flags another tool passed through, in order."""
    opts = Options(passes=[])
    for flag in flags:
        if not flag.startswith("--") or len(flag) < 3:
            raise UsageError(f"unrecognized argument '{flag}'")
        name, _, value = flag[2:].partition("=")
        opts.passes.append((name, value.strip('"')))
    return opts


def load_and_transform(path: str, opts: Options) -> ir.Operation:
    """Reads, parses and verifies a module, then runs `opts`' passes (in the current context)."""
    steps = build_steps(opts)
    text, filename = read_input(path)
    module = parse_module(text, filename)
    errors = verify_module(module)
    if errors:
        raise TenzrErrors(errors)
    run_pipeline(module, steps, verify_each=opts.verify_each)
    return module


def build_steps(opts: Options) -> list[Step]:
    steps: list[Step] = []
    for name, text in opts.passes:
        if name == "pipeline":
            steps += parse_pipeline(text)
        else:
            try:
                steps.append(make_step(name, text))
            except TenzrError as e:
                if name not in PASSES and e.message.startswith("unknown pass"):
                    raise UsageError(f"unknown pass or option '--{name}' (see --list-passes)") from None
                raise
    return steps


# --------------------------------------------------------------------------- output


def help_text() -> str:
    lines = [f"usage: {NAME} [input.mlir|-] [--pass[=options]]... [options]", "",
             "Runs tenzr and MLIR passes over a module, in command-line order.", "", "options:"]
    lines += [f"  {flag:<28} {text}" for flag, text in FLAGS]
    lines += ["", pass_list(), "",
              "Any MLIR pass also works as a flag or inside --pass-pipeline: --canonicalize, --cse,",
              "--inline, --symbol-dce, ...",
              "Exit status: 0 on success, 1 on invalid input or a failed pass, 2 on a bad command line."]
    return "\n".join(lines)


def pass_list() -> str:
    lines = ["tenzr passes:"]
    for flag, cls in sorted(PASSES.items()):
        lines.append(f"  --{flag:<34} {cls.summary}")
        for name, kind, text in option_help(cls):
            lines.append(f"      {name}={kind:<36} {text}")
    return "\n".join(lines)


def print_module(module: ir.Operation, generic: bool) -> str:
    text = module.get_asm(print_generic_op_form=True) if generic else str(module)
    return text if text.endswith("\n") else text + "\n"


# --------------------------------------------------------------------------- running


def split_chunks(text: str, split: bool) -> list[str]:
    """Chunks padded with newlines so that line numbers match the whole file."""
    if not split:
        return [text]
    chunks, offset = [], 0
    for piece in SPLIT_MARKER.split(text):
        chunks.append("\n" * offset + piece)
        offset += piece.count("\n")
    return chunks


def process(chunk: str, filename: str, opts: Options) -> tuple[str | None, list[TenzrError]]:
    """(printed module or None, errors) of one chunk."""
    with make_context():
        try:
            module = parse_module(chunk, filename)
            errors = verify_module(module)
            if errors:
                raise TenzrErrors(errors)
            after_each = None
            if opts.print_after_all:
                def after_each(step: Step, m: ir.Operation) -> None:
                    sys.stderr.write(f"// -----// IR Dump After {step.name} //----- //\n")
                    sys.stderr.write(print_module(m, opts.print_generic))
            run_pipeline(module, build_steps(opts), verify_each=opts.verify_each, after_each=after_each)
            return print_module(module, opts.print_generic), []
        except TenzrError as e:
            return None, e.errors


@dataclass
class Expected:
    line: int
    kind: str
    text: str
    found: bool = False


def expectations(chunk: str) -> list[Expected]:
    found = []
    for number, line in enumerate(chunk.splitlines(), start=1):
        for match in EXPECTED.finditer(line):
            kind, offset, text = match.groups()
            target = number
            if offset in ("above", "below"):
                target += -1 if offset == "above" else 1
            elif offset:
                target += int(offset)
            found.append(Expected(target, kind, text.strip()))
    return found


def check_diagnostics(chunk: str, filename: str, errors: list[TenzrError]) -> list[str]:
    """Mismatches between `errors` and the chunk's expected-* annotations."""
    expected = expectations(chunk)
    problems = []
    for error in errors:
        position = format_location(error.location)
        line = int(position.split(":")[-2]) if position else None
        match = next((x for x in expected if not x.found and x.kind == "error" and x.line == line
                      and x.text in error.message), None)
        if match is None:
            problems.append(f"{position or filename}: error: unexpected error: {error.message}")
        else:
            match.found = True
    for x in expected:
        if not x.found:
            problems.append(f"{filename}:{x.line}: error: expected {x.kind} \"{x.text}\" was not produced")
    return problems


def run(argv: list[str]) -> int:
    opts = parse_args(argv)
    if opts.action == "help":
        print(help_text())
        return 0
    if opts.action == "version":
        print(f"{NAME} {__version__}")
        return 0
    if opts.action == "list":
        print(pass_list())
        return 0
    with make_context():
        build_steps(opts)  # reports a bad pass or option before any input is read
    text, filename = read_input(opts.input)
    outputs, status = [], 0
    for chunk in split_chunks(text, opts.split_input_file):
        printed, errors = process(chunk, filename, opts)
        if opts.verify_diagnostics:
            problems = check_diagnostics(chunk, filename, errors)
            for problem in problems:
                print(problem, file=sys.stderr)
            status = status or (1 if problems else 0)
        elif errors:
            print("\n".join(e.render() for e in errors), file=sys.stderr)
            status = 1
        if printed is not None:
            outputs.append(printed)
    if status == 0 or not opts.verify_diagnostics:
        if outputs and not (opts.verify_diagnostics and opts.output == "-"):
            write_output(opts.output, "// -----\n".join(outputs))
    return status


def main(argv: list[str] | None = None) -> int:
    return run_tool(NAME, lambda: run(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
