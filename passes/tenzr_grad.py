"""`tenzr-grad`: reverse-mode differentiation with StableHLO adjoints.

For `@f(args) -> ys` it adds, keeping `@f`:
  mode=grad            `@f_grad(args) -> (df/d wrt...)`          (f has one float scalar result)
  mode=vjp             `@f_vjp(args, ybars...) -> (ys..., argbars...)`
  mode=value_and_grad  `@f_value_and_grad(args) -> (y, grads...)`

The function is cloned, calls to ordinary functions are inlined, and an activity analysis
keeps only values that depend on a `wrt` argument and reach a seeded output (an op with
regions depends on the values its regions use, too). The reverse sweep walks the forward
ops backwards, asks each op's rule in `rules.VJP_RULES` (tenzr and StableHLO ops alike, so
the output of tenzr-grad can be differentiated again) for its operands' cotangents, sums
broadcast cotangents back to operand shapes, and accumulates fan-out. Forward ops stay as
they are; adjoints are StableHLO. Dead code is removed.
When forward outputs are returned too (vjp, value_and_grad), large elementwise values
computed from the arguments alone are recomputed for the sweep rather than kept
(`rematerialize`, a choice for IREE's sake; the option `recompute=false` turns it off).
A function carrying `tenzr.custom_vjp = @bwd` is differentiated by calling
`@bwd(primals..., cotangents...) -> (input cotangents...)` instead of its body.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from tenzr.dialect.context import body_ops, captured_values, check_static_signature, functions, module_body
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.functions import inline_call
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.ops import OPS
from tenzr.dialect.types import TensorSpec, spec_of, spec_of_type
from tenzr.passes import stablehlo as sh
from tenzr.passes.regions import (
    RegionDriver,
    dce,
    dce_everywhere,
    drop_prints,
    function_to_derive,
    function_type,
    name_of,
    op_title,
    replace_body_with_call,
    require_specs,
    set_results,
)
from tenzr.passes.registry import Pass, register
from tenzr.passes.rules import NO_DERIVATIVE, VJP_RULES
from tenzr.passes.views import view

MODES = ("grad", "vjp", "value_and_grad")
CUSTOM_VJP = "tenzr.custom_vjp"
CUSTOM_JVP = "tenzr.custom_jvp"
"""A function carrying `tenzr.custom_jvp = @rule` has the JVP `@rule(primals...,
tangents...) -> (outputs..., output tangents...)`, linear in the tangents; tenzr-grad
transposes it (its VJP with respect to the tangents) instead of differentiating the body."""
CHECKPOINT = "tenzr.checkpoint"
"""A function carrying this unit attribute is not inlined: the reverse sweep recomputes
its body (`tz.checkpoint`) instead of reading its values from the forward."""
MAX_INLINE_DEPTH = 64



def symbol(op: ir.Operation, name: str) -> str | None:
    if name not in op.attributes:
        return None
    return ir.FlatSymbolRefAttr(op.attributes[name]).value


def custom_vjp_of(func: ir.Operation) -> str | None:
    """The `@bwd` named by a function's `tenzr.custom_vjp`, if any."""
    return symbol(func, CUSTOM_VJP) if CUSTOM_VJP in func.attributes else None


def is_public(func: ir.Operation) -> bool:
    return "sym_visibility" not in func.attributes or ir.StringAttr(func.attributes["sym_visibility"]).value == "public"


# --------------------------------------------------------------------------- inlining


def _nested_calls(func: ir.Operation) -> list[ir.Operation]:
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.call":
            found.append(op)
        return ir.WalkResult.ADVANCE

    func.walk(visit)
    return found


def inline_calls(func: ir.Operation, funcs: dict[str, ir.Operation], keep: Callable[[ir.Operation], bool]) -> None:
    """Inlines every call (in regions too) into `func`, except calls of functions `keep`
    picks (those with a rule of their own)."""
    for _ in range(MAX_INLINE_DEPTH):
        calls = [c for c in _nested_calls(func) if not keep(callee_of(c, funcs))]
        if not calls:
            return
        for call in calls:
            callee = callee_of(call, funcs)
            if not callee.regions[0].blocks:
                raise TenzrError(f"cannot differentiate through external function '@{symbol(call, 'callee')}' "
                                 "(give it a body or a tenzr.custom_vjp)", call.location)
            inline_call(call, callee)
    raise TenzrError("calls nest deeper than 64 levels (recursion cannot be differentiated)", func.location)


def _has_rule(func: ir.Operation) -> bool:
    """Whether calls of `func` are differentiated by a rule rather than through its body."""
    return any(a in func.attributes for a in (CUSTOM_VJP, CUSTOM_JVP, CHECKPOINT))


def callee_of(call: ir.Operation, funcs: dict[str, ir.Operation]) -> ir.Operation:
    name = symbol(call, "callee")
    if name not in funcs:
        raise TenzrError(f"call to unknown function '@{name}'", call.location)
    return funcs[name]


# --------------------------------------------------------------------------- the sweep


def unbroadcast(ct: Value, target: TensorSpec) -> Value:
    """Sums a broadcast cotangent back to `target`'s shape (NumPy rules)."""
    s = sh.spec(ct)
    if s.shape == target.shape:
        return ct
    lead = s.rank - target.rank
    dims = [*range(lead), *(lead + i for i, n in enumerate(target.shape) if n == 1 and s.shape[lead + i] != 1)]
    return sh.reshape(sh.reduce(ct, 0, dims, "add"), target.shape)


@dataclass
class Sweep(RegionDriver):
    """The reverse sweep over one function; rules of region ops use its region API
    (`region_function`, `vjp_of`, `call_inline`, `accumulate`) through `op.driver`."""

    active: set[Value]
    recomputed: dict[ir.Operation, ir.Operation] = field(default_factory=dict)
    """Forward op -> its copy recomputed for the sweep (whose VJP rule reads the copy)."""
    adjoints: dict[Value, Value] = field(default_factory=dict)
    dropped: list[Value] = field(default_factory=list)
    """Cotangents the sweep made that may end unused (of inactive values, those an op without
    a derivative received, those of multi-result ops): in straight-line code, the only
    places its dead code starts, as the rules leave none of their own (test_ops_grad checks
    that they do not)."""

    def accumulate(self, value: Value, ct: Value, source: str) -> None:
        if value not in self.active:
            self.dropped.append(ct)
            return
        if ct.type != value.type:  # (the common case, equal types, needs no further look)
            target = spec_of(value)
            got = sh.spec(ct)
            if got.dtype != target.dtype or got.rank < target.rank:
                raise TenzrError(f"internal error: the VJP rule of '{source}' gave a {got} cotangent for a "
                                 f"{target} operand")
            ct = unbroadcast(ct, target)
        previous = self.adjoints.get(value)
        self.adjoints[value] = ct if previous is None else sh.add(previous, ct)

    def visit(self, op: ir.Operation) -> None:
        outputs = list(op.results)
        cts = [self.adjoints.pop(r, None) for r in outputs]
        if all(c is None for c in cts):
            return
        rule = VJP_RULES.get(op.name)
        if rule is NO_DERIVATIVE:
            self.dropped.extend(c for c in cts if c is not None)
            return
        if rule is None:
            operands, location = list(op.operands), op.location
        else:
            copy = self.recomputed.get(op)
            decoded = view(op, outputs) if copy is None else view(copy)
            require_specs(decoded, "tenzr-grad")
            # (a recomputed copy's operands are copies too; cotangents go to op's)
            operands = decoded.operands if copy is None else list(op.operands)
            location = decoded.location
            decoded.wanted = tuple([v in self.active for v in operands])
            decoded.seeded = tuple([c is not None for c in cts])
            decoded.driver = self
        with location:
            if rule is None:
                grads = list(self._vjp_without_rule(op, cts))
            else:
                ct = cts[0] if len(cts) == 1 else tuple(c if c is not None else sh.zeros(s)
                                                        for c, s in zip(cts, decoded.results, strict=True))
                if isinstance(ct, tuple):  # (a rule may read only some of them)
                    self.dropped.extend(ct)
                grads = list(rule(decoded, ct))  # type: ignore[operator]
            if len(grads) != len(operands):
                raise TenzrError(f"internal error: the VJP rule of '{op.name}' returned {len(grads)} cotangents for "
                                 f"{len(operands)} operands", location)
            for value, grad in zip(operands, grads, strict=True):
                if grad is not None:
                    self.accumulate(value, grad, op.name)

    def _vjp_without_rule(self, op: ir.Operation, cts: list[Value | None]) -> Sequence[Value | None]:
        """The operands' cotangents of a call (by the callee's custom rule, or by
        recomputing a checkpointed body); any other op without a rule is an error."""
        if op.name == "func.call":
            callee = callee_of(op, self.funcs)
            if CHECKPOINT in callee.attributes:
                return self._checkpoint_vjp(op, cts)
            if CUSTOM_JVP in callee.attributes:
                return self._custom_jvp_vjp(op, cts)
            return self._custom_call_vjp(op, cts)
        if len(op.regions):
            raise TenzrError(f"'{op.name}' op has no gradient rule (tenzr-grad differentiates control flow written "
                             "as tenzr.while or tenzr.case, or StableHLO's while, case and if), but it lies on a "
                             "differentiated path", op.location)
        raise TenzrError(f"{op_title(op)} has no gradient rule, but it lies on a differentiated path", op.location)

    # --- the region API (with RegionDriver's)

    def vjp_of(self, func: ir.Operation, wrt: Sequence[int]) -> ir.Operation:
        """`func`'s pullback `(args..., cotangents...) -> (argument cotangents for wrt...)`
        (its forward results dropped, and what only they needed), added to the module (the
        caller erases it when done)."""
        name = name_of(func)
        derived = differentiate(self.module, name, wrt, "vjp", recompute=False)
        derived.attributes["sym_visibility"] = ir.StringAttr.get("private")
        n_results = len(function_type(func).results)
        set_results(derived, list(body_ops(derived)[-1].operands)[n_results:])
        drop_prints(derived)
        dce_everywhere(derived)
        self.funcs[f"{name}_vjp"] = derived
        return derived

    def _checkpoint_vjp(self, call: ir.Operation, cts: list[Value | None]) -> list[Value | None]:
        """The callee's pullback, recomputing its body from the call's operands (behind an
        optimization barrier, so that CSE does not reuse the forward's values)."""
        callee = callee_of(call, self.funcs)
        ftype = function_type(callee)
        operands = list(call.operands)
        wrt = [i for i, v in enumerate(operands) if v in self.active]
        if not wrt:
            return [None] * len(operands)
        pullback = self.vjp_of(callee, wrt)
        full = [c if c is not None else sh.zeros(_spec(t)) for c, t in zip(cts, ftype.results, strict=True)]
        grads = self.call_inline(pullback, [*sh.optimization_barrier(*operands), *full])
        self.forget(pullback)
        by_index = dict(zip(wrt, grads, strict=True))
        return [by_index.get(i) for i in range(len(operands))]

    def _custom_jvp_vjp(self, call: ir.Operation, cts: list[Value | None]) -> list[Value | None]:
        """The transpose of the callee's custom JVP rule: the rule's VJP with respect to its
        tangents, at zero tangents (the rule is linear in them), seeded on its output
        tangents."""
        callee = callee_of(call, self.funcs)
        rule = self.funcs[symbol(callee, CUSTOM_JVP) or ""]
        operands, ftype = list(call.operands), function_type(callee)
        n, m = len(operands), len(ftype.results)
        wrt = [i for i, v in enumerate(operands) if v in self.active]
        if not wrt:
            return [None] * n
        pullback = self.vjp_of(rule, [n + i for i in wrt])
        zeros = [sh.zeros(_spec(t)) for t in [*ftype.inputs, *ftype.results]]
        full = [c if c is not None else sh.zeros(_spec(t)) for c, t in zip(cts, ftype.results, strict=True)]
        grads = self.call_inline(pullback, [*operands, *zeros[:n], *zeros[n:n + m], *full])
        self.forget(pullback)
        by_index = dict(zip(wrt, grads, strict=True))
        return [by_index.get(i) for i in range(n)]

    def _custom_call_vjp(self, call: ir.Operation, cts: list[Value | None]) -> list[Value]:
        callee = callee_of(call, self.funcs)
        name = symbol(call, "callee")
        bwd_name = custom_vjp_of(callee)
        if bwd_name not in self.funcs:
            raise TenzrError(f"'@{name}' names '@{bwd_name}' as its tenzr.custom_vjp, but no such function exists",
                             callee.location)
        bwd = self.funcs[bwd_name]
        ftype, btype = function_type(callee), function_type(bwd)
        want_in = [*ftype.inputs, *ftype.results]
        if list(btype.inputs) != want_in or list(btype.results) != list(ftype.inputs):
            raise TenzrError(f"custom VJP '@{bwd_name}' of '@{name}' must have type ({', '.join(map(str, want_in))}) "
                             f"-> ({', '.join(map(str, ftype.inputs))}) (primals..., cotangents...) -> "
                             f"(input cotangents...), got {btype}", bwd.location)
        full = [c if c is not None else sh.zeros(_spec(t)) for c, t in zip(cts, ftype.results, strict=True)]
        out = ir.Operation.create("func.call", results=list(ftype.inputs), operands=[*call.operands, *full],
                                  attributes={"callee": ir.FlatSymbolRefAttr.get(bwd_name)})
        return list(out.results)


def _differentiable(op: ir.Operation) -> bool:
    """Whether cotangents may flow through `op` (an op without a rule may: then it is an
    error when they do)."""
    return VJP_RULES.get(op.name) is not NO_DERIVATIVE


REMAT_MIN_ELEMENTS = 1 << 16
"""Elementwise values at least this large are recomputed for the sweep, not kept."""
REMAT_MAX_TRANSCENDENTALS = 3
"""Longer transcendental cones are left to IREE, which then stores a few of their values
for the adjoint instead of computing the whole cone twice. Same process, Zen 3, value and
gradient on 1024x1024: tanh(x)*exp(-x*x) (2 transcendentals) 3.4-3.6 ms left to IREE,
2.6-2.8 ms recomputed; x*x*exp(x) (1) 1.6-1.7 and 1.2 ms; a sin/exp chain with 4, 8 and
25 transcendentals 4.6, 9.8-11.6 and 26-31 ms left to IREE, 5.6, 12.7-14.0 and 40-44 ms
recomputed."""


def rematerialize(forward: list[ir.Operation], arguments: Sequence[Value]) -> dict[ir.Operation, ir.Operation]:
    """Copies of the elementwise ops that depend only on the function's arguments and
    constants, for the reverse sweep to read instead of the forward values.

    IREE keeps a forward value an adjoint reads in a buffer of its own; a short cone is
    cheaper to compute again inside the adjoint's fused loop (see
    REMAT_MAX_TRANSCENDENTALS for the measurements). The copies start from an
    optimization barrier on the arguments, so CSE cannot merge them back into the forward
    ops. Only done when at least two large values would be recomputed, and when the copies
    hold at most REMAT_MAX_TRANSCENDENTALS transcendental ops.
    """
    leaves = set(arguments)
    cheap: set[Value] = set()
    chosen = []
    for op in forward:
        opdef = OPS.get(op.name)
        if op.name == "tenzr.constant":
            cheap.update(op.results)
        elif (opdef is not None and opdef.elementwise
              and all(v in cheap or v in leaves for v in op.operands)):
            cheap.update(op.results)
            chosen.append(op)
    if (sum(spec_of(op.results[0]).size >= REMAT_MIN_ELEMENTS for op in chosen) < 2
            or sum(OPS[op.name].transcendental for op in chosen) > REMAT_MAX_TRANSCENDENTALS):
        return {}
    used = list(dict.fromkeys(v for op in chosen for v in op.operands if v in leaves))
    mapping = dict(zip(used, sh.optimization_barrier(*used), strict=True))
    copies = {}
    for op in chosen:
        copy = op.clone()
        for i, v in enumerate(op.operands):
            if v in mapping:
                copy.operands[i] = mapping[v]
        mapping.update(zip(op.results, copy.results, strict=True))
        copies[op] = copy
    return copies


def activity(forward: list[ir.Operation], wrt: Sequence[Value]) -> set[Value]:
    """The values that depend on `wrt` and carry derivatives (floating point). An op with
    regions depends on the values its regions use from outside it as on its operands.

    Cotangents flow back from the seeded outputs only, so a value of this set gets one only
    if it also reaches an output: the sweep, seeded there, differentiates exactly the values
    that vary and matter."""
    varied = set(wrt)
    for op in forward:
        inputs = [*op.operands, *captured_values(op)] if len(op.regions) else list(op.operands)
        if not varied.isdisjoint(inputs) and _differentiable(op):
            varied.update(r for r in op.results if (s := spec_of_type(r.type)) is not None and s.is_inexact)
    return varied


# --------------------------------------------------------------------------- the transform


def differentiate(module: ir.Operation, name: str, wrt: Sequence[int] = (), mode: str = "grad",
                  seeded: Sequence[int] | None = None, recompute: bool = True) -> ir.Operation:
    """Adds `@{name}_{mode}` to `module` (see the module docstring) and returns it.

    `seeded` (for grad and value_and_grad) picks which results are differentiated; the
    others are returned as values (the API's `has_aux`). By default f must have one result.
    """
    if mode not in MODES:
        raise TenzrError(f"tenzr-grad: unknown mode '{mode}' (choose one of: {', '.join(MODES)})")
    new_name = f"{name}_{mode}"
    funcs, f = function_to_derive(module, name, new_name, "tenzr-grad")
    if len(f.regions[0].blocks) > 1:
        raise TenzrError(f"tenzr-grad: '@{name}' has control flow (several blocks), which cannot be differentiated; "
                         "use tenzr.select for branches", f.location)
    ftype = function_type(f)
    arg_specs = [spec_of_type(t) for t in ftype.inputs]
    result_specs = [spec_of_type(t) for t in ftype.results]
    wrt = check_wrt(f, name, wrt, arg_specs)
    seeded = _check_seeded(f, name, mode, seeded, result_specs)

    new = f.clone(ip=ir.InsertionPoint(module_body(module)))
    new.attributes["sym_name"] = ir.StringAttr.get(new_name)
    for attribute in (CUSTOM_VJP, "arg_attrs", "res_attrs"):
        if attribute in new.attributes:
            del new.attributes[attribute]
    block = new.regions[0].blocks[0]
    if custom_vjp_of(f) is not None:
        replace_body_with_call(new, name)
    funcs[new_name] = new
    inline_calls(new, funcs, _has_rule)

    ops = body_ops(new)
    ret, forward = ops[-1], ops[:-1]
    outputs = list(ret.operands)
    args = list(block.arguments)
    with new.location, ir.InsertionPoint(ret):
        if mode == "vjp":
            seeds = [block.add_argument(t, new.location) for t in ftype.results]
        else:
            seeds = [sh.full(_spec(ftype.results[i]), 1) if i in seeded else None for i in range(len(outputs))]
        wrt_args = [args[i] for i in wrt]
        # (Without forward outputs to return, nothing is computed twice: IREE fuses it all.)
        recomputed = rematerialize(forward, args) if recompute and mode != "grad" else {}
        sweep = Sweep(module, funcs, activity(forward, wrt_args), recomputed)
        for value, seed in zip(outputs, seeds, strict=True):
            if seed is not None:
                sweep.accumulate(value, seed, "the seed")
        for op in reversed(forward):
            sweep.visit(op)
        grads = [sweep.adjoints.get(a) or sh.zeros(_spec(ftype.inputs[i])) for a, i in zip(wrt_args, wrt, strict=True)]
        results = grads if mode == "grad" else [*ret.operands, *grads]
        ir.Operation.create("func.return", results=[], operands=results)
    ret.erase()
    inputs = [a.type for a in block.arguments]
    new.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, [v.type for v in results]))
    if any(len(op.regions) or op.name == "func.call" for op in forward):
        dce_everywhere(new)  # (region rules and calls build code the sweep does not see)
    else:  # the forward ops (what grad mode no longer returns, what was dead before) and what the sweep dropped
        dce([*forward, *recomputed.values(), *(v.owner.operation for v in sweep.dropped if isinstance(v, ir.OpResult))])
    return new


def _spec(type_: ir.Type) -> TensorSpec:
    """The TensorSpec of a type the checks above found to be a tenzr tensor type."""
    spec = spec_of_type(type_)
    assert spec is not None, type_
    return spec


def check_wrt(f: ir.Operation, name: str, wrt: Sequence[int], specs: list[TensorSpec | None],
              pass_name: str = "tenzr-grad") -> list[int]:
    """`wrt` checked against `@name`'s arguments (by default, every floating-point one)."""
    check_static_signature(f)
    if not wrt:
        chosen = [i for i, s in enumerate(specs) if s is not None and s.is_inexact]
        if not chosen:
            raise TenzrError(f"{pass_name}: '@{name}' has no floating-point argument to differentiate", f.location)
        return chosen
    for i in wrt:
        if not 0 <= i < len(specs):
            raise TenzrError(f"{pass_name}: wrt index {i} is out of range: '@{name}' has {len(specs)} arguments",
                             f.location)
        if specs[i] is None or not specs[i].is_inexact:  # type: ignore[union-attr]
            raise TenzrError(f"{pass_name}: argument {i} of '@{name}' has type {specs[i] or 'non-tensor'}; only "
                             "floating-point arguments can be differentiated", f.location)
    return list(dict.fromkeys(wrt))


def _check_seeded(f: ir.Operation, name: str, mode: str, seeded: Sequence[int] | None,
                  specs: list[TensorSpec | None]) -> list[int]:
    if mode == "vjp":
        return list(range(len(specs)))
    if seeded is None:
        if len(specs) != 1:
            raise TenzrError(f"tenzr-grad: mode={mode} needs '@{name}' to return one scalar, it returns "
                             f"{len(specs)} values (use mode=vjp for several outputs)", f.location)
        seeded = [0]
    for i in seeded:
        s = specs[i]
        if s is None or not s.is_inexact or s.rank != 0:
            raise TenzrError(f"tenzr-grad: mode={mode} needs a floating-point scalar result, but result {i} of "
                             f"'@{name}' has type {s or 'non-tensor'} (use mode=vjp for non-scalar outputs)",
                             f.location)
    return list(seeded)


@register
@dataclass
class TenzrGrad(Pass):
    flag: ClassVar[str] = "tenzr-grad"
    summary: ClassVar[str] = ("Add @f_grad, @f_vjp or @f_value_and_grad beside @f: reverse-mode derivatives with "
                              "StableHLO adjoints.")
    example_input: ClassVar[str] = """\
func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "tenzr.mul"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "tenzr.reduce_sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
"""
    func: str = field(default="", metadata={"help": "the function to differentiate (default: every public one)"})
    wrt: tuple[int, ...] = field(default=(), metadata={
        "help": "argument indices to differentiate (default: every floating-point argument)"})
    mode: str = field(default="grad", metadata={"choices": MODES, "help": "which function to add"})
    recompute: bool = field(default=True, metadata={
        "help": "recompute short elementwise cones of the arguments for the sweep instead of keeping their values, "
                "when forward values are returned too (IREE fuses the recomputation; see rematerialize)"})

    def run(self, module: ir.Operation) -> None:
        if self.mode not in MODES:
            raise TenzrError(f"tenzr-grad: unknown mode '{self.mode}' (choose one of: {', '.join(MODES)})")
        if self.func:
            names = [self.func]
        else:
            funcs = functions(module)
            backward = {custom_vjp_of(f) for f in funcs.values()}
            names = [n for n, f in funcs.items() if is_public(f) and n not in backward and f.regions[0].blocks]
        for name in names:
            differentiate(module, name, self.wrt, self.mode, recompute=self.recompute)
