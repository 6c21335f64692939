"""What every transformation's driver does with functions and regions.

A rule of a region op (a loop, a conditional) transforms the op's regions through its
driver's region API (`op.driver`): `region_function` turns a region into a private
function of the module, the driver's own transformation derives a function from it
(`tenzr_grad`'s `vjp_of`, `tenzr_jvp`'s `jvp_of`), `call_inline` copies a function's body
where the rule builds, and `forget` erases what the rule made once it is done.
Dead-code removal is region-aware: inner blocks first, then the ops around them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from tenzr.dialect.context import body_ops, functions, is_inside, module_body
from tenzr.dialect.diagnostics import TenzrError
from tenzr.dialect.functions import inline_call
from tenzr.dialect.ir_imports import Value, ir
from tenzr.dialect.opdef import Op
from tenzr.dialect.ops import OPS
from tenzr.passes import stablehlo as sh


def function_type(func: ir.Operation) -> ir.FunctionType:
    return ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)


def name_of(func: ir.Operation) -> str:
    return ir.StringAttr(func.attributes["sym_name"]).value


def has_uses(value: Value) -> bool:
    return next(iter(value.uses), None) is not None


def set_results(func: ir.Operation, results: Sequence[Value]) -> None:
    """Makes `func` return `results` (values of its body) instead of what it returned."""
    ret = body_ops(func)[-1]
    with ret.location, ir.InsertionPoint(ret):
        ir.Operation.create("func.return", results=[], operands=list(results))
    ret.erase()
    inputs = [a.type for a in func.regions[0].blocks[0].arguments]
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, [v.type for v in results]))


def function_to_derive(module: ir.Operation, name: str, new_name: str,
                       pass_name: str) -> tuple[dict[str, ir.Operation], ir.Operation]:
    """(the module's functions, `@name`), checked: it exists, has a body, and `@new_name`
    (the function a transformation adds) does not exist yet."""
    from tenzr.passes.tenzr_expand_fft import expand_fft  # (passes: they import what imports this)
    from tenzr.passes.tenzr_expand_lapack import expand_lapack

    expand_lapack(module)  # (JAX's LAPACK calls become loops, and FFTs products, which transformations take)
    expand_fft(module)
    funcs = functions(module)
    if name not in funcs:
        known = ", ".join(f"@{n}" for n in funcs) or "none"
        raise TenzrError(f"{pass_name}: no function named '@{name}' (functions: {known})")
    f = funcs[name]
    if new_name in funcs:
        raise TenzrError(f"{pass_name}: '@{new_name}' already exists", funcs[new_name].location)
    if not f.regions[0].blocks:
        raise TenzrError(f"{pass_name}: '@{name}' is external (it has no body)", f.location)
    return funcs, f


def op_title(op: ir.Operation) -> str:
    """How errors name an op: 'name' op, with a custom call's target."""
    if op.name.endswith("custom_call") and "call_target_name" in op.attributes:
        return f"'{op.name}' op @{ir.StringAttr(op.attributes['call_target_name']).value}"
    return f"'{op.name}' op"


def require_specs(decoded: Op, pass_name: str) -> None:
    """Refuses an op on a derivative's path with a tensor of an element type no TensorSpec
    holds (float8 types and 4-bit integers: JAX can export them)."""
    for value, spec in zip([*decoded.operands, *decoded.outputs], [*decoded.specs, *decoded.results], strict=True):
        if spec is None and isinstance(value.type, ir.RankedTensorType):
            name = decoded.operation.name if decoded.operation is not None else "op"
            raise TenzrError(f"{pass_name}: '{name}' has a value of type {value.type}, which it cannot "
                             "differentiate through (float8 types and 4-bit integers are not supported yet)",
                             decoded.location)


def replace_body_with_call(func: ir.Operation, callee: str) -> None:
    """Makes `func`'s body one call of `@callee` with its arguments (a clone of a function
    with a custom rule calls the original, so the transformation uses the rule)."""
    block = func.regions[0].blocks[0]
    for op in reversed(body_ops(func)):
        op.erase()
    with ir.InsertionPoint(block), func.location:
        results = list(function_type(func).results)
        call = ir.Operation.create("func.call", results=results, operands=list(block.arguments),
                                   attributes={"callee": ir.FlatSymbolRefAttr.get(callee)})
        ir.Operation.create("func.return", results=[], operands=list(call.results))


def fresh_name(funcs: dict[str, ir.Operation], base: str) -> str:
    n = len(funcs)
    while any(f"__{base}{n}{suffix}" in funcs for suffix in ("", "_vjp", "_jvp", "_batch")):
        n += 1
    return f"__{base}{n}"


@dataclass
class RegionDriver:
    """The region API a transformation's driver offers the rules of region ops."""

    module: ir.Operation
    funcs: dict[str, ir.Operation]

    def region_function(self, region: ir.Region, captured: Sequence[Value]) -> ir.Operation:
        """A private function of the module computing what `region` yields from its block
        arguments, then `captured` (the values from outside it that it uses): a copy of the
        region's block, its terminator a return. The caller erases it when done."""
        owner = region.owner
        index = next(i for i, r in enumerate(owner.regions) if r == region)
        copy = owner.clone()
        block = copy.regions[index].blocks[0]
        types = [a.type for a in block.arguments]
        name = fresh_name(self.funcs, "region")
        with owner.location, ir.InsertionPoint(module_body(self.module)):
            func = ir.Operation.create("func.func", attributes={
                "sym_name": ir.StringAttr.get(name), "sym_visibility": ir.StringAttr.get("private"),
                "function_type": ir.TypeAttr.get(ir.FunctionType.get(types, []))}, regions=1)
        block.append_to(func.regions[0])
        copy.erase()
        for value in captured:
            argument = block.add_argument(value.type, owner.location)
            for use in list(value.uses):
                if is_inside(use.owner, func):
                    use.owner.operands[use.operand_number] = argument
        set_results(func, list(body_ops(func)[-1].operands))
        self.funcs[name] = func
        return func

    def restricted(self, func: ir.Operation, keep: Sequence[int]) -> ir.Operation:
        """A copy of `func` returning only its results `keep` (and computing only what they
        need; what it runs again prints nothing again), added to the module (the caller
        erases it when done)."""
        copy = func.clone()
        name = fresh_name(self.funcs, "restricted")
        copy.attributes["sym_name"] = ir.StringAttr.get(name)
        results = list(body_ops(copy)[-1].operands)
        set_results(copy, [results[i] for i in keep])
        drop_prints(copy)
        dce_everywhere(copy)
        self.funcs[name] = copy
        return copy

    @staticmethod
    def unused_arguments(func: ir.Operation) -> set[int]:
        """The positions of `func`'s arguments nothing in it reads."""
        return {i for i, a in enumerate(func.regions[0].blocks[0].arguments) if not has_uses(a)}

    def call_inline(self, func: ir.Operation, operands: Sequence[Value]) -> list[Value]:
        """The results of `func` on `operands`, its body copied here."""
        ftype = function_type(func)
        call = ir.Operation.create("func.call", results=list(ftype.results), operands=list(operands),
                                   attributes={"callee": ir.FlatSymbolRefAttr.get(name_of(func))})
        return inline_call(call, func)

    def forget(self, *funcs: ir.Operation) -> None:
        """Erases functions the region API made."""
        for func in funcs:
            self.funcs.pop(name_of(func), None)
            func.erase()


# --------------------------------------------------------------------------- dead code


PRINTS = frozenset({"tenzr.debug_print", "flow.tensor.trace"})
"""Ops that do more than compute results: they print their operands (`tz.debug.print`)."""


def drop_prints(func: ir.Operation) -> None:
    """Erases the prints in `func`: a copy of code run again for a derivative, which printed
    its values the first time (as JAX's prints do, once per run of the forward)."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in PRINTS:
            found.append(op)
        return ir.WalkResult.ADVANCE

    func.walk(visit)
    for op in found:
        op.erase()


def is_pure(op: ir.Operation) -> bool:
    """Whether `op` only computes its results (tenzr ops but prints, and StableHLO ops whose
    regions are combiners, comparators, loop bodies or branches)."""
    return op.name != "func.call" and op.name not in PRINTS and (
        not len(op.regions) or op.name in sh.PURE_WITH_REGIONS or op.name in OPS)


class _Erasure:
    """What one dead-code removal erased. The bindings make a new Python object each time an
    op is looked up, an erased op's other objects are not told (using one is a crash), and
    their hash reads the op: so each op is met through one object, its first, found by hash
    while the op lives, and erased objects are recognized by identity."""

    def __init__(self) -> None:
        self.objects: dict[int, ir.Operation] = {}
        self.erased: list[ir.Operation] = []  # (keeps their ids from being reused)
        self.erased_ids: set[int] = set()

    def met(self, op: ir.Operation) -> ir.Operation:
        return self.objects.setdefault(hash(op), op)

    def erase(self, op: ir.Operation) -> None:
        self.erased.append(op)
        self.erased_ids.add(id(op))
        op.erase()


def dce(ops: Sequence[ir.Operation], erasure: _Erasure | None = None) -> None:
    """Erases those of `ops` (in program order) whose results are all unused, last first, and
    then each producer of an erased op's operands that this leaves unused, wherever it is.
    Calls, terminators and ops with regions stay, unless the op is pure (a reduce, a loop):
    forward values grad mode does not return die here, and so do the cotangents a rule
    computes for an operand that turns out not to need one."""
    erasure = _Erasure() if erasure is None else erasure
    work = [erasure.met(op) for op in ops]
    while work:
        op = work.pop()
        if id(op) in erasure.erased_ids:
            continue
        # (uses first: nearly every op has some, and asking is the cheapest test here)
        for result in op.results:
            if has_uses(result):
                break
        else:
            if len(op.results) and is_pure(op):
                work.extend(erasure.met(v.owner.operation) for v in op.operands if isinstance(v, ir.OpResult))
                erasure.erase(op)


def nested_blocks(op: ir.Operation) -> Iterator[ir.Block]:
    """Every block in `op`'s regions and, below them, in their ops' regions, outer first.
    A block's ops are read after the caller has handled the block, so it may rewrite them."""
    stack = [op]
    while stack:
        parent = stack.pop()
        for region in parent.regions:
            for block in region.blocks:
                yield block
                stack.extend(o.operation for o in block.operations if len(o.operation.regions))


def dce_everywhere(func: ir.Operation, erasure: _Erasure | None = None) -> None:
    """`dce` in every block of `func`, inner regions first (then an op whose region no
    longer uses a value lets that value die too)."""
    erasure = _Erasure() if erasure is None else erasure
    for region in func.regions:
        for block in region.blocks:
            ops = [erasure.met(op.operation) for op in block.operations]
            for op in ops:
                if len(op.regions) and id(op) not in erasure.erased_ids:
                    dce_everywhere(op, erasure)
            dce(ops[:-1], erasure)
