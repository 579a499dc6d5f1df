"""hwcheck run without a GPU.

- The kernel ``hwcheck run`` hands the GPU — a program lowered to PTX with snapshots and shared memory copied
  out (:mod:`warpsim.program.lower`) — assembles with ptxas for sm_90, for every params combination with
  ``--slow``; by default, of a sweep of more than ``MAX_COMPILED``, the combinations :func:`_diagonal` takes,
  which between them take every choice of every param.
- That kernel, run by the PTX interpreter from shared memory full of leftovers, agrees with the stream executor
  (which never sees the PTX) in every snapshot slot, shared byte and global byte, on every example and on a
  stream with every instruction kind in per-warp phases; a sabotaged text must disagree.
- Bits planted into the GPU's results are found at the right warp, lane, register, instruction and
  source line, with the simulator's value as expected (read from a machine stepped to that point).
"""

import io
import itertools
import json
import os
import re
import subprocess

import numpy as np
import pytest

from fake_gpu import FakeGpu
from hwcheck.campaigns.acceptance import example_programs
from hwcheck.runs.run import RUN_RECORDS, param_choices, plan_jobs, run_programs
from warpsim import ptx
from warpsim.machine import Machine
from warpsim.program import load_program
from warpsim.program.encode import encode
from warpsim.program.execute import execute
from warpsim.program.instr import MMA_REGS, Instr, Op
from warpsim.program.lower import KERNEL, lower
from warpsim.program.run import prepare
from warpsim.toolchain import find_ptxas

HERE = os.path.dirname(os.path.abspath(__file__))
BIG_SMEM = os.path.join(HERE, "programs", "big_smem_convert.py")
ELEMENTS = os.path.join(HERE, "programs", "elements_auto_copy.py")   # element access, copy(src, dst)
ELEMENTWISE = os.path.join(HERE, "programs", "elementwise.py")       # register arithmetic, shfl, copy_if
GEMM = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "gemm_smem.py")


def _all_jobs(path):
    return plan_jobs([(path, load_program(path))], {}, {}, sweep=True)


def _sweep(program, given):
    """Every combination of the declared choices, ``given`` fixed, the first param varying slowest (the
    order ``--params all`` promises), each as a full params dict."""
    axes = [[given[k]] if k in given else list(choices) for k, choices in program.params.items()]
    return [dict(zip(program.params, combo)) for combo in itertools.product(*axes)]


def _job(path, **given):
    """The sweep's one job with the ``given`` params and every other param at its default (first choice)."""
    program = load_program(path)
    want = {k: given.get(k, choices[0]) for k, choices in program.params.items()}
    (job,) = [j for j in _all_jobs(path) if j.params == want]
    return job


def _checked(stream, warps, regs, smem_bytes):
    """The lowering ``hwcheck run`` launches on both sides."""
    return lower(stream, warps=warps, regs=regs, smem_bytes=smem_bytes, snapshots=True, shared_out=True)


def _lowered(program, params):
    t = program.trace(params)
    return t, _checked(t.stream, t.warps, t.regs_per_thread, t.smem_bytes)


def test_examples_are_found():
    names = [os.path.basename(p) for p in example_programs()]
    assert "gemm_smem.py" in names and "explain_config.py" not in names


MAX_COMPILED = 8      # beyond this, a sample of the sweep unless --slow


def _assemble(text, tmp_path, what):
    """ptxas for sm_90 on ``text``: it must assemble without a word (skipped where no ptxas is found)."""
    ptxas = find_ptxas("auto", text)
    if ptxas is None:
        pytest.skip("ptxas not found (pip install nvidia-cuda-nvcc, or a CUDA toolkit on PATH)")
    src = tmp_path / "k.ptx"
    src.write_text(text)
    done = subprocess.run([ptxas, "-arch=sm_90", str(src), "-o", str(tmp_path / "k.cubin")], capture_output=True,
                          text=True)
    assert done.returncode == 0 and not done.stderr.strip(), f"{what}: ptxas: {done.stderr}"


def _missing_instructions(stream, text):
    """The stream's PTX instruction names that the lowered text lacks."""
    in_ptx = set(re.findall(r"^\s*(?:@%[pq]\d+ )?((?:mma|ldmatrix|cvt\.rn|ld|st|add|sub|mul|fma|div|max|neg|ex2|lg2|set|"
                            r"slct|shfl)\.[\w.]+)", text, re.M))
    return sorted({i.ptx for i in stream if i.op not in (Op.MOV, Op.MOVL, Op.BAR) and i.ptx != "mov.b32"} - in_ptx)


@pytest.mark.parametrize("path", example_programs() + [BIG_SMEM, ELEMENTS, ELEMENTWISE], ids=os.path.basename)
def test_every_params_combination_of_every_example_assembles_for_sm90(path, request, tmp_path):
    program = load_program(path)
    combos = param_choices(program, {}, sweep=True)
    spec = [len(c) for c in program.params.values() if isinstance(c, (tuple, list))]
    assert len(combos) == int(np.prod(spec))
    if not request.config.getoption("--slow"):
        combos = _diagonal(combos, MAX_COMPILED)
    for params in combos:
        t, low = _lowered(program, params)
        _assemble(low.text, tmp_path, f"{path} {params}")
        missing = _missing_instructions(t.stream, low.text)
        assert not missing, f"{path} {params}: instructions absent from the PTX: {missing}"


def test_a_stream_of_every_instruction_kind_assembles_for_sm90(tmp_path):
    stream, regs = every_kind_per_warp()
    low = _checked(stream, 2, regs, 4096)
    _assemble(low.text, tmp_path, "every kind")
    assert not _missing_instructions(stream, low.text)


def _run_lowered(low, image):
    """The lowered kernel on the PTX interpreter, shared memory starting as leftovers (0xA5): snapshots, the
    shared memory it copied out, global memory."""
    module = ptx.load(low.text, filename="lowered.ptx", ptxas="none")
    res = module.launch(KERNEL, block=low.threads, smem=low.smem_launch, quiet=True, shared_fill=0xA5,
                        args={"gmem": image.copy(), "table": low.table,
                              "snap": np.full(low.snap_positions * low.threads, 0xFFFFFFFF, np.uint32),
                              "smem_out": np.full(low.smem_launch // 4, 0xFFFFFFFF, np.uint32)})
    return (res.buffers["snap"].reshape(low.snap_positions, low.threads),
            res.buffers["smem_out"].view(np.uint8)[:low.smem_bytes], res.buffers["gmem"])


def _simulate(stream, low, machine):
    snap = np.full((low.snap_positions, low.threads), 0xFFFFFFFF, np.uint32)
    execute(stream, encode(stream), machine, snapshots=(low.snap_slots, snap))
    return snap


def _first_difference(what, want, got):
    bad = np.argwhere(want != got)
    if not bad.size:
        return None
    at = tuple(int(i) for i in bad[0])
    return f"{what}{list(at)}: stream executor {int(want[at]):#x}, lowered kernel {int(got[at]):#x} ({len(bad)} differ)"


def every_kind_per_warp(warps=2, seed=5):
    """Per warp: random register values (so every phase differs per warp: ``switch`` code), then every
    memory width and half in both spaces, every ldmatrix variant, every mma shape and type, both cvt,
    each warp in its own memory (no races); a second phase where all warps run the same code."""
    rng = np.random.default_rng(seed)
    s, regs = [], 40
    for w in range(warps):
        for r in range(0, regs, 4):
            for k in range(4):
                s.append(Instr(Op.MOV, w, dst=(r + k,), imm=int(rng.integers(0, 1 << 32))))
        base_s, base_g = 2048 * w, 4096 * w
        rows = lambda base, stride=16: base + np.arange(32, dtype=np.int64) * stride   # noqa: E731
        for bits, dst in ((32, (0,)), (64, (0, 1)), (128, (0, 1, 2, 3))):
            s.append(Instr(Op.ST, w, src=dst, addr=rows(base_s), space="shared", bits=bits))
            s.append(Instr(Op.ST, w, src=tuple(r + 4 for r in dst), addr=rows(base_g), space="global", bits=bits))
            s.append(Instr(Op.LD, w, dst=tuple(r + 8 for r in dst), addr=rows(base_s + 512), space="shared", bits=bits))
            s.append(Instr(Op.LD, w, dst=tuple(r + 12 for r in dst), addr=rows(base_g + 1024), space="global", bits=bits))
        for half in (0, 1):
            for space, base in (("shared", base_s + 1536), ("global", base_g + 2048)):
                s.append(Instr(Op.ST, w, src=(16 + half,), addr=rows(base, 2), space=space, bits=16, half=half))
                s.append(Instr(Op.LD, w, dst=(18,), addr=rows(base + 64, 2), space=space, bits=16, half=half))
        for num in (1, 2, 4):
            for trans in (False, True):
                perm = rng.permutation(64)[:32].astype(np.int64)
                s.append(Instr(Op.LDMATRIX, w, dst=tuple(range(20, 20 + num)), addr=base_s + 16 * perm, num=num,
                               trans=trans))
        for shape in ("m16n8k16", "m16n8k8"):
            for ab, cd in (("f16", "f32"), ("bf16", "f32"), ("f16", "f16")):
                na, nb, nc = MMA_REGS[(shape, cd)]
                src = tuple(range(20, 20 + na + nb)) + tuple(range(30, 30 + nc))
                s.append(Instr(Op.MMA, w, dst=tuple(range(34, 34 + nc)), src=src, shape=shape, ab=ab, cd=cd))
        s.append(Instr(Op.CVT, w, dst=(38,), src=(34, 35), ab="f16"))
        s.append(Instr(Op.CVT, w, dst=(39,), src=(36, 35), ab="bf16"))
    for w in range(warps):
        s.append(Instr(Op.BAR, w))
    for w in range(warps):                      # the same code for every warp: emitted once
        s.append(Instr(Op.MOV, w, dst=(0, 1), imm=0x3C00BC00))
        s.append(Instr(Op.LD, w, dst=(2, 3), addr=2048 * w + np.arange(32, dtype=np.int64) * 8, space="shared",
                       bits=64))
    return s, regs


def test_lowered_kernel_agrees_with_the_executor_on_every_instruction_kind():
    stream, regs = every_kind_per_warp()
    low = _checked(stream, 2, regs, 4096)
    assert low.text.count("%r_warp, 0;") == 1 and low.text.count("%r_warp, 1;") == 1      # per-warp code
    machine = Machine(2, regs, 4096, gmem_bytes=8192)
    rng = np.random.default_rng(1)
    machine.smem[:] = 0
    machine.gmem[:] = rng.integers(0, 256, machine.gmem.size, dtype=np.uint8)
    image = machine.gmem.copy()
    want = _simulate(stream, low, machine)
    snap, smem, gmem = _run_lowered(low, image)
    for what, a, b in (("snap", want, snap), ("smem", machine.smem, smem), ("gmem", machine.gmem, gmem)):
        diff = _first_difference(what, a, b)
        assert diff is None, diff
    written = (low.snap_slots >= 0).sum() * 32
    assert (want != 0xFFFFFFFF).sum() > 0.9 * written
    assert low.snap_positions == len({int(v) for v in low.snap_slots.reshape(-1) if v >= 0})
    unzeroed = type(low)(**{**low.__dict__, "text": low.text.replace("\tst.shared.b32 [%t2], %t3;\n", "", 1)})
    assert (_run_lowered(unzeroed, image)[1] == 0xA5).any()          # the leftovers show where nothing wrote


MAX_EMULATED = 8      # beyond this, a sample of the sweep


def _sample(jobs, most=MAX_EMULATED):
    """Every job (a ``plan_jobs`` job or a params dict), or for sweeps of more than ``most``: the defaults,
    each one-param change from them, and the last combination (every param at its last choice).

    >>> [p["n"] for p in _sample([{"d": d, "n": n} for d in (1, 2) for n in (3, 4, 5)], most=4)]
    [3, 4, 5, 3, 5]
    """
    if len(jobs) <= most:
        return jobs
    params = [j if isinstance(j, dict) else j.params for j in jobs]
    first = params[0]
    return [j for j, p in zip(jobs, params) if sum(p[k] != first[k] for k in first) <= 1] + [jobs[-1]]


def _diagonal(jobs, most=MAX_EMULATED):
    """Of a sweep of more than ``most``, the jobs that take every param's choices in turn, all at once
    (together every choice of every param: 3 of flash_fwd's 24), else every job.

    >>> [tuple(p.values()) for p in _diagonal([{"d": d, "n": n} for d in (1, 2) for n in (3, 4, 5, 6, 7)])]
    [(1, 3), (2, 4), (1, 5), (2, 6), (1, 7)]
    """
    if len(jobs) <= MAX_EMULATED:
        return jobs
    params = [j if isinstance(j, dict) else j.params for j in jobs]
    choices = {k: list(dict.fromkeys(p[k] for p in params)) for k in params[0]}
    want = [{k: c[i % len(c)] for k, c in choices.items()} for i in range(max(map(len, choices.values())))]
    return [next(j for j, p in zip(jobs, params) if p == w) for w in want]


@pytest.mark.parametrize("path", example_programs() + [BIG_SMEM, ELEMENTS, ELEMENTWISE], ids=os.path.basename)
def test_lowered_kernel_agrees_with_the_executor_on_the_examples(path, request):
    """On the :func:`_diagonal` of a big sweep (flash_fwd: 3 jobs), on :func:`_sample`'s with --slow (7; ~60 s on 2
    busy cores); only those are planned (traced), not all 24 (every combination's trace: test_committed_reports)."""
    program = load_program(path)
    combos = param_choices(program, {}, sweep=True)
    chosen = _sample(combos) if request.config.getoption("--slow") else _diagonal(combos)
    for job in (job for params in chosen for job in plan_jobs([(path, program)], params, {}, sweep=True)):
        trace, machine, _inputs, _t = prepare(job.program, job.params, seed=3)
        t, low = _lowered(job.program, job.params)
        image = machine.gmem.copy()
        want = _simulate(trace.stream, low, machine)
        snap, smem, gmem = _run_lowered(low, image)
        for what, a, b in (("snap", want, snap), ("smem", machine.smem, smem), ("gmem", machine.gmem, gmem)):
            diff = _first_difference(what, a, b)
            assert diff is None, f"{job.label}: {diff}"


@pytest.mark.parametrize("old, new", [
    ("[%rd1+{row}];", "[%rd1+{next_row}];"),                      # a wrong table row
    ("[%rd5+{slot}], %r{reg};", "[%rd5+{slot}], %r{other};"),      # a snapshot of the wrong register
])
def test_a_sabotaged_kernel_text_computes_something_else(old, new):
    """A lowering bug that still assembles changes what the lowered kernel computes."""
    program = load_program(GEMM)
    trace, machine, _inputs, _t = prepare(program, {}, seed=0)
    _t, low = _lowered(program, {})
    image = machine.gmem.copy()
    want = _simulate(trace.stream, low, machine)
    m = re.search(r"\[%rd5\+(\d+)\], %r(\d+);", low.text.split("ldmatrix", 1)[1])
    fill = {"row": 8 * low.threads * 5, "next_row": 8 * low.threads * 6, "slot": m.group(1), "reg": m.group(2),
            "other": int(m.group(2)) + 1}
    old, new = old.format(**fill), new.format(**fill)
    assert old in low.text
    bad = type(low)(**{**low.__dict__, "text": low.text.replace(old, new, 1)})
    snap, smem, _gmem = _run_lowered(bad, image)
    assert (snap != want).any() or (smem != machine.smem).any()


def test_every_example_passes_on_the_fake_gpu():
    jobs = _all_jobs(GEMM) + _all_jobs(BIG_SMEM)
    out = run_programs(FakeGpu(), jobs, seeds=2, log=open(os.devnull, "w"))
    assert (out.status, out.error, out.exit_status) == ("pass", None, 0), out.error
    for run in out.runs:
        t = run.job.program.trace(run.job.params)
        writes = sum(32 * len(i.dst) for i in t.stream)          # every destination register of every lane
        elements = sum(int(np.prod(b.shape)) for b in t.buffers)
        for s in run.seeds:
            assert (s.registers, s.smem_words, s.global_elements) == (writes, -(-t.smem_bytes // 4), elements)
            assert s.mismatched == 0


def _mma_position(stream, warp, nth):
    return [k for k, i in enumerate(stream) if i.op == Op.MMA and i.warp == warp][nth]


def _register_after(job, seed, position, warp, lane, reg):
    """The simulator's register, stepping a fresh machine up to and including ``position``."""
    trace, machine, _inputs, _t = prepare(job.program, job.params, seed=seed)
    execute(trace.stream, trace.encoded, machine, stop=position + 1)
    return int(machine.regs[warp, lane, reg])


def test_planted_register_flips_are_named_by_instruction_warp_lane_register_and_line():
    job = _job(GEMM, dtype="f16", product="pv")   # other params at their defaults
    trace, low = _lowered(job.program, job.params)
    late = _mma_position(trace.stream, 2, 5)     # the 6th mma of warp 2, its D register 1, lane 7
    early = [k for k, i in enumerate(trace.stream) if i.op == Op.LDMATRIX and i.warp == 3][2]
    plants = [(late, 1, 2, 7, 1 << 3), (early, 3, 3, 30, 1 << 31)]

    def corrupt(name, out):
        assert name == KERNEL
        for position, j, warp, lane, bit in plants:
            out["snap"][low.snap_slots[position, j], 32 * warp + lane] ^= np.uint32(bit)
    out = run_programs(FakeGpu(corrupt), [job], seeds=1, first_seed=4, log=open(os.devnull, "w"))
    assert (out.status, out.exit_status) == ("fail", 1)
    run = out.runs[0]
    assert run.seeds[0].registers_bad == 2 and run.seeds[0].smem_bad == run.seeds[0].global_bad == 0
    assert sorted(run.bad_instructions) == [early, late] and run.seeds[0].first_bad_instruction == early
    records = [r for _seed, r in run.records]
    assert [r.index for r in records] == [early, late]             # stream order
    for record, (position, j, warp, lane, bit) in zip(records, sorted(plants)):
        instr = trace.stream[position]
        reg = instr.dst[j]
        expected = _register_after(job, 4, position, warp, lane, reg)
        assert (record.instruction, record.warp, record.lane, record.register) == (instr.ptx, warp, lane, f"r{reg}")
        assert record.line == str(instr.line) and record.line.startswith("gemm_smem.py:")
        assert (record.expected, record.actual) == (expected, expected ^ bit)
    late_record, early_record = records[1], records[0]
    assert late_record.kind == "f32" and late_record.tensor.startswith("acc[")
    assert "gemm(tiled_mma" in late_record.line
    assert early_record.kind in ("f16x2",) and early_record.tensor.split("[")[0] in ("tSrQ", "tOrVt")
    assert "copy(smem_tiled_copy" in early_record.line
    assert f"instruction {early} ldmatrix" in out.table and f"warp 3 lane 30 r{trace.stream[early].dst[3]}" in out.table


def test_planted_memory_flips_are_named_by_address_and_element(tmp_path):
    job = _job(GEMM, product="qk")               # output s (64 x 64 f32) after q and k
    s_buffer = next(b for b in job.program.trace(job.params).buffers if b.name == "s")

    def corrupt(name, out):
        out["smem"][0x1234 // 4] ^= np.uint32(0x100)
        out["gmem"][s_buffer.base + 4 * (64 * 10 + 3) + 1] ^= 0x40          # s[10, 3], byte 1

    report = tmp_path / "r.json"
    out = run_programs(FakeGpu(corrupt), [job], seeds=1, report=str(report), command="hwcheck run x",
                       log=open(os.devnull, "w"))
    run = out.runs[0]
    assert (run.seeds[0].smem_bad, run.seeds[0].global_bad, run.seeds[0].registers_bad) == (1, 1, 0)
    shared, glob = [r for _seed, r in run.memory_records]
    assert (shared.space, shared.address) == ("shared", 0x1234)
    assert shared.actual == shared.expected ^ 0x100
    assert (glob.buffer, glob.index, glob.address, glob.dtype) == ("s", (10, 3), s_buffer.base + 4 * (64 * 10 + 3), "f32")
    assert glob.actual == glob.expected ^ (0x40 << 8)
    data = json.loads(report.read_text())
    assert data["status"] == "fail" and data["kind"] == "program" and data["gpu"]["name"] == "Fake GPU (warpsim)"
    assert data["totals"]["mismatched_smem_words"] == 1 and data["totals"]["mismatched_global_elements"] == 1
    rec = data["runs"][0]["memory_mismatches"][1]
    assert (rec["buffer"], rec["index"], rec["memory"], rec["seed"]) == ("s", [10, 3], "global", 0)


def test_records_are_capped_but_every_mismatch_is_counted():
    job = _all_jobs(GEMM)[0]

    def corrupt(name, out):
        out["snap"][:] ^= np.uint32(1)
    out = run_programs(FakeGpu(corrupt), [job], seeds=2, log=open(os.devnull, "w"))
    run = out.runs[0]
    assert run.total("registers_bad") == run.total("registers") > 0
    assert len(run.records) == RUN_RECORDS


def test_a_simulator_fault_stops_before_the_gpu_runs(tmp_path):
    from warpsim.cute import Copy_Atom, UniversalCopy, make_layout, make_smem_ptr, make_tensor, make_tiled_copy
    from warpsim.program import Program, copy
    tc = make_tiled_copy(Copy_Atom(UniversalCopy(32), "u32"), make_layout((32, 1)), make_layout((1, 1)))

    def kernel(tid, *, x):
        s = make_tensor(make_smem_ptr(4096, "u32"), make_layout((32, 1)))     # beyond the 256 bytes declared
        t = tc.get_slice(tid)
        copy(tc, t.partition_S(x), t.partition_D(s))

    program = Program(kernel, threads=32, smem_bytes=256, inputs={"x": ((32, 1), "u32")})
    gpu = FakeGpu()
    jobs = plan_jobs([("inline", program)], {}, {}, sweep=False)
    out = run_programs(gpu, jobs, seeds=3, report=str(tmp_path / "r.json"), log=open(os.devnull, "w"))
    assert (out.status, out.exit_status) == ("error", 3)
    assert "the simulator faulted, so the kernel was not launched" in out.error
    assert "outside shared memory" in out.error and gpu.launches == []
    assert json.loads((tmp_path / "r.json").read_text())["status"] == "error"


def test_param_sweeps_and_their_errors():
    program = load_program(GEMM)
    every = param_choices(program, {}, sweep=True)
    assert every == _sweep(program, {})
    assert len(every) == int(np.prod([len(c) for c in program.params.values()])) >= 4
    assert every[0] == program.resolve_params({})                       # the defaults come first
    assert {(p["dtype"], p["product"]) for p in every} == {(d, q) for d in ("f16", "bf16") for q in ("qk", "pv")}
    pv = param_choices(program, {"product": "pv"}, sweep=True)
    assert pv == _sweep(program, {"product": "pv"}) and len(pv) == len(every) // 2
    assert all(p["product"] == "pv" for p in pv) and {p["dtype"] for p in pv} == {"f16", "bf16"}
    with pytest.raises(ValueError, match="unknown param 'heads'"):
        param_choices(program, {"heads": "2"}, sweep=True)
    from warpsim.program import Program
    typed = Program(lambda tid, *, n: None, threads=32, params={"n": int})
    with pytest.raises(ValueError, match=r"param 'n' \(int\) has no choices to sweep; give it with --param n=VALUE"):
        param_choices(typed, {}, sweep=True)
    assert param_choices(typed, {"n": "3"}, sweep=True) == [{"n": 3}]


def test_given_inputs_go_to_the_runs_that_declare_them(tmp_path):
    program = load_program(GEMM)
    k = np.full((64, 64), 0x3C00, np.uint16)
    jobs = plan_jobs([(GEMM, program)], {}, {"k": k}, sweep=True)
    assert [j.params for j in jobs] == _sweep(program, {})
    expected = [["k"] if j.params["product"] == "qk" else [] for j in jobs]     # qk reads k, pv reads v
    assert [sorted(j.inputs) for j in jobs] == expected and ["k"] in expected and [] in expected
    with pytest.raises(ValueError, match="--input w: no run of"):
        plan_jobs([(GEMM, program)], {}, {"w": k}, sweep=True)
    with pytest.raises(ValueError, match=r"input 'k' must have shape \(64, 64\)"):
        plan_jobs([(GEMM, program)], {}, {"k": k[:8]}, sweep=True)
    out = run_programs(FakeGpu(), jobs[:1], seeds=2, log=open(os.devnull, "w"))
    assert out.status == "pass"


def test_warps_racing_on_shared_memory_are_reported():
    """Two warps store to the same shared words between the same barriers: a warning in the run and the report."""
    from warpsim.cute import Copy_Atom, UniversalCopy, make_layout, make_smem_ptr, make_tensor, make_tiled_copy
    from warpsim.program import Program, copy
    tc = make_tiled_copy(Copy_Atom(UniversalCopy(32), "u32"), make_layout((32, 1)), make_layout((1, 1)))

    def kernel(tid, *, x):
        s = make_tensor(make_smem_ptr(0, "u32"), make_layout((32, 1)))
        t = tc.get_slice(tid % 32)
        copy(tc, t.partition_S(x), t.partition_D(s))                       # both warps: the same 128 bytes

    program = Program(kernel, threads=64, smem_bytes=128, inputs={"x": ((32, 1), "u32")})
    log = io.StringIO()
    out = run_programs(FakeGpu(), plan_jobs([("inline", program)], {}, {}, sweep=False), seeds=1, log=log)
    (message,) = out.runs[0].warnings
    assert message.startswith("warps 0 and 1 both access shared memory byte 0x0 between barriers 0 and 1")
    assert f"warning: {message}" in log.getvalue()
    assert out.runs[0].as_dict()["warnings"] == [message]


def test_reads_shared_by_warps_are_not_races():
    from hwcheck.runs.races import schedule_dependent_accesses, touched_bytes
    rows = np.arange(32, dtype=np.int64) * 16
    ld = [Instr(Op.LDMATRIX, w, dst=(0,), addr=rows, num=1) for w in range(3)]
    assert schedule_dependent_accesses(ld) == []
    assert touched_bytes(ld[0]).tolist() == list(range(128))              # 8 rows of 16 bytes (.x1)
    st = Instr(Op.ST, 2, src=(0,), addr=rows + 8, space="shared", bits=16)  # one 2-byte element per lane
    first, second = schedule_dependent_accesses(ld + [st])                # warp 2 against warps 0 and 1
    assert first.startswith("warps 0 and 2 both access shared memory byte 0x8 ") and "(warp 2 writes it)" in first
    assert second.startswith("warps 1 and 2 ")
    assert len(schedule_dependent_accesses(ld + [st], limit=1)) == 1
    glob = Instr(Op.ST, 1, src=(0,), addr=rows, space="global", bits=32)
    assert schedule_dependent_accesses(ld + [glob]) == []                  # another memory
