"""hwcheck for PTX programs without a GPU: the instrumented PTX of every PTX example assembles with ptxas for
sm_80 and sm_90, the simulator's run of it equals the original's (buffers) and records the same trace twice,
and a GPU that disagrees (buffers, registers, addresses) is reported as it should be. Of the two eight-variant
sweeps (``gemm_smem.cu``, the CuTe DSL ``flash_fwd.py``) two variants each by default, every one with ``--slow``."""

import importlib.util
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

from hwcheck.cli.main import main
from hwcheck.device.instrument import TRACE_PARAM, instrument
from hwcheck.runs.ptx_examples import PTX_EXAMPLES, ROOT, ptx_jobs
from hwcheck.runs.ptx_run import PtxJob, SimulatorAsGpu, check_ptx
from warpsim.frontends.args import concrete_args, parse_arg
from hwcheck.device.shared_capture import SHARED_PARAM
from hwcheck.runs.trace_compare import _relocated
from warpsim.toolchain import find_nvcc

IN_CI = os.environ.get("CI") == "true"


def _need(example):
    if find_nvcc() is None and example[0].endswith(".cu"):
        pytest.skip("nvcc not found")
    if example[0].endswith(".py") and importlib.util.find_spec("cutlass") is None:
        pytest.skip("CuTe DSL not installed (pip install 'warpsim[dsl]')")


def _id(example):
    return f"{os.path.basename(example[0])}:{example[1]}"


# The two sweeps of PTX_EXAMPLES (gemm_smem.cu: dtype x product x layout; the CuTe DSL flash_fwd.py: dtype x d x
# causal) run the same instrument/ptxas/compare code on eight variants each: by default two of each, which between
# them take every value of every axis; all of them with --slow (tests/flash and tests/ptx_front run each variant).
SWEEP_SOURCES = ("examples/cute_cpp/gemm_smem.cu", "examples/cute_dsl/flash_fwd.py")
SWEEP_DEFAULT = ("gemm_smem_f16_qk_swizzle", "gemm_smem_bf16_pv_plain",
                 "flash_fwd_f16_d64", "flash_fwd_bf16_d128_causal")


def _examples():
    return [e if e[0] not in SWEEP_SOURCES or e[1] in SWEEP_DEFAULT
            else pytest.param(e, marks=pytest.mark.slow, id=_id(e)) for e in PTX_EXAMPLES]


def test_the_default_sample_takes_every_value_of_each_sweep():
    kept = [e[1] for e in PTX_EXAMPLES if e[0] in SWEEP_SOURCES and e[1] in SWEEP_DEFAULT]
    assert sorted(kept) == sorted(SWEEP_DEFAULT)
    words = {w for k in kept for w in k.split("_")}
    assert {"f16", "bf16", "qk", "pv", "swizzle", "plain", "d64", "d128", "causal"} <= words
    assert any(k.startswith("flash") and not k.endswith("causal") for k in kept)


# sm_90 (the device's) by default; sm_80 too with --slow (the instrumenter writes the same PTX for both; ~35 s of
# ptxas on 2 cores)
@pytest.mark.parametrize("arch", [pytest.param("sm_80", marks=pytest.mark.slow), "sm_90"])
@pytest.mark.parametrize("example", _examples(), ids=_id)
def test_instrumented_ptx_assembles(example, arch, tmp_path):
    if shutil.which("ptxas") is None:
        if IN_CI:
            pytest.fail("ptxas not found (required in CI)")
        pytest.skip("ptxas (CUDA toolkit) not found on PATH")
    _need(example)
    from warpsim.frontends.kernel import open_kernel
    kernel = open_kernel(os.path.join(ROOT, example[0]), example[1], arch=arch)
    ins = instrument(kernel.module.text, kernel.name, capacity=64, window=(3, 50))
    path = tmp_path / "k.ptx"
    path.write_text(ins.text)
    done = subprocess.run(["ptxas", f"-arch={arch}", str(path), "-o", os.devnull], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[:2000]
    assert ins.sites, "no register-writing instruction found"


@pytest.mark.parametrize("example", _examples(), ids=_id)
def test_simulator_against_itself_passes(example, tmp_path):
    """The instrumented kernel's buffers equal the original's, and its trace is complete and repeatable; the
    stand-in GPU's shared memory starts as leftovers (0x5A), as a GPU's may, and the final shared memory agrees."""
    _need(example)
    job = ptx_jobs([example])[0]
    report = tmp_path / "r.json"
    runs, status, error, code = check_ptx(SimulatorAsGpu(shared_fill=0x5A), [job], seeds=1, report=str(report))
    assert (status, error, code) == ("pass", None, 0)
    seed = runs[0].seeds[0]
    assert seed.records > 0 and seed.global_elements > 0 and seed.instrumented_bad == 0
    data = json.loads(report.read_text())
    assert data["status"] == "pass" and data["runs"][0]["seeds"][0]["mismatched_trace_records"] == 0


def _add_index(window="0:"):
    return PtxJob(os.path.join(ROOT, "examples/ptx/add_index.ptx"), "add_index", (2, 1, 1), (64, 1, 1), 0,
                  dict(parse_arg(a) for a in ["x=random:u32:128", "y=zeros:u32:128", "n=120"]))


def test_a_wrong_register_is_named():
    def corrupt(kind, buffers):
        if kind == "instrumented":
            buffers[TRACE_PARAM].reshape(128, -1)[70, 8 + 4 * 6 + 2] ^= 0x10      # CTA 1, thread 6, record 6
    runs, status, _error, code = check_ptx(SimulatorAsGpu(corrupt=corrupt), [_add_index()], seeds=1)
    assert (status, code) == ("fail", 1)
    record = runs[0].records[0]
    assert record["cta"] == [1, 0, 0] and (record["warp"], record["lane"]) == (0, 6)
    assert record["step"] == 6 and record["register"].startswith("%") and record["ptx_line"] > 20
    assert int(record["expected"], 16) ^ int(record["actual"], 16) == 0x10


def test_a_wrong_buffer_element_is_named():
    def corrupt(kind, buffers):
        if kind == "original":
            buffers["y"][17] += 1
    runs, status, _error, code = check_ptx(SimulatorAsGpu(corrupt=corrupt), [_add_index()], seeds=1)
    assert code == 1 and runs[0].seeds[0].global_bad == 1
    record = runs[0].records[0]
    assert (record["buffer"], record["index"]) == ("y", 17)
    assert int(record["actual"], 16) == int(record["expected"], 16) + 1


def test_a_full_buffer_says_how_far_it_compared():
    runs, status, _e, _c = check_ptx(SimulatorAsGpu(), [_add_index()], seeds=1, capacity=4, window=(2, 100))
    seed = runs[0].seeds[0]
    assert status == "pass" and seed.truncated_threads == 128 and seed.compared_to_step == 5


def test_addresses_are_relocated_not_mismatched():
    base_s, base_g = 0x1_0000_0000, 0x7F00_1234_0000
    vs = np.array([base_s + 64, base_s + 64, (base_s + 64) & 0xFFFFFFFF, base_s + 64], np.uint64)
    vg = np.array([base_g + 64, base_g + 68, (base_g + 64) & 0xFFFFFFFF, base_g + 64], np.uint64)
    wide = np.array([True, True, False, True])
    pairs = [(np.uint64(base_s), np.uint64(base_g), 256)]
    assert _relocated(vs, vg, wide, pairs, np.zeros(4, int)).tolist() == [True, False, True, True]


def test_random_arguments_are_per_seed_and_repeatable():
    specs = dict(parse_arg(a) for a in ["a=random:f16:4x4", "b=zeros:u32:3", "s=random:bf16:8;s32:8;s32:8"])
    one, again, other = concrete_args(specs, 3), concrete_args(specs, 3), concrete_args(specs, 4)
    assert np.array_equal(one["a"], again["a"]) and not np.array_equal(one["a"], other["a"])
    assert one["a"].dtype == np.float16 and np.all(np.abs(one["a"].astype(np.float32)) <= 1)
    assert one["s"][0][0] == "u64" and one["s"][1:] == [("s32", 8), ("s32", 8)] and not one["b"].any()


def test_random_fp8_arguments_are_finite_codes_within_the_bound():
    from warpsim.isa.floats import fp8_values
    specs = dict(parse_arg(a) for a in ["a=random:e4m3:64x32:2", "b=random:e5m2:1000", "c=zeros:e4m3:8"])
    one, other = concrete_args(specs, 0), concrete_args(specs, 1)
    assert one["a"].dtype == np.uint8 and one["c"].dtype == np.uint8 and not one["c"].any()
    for name, t, bound in (("a", "e4m3", 2), ("b", "e5m2", 1)):
        values = fp8_values(t)[one[name]]
        assert np.all(np.isfinite(values)) and np.all(np.abs(values) <= bound) and len(np.unique(one[name])) > 20
        assert not np.array_equal(one[name], other[name])


def test_cli_without_gpu_and_bad_arguments_exit_2(capsys):
    source = os.path.join(ROOT, "examples/ptx/add_index.ptx")
    assert main(["run", source, "--kernel", "add_index", "--arg", "x=random:q:4"]) == 2
    assert "random:DTYPE:SHAPE" in capsys.readouterr().err
    assert main(["run", source, "--kernel", "add_index", "--trace-window", "9:3"]) == 2
    err = capsys.readouterr().err
    assert "--trace-window" in err and len(err.strip().splitlines()) == 1


def test_cli_end_to_end_with_the_simulator_as_gpu(capsys, monkeypatch, tmp_path):
    """``hwcheck run k.ptx`` through the whole command, a stand-in GPU that disagrees on one register."""
    import hwcheck.device.gpu
    import hwcheck.runs.ptx_run
    from fake_gpu import INFO

    class Opened:
        info = INFO

    def corrupt(kind, buffers):
        if kind == "instrumented":
            buffers[TRACE_PARAM].reshape(64, -1)[2, 8 + 4 * 3 + 2] ^= 1
    monkeypatch.setattr(hwcheck.device.gpu.Gpu, "open", classmethod(lambda cls, device=0: Opened()))
    monkeypatch.setattr(hwcheck.runs.ptx_run, "CupyPtx", lambda gpu, ptxas="auto": SimulatorAsGpu(corrupt=corrupt))
    report = tmp_path / "r.json"
    status = main(["run", os.path.join(ROOT, "examples/ptx/add_index.ptx"), "--kernel", "add_index", "--block", "64",
                   "--arg", "x=random:u32:64", "--arg", "y=zeros:u32:64", "--arg", "n=64", "--seeds", "2",
                   "--report", str(report)])
    out = capsys.readouterr().out
    assert status == 1 and "report:" in out and "(fail)" in out
    data = json.loads(report.read_text())
    assert data["status"] == "fail" and data["gpu"]["name"] == INFO.name
    first = data["runs"][0]["mismatches"][0]
    assert (first["seed"], first["lane"], first["step"]) == (0, 2, 3)
    assert data["runs"][0]["seeds"][1]["mismatched_trace_records"] == 1
    assert data["command"].startswith("hwcheck run ") and "--kernel add_index" in data["command"]


def test_cli_unknown_kernel_is_a_usage_error(capsys):
    assert main(["run", os.path.join(ROOT, "examples/ptx/add_index.ptx"), "--kernel", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no such kernel" in err and "add_index" in err and err.count("\n") == 1


def test_small_values_are_not_taken_for_address_high_words():
    base = 0x1_0000_0000                       # the same base on both machines: only equal values relocate
    vs, vg = np.array([0, 1], np.uint64), np.array([1, 1], np.uint64)
    pairs = [(np.uint64(base), np.uint64(base), 4096)]
    assert _relocated(vs, vg, np.array([False, False]), pairs, np.zeros(2, int)).tolist() == [False, True]
    far = [(np.uint64(base), np.uint64(0x7F00_0000_0000), 4096)]
    assert _relocated(np.array([1], np.uint64), np.array([0x7F00], np.uint64), np.array([False]), far,
                      np.zeros(1, int)).tolist() == [True]


def test_acceptance_only_ptx_writes_its_report(capsys, monkeypatch, tmp_path):
    import hwcheck.device.gpu
    import hwcheck.runs.ptx_examples
    import hwcheck.runs.ptx_run
    from fake_gpu import FakeGpu
    gpu = FakeGpu()
    monkeypatch.setattr(hwcheck.device.gpu.Gpu, "open", classmethod(lambda cls, device=0: gpu))
    monkeypatch.setattr(hwcheck.runs.ptx_run, "CupyPtx", lambda gpu, ptxas="auto": SimulatorAsGpu())
    monkeypatch.setattr(hwcheck.runs.ptx_examples, "PTX_EXAMPLES", PTX_EXAMPLES[:1])
    status = main(["acceptance", "--out", str(tmp_path), "--only", "ptx", "--seeds", "2"])
    out = capsys.readouterr().out
    assert status == 0 and out.strip().splitlines()[-1] == "acceptance: PASS"
    assert os.listdir(tmp_path) == ["fake-gpu-warpsim-ptx-programs.json"]
    data = json.loads((tmp_path / "fake-gpu-warpsim-ptx-programs.json").read_text())
    assert data["status"] == "pass" and data["totals"]["seeds"] == 2 and data["kind"] == "ptx-programs"
    assert "add_index.ptx --kernel add_index" in data["command"]


def test_acceptance_rows_say_each_jobs_own_outcome(capsys, monkeypatch, tmp_path):
    """The table's status column is each launch's own: the one that faulted "error", the one that ran "pass", not the
    set's error copied onto every row (as the TMA set's H100 report had it)."""
    import hwcheck.device.gpu
    import hwcheck.runs.ptx_examples
    import hwcheck.runs.ptx_run
    from fake_gpu import FakeGpu
    from hwcheck.errors import HwcheckError
    examples = [e for e in PTX_EXAMPLES if e[1] in ("add_index", "warp_ops")]
    for e in examples:
        _need(e)

    class Faulting(SimulatorAsGpu):
        def launch(self, module, decoded, kernel, *args, **kwargs):
            if kernel == examples[1][1]:
                raise HwcheckError(f"hwcheck run: kernel {kernel} failed on a GPU: cudaErrorIllegalInstruction")
            return super().launch(module, decoded, kernel, *args, **kwargs)
    gpu = FakeGpu()
    monkeypatch.setattr(hwcheck.device.gpu.Gpu, "open", classmethod(lambda cls, device=0: gpu))
    monkeypatch.setattr(hwcheck.runs.ptx_run, "CupyPtx", lambda gpu, ptxas="auto": Faulting())
    monkeypatch.setattr(hwcheck.runs.ptx_examples, "PTX_EXAMPLES", tuple(examples))
    assert main(["acceptance", "--out", str(tmp_path), "--only", "ptx", "--seeds", "1"]) == 3
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if " ptx " in line]
    assert [(r[3], r[-1]) for r in rows] == [(examples[0][1], "pass"), (examples[1][1], "error")]


def test_printf_lines_are_compared_in_any_order():
    from hwcheck.runs.ptx_run import GpuLaunch

    class Reordered(SimulatorAsGpu):
        def launch(self, *args):
            res = super().launch(*args)
            lines = res.printf.splitlines(keepends=True)
            return GpuLaunch(res.buffers, res.regions, "".join(reversed(lines)))

    class Wrong(SimulatorAsGpu):
        def launch(self, *args):
            res = super().launch(*args)
            return GpuLaunch(res.buffers, res.regions, res.printf.replace("x/7", "x/8", 1))
    example = next(e for e in PTX_EXAMPLES if e[1] == "say")
    _need(example)
    runs, status, _e, _c = check_ptx(Reordered(), ptx_jobs([example]), seeds=1, trace=False)
    assert status == "pass" and runs[0].seeds[0].printf_lines == 8
    runs, status, _e, _c = check_ptx(Wrong(), ptx_jobs([example]), seeds=1, trace=False)
    assert status == "fail" and runs[0].seeds[0].printf_bad == 2
    assert runs[0].records[0]["only_gpu"][0].startswith("cta ") and "x/8" in runs[0].records[0]["only_gpu"][0]


def test_stdout_capture_takes_what_is_written_to_descriptor_1():
    from hwcheck.runs.ptx_run import _CapturedStdout
    with _CapturedStdout() as captured:
        os.write(1, b"from the device\n")
    assert captured.text == "from the device\n"


def test_exported_ptx_is_used_where_nothing_compiles(monkeypatch, tmp_path):
    """A GPU machine without nvcc or the CuTe DSL runs the PTX exported here (``HWCHECK_PTX_DIR``)."""
    import hwcheck.runs.ptx_examples
    from hwcheck.runs.ptx_examples import main as export
    from warpsim.frontends.compiled import CompileError
    import warpsim.frontends.kernel
    examples = [e for e in PTX_EXAMPLES if e[1] in ("warp_ops", "gemm_k8_warps2x2")]
    for e in examples:
        _need(e)
    # the export command over these two sources and a .ptx one (left out: it needs no compiling), not every example:
    # on a fresh machine compiling them all (the flash builds, the as-compiled kernels) took two minutes
    add_index = next(e for e in PTX_EXAMPLES if e[1] == "add_index")
    monkeypatch.setattr(hwcheck.runs.ptx_examples, "PTX_EXAMPLES", (add_index, *examples))
    monkeypatch.setattr(hwcheck.runs.ptx_examples, "FLASH_EXAMPLES", ())
    monkeypatch.setattr(hwcheck.runs.ptx_examples, "AS_COMPILED_EXAMPLES", ())
    monkeypatch.setattr(hwcheck.runs.ptx_examples, "HOPPER_EXAMPLES", ())
    monkeypatch.setattr(hwcheck.runs.ptx_examples, "HOPPER_TMA_EXAMPLES", ())
    assert export(["--export", str(tmp_path), "--arch", "sm_90"]) == 0
    assert sorted(os.listdir(tmp_path)) == ["directed.cu.sm_90.0.ptx", "gemm_k8_warps2x2.cu.sm_90.0.ptx"]

    def no_compiler(*args, **kwargs):
        raise CompileError("no compiler here")
    monkeypatch.setattr(warpsim.frontends.kernel, "compile_source", no_compiler)
    monkeypatch.setenv("HWCHECK_PTX_DIR", str(tmp_path))
    runs, status, error, _code = check_ptx(SimulatorAsGpu(), ptx_jobs(examples), seeds=1)
    assert (status, error) == ("pass", None) and [r.entry for r in runs] == ["warp_ops", "gemm_k8_warps2x2"]
    monkeypatch.delenv("HWCHECK_PTX_DIR")
    _runs, status, error, _code = check_ptx(SimulatorAsGpu(), ptx_jobs(examples[:1]), seeds=1)
    assert status == "error" and "no compiler here" in error


_STACK = """.version 8.0
.target sm_90
.address_size 64
.visible .entry stack(.param .u64 out)
{
  .local .align 8 .b8 __local_depot0[16];
  .reg .b32 %r<4>; .reg .b64 %SP, %SPL, %rd<4>;
  mov.u64 %SPL, __local_depot0;
  cvta.local.u64 %SP, %SPL;
  add.u64 %rd1, %SP, 8;
  add.u64 %rd2, %SPL, 4;
  mov.u32 %r1, %tid.x;
  st.local.u32 [%rd2], %r1;
  ld.u32 %r2, [%rd1+-4];
  ld.param.u64 %rd3, [out];
  cvta.to.global.u64 %rd3, %rd3;
  mul.wide.u32 %rd1, %r1, 4;
  add.s64 %rd3, %rd3, %rd1;
  st.global.u32 [%rd3], %r2;
  ret;
}
"""


def _stack_traces(gpu_depot, gpu_window):
    """The simulator's trace of ``_STACK`` and the one a GPU whose stack (depot) is at local address
    ``gpu_depot`` of a local window at generic ``gpu_window`` would write, with its ``compare_traces`` setting."""
    from warpsim import ptx
    from warpsim.ptx.memory import LOCAL_WINDOW
    ins = instrument(_STACK, "stack", capacity=16)
    assert ins.depot == ("__local_depot0", 16)
    threads = 32
    args = {"out": np.zeros(threads, np.uint32), TRACE_PARAM: np.zeros(ins.buffer_bytes(threads) // 4, np.uint32),
            SHARED_PARAM: np.zeros(ins.capture.buffer_bytes(1, 0) // 4, np.uint32)}
    sim = ptx.load(ins.text).launch("stack", block=threads, args=args, quiet=True).buffers[TRACE_PARAM]
    words = ins.thread_bytes // 4
    head = sim.reshape(threads, words)[:, :ins.header_bytes // 4]
    at = ins.depot_offset // 4
    assert head[:, at:at + 4].tolist() == [[0, 0, 0, LOCAL_WINDOW >> 32]] * threads     # local 0, generic window
    gpu = sim.copy().reshape(threads, words)
    gpu[:, 6:8] = [gpu_window & 0xFFFFFFFF, gpu_window >> 32]                  # cvta.local of 0
    gpu[:, at:at + 4] = [gpu_depot, 0, (gpu_window + gpu_depot) & 0xFFFFFFFF, (gpu_window + gpu_depot) >> 32]
    records = gpu[:, ins.header_bytes // 4:].reshape(threads, ins.capacity, 4)
    # steps 0-3 write %SPL (local depot + 0), %SP (generic + 0), %rd1 (generic + 8), %rd2 (local + 4)
    for step, value in enumerate([gpu_depot, gpu_window + gpu_depot, gpu_window + gpu_depot + 8, gpu_depot + 4]):
        assert (records[:, step, 1] == step).all()
        records[:, step, 2], records[:, step, 3] = value & 0xFFFFFFFF, value >> 32
    return ins, sim, gpu.reshape(-1)


def test_local_stack_addresses_are_relocated_from_each_machines_depot():
    from hwcheck.runs.trace_compare import Regions, compare_traces
    ins, sim, gpu = _stack_traces(0xFFFCC0, 0x7FAC_E900_0000)
    tc = compare_traces(ins, sim, gpu, Regions({}, {}), (32, 1, 1), (1, 1, 1))
    assert (tc.mismatched, tc.relocated) == (0, 4 * 32)       # %SPL, %SP, %rd2 (local) and the first %rd1 (generic)
    records = gpu.reshape(32, -1)[:, ins.header_bytes // 4:].reshape(32, ins.capacity, 4)
    records[5, 0, 2] += 8                                     # thread 5's %SPL: 8 bytes further into its stack
    tc = compare_traces(ins, sim, gpu, Regions({}, {}), (32, 1, 1), (1, 1, 1))
    assert tc.mismatched == 1 and tc.records[0]["register"] == "%SPL" and tc.records[0]["lane"] == 5


def test_atom_results_are_recorded_but_not_compared():
    text = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  atom.global.add.u32 %r1, [%rd1], 1;
  add.u32 %r2, %r1, 1;
  ret;
}
"""
    sites = {s.opcode: s.deterministic for s in instrument(text, "k").sites}
    assert sites == {"ld.param.u64": True, "atom.global.add.u32": False, "add.u32": True}


def test_workers_run_the_jobs_in_processes_and_report_them_in_order(tmp_path):
    """``check_ptx(workers=2)`` (what ``hwcheck acceptance --only ptx --workers N`` runs): each process opens its
    own stand-in GPU; the runs come back in the jobs' order with the same counts as one process gives."""
    jobs = [j for j in ptx_jobs([e for e in PTX_EXAMPLES if e[0].endswith(".ptx")][:2])]
    one = check_ptx(SimulatorAsGpu(), jobs, seeds=1, report=str(tmp_path / "one.json"))
    two = check_ptx(None, jobs, seeds=1, report=str(tmp_path / "two.json"), workers=2, make_gpu_ptx=SimulatorAsGpu)
    assert one[1:] == two[1:] == ("pass", None, 0)
    assert [(r.job.kernel, r.seeds[0].records, r.seeds[0].global_elements) for r in one[0]] == \
           [(r.job.kernel, r.seeds[0].records, r.seeds[0].global_elements) for r in two[0]]
    assert json.loads((tmp_path / "two.json").read_text())["settings"]["workers"] == 2


def test_each_failed_job_keeps_its_own_error_in_the_report(tmp_path):
    """A job that stops (here: a GPU stand-in whose launch faults for one kernel) records its error in its own run of
    the report, beside the report's first error; the other jobs run and pass."""
    import json
    from hwcheck.errors import HwcheckError
    examples = [e for e in PTX_EXAMPLES if e[1] in ("warp_ops", "add_index")]
    for e in examples:
        _need(e)

    class Faulting(SimulatorAsGpu):
        def launch(self, module, decoded, kernel, *args, **kwargs):
            if kernel == "add_index":
                raise HwcheckError("hwcheck run: kernel add_index failed on a GPU: cudaErrorIllegalInstruction")
            return super().launch(module, decoded, kernel, *args, **kwargs)
    report = tmp_path / "r.json"
    runs, status, error, _ = check_ptx(Faulting(), ptx_jobs(examples), seeds=1, report=str(report), timing=False)
    data = json.loads(report.read_text())
    by_kernel = {r["kernel"]: r for r in data["runs"]}
    assert status == "error" and "cudaErrorIllegalInstruction" in error
    assert "cudaErrorIllegalInstruction" in by_kernel["add_index"]["error"]
    assert "error" not in by_kernel.get("warp_ops", {}) or not by_kernel["warp_ops"]["error"]
