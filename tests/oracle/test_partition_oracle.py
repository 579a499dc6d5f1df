"""warpsim's ``local_tile`` / ``local_partition`` against real CuTe, case by case and thread by thread.

For each case of ``partition_cases.py`` CuTe (compiled by nvcc) printed the resulting tensor's
layout and every element's offset from the start of the tensor it was cut from. warpsim must
print the same layout and give the same offsets: element offsets of memory tensors (byte
address / element size, the buffer at address 0) and register slots of fragments. The
``local_partition`` cases are also run with the whole thread range as one lane vector, whose
per-lane addresses must be CuTe's as well.
"""

import numpy as np
import pytest

import warpsim.cute as cute
from partition_cases import CASES
from tv_build import ev, first_difference

pytestmark = pytest.mark.oracle

NAMESPACE = {name: getattr(cute, name) for name in cute.__all__}


def offsets(tensor):
    """Element offsets in the tensor's 1-D order (``int64[size]``, or ``[lanes, size]``)."""
    table = tensor.address_table()
    return table if tensor.space == "rmem" else table // tensor.engine.element_bytes


def results(case):
    """warpsim's tensors for ``case``: one for local_tile, one per thread for local_partition."""
    args = [eval(a, dict(NAMESPACE)) for a in case.py_args()]   # texts come from partition_cases.py
    if case.op == "local_tile":
        return [cute.local_tile(ev(case.tensor), *args)]
    layout, *proj = args
    return [cute.local_partition(ev(case.tensor), layout, i, *proj) for i in range(case.threads)]


def test_corpus_covers_the_brief():
    ids = " ".join(CASES)
    for kind in ("gmem_row", "gmem_3d", "dyn_", "seed_sK", "frag", "proj_"):
        assert f"local_tile/{kind}" in ids and f"local_partition/{kind}" in ids, f"no {kind} case for both"
    assert "local_tile/gmem_row_flat_index" in ids and "local_tile/seed_sK_dynamic" in ids


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_partition_case(case_id, cute_oracle):
    case = CASES[case_id]
    record = cute_oracle.static.get(case_id)
    assert record is not None, f"{case_id}: the oracle binary did not print this case"
    items = record["items"]
    got = results(case)
    assert len(got) == len(items), f"{case_id}: CuTe made {len(items)} tensors, warpsim {len(got)}"
    errors = []
    for i, (want, tensor) in enumerate(zip(items, got)):
        where = f"thread {i}" if case.op == "local_partition" else "tile"
        if want["text"] != str(tensor.layout):
            errors.append(f"{where}: layout: CuTe {want['text']!r}, warpsim {str(tensor.layout)!r}")
        diff = first_difference(want["values"], offsets(tensor))
        if diff:
            errors.append(f"{where}: element offsets: {diff}")
    if case.op == "local_partition":
        args = [eval(a, dict(NAMESPACE)) for a in case.py_args()]
        lanes = np.arange(case.threads, dtype=np.int64)
        vec = cute.local_partition(ev(case.tensor), args[0], lanes, *args[1:])
        diff = first_difference([w["values"] for w in items], offsets(vec))
        if diff:
            errors.append(f"lane vector 0..{case.threads - 1}: element offsets: {diff}")
        for i in (0, case.threads - 1):
            if vec.lane(i).layout != got[i].layout or str(vec.lane(i)) != str(got[i]):
                errors.append(f"lane vector: lane {i} is {vec.lane(i)}, the one-thread tensor {got[i]}")
    assert not errors, f"{case_id}: {len(errors)} mismatches with CuTe:\n  " + "\n  ".join(errors[:20])
