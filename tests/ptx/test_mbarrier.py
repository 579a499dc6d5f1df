"""mbarrier in the PTX core: phases, arrivals and transaction bytes, try_wait that waits for another warp, the token
and its pending count, and the deadlock and misuse errors (each naming the barrier and the line)."""

import numpy as np
import pytest

import warpsim.ptx
from warpsim.errors import SimulatorFault

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 arrivals)
{
  .reg .b32 %r<16>; .reg .b64 %rd<16>; .reg .pred %p<8>;
  .shared .align 8 .b64 bar;
  .shared .align 4 .b32 box[64];
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u32 %r9, [arrivals];
  mov.u32 %r1, %tid.x;
  shr.u32 %r2, %r1, 5;                       // warp
  mov.u32 %r3, bar;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra INIT_DONE;
  mbarrier.init.shared::cta.b64 [%r3], %r9;
INIT_DONE:
  bar.sync 0;
"""
TAIL = """  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r5;
  ret;
}
"""
# warp 0 waits for phase 0; warp 1 stores 100 + lane into box, then every lane of it arrives
PRODUCER_CONSUMER = """  setp.eq.u32 %p2, %r2, 0;
  @%p2 bra CONSUMER;
  and.b32 %r4, %r1, 31;
  add.u32 %r5, %r4, 100;
  mov.u32 %r6, box;
  shl.b32 %r7, %r4, 2;
  add.u32 %r6, %r6, %r7;
  st.shared.u32 [%r6], %r5;
  mbarrier.arrive.shared::cta.b64 %rd4, [%r3];
  mbarrier.pending_count.b64 %r5, %rd4;
  bra.uni DONE;
CONSUMER:
  mov.u32 %r8, 0;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r3], %r8;
  @!%p3 bra WAIT;
  mov.u32 %r6, box;
  shl.b32 %r7, %r1, 2;
  add.u32 %r6, %r6, %r7;
  ld.shared.u32 %r5, [%r6];
DONE:
"""


def _run(body, arrivals=32, block=64):
    m = warpsim.ptx.load(HEAD + body + TAIL, filename="k.ptx")
    return m.launch("k", block=block, args={"out": np.zeros(block, np.uint32), "arrivals": arrivals}).buffers["out"]


def test_a_warp_waits_at_try_wait_until_another_warp_completes_the_phase():
    out = _run(PRODUCER_CONSUMER)
    assert list(out[:32]) == [100 + lane for lane in range(32)]          # the consumer saw every store
    assert list(out[32:]) == list(range(31, -1, -1))                     # pending arrivals after each lane's arrival


def test_a_phase_that_can_never_complete_is_a_deadlock_naming_the_barrier():
    with pytest.raises(SimulatorFault, match=r"^k: deadlock in CTA \(0, 0, 0\): warp 0 lane 0 waits at "
                                             r"mbarrier\.try_wait\.parity\.shared::cta\.b64 %p3, \[%r3\], %r8 "
                                             r"\(k\.ptx:\d+\) for the mbarrier at shared 0x400, whose phase 0 waits "
                                             r"for 16 of 48 arrivals and 0 transaction bytes"):
        _run(PRODUCER_CONSUMER, arrivals=48)


TX = """  setp.eq.u32 %p2, %r1, 32;
  @!%p2 bra SKIP;
  mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [%r3], 16;
  mbarrier.complete_tx.shared::cta.b64 [%r3], 12;
SKIP:
  mov.u32 %r8, 0;
  mbarrier.test_wait.parity.shared::cta.b64 %p3, [%r3], %r8;
  selp.u32 %r5, 1, 0, %p3;
  @%p2 mbarrier.complete_tx.shared::cta.b64 [%r3], 4;
  bar.sync 0;
  mbarrier.test_wait.parity.shared::cta.b64 %p4, [%r3], %r8;
  selp.u32 %r10, 2, 0, %p4;
  or.b32 %r5, %r5, %r10;
"""


def test_transaction_bytes_hold_the_phase_until_they_complete():
    out = _run(TX, arrivals=1)
    assert set(out) == {2}           # not complete with 4 bytes outstanding, complete after the last complete_tx


def test_an_address_without_an_mbarrier_is_named():
    body = "  mov.u32 %r8, box;\n  mbarrier.arrive.shared::cta.b64 %rd4, [%r8];\n  mov.u32 %r5, 0;\n"
    with pytest.raises(SimulatorFault, match=r"mbarrier\.arrive\.shared::cta\.b64 %rd4, \[%r8\] \(k\.ptx:\d+\): .*: "
                                             r"address 0x408 holds no mbarrier \(mbarrier\.init it first\)"):
        _run(body)


BULK = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 src, .param .u32 size)
{
  .reg .b32 %r<16>; .reg .b64 %rd<16>; .reg .pred %p<8>;
  .shared .align 8 .b64 bar;
  .shared .align 16 .b32 box[32];
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u64 %rd5, [src];
  cvta.to.global.u64 %rd5, %rd5;
  ld.param.u32 %r9, [size];
  mov.u32 %r1, %tid.x;
  mov.u32 %r3, bar;
  mov.u32 %r6, box;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra WAIT_ALL;
  mbarrier.init.shared::cta.b64 [%r3], 1;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], %r9;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r6], [%rd5], %r9, [%r3];
WAIT_ALL:
  bar.sync 0;
  mov.u32 %r8, 0;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r3], %r8;
  @!%p3 bra WAIT;
  shl.b32 %r7, %r1, 2;
  add.u32 %r6, %r6, %r7;
  ld.shared.u32 %r5, [%r6];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r5;
  ret;
}
"""


def _bulk(size):
    m = warpsim.ptx.load(BULK, filename="b.ptx")
    src = np.arange(100, 132, dtype=np.uint32)
    return m.launch("k", block=32, args={"out": np.zeros(32, np.uint32), "src": src, "size": size}).buffers["out"]


def test_a_bulk_copy_completes_its_transaction_bytes_on_the_mbarrier():
    assert list(_bulk(128)) == list(range(100, 132))


def test_a_bulk_copy_of_a_size_not_a_multiple_of_16_is_named():
    with pytest.raises(SimulatorFault, match=r"cp\.async\.bulk\.shared::cluster\.global.* \(b\.ptx:\d+\): CTA \(0, 0, 0\) "
                                             r"thread \(0, 0, 0\) \(warp 0 lane 0\): address 0x14 is not 16-byte aligned"):
        _bulk(20)


ASYNC_ARRIVE = BULK.replace("""  mbarrier.init.shared::cta.b64 [%r3], 1;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], %r9;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r6], [%rd5], %r9, [%r3];
WAIT_ALL:
  bar.sync 0;""", """  mbarrier.init.shared::cta.b64 [%r3], 1;
WAIT_ALL:
  bar.sync 0;
  shl.b32 %r7, %r1, 2;
  add.u32 %r10, %r6, %r7;
  mul.wide.u32 %rd6, %r1, 4;
  add.s64 %rd7, %rd5, %rd6;
  @!%p1 cp.async.ca.shared.global [%r10], [%rd7], 4;
  @!%p1 cp.async.mbarrier.arrive.noinc.shared.b64 [%r3];""")


def test_cp_async_mbarrier_arrive_completes_the_phase_once_the_threads_copies_land():
    m = warpsim.ptx.load(ASYNC_ARRIVE, filename="a.ptx")
    src = np.arange(100, 132, dtype=np.uint32)
    out = m.launch("k", block=32, args={"out": np.zeros(32, np.uint32), "src": src, "size": 4}).buffers["out"]
    assert out[0] == 100 and not out[1:].any()            # thread 0's copy landed before its arrival completed it
