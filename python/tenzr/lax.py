"""Direct access to every tenzr op, for what NumPy has no name for.

`tz.lax.<op>(*operands, **attributes)` emits `tenzr.<op>` as written (no promotion). Ops
whose result type is chosen by the caller take `result_shape=` and `result_dtype=`.
The common ones have friendlier signatures below. Loops and conditionals (`fori_loop`,
`scan`, `while_loop`, `cond`, `switch`) have JAX's (see `tenzr.control`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tenzr.control import cond, fori_loop, scan, switch, while_loop
from tenzr.core import Array, asarray, check_arguments, dtype_name, emit, promote
from tenzr.dialect import ops as T
from tenzr.dialect.opdef import OpDef
from tenzr.dialect.types import TensorSpec


def _op(opdef: OpDef):
    def fn(*operands: Any, result_shape: Sequence[int] | None = None, result_dtype: Any = None,
           **attributes: Any) -> Array:
        xs = [asarray(o) for o in operands]
        result = None
        if opdef.given_result:
            base = xs[0].spec if xs else TensorSpec((), "f32")
            result = TensorSpec(tuple(result_shape) if result_shape is not None else base.shape,
                                dtype_name(result_dtype) if result_dtype is not None else base.dtype)
        return emit(opdef, *xs, result=result, **attributes)

    fn.__name__ = opdef.mnemonic
    fn.__doc__ = f"`{opdef.name}`: {opdef.summary}"
    return fn


for _name, _opdef in T.OPS.items():
    if not (_opdef.regions or _opdef.terminator):  # (control flow: below)
        globals()[_opdef.mnemonic] = _op(_opdef)


def scatter(x: Any, indices: Any, updates: Any, axis: int = 0, mode: str = "set") -> Array:
    """x with the slices at `indices` along `axis` combined with `updates`.

    `mode` is "set" (the last duplicate wins), "add", "multiply", "min" or "max".
    `updates` has x's shape with dim `axis` replaced by len(indices).
    """
    x, updates = promote(x, updates)
    return emit(T.scatter, x, asarray(indices), updates, axis=axis, mode=mode)


def dynamic_slice(x: Any, starts: Sequence[Any], sizes: Sequence[int]) -> Array:
    """x[starts : starts + sizes] with runtime starts, clamped so the slice stays inside."""
    return emit(T.dynamic_slice, asarray(x), *(_index(s) for s in starts), sizes=sizes)


def dynamic_update_slice(x: Any, update: Any, starts: Sequence[Any]) -> Array:
    """x with `update` written at runtime `starts` (clamped so it fits)."""
    x, update = promote(x, update)
    return emit(T.dynamic_update_slice, x, update, *(_index(s) for s in starts))


def stop_gradient(x: Any) -> Array:
    """Identity forward; no gradient flows through."""
    return emit(T.stop_gradient, asarray(x))


def custom_call(target: str, *operands: Any, result_shape: Sequence[int] | None = None, result_dtype: Any = None,
                **attributes: Any) -> Array:
    """`tenzr.custom_call` of a target registered with `tz.register_custom_op`."""
    xs = [asarray(o) for o in operands]
    base = xs[0].spec
    result = TensorSpec(tuple(result_shape) if result_shape is not None else base.shape,
                        dtype_name(result_dtype) if result_dtype is not None else base.dtype)
    return emit(T.custom_call, *xs, result=result, call_target_name=target, **attributes)


def bitcast_convert_type(x: Any, new_dtype: Any) -> Array:
    """x's bits reinterpreted as `new_dtype` (of the same bit width), as JAX's."""
    x = asarray(x)
    return emit(T.bitcast_convert, x, result=x.spec.with_dtype(dtype_name(new_dtype)))


def _index(start: Any) -> Array:
    s = asarray(start)
    return s if s.ndim == 0 else s.reshape(())


check_arguments(globals(), "tz.lax.")

__all__ = [name for name in globals() if not name.startswith("_")] + [
    "cond", "fori_loop", "scan", "switch", "while_loop"]
