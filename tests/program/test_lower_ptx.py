"""The dialect lowered to PTX runs on the one core: the same bits as the stream executor, every register.

``run_program`` now runs a traced program as the PTX kernel :mod:`warpsim.program.lower` writes. The stream
executor (still the debugger's engine) is the independent reference here: both run the same stream on the
same inputs, and every register of every lane, shared memory and global memory must agree.
"""

from pathlib import Path

import numpy as np
import pytest

from warpsim.errors import SimulatorFault
from warpsim.program.checks import check_addresses
from warpsim.program.execute import execute
from warpsim.program.instr import Instr, Op
from warpsim.program.lower import KERNEL, lower
from warpsim.program.program import load_program
from warpsim.program.run import execute_trace, prepare

REPO = Path(__file__).resolve().parents[2]


def _both(path, params, seed=0):
    program = load_program(str(REPO / path))
    trace, reference, _inputs, _ = prepare(program, params, seed=seed)
    machine = prepare(program, params, seed=seed)[1]
    execute(trace.stream, trace.encoded, reference)
    execute_trace(trace, machine)
    return trace, reference, machine


@pytest.mark.parametrize("path, params", [
    ("examples/gemm_smem.py", {}),
    ("examples/gemm_smem.py", {"dtype": "bf16", "product": "pv"}),
    ("examples/gemm_smem.py", {"swizzle": "no", "product": "pv"}),
    ("examples/flash_fwd.py", {}),
    ("examples/flash_fwd.py", {"dtype": "bf16", "causal": "yes", "n": "100"}),
])
def test_example_programs_run_on_the_ptx_core_bit_for_bit(path, params):
    trace, reference, machine = _both(path, params, seed=3)
    assert np.array_equal(machine.regs, reference.regs)
    assert np.array_equal(machine.smem, reference.smem)
    assert np.array_equal(machine.gmem, reference.gmem)
    assert reference.regs.any() and machine.gmem.any()          # the run did something


def test_the_lowered_kernel_names_the_program_lines_and_every_stream_position():
    trace = load_program(str(REPO / "examples/gemm_smem.py")).trace({})
    low = trace.lowered
    lines = low.text.splitlines()
    assert '.file 1 "' in low.text and "gemm_smem.py" in low.text
    assert any(line.strip().startswith(".loc 1 ") for line in lines)
    for position in (0, len(trace.stream) // 2, len(trace.stream) - 1):       # the line that runs it
        instr = trace.stream[position]
        assert lines[low.ptx_line[position] - 1].strip().split()[0].lstrip("@%p1 ") in instr.ptx + " @%p1"
    bases = sum(line.strip().startswith(("ld.global.u32 %a", "ld.global.u64 %g")) for line in lines)
    assert low.table.size == low.threads * (bases + low.text.count("ld.global.u64 %rd3") or 1)


def test_accesses_a_constant_apart_share_one_base_register_loaded_once():
    trace = load_program(str(REPO / "examples/gemm_smem.py")).trace({})
    lines = trace.lowered.text.splitlines()
    accesses = [line for line in lines if "[%a" in line or "[%g" in line]
    loads = [line for line in lines if line.strip().startswith(("ld.global.u32 %a", "ld.global.u64 %g"))]
    assert "ld.global.u64 %rd3" not in trace.lowered.text          # no table load per access
    assert len(accesses) == sum(i.addr is not None for i in trace.stream) // trace.warps
    assert 0 < len(loads) <= len(accesses) // 4                    # the k-loop's tiles are one pattern each
    assert all("+-" not in line for line in accesses)              # offsets written from the lowest


def _store_stream(warps, shift):
    """Each warp stores lane ``l``'s register 0 (set to ``100 * warp + l`` through ``MOVL``) to two places a
    constant apart, the higher one first; warp 1 in a phase of its own (its phases differ from warp 0's)."""
    lane = np.arange(32, dtype=np.int64)
    stream = []
    for w in range(warps):
        stream.append(Instr(Op.MOVL, w, dst=(0,), addr=100 * w + lane))
        pattern = 4 * ((lane * 5 + w * shift) % 32) + 128 * w
        for offset in (1024, 0):
            stream.append(Instr(Op.ST, w, src=(0,), addr=pattern + offset, space="global", bits=32))
        if w == 1:
            stream.append(Instr(Op.MOV, w, dst=(1,), imm=7))
    return stream


@pytest.mark.parametrize("max_bases", [256, 1, 0])
def test_bases_hold_per_warp_patterns_and_past_the_limit_each_access_loads_its_row(monkeypatch, max_bases):
    from warpsim.program import lower as lowering
    from warpsim.ptx import load
    monkeypatch.setattr(lowering, "MAX_BASES", max_bases)
    stream = _store_stream(2, shift=3)
    low = lower(stream, warps=2, regs=2, smem_bytes=0)
    assert low.text.count("@%p2 bra") == 2                        # the warps' phases differ
    assert low.text.count("ld.global.u64 %rd3") == 2 + 4 * (max_bases == 0)   # MOVL rows, then the addresses
    result = load(low.text, "t.ptx", ptxas="none").launch(KERNEL, block=64, args={
        "gmem": np.zeros(2048, np.uint8), "table": low.table}, smem=0)
    words = result.buffers["gmem"].view(np.uint32)
    expect = np.zeros(512, np.uint32)
    for instr in stream:
        if instr.op == Op.ST:
            expect[instr.addr // 4] = 100 * instr.warp + np.arange(32)
    assert np.array_equal(words, expect)


def test_a_program_past_the_base_limit_runs_bit_for_bit():
    from warpsim.program import lower as lowering
    saved = lowering.MAX_BASES
    try:
        lowering.MAX_BASES = 1
        trace, reference, machine = _both("examples/gemm_smem.py", {"product": "pv"}, seed=5)
    finally:
        lowering.MAX_BASES = saved
    assert "ld.global.u64 %rd3" in trace.lowered.text
    assert np.array_equal(machine.regs, reference.regs)
    assert np.array_equal(machine.smem, reference.smem)
    assert np.array_equal(machine.gmem, reference.gmem)


def test_divergent_phases_branch_per_warp_and_barriers_stay_outside():
    stream = [Instr(Op.MOV, 0, dst=(0,), imm=1), Instr(Op.MOV, 1, dst=(0,), imm=2),
              Instr(Op.BAR, 0), Instr(Op.BAR, 1), Instr(Op.MOV, 1, dst=(1,), imm=3)]
    low = lower(stream, warps=2, regs=2, smem_bytes=0)
    assert low.text.count("bar.sync 0;") == 1
    assert low.text.count("@%p2 bra") == 3                       # warps 0, 1 before the barrier; warp 1 after
    from warpsim.ptx import load
    result = load(low.text, "t.ptx", ptxas="none").launch(KERNEL, block=64, args={
        "gmem": np.zeros(8, np.uint8), "table": low.table}, smem=0)
    regs = result.machine.regs
    assert regs[0, :, 0].tolist() == [1] * 32 and regs[1, :, 0].tolist() == [2] * 32
    assert regs[0, :, 1].tolist() == [0] * 32 and regs[1, :, 1].tolist() == [3] * 32


def test_lowering_refuses_what_it_cannot_write():
    with pytest.raises(ValueError, match=r"instruction 0 \(mov.b32\) uses register r5, outside the 2 registers"):
        lower([Instr(Op.MOV, 0, dst=(5,))], warps=1, regs=2, smem_bytes=0)
    with pytest.raises(ValueError, match=r"different numbers of bar.sync: \[1, 0\]"):
        lower([Instr(Op.BAR, 0)], warps=2, regs=1, smem_bytes=0)


def test_addresses_are_proven_before_anything_runs():
    addr = np.arange(32, dtype=np.int64) * 4
    store = Instr(Op.ST, 0, src=(0,), addr=addr + 128, space="shared", bits=32)
    check_addresses([store], smem_bytes=256, gmem_bytes=0)               # lanes 0..31 end at 256
    with pytest.raises(SimulatorFault, match=r"st.shared.b32: warp 0 lane 0: address 0x80 \+ 4 bytes is outside "
                                             r"shared memory \[0, 0x80\) \(instruction 0 of the stream\)"):
        check_addresses([store], smem_bytes=0x80, gmem_bytes=0)
    pred = np.zeros(32, np.int64)
    pred[:4] = 1
    masked = Instr(Op.ST, 0, src=(0,), addr=addr + 128, space="shared", bits=32, pred=pred)
    check_addresses([masked], smem_bytes=0x90, gmem_bytes=0)           # lanes 4.. are off: no access
    ld = Instr(Op.LDMATRIX, 0, dst=(0,), addr=np.r_[np.arange(8) * 16, np.full(24, 7)], num=1)
    check_addresses([ld], smem_bytes=128, gmem_bytes=0)                  # only lanes 0..7 give rows


@pytest.mark.parametrize("max_predicates", [64, 0])
@pytest.mark.parametrize("n", [None, "100"])
def test_instructions_with_one_predicate_share_a_register_set_at_entry(monkeypatch, max_predicates, n):
    """flash_fwd's 38 predicated accesses a warp have two predicates between them at the default N: two registers
    set at entry, no table load at the accesses; at N = 100 (a tile cut short) a few more; with none allowed, each
    loads its row. The same bits as the stream executor every way."""
    from warpsim.program import lower as lowering
    monkeypatch.setattr(lowering, "MAX_PREDICATES", max_predicates)
    trace, reference, machine = _both("examples/flash_fwd.py", {} if n is None else {"n": n}, seed=4)
    text = trace.lowered.text
    guarded = [line.split()[0] for line in text.splitlines() if line.strip().startswith(("@%q", "@%p1"))]
    assert len(guarded) == sum(i.pred is not None for i in trace.stream) // trace.warps
    if max_predicates and n is None:
        assert set(guarded) == {"@%q0", "@%q1"} and "setp.ne.s64 %p1" not in text
    elif max_predicates:
        assert "@%p1" not in guarded and len(set(guarded)) < len(guarded) / 4
    else:
        assert "%q" not in text and text.count("setp.ne.s64 %p1, %rd3, 0;") == len(guarded)
    assert np.array_equal(machine.regs, reference.regs)
    assert np.array_equal(machine.smem, reference.smem)
    assert np.array_equal(machine.gmem, reference.gmem)


def test_a_base_never_spans_a_32_bit_offset():
    """Two stores of one pattern 2**31 bytes apart (PTX's [reg+imm] takes a signed 32-bit immediate): two bases."""
    lane = np.arange(32, dtype=np.int64) * 4
    stream = [Instr(Op.ST, 0, src=(0,), addr=lane + offset, space="global", bits=32) for offset in (0, 1 << 31, 64)]
    text = lower(stream, warps=1, regs=1, smem_bytes=0).text
    assert [line.split()[1] for line in text.splitlines() if line.strip().startswith("st.global")] == \
        ["[%g0+0],", "[%g1+0],", "[%g0+64],"]
