"""`tenzr-batch`: a function with a batch dimension on some arguments (`vmap`).

For `@f(args) -> ys` it adds, keeping `@f`, `@f_batch(args) -> ys` where the arguments
`in_axes` names have a batch dimension of `size` at the given axis, and each result has
one at its `out_axes` entry (an unbatched result is broadcast). The function is cloned and
its calls inlined (calls of functions with a custom rule stay calls, run per element). The
walk visits the ops in order; an op with a batched operand asks `rules.BATCH_RULES` for its
batched results (the batch dimension first); `LOOPED` ops run once per batch element in a
`stablehlo.while`. Ops without batched operands stay as they are. The output is StableHLO
(and tenzr), so batching composes with tenzr-grad and tenzr-jvp in any order.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from tenzr.dialect.context import body_ops, captured_values, check_static_signature, functions, module_body
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.opdef import Op
from tenzr.dialect.types import TensorSpec, ir_type, spec_of, spec_of_type
from tenzr.passes import stablehlo as sh
from tenzr.passes.regions import (
    RegionDriver,
    dce_everywhere,
    function_to_derive,
    function_type,
    has_uses,
    name_of,
    set_results,
)
from tenzr.passes.registry import Pass, register
from tenzr.passes.rules import BATCH_RULES, LOOPED
from tenzr.passes.rules.batching import stacked
from tenzr.passes.rules.control import I32, REGION_OPS, row, store
from tenzr.passes.tenzr_grad import CHECKPOINT, CUSTOM_JVP, CUSTOM_VJP, inline_calls, is_public, symbol
from tenzr.passes.views import view


def _keeps_call(func: ir.Operation) -> bool:
    return any(a in func.attributes for a in (CUSTOM_VJP, CUSTOM_JVP, CHECKPOINT))


def _moved(value: Value, source: int, target: int) -> Value:
    """`value` with its dimension `source` moved to `target`."""
    rank = spec_of(value).rank
    order = [d for d in range(rank) if d != source]
    order.insert(target, source)
    return sh.transpose(value, order)


@dataclass
class Stack(RegionDriver):
    """The walk over one function; rules reach `size` and `looped` through `op.driver`."""

    size: int = 1
    batched: dict[Value, Value] = field(default_factory=dict)
    calls: list[ir.Operation] = field(default_factory=list)
    """The calls run per element in a loop (`looped`): erased once the walk is over (a call
    stays through `dce`, and the ops after it still name its results until then)."""

    def visit(self, op: ir.Operation, anchor: ir.Operation) -> None:
        ins = [self.batched.get(v) for v in op.operands]
        captured = captured_values(op) if len(op.regions) else []
        if all(b is None for b in ins) and all(v not in self.batched for v in captured):
            return
        rule = BATCH_RULES.get(op.name, LOOPED)
        with ir.InsertionPoint(anchor), op.location:
            decoded = view(op)
            decoded.driver = self
            if rule is LOOPED or (captured and op.name not in REGION_OPS):
                outs = self.looped(decoded, ins)
            else:
                outs = list(rule(decoded, ins))  # type: ignore[operator]
        for result, out in zip(op.results, outs, strict=True):
            want = stacked(spec_of(result), self.size)
            if sh.spec(out) == spec_of(result):  # (a result that does not depend on the batch)
                result.replace_all_uses_with(out)
                continue
            if sh.spec(out) != want:
                raise TenzrError(f"internal error: the batching rule of '{op.name}' gave a {sh.spec(out)} result for "
                                 f"a {want} one", op.location)
            self.batched[result] = out
        if op.name == "func.call":
            self.calls.append(op)

    def batch_of(self, func: ir.Operation, batched: Sequence[bool], out_axes: Sequence[int | None]) -> ir.Operation:
        """`func` (a function the region API made) batched at 0 on the arguments `batched`
        flags, its results at `out_axes` (the caller forgets it when done)."""
        new = batch_function(self.module, name_of(func), [0 if b else None for b in batched], self.size, out_axes)
        self.funcs[name_of(new)] = new
        return new

    def looped(self, op: Op, batched: Sequence[Value | None]) -> list[Value]:
        """The op run once per batch element: a loop over the batch that slices the
        batched operands (and the batched values its regions capture)."""
        operation = op.operation
        assert operation is not None
        captured = [v for v in captured_values(operation) if v in self.batched] if len(operation.regions) else []
        results = [spec_of(r) for r in operation.results]

        def cond(xs: list[Value]) -> Value:
            return sh.compare(xs[0], sh.full(I32, self.size), "LT")

        def body(xs: list[Value]) -> list[Value]:
            i, buffers = xs[0], xs[1:]
            operands = {k: row(b, i, spec_of(operation.operands[k])) for k, b in enumerate(batched) if b is not None}
            inner = {value: row(self.batched[value], i, spec_of(value)) for value in captured}
            copy = operation.clone()
            for k, value in operands.items():
                copy.operands[k] = value
            for value, slice_ in inner.items():
                _replace_inside(copy, value, slice_)
            return [sh.add(i, sh.full(I32, 1)), *(store(b, i, r) for b, r in zip(buffers, copy.results, strict=True))]

        start = [sh.full(I32, 0), *(sh.zeros(stacked(s, self.size)) for s in results)]
        return sh.while_loop(start, cond, body)[1:]


def _replace_inside(root: ir.Operation, old: Value, new: Value) -> None:
    def visit(inner: ir.Operation) -> ir.WalkResult:
        for k, v in enumerate(inner.operands):
            if v == old:
                inner.operands[k] = new
        return ir.WalkResult.ADVANCE

    root.walk(visit)


def batch_function(module: ir.Operation, name: str, in_axes: Sequence[int | None], size: int,
                   out_axes: Sequence[int | None] | None = None) -> ir.Operation:
    """Adds `@{name}_batch` to `module` (see the module docstring) and returns it. An
    `out_axes` entry None keeps a result unbatched (it must not depend on the batch)."""
    new_name = f"{name}_batch"
    funcs, f = function_to_derive(module, name, new_name, "tenzr-batch")
    ftype = function_type(f)
    specs = [spec_of_type(t) for t in ftype.inputs]
    if len(in_axes) != len(specs):
        raise TenzrError(f"tenzr-batch: in_axes has {len(in_axes)} entries, '@{name}' has {len(specs)} arguments",
                         f.location)
    if size < 1:
        raise TenzrError(f"tenzr-batch: size must be at least 1, got {size}")
    axes = _checked_axes(f, name, "in_axes", in_axes, specs, 0)
    if all(a is None for a in axes):
        raise TenzrError(f"tenzr-batch: no argument of '@{name}' is batched (in_axes are all none)", f.location)
    result_specs = [spec_of_type(t) for t in ftype.results]
    outs = _checked_axes(f, name, "out_axes", [0] * len(result_specs) if out_axes is None else out_axes,
                         result_specs, 1)

    new = f.clone(ip=ir.InsertionPoint(module_body(module)))
    new.attributes["sym_name"] = ir.StringAttr.get(new_name)
    for attribute in (CUSTOM_VJP, CUSTOM_JVP, "arg_attrs", "res_attrs"):
        if attribute in new.attributes:
            del new.attributes[attribute]
    funcs[new_name] = new
    inline_calls(new, funcs, _keeps_call)
    block = new.regions[0].blocks[0]
    args = list(block.arguments)
    stack = Stack(module, funcs, size)
    given = {}
    with new.location, ir.InsertionPoint.at_block_begin(block):
        for i, axis in enumerate(axes):
            if axis is not None:
                s = specs[i]
                assert s is not None
                shape = list(s.shape)
                shape.insert(axis, size)
                given[i] = block.add_argument(ir_type(TensorSpec(tuple(shape), s.dtype)), new.location)
                stack.batched[args[i]] = _moved(given[i], axis, 0) if axis else given[i]
    ops = body_ops(new)
    for op, anchor in itertools.pairwise(ops):
        stack.visit(op, anchor)
    ret = body_ops(new)[-1]
    results = []
    with new.location, ir.InsertionPoint(ret):
        for y, axis in zip(list(ret.operands), outs, strict=True):
            b = stack.batched.get(y)
            if axis is None:
                if b is not None:
                    raise TenzrError(f"tenzr-batch: a result of '@{name}' given out_axes none depends on the batch",
                                     f.location)
                results.append(y)
                continue
            if b is None:
                s = spec_of(y)
                b = sh.broadcast_in_dim(y, (size, *s.shape), range(1, s.rank + 1))
            results.append(_moved(b, 0, axis) if axis else b)
    set_results(new, results)
    dce_everywhere(new)
    calls = stack.calls
    while any(dead := [not any(has_uses(r) for r in call.results) for call in calls]):
        # (a call read only by ops that read a later dead call is dead once `dce` took them)
        for call, erase in reversed(list(zip(calls, dead, strict=True))):
            if erase:
                call.erase()
        calls = [call for call, erase in zip(calls, dead, strict=True) if not erase]
        dce_everywhere(new)
    for i in given:
        if has_uses(args[i]):
            raise TenzrError(f"internal error: tenzr-batch left a use of argument {i} of '@{name}'", f.location)
    order = [given.get(i, args[i]) for i in range(len(args))]
    for i in sorted(given, reverse=True):
        block.erase_argument(i)
    _reorder_arguments(new, order)
    set_results(new, list(body_ops(new)[-1].operands))  # (again: the arguments changed)
    return new


def _reorder_arguments(func: ir.Operation, order: list[Value]) -> None:
    """Puts the batched arguments (appended last) back in their argument positions."""
    block = func.regions[0].blocks[0]
    current = list(block.arguments)
    if current == order:
        return
    fresh = [block.add_argument(v.type, func.location) for v in order]
    for old, value in zip(order, fresh, strict=True):
        old.replace_all_uses_with(value)
    for i in reversed(range(len(current))):
        block.erase_argument(i)


def _checked_axes(f: ir.Operation, name: str, what: str, axes: Sequence[int | None],
                  specs: Sequence[TensorSpec | None], extra: int) -> list[int | None]:
    """Axes normalized (negative ones count from the end of the batched rank)."""
    out: list[int | None] = []
    for i, (axis, s) in enumerate(zip(axes, specs, strict=True)):
        if axis is None:
            out.append(None)
            continue
        if s is None:
            raise TenzrError(f"tenzr-batch: {what} entry {i} of '@{name}' is not a tensor", f.location)
        rank = s.rank + 1
        if not -rank <= axis < rank:
            raise TenzrError(f"tenzr-batch: {what} entry {i} is {axis}, out of range for a batched rank {rank} "
                             f"({'argument' if extra == 0 else 'result'} of type {s})", f.location)
        out.append(axis % rank)
    return out


def parse_axes(text: str) -> list[int | None]:
    """`0,none,-1` -> [0, None, -1]."""
    out: list[int | None] = []
    for word in text.split(","):
        word = word.strip()
        if word.lower() == "none":
            out.append(None)
            continue
        try:
            out.append(int(word))
        except ValueError:
            raise TenzrError(f"tenzr-batch: an axis must be an integer or 'none', got '{word}'") from None
    return out


@register
@dataclass
class TenzrBatch(Pass):
    flag: ClassVar[str] = "tenzr-batch"
    summary: ClassVar[str] = ("Add @f_batch beside @f: f with a batch dimension on chosen arguments and results "
                              "(vmap).")
    example_input: ClassVar[str] = """\
func.func @f(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<f32> {
  %0 = "tenzr.mul"(%x, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "tenzr.reduce_sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
"""
    example_options: ClassVar[str] = "func=f in_axes=0,none size=4"
    func: str = field(default="", metadata={"help": "the function to batch (default: every public one)"})
    in_axes: str = field(default="0", metadata={
        "help": "per argument, the axis of its batch dimension or 'none' (one entry: every argument)"})
    size: int = field(default=0, metadata={"help": "the batch size (required)"})
    out_axes: str = field(default="0", metadata={
        "help": "per result, the axis of its batch dimension or 'none' (one entry: every result)"})

    def run(self, module: ir.Operation) -> None:
        if self.size < 1:
            raise TenzrError("tenzr-batch: give the batch size, e.g. --tenzr-batch=\"func=f in_axes=0 size=8\"")
        funcs = functions(module)
        if self.func:
            names = [self.func]
        else:
            rules = {symbol(f, a) for f in funcs.values() for a in (CUSTOM_JVP, CUSTOM_VJP) if a in f.attributes}
            names = [n for n, f in funcs.items() if is_public(f) and n not in rules and f.regions[0].blocks]
        in_axes, out_axes = parse_axes(self.in_axes), parse_axes(self.out_axes)
        for name in names:
            func = functions(module)[name]
            check_static_signature(func)
            ftype = function_type(func)
            batch_function(module, name, _per(in_axes, len(ftype.inputs)), self.size,
                           _per(out_axes, len(ftype.results)))


def _per(axes: list[int | None], count: int) -> list[int | None]:
    return axes * count if len(axes) == 1 else axes
