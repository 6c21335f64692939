"""`tenzr-jvp`: forward-mode differentiation (Jacobian-vector products) in StableHLO.

For `@f(args) -> ys` it adds, keeping `@f`, `@f_jvp(args, tangents...) -> (ys...,
ydots...)`: one tangent per `wrt` argument (by default every floating-point one) and one
per result (zeros for integer results). With `width=n` the tangents (and the result
tangents) have a leading dimension n, so that n directions (a Jacobian's columns) are one
program: tenzr-batch batches the JVP over its tangents, and what does not depend on them
runs once.

The function is cloned and its calls inlined (those to a `tenzr.custom_jvp` function call
its rule; a `tenzr.custom_vjp` function has no JVP). The forward walk visits the ops in
order and asks `rules.JVP_RULES` for each op with a tangent operand; a result without a
tangent is zero and is never built. Most ops' entries are `TRANSPOSED`: the driver emits
the op's VJP rule on a placeholder cotangent and transposes it (reverse mode over those
few StableHLO ops, seeded with the operands' tangents), which leaves exactly the tangent's
computation once dead code is removed. Region ops have rules that carry tangents through
their regions. Tangents are StableHLO, so every order of tenzr-jvp and tenzr-grad composes.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from tenzr.dialect.context import body_ops, captured_values, functions, module_body
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.types import TensorSpec, spec_of, spec_of_type
from tenzr.passes import stablehlo as sh
from tenzr.passes.regions import (
    RegionDriver,
    dce_everywhere,
    function_to_derive,
    function_type,
    has_uses,
    name_of,
    op_title,
    replace_body_with_call,
    require_specs,
    set_results,
)
from tenzr.passes.registry import Pass, register
from tenzr.passes.rules import JVP_RULES, NO_DERIVATIVE, TRANSPOSED, VJP_RULES
from tenzr.passes.tenzr_batch import batch_function
from tenzr.passes.tenzr_grad import (
    CHECKPOINT,
    CUSTOM_JVP,
    CUSTOM_VJP,
    Sweep,
    activity,
    callee_of,
    check_wrt,
    inline_calls,
    is_public,
    symbol,
    unbroadcast,
)
from tenzr.passes.views import view


def _keeps_call(func: ir.Operation) -> bool:
    """Calls the walk keeps (and gives a rule): custom JVPs, and custom VJPs (an error on
    a path with tangents). A checkpointed function is inlined: forward mode keeps nothing."""
    return CUSTOM_JVP in func.attributes or CUSTOM_VJP in func.attributes


def _spec(type_: ir.Type) -> TensorSpec:
    spec = spec_of_type(type_)
    assert spec is not None, type_
    return spec


@dataclass
class Push(RegionDriver):
    """The forward walk over one function; rules of region ops use its region API
    (`region_function`, `jvp_of`, `call_inline`, `replace`) through `op.driver`."""

    tangents: dict[Value, Value] = field(default_factory=dict)
    renamed: dict[Value, Value] = field(default_factory=dict)
    scratch: ir.Operation | None = None
    """A detached op whose block holds a VJP rule's ops before they move into place."""

    def tangent(self, value: Value) -> Value | None:
        return self.tangents.get(value)

    def replace(self, old: Sequence[Value], new: Sequence[Value]) -> None:
        """Lets a rule that rebuilt an op (a loop carrying tangents too) stand its new
        results in for the op's; the tangents it returns then belong to the new ones."""
        for a, b in zip(old, new, strict=True):
            a.replace_all_uses_with(b)
            self.renamed[a] = b

    def visit(self, op: ir.Operation, anchor: ir.Operation) -> None:
        """Builds the tangents of `op`'s results before `anchor` (the op after it)."""
        inputs = [self.tangents.get(v) for v in op.operands]
        captured = captured_values(op) if len(op.regions) else []
        if all(t is None for t in inputs) and all(self.tangents.get(v) is None for v in captured):
            return
        if not any((s := spec_of_type(r.type)) is not None and s.is_inexact for r in op.results):
            return  # (no result can have a tangent: a comparison, is_finite, an argmax)
        rule = JVP_RULES.get(op.name)
        with ir.InsertionPoint(anchor), op.location:
            if op.name == "func.call":
                outs = self._call_jvp(op, inputs)
            elif rule is NO_DERIVATIVE:
                return
            elif rule is TRANSPOSED:
                outs = self._transposed(op, inputs, anchor)
            elif rule is not None:
                decoded = view(op)
                require_specs(decoded, "tenzr-jvp")
                decoded.driver = self
                outs = list(rule(decoded, inputs))  # type: ignore[operator]
            elif len(op.regions):
                raise TenzrError(f"'{op.name}' op has no JVP rule (tenzr-jvp differentiates control flow written as "
                                 "tenzr.while or tenzr.case, or StableHLO's while, case and if), but it lies on a "
                                 "differentiated path", op.location)
            else:
                raise TenzrError(f"{op_title(op)} has no JVP rule, but it lies on a differentiated path", op.location)
        if len(outs) != len(op.results):
            raise TenzrError(f"internal error: the JVP rule of '{op.name}' returned {len(outs)} tangents for "
                             f"{len(op.results)} results", op.location)
        for result, tangent in zip(op.results, outs, strict=True):
            result = self.renamed.pop(result, result)
            if tangent is None:
                continue
            if sh.spec(tangent) != spec_of(result):
                raise TenzrError(f"internal error: the JVP rule of '{op.name}' gave a {sh.spec(tangent)} tangent for "
                                 f"a {spec_of(result)} result", op.location)
            self.tangents[result] = tangent
        if op.name == "func.call" and not any(has_uses(r) for r in op.results):
            op.erase()  # (a custom JVP's rule computes the outputs too)

    def _transposed(self, op: ir.Operation, inputs: list[Value | None], anchor: ir.Operation) -> list[Value | None]:
        """The op's tangents from its VJP rule: the rule's cotangents of the operands are
        linear in a placeholder cotangent of the results; transposing that map, seeded with
        the operands' tangents, gives the results' tangents."""
        decoded = view(op)
        decoded.wanted = tuple(t is not None for t in inputs)
        placeholders = {i: sh.zeros(s) for i, s in enumerate(decoded.results) if s.is_inexact}
        cts = [placeholders.get(i) or sh.zeros(s) for i, s in enumerate(decoded.results)]
        if self.scratch is None:
            self.scratch = ir.Operation.create("func.func", attributes={
                "sym_name": ir.StringAttr.get("scratch"),
                "function_type": ir.TypeAttr.get(ir.FunctionType.get([], []))}, regions=1, ip=None)
            self.scratch.regions[0].blocks.append()
        block = self.scratch.regions[0].blocks[0]
        with ir.InsertionPoint(block):
            grads = list(VJP_RULES[op.name](decoded, cts[0] if len(cts) == 1 else tuple(cts)))  # type: ignore[operator]
            grads = [unbroadcast(g, spec_of(v)) if g is not None and t is not None else None
                     for g, t, v in zip(grads, inputs, op.operands, strict=True)]
        emitted = [o.operation for o in block.operations]
        for o in emitted:
            o.move_before(anchor)
        sweep = Sweep(self.module, self.funcs, activity(emitted, list(placeholders.values())))
        for g, t in zip(grads, inputs, strict=True):
            if g is not None and t is not None:
                sweep.accumulate(g, t, op.name)
        for o in reversed(emitted):
            sweep.visit(o)
        return [sweep.adjoints.get(p) if (p := placeholders.get(i)) is not None else None
                for i in range(len(cts))]

    def _call_jvp(self, call: ir.Operation, inputs: list[Value | None]) -> list[Value | None]:
        callee = callee_of(call, self.funcs)
        name = symbol(call, "callee")
        if CUSTOM_VJP in callee.attributes:
            raise TenzrError(f"cannot apply forward mode (jvp) to '@{name}': it has a custom VJP "
                             "(tenzr.custom_vjp) and no JVP; give it a custom JVP instead", call.location)
        rule_name = symbol(callee, CUSTOM_JVP)
        if rule_name not in self.funcs:
            raise TenzrError(f"'@{name}' names '@{rule_name}' as its tenzr.custom_jvp, but no such function exists",
                             callee.location)
        rule = self.funcs[rule_name]
        ftype, rtype = function_type(callee), function_type(rule)
        want_in, want_out = [*ftype.inputs, *ftype.inputs], [*ftype.results, *ftype.results]
        if list(rtype.inputs) != want_in or list(rtype.results) != want_out:
            raise TenzrError(f"custom JVP '@{rule_name}' of '@{name}' must have type "
                             f"({', '.join(map(str, want_in))}) -> ({', '.join(map(str, want_out))}) (primals..., "
                             f"tangents...) -> (outputs..., output tangents...), got {rtype}", rule.location)
        tangents = [t if t is not None else sh.zeros(_spec(v.type)) for t, v in zip(inputs, call.operands, strict=True)]
        out = ir.Operation.create("func.call", results=want_out, operands=[*call.operands, *tangents],
                                  attributes={"callee": ir.FlatSymbolRefAttr.get(rule_name)})
        n = len(ftype.results)
        self.replace(list(call.results), list(out.results)[:n])
        tangents = [t if _spec(t.type).is_inexact else None for t in list(out.results)[n:]]
        return tangents

    # --- the region API (with RegionDriver's)

    def jvp_of(self, func: ir.Operation, wrt: Sequence[int]) -> ir.Operation:
        """`func`'s pushforward `(args..., tangents for wrt...) -> (results..., result
        tangents...)`, added to the module (the caller erases it when done)."""
        derived = jvp_function(self.module, name_of(func), wrt)
        derived.attributes["sym_visibility"] = ir.StringAttr.get("private")
        self.funcs[name_of(derived)] = derived
        return derived


def jvp_function(module: ir.Operation, name: str, wrt: Sequence[int] = (), width: int | None = None) -> ir.Operation:
    """Adds `@{name}_jvp` to `module` (see the module docstring) and returns it."""
    new_name = f"{name}_jvp"
    funcs, f = function_to_derive(module, name, new_name, "tenzr-jvp")
    if width is not None and width < 1:
        raise TenzrError(f"tenzr-jvp: width must be at least 1, got {width}")
    ftype = function_type(f)
    wrt = check_wrt(f, name, wrt, [spec_of_type(t) for t in ftype.inputs], "tenzr-jvp")
    if CUSTOM_VJP in f.attributes:
        raise TenzrError(f"cannot apply forward mode (jvp) to '@{name}': it has a custom VJP (tenzr.custom_vjp) and "
                         "no JVP; give it a custom JVP instead", f.location)

    new = f.clone(ip=ir.InsertionPoint(module_body(module)))
    new.attributes["sym_name"] = ir.StringAttr.get(new_name)
    for attribute in (CUSTOM_JVP, CHECKPOINT, "arg_attrs", "res_attrs"):
        if attribute in new.attributes:
            del new.attributes[attribute]
    funcs[new_name] = new
    if CUSTOM_JVP in f.attributes:
        replace_body_with_call(new, name)
    inline_calls(new, funcs, _keeps_call)

    block = new.regions[0].blocks[0]
    ops = body_ops(new)
    push = Push(module, funcs)
    for i in wrt:
        push.tangents[block.arguments[i]] = block.add_argument(ftype.inputs[i], new.location)
    for op, anchor in itertools.pairwise(ops):
        push.visit(op, anchor)
    if push.scratch is not None:
        push.scratch.erase()
    ret = body_ops(new)[-1]
    outputs = list(ret.operands)
    with new.location, ir.InsertionPoint(ret):
        tangents = [push.tangents.get(y) or sh.zeros(_spec(y.type)) for y in outputs]
        if width is not None:
            # (The outputs run once, not per direction, even where they come from an op
            # that also carries tangents, as a loop's JVP does.)
            outputs = push.call_inline(f, list(block.arguments)[:len(ftype.inputs)])
    set_results(new, [*outputs, *tangents])
    dce_everywhere(new)
    if width is None:
        return new
    n_args, n_results = len(ftype.inputs), len(outputs)
    batched = batch_function(module, new_name, [*[None] * n_args, *[0] * len(wrt)], width,
                             [*[None] * n_results, *[0] * n_results])
    new.erase()
    batched.attributes["sym_name"] = ir.StringAttr.get(new_name)
    return batched


@register
@dataclass
class TenzrJvp(Pass):
    flag: ClassVar[str] = "tenzr-jvp"
    summary: ClassVar[str] = ("Add @f_jvp(args, tangents...) -> (ys..., ydots...) beside @f: forward-mode derivatives "
                              "with StableHLO tangents.")
    example_input: ClassVar[str] = """\
func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = "tenzr.mul"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "tenzr.reduce_sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
"""
    func: str = field(default="", metadata={"help": "the function to differentiate (default: every public one)"})
    wrt: tuple[int, ...] = field(default=(), metadata={
        "help": "argument indices that get tangents (default: every floating-point argument)"})
    width: int = field(default=0, metadata={
        "help": "give the tangents a leading dimension of this many directions (0: one direction, no extra "
                "dimension)"})

    def run(self, module: ir.Operation) -> None:
        if self.func:
            names = [self.func]
        else:
            funcs = functions(module)
            rules = {symbol(f, a) for f in funcs.values() for a in (CUSTOM_JVP, CUSTOM_VJP) if a in f.attributes}
            names = [n for n, f in funcs.items() if is_public(f) and n not in rules and f.regions[0].blocks]
        for name in names:
            jvp_function(module, name, self.wrt, self.width or None)
