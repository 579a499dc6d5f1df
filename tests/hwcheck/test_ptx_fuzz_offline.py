"""``hwcheck fuzz`` offline: generated programs assemble, the simulator standing in for the GPU agrees with
itself over the whole command, and a planted disagreement in one instruction's semantics is found."""

import json
import os
import shutil
import subprocess
import time

import numpy as np
import pytest

from hwcheck.cli.main import main
import hwcheck.campaigns.ptx_fuzz
from hwcheck.campaigns.ptx_fuzz import KERNEL, OUT_WORDS, R32, fuzz, program
from hwcheck.runs.ptx_run import SimulatorAsGpu

IN_CI = os.environ.get("CI") == "true"


def _stand_in(monkeypatch, gpu_ptx):
    import hwcheck.device.gpu
    import hwcheck.runs.ptx_run
    from fake_gpu import INFO

    class Opened:
        info = INFO
    monkeypatch.setattr(hwcheck.device.gpu.Gpu, "open", classmethod(lambda cls, device=0: Opened()))
    monkeypatch.setattr(hwcheck.runs.ptx_run, "CupyPtx", lambda gpu, ptxas="auto": gpu_ptx)


def test_programs_are_repeatable_and_varied():
    texts = [program(s).text for s in range(40)]
    assert program(7).text == texts[7] and len(set(texts)) == 40
    joined = "\n".join(texts)
    for op in ("div.", "rem.", "mul.wide", "mad.", "bfe.", "bfi.", "prmt.", "popc.", "clz.", "brev.", "setp.",
               "selp.", "cvt.", "shfl.sync", "vote.sync", "$L_loop", "$L_else", "bra $L_store"):
        assert op in joined, op


@pytest.mark.parametrize("seed", range(20))
def test_generated_programs_assemble(seed, tmp_path):
    if shutil.which("ptxas") is None:
        if IN_CI:
            pytest.fail("ptxas not found (required in CI)")
        pytest.skip("ptxas (CUDA toolkit) not found on PATH")
    from hwcheck.device.instrument import instrument
    prog = program(seed)
    for name, text in (("k", prog.text), ("ins", instrument(prog.text, KERNEL, capacity=256).text)):
        path = tmp_path / f"{name}.ptx"
        path.write_text(text)
        done = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", os.devnull], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[:2000]


def test_cli_with_the_simulator_as_gpu_passes(monkeypatch, capsys, tmp_path, request):
    """The whole command on 20 random programs (50 with --slow: ~0.2 s a program on 2 cores)."""
    _stand_in(monkeypatch, SimulatorAsGpu())
    report = tmp_path / "fuzz.json"
    n = 50 if request.config.getoption("--slow") else 20
    assert main(["fuzz", "--count", str(n), "--seed", "1000", "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert f"{n} programs, 0 mismatched, 0 errors" in out
    data = json.loads(report.read_text())
    assert data["status"] == "pass" and data["kind"] == "ptx-fuzz" and data["failing_programs"] == []
    assert data["totals"]["programs"] == n and data["totals"]["trace_records_compared"] > n * 32 * 10
    assert data["command"] == f"hwcheck fuzz --count {n} --seed 1000 --report {report}"


class _PopcIsClz(SimulatorAsGpu):
    """A machine whose ``popc.b32`` counts leading zeros instead (the planted bug)."""

    def load(self, text):
        return super().load(text.replace("popc.b32", "clz.b32"))


def test_a_planted_bug_is_found_and_its_program_kept(tmp_path):
    report = tmp_path / "fuzz.json"
    summary, code = fuzz(_PopcIsClz(), 30, seed=0, report=str(report), log=open(os.devnull, "w"))
    assert code == 1 and summary.errors == 0
    # a popc that no thread executes, or whose count equals the leading zeros, cannot show
    assert 0 < summary.mismatched_programs <= sum("popc.b32" in program(s).text for s in range(30))
    data = json.loads(report.read_text())
    first = data["failing_programs"][0]
    assert data["status"] == "fail" and "popc.b32" in first["ptx"] and first["ptx"] == program(first["seed"]).text
    registers = [m for m in first["mismatches"] if "register" in m]
    assert registers and registers[0]["instruction"] == "popc.b32"
    # register records come before buffer records
    kinds = ["step" not in m for m in first["mismatches"]]
    assert kinds == sorted(kinds)
    # every failing program has its earliest wrong register, with the PTX line as the program has it
    firsts = data["first_mismatches"]
    assert len(firsts) == summary.mismatched_programs == data["totals"]["first_opcodes"]["popc.b32"]
    for f in firsts:
        lines = program(f["seed"]).text.splitlines()
        assert f["opcode"] == f["instruction"] == "popc.b32" and f["ptx"] == lines[f["ptx_line"] - 1].strip()
        assert f["ptx"].startswith("popc.b32 ") and f["expected"] != f["actual"]
    assert summary.opcode_lines() == [f"popc.b32: {len(firsts)} program{'s' * (len(firsts) != 1)}"]


def test_the_first_record_is_the_earliest_step(tmp_path):
    """Two planted bugs: the record kept as first is the one of the smallest dynamic step of its program."""
    from hwcheck.runs.ptx_run import PtxJob, PtxRun, run_one
    from warpsim.frontends.args import parse_arg

    class TwoBugs(SimulatorAsGpu):
        def load(self, text):
            return super().load(text.replace("popc.b32", "clz.b32").replace("brev.b32", "not.b32"))
    quiet = open(os.devnull, "w")
    for seed in (s for s in range(300) if "popc.b32" in program(s).text and "brev.b32" in program(s).text):
        prog = program(seed)
        path = tmp_path / f"k{seed}.ptx"
        path.write_text(prog.text)
        n = prog.block
        specs = dict(parse_arg(a) for a in (f"inp=random:u32:{n * 16}", f"out=zeros:u32:{n * OUT_WORDS}"))
        run = PtxRun(PtxJob(str(path), KERNEL, (1, 1, 1), (n, 1, 1), 0, specs))
        run_one(TwoBugs(), run.job, seeds=1, first_seed=seed, arch="sm90", log=quiet, run=run)
        wrong = [r for r in run.records if "step" in r]
        if len({r["instruction"] for r in wrong}) == 2:
            break
    else:
        pytest.skip("no generated program among the first 300 executes both planted bugs")
    first = run.first_register
    # the kept records are the first threads'; the first record is the smallest step of any thread
    assert first["step"] <= min(r["step"] for r in wrong) and first["expected"] != first["actual"]
    assert first["instruction"] in ("popc.b32", "brev.b32")
    assert first["ptx"] == prog.text.splitlines()[first["ptx_line"] - 1].strip()


def test_a_64_bit_immediate_above_2_63_is_its_bit_pattern():
    """Found by the fuzzer: ``mov.b64 %rd, 0xFFFF...`` overflowed the decoder's int64 operand table."""
    from warpsim import ptx
    text = program(0).text.replace("$L_store:", "$L_store:\n  mov.b64 %rd5, 0xFEDCBA9876543210;")
    n = program(0).block
    args = {"inp": np.zeros(n * 16, np.uint32), "out": np.zeros(n * OUT_WORDS, np.uint32)}
    out = ptx.load(text).launch(KERNEL, block=n, args=args, quiet=True).buffers["out"].reshape(n, OUT_WORDS)
    assert (out[:, R32 + 10].astype(np.uint64) | out[:, R32 + 11].astype(np.uint64) << np.uint64(32)
            == 0xFEDCBA9876543210).all()


def test_workers_split_the_programs_and_merge_the_totals(monkeypatch):
    monkeypatch.setattr(hwcheck.campaigns.ptx_fuzz, "CHUNK", 2)
    quiet = open(os.devnull, "w")
    one, code1 = fuzz(_PopcIsClz(), 6, seed=40, log=quiet)
    two, code2 = fuzz(None, 6, seed=40, log=quiet, workers=2, make_gpu_ptx=_PopcIsClz)
    assert code1 == code2 == 1 and one.programs == two.programs == 6
    for key in ("mismatched_programs", "errors", "trace_records_compared", "global_elements_compared", "first_opcodes"):
        assert getattr(one, key) == getattr(two, key), key


# Values the H200 gave in the first fuzz campaign (conformance/h200/h200-ptx-fuzz.json as committed on
# 2026-12-01, before the interpreter's cvt/bfe fixes): (seed, "register", thread, dynamic step, value) for a register
# record of the instrumented run, (seed, "out", index, None, value) for an element of the output buffer.
H200_RECORDS = [
    (100000, "register", 5, 49, 0xffff8000),            # cvt.sat.s16.s32 into a .b32 register
    (100000, "register", 5, 50, 0xffff0000),            # add.u32 of it
    (100000, "out", 124, None, 0x73c0215e),
    (100000, "out", 125, None, 0xffff0000),
    (100009, "register", 2, 36, 0xffffffffffffffff),    # bfe.s64, position 0x1f5b9200
    (100009, "register", 15, 36, 0xffffffffffffffff),
    (100009, "out", 60, None, 0xffffffff),
    (100017, "register", 2, 35, 0x0000000000000000),    # bfe.s64, position and length from registers
    (100017, "register", 6, 35, 0xffffffffffffffff),
    (100017, "out", 162, None, 0xffffffff),
    (100018, "register", 1, 48, 0xe8ba11544ee88269),    # bfe.s64, length 0x0b0b0b0b
    (100018, "register", 1, 49, 0xef9e06f0283a8067),    # mad.wide.s32 of it
    (100018, "out", 41, None, 0xe8ba1154),
    (100022, "register", 0, 45, 0xffffffff),            # bfe.s32 with a position ptxas knows (folded)
    (100022, "register", 0, 50, 0xffffffffffffffff),    # bfe.s64
    # the second campaign (2026-12-01 evening): bfi.b32 with a known position in 1..31 and a known length >= 32,
    # which ptxas folds with the length mod 32 (SHF + LOP3)
    (100205, "register", 12, 48, 0xef91cab3),   # bfi.b32 %r4, %r4, %r4, 1, 33;
    (100786, "register", 8, 43, 0x980c44f9),   # bfi.b32 %r1, %r1, %r0, 1, 64;
    (101972, "register", 8, 39, 0x05b0ad3a),   # bfi.b32 %r11, %r2, %r10, 31, 32;
    (102024, "register", 13, 51, 0xaf2f707c),   # bfi.b32 %r10, %r5, %r1, 31, 32;
    (102475, "register", 1, 41, 0xe3e8a28b),   # bfi.b32 %r5, %r2, %r2, 7, 64;
    (102542, "register", 9, 57, 0xffffffd1),   # bfi.b32 %r6, %r0, %r8, 1, %r9;
    (102597, "register", 2, 36, 0x9e7243bc),   # bfi.b32 %r9, %r9, %r6, 7, 32;
    (102684, "register", 4, 41, 0xd5d290d0),   # bfi.b32 %r3, %r0, %r0, 1, 64;
    # the third (conformance/h200/h200-ptx-fuzz.json): positions that are multiples of 8 (PRMT), and a known b
    # (LEA/IMAD), which ptxas folds as the ISA says
    (100538, "register", 13, 44, 0x85561b10),   # bfi.b32 %r1, %r4, %r10, 16, 32;
    (101010, "register", 2, 49, 0x7344fcfc),   # bfi.b32 %r0, %r0, %r0, 8, 64;
    (101588, "register", 1, 59, 0xa3a455fa),   # bfi.b32 %r7, %r0, %r9, 8, 64;
    (103836, "register", 17, 46, 0x72130013),   # bfi.b32 %r9, %r5, %r6, 8, 64;
    # bfe.s32 that ptxas folds to all ones: the position a cvt of a 64-bit constant (cvt.s32.s64 %r5, %rd5), and a
    # position and length in the bfe's segment with an `a` set by mov before a 64-bit bfe (warpsim.ptx.constants)
    (105231, "register", 14, 51, 0xffffffff),   # bfe.s32 %r7, %r7, %r5, 32;
    (107088, "register", 0, 46, 0xffffffff),    # bfe.s32 %r0, %r9, 255, 64; (mov.u32 %r9, 399750814 ... bfe.u64)
]


@pytest.mark.parametrize("seed", sorted({r[0] for r in H200_RECORDS}))
def test_the_interpreter_gives_what_the_h200_gave(seed):
    from hwcheck.device.instrument import TRACE_PARAM, instrument
    from warpsim.frontends.args import concrete_args, parse_arg
    from hwcheck.device.shared_capture import SHARED_PARAM
    from warpsim import ptx
    prog = program(seed)
    n = prog.block
    specs = dict(parse_arg(a) for a in (f"inp=random:u32:{n * 16}", f"out=zeros:u32:{n * OUT_WORDS}"))
    args = concrete_args(specs, seed)
    out = ptx.load(prog.text).launch(KERNEL, block=n, args=dict(args), quiet=True).buffers["out"]
    ins = instrument(prog.text, KERNEL, capacity=4096)
    args[TRACE_PARAM] = np.zeros(ins.buffer_bytes(n) // 4, np.uint32)
    args[SHARED_PARAM] = np.zeros(ins.capture.buffer_bytes(1, 0) // 4, np.uint32)
    words = ptx.load(ins.text).launch(KERNEL, block=n, args=args, quiet=True).buffers[TRACE_PARAM].reshape(n, -1)
    records = words[:, ins.header_bytes // 4:].reshape(n, ins.capacity, 4)
    for _seed, what, where, step, want in (r for r in H200_RECORDS if r[0] == seed):
        if what == "out":
            assert int(out[where]) == want, f"seed {seed} out[{where}]: {int(out[where]):#x}, the H200 {want:#x}"
            continue
        rec = next(r for r in records[where, :int(words[where, 1])] if int(r[1]) == step)
        got = int(rec[2]) | int(rec[3]) << 32
        assert got == want, f"seed {seed} thread {where} step {step}: {got:#x}, the H200 {want:#x}"


def test_a_gpu_whose_original_kernel_alone_differs_is_named_for_it(tmp_path):
    """The GPU's original kernel stores a different word, its instrumented copy (every register traced) does not: the
    program is counted under COMPILED_APART (a compiler that made the two kernels differ, as ptxas's dropped mad.hi),
    not under the plain buffer-only key; the report's record says on which side the two kernels differ."""
    from hwcheck.campaigns.ptx_fuzz import COMPILED_APART

    def original_only(kind, buffers):
        if kind == "original":
            buffers["out"][3] ^= 1
    report = tmp_path / "fuzz.json"
    summary, code = fuzz(SimulatorAsGpu(corrupt=original_only), 3, seed=7, report=str(report),
                         log=open(os.devnull, "w"))
    assert code == 1 and summary.first_opcodes == {COMPILED_APART: 3}
    data = json.loads(report.read_text())
    apart = [r for r in data["failing_programs"][0]["mismatches"] if "gpu_bytes" in r]
    assert apart and apart[0]["gpu_bytes"] == 1 and apart[0]["simulator_bytes"] == 0
    first = apart[0]["first"]                       # where: the word, the simulator's two runs, the GPU's
    assert first["buffer"] == "out" and first["word"] == 3 and first["simulator"][0] == first["simulator"][1]
    assert int(first["gpu"][0], 16) ^ int(first["gpu"][1], 16) == 1
    assert all(f["buffer"]["index"] == 3 for f in data["first_mismatches"])


class _SlowGpu(SimulatorAsGpu):
    """The simulator as GPU, a quarter of a second per program loaded."""

    def load(self, text):
        time.sleep(0.25)
        return super().load(text)


def test_a_time_limit_keeps_the_programs_run_so_far_in_seed_order(monkeypatch, tmp_path):
    """``--time-limit``: no task starts after it; the programs done are seeds S..S+n-1 and the report says where it
    stopped. Without reaching the limit all run and nothing is said."""
    monkeypatch.setattr(hwcheck.campaigns.ptx_fuzz, "TIMED_CHUNK", 2)
    quiet, report = open(os.devnull, "w"), tmp_path / "r.json"
    cut, _ = fuzz(_SlowGpu(), 40, seed=40, log=quiet, time_limit=1, report=str(report))
    data = json.loads(report.read_text())
    n = cut.programs
    assert 2 <= n < 40 and n % 2 == 0
    assert data["stopped"] == f"the time limit (1 s): {n} of 40 programs, seeds 40..{39 + n}"
    assert data["settings"]["time_limit_s"] == 1 and data["totals"]["programs"] == n
    whole, _ = fuzz(_PopcIsClz(), 4, seed=40, log=quiet, time_limit=3600, report=str(report))
    assert whole.programs == 4 and "stopped" not in json.loads(report.read_text())


def test_workers_past_the_time_limit_start_no_task(monkeypatch):
    """The tasks the workers took before the limit finish; the others never start: a prefix of the seeds."""
    monkeypatch.setattr(hwcheck.campaigns.ptx_fuzz, "TIMED_CHUNK", 2)
    cut, _ = fuzz(None, 200, seed=40, log=open(os.devnull, "w"), workers=2, make_gpu_ptx=_PopcIsClz, time_limit=1)
    assert cut.programs < 200 and cut.programs % 2 == 0
