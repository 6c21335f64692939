"""Traced arrays: NumPy-like values that record tenzr ops while a function is traced.

`Array` wraps an `ir.Value` of the function being traced. Its operators and methods emit
tenzr ops through the dialect builders, at the MLIR location of the user's source line, so
a shape error names the line that caused it.
"""

from __future__ import annotations

import functools
import operator
import os
import sys
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tenzr.dialect import ops as T
from tenzr.dialect.context import make_context
from tenzr.dialect.diagnostics import TenzrError, is_own_file
from tenzr.dialect.ir_imports import ir
from tenzr.dialect.opdef import OpDef, VerifyError, dense_constant, is_uniform
from tenzr.dialect.types import (
    COMPLEX_TYPES,
    ELEMENT_TYPES,
    FLOAT_TYPES,
    INT_TYPES,
    ITEM_BYTES,
    TensorSpec,
    complex_dtype,
    element_type_of,
    ir_type,
    numpy_dtype,
    real_dtype,
    saturation,
    spec_of,
)
from tenzr.flags import default_complex, default_float, default_int, requested_dtype
from tenzr.pytree import flatten, unflatten

DEBUG_ENV = "TENZR_DEBUG"
_HIDDEN_NOTE = f"(Tenzr's own frames are left out of this traceback; set {DEBUG_ENV}=1 to see them)"


class ConcretizationTypeError(TenzrError):  # JAX's name
    """A traced array was needed as a Python value (`bool()`, `int()`, `float()`, a slice
    bound, a shape) while tracing."""


def _is_own(frame: Any) -> bool:
    return is_own_file(frame.f_code.co_filename)


def _without_own_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    kept = []
    while tb is not None:
        if not _is_own(tb.tb_frame):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for entry in reversed(kept):
        out = types.TracebackType(out, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return out


def api_boundary(fn: Callable) -> Callable:
    """Marks an entry point of the API. An error meant for the user (a TenzrError, or one
    raised by the user's own code) leaves it without Tenzr's frames in its traceback, as
    JAX filters its own, so the user's lines are what it shows; with TENZR_DEBUG=1 the
    traceback is whole. Errors inside Tenzr itself (bugs) keep every frame."""

    @functools.wraps(fn)
    def entry(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            tb = e.__traceback__
            innermost = tb
            while innermost is not None and innermost.tb_next is not None:
                innermost = innermost.tb_next
            user_error = isinstance(e, TenzrError) or (innermost is not None and not _is_own(innermost.tb_frame))
            if os.environ.get(DEBUG_ENV) or not user_error:
                raise
            if _HIDDEN_NOTE not in getattr(e, "__notes__", ()):
                e.add_note(_HIDDEN_NOTE)
            e.__traceback__ = _without_own_frames(tb)
            raise  # (a bare raise adds no frame of its own)

    return entry


def _raised_in_user_code(e: BaseException) -> bool:
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    filename = tb.tb_frame.f_code.co_filename if tb is not None else ""
    return not is_own_file(filename) and "-packages" + os.sep not in filename


def check_arguments(module_globals: dict[str, Any], prefix: str, rename: dict[str, str] | None = None) -> None:
    """Wraps the public functions of a module of the API (`tz.exp`, `tz.nn.conv`, ...) so
    that arguments Python or NumPy choke on inside Tenzr (`tz.pad(x, "x")`) give a
    TenzrError naming the function the user called, at the user's line, instead of a
    TypeError from deep inside. The original error is chained (`TENZR_DEBUG=1` shows it).
    Calls between wrapped functions are checked once, at the outermost. Called outside any
    trace, a wrapped function runs eagerly (tenzr.eager)."""
    module = module_globals["__name__"]
    for name, fn in list(module_globals.items()):
        if name.startswith("_") or not isinstance(fn, types.FunctionType) or fn.__module__ != module:
            continue
        module_globals[name] = checked(fn, (rename or {}).get(name, prefix + name))


def checked(fn: Callable, shown: str) -> Callable:
    """`fn` with its argument errors reported as `shown`'s (see check_arguments), an entry
    point of the API (`api_boundary`): called eagerly too, its errors show the user's lines."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if not _STATE.traces and not _STATE.api_depth:
            from tenzr.eager import call_eagerly  # (eager calls trace and compile: tenzr.transforms)

            return call_eagerly(call, args, kwargs)
        _STATE.api_depth += 1
        try:
            return fn(*args, **kwargs)
        except (TypeError, ValueError, IndexError, KeyError, OverflowError) as e:
            if _STATE.api_depth > 1 or _raised_in_user_code(e):
                raise
            raise TenzrError(f"{shown}: unusable arguments ({type(e).__name__}: {e})", user_location()) from e
        finally:
            _STATE.api_depth -= 1

    return api_boundary(call)


def user_frame() -> types.FrameType | None:
    """The innermost stack frame outside Tenzr's own code."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and _is_own(frame):
        frame = frame.f_back
    return frame


def check_callable(fn: Any, transform: str) -> None:
    """Refuses, at the transformation (as JAX's TypeError), a `fn` that is not a function."""
    if not callable(fn):
        raise TenzrError(f"{transform}: expected a function to transform, got {type(fn).__name__}", user_location())


def user_location() -> ir.Location:
    frame = user_frame()
    if frame is None:
        return ir.Location.unknown(context())
    line, col = frame.f_lineno, 0
    positions = list(frame.f_code.co_positions())
    index = frame.f_lasti // 2
    if 0 <= index < len(positions):
        start_line, _, start_col, _ = positions[index]
        if start_col is not None:
            line, col = start_line or line, start_col + 1
    return ir.Location.file(frame.f_code.co_filename, line, col, context=context())


# --------------------------------------------------------------------------- tracing state


_CONTEXT: ir.Context | None = None


def context() -> ir.Context:
    """The MLIR context every trace of this process uses."""
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = make_context(pinned=True)
    return _CONTEXT


@dataclass
class Trace:
    """A module being built by tracing; nested transformations add functions to it."""

    module: ir.Operation
    names: set[str] = field(default_factory=set)
    hoisted: list[np.ndarray] | None = None
    """When a list (a transformation called on arrays outside `jit`, which traces on every
    call, as JAX's do): the floating-point NumPy arrays met while tracing (not uniform ones)
    become arguments of the outermost function, after its own, their values kept here in
    order. The compiled program then depends on their shapes only, so a function that
    draws new values on each call (NumPy's random numbers, say) reuses it with them."""
    root: Frame | None = None
    """The outermost function's frame, once tracing has begun."""

    def hoist(self, array: np.ndarray, spec: TensorSpec) -> Array:
        """`array` as a new argument of the outermost function (see `hoisted`)."""
        assert self.root is not None and self.hoisted is not None
        out = Array(self.root.block.add_argument(ir_type(spec), ir.Location.unknown()))
        out._frame = self.root  # (functions traced inside it capture it, as any of its arrays)
        self.hoisted.append(array)
        return out

    def fresh_name(self, base: str) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base) or "fn"
        name, n = base, 1
        while name in self.names:
            n += 1
            name = f"{base}_{n}"
        self.names.add(name)
        return name


class _ThreadState(threading.local):
    """What each thread is tracing: a thread that calls a compiled function while another
    traces must not see the other's trace."""

    def __init__(self) -> None:
        self.traces: list[Trace] = []
        self.frames: list[Frame] = []
        self.api_depth = 0


_STATE = _ThreadState()


def current_trace() -> Trace | None:
    traces = _STATE.traces
    return traces[-1] if traces else None


@contextmanager
def tracing(trace: Trace) -> Iterator[Trace]:
    _STATE.traces.append(trace)
    try:
        yield trace
    finally:
        _STATE.traces.pop()


class Frame:
    """A function being traced. Arrays of an enclosing function that its body uses (a
    closure, like `x` in `jit(lambda x, w: grad(lambda w: f(x, w))(w))`) become extra
    arguments of this function, appended after its own; the caller passes them on."""

    def __init__(self, block: ir.Block, sealed: bool = False):
        self.block = block
        self.sealed = sealed
        """A function that may not close over arrays (custom rules): NumPy arrays met in it
        stay constants (`Trace.hoisted`)."""
        self.captured: dict[ir.Value, tuple[Array, ir.Value]] = {}

    def capture(self, outer: Array) -> ir.Value:
        found = self.captured.get(outer._value)
        if found is None:
            inner = self.block.add_argument(outer._value.type, ir.Location.unknown())
            found = self.captured[outer._value] = (outer, inner)
        return found[1]

    @property
    def captures(self) -> list[Array]:
        """The enclosing arrays this function closed over, in argument order."""
        return [outer for outer, _ in self.captured.values()]


def current_frame() -> Frame | None:
    frames = _STATE.frames
    return frames[-1] if frames else None


@contextmanager
def function_frame(block: ir.Block, sealed: bool = False) -> Iterator[Frame]:
    """Traces into `block`'s function until the context ends."""
    frame = Frame(block, sealed)
    _STATE.frames.append(frame)
    try:
        yield frame
    finally:
        _STATE.frames.pop()


# --------------------------------------------------------------------------- arrays


def dtype_name(dtype: Any) -> str:
    """The tenzr element-type name of a NumPy dtype, a dtype name, or a tenzr name."""
    if isinstance(dtype, str) and dtype in ELEMENT_TYPES:
        return dtype
    if isinstance(dtype, str) and dtype == "bfloat16":
        return "bf16"
    try:
        return element_type_of(requested_dtype(dtype))
    except (TypeError, ValueError):
        raise TenzrError(f"unsupported dtype {dtype!r}: tenzr arrays are float16, bfloat16, float32, float64, "
                         "bool, int32, int64, complex64 or complex128") from None


_ESCAPED = ("a traced array was used outside the function that traced it (it escaped, e.g. through a global or "
            "an attribute); pass it in as an argument instead")


def _require_trace() -> None:
    """Ops are only built while tracing: outside, a traced array met is one that escaped."""
    if current_trace() is None:
        raise TenzrError(_ESCAPED, user_location())


def emit(opdef: OpDef, *operands: Array, result: TensorSpec | None = None, **attrs: Any) -> Array:
    """Emits one tenzr op at the user's source line; rule violations become TenzrErrors there."""
    _require_trace()
    location = user_location()
    with location:
        try:
            out = opdef(*(a.value for a in operands), result=result, **attrs)
        except VerifyError as e:
            raise TenzrError(f"{opdef.mnemonic}: {e.message}", location) from None
    array = Array(out, weak=bool(operands) and all(a.weak for a in operands) and
                  spec_of(out).dtype == operands[0].spec.dtype)
    check_fits(array.spec, f"the result of {opdef.mnemonic}")
    return array


def _bound_in_numpy_api(self: Array, *args: Any, **kwargs: Any) -> Array:
    """A placeholder: tenzr.numpy_api binds the real method when it is imported."""
    raise NotImplementedError("tenzr.numpy_api binds Array's methods")


class SpecMetadata:
    """NumPy's shape, ndim, size and dtype, read from a `spec` (a TensorSpec)."""

    __slots__ = ()
    spec: TensorSpec

    @property
    def shape(self) -> tuple[int, ...]:
        return self.spec.shape

    @property
    def ndim(self) -> int:
        return self.spec.rank

    @property
    def size(self) -> int:
        return self.spec.size

    @property
    def dtype(self) -> np.dtype:
        return numpy_dtype(self.spec.dtype)


class Array(SpecMetadata):
    """A traced tensor. Supports NumPy's operators, indexing and common methods.

    A *weakly typed* array (`weak`) holds a Python or NumPy scalar, or was computed from
    such arrays only: as in JAX, it takes the type of the strongly typed arrays it meets
    (`x * tz.sqrt(2 / np.pi)` stays float32 for a float32 `x`)."""

    __slots__ = ("_frame", "_value", "spec", "weak")
    __array_priority__ = 1000  # NumPy arrays defer to our reflected operators

    def __init__(self, value: ir.Value, weak: bool = False):
        self._value = value
        self._frame = current_frame()
        self.spec = spec_of(value)
        self.weak = weak

    @property
    def value(self) -> ir.Value:
        """This array as a value of the function being traced now (captured if it belongs
        to an enclosing one)."""
        frame = current_frame()
        if frame is self._frame or self._frame is None:
            return self._value
        if frame is None or self._frame not in _STATE.frames:
            raise TenzrError(_ESCAPED, user_location())
        return frame.capture(self)

    @property
    def is_float(self) -> bool:
        return self.spec.is_float

    def __repr__(self) -> str:
        return f"Traced<{self.spec}>"

    def __len__(self) -> int:
        if not self.shape:
            raise TenzrError("len() of a rank-0 array")
        return self.shape[0]

    def __iter__(self) -> Iterator[Array]:
        for i in range(len(self)):
            yield self[i]

    def __bool__(self) -> bool:
        raise ConcretizationTypeError(
            "a traced array has no concrete value, so it cannot decide Python control flow (`if`, `while`, `and`, "
            "`or`, `bool()`); use tz.where(cond, a, b) to choose between values, tz.maximum/tz.minimum/tz.clip, "
            "tz.lax.cond or tz.lax.switch to run one of several functions, tz.lax.while_loop, fori_loop or scan "
            "for a loop",
            user_location())

    def __index__(self) -> int:
        raise ConcretizationTypeError(
            "a traced array cannot be used as a Python int (its value is unknown while tracing); use "
            "tz.lax.dynamic_slice or integer-array indexing instead", user_location())

    __int__ = __index__

    def __float__(self) -> float:
        raise ConcretizationTypeError(
            "a traced array cannot be used as a Python float (its value is unknown while tracing); keep computing "
            "with it as an array, or return it to get its value", user_location())

    __complex__ = __float__

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise TenzrError("a traced array cannot become a NumPy array while tracing: use tz.* functions "
                         "(tz.exp, tz.sum, ...) instead of np.* inside traced code", user_location())

    def __hash__(self) -> int:
        return id(self)

    def astype(self, dtype: Any) -> Array:
        return astype(self, dtype)

    def __setitem__(self, index: Any, value: Any) -> None:
        raise TenzrError("a traced array cannot be changed in place; write x = x.at[index].set(value) (or .add, "
                         ".multiply, ... as in JAX)", user_location())

    # NumPy's operators and methods, bound to tenzr.numpy_api's functions there (at the end
    # of that module, which imports this one).
    T: Array
    at: Any
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _bound_in_numpy_api
    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __matmul__ = __rmatmul__ = _bound_in_numpy_api
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = __getitem__ = _bound_in_numpy_api  # type: ignore[assignment]
    __neg__ = __pos__ = __abs__ = _bound_in_numpy_api
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = __invert__ = _bound_in_numpy_api
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = _bound_in_numpy_api
    reshape = transpose = sum = mean = max = min = prod = _bound_in_numpy_api
    argmax = argmin = flatten = ravel = squeeze = clip = _bound_in_numpy_api


# --------------------------------------------------------------------------- conversions


def constant(value: Any, dtype: str | None = None, weak: bool = False) -> Array:
    """A constant array holding `value` (NumPy array or scalar)."""
    _require_trace()
    array = np.asarray(value)
    try:
        name = dtype or element_type_of(_default_dtype(array))
    except ValueError as e:
        raise TenzrError(f"unsupported constant: {e}", user_location()) from None
    spec = TensorSpec(array.shape, name)
    check_fits(spec, "a constant")
    array = array.astype(numpy_dtype(name), copy=False)
    trace = current_trace()
    if trace is not None and trace.hoisted is not None and spec.is_float and array.size > 1 and \
            not is_uniform(array) and not any(frame.sealed for frame in _STATE.frames):
        return trace.hoist(array, spec)
    with user_location():
        if spec.is_complex:  # two real constants: the bindings cannot read complex attributes back
            part = spec.with_dtype(real_dtype(name))
            return Array(T.complex_(T.constant(value=dense_constant(array.real, part)),
                                    T.constant(value=dense_constant(array.imag, part))), weak=weak)
        return Array(T.constant(value=dense_constant(array, spec)), weak=weak)


def _default_dtype(array: np.ndarray, numbers: bool = False) -> np.dtype:
    """The dtype of a Python number (or, `numbers`, of a list of them) as an array
    (config.py's defaults)."""
    if array.ndim and not numbers:
        return array.dtype
    if array.dtype == np.float64:
        return default_float()
    if array.dtype == np.int64:
        return default_int()
    if array.dtype == np.complex128:
        return default_complex()
    return array.dtype


def _python_numbers(x: list | tuple) -> bool:
    """Whether a (nested) list holds Python numbers alone (no NumPy arrays or scalars)."""
    return all(_python_numbers(v) if isinstance(v, (list, tuple)) else
                        isinstance(v, (bool, int, float, complex)) and not isinstance(v, np.generic) for v in x)


def asarray(x: Any, dtype: Any = None) -> Array:
    """A traced array from an array, NumPy array, Python scalar (weakly typed, float32 or
    int32 as in JAX) or a (nested) list of them, which is stacked."""
    if isinstance(x, Array):
        return astype(x, dtype) if dtype is not None else x
    if current_trace() is None:
        raise TenzrError("tz.asarray builds a traced constant; call it inside a function passed to tz.jit, "
                         "tz.grad, tz.vjp or tz.trace")
    if isinstance(x, (list, tuple)) and _holds_traced(x):
        return asarray(_stacked(x), dtype)
    name = dtype_name(dtype) if dtype is not None else dtype_alone(x)
    return constant(np.asarray(x), name, weak=dtype is None and _is_scalar(x))


@api_boundary
def array(x: Any, dtype: Any = None) -> Array | np.ndarray:
    """JAX's `jnp.array` and `jnp.asarray`: an array of `x` (an array, NumPy array, scalar or
    nested list of them) typed as NumPy types it, except that Python scalars, and lists of
    them alone, are float32 and int32 (`dtype_alone`). While tracing, a traced array (a list
    holding traced arrays is stacked); outside, a NumPy array (a `ConcreteArray`, which
    traced indices can index), a copy of a NumPy array given (as JAX's, whose arrays the
    caller's later changes do not reach).

    >>> tz.asarray([1.0, 2.0], tz.float32)
    array([1., 2.], dtype=float32)
    """
    if current_trace() is not None or isinstance(x, Array):
        return asarray(x, dtype)
    out = np.array(x, numpy_dtype(dtype_name(dtype) if dtype is not None else dtype_alone(x)),
                   copy=None if isinstance(x, ConcreteArray) else True)  # (a NumPy array the caller may change)
    return out.view(ConcreteArray)


@api_boundary
def device_put(x: Any, device: Any = None) -> Any:
    """JAX's `jax.device_put`: the pytree `x` with every leaf an array. `device` is a target
    ("cpu", "vulkan", "cuda" or a `tz.Target`): on a GPU (or Vulkan) target each leaf is
    copied into the device's memory once, a `DeviceArray` that programs compiled for that
    target read without copying; on the CPU (or None) arrays stay in host memory, which is
    the CPU's device memory."""
    leaves, tree = flatten(x)
    if device is not None:
        from tenzr.runtime import DeviceArray  # (the runtime loads IREE's)
        from tenzr.targets import as_target

        target = as_target(device)
        if target.name != "cpu":
            return unflatten(tree, [leaf if isinstance(leaf, OnDevice) else
                                    DeviceArray.put(np.asarray(array(leaf)), target.driver) for leaf in leaves])
    return unflatten(tree, [leaf if isinstance(leaf, Array) else array(leaf) for leaf in leaves])


def devices(backend: str | None = None) -> list[Any]:
    """JAX's `jax.devices`: the devices of `backend` ("cpu", "vulkan", "cuda", or "gpu" for
    CUDA's), by default of the default backend (`default_backend()`). A backend without a
    device is an error, as in JAX."""
    from tenzr.runtime import device_names  # (the runtime loads IREE's)
    from tenzr.targets import TARGET_NAMES, Device, Target

    platform = {"gpu": "cuda", None: default_backend()}.get(backend, backend)
    if platform not in TARGET_NAMES:
        raise TenzrError(f"devices: unknown backend {backend!r} (choose one of: {', '.join(TARGET_NAMES)}, gpu)")
    names = device_names(Target(platform).driver) if platform != "cpu" else [_cpu_name()]
    if not names:
        raise TenzrError(f"devices: backend {backend!r} has no device here")
    return [Device(platform, i, name) for i, name in enumerate(names)]


def local_devices(process_index: int | None = None, backend: str | None = None) -> list[Any]:
    """JAX's `jax.local_devices`: `devices(backend)`, as every device here is this process's."""
    del process_index
    return devices(backend)


def device_count(backend: str | None = None) -> int:
    """JAX's `jax.device_count`: how many devices `backend` has."""
    return len(devices(backend))


local_device_count = device_count


def default_backend() -> str:
    """JAX's `jax.default_backend`: where `tz.jit` compiles unless told (always "cpu")."""
    return "cpu"


def _cpu_name() -> str:
    """This machine's CPU model, as /proc/cpuinfo names it (else the architecture)."""
    import platform

    from tenzr.targets import host_cpu_flags  # (the one reader of /proc/cpuinfo)

    return next((line.split(":", 1)[1].strip() for line in host_cpu_flags().splitlines()
                 if line.startswith("model name")), platform.machine())


def block_until_ready(x: Any) -> Any:
    """JAX's `jax.block_until_ready`: x, once every array in it is computed (which, as
    tenzr's programs return when their results are, is at once)."""
    return x


@api_boundary
def device_get(x: Any) -> Any:
    """JAX's `jax.device_get`: the pytree `x` with every leaf a NumPy array."""
    leaves, tree = flatten(x)
    return unflatten(tree, [np.asarray(leaf) for leaf in leaves])


class ConcreteArray(np.ndarray):
    """What `tz.array` and `tz.asarray` give outside a trace, and what compiled programs
    return on the CPU: a NumPy array in every way, with JAX's `x.at[...]` updates (run at
    once, as eager calls are) and `block_until_ready()`; indexing it with traced arrays (in
    a function traced later) reads it as a traced constant, as a JAX array is read
    (`table[traced_indices]` of set-up data)."""

    at: Any  # (tenzr.numpy_api binds it)

    def block_until_ready(self) -> ConcreteArray:
        return self  # (a program returns once its results are computed)

    @property
    def device(self) -> Any:
        """JAX's `x.device`: where the array is, the CPU (host memory)."""
        return devices("cpu")[0]

    def devices(self) -> set[Any]:
        """JAX's `x.devices()`: {x.device}."""
        return {self.device}

    def astype(self, dtype: Any, *args: Any, **kwargs: Any) -> Any:
        """NumPy's, with Python's `float`, `int` and `complex` meaning JAX's defaults, as in
        traced code (`requested_dtype`: float32, int32 and complex64 without x64), and real
        floats (bfloat16 too) becoming integers saturating, NaN 0, as traced code and JAX's do
        (NumPy's values out of range are undefined)."""
        target = np.dtype(requested_dtype(dtype))
        if target.kind not in "iu" or not (self.dtype.kind == "f" or self.dtype.name == "bfloat16"):
            return super().astype(target, *args, **kwargs)
        bounds, plain = saturation(self.dtype, target), np.asarray(self)
        with np.errstate(invalid="ignore"):
            inside = np.clip(np.nan_to_num(plain.astype(np.float64), nan=0.0), bounds.low, bounds.top).astype(target)
            saturated = np.where(plain >= bounds.past, bounds.maximum, np.where(plain <= bounds.floor, bounds.minimum,
                                                                                 inside))
        return np.asarray(saturated, dtype=target).view(ConcreteArray)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """NumPy's, with JAX's promotion for arithmetic and comparisons, as in traced code: an
        integer array with a float one, or with a Python float, is float (float32 without x64:
        NumPy makes float64), and integers divided are float; scalars are weak."""
        if "out" not in kwargs and kwargs.get("dtype") is None:
            if method == "__call__":
                inputs = _jax_promoted(ufunc, inputs)
            elif method in ("reduce", "accumulate") and ufunc in (np.add, np.multiply):
                kind = inputs[0].dtype  # (JAX: sums at least in the default integer, cumulative ones in their own)
                if kind.kind in "biu":
                    kwargs["dtype"] = summed_dtype(kind) if method == "reduce" or kind.kind == "b" else kind
        plain = [np.asarray(x) if isinstance(x, ConcreteArray) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(np.asarray(x) if isinstance(x, ConcreteArray) else x for x in kwargs["out"])
        result = getattr(ufunc, method)(*plain, **kwargs)
        if method == "at":
            return None
        if isinstance(result, tuple):
            return tuple(r.view(ConcreteArray) if type(r) is np.ndarray else r for r in result)
        return result.view(ConcreteArray) if type(result) is np.ndarray else result

    def mean(self, axis: Any = None, dtype: Any = None, *args: Any, **kwargs: Any) -> Any:
        """NumPy's, with integers averaged in JAX's default float (NumPy's is float64)."""
        return super().mean(axis, _float_for_integers(self, dtype), *args, **kwargs)

    def var(self, axis: Any = None, dtype: Any = None, *args: Any, **kwargs: Any) -> Any:
        return super().var(axis, _float_for_integers(self, dtype), *args, **kwargs)

    def std(self, axis: Any = None, dtype: Any = None, *args: Any, **kwargs: Any) -> Any:
        return super().std(axis, _float_for_integers(self, dtype), *args, **kwargs)

    def __array_wrap__(self, array: np.ndarray, context: Any = None, return_scalar: bool = False) -> Any:
        # (NumPy's scalars from reductions to one value, as for any ndarray: hashable, np.floating)
        if return_scalar:
            return array[()]
        return super().__array_wrap__(array, context, return_scalar)

    def __getitem__(self, index: Any) -> Any:
        parts = index if isinstance(index, tuple) else (index,)
        if any(isinstance(p, Array) or (isinstance(p, list) and _holds_traced(p)) for p in parts):
            return asarray(np.asarray(self))[index]
        return super().__getitem__(index)

    def __repr__(self) -> str:
        return repr(np.asarray(self))

    def sort(self, axis: int | None = -1, *, kind: Any = None, order: Any = None, stable: bool = True,  # type: ignore[override]
             descending: bool = False) -> Any:
        """JAX's: a sorted copy, stably (NumPy's sorts in place and returns None)."""
        if order is not None:
            raise TenzrError("sort: order is not supported (as in JAX)")
        a = np.asarray(self).ravel() if axis is None else np.asarray(self)
        axis = -1 if axis is None else axis
        if descending:
            return np.flip(np.sort(np.flip(a, axis), axis, kind="stable"), axis).view(ConcreteArray)
        return np.sort(a, axis, kind="stable").view(ConcreteArray)


_JAX_PROMOTED = frozenset({
    np.add, np.subtract, np.multiply, np.true_divide, np.floor_divide, np.remainder, np.fmod, np.divmod, np.power,
    np.float_power, np.maximum, np.minimum, np.fmax, np.fmin, np.arctan2, np.hypot, np.copysign, np.nextafter,
    np.logaddexp, np.logaddexp2, np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal})
"""NumPy's binary ufuncs whose operands JAX promotes to one type."""


def _float_for_integers(a: np.ndarray, dtype: Any) -> Any:
    return _inexact(a.dtype) if dtype is None and a.dtype.kind in "biu" else dtype


def _inexact(dtype: np.dtype) -> np.dtype:
    """JAX's float for an integer or bool type: float64 for 64-bit integers, else float32."""
    return np.dtype(np.float64 if dtype.itemsize == 8 else np.float32)


def summed_dtype(dtype: np.dtype) -> np.dtype:
    """JAX's type for a sum or product of integers or bools: at least the default integer."""
    if dtype.kind == "u":
        return np.promote_types(dtype, np.dtype(f"u{default_int().itemsize}"))
    return default_int() if dtype.kind == "b" else np.promote_types(dtype, default_int())


def _jax_promoted(ufunc: np.ufunc, inputs: tuple) -> tuple:
    """`inputs` cast to the one type JAX's promotion gives them, where it differs from
    NumPy's: arrays are strong (a plain NumPy array's 64-bit type taken as JAX takes it, 32
    bits without x64: `result * np.ones(2)` stays float32), Python and NumPy scalars weak
    (`_is_scalar`). An integer or bool array meeting a float one (or a weak float) becomes
    float, as do integers given to a function whose result is float (`true_divide`, `sin`,
    `sqrt`, ...); a bool one meeting a weak integer becomes the default integer."""
    if ufunc not in _JAX_PROMOTED:
        if ufunc.nin == 1 and isinstance(inputs[0], np.ndarray) and inputs[0].dtype.kind in "biu" and (
                np.dtype(ufunc.resolve_dtypes((inputs[0].dtype, None))[-1]).kind == "f"):
            return (inputs[0].astype(_inexact(inputs[0].dtype)),)
        return inputs
    plain = [x for x in inputs if isinstance(x, np.ndarray) and not isinstance(x, ConcreteArray)]
    strong = [np.dtype(x.dtype) if isinstance(x, ConcreteArray) else canonical(x.dtype)
              for x in inputs if isinstance(x, np.ndarray)]
    weak = [np.asarray(x).dtype.kind if isinstance(x, np.generic) else type(x).__name__[0]
            for x in inputs if _is_scalar(x)]
    inexact = [d for d in strong if d.kind in "fc"]
    if inexact:
        target = np.result_type(*inexact)
        if target.kind == "f" and "c" in weak:
            target = np.result_type(target, np.complex64)
    elif "c" in weak:
        target = default_complex()
    elif "f" in weak:
        target = default_float()
    elif ufunc is np.true_divide and strong:
        joined = np.result_type(*strong)
        target = _inexact(default_int() if joined.kind == "b" and "i" in weak else joined)
    elif strong and all(d.kind == "b" for d in strong) and "i" in weak:
        target = default_int()
    elif plain and strong:
        target = np.result_type(*strong)
    else:
        return inputs
    return tuple(x.astype(target) if isinstance(x, (np.ndarray, np.generic)) and x.dtype != target else x
                 for x in inputs)


def canonical(dtype: np.dtype) -> np.dtype:
    """A NumPy array's type as JAX takes it: 64-bit ones as 32-bit without x64."""
    dtype = np.dtype(dtype)
    if dtype.itemsize == 8 and dtype.kind in "iuf" and default_int().itemsize == 4:
        return np.dtype(f"{dtype.kind}4")
    if dtype == np.complex128 and default_int().itemsize == 4:
        return np.dtype(np.complex64)
    return dtype


class _AnyArray(type):
    def __instancecheck__(cls, x: Any) -> bool:
        return isinstance(x, (Array, ConcreteArray, OnDevice))


class ndarray(metaclass=_AnyArray):
    """JAX's `jnp.ndarray` (`jax.Array`), for isinstance checks and annotations: a traced
    array, a result (`ConcreteArray`) or an array on a device is one; a NumPy array is not."""


def _rebinding(operator: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """An augmented assignment (`x += y`) that gives a new array, as on JAX's immutable arrays,
    instead of changing x, which other names may hold."""
    def update(self: ConcreteArray, other: Any) -> Any:
        return operator(self, other)

    return update


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift",
              "rshift"):
    setattr(ConcreteArray, f"__i{_name}__", _rebinding(getattr(operator, f"__{_name}__")))


def _holds_traced(x: Any) -> bool:
    return any(isinstance(e, Array) or (isinstance(e, (list, tuple)) and _holds_traced(e)) for e in x)


def _stacked(x: list | tuple) -> Array:
    """A nested list holding traced arrays as one traced array (promoted to one type)."""
    from tenzr.numpy_api import stack  # (numpy_api builds on this module)

    return stack([_stacked(e) if isinstance(e, (list, tuple)) else e for e in x])


def _is_scalar(x: Any) -> bool:
    """A Python or NumPy scalar: weakly typed once it is an array."""
    return isinstance(x, (int, float, complex, np.generic)) and np.ndim(x) == 0


def astype(x: Array, dtype: Any) -> Array:
    name = dtype_name(dtype)
    if name == x.spec.dtype:
        return x
    return emit(T.convert, x, result=x.spec.with_dtype(name))


_RANK = {"i1": 0, "i8": 1, "ui8": 1, "i16": 2, "ui16": 2, "i32": 3, "ui32": 3, "i64": 4, "ui64": 4, "f16": 5, "bf16": 5,
         "f32": 6, "f64": 7, "complex<f32>": 8, "complex<f64>": 9}


def _widest(dtypes: list[str]) -> str:
    """The join of `dtypes` in JAX's type lattice: bool < integers < floats < complex,
    narrower < wider; float16 with bfloat16 gives float32, float64 with complex64
    complex128. A signed and an unsigned integer join to the narrowest signed type holding
    both (int16 for int8 and uint8), as 64-bit types only with jax_enable_x64 (uint32 with
    int32 is int32 without it); beside uint64 that is the default float."""
    ints = [d for d in dtypes if d in INT_TYPES]
    if len({d.startswith("u") for d in ints}) == 2:
        signed = max((d for d in ints if not d.startswith("u")), key=_RANK.__getitem__)
        unsigned = max((d for d in ints if d.startswith("u")), key=_RANK.__getitem__)
        joined = signed if _RANK[signed] > _RANK[unsigned] else (
            f"i{2 * ITEM_BYTES[unsigned] * 8}" if unsigned not in ("ui32", "ui64") else
            element_type_of(default_int() if unsigned == "ui32" else default_float()))
        dtypes = [d for d in dtypes if d not in INT_TYPES] + [joined]
    target = max(dtypes, key=_RANK.__getitem__)
    if target in ("f16", "bf16") and {"f16", "bf16"} <= set(dtypes):
        return "f32"
    return "complex<f64>" if target == "complex<f32>" and "f64" in dtypes else target


def promote(*xs: Any) -> list[Array]:
    """Operands as Arrays of one element type: JAX's rule. Strongly typed arrays promote to
    the widest of them (bool < ints < floats < complex, narrower < wider); Python and NumPy
    scalars, weakly typed arrays and NumPy arrays take that type (a float among them makes
    an integer result the default float, a complex one makes a real result complex of its
    width).
    Without strongly typed arrays, the widest of the others wins."""
    strong = [x for x in xs if isinstance(x, Array) and not x.weak]
    if strong:
        target = _widest([t.spec.dtype for t in strong])
        inexact = target in FLOAT_TYPES or target in COMPLEX_TYPES
        if not inexact and any(_is_float(x) or _is_complex(x) for x in xs):
            target = element_type_of(default_float())  # (float32, or float64 with jax_enable_x64)
        if target not in COMPLEX_TYPES and any(_is_complex(x) for x in xs):
            target = complex_dtype(target)
        ints = [_integer_type(x) for x in xs if _is_integer(x)]
        if target == "i1" and ints:  # (bools with an int count as ints)
            target = _widest(ints)
    else:
        target = _widest([x.spec.dtype if isinstance(x, Array) else dtype_alone(x) for x in xs])
    out = []
    for x in xs:
        if isinstance(x, Array):
            out.append(astype(x, target) if x.spec.dtype != target else x)
        else:
            out.append(constant(np.asarray(x), target, weak=not strong and _is_scalar(x)))
    return out


def _is_float(x: Any) -> bool:
    if isinstance(x, Array):
        return x.is_float
    return isinstance(x, float) or (isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind == "f")


def _is_integer(x: Any) -> bool:
    """Whether x is an integer that is not a bool."""
    if isinstance(x, Array):
        return x.spec.dtype in INT_TYPES
    return (isinstance(x, int) and not isinstance(x, bool)) or (
        isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "iu")


def _integer_type(x: Any) -> str:
    """The element type of an integer operand: a Python int is the default int."""
    if isinstance(x, Array):
        return x.spec.dtype
    return element_type_of(default_int()) if isinstance(x, int) else dtype_alone(x)


def _is_complex(x: Any) -> bool:
    if isinstance(x, Array):
        return x.spec.is_complex
    return isinstance(x, complex) or (isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind == "c")


def dtype_alone(x: Any) -> str:
    """The element type of a non-traced operand on its own: NumPy's, except that Python
    scalars, and lists of them alone, are float32 and int32 (as JAX's; float64 and int64
    with x64 enabled)."""
    values = np.asarray(x)
    if values.dtype == object:
        raise TenzrError(f"cannot convert {type(x).__name__} to an array", user_location())
    try:
        if isinstance(x, (list, tuple)):
            return element_type_of(_default_dtype(values, numbers=_python_numbers(x)))
        return element_type_of(values.dtype if isinstance(x, (np.ndarray, np.generic)) else _default_dtype(values))
    except ValueError as e:
        raise TenzrError(f"unsupported array: {e}", user_location()) from None


class ShapeDtype(SpecMetadata):
    """An abstract input: a shape and dtype without data (for tz.trace and signatures)."""

    @api_boundary
    def __init__(self, shape: Sequence[int], dtype: Any = np.float32, *, weak_type: bool = False):
        self.spec = TensorSpec(array_shape(shape), dtype_name(dtype))
        self.weak = bool(weak_type)  # (an input traced from it is weakly typed: `Array`)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ShapeDtype) and other.spec == self.spec and other.weak == self.weak

    def __hash__(self) -> int:
        return hash((self.spec, self.weak))

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype}{weak})"


ShapeDtypeStruct = ShapeDtype
"""JAX's name for ShapeDtype."""


class OnDevice:
    """The base of arrays held in a device's memory (`tenzr.runtime.DeviceArray`, which needs
    IREE's runtime): the API hands them to compiled programs as they are, unread."""

    shape: tuple[int, ...]
    dtype: np.dtype


def weak_leaf(x: Any) -> bool:
    """Whether an input leaf is a Python number (not a bool), which a traced function sees
    weakly typed, as JAX's jit does: `jit(lambda a, s: a * s)(float16_array, 2.5)` is float16."""
    return type(x) in (int, float, complex)


def spec_of_leaf(x: Any) -> TensorSpec:
    """The tensor type of a concrete input leaf (NumPy array, Python scalar, or an array on a
    device, not read)."""
    if isinstance(x, OnDevice):
        return TensorSpec(x.shape, element_type_of(x.dtype))
    array = np.asarray(x)
    if array.dtype == object:
        raise TenzrError(f"inputs must be arrays or numbers, got {type(x).__name__}")
    # Python numbers are weakly typed (float32, int32); NumPy arrays and scalars keep their dtype.
    dtype = array.dtype if isinstance(x, (np.ndarray, np.generic)) else _default_dtype(array)
    try:
        return TensorSpec(array.shape, element_type_of(dtype))
    except ValueError as e:
        raise TenzrError(f"unsupported input: {e}") from None



def shape_tuple(shape: Any) -> tuple[int, ...]:
    """A shape given as an int or a sequence of ints (entries may be -1, as reshape takes)."""
    single = _index(shape)
    if single is not None:
        return (single,)
    try:
        dims = tuple(_index(d) for d in shape)
    except TypeError:
        dims = (None,)
    if None in dims:
        raise TenzrError(f"a shape must be an int or a sequence of ints, got {shape!r}", user_location())
    return dims  # type: ignore[return-value]


def _index(value: Any) -> int | None:
    """An int, or an object NumPy takes for one (`__index__`: NumPy integers, 0-d integer
    arrays); None for anything else (bools, floats, traced arrays)."""
    if isinstance(value, (bool, np.bool_, Array)):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def array_shape(shape: Any) -> tuple[int, ...]:
    """The shape of a new array: non-negative ints."""
    dims = shape_tuple(shape)
    if any(d < 0 for d in dims):
        raise TenzrError(f"array dimensions must be non-negative, got shape {dims}", user_location())
    return dims


@functools.cache
def _memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


def check_fits(spec: TensorSpec, what: str) -> None:
    """An array larger than this machine's memory is an error where it is made, not an
    allocation failure (or the kernel's out-of-memory killer) when the program runs."""
    needed = spec.size * ITEM_BYTES[spec.dtype]
    if needed > _memory_bytes():
        raise TenzrError(f"{what} of type {spec} would take {needed / 2**30:.1f} GiB, more than this machine's "
                         f"{_memory_bytes() / 2**30:.1f} GiB of memory", user_location())
