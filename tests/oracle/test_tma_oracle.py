"""warpsim's make_tma_copy against real CuTe: the box's basis, the TiledCopy's layouts and the arguments CuTe gives
cuTensorMapEncodeTiled (tests/oracle/tma_cases.py), and the GMMA shared-memory atoms."""

import pytest

import tma_cases
from test_layout_oracle import NAMESPACE, check_against, evaluate

pytestmark = pytest.mark.oracle

CASES = tma_cases.cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_tma_copy_matches_cute(cute_oracle, case):
    record = cute_oracle.static.get(case.id)
    assert record is not None, f"{case.id}: the oracle binary did not print this case"
    result = evaluate(case.py)
    if isinstance(result, str):                       # the encode line
        assert "error" not in record, f"{case.id}: CuTe reported: {record['error']}"
        assert result == record["text"], f"{case.id}: cuTensorMapEncodeTiled's arguments differ\n  CuTe:    " \
                                         f"{record['text']}\n  warpsim: {result}"
    else:
        check_against(record, result, f"{case.id} ({case.py})")


def test_the_namespace_has_the_tma_names():
    assert {"make_tma_copy", "SM90_TMA_LOAD", "SM90_TMA_LOAD_MULTICAST", "SM90_TMA_STORE", "SM90_TMA_REDUCE_ADD",
            "gmma_smem_atom"} <= set(NAMESPACE)
