"""Errors that reach users, rendered the way MLIR renders them.

Every user-facing failure in Tenzr is a `TenzrError`. It carries an optional MLIR location
and renders as `file:line:col: error: message`, or `error: message` without one.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import types
import warnings

from tenzr.dialect.ir_imports import ir

_FILE_LOC = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')


def format_location(location: ir.Location | None) -> str | None:
    """`file:line:col` of the first file position inside `location`, or None."""
    if location is None:
        return None
    match = _FILE_LOC.search(str(location))
    if match is None:
        return None
    filename, line, col = match.groups()
    return f"{filename}:{line}:{col}"


Note = tuple[str, "ir.Location | None"]


class TenzrError(Exception):
    """A user-facing error at an optional MLIR location, with notes (each with its own
    optional location, as MLIR's `note: prior use here`)."""

    def __init__(self, message: str, location: ir.Location | None = None, notes: tuple[Note, ...] = ()):
        super().__init__(message)
        self.message = message
        self.location = location
        self.notes = notes

    @property
    def position(self) -> str | None:
        return format_location(self.location)

    @property
    def errors(self) -> list[TenzrError]:
        """Each error this one stands for (itself, unless it aggregates several)."""
        return [self]

    def render(self) -> str:
        prefix = f"{self.position}: " if self.position else ""
        lines = [f"{prefix}error: {self.message}"]
        for note, where in self.notes:
            position = format_location(where)
            lines.append(f"{position}: note: {note}" if position else f"note: {note}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


def _one_line(message: str, limit: int = 200) -> str:
    """An MLIR message on one line (some end with an op printed over several, as "block with
    no terminator, has ..."), so that every line of the output starts with its location."""
    first, _, rest = message.partition("\n")
    if not rest.strip():
        return first
    tail = " ".join(rest.split())
    return f"{first} {tail[:limit]}{'...' if len(tail) > limit else ''}"


def from_mlir_error(error: ir.MLIRError, fallback: str) -> list[TenzrError]:
    """Converts the diagnostics an MLIR call raised into TenzrErrors (at least one)."""
    found = [
        TenzrError(_one_line(d.message), d.location,
                   tuple((_one_line(n.message), n.location) for n in d.notes
                         if not n.message.startswith("see current operation")))
        for d in error.error_diagnostics
    ]
    return found or [TenzrError(f"{fallback}: {error}")]


class TenzrErrors(TenzrError):
    """Several errors at once, e.g. every verifier failure in a module."""

    def __init__(self, errors: list[TenzrError]):
        super().__init__(errors[0].message, errors[0].location, errors[0].notes)
        self._errors = errors

    @property
    def errors(self) -> list[TenzrError]:
        return self._errors

    def render(self) -> str:
        return "\n".join(e.render() for e in self._errors)


_PACKAGES = ("tenzr", "tenzr.dialect", "tenzr.passes", "tenzr.tools")


@functools.cache
def own_dirs() -> tuple[str, ...]:
    """The directories of Tenzr's own code (its packages live in separate folders)."""
    import tenzr.dialect
    import tenzr.passes

    packages = [sys.modules["tenzr"], tenzr.dialect, tenzr.passes, sys.modules.get("tenzr.tools")]
    dirs = {os.path.dirname(m.__file__) for m in packages if m is not None and m.__file__ is not None}
    return tuple(d + os.sep for d in sorted(dirs))


def is_own_file(filename: str) -> bool:
    return filename.startswith(own_dirs())


def warn(message: str, category: type[Warning] = RuntimeWarning) -> None:
    """A warning (RuntimeWarning unless told) attributed to the innermost caller outside Tenzr."""
    level = 2
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and is_own_file(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
