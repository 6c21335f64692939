"""Every VJP rule against central finite differences, in float64 on CPU."""

import pytest
from harness import check_vjp, compile_rows
from op_table import GRAD_ROWS


@pytest.fixture(scope="module")
def program():
    return compile_rows(GRAD_ROWS, grad=True)


@pytest.mark.parametrize("index", range(len(GRAD_ROWS)), ids=[r.name for r in GRAD_ROWS])
def test_vjp(program, index):
    check_vjp(program, index, GRAD_ROWS[index])
