"""A function mapped over a leading dimension of some arguments, one slice per iteration.

`map_arguments` is how a transformation runs one program for n directions before batching
rules exist for every op: tenzr-jvp's `width=n` (a Jacobian's n columns), the API's
`jacrev` (its rows). What does not depend on the mapped arguments (a jvp's primal, a vjp's
forward) runs once, before a `stablehlo.while` over the n slices that holds the rest.
"""

from __future__ import annotations

from collections.abc import Sequence

from tenzr.dialect.context import body_ops, captured_values, module_body
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.types import TensorSpec, ir_type, spec_of
from tenzr.passes import stablehlo as sh
from tenzr.passes.regions import fresh_name, set_results
from tenzr.passes.rules.control import I32, row, store


def _stacked(spec: TensorSpec, n: int) -> TensorSpec:
    return TensorSpec((n, *spec.shape), spec.dtype)


def map_arguments(funcs: dict[str, ir.Operation], module: ir.Operation, func: ir.Operation, mapped: Sequence[int],
                  n: int, stacked: Sequence[int]) -> ir.Operation:
    """A copy of `func` (added to the module as a fresh name) whose last arguments `mapped`
    have a leading dimension n: its results `stacked` get a leading dimension n (`func`'s
    result on each slice), the others are `func`'s (they must not depend on `mapped`)."""
    copy = func.clone(ip=ir.InsertionPoint(module_body(module)))
    name = fresh_name(funcs, "mapped")
    copy.attributes["sym_name"] = ir.StringAttr.get(name)
    funcs[name] = copy
    block = copy.regions[0].blocks[0]
    args = list(block.arguments)
    assert list(mapped) == list(range(len(args) - len(mapped), len(args))), "the mapped arguments come last"
    ops = body_ops(copy)
    ret, body = ops[-1], ops[:-1]
    outputs = list(ret.operands)
    whole = {i: block.add_argument(ir_type(_stacked(spec_of(args[i]), n)), copy.location) for i in mapped}
    varying = {args[i] for i in mapped}
    moved = []
    for op in body:
        if any(v in varying for v in [*op.operands, *captured_values(op)]):
            moved.append(op)
            varying.update(op.results)
    given = {j: whole[mapped[list(args[i] for i in mapped).index(outputs[j])]]
             for j in stacked if outputs[j] in [args[i] for i in mapped]}
    per_slice = [j for j in stacked if outputs[j] in varying and j not in given]
    with copy.location:
        if n == 1:
            with ir.InsertionPoint.at_block_begin(block):
                for i in mapped:
                    args[i].replace_all_uses_with(sh.reshape(whole[i], spec_of(args[i]).shape))
            with ir.InsertionPoint(ret):
                found = {j: sh.reshape(outputs[j], (1, *spec_of(outputs[j]).shape)) for j in per_slice}
        else:
            stacks = _loop(args, whole, moved, [outputs[j] for j in per_slice], n, ret)
            found = dict(zip(per_slice, stacks, strict=True))
        found.update(given)
        with ir.InsertionPoint(ret):
            results = []
            for j, value in enumerate(outputs):
                if j in found:
                    results.append(found[j])
                elif j in stacked:
                    s = spec_of(value)
                    results.append(sh.broadcast_in_dim(value, (n, *s.shape), range(1, s.rank + 1)))
                else:
                    assert value not in varying, "an unmapped result depends on a mapped argument"
                    results.append(value)
    for i in reversed(mapped):
        block.erase_argument(i)
    set_results(copy, results)
    return copy


def _loop(args: list[Value], whole: dict[int, Value], moved: list[ir.Operation], outputs: list[Value], n: int,
          ret: ir.Operation) -> list[Value]:
    """The stacked `outputs`: a while loop over the n slices of the `whole` arguments whose
    body is the `moved` ops (taken out of the function's block)."""
    def cond(xs: list[Value]) -> Value:
        return sh.compare(xs[0], sh.full(I32, n), "LT")

    def body(xs: list[Value]) -> list[Value]:
        i, buffers = xs[0], xs[1:]
        for k, stack in whole.items():
            args[k].replace_all_uses_with(row(stack, i, spec_of(args[k])))
        here = ir.InsertionPoint.current.block
        last = here.operations[len(here.operations) - 1]
        for op in moved:
            op.move_after(last)
            last = op
        return [sh.add(i, sh.full(I32, 1)), *(store(b, i, y) for b, y in zip(buffers, outputs, strict=True))]

    with ir.InsertionPoint(ret):
        state = sh.while_loop([sh.full(I32, 0), *(sh.zeros(_stacked(spec_of(y), n)) for y in outputs)], cond, body)
    return state[1:]
