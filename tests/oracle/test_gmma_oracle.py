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


def test_the_k8_and_k32_atoms_have_their_names_and_instructions():
    """The K-major-only atoms are named as CuTe names them (``_TN``) and issue the PTX form the isa models."""
    from warpsim.cute import gmma_op
    op = gmma_op("SM90_64x128x32_F16E4M3E5M2_RS_TN")
    assert (op.name, op.Shape_MNK, op.ValTypeA, op.ValTypeB) == ("SM90_64x128x32_F16E4M3E5M2_RS_TN", (64, 128, 32),
                                                                  "e4m3", "e5m2")
    assert op.ptx == "wgmma.mma_async.sync.aligned.m64n128k32.f16.e4m3.e5m2"
    assert gmma_op("SM90_64x8x8_F32TF32TF32_SS_TN").ptx == "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32"
    for bad in ("SM90_64x64x32_F32E4M3E4M3_SS", "SM90_64x64x16_F32E4M3E4M3_SS_TN", "SM90_64x64x16_F32F16F16_SS_TN"):
        with pytest.raises(ValueError, match="is not an SM90_64xNxK_<types>_<SS|RS>"):
            gmma_op(bad)
    with pytest.raises(ValueError, match=r"A from registers, and types other than 16-bit: K"):
        gmma_op("SM90_64x64x32_S32S8S8_SS_TN", "MN", "K")
