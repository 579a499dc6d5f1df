"""The executor: single steps equal a whole run; snapshots fill hwcheck's slot table; warps meet at barriers."""

from pathlib import Path

import numpy as np
import pytest

from warpsim import SimulatorFault
from warpsim.cute import Copy_Atom, UniversalCopy, make_layout, make_smem_ptr, make_tensor, make_tiled_copy
from warpsim.program import Program, copy, load_program, syncthreads
from warpsim.program.encode import encode
from warpsim.program.execute import execute
from warpsim.program.instr import Instr, Op
from warpsim.program.lower import lower
from warpsim.program.run import prepare, run_program

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gemm_smem.py"


@pytest.fixture(scope="module")
def program():
    return load_program(EXAMPLE)


def test_single_steps_equal_one_run(program):
    trace, whole, _inputs, _t = prepare(program, {"product": "pv"}, seed=4)
    _trace, stepped, _inputs, _t = prepare(program, {"product": "pv"}, seed=4)
    execute(trace.stream, trace.encoded, whole)
    for i in range(len(trace.stream)):
        assert execute(trace.stream, trace.encoded, stepped, start=i, stop=i + 1) == i + 1
    assert np.array_equal(whole.regs, stepped.regs)
    assert np.array_equal(whole.smem, stepped.smem) and np.array_equal(whole.gmem, stepped.gmem)


@pytest.mark.parametrize("arch", ["sm90", "sm80"])
def test_snapshots_fill_hwchecks_slot_table(program, arch):
    """Every destination register after every instruction, at the slot hwcheck's lowering gives it."""
    trace, machine, _inputs, _t = prepare(program, {"dtype": "bf16"}, seed=2)
    low = lower(trace.stream, warps=trace.warps, regs=trace.regs_per_thread, smem_bytes=trace.smem_bytes,
                snapshots=True)
    snap = np.full((low.snap_positions, trace.threads), 0xDEADBEEF, np.uint32)
    execute(trace.stream, trace.encoded, machine, arch=arch, snapshots=(low.snap_slots, snap))
    _trace, stepped, _inputs, _t = prepare(program, {"dtype": "bf16"}, seed=2)
    filled = np.zeros(snap.shape, bool)
    for i, instr in enumerate(trace.stream):
        execute(trace.stream, trace.encoded, stepped, arch=arch, start=i, stop=i + 1)
        lanes = slice(32 * instr.warp, 32 * instr.warp + 32)
        for j, reg in enumerate(instr.dst):
            slot = low.snap_slots[i, j]
            assert slot >= 0
            assert np.array_equal(snap[slot, lanes], stepped.regs[instr.warp, :, reg]), \
                f"instruction {i} ({instr.ptx}, warp {instr.warp}) register r{reg}: snapshot differs"
            filled[slot, lanes] = True
    assert filled.all(), "every snapshot position of every thread is written once"


def test_barrier_orders_warps_through_shared_memory():
    """Warp 1 writes shared memory before the barrier, warp 0 reads it after: y == x."""
    tc = make_tiled_copy(Copy_Atom(UniversalCopy(32), "u32"), make_layout((32, 1)), make_layout((1, 1)))

    def kernel(tid, *, x, y):
        s = make_tensor(make_smem_ptr(0, "u32"), make_layout((32, 2), (2, 1)))
        t = tc.get_slice(tid % 32)
        if tid // 32 == 1:                                   # warp-uniform branches
            copy(tc, t.partition_S(x), t.partition_D(s))
        syncthreads()
        if tid // 32 == 0:
            copy(tc, t.partition_S(s), t.partition_D(y))

    program = Program(kernel, threads=64, smem_bytes=256, inputs={"x": ((32, 2), "u32")},
                      outputs={"y": ((32, 2), "u32")})
    r = run_program(program, seed=1)
    assert np.array_equal(r.outputs["y"], r.inputs["x"])
    warps = [i.warp for i in r.trace.stream]
    bar = [k for k, i in enumerate(r.trace.stream) if i.op == Op.BAR]
    assert warps[:bar[0]] == [1] * 4 and all(w == 0 for w in warps[bar[-1] + 1:])


def test_fault_stops_at_the_faulting_instruction():
    stream = [Instr(Op.MOV, 0, dst=(0,), imm=5),
              Instr(Op.LD, 0, dst=(1,), addr=np.full(32, 4096, np.int64), space="shared", bits=32),
              Instr(Op.MOV, 0, dst=(2,), imm=6)]
    from warpsim.machine import Machine
    m = Machine(1, 3, 1024)
    with pytest.raises(SimulatorFault, match=r"ld.shared.b32: warp 0 lane 0: address 0x1000 \+ 4 bytes is outside "
                                             r"shared memory \[0, 0x400\) \(instruction 1 of the stream\)"):
        execute(stream, encode(stream), m)
    assert (m.regs[0, :, 0] == 5).all() and (m.regs[0, :, 2] == 0).all()


def test_encode_refuses_what_the_executor_cannot_take():
    with pytest.raises(ValueError, match="one per lane"):
        encode([Instr(Op.LD, 0, dst=(0,), addr=np.zeros(16, np.int64), space="shared", bits=32)])
    with pytest.raises(ValueError, match="unknown state space"):
        encode([Instr(Op.LD, 0, dst=(0,), addr=np.zeros(32, np.int64), space="local", bits=32)])
    with pytest.raises(ValueError, match="at most 4"):
        encode([Instr(Op.MOV, 0, dst=(0, 1, 2, 3, 4))])
