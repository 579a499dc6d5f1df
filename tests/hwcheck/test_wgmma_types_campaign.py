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
    at_126 = expected(kernel, x, c, DotModel("-126", m.frac_bits, m.out_frac, -126, m.min_quantum, ""))
    apart = expected(kernel, x, c, DotModel("apart", m.frac_bits, m.out_frac, NO_PART, m.min_quantum, ""))
    assert (at_126 != apart).sum() > 40


def test_a_run_saved_before_the_sparse_class_still_compares(tmp_path):
    path = _saved(tmp_path, kernels=("s8_s32",))
    with np.load(path) as z:
        old = {k: z[k] for k in z.files}
    old["s8_s32.y"], old["s8_s32.digests"] = old["s8_s32.y"][:4], old["s8_s32.digests"][:4]
    np.savez_compressed(path, **old)
    rows = compare(load([path]))["s8_s32"]
    assert list(rows) == list(CLASSES[:4]) and all(r[1] == 0 for r in rows.values())


# --- the streamed campaign (--per-type): chunks compared in the workers as they run ---------------------------------

from hwcheck.campaigns.wgmma_types import (KERNELS, check_chunk, input_types, neighbours, plan,  # noqa: E402
                                           sampled, summarise)


def test_the_plan_gives_every_input_type_its_instructions():
    tasks = plan(1000, 64)
    per_type = {}
    for kernel, cls, part, ctas in tasks:
        assert cls == CLASSES[part % len(CLASSES)] and 0 < ctas <= 64
        for t in input_types(kernel):
            per_type[t] = per_type.get(t, 0) + ctas
    assert set(per_type) == {"tf32", "e4m3", "e5m2", "s8", "u8"}
    assert all(n >= 1000 for n in per_type.values()), per_type
    assert {k for k, *_ in tasks} == set(KERNELS)


def _model_gpu(flip=None):
    def run(kernel, x, c):
        y = expected(kernel, x, c)
        if flip is not None:
            y[flip] ^= 1
        return y
    return run


def test_a_chunk_equal_to_the_model_has_no_mismatch_and_a_flipped_bit_is_found():
    task = ("e4m3_f32", "narrow", 2, 8)
    clean = check_chunk(task, 5, _model_gpu())
    assert clean["mismatched"] == 0 and clean["outputs"] == 8 * 128 * 8 and clean["first"] == []
    bad = check_chunk(task, 5, _model_gpu(flip=77))
    assert bad["mismatched"] == 1 and bad["first"][0][:2] == [2, 77]
    total = summarise([clean, bad], 8, 5)
    assert total["mismatched"] == 1 and total["types"]["e4m3"]["instructions"] == 16


@pytest.mark.parametrize("kernel", ["tf32_f32", "e4m3_f32", "e5m2_f16"])
def test_the_classes_rule_out_every_neighbour_of_the_model(kernel):
    # a GPU that is the model: each neighbour (a parameter moved by one, MMA-Sim's zero) must differ somewhere on the
    # sampled chunks of one round of classes, or the campaign could not tell it from the model
    results = [check_chunk((kernel, cls, j, 64), 0, _model_gpu()) for j, cls in enumerate(CLASSES)]
    assert all(sampled(j) for j in range(len(CLASSES)))
    near = summarise(results, 64, 0)["neighbours"][KERNELS[kernel][0]]
    assert set(near) == set(neighbours(KERNELS[kernel][0]))
    if KERNELS[kernel][2] == "f16":
        # an f16 result is rounded from the sum (out_frac is f32's only), and the smallest f16 lies far above 2**-126
        # times any fp8 value, so no input can tell where a zero sits (conformance/h100/wgmma-types-second-compare)
        assert near["zero_exp=-126"]["mismatched"] == 0
        near = {n: v for n, v in near.items() if not n.startswith("out_frac") and n != "zero_exp=-126"}
    assert all(v["mismatched"] > 0 for v in near.values()), near


@pytest.mark.parametrize("args, named", [
    (["--per-type", "10"], "--per-type needs --module (or --simulate-only) and --report"),
    (["--per-type", "0", "--module", __file__, "--report", "r.json"], "must be positive"),
    (["--per-type", "10", "--module", "no-such.cubin", "--report", "r.json"], "--module: no such file: no-such.cubin"),
    (["--per-type", "10", "--module", __file__, "--report", "r.json", "--kernels", "f64_f64"], "--kernels: unknown f64_f64"),
])
def test_the_stream_refuses_bad_arguments_in_one_line(capsys, tmp_path, args, named):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert named in err and err.count("\n") == 1 and not (tmp_path / "r.json").exists()


def test_the_stream_runs_whole_with_the_model_in_place_of_the_gpu(tmp_path, capsys):
    report = tmp_path / "stream.json"
    assert main(["--per-type", "24", "--chunk", "8", "--workers", "2", "--simulate-only", "--report", str(report),
                 "--kernels", "e4m3_e5m2_f32,s8_s32"]) == 0
    data = json.loads(report.read_text())
    assert data["status"] == "pass" and data["simulate_only"] and data["mismatched"] == 0
    assert {t: v["instructions"] for t, v in data["types"].items()} == {"e4m3": 24, "e5m2": 24, "s8": 24}
    assert set(data["neighbours"]) == {"e4m3"}
    out = capsys.readouterr().out
    assert "wgmma: 10/10 chunks, 48 instructions, 0 words differ" in out and "e5m2: 24 instructions" in out


def test_hwcheck_campaign_instr_wgmma_streams_it_and_names_what_it_lacks(tmp_path, capsys):
    from hwcheck.cli.main import main as hwcheck
    report = tmp_path / "w.json"
    assert hwcheck(["campaign", "--instr", "wgmma", "--count", "5", "--chunk", "32", "--workers", "1",
                    "--simulate-only", "--report", str(report)]) == 0
    data = json.loads(report.read_text())
    assert data["command"].startswith("hwcheck campaign --instr wgmma --count 5")
    assert all(v["instructions"] >= 5 for v in data["types"].values()) and len(data["types"]) == 5
    capsys.readouterr()
    assert hwcheck(["campaign", "--instr", "wgmma", "--count", "5"]) == 2
    assert hwcheck(["campaign", "--instr", "wgmma", "--count", "5", "--report", "r.json", "--types", "f16.f32"]) == 2
    assert hwcheck(["campaign", "--instr", "mma", "--count", "5", "--module", "x.cubin"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["hwcheck campaign --instr wgmma: --count, --report and --module (or --simulate-only) are required",
                   "hwcheck campaign: --types does not apply to --instr wgmma",
                   "hwcheck campaign: --module applies to --instr wgmma only"]


def test_a_stream_stopped_by_sigterm_reports_the_chunks_it_finished(tmp_path):
    """A device call's time limit sends SIGTERM: the report still comes, marked partial, with what was compared."""
    import os
    import signal
    import subprocess
    import sys
    report = tmp_path / "cut.json"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.Popen([sys.executable, "-m", "hwcheck.campaigns.wgmma_types", "--per-type", "100000", "--chunk",
                             "16", "--workers", "1", "--simulate-only", "--kernels", "s8_s32", "--report", str(report)],
                            cwd=root, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": root})
    line = proc.stdout.readline()                  # the first progress line: 20 chunks are done
    assert line.startswith("wgmma: 20/"), line
    proc.send_signal(signal.SIGTERM)
    rest = proc.communicate(timeout=60)[0]
    assert proc.returncode == 1 and "(stopped before the end)" in rest
    data = json.loads(report.read_text())
    assert data["status"] == "partial" and not data["complete"] and data["mismatched"] == 0
    assert 320 <= data["instructions"] < 100000
