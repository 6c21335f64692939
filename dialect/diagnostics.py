"""Errors that reach users, rendered the way MLIR renders them.

Every user-facing failure in Tenzr is a `TenzrError`. It carries an optional MLIR location
and renders as `file:line:col: error: message`, or `error: message` without one.
"""

from __future__ import annotations

import re

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


class TenzrError(Exception):
    """A user-facing error at an optional MLIR location."""

    def __init__(self, message: str, location: ir.Location | None = None, notes: tuple[str, ...] = ()):
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
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


def from_mlir_error(error: ir.MLIRError, fallback: str) -> list[TenzrError]:
    """Converts the diagnostics an MLIR call raised into TenzrErrors (at least one)."""
    found = [
        TenzrError(d.message, d.location, tuple(n.message for n in d.notes))
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
