"""Every VJP and JVP rule, in float64 on CPU: the tenzr ops' rules, and those of the
StableHLO ops tenzr-grad and tenzr-jvp meet again in their own output (or in imports).
VJPs against central finite differences; JVPs against central differences and against
the VJP (<J v, u> == <v, Jᵀ u>), from one module per table; every tenzr op's second
derivatives (the gradient of its VJP); and the JVP table against the VJP table."""

from collections import Counter

import pytest
from harness import (
    as_f64,
    check_jvp,
    check_second_order,
    check_vjp,
    compile_jvp_rows,
    compile_second_order_rows,
    spec_of_array,
    wrt_of,
)
from op_table import GRAD_ROWS, STABLEHLO_ROWS

from tenzr.dialect import make_context
from tenzr.dialect.functions import build_function, new_module
from tenzr.passes.rules import JVP_RULES, NO_DERIVATIVE, TRANSPOSED, VJP_RULES
from tenzr.passes.tenzr_grad import differentiate


@pytest.fixture(scope="module")
def program():
    return compile_jvp_rows(GRAD_ROWS)


@pytest.mark.parametrize("index", range(len(GRAD_ROWS)), ids=[r.name for r in GRAD_ROWS])
def test_vjp(program, index):
    check_vjp(program, index, GRAD_ROWS[index])


@pytest.mark.parametrize("index", range(len(GRAD_ROWS)), ids=[r.name for r in GRAD_ROWS])
def test_jvp(program, index):
    check_jvp(program, index, GRAD_ROWS[index])


@pytest.fixture(scope="module")
def stablehlo_program():
    return compile_jvp_rows(STABLEHLO_ROWS)


@pytest.mark.parametrize("index", range(len(STABLEHLO_ROWS)), ids=[r.name for r in STABLEHLO_ROWS])
def test_stablehlo_vjp(stablehlo_program, index):
    check_vjp(stablehlo_program, index, STABLEHLO_ROWS[index])


@pytest.mark.parametrize("index", range(len(STABLEHLO_ROWS)), ids=[r.name for r in STABLEHLO_ROWS])
def test_stablehlo_jvp(stablehlo_program, index):
    check_jvp(stablehlo_program, index, STABLEHLO_ROWS[index])


def test_every_op_with_a_vjp_rule_has_a_jvp_entry():
    assert set(JVP_RULES) == set(VJP_RULES)
    for name, rule in VJP_RULES.items():
        assert (JVP_RULES[name] is NO_DERIVATIVE) == (rule is NO_DERIVATIVE), name


def test_region_ops_have_their_own_jvp_rules():
    # A region op's VJP rule works through the driver's region API: it cannot be
    # transposed like a rule that only builds StableHLO.
    region_ops = {"tenzr.while", "tenzr.case", "stablehlo.while", "stablehlo.case", "stablehlo.if"}
    assert region_ops <= set(JVP_RULES)
    for name in region_ops:
        assert JVP_RULES[name] is not TRANSPOSED and JVP_RULES[name] is not NO_DERIVATIVE, name


CHUNK = 30  # rows per second-order module (one compile each, so a failure stays local)
_second_order: dict[int, object] = {}


def _second_order_program(index: int):
    chunk = index // CHUNK
    if chunk not in _second_order:
        _second_order[chunk] = compile_second_order_rows(GRAD_ROWS[chunk * CHUNK:(chunk + 1) * CHUNK])
    return _second_order[chunk]


@pytest.mark.parametrize("index", range(len(GRAD_ROWS)), ids=[r.name for r in GRAD_ROWS])
def test_second_derivatives(index):
    check_second_order(_second_order_program(index), index % CHUNK, GRAD_ROWS[index])


@pytest.mark.parametrize("rows", [GRAD_ROWS, STABLEHLO_ROWS], ids=["tenzr", "stablehlo"])
def test_rules_leave_no_dead_code(rows):
    """In straight-line code tenzr-grad removes dead code only where its sweep dropped a
    cotangent, so every rule must use all it builds. For each row's VJP, for each
    differentiable operand alone and for all of them, and for that VJP differentiated again:
    a full dead-code pass over the result finds nothing left to erase."""
    from tenzr.dialect.context import functions
    from tenzr.passes.regions import dce_everywhere

    left: list[str] = []
    with make_context():
        module = new_module()
        for i, row in enumerate(rows):
            inputs = [as_f64(a) for a in row.inputs]
            build_function(module, f"r{i}", [spec_of_array(a) for a in inputs], row.build)
            everything = wrt_of(row, inputs)
            for wrt in {everything, *((k,) for k in everything)}:
                first = differentiate(module, f"r{i}", wrt, "vjp")
                second = differentiate(module, f"r{i}_vjp", wrt, "vjp")
                for order, derived in ((1, first), (2, second)):
                    before = _op_names(derived)
                    dce_everywhere(derived)
                    if before != _op_names(derived):
                        left.append(f"{row.name}, wrt {wrt}, order {order}: {before - _op_names(derived)}")
                for derived in (second, first):
                    derived.erase()
            functions(module)[f"r{i}"].erase()
    assert not left, "\n".join(left)


def _op_names(func) -> Counter:
    from tenzr.dialect.ir_imports import ir

    names: Counter = Counter()

    def visit(op):
        names[op.name] += 1
        return ir.WalkResult.ADVANCE

    func.walk(visit)
    return names
