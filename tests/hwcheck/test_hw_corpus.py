"""hwcheck's corpus set (``hwcheck.runs.ptx_examples.CORPUS_EXAMPLES``, ``hwcheck acceptance --only corpus``) without a
GPU: it holds every launch of every corpus file (``tests/corpus/manifest.py``) that the simulator runs, its
arguments match each kernel's parameters, its jobs pass with the simulator standing in for the GPU, and the
acceptance command writes its own report. The device's report, once committed
(``conformance/<gpu>/<gpu>-corpus-programs.json``, from an H100 or H200), must be whole and sound; until then that
test is an expected failure naming the command."""

import glob
import json
import os

import pytest

from hwcheck.cli.main import main
from hwcheck.runs.ptx_examples import CORPUS_EXAMPLES, ROOT, ptx_jobs
from hwcheck.runs.ptx_run import SimulatorAsGpu, check_ptx
from warpsim.frontends.args import parse_arg
from warpsim.frontends.kernel import entry_params, find_entry

REPORTS = os.path.join(ROOT, "conformance", "*", "*-corpus-programs.json")
SEEDS = 10
GPU_COMMAND = (f"PYTHONPATH=$PWD python -m hwcheck acceptance --out conformance/GPU --only corpus --seeds {SEEDS} "
               "--workers 8 (or hwcheck/gpu_pending.sh OUT issue26), on an H100 or H200")
SMALL = [e for e in CORPUS_EXAMPLES if e[0].endswith(("triton_vector_add_sm90.ptx", "numba_xorshift_sm80.ptx"))]


@pytest.fixture(scope="module")
def manifest():
    import importlib
    import sys
    folder = os.path.join(ROOT, "tests", "corpus")
    sys.path.insert(0, folder)
    try:
        return importlib.import_module("manifest")
    finally:
        sys.path.remove(folder)


def test_the_set_is_every_launch_the_simulator_runs(manifest):
    want = [(os.path.relpath(e.path, ROOT), launch.kernel) for e in manifest.CORPUS if not manifest.known_failure(e)
            for launch in e.launches]
    assert [(e[0], e[1]) for e in CORPUS_EXAMPLES] == want
    assert len(want) >= 15 and {os.path.basename(e[0]).split("_")[0] for e in CORPUS_EXAMPLES} == {
        "nvcc", "dsl", "triton", "numba"}


def test_arguments_match_each_kernels_parameters():
    for source, kernel, _grid, _block, _smem, args in CORPUS_EXAMPLES:
        with open(os.path.join(ROOT, source), encoding="utf-8") as f:
            entries = entry_params(f.read())
        params = entries[find_entry(entries, kernel)]
        specs = dict(parse_arg(a) for a in args)
        assert list(specs) == [str(i) for i in range(len(params))], f"{source} {kernel}"
        for param, spec in zip(params, specs.values()):
            if isinstance(spec, tuple) or hasattr(spec, "shape"):         # an array: a pointer or a DSL tensor
                assert param.ptx_type in ("u64", "b64", "b8"), f"{source} {kernel} {param.name}"


def test_small_jobs_pass_with_the_simulator_as_gpu():
    """Two small files (Triton sm_90 with its scratch pointers, Numba's expanded arrays) through the whole check:
    buffers, register traces and shared memory, 2 seeds."""
    assert len(SMALL) == 2
    runs, status, error, code = check_ptx(SimulatorAsGpu(), ptx_jobs(SMALL), seeds=2, timing=False)
    assert (status, error, code) == ("pass", None, 0)
    for run in runs:
        assert len(run.seeds) == 2 and all(s.records > 0 and s.global_elements > 0 for s in run.seeds)


def test_acceptance_only_corpus_writes_its_report(capsys, monkeypatch, tmp_path):
    import hwcheck.device.gpu
    import hwcheck.runs.ptx_examples
    import hwcheck.runs.ptx_run
    from fake_gpu import FakeGpu
    gpu = FakeGpu()
    monkeypatch.setattr(hwcheck.device.gpu.Gpu, "open", classmethod(lambda cls, device=0: gpu))
    monkeypatch.setattr(hwcheck.runs.ptx_run, "CupyPtx", lambda gpu: SimulatorAsGpu())
    monkeypatch.setattr(hwcheck.runs.ptx_examples, "CORPUS_EXAMPLES", SMALL[:1])
    status = main(["acceptance", "--out", str(tmp_path), "--only", "corpus", "--seeds", "2"])
    out = capsys.readouterr().out
    assert status == 0 and out.strip().splitlines()[-1] == "acceptance: PASS"
    name = "fake-gpu-warpsim-corpus-programs.json"
    assert os.listdir(tmp_path) == [name]
    data = json.loads((tmp_path / name).read_text())
    assert data["status"] == "pass" and data["totals"]["seeds"] == 2
    assert data["runs"][0]["source"].endswith("triton_vector_add_sm90.ptx")


def _with_additions(path):
    """The corpus report at ``path`` with the runs of the reports beside it named ``*-corpus-NAME-programs.json``: the
    files added to the corpus after its run, run on the same GPU by ``hwcheck run`` (each a whole report of its own);
    the totals summed."""
    with open(path) as f:
        report = json.load(f)
    for extra in sorted(glob.glob(path.replace("-corpus-programs.json", "-corpus-*-programs.json"))):
        with open(extra) as f:
            more = json.load(f)
        assert more["status"] == "pass" and more["gpu"]["name"] == report["gpu"]["name"], extra
        report["runs"] = report["runs"] + more["runs"]
        report["totals"] = {k: v + more["totals"].get(k, 0) for k, v in report["totals"].items()}
    return report


def test_committed_corpus_report_is_whole_and_sound():
    from test_committed_ptx_report import ptx_report_problems
    reports = sorted(glob.glob(REPORTS))
    if not reports:
        pytest.xfail(f"the corpus has not run on a GPU yet; run {GPU_COMMAND} and commit the report")
    for path in reports:
        problems = ptx_report_problems(_with_additions(path), CORPUS_EXAMPLES, seeds=SEEDS, gpus=("H100", "H200"))
        assert not problems, "\n".join(problems)
