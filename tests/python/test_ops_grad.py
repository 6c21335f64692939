"""Every VJP rule against central finite differences, in float64 on CPU: the tenzr ops'
rules, those of the StableHLO ops tenzr-grad meets again when it differentiates its own
output (or imports), and every tenzr op's second derivatives (the gradient of its VJP)."""

import pytest
from harness import check_second_order, check_vjp, compile_rows, compile_second_order_rows
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
