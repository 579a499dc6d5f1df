"""Stepping a launch (``PtxModule.start``): any split into steps gives the launch's result."""

import numpy as np
import pytest

from warpsim.errors import SimulatorFault
from tests.ptx.ptx_helpers import load, store_r

# two warps, divergent loop, a barrier, shared memory, a reduction through atomics
BODY = """
  mov.u32 %r4, 0;
  and.b32 %r5, %r1, 7;
LOOP:
  add.u32 %r4, %r4, %r5;
  sub.u32 %r5, %r5, 1;
  setp.ne.u32 %p1, %r5, 0xFFFFFFFF;
  @%p1 bra LOOP;
  mov.u32 %r6, sm;
  shl.b32 %r7, %r1, 2;
  add.u32 %r8, %r6, %r7;
  st.shared.u32 [%r8], %r4;
  bar.sync 0;
  xor.b32 %r9, %r1, 32;
  shl.b32 %r9, %r9, 2;
  add.u32 %r9, %r6, %r9;
  ld.shared.u32 %r10, [%r9];
  atom.shared.add.u32 %r11, [%r6+256], %r10;
  bar.sync 0;
  ld.shared.u32 %r12, [%r6+256];
  add.u32 %r13, %r10, %r12;
""" + store_r("%r13")


def _module():
    return load(BODY, decls=".shared .align 4 .b8 sm[260];")


@pytest.mark.parametrize("n", [1, 7, 64, 10**6])
def test_any_step_size_gives_the_launch_result(n):
    mod = _module()
    args = lambda: {"out": np.zeros(128, np.uint32)}       # noqa: E731
    want = mod.launch("k", grid=2, block=64, args=args())
    run = mod.start("k", grid=2, block=64, args=args())
    calls = 0
    while run.step(n):
        calls += 1
        assert run.steps == min(calls * n, want.stats["warp_instructions"])
    got = run.result()
    assert np.array_equal(got.buffers["out"], want.buffers["out"])
    assert got.stats == want.stats
    assert not run.step(1)


def test_where_names_each_threads_next_instruction():
    run = _module().start("k", block=64, args={"out": np.zeros(64, np.uint32)})
    assert "mov.u32 %r1, %tid.x" in run.where(0).text
    run.step(5)
    assert run.pc[0] == 5 and run.pc[40] == 0           # warp 0 runs first; warp 1 has not started
    while run.status[0] == 0:
        run.step(1)
    assert run.status[0] == 2 and "bar.sync 0" in run.where(0).text   # waiting at the first barrier
    run.run()
    assert run.where(0) is None and run.finished


def test_a_fault_while_stepping_and_the_step_limit():
    mod = load("  add.s64 %rd30, %rd10, 4096;\n  st.global.u32 [%rd30], %r1;\n")
    run = mod.start("k", block=32, args={"out": np.zeros(4, np.uint32)})
    assert run.step(3)
    with pytest.raises(SimulatorFault, match="not inside one global buffer"):
        run.step(8)
    run = load("LOOP:\n  bra LOOP;\n").start("k", block=32, args={"out": np.zeros(4, np.uint32)}, max_steps=50)
    assert run.step(30) and run.steps == 30
    with pytest.raises(SimulatorFault, match="stopped after 50 warp instructions"):
        run.step(30)
