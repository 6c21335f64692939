"""Every op lowered to StableHLO, compiled by IREE for CPU and compared with NumPy; and
batched (tenzr-batch: all of its operands carrying the batch, then the first alone) against
the op run on each batch element, from the same module: the tenzr ops and the StableHLO ops
tenzr-grad and tenzr-jvp emit. The batching table has an entry for every op the passes can
meet."""

import pytest
from harness import check_batch, check_forward, compile_batch_rows
from op_table import ROWS, STABLEHLO_ROWS

from tenzr.dialect.ops import OPS
from tenzr.passes.rules import BATCH_RULES, LOOPED, VJP_RULES


@pytest.fixture(scope="module")
def program():
    return compile_batch_rows(ROWS)


@pytest.mark.parametrize("index", range(len(ROWS)), ids=[r.name for r in ROWS])
def test_forward(program, index):
    check_forward(program, index, ROWS[index])


@pytest.mark.parametrize("index", range(len(ROWS)), ids=[r.name for r in ROWS])
def test_batch(program, index):
    check_batch(program, index, ROWS[index])


@pytest.fixture(scope="module")
def stablehlo_program():
    return compile_batch_rows(STABLEHLO_ROWS)


@pytest.mark.parametrize("index", range(len(STABLEHLO_ROWS)), ids=[r.name for r in STABLEHLO_ROWS])
def test_stablehlo_batch(stablehlo_program, index):
    check_batch(stablehlo_program, index, STABLEHLO_ROWS[index])


def test_every_op_has_a_batching_entry():
    assert set(OPS) | set(VJP_RULES) - {"func.call"} <= set(BATCH_RULES)
    vectorized = {name for name, rule in BATCH_RULES.items() if rule is not LOOPED}
    # The common ones batch without a loop.
    for name in ("tenzr.add", "tenzr.exp", "tenzr.matmul", "tenzr.reduce_sum", "tenzr.convolution",
                 "stablehlo.dot_general", "stablehlo.reduce", "stablehlo.multiply", "stablehlo.broadcast_in_dim"):
        assert name in vectorized, name
