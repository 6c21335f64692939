"""Every JVP against central finite differences and against the VJP (<J v, u> == <v, Jᵀ u>),
in float64 on CPU: the tenzr ops, and the StableHLO ops tenzr-jvp meets in tenzr-grad's
output or in imports. The table of JVP rules matches the table of VJP rules."""

import pytest
from harness import check_jvp, compile_jvp_rows
from op_table import GRAD_ROWS, STABLEHLO_ROWS

from tenzr.passes.rules import JVP_RULES, NO_DERIVATIVE, TRANSPOSED, VJP_RULES


@pytest.fixture(scope="module")
def program():
    return compile_jvp_rows(GRAD_ROWS)


@pytest.mark.parametrize("index", range(len(GRAD_ROWS)), ids=[r.name for r in GRAD_ROWS])
def test_jvp(program, index):
    check_jvp(program, index, GRAD_ROWS[index])


@pytest.fixture(scope="module")
def stablehlo_program():
    return compile_jvp_rows(STABLEHLO_ROWS)


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
