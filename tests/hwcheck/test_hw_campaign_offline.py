"""Campaign plumbing without a GPU: a fake GPU runs each kernel launch on the simulator.

The fake checks the launch (grid, arguments, shared memory); injected bit flips play a GPU that
disagrees, and the records must name exactly the flipped warp, lane and register."""

import io
import json
import os

import numpy as np
import pytest

from fake_gpu import FakeGpu
from hwcheck.arch import model_arch
from hwcheck.campaigns.acceptance import ACCEPTANCE, run_acceptance, run_one
from hwcheck.campaigns.campaign import (CASE_INPUTS, CASE_RECORDS, build_cases, case_id, run_campaign,
                                        summary_table)
from hwcheck.campaigns.campaign import GpuRunner
from hwcheck.errors import HwcheckError
from hwcheck.progress import Progress


def _quiet():
    return Progress(io.StringIO(), tty=False)


@pytest.mark.parametrize("instr", ["mma", "ldmatrix", "cvt"])
def test_every_case_matches_when_the_gpu_is_the_simulator(instr):
    cases = build_cases(instr)
    gpu = FakeGpu()
    results = run_campaign(cases, GpuRunner(gpu, cases), count=70, chunk=64, progress=_quiet())
    assert len(gpu.modules) == 1, "one module for all kernels of a campaign"
    assert [r.case for r in results] == cases
    for r in results:
        expected = 96 if instr == "cvt" else 70          # cvt: whole warps of 32 conversions
        assert r.count == expected and r.mismatched == 0 and not r.records, (r.case, r.mismatched)
        assert r.compared == r.case.warps(expected) * 32 * r.case.regs
    assert len(gpu.launches) == 2 * len(cases), "two chunks per case"


def _flip(target_kernel, chunk_index, warp, lane, reg, mask=0x1):
    """A corruption hook flipping ``mask`` in one register of one launch of one kernel."""
    calls = {"n": 0}

    def corrupt(name, out):
        if name != target_kernel:
            return
        if calls["n"] == chunk_index:
            view = out.reshape(-1, 32, 1) if out.ndim == 1 else out
            view[warp, lane, reg] ^= mask
        calls["n"] += 1
    return corrupt


def test_a_flipped_bit_is_reported_with_warp_lane_register_and_inputs():
    cases = build_cases("mma", shapes=["m16n8k16"], types=["bf16.f32"], classes=["ordinary", "ties"])
    gpu = FakeGpu(corrupt=_flip("hwcheck_mma_m16n8k16_bf16_f32", 3, warp=5, lane=7, reg=2, mask=0x80000000))
    results = run_campaign(cases, GpuRunner(gpu, cases), count=100, chunk=50, seed=7, progress=_quiet())
    ordinary, ties = results
    assert ordinary.mismatched == 0
    assert ties.mismatched == 1 and ties.bad_warps == 1 and len(ties.records) == 1
    rec = ties.records[0]
    assert (rec.warp, rec.lane, rec.register) == (50 + 5, 7, "d2")   # chunk 1 of ties starts at warp 50
    assert rec.actual == rec.expected ^ 0x80000000
    assert rec.instruction == "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
    (inputs,) = ties.failing_inputs
    assert inputs["warp"] == 55 and inputs["chunk"] == 1
    # The kept inputs are the ones the documented seed formula regenerates.
    a, b, c = ties.case.inputs(50, np.random.default_rng([7, case_id(ties.case), 1]))
    assert inputs["a"] == [[f"{int(v):08x}" for v in row] for row in a[5]]
    assert inputs["c"][7][2] == f"{int(c[5, 7, 2]):08x}"


def test_every_mismatch_is_counted_but_records_are_capped():
    def corrupt(name, out):
        out[...] ^= 1                                              # every register of every warp
    cases = build_cases("ldmatrix", variants=["x4.trans"])
    results = run_campaign(cases, GpuRunner(FakeGpu(corrupt=corrupt), cases), count=40, chunk=32,
                           progress=_quiet())
    (r,) = results
    assert r.mismatched == 40 * 32 * 4 and r.bad_warps == 40
    assert len(r.records) == CASE_RECORDS and len(r.failing_inputs) == CASE_INPUTS
    assert set(r.failing_inputs[0]) == {"warp", "chunk", "smem", "addrs"}
    assert len(r.failing_inputs[0]["smem"]) == 2 * 1024


def test_cvt_records_name_the_thread_as_warp_and_lane():
    cases = build_cases("cvt", types=["f16"], classes=["special"])
    gpu = FakeGpu(corrupt=_flip("hwcheck_cvt_f16x2", 1, warp=0, lane=31, reg=0, mask=0x10000))
    (r,) = run_campaign(cases, GpuRunner(gpu, cases), count=100, chunk=64, progress=_quiet())
    assert r.count == 128 and r.mismatched == 1
    rec = r.records[0]
    assert (rec.warp, rec.lane, rec.kind) == (2, 31, "f16x2")
    assert r.failing_inputs[0]["warp"] == 2 and len(r.failing_inputs[0]["a"]) == 32


def test_run_one_writes_a_complete_report(tmp_path):
    cases = build_cases("mma", shapes=["m16n8k8"], types=["f16.f16"], classes=["overflow"])
    gpu = FakeGpu(corrupt=_flip("hwcheck_mma_m16n8k8_f16_f16", 0, warp=1, lane=0, reg=1))
    path = tmp_path / "sub" / "r.json"
    out = run_one(gpu, cases, count=10, report=str(path), command="hwcheck campaign ...", progress=_quiet())
    assert (out.status, out.exit_status) == ("fail", 1)
    report = json.loads(path.read_text())
    for key in ("tool", "version", "command", "date", "host", "gpu", "status", "settings", "totals", "cases"):
        assert key in report, key
    for key in ("name", "driver_version", "runtime_version", "cupy_version", "arch", "nvrtc_version"):
        assert key in report["gpu"], key
    assert report["settings"]["simulator_arch"] == "sm90"
    assert report["totals"]["mismatched_registers"] == 1
    (case,) = report["cases"]
    rec = case["mismatches"][0]
    assert (rec["warp"], rec["lane"], rec["register"]) == (1, 0, "d1")
    assert rec["expected"].startswith("0x") and rec["expected_value"].startswith("[lo ")
    assert int(rec["expected"], 16) ^ int(rec["actual"], 16) == 1


def test_a_gpu_error_stops_the_campaign_but_keeps_finished_cases(tmp_path):
    class Failing(FakeGpu):
        def launch(self, module, name, *args, **kw):
            if len(self.launches) == 2:
                raise HwcheckError(f"hwcheck: kernel {name} failed on Fake: an illegal instruction")
            super().launch(module, name, *args, **kw)
    cases = build_cases("ldmatrix", variants=["x1", "x2", "x4"])
    path = tmp_path / "r.json"
    out = run_one(Failing(), cases, count=20, report=str(path), progress=_quiet())
    assert (out.status, out.exit_status) == ("error", 3) and "illegal" in out.error
    report = json.loads(path.read_text())
    assert report["status"] == "error" and len(report["cases"]) == 2 and report["totals"]["cases_planned"] == 3


def test_acceptance_writes_one_report_per_campaign_and_prints_the_summary_last(tmp_path):
    stream = io.StringIO()
    status = run_acceptance(FakeGpu(), out=str(tmp_path), scale=1e-9, stream=stream, only="campaigns")
    assert status == 0
    names = sorted(os.listdir(tmp_path))
    assert names == sorted(f"fake-gpu-warpsim-{name}.json" for name, *_ in ACCEPTANCE)
    for name in names:
        report = json.loads((tmp_path / name).read_text())
        assert report["status"] == "pass" and report["settings"]["invoked_as"].startswith("hwcheck")
        assert report["command"].startswith("hwcheck campaign --instr ")
    text = stream.getvalue().splitlines()
    assert text[-1] == "acceptance: PASS"
    assert any("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in line and " 256 " in line for line in text[-24:])


def test_summary_table_rows_and_totals():
    cases = build_cases("cvt", types=["bf16"], classes=["ties", "range"])
    results = run_campaign(cases, GpuRunner(FakeGpu(), cases), count=32, progress=_quiet())
    lines = summary_table(results).splitlines()
    assert lines[0].split()[:4] == ["instruction", "class", "count", "mismatches"]
    assert lines[1].split()[:5] == ["cvt", "bf16", "ties", "32", "0"]
    assert lines[-1] == f"cvt.rn.bf16x2.f32: 64 conversions, 0 mismatching registers, " \
                        f"{sum(r.wall_s for r in results):.1f} s"


def test_model_arch_and_bad_cases():
    assert model_arch("90") == "sm90" and model_arch("80") == "sm80"
    with pytest.raises(HwcheckError, match="compute capability 100; pass --arch"):
        model_arch("100")
    with pytest.raises(ValueError, match="--arch"):
        model_arch("90", "sm100")
    with pytest.raises(ValueError, match="--shapes: 'm16n8k32'"):
        build_cases("mma", shapes=["m16n8k32"])
    with pytest.raises(ValueError, match="--classes: 'ordinary' is not one of random-rows"):
        build_cases("ldmatrix", classes=["ordinary"])
    with pytest.raises(ValueError, match="--types: values repeat"):
        build_cases("cvt", types=["f16", "f16"])
    with pytest.raises(ValueError, match="--instr"):
        build_cases("wgmma")
    with pytest.raises(ValueError, match="count"):
        run_campaign(build_cases("cvt"), None, count=0)


def test_an_unwritable_report_is_an_error_but_the_results_remain(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cases = build_cases("cvt", types=["f16"], classes=["ties"])
    out = run_one(FakeGpu(), cases, count=64, report=str(blocker / "r.json"), progress=_quiet())
    assert (out.status, out.exit_status, out.report) == ("error", 3, None)
    assert "not written" in out.error and out.results[0].count == 64 and out.results[0].mismatched == 0


def test_evidence_classes_count_each_model_variant_against_the_gpu(tmp_path):
    """The fake GPU is the sm90 model: it agrees with sm90 and every neighbour of a parameter is ruled
    out by the class built for it (counts > 0), and the report lists them."""
    cases = build_cases("mma", shapes=["m16n8k16"], types=["bf16.f32", "f16.f16"],
                        classes=["frac-bits", "block", "floor"])
    path = str(tmp_path / "evidence.json")
    outcome = run_one(FakeGpu(), cases, count=40, chunk=32, report=path, progress=_quiet())
    assert outcome.status == "pass" and all(r.mismatched == 0 for r in outcome.results)
    by_case = {(r.case.label, r.case.cls): r.variants for r in outcome.results}
    assert by_case[("m16n8k16 bf16.f32", "floor")]["ez_f32=-132"] > 0
    assert by_case[("m16n8k16 bf16.f32", "floor")]["ez_f32=-134"] > 0
    assert by_case[("m16n8k16 bf16.f32", "floor")]["ez_f16=-20"] == 0   # f32 output: EZ_f16 cannot act
    assert by_case[("m16n8k16 f16.f16", "floor")]["ez_f16=-22"] > 0
    assert by_case[("m16n8k16 f16.f16", "block")]["block=8"] > 0
    assert by_case[("m16n8k16 bf16.f32", "frac-bits")]["frac_bits=24"] > 0
    with open(path) as f:
        report = json.load(f)
    variants = report["model_variants"]
    assert variants["simulator_arch"] == "sm90" and variants["not_ruled_out"] == []
    assert sorted(variants["ruled_out"]) == sorted(variants["mismatched_registers"])
    assert "model variant ez_f16=-22:" in outcome.table and "(ruled out)" in outcome.table
    assert "variant_mismatched_registers" in report["cases"][0]
