"""The compile cache: a second process skips IREE, keys follow the host CPU, and the disk
cache never loads an entry it cannot vouch for (damaged, or another program's)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tenzr as tz
from tenzr import cache
from tenzr.cache import STATS


def test_second_process_skips_iree_compilation(tmp_path):
    script = textwrap.dedent("""
        import json, time
        t0 = time.perf_counter()
        import numpy as np
        import tenzr as tz
        from tenzr.cache import STATS
        f = tz.jit(tz.value_and_grad(lambda w, x: (tz.tanh(x @ w) ** 2).sum()))
        value, grad = f(np.ones((3, 2), np.float32), np.ones((4, 3), np.float32))
        print(json.dumps({"compiles": STATS.compiles, "disk_hits": STATS.disk_hits,
                          "grad": grad.tolist(), "seconds": time.perf_counter() - t0}))
    """)
    env = {**os.environ, "TENZR_CACHE_DIR": str(tmp_path)}
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
        runs.append(eval(out.stdout.strip().splitlines()[-1].replace("true", "True")))
    assert runs[0]["compiles"] == 1 and runs[0]["disk_hits"] == 0
    assert runs[1]["compiles"] == 0 and runs[1]["disk_hits"] == 1
    assert runs[0]["grad"] == runs[1]["grad"]
    assert len(list(tmp_path.glob("*.vmfb"))) == 1


def test_cache_keys_code_for_the_host_cpu_by_that_cpu(monkeypatch):
    # a cache directory shared by two machines must not hand one's host code to the other
    from tenzr import cache
    from tenzr.targets import Target

    keys = {}
    for cpu in ("flags: avx2 fma", "flags: avx2 avx512f fma"):
        monkeypatch.setattr(cache, "host_cpu_flags", lambda cpu=cpu: cpu)
        keys[cpu] = (cache.cache_key("module", Target(), ()), cache.cache_key("module", Target(cpu="znver3"), ()))
    (host_a, named_a), (host_b, named_b) = keys.values()
    assert host_a != host_b and named_a == named_b


def test_cache_keys_a_module_by_every_flag_set_its_compile_would_try(monkeypatch):
    # a module compiled with other IREE flags (a changed optimization set, or another
    # schedule among the target's flags) is not handed back as if compiled now
    from tenzr import targets
    from tenzr.targets import Target

    text = "module { func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> { return %x : tensor<2xf32> } }"
    before = cache.cache_key(text, Target(), ())
    monkeypatch.setattr(targets, "SERIAL_STREAM", "--iree-stream-partitioning-favor=min-peak-memory")
    serial_changed = cache.cache_key(text, Target(), ())
    monkeypatch.undo()
    monkeypatch.setattr(Target, "optimization_flags", lambda self, text="": (("--iree-opt-level=O1",),))
    optimization_changed = cache.cache_key(text, Target(), ())
    assert len({before, serial_changed, optimization_changed}) == 3
    assert cache.cache_key(text, Target(), ()) == optimization_changed  # (the key is stable)


def _program_a(x):
    return tz.sin(x) * 2.0 + 1.0


def _program_b(x):
    return tz.cos(x) - 3.0


X = np.linspace(-1, 1, 5)


def _fresh_run(fn):
    """fn(X) with nothing held in memory, so the disk cache is consulted."""
    tz.clear_caches()
    return tz.jit(fn)(X)


def _entry(directory):
    (path,) = directory.glob("*.vmfb")
    return path


def _flip(data: bytes, position: int) -> bytes:
    out = bytearray(data)
    out[position] ^= 1 << (position % 8)
    return bytes(out)


DAMAGE = {
    "empty": lambda data: b"",
    "truncated": lambda data: data[:len(data) // 2],
    "garbage": lambda data: bytes(range(256)) * 8,
    "bare_module": lambda data: data[len(cache.ENTRY_MAGIC) + 130:],  # what older caches held
    "flip_magic": lambda data: _flip(data, 3),
    "flip_key": lambda data: _flip(data, len(cache.ENTRY_MAGIC) + 10),
    "flip_digest": lambda data: _flip(data, len(cache.ENTRY_MAGIC) + 100),
    "flip_payload_start": lambda data: _flip(data, len(cache.ENTRY_MAGIC) + 140),
    "flip_payload_middle": lambda data: _flip(data, len(data) // 2),
    "flip_payload_end": lambda data: _flip(data, len(data) - 3),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_entry_is_discarded_and_compiled_again(damage, tmp_path, monkeypatch):
    monkeypatch.setenv("TENZR_CACHE_DIR", str(tmp_path))
    want = np.sin(X) * 2.0 + 1.0
    np.testing.assert_allclose(_fresh_run(_program_a), want, rtol=1e-14)
    path = _entry(tmp_path)
    path.write_bytes(DAMAGE[damage](path.read_bytes()))
    compiles = STATS.compiles
    with pytest.warns(RuntimeWarning, match="discarding the compile-cache entry"):
        np.testing.assert_allclose(_fresh_run(_program_a), want, rtol=1e-14)
    assert STATS.compiles == compiles + 1
    hits = STATS.disk_hits
    np.testing.assert_allclose(_fresh_run(_program_a), want, rtol=1e-14)  # repaired: no warning, from disk
    assert STATS.disk_hits == hits + 1 and STATS.compiles == compiles + 1


def test_another_programs_entry_under_a_key_is_not_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv("TENZR_CACHE_DIR", str(tmp_path / "a"))
    _fresh_run(_program_a)
    monkeypatch.setenv("TENZR_CACHE_DIR", str(tmp_path / "b"))
    _fresh_run(_program_b)
    _entry(tmp_path / "a").write_bytes(_entry(tmp_path / "b").read_bytes())
    monkeypatch.setenv("TENZR_CACHE_DIR", str(tmp_path / "a"))
    with pytest.warns(RuntimeWarning, match="it holds another program"):
        np.testing.assert_allclose(_fresh_run(_program_a), np.sin(X) * 2.0 + 1.0, rtol=1e-14)
