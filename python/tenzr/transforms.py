"""`jit`, `grad`, `value_and_grad`, `vjp`, `custom_vjp` and `trace`.

Every transformation is *traceable*: called on NumPy inputs it compiles (once per input
signature) and runs; called on traced arrays, inside another transformation, it adds its
functions to the module being traced and emits a `func.call`. So `jit(grad(f))`,
`grad(jit(f))` and a `grad` inside a jitted training step all compose.
"""

from __future__ import annotations

import copy
import functools
import gc
import hashlib
import inspect
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from tenzr.cache import forget_loaded, load_program
from tenzr.compiler import lower_to_stablehlo
from tenzr.core import (
    Array,
    ConcretizationTypeError,
    Frame,
    OnDevice,
    ShapeDtype,
    Trace,
    api_boundary,
    asarray,
    check_callable,
    context,
    current_trace,
    dtype_alone,
    function_frame,
    spec_of_leaf,
    tracing,
    weak_leaf,
)
from tenzr.dialect.context import functions
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.functions import build_function, new_module
from tenzr.dialect.ir_imports import ir
from tenzr.dialect.types import TensorSpec, numpy_dtype, spec_of_type
from tenzr.flags import config
from tenzr.passes.registry import parse_pipeline, run_pipeline
from tenzr.passes.tenzr_grad import CHECKPOINT, CUSTOM_VJP, differentiate
from tenzr.pytree import TreeDef, flatten, unflatten
from tenzr.targets import Target, as_target

if TYPE_CHECKING:
    from tenzr.runtime import Program


def def_location(fn: Callable) -> ir.Location:
    code = getattr(inspect.unwrap(fn), "__code__", None)
    if code is None:
        return ir.Location.unknown()
    return ir.Location.file(code.co_filename, code.co_firstlineno, 1)


def function_name(fn: Callable) -> str:
    if isinstance(fn, functools.partial):
        return function_name(fn.func)
    return getattr(fn, "__name__", type(fn).__name__)


def positional(fn: Callable, args: tuple, kwargs: dict[str, Any]) -> tuple:
    """`args` and `kwargs` as `fn`'s positional arguments, its defaults filled in (JAX's
    `resolve_kwargs`, for the transformations whose rules take every argument by position:
    custom_vjp, custom_jvp)."""
    if not kwargs:
        return args
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise TenzrError(f"'{function_name(fn)}' called with keyword arguments it does not take: {e}") from None
    given = bound.kwargs
    bound.apply_defaults()
    if given:
        raise TenzrError(f"'{function_name(fn)}': keyword arguments {sorted(given)} could not be given "
                         "positions (keyword-only arguments or **kwargs)")
    return bound.args


def call_function(name: str, operands: Sequence[Array], results: Sequence[ir.Type]) -> list[Array]:
    call = ir.Operation.create("func.call", results=list(results), operands=[a.value for a in operands],
                               attributes={"callee": ir.FlatSymbolRefAttr.get(name)})
    return [Array(r) for r in call.results]


@dataclass
class Traced:
    """A Python function traced into `@name` of the current module."""

    name: str
    func: ir.Operation
    in_tree: TreeDef
    out_tree: TreeDef
    arg_specs: list[TensorSpec]
    captures: list[Array]
    """Arrays of the enclosing function that `fn` closed over: `@name`'s last arguments."""

    @property
    def result_types(self) -> list[ir.Type]:
        return list(ir.FunctionType(ir.TypeAttr(self.func.attributes["function_type"]).value).results)

    @property
    def result_specs(self) -> list[TensorSpec]:
        return [spec_of_type(t) for t in self.result_types]  # type: ignore[misc]


def trace_into(trace: Trace, fn: Callable, args: tuple, name: str,
               wrap_output: Callable[[Any], Any] | None = None, sealed: bool = False) -> Traced:
    """Traces `fn(*args)` into a new function of `trace.module`; leaves become its arguments.
    `wrap_output` may rearrange the Python output before it is flattened; a `sealed`
    function (a custom rule) may not close over arrays (see `Frame.sealed`)."""
    leaves, in_tree = flatten(args)
    specs = [leaf.spec if isinstance(leaf, (Array, ShapeDtype)) else spec_of_leaf(leaf) for leaf in leaves]
    weak = [leaf.weak if isinstance(leaf, (Array, ShapeDtype)) else weak_leaf(leaf) for leaf in leaves]
    box: list[TreeDef] = []
    frames: list[Frame] = []

    def body(values: list[ir.Value]) -> list[ir.Value]:
        with function_frame(ir.InsertionPoint.current.block, sealed) as frame:
            frames.append(frame)
            trace.root = trace.root or frame
            out = fn(*unflatten(in_tree, [Array(v, weak=weak[k]) for k, v in enumerate(values)]))
            if wrap_output is not None:
                out = wrap_output(out)
            out_leaves, out_tree = flatten(out)
            box.append(out_tree)
            return [asarray(leaf).value for leaf in out_leaves]

    name = trace.fresh_name(name)
    with tracing(trace):
        func = build_function(trace.module, name, specs, body, def_location(fn))
    return Traced(name, func, in_tree, box[0], specs, frames[0].captures)


# --------------------------------------------------------------------------- compilation

_PHASES: dict[str, float] = {}


@contextmanager
def phase(name: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        _PHASES[name] = _PHASES.get(name, 0.0) + time.perf_counter() - start



@dataclass
class Compiled:
    program: Program
    out_tree: TreeDef
    in_specs: list[TensorSpec]
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds spent compiling, by phase: trace, tenzr-grad, lowering, iree (loading only, on
    a cache hit)."""
    source: str = "compiled"
    """Where IREE's module came from: "compiled" now, or loaded from the "disk" cache or "memory"."""

    def __post_init__(self) -> None:
        self._dtypes = [numpy_dtype(s.dtype) for s in self.in_specs]

    def __call__(self, leaves: list[Any]) -> Any:
        return unflatten(self.out_tree, self.outputs(leaves))

    def outputs(self, leaves: list[Any]) -> list[Any]:
        """The program's results for these input leaves, flat."""
        inputs = [leaf if isinstance(leaf, (np.ndarray, OnDevice)) and leaf.dtype == dtype
                  else np.asarray(leaf, dtype=dtype) for leaf, dtype in zip(leaves, self._dtypes, strict=True)]
        return self.program("main", *inputs)


_COMPILED: dict[tuple, Compiled] = {}


def _signature(leaf: Any) -> Any:
    """What a compiled program depends on for one input leaf (cheap for NumPy arrays)."""
    if isinstance(leaf, (np.ndarray, OnDevice)):
        return leaf.shape, leaf.dtype.str
    return spec_of_leaf(leaf), weak_leaf(leaf)


def _cache_key(key: Any, leaves: list, in_tree: TreeDef, target: Target) -> tuple:
    """The `_COMPILED` key of a traceable called with these flattened arguments."""
    return key, in_tree, tuple(_signature(leaf) for leaf in leaves), target, config.state()


_TRACING = threading.RLock()
"""Held while building IR: every trace of the process shares one MLIR context."""


def _trace_main(fn: Callable, args: tuple, hoist: bool = False) -> tuple[Trace, Traced]:
    """Traces `fn(*args)` as `@main` of a new module (hoisting NumPy arrays into arguments,
    see `Trace.hoisted`, when asked). Call with `_TRACING` held, in the tracing context."""
    trace = Trace(new_module(), {"main"}, hoisted=[] if hoist else None)
    with phase("trace"):
        traced = trace_into(trace, fn, args, "main")
    traced.func.attributes["sym_name"] = ir.StringAttr.get("main")
    return trace, traced


def _lower(trace: Trace, target: Target) -> str:
    """The StableHLO text of a traced module. Only `@main` stays public: IREE then inlines
    the rest and compiles no entry points nobody calls (less code to generate), and
    functions left unused after differentiation are dropped."""
    for name, func in functions(trace.module).items():
        if name != "main":
            func.attributes["sym_visibility"] = ir.StringAttr.get("private")
    with phase("lowering"):
        run_pipeline(trace.module, parse_pipeline("builtin.module(symbol-dce)"), verify_each=False)
        lower_to_stablehlo(trace.module, target)
        return str(trace.module)


def _lower_main(fn: Callable, args: tuple, target: Target) -> tuple[Traced, str]:
    """Traces `fn(*args)` as `@main` and lowers it to StableHLO text."""
    with _TRACING, context(), ir.Location.unknown():
        trace, traced = _trace_main(fn, args)
        return traced, _lower(trace, target)


_RETRACED: dict[tuple, Compiled] = {}
"""Programs of transformations that trace on every call, by their traced module."""


@dataclass
class Retraced:
    """A program traced now, compiled (or found) when first run: what `retrace` gives."""

    key: tuple
    out_tree: TreeDef
    """The structure of this trace's output. Not the cached program's: equal programs may
    come from functions whose outputs are shaped alike but keyed otherwise."""
    hoisted: list[np.ndarray]
    """The NumPy arrays the function met, inputs of the program after the arguments."""
    compiled: Compiled | None
    text: str
    """The program's StableHLO text, while it is not compiled ("" once it is)."""
    target: Target
    specs: list[TensorSpec]
    timings: dict[str, float]

    def __call__(self, leaves: list[Any]) -> Any:
        """The program run on the arguments' leaves (and the hoisted arrays)."""
        if self.compiled is None:
            start = time.perf_counter()
            program, source = load_program(self.text, self.target)
            self.timings["iree"] = time.perf_counter() - start
            self.compiled = _RETRACED.setdefault(
                self.key, Compiled(program, self.out_tree, self.specs, self.timings, source))
            self.text = ""
        return unflatten(self.out_tree, self.compiled.outputs([*leaves, *self.hoisted]))


def retrace(fn: Callable, args: tuple, target: Target, replay: list[np.ndarray] | None = None) -> Retraced:
    """`fn(*args)` traced now, as JAX's grad, jvp or vmap run outside jit: the Python function
    runs on every call (its side effects happen, NumPy random draws are new, globals are
    read again), and the compiled program is reused when the traced program is the same.
    NumPy arrays met while tracing are the program's inputs (`Trace.hoisted`), so new
    values of them need no new compile. With `replay` (the arrays an earlier run met),
    those values are used instead: `tz.vjp`'s pullback must see what its forward saw."""
    leaves, _ = flatten(args)
    with _TRACING, context(), ir.Location.unknown():
        _PHASES.clear()
        trace, traced = _trace_main(fn, args, hoist=True)
        hoisted = trace.hoisted or []
        if replay is not None:
            if [(a.shape, a.dtype) for a in replay] != [(a.shape, a.dtype) for a in hoisted]:
                raise TenzrError(f"vjp: '{function_name(fn)}' met other NumPy arrays when run again for the "
                                 "pullback than when run for its value (a data-dependent Python branch?); call "
                                 "tz.vjp again")
            hoisted = replay
        key = (hashlib.sha256(str(trace.module).encode()).digest(), target, config.state())
        found = _RETRACED.get(key)
        text = "" if found is not None else _lower(trace, target)
        timings = dict(_PHASES)
    specs = [*(spec_of_leaf(leaf) for leaf in leaves), *(spec_of_leaf(a) for a in hoisted)]
    return Retraced(key, traced.out_tree, hoisted, found, text, target, specs, timings)


def run_retraced(fn: Callable, args: tuple, target: Target) -> tuple[Any, list[np.ndarray]]:
    """(`fn(*args)`, the NumPy arrays it met), traced and run now (`retrace`)."""
    retraced = retrace(fn, args, target)
    return retraced(flatten(args)[0]), retraced.hoisted


_KEY_LOCKS: dict[tuple, threading.Lock] = {}
_KEY_LOCKS_GUARD = threading.Lock()


def compile_traceable(fn: Callable, args: tuple, target: Target, key: Any) -> Compiled:
    """Traces `fn(*args)` as `@main`, lowers it and loads it (through the compile cache).
    Threads asking for the same program at once compile it once; the others wait for it."""
    leaves, in_tree = flatten(args)
    cache_key = _cache_key(key, leaves, in_tree, target)
    found = _COMPILED.get(cache_key)
    if found is not None:
        return found
    with _KEY_LOCKS_GUARD:
        key_lock = _KEY_LOCKS.setdefault(cache_key, threading.Lock())
    with key_lock:
        found = _COMPILED.get(cache_key)
        if found is not None:
            return found
        specs = [spec_of_leaf(leaf) for leaf in leaves]
        with _TRACING:
            _PHASES.clear()
            traced, text = _lower_main(fn, args, target)
            timings = dict(_PHASES)
        start = time.perf_counter()
        program, source = load_program(text, target)
        timings["iree"] = time.perf_counter() - start
        timings["trace"] -= timings.get("tenzr-grad", 0.0)  # differentiation happens while tracing
        compiled = Compiled(program, traced.out_tree, specs, timings, source)
        _COMPILED[cache_key] = compiled
    with _KEY_LOCKS_GUARD:
        _KEY_LOCKS.pop(cache_key, None)
    return compiled


def clear_caches() -> None:
    """Forgets every compiled program kept in memory (JAX's name; the disk cache stays) and
    closes each GPU device once no program still held elsewhere uses it. IREE's Vulkan
    device on Mesa's lavapipe keeps two threads polling while it is open, so a process done
    with Vulkan gets two cores back this way. The CPU device stays open: CPU results live
    in its memory."""
    from tenzr.eager import forget_plans  # (eager calls build on this module)
    from tenzr.runtime import close_devices

    _COMPILED.clear()
    _RETRACED.clear()
    forget_plans()
    forget_loaded()
    close_devices()
    gc.collect()  # IREE's SystemContext refers to itself (through its bound modules)


def traced_call(args: Any) -> bool:
    """Whether a transformation called on `args` is part of a trace (inside another
    transformation, or on traced arrays) rather than run on NumPy values."""
    return traced_leaves(flatten(args)[0])


def traced_leaves(leaves: list[Any]) -> bool:
    """`traced_call` of arguments already flattened."""
    return current_trace() is not None or any(isinstance(leaf, Array) for leaf in leaves)


class Traceable:
    """A function that compiles when called on arrays and inlines when traced."""

    target: Target
    staged = False
    """Whether the Python function runs once per input signature, its program reused for
    every call of that signature (`jit`, as JAX's), rather than on every call (grad, jvp,
    vmap ... outside jit: `run_retraced`)."""

    def trace_call(self, *args: Any) -> Any:
        raise NotImplementedError

    def cache_key(self) -> Any:
        return self

    def held_arguments(self, args: tuple) -> list[int]:
        """Positions of arguments that an eager call may hold at their Python values when
        tracing them fails (see `__call__`): none, unless the transformation says so."""
        return []

    def with_keywords(self, args: tuple, kwargs: dict[str, Any]) -> tuple[Traceable, tuple]:
        """(a traceable, its positional arguments) that a call with keyword arguments
        becomes. As in JAX, keyword arguments pass through to the function untransformed
        (not differentiated): this transformation of `fn` with them fixed."""
        bound = copy.copy(self)
        bound.fn = functools.partial(self.fn, **kwargs)  # type: ignore[attr-defined]
        return bound, args

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        """As a function's: one defined in a class becomes a method, `instance` its first
        argument (`@partial(tz.jit, static_argnums=0)` on a method, as JAX's)."""
        return self if instance is None else functools.partial(self, instance)

    @api_boundary
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            bound, args = self.with_keywords(args, kwargs)
            return bound(*args)
        leaves, in_tree = flatten(args)
        if traced_leaves(leaves):
            return self.trace_call(*args)
        if not self.staged:
            try:
                return run_retraced(self.trace_call, args, self.target)[0]
            except ConcretizationTypeError:
                held = self.held_arguments(args)
                if not held:
                    raise
            # JAX's grad keeps a non-differentiated Python number a number, so code may slice
            # or branch on it. Tracing it instead lets one program serve every value; only
            # when the function needs its value is it traced again with the number fixed.
            partial, rest, _ = hold(self.trace_call, args, held)
            return run_retraced(partial, rest, self.target)[0]
        found = _COMPILED.get(_cache_key(self.cache_key(), leaves, in_tree, self.target))
        return (found or self.compiled(*args))(leaves)

    @api_boundary
    def compiled(self, *args: Any) -> Compiled:
        """The compiled program for `args`' signature (compiling it now if needed), with its
        compile timings."""
        return compile_traceable(self.trace_call, args, self.target, self.cache_key())

    @api_boundary
    def lower(self, *args: Any) -> Lowered:
        """The StableHLO module that calling with `args` compiles (a `Lowered`: its text)."""
        return Lowered(_lower_main(self.trace_call, args, self.target)[1],
                       lambda: (self.compiled(*args), lambda *given: Traceable.__call__(self, *given))[1])


class Lowered(str):
    """What `lower` gives: the StableHLO module's text, a str, with the methods of JAX's
    `Lowered` (`jax.jit(f).lower(x).compile()(x)`)."""

    def __new__(cls, text: str, compile_now: Callable[[], Callable[..., Any]]) -> Lowered:
        lowered = super().__new__(cls, text)
        lowered._compile_now = compile_now
        return lowered

    _compile_now: Callable[[], Callable[..., Any]]

    def as_text(self, dialect: str | None = None, **_: Any) -> str:
        """The module's text (StableHLO, whatever `dialect` asks)."""
        return str(self)

    def compile(self, compiler_options: Any = None) -> Callable[..., Any]:
        """Compiles the module now (or finds it compiled) and returns the function to call it
        with: the arguments `lower` was given, less the static ones, as JAX's `Compiled`."""
        return self._compile_now()


class jit(Traceable):  # JAX's name
    """Compiles `fn` for `target` ("cpu", "vulkan", "cuda" or a `Target`) on first call with
    each input signature (shapes, dtypes, pytree structure) and reuses it after.

    Arguments named by `static_argnums` (positions) or `static_argnames` (keywords) are not
    traced: the program is compiled for their values, which must be hashable (shapes, flags,
    functions), as in JAX. Keyword arguments are otherwise traced like positional ones.
    Called without `fn` (`@tz.jit(static_argnums=1)`), it returns the decorator, as JAX's.
    JAX's `donate_argnums`, `donate_argnames`, `keep_unused` and `inline` are accepted and
    change nothing: a result never reuses an argument's memory here (as JAX on a backend
    without donation), arguments are kept, and a jit inside a trace is inlined anyway.

    >>> f = tz.jit(lambda x: tz.exp(x) * 2.0)
    >>> f(np.zeros(3, np.float32))
    array([2., 2., 2.], dtype=float32)
    """

    staged = True

    def __new__(cls, fn: Callable | None = None, *args: Any, **kwargs: Any) -> Any:
        if fn is None:  # `@tz.jit(static_argnums=...)`, JAX's decorator form
            return functools.partial(cls, *args, **kwargs)
        return super().__new__(cls)

    @api_boundary
    def __init__(self, fn: Callable, target: str | Target = "cpu", static_argnums: int | Sequence[int] = (),
                 static_argnames: str | Sequence[str] = (), donate_argnums: int | Sequence[int] = (),
                 donate_argnames: str | Sequence[str] = (), keep_unused: bool = False, inline: bool = False):
        del donate_argnums, donate_argnames, keep_unused, inline  # (see above)
        check_callable(fn, "jit")
        self.fn: Callable = fn.fn if isinstance(fn, jit) else fn
        self.target = as_target(target)
        self.static_argnums, self.static_argnames = _static_arguments(self.fn, static_argnums, static_argnames)
        functools.update_wrapper(self, self.fn, updated=())

    def trace_call(self, *args: Any) -> Any:
        return self.fn(*args)

    def cache_key(self) -> Any:
        return ("jit", self.fn)

    @api_boundary
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if config.jax_disable_jit and not traced_leaves(flatten((args, kwargs))[0]):
            return self.fn(*args, **kwargs)  # (op by op: tz.disable_jit)
        return Traceable.__call__(*self._bound(args, kwargs))

    @api_boundary
    def compiled(self, *args: Any, **kwargs: Any) -> Compiled:
        return Traceable.compiled(*self._bound(args, kwargs))

    @api_boundary
    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        traceable, *given = self._bound(args, kwargs)
        text = Traceable.lower(traceable, *given)
        if traceable is self:
            return text

        def compile_now() -> Callable[..., Any]:
            traceable.compiled(*given)
            return lambda *dynamic, **named: Traceable.__call__(traceable, dynamic, named)

        return Lowered(text, compile_now)

    def _bound(self, args: tuple, kwargs: dict) -> tuple[Any, ...]:
        """(the traceable to call, its arguments): this jit and `args` when nothing is
        static or passed by keyword, else the jit with its static arguments fixed, called
        on (the traced positional arguments, the traced keywords)."""
        if not kwargs and not self.static_argnums:
            return (self, *args)
        fixed_positions = {n if n >= 0 else n + len(args) for n in self.static_argnums}
        fixed = tuple((i, a) for i, a in enumerate(args) if i in fixed_positions) + \
            tuple(sorted((k, v) for k, v in kwargs.items() if k in self.static_argnames))
        try:
            hash(fixed)
        except TypeError:
            raise TenzrError(f"jit of '{function_name(self.fn)}': static arguments must be hashable (as in JAX), "
                             f"got {', '.join(type(v).__name__ for _, v in fixed)}") from None
        traced_args = tuple(a for i, a in enumerate(args) if i not in fixed_positions)
        traced_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        return _Specialized(self, fixed, len(args)), traced_args, traced_kwargs


def _static_arguments(fn: Callable, nums: int | Sequence[int], names: str | Sequence[str]
                      ) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """JAX's rule: static positions and names, each completed from the other through `fn`'s
    signature where it has one."""
    nums = (nums,) if isinstance(nums, int) else tuple(nums)
    names = (names,) if isinstance(names, str) else tuple(names)
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in nums):
        raise TenzrError(f"jit: static_argnums must be ints, got {nums!r}")
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return nums, names
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    named = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    names += tuple(positional[n] for n in nums if -len(positional) <= n < len(positional) and positional[n] in named
                   and positional[n] not in names)
    nums += tuple(positional.index(name) for name in names if name in positional and positional.index(name) not in nums)
    return nums, names


class _Specialized(Traceable):
    """A jitted function with its static arguments fixed: called on (traced args, kwargs)."""

    staged = True

    def __init__(self, outer: jit, fixed: tuple, count: int):
        self.outer, self.fixed, self.count, self.target = outer, fixed, count, outer.target

    def cache_key(self) -> Any:
        return ("jit", self.outer.fn, self.fixed, self.count)

    def trace_call(self, traced_args: tuple, traced_kwargs: dict) -> Any:
        positions = {i: v for i, v in self.fixed if isinstance(i, int)}
        rest = iter(traced_args)
        args = [positions[i] if i in positions else next(rest) for i in range(self.count)]
        kwargs = {**traced_kwargs, **{k: v for k, v in self.fixed if isinstance(k, str)}}
        return self.outer.fn(*args, **kwargs)


@api_boundary
def eval_shape(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes `fn(*args, **kwargs)` would return, as a pytree of
    `tz.ShapeDtypeStruct`, found by tracing alone (nothing is compiled or run). Arguments may
    be arrays or shape-dtype structs.

    >>> tz.eval_shape(lambda x: x @ x.T, tz.ShapeDtypeStruct((3, 2), np.float32))
    ShapeDtypeStruct(shape=(3, 3), dtype=float32)
    """
    check_callable(fn, "eval_shape")
    with _TRACING, context(), ir.Location.unknown():
        traced = trace_into(Trace(new_module()), lambda a, k: fn(*a, **k), (args, kwargs), "eval_shape")
        return unflatten(traced.out_tree, [ShapeDtype(s.shape, numpy_dtype(s.dtype)) for s in traced.result_specs])


class ClosedJaxpr:  # JAX's name
    """The traced program `tz.make_jaxpr` gives: printing it shows its tenzr module (where
    JAX prints its jaxpr); `in_avals` and `out_avals` are the flat arguments' and results'
    `tz.ShapeDtypeStruct`s. Constants are part of the module, so `consts` is empty."""

    consts: tuple = ()

    def __init__(self, text: str, in_avals: list[ShapeDtype], out_avals: list[ShapeDtype]):
        self.text, self.in_avals, self.out_avals = text, in_avals, out_avals

    def pretty_print(self, **options: Any) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__


def make_jaxpr(fun: Callable, static_argnums: int | Sequence[int] = (), axis_env: Any = None,
               return_shape: bool = False, abstracted_axes: Any = None) -> Callable[..., Any]:
    """JAX's `make_jaxpr`: a function that traces `fun` on its arguments (arrays or
    shape-dtype pytrees; those at `static_argnums` are fixed, as in `tz.jit`) and returns
    the `ClosedJaxpr` (with `return_shape=True`, also the result's shapes as a pytree of
    `tz.ShapeDtypeStruct`). Nothing is compiled or run.

    >>> print(tz.make_jaxpr(lambda x: tz.exp(x))(np.zeros(2, np.float32)))  # doctest: +ELLIPSIS
    module {
      func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
        %0 = "tenzr.exp"(%arg0) : (tensor<2xf32>) -> tensor<2xf32>
    ...
    """
    check_callable(fun, "make_jaxpr")
    if axis_env is not None or abstracted_axes is not None:
        raise TenzrError("make_jaxpr: axis_env and abstracted_axes are not supported (Tenzr has no named axes "
                         "and traces static shapes)")
    jitted = jit(fun, static_argnums=static_argnums)
    name = function_name(jitted.fn)

    @functools.wraps(jitted.fn)
    @api_boundary
    def make(*args: Any, **kwargs: Any) -> Any:
        traceable, *traced_args = jitted._bound(args, kwargs)
        with _TRACING, context(), ir.Location.unknown():
            t = Trace(new_module())
            traced = trace_into(t, traceable.trace_call, tuple(traced_args), "main" if name == "<lambda>" else name)
            text = str(t.module)
        in_avals, out_avals = ([ShapeDtype(s.shape, numpy_dtype(s.dtype)) for s in specs]
                               for specs in (traced.arg_specs, traced.result_specs))
        jaxpr = ClosedJaxpr(text, in_avals, out_avals)
        return (jaxpr, unflatten(traced.out_tree, out_avals)) if return_shape else jaxpr

    return make


# --------------------------------------------------------------------------- differentiation


def check_argnums(argnums: Any) -> int | tuple[int, ...]:
    """`argnums` checked: an int, or a sequence of ints (which may repeat, as in JAX)."""
    def is_int(n: Any) -> bool:
        return isinstance(n, (int, np.integer)) and not isinstance(n, bool)

    if is_int(argnums):
        return int(argnums)
    if isinstance(argnums, (tuple, list)) and argnums and all(is_int(n) for n in argnums):
        return tuple(int(n) for n in argnums)
    raise TenzrError(f"argnums must be an int or a non-empty tuple of ints, got {argnums!r}")


def hold(fn: Callable, args: tuple, held: Sequence[int]) -> tuple[Callable, tuple, list[int]]:
    """(`fn` of the other arguments, those arguments, their positions) with the arguments at
    positions `held` held at their values in `args` (JAX's `argnums_partial`)."""
    free = [n for n in range(len(args)) if n not in held]

    @functools.wraps(fn)
    def call(*values: Any) -> Any:
        full = list(args)
        for n, value in zip(free, values, strict=True):
            full[n] = value
        return fn(*full)

    return call, tuple(args[n] for n in free), free


def python_numbers(arg: Any) -> bool:
    """Whether `arg` is a Python number or a pytree of them: what JAX's transformations keep
    a Python value where they do not transform it."""
    return all(isinstance(leaf, (bool, int, float, complex)) for leaf in flatten(arg)[0])


def held_numbers(args: tuple, argnums: int | tuple[int, ...]) -> list[int]:
    """Positions not in `argnums` of arguments that are Python numbers (or pytrees of
    them): what JAX's grad and jacobians keep as Python values."""
    nums = {argnums} if isinstance(argnums, int) else set(argnums)
    nums = {n % len(args) for n in nums if -len(args) <= n < len(args)}
    return [n for n, arg in enumerate(args) if n not in nums and python_numbers(arg)]


def hold_numbers(fn: Callable, args: tuple, argnums: int | tuple[int, ...]
                 ) -> tuple[Callable, tuple, int | tuple[int, ...]]:
    """(`fn`, `args`, `argnums`) with the arguments of `held_numbers` held at their values,
    as JAX's grad holds them: `fn` of the other arguments, and `argnums` counted in those."""
    nums = [argnums] if isinstance(argnums, int) else list(argnums)
    held = held_numbers(args, argnums)
    if not held or not all(-len(args) <= n < len(args) for n in nums):
        return fn, args, argnums  # (an argnums out of range is wrt_leaves' error)
    partial, rest, free = hold(fn, args, held)
    at = {n: i for i, n in enumerate(free)}
    renumbered = [at[n % len(args)] for n in nums]
    return partial, rest, renumbered[0] if isinstance(argnums, int) else tuple(renumbered)


def wrt_leaves(args: tuple, argnums: int | tuple[int, ...]) -> tuple[list[list[int]], list[TreeDef]]:
    """Flat leaf indices of each argument picked by `argnums`, and its tree structure."""
    nums = [argnums] if isinstance(argnums, int) else list(argnums)
    offsets, trees, start = [], [], 0
    per_arg = []
    for arg in args:
        count = flatten(arg)[1].num_leaves
        per_arg.append((start, count))
        start += count
    for n in nums:
        if not -len(args) <= n < len(args):
            raise TenzrError(f"argnums {n} is out of range: the function was called with {len(args)} arguments")
        first, count = per_arg[n]
        offsets.append(list(range(first, first + count)))
        trees.append(flatten(args[n])[1])
    return offsets, trees


def output_and_aux(kind: str, out: Any) -> tuple[Any, Any]:
    """(output, aux) of what a has_aux function returned, checked."""
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        got = f"a {type(out).__name__} of {len(out)}" if isinstance(out, (tuple, list)) else \
            f"a single {'ndarray' if isinstance(out, np.ndarray) else type(out).__name__}"
        raise TenzrError(f"{kind} with has_aux=True needs f to return a pair (output, aux), but it returned {got}")
    return out[0], out[1]


def _scalar_loss(kind: str, out: Any, has_aux: bool, holomorphic: bool = False) -> tuple[Array, Any]:
    """(the value to differentiate, aux) of what f returned, checked."""
    out, aux = output_and_aux(kind, out) if has_aux else (out, None)
    if isinstance(out, (tuple, list, dict)):
        hint = "; pass has_aux=True if the rest is auxiliary data" if isinstance(out, (tuple, list)) else ""
        raise TenzrError(f"{kind} needs f to return a floating-point scalar, but it returned a {type(out).__name__} "
                         f"of {len(out)} values{hint}, or use tz.vjp for several outputs")
    y = asarray(out)
    if y.shape == () and y.spec.is_complex and not holomorphic:
        raise TenzrError(f"{kind} needs a real-valued output, but f returned {y.dtype}; for holomorphic "
                         "differentiation pass holomorphic=True, or take the real part (tz.real) or modulus (tz.abs)")
    if y.shape != () or not (y.spec.is_complex if holomorphic else y.is_float):
        wanted = "a complex scalar (holomorphic=True)" if holomorphic else "a floating-point scalar"
        raise TenzrError(f"{kind} needs f to return {wanted}, but it returned shape "
                         f"{y.shape} of {y.dtype}; use tz.vjp for non-scalar outputs, or reduce (e.g. .sum())")
    return y, aux


class _Gradient(Traceable):
    def __init__(self, fn: Callable, argnums: int | Sequence[int], has_aux: bool, target: str | Target,
                 with_value: bool, holomorphic: bool = False, allow_int: bool = False):
        self.fn, self.argnums, self.has_aux, self.with_value = fn, check_argnums(argnums), has_aux, with_value
        self.holomorphic, self.allow_int = holomorphic, allow_int
        self.target = as_target(target)
        functools.update_wrapper(self, fn, updated=())

    def cache_key(self) -> Any:
        return ("grad", self.fn, self.argnums, self.has_aux, self.with_value, self.holomorphic, self.allow_int)

    def held_arguments(self, args: tuple) -> list[int]:
        return held_numbers(args, self.argnums)

    def trace_call(self, *args: Any) -> Any:
        trace = current_trace()
        assert trace is not None
        kind = "value_and_grad" if self.with_value else "grad"
        fn, args, argnums = hold_numbers(self.fn, args, self.argnums)
        leaves = [asarray(leaf) for leaf in flatten(args)[0]]
        per_arg, trees = wrt_leaves(args, argnums)
        wrt = list(dict.fromkeys(i for offsets in per_arg for i in offsets))
        integers = [i for i in wrt if self.allow_int and not leaves[i].spec.is_inexact]
        wrt = [i for i in wrt if i not in integers]
        for i in wrt:
            if self.holomorphic and not leaves[i].spec.is_complex:
                raise TenzrError(f"{kind} with holomorphic=True needs complex inputs, got one of dtype "
                                 f"{leaves[i].dtype} (convert with .astype(np.complex64))")
            if not leaves[i].spec.is_inexact:
                raise TenzrError(f"{kind}: cannot differentiate with respect to an input of dtype "
                                 f"{leaves[i].dtype}; only floating-point inputs have gradients (pick others with "
                                 "argnums, or convert with .astype(np.float32))")
        aux_box: list[TreeDef] = []

        def split(out: Any) -> Any:
            y, aux = _scalar_loss(kind, out, self.has_aux, self.holomorphic)
            aux_leaves, aux_tree = flatten(aux)
            aux_box.append(aux_tree)
            return [y, *aux_leaves]

        traced = trace_into(trace, fn, args, function_name(self.fn), split)
        if wrt:
            with phase("tenzr-grad"):
                derived = differentiate(trace.module, traced.name, wrt, "value_and_grad", seeded=[0])
            results = list(ir.FunctionType(ir.TypeAttr(derived.attributes["function_type"]).value).results)
            out = call_function(ir.StringAttr(derived.attributes["sym_name"]).value, [*leaves, *traced.captures],
                                results)
        else:  # (argnums name empty containers only)
            out = call_function(traced.name, [*leaves, *traced.captures], traced.result_types)
        n_aux = aux_box[0].num_leaves
        value, aux_leaves = out[0], out[1:1 + n_aux]
        grad_of = dict(zip(wrt, out[1 + n_aux:], strict=True))
        for i in integers:  # (zeros of their own type, as tz.vjp gives; JAX's are float0)
            grad_of[i] = asarray(np.zeros(leaves[i].shape, numpy_dtype(leaves[i].spec.dtype)))
        grad_trees = [unflatten(tree, [grad_of[i] for i in offsets]) for tree, offsets in zip(trees, per_arg,
                                                                                               strict=True)]
        g = grad_trees[0] if isinstance(argnums, int) else tuple(grad_trees)
        aux = unflatten(aux_box[0], aux_leaves)
        if self.with_value:
            return ((value, aux) if self.has_aux else value), g
        return (g, aux) if self.has_aux else g


@api_boundary
def grad(fn: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False,
         allow_int: bool = False, target: str | Target = "cpu"):
    """The gradient of scalar-valued `fn` with respect to argument(s) `argnums` (pytrees allowed).
    As in JAX, a real output may depend on complex inputs (their gradient is the conjugate of
    the steepest-ascent direction's), and `holomorphic=True` differentiates a complex output
    of complex inputs (f'(z)). With `allow_int=True`, integer inputs among `argnums` get
    zero gradients (of their own dtype; JAX's are float0) instead of an error.

    >>> tz.grad(lambda x: (x * x).sum())(np.array([1.0, 2.0], np.float32))
    array([2., 4.], dtype=float32)
    """
    check_callable(fn, "grad")
    return _Gradient(fn, argnums, has_aux, target, with_value=False, holomorphic=holomorphic, allow_int=allow_int)


@api_boundary
def value_and_grad(fn: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False, target: str | Target = "cpu"):
    """(fn(*args), grad(fn)(*args)) in one compiled program; with has_aux, ((value, aux), grads).

    >>> value, g = tz.value_and_grad(lambda x: (x * x).sum())(np.array([3.0], np.float32))
    >>> float(value), g
    (9.0, array([6.], dtype=float32))
    """
    check_callable(fn, "value_and_grad")
    return _Gradient(fn, argnums, has_aux, target, with_value=True, holomorphic=holomorphic, allow_int=allow_int)


class _Pullback(Traceable):
    def __init__(self, fn: Callable, primals: tuple, out: Any, target: Target, seen: list[np.ndarray] | None):
        self.fn, self.primals, self.target = fn, primals, target
        out_leaves, self.out_tree = flatten(out)
        self.out_shapes = [tuple(leaf.shape) for leaf in out_leaves]
        self.retraced = None
        """The pullback's program, traced as `vjp` returns (so it sees the function as its
        value did: a Python number it closes over may change after), with `seen`, the NumPy
        arrays `fn` met when run for its value. None while tracing."""
        if seen is not None:
            cotangent = unflatten(self.out_tree, [np.zeros(leaf.shape, leaf.dtype) for leaf in out_leaves])
            self.retraced = retrace(self.trace_call, (primals, cotangent), target, replay=seen)

    def cache_key(self) -> Any:
        return ("vjp", self.fn)

    @api_boundary
    def __call__(self, cotangent: Any) -> Any:
        if self.retraced is None or traced_call(cotangent):
            return super().__call__(self.primals, cotangent)
        ct_leaves, ct_tree = flatten(cotangent)
        self._check(ct_tree, [np.shape(ct) for ct in ct_leaves])
        return self.retraced(flatten((self.primals, cotangent))[0])

    def _check(self, ct_tree: TreeDef, shapes: list[tuple[int, ...]]) -> None:
        if ct_tree != self.out_tree:
            raise TenzrError(f"vjp: the cotangent has structure {ct_tree}, the output has {self.out_tree}")
        for shape, want in zip(shapes, self.out_shapes, strict=True):
            if tuple(shape) != tuple(want):
                raise TenzrError(f"vjp: cotangent shape {tuple(shape)} does not match the output shape {tuple(want)}")

    def trace_call(self, primals: tuple, cotangent: Any) -> tuple:
        trace = current_trace()
        assert trace is not None
        leaves = [asarray(leaf) for leaf in flatten(primals)[0]]
        ct_leaves, ct_tree = flatten(cotangent)
        ct_leaves = [asarray(ct) for ct in ct_leaves]
        self._check(ct_tree, [ct.shape for ct in ct_leaves])
        wrt = [i for i, leaf in enumerate(leaves) if leaf.spec.is_inexact]
        if not wrt:  # (no input has a cotangent but zeros: JAX's are float0)
            zeros = [asarray(np.zeros(leaf.shape, numpy_dtype(leaf.spec.dtype))) for leaf in leaves]
            return tuple(unflatten(flatten(primals)[1], zeros))
        traced = trace_into(trace, self.fn, tuple(primals), function_name(self.fn))
        cts = [ct.astype(numpy_dtype(want.dtype)) for ct, want in zip(ct_leaves, traced.result_specs, strict=True)]
        with phase("tenzr-grad"):
            derived = differentiate(trace.module, traced.name, wrt, "vjp")
        results = list(ir.FunctionType(ir.TypeAttr(derived.attributes["function_type"]).value).results)
        out = call_function(ir.StringAttr(derived.attributes["sym_name"]).value, [*leaves, *traced.captures, *cts],
                            results)
        grads = iter(out[len(cts):])
        flat = [next(grads) if leaf.spec.is_inexact else asarray(np.zeros(leaf.shape, numpy_dtype(leaf.spec.dtype)))
                for leaf in leaves]
        return tuple(unflatten(flatten(primals)[1], flat))


class _Output:
    """The first of the (output, aux) pair `fn` returns: what `vjp(..., has_aux=True)`
    differentiates. Equal for equal `fn`, so that its compiled pullback is reused."""

    def __init__(self, fn: Callable):
        self.fn = fn
        functools.update_wrapper(self, fn, updated=())

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)[0]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Output) and other.fn == self.fn

    def __hash__(self) -> int:
        return hash(("output", self.fn))


@api_boundary
def vjp(fn: Callable, *primals: Any, has_aux: bool = False, target: str | Target = "cpu") -> tuple:
    """(fn(*primals), pullback) where pullback(cotangent) gives one cotangent per primal;
    with has_aux, fn returns (output, aux) and vjp (output, pullback, aux), as JAX's.

    >>> y, pullback = tz.vjp(lambda x: x * 3.0, np.ones(2, np.float32))
    >>> pullback(np.array([1.0, 2.0], np.float32))
    (array([3., 6.], dtype=float32),)
    """
    check_callable(fn, "vjp")
    target = as_target(target)
    seen = None
    if traced_call(primals):
        out = jit(fn, target)(*primals)
    else:
        out, seen = run_retraced(fn, primals, target)
    if not has_aux:
        return out, _Pullback(fn, primals, out, target, seen)
    out, aux = output_and_aux("vjp", out)
    return out, _Pullback(_Output(fn), primals, out, target, seen), aux


@api_boundary
def linear_transpose(fun: Callable, *primals: Any, target: str | Target = "cpu") -> Callable[[Any], tuple]:
    """JAX's `jax.linear_transpose`: the transpose of the linear `fun`, a function of an
    output cotangent giving one cotangent per primal. `primals` give the inputs' shapes and
    dtypes (arrays, numbers or `tz.ShapeDtypeStruct`s): `fun`'s VJP at zeros of them, which
    is its transpose when it is linear."""
    def zeros(p: Any) -> np.ndarray:
        if hasattr(p, "shape") and hasattr(p, "dtype"):
            return np.zeros(tuple(p.shape), np.dtype(p.dtype))
        return np.zeros(np.shape(p), numpy_dtype(dtype_alone(p)))

    leaves, tree = flatten(primals)
    return vjp(fun, *unflatten(tree, [zeros(p) for p in leaves]), target=target)[1]


# --------------------------------------------------------------------------- custom rules


class custom_vjp(Traceable):  # JAX's name
    """A function with a hand-written VJP, lowered to the `tenzr.custom_vjp` attribute.

        @tz.custom_vjp
        def f(x): ...
        f.defvjp(fwd, bwd)   # fwd(*args) -> (out, residuals); bwd(residuals, ct) -> (ct per arg,)

    As in JAX, the arguments at `nondiff_argnums` (Python values: functions, flags, sizes)
    have no cotangent: bwd takes them first, `bwd(*nondiff, residuals, ct)`, and returns
    cotangents for the other arguments only.
    """

    def __init__(self, fn: Callable, nondiff_argnums: Sequence[int] = (), target: str | Target = "cpu"):
        self.fn = fn
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None
        self.target = as_target(target)
        functools.update_wrapper(self, fn, updated=())

    def defvjp(self, fwd: Callable, bwd: Callable) -> custom_vjp:
        self.fwd, self.bwd = fwd, bwd
        return self

    def cache_key(self) -> Any:
        return ("custom_vjp", self.fn, self.fwd, self.bwd)

    def with_keywords(self, args: tuple, kwargs: dict[str, Any]) -> tuple[Traceable, tuple]:
        return self, positional(self.fn, args, kwargs)  # (fwd and bwd take every argument by position)

    @api_boundary
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = positional(self.fn, args, kwargs)
        if self.nondiff_argnums and not traced_call(args):  # (those stay Python values: functions, sizes)
            held = sorted({i % len(args) for i in self.nondiff_argnums if -len(args) <= i < len(args)})
            rest_fn, rest, _ = hold(self.trace_call, args, held)
            return run_retraced(rest_fn, rest, self.target)[0]
        return super().__call__(*args)

    def trace_call(self, *args: Any) -> Any:
        fname = function_name(self.fn)
        if self.fwd is None or self.bwd is None:
            raise TenzrError(f"custom_vjp function '{fname}' has no rule: call .defvjp(fwd, bwd)")
        rule = tuple(getattr(f, "__code__", f) for f in (self.fn, self.fwd, self.bwd))
        if rule in _RULES_IN_BACKWARD:
            return self.fn(*args)
        fn, fwd, bwd = self.fn, self.fwd, self.bwd
        if self.nondiff_argnums:
            fn, fwd, bwd, args = self._without_nondiff(args)
        trace = current_trace()
        assert trace is not None
        leaves = [asarray(leaf) for leaf in flatten(args)[0]]
        primal = trace_into(trace, fn, args, fname, sealed=True)
        if primal.captures:
            raise TenzrError(f"custom_vjp function '{fname}' uses traced arrays it does not take as "
                             "arguments (a closure); pass them as arguments (give None as their cotangent)",
                             def_location(self.fn))
        n = len(leaves)
        in_tree = flatten(args)[1]

        def backward(*flat: Any) -> list:
            primals = unflatten(in_tree, list(flat[:n]))
            _, residuals = fwd(*primals)
            cts = bwd(residuals, unflatten(primal.out_tree, list(flat[n:])))
            if not isinstance(cts, (tuple, list)) or len(cts) != len(args):
                raise TenzrError(f"custom_vjp bwd of '{fname}' must return a tuple with one cotangent per "
                                 f"argument ({len(args)})")
            out = []
            for ct, arg in zip(cts, args, strict=True):
                arg_leaves, arg_tree = flatten(arg)
                if ct is None:
                    out += [asarray(np.zeros(asarray(a).shape, numpy_dtype(asarray(a).spec.dtype))) for a in arg_leaves]
                    continue
                ct_leaves, ct_tree = flatten(ct)
                if ct_tree != arg_tree:
                    raise TenzrError(f"custom_vjp bwd of '{fname}': a cotangent has structure {ct_tree}, "
                                     f"its argument has {arg_tree}")
                for c, a in zip(ct_leaves, arg_leaves, strict=True):
                    c, a = asarray(c), asarray(a)
                    if c.shape != a.shape:
                        raise TenzrError(f"custom_vjp bwd of '{fname}': cotangent shape {c.shape} does not "
                                         f"match its argument's {a.shape}")
                    out.append(c.astype(a.dtype))
            return out

        backward_args = tuple(leaves) + tuple(ShapeDtype(s.shape, s.dtype) for s in primal.result_specs)
        _RULES_IN_BACKWARD.add(rule)
        try:
            backward_traced = trace_into(trace, backward, backward_args, primal.name + "_bwd", sealed=True)
        finally:
            _RULES_IN_BACKWARD.discard(rule)
        if backward_traced.captures:
            raise TenzrError(f"custom_vjp rule of '{fname}' uses traced arrays that are not arguments of "
                             "the function (a closure in fwd or bwd); pass them as arguments", def_location(self.bwd))
        primal.func.attributes[CUSTOM_VJP] = ir.FlatSymbolRefAttr.get(backward_traced.name)
        out = call_function(primal.name, leaves, primal.result_types)
        return unflatten(primal.out_tree, out)

    def _without_nondiff(self, args: tuple) -> tuple[Callable, Callable, Callable, tuple]:
        """(fn, fwd, bwd, args) with the `nondiff_argnums` arguments fixed at their values."""
        count = len(args)
        positions = sorted({i % count for i in self.nondiff_argnums if -count <= i < count})
        if len(positions) != len(self.nondiff_argnums):
            raise TenzrError(f"custom_vjp of '{function_name(self.fn)}': nondiff_argnums {self.nondiff_argnums} "
                             f"for a call with {count} arguments")
        fixed = {i: args[i] for i in positions}
        given = [args[i] for i in positions]  # (bwd takes them in argument order, as JAX's, which sorts them)
        fn, fwd, bwd = self.fn, self.fwd, self.bwd
        assert fwd is not None and bwd is not None

        def merged(rest: tuple) -> list:
            others = iter(rest)
            return [fixed[i] if i in fixed else next(others) for i in range(count)]

        rest = tuple(a for i, a in enumerate(args) if i not in fixed)
        return (functools.wraps(fn)(lambda *r: fn(*merged(r))), lambda *r: fwd(*merged(r)),
                lambda residuals, ct: bwd(*given, residuals, ct), rest)


_RULES_IN_BACKWARD: set[tuple] = set()
"""The custom_vjp rules (by their functions' code) whose backward is being traced. Inside it,
a call of the same rule traces its function plainly: fwd commonly calls f itself, and bwd
may call the function it differentiates, often through a new custom_vjp made from the same
code (JAX's fixed_point recipe); tracing that one's backward too would never end (JAX
traces a backward only when it differentiates)."""


def checkpoint(fun: Callable, prevent_cse: bool = True, policy: Any = None,
               static_argnums: int | tuple[int, ...] = ()) -> Callable:
    """`fun`, whose values the reverse sweep recomputes instead of keeping from the forward
    (JAX's `jax.checkpoint`, also named `remat`): less memory, one more evaluation of `fun`.
    A loop's adjoint already keeps only the carries and recomputes each iteration, so a
    checkpointed loop body changes nothing there. `prevent_cse` is always on; `policy`
    (which values to keep anyway) and `static_argnums` are not supported yet."""
    check_callable(fun, "checkpoint")
    if policy is not None or static_argnums:
        raise TenzrError("tz.checkpoint: policy and static_argnums are not supported yet")
    del prevent_cse

    @functools.wraps(fun)
    def checkpointed(*args: Any, **kwargs: Any) -> Any:
        trace = current_trace()
        if trace is None:
            return fun(*args, **kwargs)
        # (keyword arguments, keyword-only ones too, pass as one more pytree, as JAX's)
        body = functools.wraps(fun)(lambda given, named: fun(*given, **named)) if kwargs else fun
        args = (args, kwargs) if kwargs else args
        leaves = [asarray(leaf) for leaf in flatten(args)[0]]
        traced = trace_into(trace, body, args, function_name(fun))
        traced.func.attributes[CHECKPOINT] = ir.UnitAttr.get()
        traced.func.attributes["sym_visibility"] = ir.StringAttr.get("private")
        return unflatten(traced.out_tree, call_function(traced.name, [*leaves, *traced.captures], traced.result_types))

    return checkpointed


remat = checkpoint


@api_boundary
def trace(fn: Callable, *examples: Any, **numpy_options: Any) -> Any:
    """The tenzr module of `fn` traced on `examples` (arrays or shape-dtype pytrees), as text.
    Given an array instead of a function, NumPy's `trace` (the sum of a diagonal), as
    `jnp.trace`: `tz.trace(a, offset=0, axis1=0, axis2=1)`.

    >>> print(tz.trace(lambda x: tz.exp(x), np.zeros(2, np.float32)))  # doctest: +ELLIPSIS
    module {
      func.func @...(%arg0: tensor<2xf32>) -> tensor<2xf32> {
        %0 = "tenzr.exp"(%arg0) : (tensor<2xf32>) -> tensor<2xf32>
    ...
    """
    if not callable(fn):
        from tenzr.numpy_lib import trace as matrix_trace  # (numpy_lib builds on the tracing defined here)

        return matrix_trace(fn, *examples, **numpy_options)
    with _TRACING, context(), ir.Location.unknown():
        t = Trace(new_module())
        trace_into(t, fn, examples, function_name(fn) if function_name(fn) != "<lambda>" else "main")
        return str(t.module)
