"""warpsim.cute against real CuTe C++: printed text and values, case by case."""

import numpy as np
import pytest

import gen_cases
import warpsim.cute as cute
from warpsim.cute import cute_str, is_layout, layout_table

pytestmark = pytest.mark.oracle

NAMESPACE = {name: getattr(cute, name) for name in cute.__all__}
CASES = gen_cases.all_cases()


def evaluate(py):
    return eval(py, dict(NAMESPACE))   # expressions come from gen_cases.py, not from users


def values_of(result):
    if is_layout(result):
        return layout_table(result)
    if isinstance(result, tuple) and len(result) == 2 and is_layout(result[0]):
        return layout_table(result[0])
    return None


def check_against(record, result, label):
    """Assert warpsim's result equals CuTe's record; the message names the case and the difference."""
    assert "error" not in record, f"{label}: CuTe reported: {record['error']}"
    text = cute_str(result)
    assert text == record["text"], f"{label}: printed text differs\n  CuTe:    {record['text']}\n  warpsim: {text}"
    if "values" in record:
        got = values_of(result)
        assert got is not None, f"{label}: CuTe gives values but warpsim's result is not a layout: {text}"
        want = np.asarray(record["values"], dtype=np.int64)
        if got.shape != want.shape or not np.array_equal(got, want):
            n = min(len(got), len(want))
            bad = np.nonzero(got[:n] != want[:n])[0]
            where = f"first difference at index {bad[0]}: CuTe {want[bad[0]]}, warpsim {got[bad[0]]}" if len(bad) else ""
            pytest.fail(f"{label}: values differ (CuTe {len(want)} values, warpsim {len(got)}; "
                        f"{len(bad)} of {n} differ) {where}\n  layout: {text}")


def test_corpus_size():
    ops = {c.id.split("/")[1] for c in CASES}
    assert len(CASES) >= 200
    for op in ["composition", "complement", "right_inverse", "left_inverse", "logical_divide",
               "zipped_divide", "tiled_divide", "flat_divide", "logical_product", "blocked_product",
               "raked_product", "tile_to_shape", "coalesce", "filter", "swizzle", "swizzle_slice",
               "make_ordered_layout", "make_fragment_like", "max_common", "recast", "slice"]:
        assert op in ops, f"the oracle corpus has no {op} case"


def test_every_case_ran(cute_oracle):
    missing = [c.id for c in CASES if c.id not in cute_oracle.static]
    assert not missing, f"cases compiled but not printed by the oracle: {missing[:10]}"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case(case, cute_oracle):
    record = cute_oracle.static[case.id]
    label = f"{case.id}\n  C++:    {case.cpp}\n  Python: {case.py}"
    check_against(record, evaluate(case.py), label)
