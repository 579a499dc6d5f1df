"""warpsim's SM90 GMMA atoms against real CuTe: every atom's ThrID, Shape_MNK and A, B and C layouts (text and
values), for N in 8, 24, 64, 128, 256, the three type combinations, SS and RS, K- and MN-major."""

import pytest

import gmma_cases
from test_layout_oracle import NAMESPACE, check_against, evaluate

pytestmark = pytest.mark.oracle

CASES = gmma_cases.cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_gmma_atom_matches_cute(cute_oracle, case):
    record = cute_oracle.static.get(case.id)
    assert record is not None, f"{case.id}: the oracle binary did not print this case"
    check_against(record, evaluate(case.py), f"{case.id} ({case.py})")


def test_the_namespace_has_the_gmma_names():
    assert {"gmma_op", "GMMA_OPS", "make_tiled_mma"} <= set(NAMESPACE)
