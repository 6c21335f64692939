"""`tenzr-compile`: a tenzr module to an IREE `.vmfb`, through the whole pipeline.

    tenzr-compile input.mlir [--tenzr-grad=...] --target=cpu|vulkan|cuda -o out.vmfb

Passes given as flags run first, in order (`--tenzr-grad="func=f mode=vjp"`); then
`convert-tenzr-to-stablehlo`, `canonicalize`, `cse`, and IREE for the target.
"""

from __future__ import annotations

import argparse
import sys

from tenzr import __version__
from tenzr.compiler import compile_stablehlo, lower_to_stablehlo
from tenzr.dialect.context import make_context
from tenzr.targets import TARGET_NAMES, Target
from tenzr.tools.cli import UsageError, run_tool, write_output
from tenzr.tools.tenzr_opt import load_and_transform, pass_flags, pass_list

NAME = "tenzr-compile"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog=NAME, description="Compile a tenzr module for CPU, Vulkan or CUDA with IREE.",
                epilog="Other --flags name passes to run before lowering, e.g. --tenzr-grad=\"func=f\".")
    p.add_argument("input", nargs="?", default="-", help="input .mlir file, or - for stdin")
    p.add_argument("-o", dest="output", default=None, help="output .vmfb (default: stdout, not a terminal)")
    p.add_argument("--target", choices=TARGET_NAMES, default="cpu", help="where the module will run")
    p.add_argument("--cpu", default="host", help="LLVM CPU for --target=cpu (default: host)")
    p.add_argument("--cpu-features", default="", help="LLVM CPU features for --target=cpu")
    p.add_argument("--vulkan-target", default="", help="IREE Vulkan target (default: IREE's portable one)")
    p.add_argument("--cuda-arch", default="sm_80", help="CUDA SM architecture (default: sm_80)")
    p.add_argument("--emit", choices=("vmfb", "stablehlo"), default="vmfb",
                   help="stop after lowering and print StableHLO instead of compiling")
    p.add_argument("--iree-flag", action="append", default=[], metavar="FLAG",
                   help="extra flag for the IREE compiler (repeatable)")
    p.add_argument("--list-passes", action="store_true", help="list the passes that may run before lowering, and exit")
    p.add_argument("--version", action="version", version=f"{NAME} {__version__}")
    return p


def run(argv: list[str]) -> int:
    args, rest = parser().parse_known_args(argv)
    if args.list_passes:
        print(pass_list())
        return 0
    opts = pass_flags(rest)
    target = Target(args.target, cpu=args.cpu, cpu_features=args.cpu_features, vulkan_target=args.vulkan_target,
                    cuda_arch=args.cuda_arch)
    output = args.output or "-"
    if args.emit == "vmfb" and output == "-" and sys.stdout.isatty():
        raise UsageError("refusing to write a binary .vmfb to a terminal; pass -o out.vmfb")
    with make_context():
        module = load_and_transform(args.input, opts)
        lower_to_stablehlo(module, target)
        stablehlo = str(module)
    if args.emit == "stablehlo":
        write_output(output, stablehlo)
        return 0
    write_output(output, compile_stablehlo(stablehlo, target, tuple(args.iree_flag)))
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_tool(NAME, lambda: run(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
