"""Every VJP rule against central finite differences, in float64 on CPU: the tenzr ops'
rules, and those of the StableHLO ops tenzr-grad meets again when it differentiates its own
output."""

import pytest
from harness import check_vjp, compile_rows
from op_table import GRAD_ROWS, STABLEHLO_ROWS


@pytest.fixture(scope="module")
def program():
    return compile_rows(GRAD_ROWS, grad=True)


@pytest.mark.parametrize("index", range(len(GRAD_ROWS)), ids=[r.name for r in GRAD_ROWS])
def test_vjp(program, index):
    check_vjp(program, index, GRAD_ROWS[index])


@pytest.fixture(scope="module")
def stablehlo_program():
    return compile_rows(STABLEHLO_ROWS, grad=True)


@pytest.mark.parametrize("index", range(len(STABLEHLO_ROWS)), ids=[r.name for r in STABLEHLO_ROWS])
def test_stablehlo_vjp(stablehlo_program, index):
    check_vjp(stablehlo_program, index, STABLEHLO_ROWS[index])
