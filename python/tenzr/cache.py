"""The compile cache: a program is keyed by a hash of its StableHLO text, target and flags.

Compiled modules are kept in memory for the process and on disk across processes, in
`$TENZR_CACHE_DIR` (default: `$XDG_CACHE_HOME/tenzr`, else `~/.cache/tenzr`; set it to
`off` to keep nothing on disk). Loaded programs are reused, so each one is loaded on its
device once.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from iree.compiler.version import VERSION as IREE_VERSION

from tenzr import __version__
from tenzr.compiler import compile_stablehlo
from tenzr.runtime import Program
from tenzr.targets import Target, host_cpu_flags

CACHE_ENV = "TENZR_CACHE_DIR"


def cache_dir() -> Path | None:
    """Where compiled modules are kept, or None when the disk cache is off."""
    configured = os.environ.get(CACHE_ENV)
    if configured is not None:
        return None if configured.lower() in ("", "off", "0", "none") else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tenzr"


def cache_key(text: str, target: Target, flags: tuple[str, ...]) -> str:
    """Code for the `host` CPU only runs on a CPU like this one (a cache directory shared by
    different machines must not hand one's code to the other), so the host's CPU is part of
    the key."""
    h = hashlib.sha256()
    host = host_cpu_flags() if target.name == "cpu" and target.cpu == "host" else ""
    for part in (__version__, IREE_VERSION, repr(target), host, *target.compiler_flags(), *flags, text):
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


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


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


def load_program(text: str, target: Target, flags: tuple[str, ...] = ()) -> Program:
    """The program for StableHLO `text`: from memory, from disk, or compiled now."""
    key = cache_key(text, target, flags)
    program = _PROGRAMS.get(key)
    if program is not None:
        STATS.memory_hits += 1
        return program
    directory = cache_dir()
    path = directory / f"{key}.vmfb" if directory is not None else None
    vmfb = _read(path) if path is not None else None
    if vmfb is not None:
        STATS.disk_hits += 1
    else:
        STATS.compiles += 1
        vmfb = compile_stablehlo(text, target, flags)
        if path is not None:
            _write(directory, path, vmfb)  # type: ignore[arg-type]
    program = Program(vmfb, target)
    _PROGRAMS[key] = program
    return program


def forget_loaded() -> None:
    """Drops the loaded programs kept for reuse (the disk cache stays)."""
    _PROGRAMS.clear()
