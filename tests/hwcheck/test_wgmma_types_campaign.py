"""hwcheck.campaigns.wgmma_types without a GPU: a saved run that equals warpsim's model compares clean, one changed
bit is counted where it is, and a run whose inputs were other bytes (another seed) is refused rather than compared."""

import json

import numpy as np
import pytest

from hwcheck.campaigns.wgmma_types import CLASSES, compare, expected, inputs, load, main


def _saved(tmp_path, kernels=("e4m3_f16", "u8_s8_s32"), ctas=8, seed=3, flip=None):
    flat = {}
    for k in kernels:
        ys, digests = [], []
        for cls in CLASSES:
            x, c, digest = inputs(k, cls, ctas, seed)
            ys.append(expected(k, x, c))
            digests.append(digest)
        if flip == k:
            ys[2][17] ^= 0x10
        flat[f"{k}.y"], flat[f"{k}.digests"] = np.stack(ys), np.array(digests)
    path = tmp_path / "run.npz"
    np.savez_compressed(path, seed=seed, ctas=ctas, **flat)
    return str(path)


def test_a_run_equal_to_the_model_compares_clean_and_one_bit_is_found(tmp_path):
    clean = compare(load([_saved(tmp_path)]))
    assert all(r[1] == 0 for rows in clean.values() for r in rows.values())
    report = tmp_path / "r.json"
    assert main(["--compare", _saved(tmp_path, flip="u8_s8_s32"), "--report", str(report)]) == 1
    got = json.loads(report.read_text())
    assert got["mismatched"] == 1 and got["kernels"]["u8_s8_s32"]["narrow"][1] == 1
    assert got["kernels"]["u8_s8_s32"]["narrow"][2][0][0] == 17


def test_inputs_of_another_seed_are_refused(tmp_path):
    data = load([_saved(tmp_path)])
    data["e4m3_f16"]["seed"] = 4
    with pytest.raises(ValueError, match=r"e4m3_f16 uniform: the inputs' digest differs from the GPU run's"):
        compare(data)


def test_compare_of_a_missing_file_is_one_line(tmp_path, capsys):
    assert main(["--compare", str(tmp_path / "none.npz")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wgmma_types --compare: ") and "none.npz" in err and err.count("\n") == 1


@pytest.mark.parametrize("kernel", ["tf32_f32", "e4m3_f32", "e5m2_f32"])
def test_the_sparse_class_tells_the_zero_exponents_apart(kernel):
    """The class made to pin ``zero_exp``: on its inputs a zero at exponent -126 and a zero that takes no part in the
    alignment give different bits, so the GPU's run decides between them (the other classes do not, for fp8). With
    f16 accumulators no input can tell: the smallest f16 is far above 2**-126 times any fp8 value."""
    from warpsim.isa.dot_add import NO_PART, DotModel, model_for
    x, c, _ = inputs(kernel, "sparse", 16, 0)
    m = model_for(kernel.split("_")[0])
    at_126 = expected(kernel, x, c, DotModel("-126", m.frac_bits, m.out_frac, -126, ""))
    apart = expected(kernel, x, c, DotModel("apart", m.frac_bits, m.out_frac, NO_PART, ""))
    assert (at_126 != apart).sum() > 40


def test_a_run_saved_before_the_sparse_class_still_compares(tmp_path):
    path = _saved(tmp_path, kernels=("s8_s32",))
    with np.load(path) as z:
        old = {k: z[k] for k in z.files}
    old["s8_s32.y"], old["s8_s32.digests"] = old["s8_s32.y"][:4], old["s8_s32.digests"][:4]
    np.savez_compressed(path, **old)
    rows = compare(load([path]))["s8_s32"]
    assert list(rows) == list(CLASSES[:4]) and all(r[1] == 0 for r in rows.values())
