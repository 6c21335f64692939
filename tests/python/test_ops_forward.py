"""Every op lowered to StableHLO, compiled by IREE for CPU, and compared with NumPy."""

import pytest
from harness import check_forward, compile_rows
from op_table import ROWS


@pytest.fixture(scope="module")
def program():
    return compile_rows(ROWS, grad=False)


@pytest.mark.parametrize("index", range(len(ROWS)), ids=[r.name for r in ROWS])
def test_forward(program, index):
    check_forward(program, index, ROWS[index])
