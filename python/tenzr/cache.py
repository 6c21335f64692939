"""The compile cache: a program is keyed by a hash of its StableHLO text, target and flags.

Compiled modules are kept in memory for the process and on disk across processes, in
`$TENZR_CACHE_DIR` (default: `$XDG_CACHE_HOME/tenzr`, else `~/.cache/tenzr`; set it to
`off` to keep nothing on disk). Loaded programs are reused, so each one is loaded on its
device once.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from iree.compiler.version import VERSION as IREE_VERSION

from tenzr import __version__
from tenzr.compiler import COMPILE_REVISION, compile_stablehlo, flag_sets
from tenzr.dialect.diagnostics import warn
from tenzr.targets import Target, host_cpu_flags

if TYPE_CHECKING:
    from tenzr.runtime import Program

CACHE_ENV = "TENZR_CACHE_DIR"


def cache_dir() -> Path | None:
    """Where compiled modules are kept, or None when the disk cache is off."""
    configured = os.environ.get(CACHE_ENV)
    if configured is not None:
        return None if configured.lower() in ("", "off", "0", "none") else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tenzr"


def cache_key(text: str, target: Target, flags: tuple[str, ...]) -> str:
    """Everything a compile depends on: versions, the target, every IREE flag set
    `compile_stablehlo` would try (compiler.flag_sets), the text. Code for the `host` CPU
    only runs on a CPU like this one (a cache directory shared by different machines must
    not hand one's code to the other), so the host's CPU is part of the key."""
    h = hashlib.sha256()
    host = host_cpu_flags() if target.name == "cpu" and target.cpu == "host" else ""
    tried = (" ".join(variant) for variant in flag_sets(text, target, flags))
    parts = (__version__, COMPILE_REVISION, IREE_VERSION, repr(target), host, *target.compiler_flags(), *tried, text)
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


@dataclass
class CacheStats:
    memory_hits: int = 0
    disk_hits: int = 0
    compiles: int = 0


STATS = CacheStats()
_PROGRAMS: dict[str, Program] = {}


ENTRY_MAGIC = b"tenzr-vmfb 1\n"
"""An entry on disk: this line, the cache key and the SHA-256 of the module (64 hex digits
each, one line), then the module. A file that does not match is never loaded: another
program's module placed under a key would run wrongly, and a damaged one can crash the
process (IREE does not check its bytecode)."""


def _entry(key: str, vmfb: bytes) -> bytes:
    return ENTRY_MAGIC + f"{key} {hashlib.sha256(vmfb).hexdigest()}\n".encode() + vmfb


def _check_entry(key: str, data: bytes) -> tuple[bytes | None, str]:
    """(the module, "") of a sound entry, or (None, what is wrong with it)."""
    header_size = len(ENTRY_MAGIC) + 64 + 1 + 64 + 1
    if not data.startswith(ENTRY_MAGIC) or len(data) < header_size:
        return None, "not a tenzr cache entry" if data else "empty"
    stored_key, _, digest = data[len(ENTRY_MAGIC):header_size - 1].decode("ascii", "replace").partition(" ")
    vmfb = data[header_size:]
    if stored_key != key:
        return None, "it holds another program"
    if hashlib.sha256(vmfb).hexdigest() != digest:
        return None, "truncated or damaged"
    return vmfb, ""


def _read(path: Path, key: str) -> bytes | None:
    """The module cached under `key`, or None. A bad entry is removed with a warning (and
    compiled again by the caller)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    vmfb, problem = _check_entry(key, data)
    if vmfb is None:
        warn(f"tenzr: discarding the compile-cache entry {path} ({problem}); compiling again")
        with contextlib.suppress(OSError):
            path.unlink()
    return vmfb


def _write(directory: Path, path: Path, data: bytes) -> None:
    """Atomic write (rename), so a concurrent reader never sees half a module; a cache that
    cannot be written is skipped, not an error."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        pass


def load_program(text: str, target: Target, flags: tuple[str, ...] = ()) -> tuple[Program, str]:
    """The program for StableHLO `text`, and where it came from: "memory", "disk" (the
    cache) or "compiled" (now)."""
    from tenzr.runtime import Program  # IREE's runtime is imported only when something runs

    key = cache_key(text, target, flags)
    program = _PROGRAMS.get(key)
    if program is not None:
        STATS.memory_hits += 1
        return program, "memory"
    directory = cache_dir()
    path = directory / f"{key}.vmfb" if directory is not None else None
    vmfb = _read(path, key) if path is not None else None
    if vmfb is not None:
        STATS.disk_hits += 1
        source = "disk"
    else:
        STATS.compiles += 1
        source = "compiled"
        vmfb = compile_stablehlo(text, target, flags)
        if path is not None:
            _write(directory, path, _entry(key, vmfb))  # type: ignore[arg-type]
    program = Program(vmfb, target)
    _PROGRAMS[key] = program
    return program, source


def forget_loaded() -> None:
    """Drops the loaded programs kept for reuse (the disk cache stays)."""
    _PROGRAMS.clear()
