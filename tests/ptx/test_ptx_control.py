"""Control flow under independent thread scheduling: divergence, loops, early exit, reconvergence, calls."""

import numpy as np
import pytest

from warpsim.errors import SimulatorFault
from tests.ptx.ptx_helpers import load, nvcc_ptx, store_r
import warpsim.ptx


def test_if_else_reconverges_before_shfl():
    # odd lanes add 100, even lanes add 200; then a full-warp shfl after the join
    body = """
  and.b32 %r4, %r1, 1;
  setp.eq.u32 %p1, %r4, 0;
  @%p1 bra ELSE;
  add.u32 %r5, %r1, 100;
  bra END;
ELSE:
  add.u32 %r5, %r1, 200;
END:
  shfl.sync.bfly.b32 %r6, %r5, 1, 31, -1;
""" + store_r("%r6")
    out = np.zeros(64, np.uint32)
    res = load(body).launch("k", block=64, args={"out": out})
    t = np.arange(64)
    mine = np.where(t % 2, t + 100, t + 200)
    assert res.buffers["out"].tolist() == mine[t ^ 1].tolist()


def test_loop_with_lane_dependent_trip_count_then_vote():
    # sum 0..lane-1 with a loop of lane iterations, then a ballot of every lane
    body = """
  mov.u32 %r4, 0; mov.u32 %r5, 0;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra DONE;
LOOP:
  add.u32 %r5, %r5, %r4;
  add.u32 %r4, %r4, 1;
  setp.lt.u32 %p2, %r4, %r1;
  @%p2 bra LOOP;
DONE:
  setp.ne.u32 %p3, %r5, 0;
  vote.sync.ballot.b32 %r6, %p3, -1;
  add.u32 %r7, %r5, %r6;
""" + store_r("%r7")
    res = load(body).launch("k", block=32, args={"out": np.zeros(32, np.uint32)})
    t = np.arange(32)
    sums = t * (t - 1) // 2
    ballot = int(sum(1 << i for i in range(32) if sums[i]))
    assert res.buffers["out"].tolist() == ((sums + ballot) & 0xFFFFFFFF).tolist()
    assert res.stats["by_opcode"]["vote"] == 1     # converged: one warp instruction


def test_early_exit_then_barrier_and_partial_warp():
    body = """
  setp.ge.u32 %p1, %r1, 40;
  @%p1 exit;
  bar.sync 0;
""" + store_r("%r1")
    out = np.full(50, 7, np.uint32)
    res = load(body).launch("k", block=50, args={"out": out})
    assert res.buffers["out"].tolist() == list(range(40)) + [7] * 10


def test_sync_collective_waits_for_its_members():
    """A shfl.sync placed before the loop some lanes are still in (as nvcc -G lays out an out-of-line
    __shfl_xor_sync): the lanes that come first wait for the others, as the GPU waits for every member."""
    body = """
  mov.u32 %r2, 0;
  bra.uni LOOP;
SHFL:
  shfl.sync.bfly.b32 %r6, %r2, 1, 31, -1;
  bra.uni DONE;
LOOP:
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r1;
  @%p1 bra LOOP;
  bra.uni SHFL;
DONE:
""" + store_r("%r6")
    res = load(body).launch("k", block=64, args={"out": np.zeros(64, np.uint32)})
    t = np.arange(64)
    trips = np.maximum(1, t)                     # %r1 is %tid.x: lane-dependent trip counts
    assert res.buffers["out"].tolist() == trips[t ^ 1].tolist()


def test_divergent_aligned_instruction_faults():
    body = """
  setp.lt.u32 %p1, %r1, 5;
  @%p1 bra SKIP;
  shfl.sync.idx.b32 %r6, %r1, 0, 31, -1;
SKIP:
""" + store_r("%r1")
    with pytest.raises(SimulatorFault, match=r"shfl\.sync\.idx\.b32.*PTX|lanes 5,.*must arrive together"):
        load(body).launch("k", block=32, args={"out": np.zeros(32, np.uint32)})


def test_divergent_bar_sync_faults_and_names_lanes():
    body = """
  setp.lt.u32 %p1, %r1, 3;
  @%p1 bra SKIP;
  bar.sync 0;
SKIP:
"""
    with pytest.raises(SimulatorFault, match=r"bar\.sync 0.*lanes 3,4.*lanes 0-31"):
        load(body).launch("k", block=32, args={"out": np.zeros(32, np.uint32)})


def test_step_limit():
    body = "LOOP:\n  bra LOOP;\n"
    with pytest.raises(SimulatorFault, match=r"stopped after 1000 warp instructions.*max_steps"):
        load(body).launch("k", block=32, args={"out": np.zeros(32, np.uint32)}, max_steps=1000)


def test_trap_names_thread_and_line():
    body = "  setp.eq.u32 %p1, %r1, 33;\n  @%p1 trap;\n"
    with pytest.raises(SimulatorFault, match=r"trap.*PTX|thread \(33, 0, 0\).*trap"):
        load(body).launch("k", block=64, args={"out": np.zeros(64, np.uint32)})


def test_barrier_orders_warps_through_shared_memory():
    # warp w writes smem[t]; after bar.sync every thread reads the value of thread (t + 32) % 128
    body = """
  mov.u32 %r4, sm;
  shl.b32 %r5, %r1, 2;
  add.u32 %r6, %r4, %r5;
  mul.lo.u32 %r7, %r1, 3;
  st.shared.u32 [%r6], %r7;
  bar.sync 0;
  add.u32 %r8, %r1, 32;
  rem.u32 %r8, %r8, 128;
  shl.b32 %r8, %r8, 2;
  add.u32 %r8, %r4, %r8;
  ld.shared.u32 %r9, [%r8];
""" + store_r("%r9")
    res = load(body, decls=".shared .align 4 .b8 sm[512];").launch("k", block=128, args={"out": np.zeros(128, np.uint32)})
    t = np.arange(128)
    assert res.buffers["out"].tolist() == (((t + 32) % 128) * 3).tolist()


def test_named_barrier_with_thread_count_and_deadlock():
    body = "  bar.sync 1, 64;\n" + store_r("%r1")
    res = load(body).launch("k", block=64, args={"out": np.zeros(64, np.uint32)})
    assert res.buffers["out"].tolist() == list(range(64))
    with pytest.raises(SimulatorFault, match="deadlock"):
        load(body).launch("k", block=32, args={"out": np.zeros(64, np.uint32)})


def test_nvcc_kernel_with_function_call_loop_and_printf(tmp_path, capsys):
    src = r"""
#include <cstdio>
__device__ __noinline__ int collatz(int x) { int n = 0; while (x != 1) { x = (x & 1) ? 3 * x + 1 : x / 2; ++n; } return n; }
__global__ void steps(int* out) {
  int t = threadIdx.x + blockIdx.x * blockDim.x;
  int s = collatz(t + 1);
  if (t % 17 == 3) printf("t=%d steps=%d\n", t, s);
  out[t] = s + __shfl_xor_sync(0xffffffff, s, 1);
}
"""
    mod = warpsim.ptx.load(str(nvcc_ptx(tmp_path, src)))
    (kname,) = mod.kernels
    res = mod.launch(kname, grid=2, block=64, args=[np.zeros(128, np.int32)])

    def collatz(x):
        n = 0
        while x != 1:
            x = 3 * x + 1 if x & 1 else x // 2
            n += 1
        return n
    s = np.array([collatz(t + 1) for t in range(128)])
    assert res.buffers[mod.params(kname)[0][0]].tolist() == (s + s[np.arange(128) ^ 1]).tolist()
    want = [f"t={t} steps={s[t]}\n" for t in range(128) if t % 17 == 3]
    assert [text for _, _, text in res.printf] == want
    assert capsys.readouterr().out == "".join(want)
    assert res.printf[1][:2] == ((0, 0, 0), (20, 0, 0))
    assert res.stats["by_opcode"]["call"] > 0


def test_printf_with_a_string_argument(capsys):
    extra = """
.extern .func (.param .b32 func_retval0) vprintf (.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.global .align 1 .b8 fmt[9] = {37, 115, 61, 37, 48, 52, 120, 10, 0};
.global .align 1 .b8 name[4] = {116, 105, 100, 0};
"""
    body = """
  .local .align 8 .b8 buf[16];
  setp.ne.u32 %p1, %r1, 3;
  @%p1 bra DONE;
  mov.u64 %rd1, buf;
  mov.u64 %rd2, name;
  st.local.u64 [%rd1], %rd2;
  st.local.u32 [%rd1+8], %r1;
  cvta.local.u64 %rd3, %rd1;
  mov.u64 %rd4, fmt;
  {
  .param .b64 param0;
  .param .b64 param1;
  .param .b32 retval0;
  st.param.b64 [param0], %rd4;
  st.param.b64 [param1], %rd3;
  call.uni (retval0), vprintf, (param0, param1);
  ld.param.b32 %r9, [retval0];
  st.global.u32 [%rd10], %r9;
  }
DONE:
"""
    res = load(body, extra=extra).launch("k", block=32, args={"out": np.zeros(1, np.uint32)})
    assert res.printf == [((0, 0, 0), (3, 0, 0), "tid=0003\n")]
    assert res.buffers["out"][0] == 2           # printf returns the number of arguments it parsed
    assert capsys.readouterr().out == "tid=0003\n"
