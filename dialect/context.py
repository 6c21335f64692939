"""The context factory and the parser every entry point shares."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence

import numpy as np

from tenzr.dialect.diagnostics import TenzrError, TenzrErrors, from_mlir_error
from tenzr.dialect.ir_imports import ir

_NOT_OPS = ("//", "!", "#")
"""How top-level lines that are not ops begin: comments, type and attribute aliases."""


MAX_CACHED_CONTEXTS = 4
"""Caches of MLIR objects (types, attributes) are kept for the contexts made last and for
pinned ones: an entry holds its context alive, so a process that makes a context per input
(tenzr-opt in-process, the tests) would otherwise keep every context it ever made."""
_RECENT: list[ir.Context] = []
_PINNED: list[ir.Context] = []
_EVICTORS: list[Callable[[set[ir.Context]], None]] = []


def on_context_eviction(evict: Callable[[set[ir.Context]], None]) -> Callable[[set[ir.Context]], None]:
    """Registers `evict(kept)`, which drops a cache's entries for contexts not in `kept`."""
    _EVICTORS.append(evict)
    return evict


def make_context(*, pinned: bool = False) -> ir.Context:
    """A context with StableHLO, func, arith, tensor and the unregistered `tenzr` dialect.
    A pinned one (the API's, for the whole process) keeps its cached objects for good."""
    context = ir.Context()
    context.allow_unregistered_dialects = True
    (_PINNED if pinned else _RECENT).append(context)
    if len(_RECENT) > MAX_CACHED_CONTEXTS:
        del _RECENT[0]
        kept = set(_RECENT) | set(_PINNED)
        for evict in _EVICTORS:
            evict(kept)
    return context


MAX_NESTING = 256
"""Brackets may nest this deep: MLIR's recursive-descent parser runs out of stack a few
thousand levels down (a segfault), well before any real program's depth."""
MAX_DIGITS = 100
"""Longer integer literals are refused: MLIR's parser can take minutes on huge ones."""
_LONG_INTEGER = re.compile(rf"\d{{{MAX_DIGITS + 1},}}")
_TOKENS = re.compile(rf'"(?:[^"\\\n]|\\.)*"|//[^\n]*|[{{}}()\[\]]|{_LONG_INTEGER.pattern}')
_BRACKET_STEPS = np.zeros(256, np.int8)
_BRACKET_STEPS[[ord(c) for c in "{(["]] = 1
_BRACKET_STEPS[[ord(c) for c in "})]"]] = -1


def _check_parsable(text: str, filename: str) -> None:
    """Refuses input that would crash or stall MLIR's parser, at its line and column."""
    data = np.frombuffer(text.encode("utf-8", "replace"), np.uint8)
    depth = np.cumsum(_BRACKET_STEPS[data], dtype=np.int64)  # a quick look: strings and comments count too
    if not (depth.size and int(depth.max()) > MAX_NESTING) and not _LONG_INTEGER.search(text):
        return
    level = 0
    for match in _TOKENS.finditer(text):  # exact: strings and comments do not count
        token = match.group()
        if token[0] in "{([":
            level += 1
            if level > MAX_NESTING:
                raise _located(f"the input nests brackets more than {MAX_NESTING} deep", text, match.start(), filename)
        elif token[0] in "})]":
            level -= 1
        elif token[0].isdigit():
            raise _located(f"an integer literal of {len(token)} digits is too long (at most {MAX_DIGITS})", text,
                           match.start(), filename)


def _located(message: str, text: str, offset: int, filename: str) -> TenzrError:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return TenzrError(message, ir.Location.file(filename, line, col))


def check_static_shapes(module: ir.Operation) -> None:
    """`check_static_signature` of every function of `module`."""
    for func in functions(module).values():
        check_static_signature(func)


def check_static_signature(func: ir.Operation) -> None:
    """Refuses, at the function, an argument or result of a dynamic shape (a shape-polymorphic
    JAX export's `tensor<?x3xf32>`): every shape here is known when the program is built."""
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    name = ir.StringAttr(func.attributes["sym_name"]).value
    for what, types in (("argument", ftype.inputs), ("result", ftype.results)):
        for i, t in enumerate(types):
            if isinstance(t, ir.ShapedType) and not (t.has_rank and t.has_static_shape):
                raise TenzrError(f"{what} {i} of '@{name}' has type {t}: dynamic shapes are not supported (export "
                                 "with concrete shapes)", func.location)


def parse_module(text: str, filename: str = "<stdin>") -> ir.Operation:
    """Parses `text` in the current context into a `builtin.module` operation.

    Top-level ops other than one module are wrapped in a module, as mlir-opt does. The
    wrapper opens on a blank line before the first op, else after the last type or
    attribute alias (which must stay outside it), else at the start of the first op's line
    (whose columns then shift): line numbers never change.
    """
    _check_parsable(text, filename)
    try:
        op = ir.Operation.parse(text, source_name=filename)
    except ir.MLIRError as e:
        if "single top-level operation" not in str(e):
            raise TenzrErrors(from_mlir_error(e, "cannot parse input")) from None
        op = None
    if op is not None and op.operation.name == "builtin.module":
        return op.operation
    lines = text.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith(_NOT_OPS)),
                 len(lines) - 1)
    aliases = [i for i in range(first) if lines[i].lstrip().startswith(("!", "#"))]
    blank = [i for i in range(aliases[-1] + 1 if aliases else 0, first) if not lines[i].strip()]
    if blank:  # no column moves
        lines[blank[0]] = "module {" + lines[blank[0]]
    elif aliases:
        lines[aliases[-1]] += " module {"
    else:
        lines[first] = "module {" + lines[first]
    try:
        return ir.Operation.parse("\n".join(lines) + "\n}", source_name=filename).operation
    except ir.MLIRError as e:
        raise TenzrErrors(from_mlir_error(e, "cannot parse input")) from None


def module_body(module: ir.Operation) -> ir.Block:
    return module.regions[0].blocks[0]


def _children(parent: ir.Operation) -> list[ir.Operation]:
    return [op.operation for region in parent.regions for block in region.blocks for op in block.operations]


def body_ops(func: ir.Operation) -> list[ir.Operation]:
    """The top-level ops of a function body, in order (nested regions are not entered)."""
    return _children(func)


def functions(module: ir.Operation) -> dict[str, ir.Operation]:
    """The module's `func.func` ops by symbol name."""
    return {f.attributes["sym_name"].value: f for f in _children(module) if f.name == "func.func"}


def _defining_op(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.Block):
        owner = owner.owner
    return owner.operation if owner is not None else None


def is_inside(op: ir.Operation | ir.OpView | None, ancestor: ir.Operation) -> bool:
    """Whether `op` is `ancestor` or nested in one of its regions."""
    current = op.operation if op is not None else None
    while current is not None:
        if current == ancestor:
            return True
        parent = current.parent
        current = parent.operation if parent is not None else None
    return False


def terminator(block: ir.Block) -> ir.Operation | None:
    """The last op of `block` (its terminator, in valid IR), or None when it is empty."""
    operations = block.operations
    return operations[len(operations) - 1].operation if len(operations) else None


def region_terminator(block: ir.Block) -> ir.Operation:
    """The terminator of a block of a region op, which valid IR always ends with one."""
    last = terminator(block)
    assert last is not None  # (a region op's blocks end with their terminator)
    return last


def captured_values(op: ir.Operation) -> list[ir.Value]:
    """Values defined outside `op` that ops in its regions use (empty for ops without
    regions), each once, in order of first use."""
    if not len(op.regions):
        return []
    found: dict[ir.Value, None] = {}

    def visit(inner: ir.Operation) -> ir.WalkResult:
        if inner != op:
            for v in inner.operands:
                if v not in found and not is_inside(_defining_op(v), op):
                    found[v] = None
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return list(found)


def ops_named(root: ir.Operation, names: Collection[str]) -> list[ir.Operation]:
    """Every op nested in `root` (regions included) whose name is in `names`, in program order."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in names:
            found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def replace_op(op: ir.Operation, values: Sequence[ir.Value]) -> None:
    """Redirects the uses of `op`'s results to `values` and erases it."""
    for result, value in zip(op.results, values, strict=True):
        result.replace_all_uses_with(value)
    op.erase()
