"""What every Tenzr tool shares: reading input, reporting errors, never a traceback."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from tenzr.dialect.diagnostics import TenzrError

DEBUG_ENV = "TENZR_DEBUG"


class UsageError(TenzrError):
    """A bad command line; reported with the tool's usage hint."""


def read_input(path: str) -> tuple[str, str]:
    """(text, name for locations) of a file, or of stdin for `-`."""
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    except FileNotFoundError:
        raise TenzrError(f"cannot open input file '{path}': No such file or directory") from None
    except IsADirectoryError:
        raise TenzrError(f"cannot open input file '{path}': Is a directory") from None
    except UnicodeDecodeError:
        raise TenzrError(f"cannot read input file '{path}': not UTF-8 text") from None
    except OSError as e:
        raise TenzrError(f"cannot open input file '{path}': {e.strerror}") from None


def write_output(path: str, data: str | bytes) -> None:
    if path == "-":
        if isinstance(data, bytes):
            sys.stdout.buffer.write(data)
        else:
            sys.stdout.write(data)
        sys.stdout.flush()
        return
    try:
        with open(path, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
    except OSError as e:
        raise TenzrError(f"cannot open output file '{path}': {e.strerror}") from None


def run_tool(name: str, body: Callable[[], int]) -> int:
    """Runs a tool's body: TenzrErrors print as MLIR diagnostics, anything else as an
    internal error, never a traceback (unless TENZR_DEBUG is set)."""
    try:
        return body()
    except UsageError as e:
        print(e.render(), file=sys.stderr)
        print(f"note: see '{name} --help'", file=sys.stderr)
        return 2
    except TenzrError as e:
        print(e.render(), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 1
    except RecursionError:
        print("error: input nests too deeply to process", file=sys.stderr)
        return 1
    except Exception as e:
        if os.environ.get(DEBUG_ENV):
            raise
        print(f"error: internal error in {name}: {type(e).__name__}: {e}", file=sys.stderr)
        print(f"note: this is a bug in {name}; rerun with {DEBUG_ENV}=1 for a traceback", file=sys.stderr)
        return 3
