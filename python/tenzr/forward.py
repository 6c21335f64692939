"""`jvp`, `linearize`, `jacfwd`, `jacrev`, `hessian` and `custom_jvp`, with JAX's names
and signatures.

Like every transformation they are traceable (see `transforms`): `jvp` traces the function
and adds its `tenzr-jvp` pushforward to the module; `jacfwd` pushes the identity's n
columns through one program (tenzr-jvp's `width=n`), `jacrev` pulls the output's rows
back through one (the vjp batched over its cotangents), and `hessian` is `jacfwd` of
`jacrev`, forward over reverse, as in JAX.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tenzr.core import Array, ShapeDtype, api_boundary, asarray, check_callable, current_trace, spec_of_leaf
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ir_imports import ir
from tenzr.dialect.types import numpy_dtype
from tenzr.numpy_api import zeros_like
from tenzr.passes.regions import function_type, name_of
from tenzr.passes.tenzr_batch import batch_function
from tenzr.passes.tenzr_grad import CUSTOM_JVP, differentiate
from tenzr.passes.tenzr_jvp import jvp_function
from tenzr.pytree import TreeDef, flatten, unflatten
from tenzr.targets import Target, as_target
from tenzr.transforms import (
    Traceable,
    Traced,
    call_function,
    check_argnums,
    def_location,
    function_name,
    held_numbers,
    hold_numbers,
    jit,
    output_and_aux,
    phase,
    positional,
    retrace,
    run_retraced,
    trace_into,
    traced_leaves,
    wrt_leaves,
)
from tenzr.tree_util import tree_map


def _call_derived(derived: ir.Operation, operands: Sequence[Array]) -> list[Array]:
    return call_function(name_of(derived), operands, list(function_type(derived).results))


def _split_aux(kind: str, has_aux: bool, box: list[TreeDef]) -> Callable[[Any], Any]:
    """The wrap_output of a traced function whose output may be (output, aux): puts the
    output first, the aux leaves after it, and keeps their structures in `box`."""
    def split(out: Any) -> Any:
        out, aux = output_and_aux(kind, out) if has_aux else (out, None)
        out_leaves, out_tree = flatten(out)
        aux_leaves, aux_tree = flatten(aux)
        box[:] = [out_tree, aux_tree]
        return [*out_leaves, *aux_leaves]

    return split


# --------------------------------------------------------------------------- jvp


class _Pushforward(Traceable):
    def __init__(self, fn: Callable, has_aux: bool, target: Target):
        self.fn, self.has_aux, self.target = fn, has_aux, target

    def cache_key(self) -> Any:
        return ("jvp", self.fn, self.has_aux)

    def trace_call(self, primals: tuple, tangents: tuple) -> tuple:
        trace = current_trace()
        assert trace is not None
        leaves = [asarray(leaf) for leaf in flatten(primals)[0]]
        tangent_leaves, tangent_tree = flatten(tangents)
        if tangent_tree != flatten(primals)[1]:
            raise TenzrError(f"jvp: the tangents have structure {tangent_tree}, the primals have "
                             f"{flatten(primals)[1]}")
        wrt, given = [], []
        for i, (leaf, t) in enumerate(zip(leaves, tangent_leaves, strict=True)):
            t = asarray(t)
            if t.shape != leaf.shape:
                raise TenzrError(f"jvp: a tangent has shape {t.shape}, its primal has shape {leaf.shape}")
            if leaf.weak and t.spec.is_inexact and t.dtype != leaf.dtype:
                leaves[i] = leaf = leaf.astype(t.dtype)  # a weak primal takes its tangent's type
            if leaf.spec.is_inexact:
                if t.dtype != leaf.dtype:
                    raise TenzrError(f"jvp: a tangent has dtype {t.dtype}, its primal has dtype {leaf.dtype} "
                                     "(they must match, as in JAX)")
                wrt.append(i)
                given.append(t)
        primals = tuple(unflatten(flatten(primals)[1], leaves))
        box: list[TreeDef] = []
        traced = trace_into(trace, self.fn, primals, function_name(self.fn),
                            _split_aux("jvp", self.has_aux, box))
        with phase("tenzr-grad"):
            derived = jvp_function(trace.module, traced.name, wrt) if wrt else None
        out_tree, aux_tree = box
        n_out = out_tree.num_leaves
        if derived is None:
            values = call_function(traced.name, [*leaves, *traced.captures], traced.result_types)
            dots = [asarray(np.zeros(s.shape, numpy_dtype(s.dtype))) for s in traced.result_specs]
        else:
            out = _call_derived(derived, [*leaves, *traced.captures, *given])
            values, dots = out[:len(out) // 2], out[len(out) // 2:]
        result = (unflatten(out_tree, values[:n_out]), unflatten(out_tree, dots[:n_out]))
        return (*result, unflatten(aux_tree, values[n_out:])) if self.has_aux else result


def _as_tuple(kind: str, value: Any, what: str) -> tuple:
    if not isinstance(value, (tuple, list)):
        raise TenzrError(f"{kind}: the {what} must be a tuple or a list (one entry per argument), got a "
                         f"{type(value).__name__}")
    return tuple(value)


@api_boundary
def jvp(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False,
        target: str | Target = "cpu") -> tuple:
    """(fun(*primals), the Jacobian of fun at primals applied to tangents); with has_aux,
    (out, tangent out, aux).

    >>> tz.jvp(lambda x: x * x, (np.float32(3.0),), (np.float32(1.0),))
    (array(9., dtype=float32), array(6., dtype=float32))
    """
    check_callable(fun, "jvp")
    primals, tangents = _as_tuple("jvp", primals, "primals"), _as_tuple("jvp", tangents, "tangents")
    if len(primals) != len(tangents):
        raise TenzrError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    return _Pushforward(fun, has_aux, as_target(target))(_weak_primals(primals, tangents), tangents)


def _weak_primals(primals: tuple, tangents: tuple) -> tuple:
    """The primals, with each Python number given its NumPy tangent's float dtype (a weakly
    typed value takes the type of what it meets, as in JAX)."""
    leaves, tree = flatten(primals)
    tangent_leaves, tangent_tree = flatten(tangents)
    if tree != tangent_tree:
        return primals  # _Pushforward names the mismatch
    typed = [np.asarray(p, t.dtype) if isinstance(p, (int, float)) and not isinstance(p, bool)
             and isinstance(t, (np.ndarray, np.generic)) and t.dtype.kind == "f" else p
             for p, t in zip(leaves, tangent_leaves, strict=True)]
    return tuple(unflatten(tree, typed))


@api_boundary
def linearize(fun: Callable, *primals: Any, has_aux: bool = False, target: str | Target = "cpu") -> tuple:
    """(fun(*primals), f_jvp) where f_jvp(*tangents) is the Jacobian at primals applied to
    tangents; with has_aux, (out, f_jvp, aux). Each f_jvp call runs one compiled jvp, traced
    as linearize returns (so it sees `fun` as its value did: a Python number it closes over
    may change after)."""
    check_callable(fun, "linearize")
    target = as_target(target)
    pushforward = _Pushforward(fun, has_aux, target)
    leaves, tree = flatten(primals)
    specs = [spec_of_leaf(leaf) for leaf in leaves]
    retraced = None
    if traced_leaves(leaves):
        out = jit(fun, target)(*primals)
    else:
        out, seen = run_retraced(fun, primals, target)
        zeros = unflatten(tree, [np.zeros(s.shape, numpy_dtype(s.dtype)) for s in specs])
        retraced = retrace(pushforward.trace_call, (primals, zeros), target, replay=seen)

    @api_boundary
    def f_jvp(*tangents: Any) -> Any:
        if retraced is None or traced_leaves(flatten(tangents)[0]):  # (inside jit or vmap: traced there)
            return pushforward(primals, tangents)[1]
        given, given_tree = flatten(tangents)
        if given_tree != tree:
            raise TenzrError(f"linearize: the tangents have structure {given_tree}, the primals have {tree}")
        for t, s in zip(given, specs, strict=True):
            weak = isinstance(t, (int, float, complex))
            if np.shape(t) != s.shape or (s.is_inexact and not weak and np.result_type(t) != numpy_dtype(s.dtype)):
                raise TenzrError(f"linearize: a tangent of shape {np.shape(t)} and dtype {np.result_type(t)} "
                                 f"for a primal of shape {s.shape} and dtype {numpy_dtype(s.dtype)}")
        return retraced(flatten((primals, tangents))[0])[1]

    return (out[0], f_jvp, out[1]) if has_aux else (out, f_jvp)


# --------------------------------------------------------------------------- Jacobians


def _basis(n: int, offset: int, shape: tuple[int, ...], dtype: Any) -> Array:
    """Rows offset..offset+size of the n×n identity, each shaped `shape` (a leaf's
    directions among n)."""
    size = int(np.prod(shape, dtype=np.int64))
    rows = asarray(np.arange(n, dtype=np.int32)).reshape(n, 1)
    columns = asarray(np.arange(offset, offset + size, dtype=np.int32)).reshape(1, size)
    return (rows == columns).astype(dtype).reshape(n, *shape)


def _offsets(sizes: Sequence[int]) -> list[int]:
    return [int(v) for v in np.cumsum([0, *sizes[:-1]])]


class _Jacobian(Traceable):
    def __init__(self, fn: Callable, argnums: int | Sequence[int], has_aux: bool, target: str | Target,
                 forward: bool):
        self.fn, self.argnums, self.has_aux, self.forward = fn, check_argnums(argnums), has_aux, forward
        self.target = as_target(target)
        self.kind = "jacfwd" if forward else "jacrev"
        functools.update_wrapper(self, fn, updated=())

    def cache_key(self) -> Any:
        return (self.kind, self.fn, self.argnums, self.has_aux)

    def held_arguments(self, args: tuple) -> list[int]:
        return held_numbers(args, self.argnums)

    def trace_call(self, *args: Any) -> Any:
        trace = current_trace()
        assert trace is not None
        fn, args, argnums = hold_numbers(self.fn, args, self.argnums)
        leaves = [asarray(leaf) for leaf in flatten(args)[0]]
        per_arg, trees = wrt_leaves(args, argnums)
        wrt = list(dict.fromkeys(i for offsets in per_arg for i in offsets))
        for i in wrt:
            if not leaves[i].is_float:
                raise TenzrError(f"{self.kind}: cannot differentiate with respect to an input of dtype "
                                 f"{leaves[i].dtype}; only floating-point inputs have derivatives")
        box: list[TreeDef] = []
        traced = trace_into(trace, fn, args, function_name(self.fn), _split_aux(self.kind, self.has_aux, box))
        out_tree, aux_tree = box
        n_out = out_tree.num_leaves
        out_specs = traced.result_specs
        for s in out_specs[:n_out]:
            if not s.is_float:
                raise TenzrError(f"{self.kind}: f returned an output of dtype {s.dtype}; only floating-point outputs "
                                 "have Jacobians")
        in_specs = [leaves[i].spec for i in wrt]
        operands = [*leaves, *traced.captures]
        with phase("tenzr-grad"):
            if self.forward:
                values, blocks = self._columns(trace, traced.name, wrt, in_specs, operands, n_out)
            else:
                values, blocks = self._rows(trace, traced, wrt, operands, n_out)
        block_of = dict(zip(wrt, range(len(wrt)), strict=True))
        jac = []
        for o in range(n_out):
            per = [unflatten(tree, [blocks[o][block_of[i]] for i in offsets])
                   for tree, offsets in zip(trees, per_arg, strict=True)]
            jac.append(per[0] if isinstance(argnums, int) else tuple(per))
        result = unflatten(out_tree, jac)
        return (result, unflatten(aux_tree, values[n_out:])) if self.has_aux else result

    def _columns(self, trace: Any, name: str, wrt: list[int], in_specs: list[Any], operands: list[Array],
                 n_out: int) -> tuple[list[Array], list[list[Array]]]:
        """(f's outputs, the Jacobian's block [o][j] of output o and input j): f's JVP on
        the n columns of the identity in one program."""
        sizes = [s.size for s in in_specs]
        n = sum(sizes)
        derived = jvp_function(trace.module, name, wrt, width=n)
        basis = [_basis(n, at, s.shape, numpy_dtype(s.dtype)) for at, s in zip(_offsets(sizes), in_specs, strict=True)]
        out = _call_derived(derived, [*operands, *basis])
        values, dots = out[:len(out) // 2], out[len(out) // 2:]
        blocks = []
        for o in range(n_out):
            y = values[o]
            row = []
            for at, s in zip(_offsets(sizes), in_specs, strict=True):
                part = dots[o][at:at + s.size].reshape(*s.shape, *y.shape)  # column k of J is dots[o][k]
                row.append(part.transpose(*range(s.rank, s.rank + len(y.shape)), *range(s.rank)))
            blocks.append(row)
        return values, blocks

    def _rows(self, trace: Any, traced: Any, wrt: list[int], operands: list[Array],
              n_out: int) -> tuple[list[Array], list[list[Array]]]:
        """(f's outputs, the Jacobian's blocks): f's VJP on the m rows of the identity in
        one program (the aux outputs get zero cotangents)."""
        out_specs = traced.result_specs
        sizes = [s.size for s in out_specs[:n_out]]
        m = sum(sizes)
        pullback = differentiate(trace.module, traced.name, wrt, "vjp")
        n_args = len(function_type(pullback).inputs)
        n_results = len(out_specs)
        derived = batch_function(trace.module, name_of(pullback), [*[None] * (n_args - n_results), *[0] * n_results],
                                 m, [*[None] * n_results, *[0] * len(wrt)])
        seeds = [_basis(m, at, s.shape, numpy_dtype(s.dtype))
                 for at, s in zip(_offsets(sizes), out_specs[:n_out], strict=True)]
        seeds += [asarray(np.zeros((m, *s.shape), numpy_dtype(s.dtype))) for s in out_specs[n_out:]]
        out = _call_derived(derived, [*operands, *seeds])
        values, grads = out[:n_results], out[n_results:]
        blocks = []
        for o, at in zip(range(n_out), _offsets(sizes), strict=True):
            y = out_specs[o]
            blocks.append([g[at:at + y.size].reshape(*y.shape, *g.shape[1:]) for g in grads])
        return values, blocks


@api_boundary
def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False,
           target: str | Target = "cpu") -> Callable:
    """The Jacobian of `fun` with respect to argument(s) `argnums`, by forward mode: an
    output leaf of shape S and an input leaf of shape T give a block of shape S + T.

    >>> tz.jacfwd(lambda x: x * x)(np.array([1.0, 2.0], np.float32))
    array([[2., 0.],
           [0., 4.]], dtype=float32)
    """
    check_callable(fun, "jacfwd")
    if holomorphic:
        raise TenzrError("jacfwd: holomorphic=True is not supported yet (Jacobians are of real functions)")
    return _Jacobian(fun, argnums, has_aux, target, forward=True)


@api_boundary
def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False,
           target: str | Target = "cpu") -> Callable:
    """The Jacobian of `fun` with respect to argument(s) `argnums`, by reverse mode (as
    jacfwd, one row per output element)."""
    check_callable(fun, "jacrev")
    if holomorphic:
        raise TenzrError("jacrev: holomorphic=True is not supported yet (Jacobians are of real functions)")
    return _Jacobian(fun, argnums, has_aux, target, forward=False)


@api_boundary
def hessian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False,
            target: str | Target = "cpu") -> Callable:
    """The Hessian of scalar `fun`: jacfwd(jacrev(fun)), forward over reverse."""
    check_callable(fun, "hessian")
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic, target), argnums, has_aux, holomorphic, target)


# --------------------------------------------------------------------------- custom rules


class custom_jvp(Traceable):  # JAX's name
    """A function with a hand-written JVP, lowered to the `tenzr.custom_jvp` attribute.

        @tz.custom_jvp
        def f(x): ...
        @f.defjvp
        def f_jvp(primals, tangents): ...   # -> (f(*primals), tangent out), linear in tangents

    Reverse mode transposes the rule, so `grad` of f uses it too (as in JAX).

    As in JAX, the arguments at `nondiff_argnums` (Python values: functions, flags, sizes)
    are not differentiated: the rule takes them first, in argument order, then the primals
    and tangents of the others (`f_jvp(fn, primals, tangents)` for `f(fn, x)` with
    nondiff_argnums=(0,)).
    """

    KEPT_FIXED = 64
    """The most nondiff values whose custom_jvp is kept for the next call with them."""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = (), target: str | Target = "cpu"):
        self.fn = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.rule: Callable | None = None
        self._in_rule: Traced | None = None  # f, while its rule (which commonly calls f) is traced
        self._fixed: dict[Any, custom_jvp] = {}
        """The custom_jvp of the other arguments, per hashable value of the nondiff ones."""
        self.target = as_target(target)
        functools.update_wrapper(self, fun, updated=())

    @api_boundary
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not self.nondiff_argnums:
            return Traceable.__call__(self, *args, **kwargs)
        inner, rest = self._with_nondiff_fixed(positional(self.fn, args, kwargs))
        return inner(*rest)

    def _with_nondiff_fixed(self, args: tuple) -> tuple[custom_jvp, tuple]:
        """(the custom_jvp of the arguments other than `nondiff_argnums`, with those fixed at
        their values in `args`; those other arguments)."""
        count, fname = len(args), function_name(self.fn)
        positions = sorted({i % count for i in self.nondiff_argnums if -count <= i < count})
        if len(positions) != len(self.nondiff_argnums):
            raise TenzrError(f"custom_jvp of '{fname}': nondiff_argnums {self.nondiff_argnums} do not name distinct "
                             f"arguments of the {count} given")
        if self.rule is None:
            raise TenzrError(f"custom_jvp function '{fname}' has no rule: decorate one with @{fname}.defjvp")
        given = tuple(args[i] for i in positions)  # (the rule takes them in argument order, as JAX's)
        rest = tuple(a for i, a in enumerate(args) if i not in positions)
        try:  # (types too: 1, 1.0 and True are equal, and the rule may tell them apart)
            key: Any = (tuple(positions), tuple((type(g), g) for g in given), count)
            hash(key)
        except TypeError:
            key = None
        if key is not None and key in self._fixed:
            return self._fixed[key], rest
        if len(self._fixed) >= self.KEPT_FIXED:  # (new functions on every call: keep the cache bounded)
            self._fixed.clear()
        fixed = {i: args[i] for i in positions}

        def merged(others: tuple) -> list:
            it = iter(others)
            return [fixed[i] if i in fixed else next(it) for i in range(count)]

        inner = custom_jvp(functools.wraps(self.fn)(lambda *others: self.fn(*merged(others))), target=self.target)
        rule = self.rule
        inner.defjvp(lambda primals, tangents: rule(*given, primals, tangents))
        if key is not None:
            self._fixed[key] = inner
        return inner, rest

    def with_keywords(self, args: tuple, kwargs: dict[str, Any]) -> tuple[Traceable, tuple]:
        return self, positional(self.fn, args, kwargs)  # (the rule takes every argument by position)

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        """Sets the rule `jvp(primals, tangents) -> (primal out, tangent out)` (with
        nondiff_argnums, `jvp(*those, primals, tangents)`); returns it."""
        if symbolic_zeros:
            raise TenzrError("custom_jvp.defjvp: symbolic_zeros=True is not supported")
        self.rule = jvp
        self._fixed.clear()
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """Sets the rule from one function per argument (JAX's `defjvps`): `jvps[i](tangent
        of argument i, primal out, *primals)` is that argument's part of the output tangent
        (None: it has none); the parts add up."""
        if self.nondiff_argnums:
            raise TenzrError("custom_jvp.defjvps cannot be used with nondiff_argnums (as in JAX); use defjvp")

        def rule(primals: tuple, tangents: tuple) -> tuple:
            if len(jvps) != len(primals):
                raise TenzrError(f"custom_jvp.defjvps: {len(jvps)} rules for {len(primals)} arguments")
            out = self.fn(*primals)
            total = None
            for jvp, tangent in zip(jvps, tangents, strict=True):
                if jvp is not None:
                    part = jvp(tangent, out, *primals)
                    total = part if total is None else tree_map(lambda a, b: a + b, total, part)
            return out, tree_map(zeros_like, out) if total is None else total

        self.defjvp(rule)

    def cache_key(self) -> Any:
        return ("custom_jvp", self.fn, self.rule)

    def trace_call(self, *args: Any) -> Any:
        fname = function_name(self.fn)
        if self.rule is None:
            raise TenzrError(f"custom_jvp function '{fname}' has no rule: decorate one with @{fname}.defjvp")
        trace = current_trace()
        assert trace is not None
        leaves = [asarray(leaf) for leaf in flatten(args)[0]]
        if self._in_rule:
            # The rule calling f calls the custom function itself (its derivatives use the
            # rule again, as in JAX), or traces f's body on other shapes.
            outer = self._in_rule
            if [a.spec for a in leaves] != outer.arg_specs or flatten(args)[1] != outer.in_tree:
                return self.fn(*args)
            return unflatten(outer.out_tree, call_function(outer.name, leaves, outer.result_types))
        primal = trace_into(trace, self.fn, args, fname, sealed=True)
        if primal.captures:
            raise TenzrError(f"custom_jvp function '{fname}' uses traced arrays it does not take as arguments (a "
                             "closure); pass them as arguments", def_location(self.fn))
        n, in_tree, rule = len(leaves), flatten(args)[1], self.rule

        def pushforward(*flat: Any) -> list:
            out, tangent_out = rule(unflatten(in_tree, list(flat[:n])), unflatten(in_tree, list(flat[n:])))
            out_leaves, out_tree = flatten(out)
            tangent_leaves, tangent_tree = flatten(tangent_out)
            if out_tree != primal.out_tree or tangent_tree != primal.out_tree:
                raise TenzrError(f"custom_jvp rule of '{fname}' must return (primal out, tangent out), each with the "
                                 f"structure {primal.out_tree} of f's output; got {out_tree} and {tangent_tree}")
            result = []
            for leaf, spec in zip([*out_leaves, *tangent_leaves], primal.result_specs * 2, strict=True):
                leaf = asarray(leaf)
                if leaf.shape != spec.shape:
                    raise TenzrError(f"custom_jvp rule of '{fname}': an output has shape {leaf.shape}, f's has "
                                     f"{spec.shape}")
                result.append(leaf.astype(numpy_dtype(spec.dtype)))
            return result

        examples = tuple(leaves) + tuple(ShapeDtype(a.shape, a.spec.dtype) for a in leaves)
        self._in_rule = primal
        try:
            rule_traced = trace_into(trace, pushforward, examples, primal.name + "_jvp_rule", sealed=True)
        finally:
            self._in_rule = None
        if rule_traced.captures:
            raise TenzrError(f"custom_jvp rule of '{fname}' uses traced arrays that are not arguments of the "
                             "function (a closure); pass them as arguments", def_location(rule))
        primal.func.attributes[CUSTOM_JVP] = ir.FlatSymbolRefAttr.get(rule_traced.name)
        out = call_function(primal.name, leaves, primal.result_types)
        return unflatten(primal.out_tree, out)
