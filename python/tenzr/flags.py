"""Process-wide flags, read and set as JAX's `jax.config` (`tz.config.update(name, value)`).

Two flags have an effect. `jax_disable_jit` (also `tz.disable_jit()`): `tz.jit` functions
run op by op, and `tz.lax`'s loops and conditionals as Python's. `jax_enable_x64`: off (the
default), Python floats and ints are
float32 and int32 (weakly typed), and creation functions (`zeros`, `ones`, `eye`,
`arange` ...) and integer-to-float conversions (`exp` of ints, `/`) make float32 and
int32. On, the same make float64 and int64, as in JAX. NumPy arrays keep their dtype
either way (JAX narrows float64 arrays to float32 while the flag is off; Tenzr does not).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np

from tenzr.dialect.diagnostics import TenzrError


class Config:
    """JAX's `jax.config`: `update(name, value)`, `read(name)` and attribute reads."""

    _FLAGS: ClassVar[dict[str, Any]] = {"jax_enable_x64": False, "jax_disable_jit": False}
    _UNTRACED: ClassVar[frozenset[str]] = frozenset({"jax_disable_jit"})
    """Flags no traced program depends on."""

    def __init__(self) -> None:
        object.__setattr__(self, "_values", dict(self._FLAGS))

    def update(self, name: str, value: Any) -> None:
        if name not in self._values:
            raise TenzrError(f"config.update: unknown option '{name}' (Tenzr has: {', '.join(self._values)})")
        if not isinstance(value, (bool, np.bool_)):
            raise TenzrError(f"config.update: '{name}' takes True or False, got {value!r}")
        self._values[name] = bool(value)

    def read(self, name: str) -> Any:
        if name not in self._values:
            raise TenzrError(f"config.read: unknown option '{name}' (Tenzr has: {', '.join(self._values)})")
        return self._values[name]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in self._values:
            raise AttributeError(f"tz.config has no option '{name}'")
        return self._values[name]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("set options with tz.config.update(name, value)")

    def state(self) -> tuple:
        """What traced programs depend on (part of every compiled-program cache key)."""
        return tuple(sorted((k, v) for k, v in self._values.items() if k not in self._UNTRACED))


config = Config()


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """JAX's `jax.disable_jit`: within it, `tz.jit` functions run op by op (each operation
    compiled and run at once, as outside jit) and `tz.lax`'s loops and conditionals as
    Python's, so `print` and a debugger see the values. `grad`, `vmap` and the other
    transformations still trace their function, as JAX's do."""
    before = config.jax_disable_jit
    config.update("jax_disable_jit", disable)
    try:
        yield
    finally:
        config.update("jax_disable_jit", before)


def default_float() -> np.dtype:
    """The dtype of Python floats and of float results made from integers or from nothing."""
    return np.dtype(np.float64 if config.jax_enable_x64 else np.float32)


def default_int() -> np.dtype:
    """The dtype of Python ints and of `arange`'s integers."""
    return np.dtype(np.int64 if config.jax_enable_x64 else np.int32)


def default_complex() -> np.dtype:
    """The dtype of Python complex numbers."""
    return np.dtype(np.complex128 if config.jax_enable_x64 else np.complex64)


def requested_dtype(dtype: Any) -> np.dtype:
    """A `dtype=` argument as JAX reads it: Python's `float`, `int` and `complex` mean the
    defaults above (`jnp.zeros(3, dtype=float)` is float32 unless jax_enable_x64); anything
    else is NumPy's dtype of it."""
    defaults = {float: default_float, int: default_int, complex: default_complex}
    return defaults[dtype]() if dtype in defaults else np.dtype(dtype)
