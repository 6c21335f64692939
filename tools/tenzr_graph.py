"""`tenzr-graph`: a function as a dataflow graph, in Graphviz DOT (and SVG/PNG when
Graphviz's `dot` is installed).

    tenzr-graph model.mlir --func=f_grad -o f_grad.dot
    tenzr-graph model.mlir --func=f_grad --tenzr-grad="func=f" -o f_grad.svg

Forward tenzr ops are blue, StableHLO adjoint ops orange, arguments and results grey.
Pass flags (as for tenzr-opt) run before the graph is drawn.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys

from tenzr.dialect.context import body_ops, functions, make_context
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ir_imports import ir
from tenzr.tools.cli import UsageError, run_tool, write_output
from tenzr.tools.tenzr_opt import load_and_transform, pass_flags

NAME = "tenzr-graph"
COLORS = {"tenzr": "#cfe2ff", "stablehlo": "#ffe0b3", "func": "#e6e6e6"}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def to_dot(func: ir.Operation, name: str) -> str:
    """DOT text of one function: a node per argument and op, an edge per use."""
    lines = [f'digraph "{name}" {{', "  rankdir=TB;",
             '  node [shape=box, style="rounded,filled", fontname="Helvetica"];']
    ids: dict[ir.Value, str] = {}
    for i, arg in enumerate(func.regions[0].blocks[0].arguments):
        ids[arg] = f"arg{i}"
        lines.append(f'  arg{i} [label="arg{i}\\n{arg.type}", fillcolor="{COLORS["func"]}"];')
    for n, op in enumerate(body_ops(func)):
        dialect = op.name.split(".")[0]
        label = "return" if op.name == "func.return" else op.name
        types = ", ".join(str(r.type) for r in op.results)
        color = COLORS.get(dialect, "#ffffff")
        lines.append(f'  op{n} [label="{label}\\n{types}", fillcolor="{color}"];')
        for operand in op.operands:
            if operand in ids:
                lines.append(f"  {ids[operand]} -> op{n};")
        for r in op.results:
            ids[r] = f"op{n}"
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(dot: str, fmt: str) -> bytes:
    exe = shutil.which("dot")
    if exe is None:
        raise TenzrError(f"rendering .{fmt} needs Graphviz's `dot` (apt-get install graphviz); write .dot instead")
    done = subprocess.run([exe, f"-T{fmt}"], input=dot.encode(), capture_output=True, timeout=120)
    if done.returncode:
        raise TenzrError(f"dot failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def run(argv: list[str]) -> int:
    parser = _Parser(prog=NAME, description="Draw a function of a tenzr module as a dataflow graph.")
    parser.add_argument("input", nargs="?", default="-")
    parser.add_argument("--func", required=True, help="the function to draw")
    parser.add_argument("-o", dest="output", default="-", help=".dot (default, stdout), .svg or .png")
    args, rest = parser.parse_known_args(argv)
    with make_context():
        module = load_and_transform(args.input, pass_flags(rest))
        funcs = functions(module)
        if args.func not in funcs:
            raise TenzrError(f"no function named '@{args.func}' (functions: {', '.join('@' + f for f in funcs)})")
        dot = to_dot(funcs[args.func], args.func)
    fmt = args.output.rsplit(".", 1)[-1] if "." in args.output else "dot"
    write_output(args.output, dot if fmt == "dot" else render(dot, fmt))
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_tool(NAME, lambda: run(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
