"""Running compiled modules: one runtime device per driver, reused by every program."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import iree.runtime as rt
import numpy as np

from tenzr.dialect.diagnostics import TenzrError
from tenzr.targets import Target


@functools.cache
def _config(driver: str) -> rt.Config:
    try:
        return rt.Config(driver)
    except (RuntimeError, ValueError) as e:
        raise TenzrError(f"no usable '{driver}' device: {e}") from None


class Program:
    """A compiled IREE module loaded on its target's device."""

    def __init__(self, vmfb: bytes, target: Target):
        self.target = target
        config = _config(target.driver)
        self._context = rt.SystemContext(config=config)
        self._context.add_vm_module(rt.VmModule.copy_buffer(self._context.instance, vmfb))
        self._module = self._context.modules.module
        self._functions: dict[str, rt.FunctionInvoker] = {}

    def function(self, name: str):
        fn = self._functions.get(name)
        if fn is None:
            try:
                fn = self._module[name]
            except (KeyError, AttributeError, RuntimeError):
                raise TenzrError(f"the compiled module has no function '{name}'") from None
            self._functions[name] = fn
        return fn

    def __call__(self, name: str, *arrays: np.ndarray) -> list[np.ndarray]:
        # np.ascontiguousarray would turn rank-0 arrays into rank 1.
        out = self.function(name)(*(np.require(a, requirements="C") for a in arrays))
        results: Sequence = out if isinstance(out, (list, tuple)) else [out]
        return [np.asarray(r.to_host()) for r in results]
