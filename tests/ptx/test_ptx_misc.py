"""Special registers, mov pack/unpack, cvt.rn.{f16,bf16}x2.f32 through the ISA, red, fences, the decoded arrays."""

import numpy as np
import pytest

from warpsim.isa import cvt_pack
from warpsim.ptx.decode import NW, SLOT
from tests.ptx.ptx_helpers import load


def test_special_registers():
    body = """
  mov.u32 %r4, %laneid;
  mov.u32 %r5, %warpid;
  mov.u32 %r6, %nwarpid;
  mov.u32 %r7, %lanemask_lt;
  mov.u32 %r8, %tid.y;
  mov.u32 %r9, %ntid.y;
  mov.u32 %r10, %nctaid.x;
  mov.u32 %r11, %smid;
  mov.u32 %r12, %clock;
  mov.u64 %rd1, %clock64;
  cvt.u32.u64 %r13, %rd1;
  mov.u32 %r14, %dynamic_smem_size;
  mad.lo.u32 %r20, %r8, 16, %r1;
  mad.lo.u32 %r21, %r2, 64, %r20;
  mul.wide.u32 %rd2, %r21, 48;
  add.s64 %rd3, %rd10, %rd2;
  st.global.v4.u32 [%rd3], {%r4, %r5, %r6, %r7};
  st.global.v4.u32 [%rd3+16], {%r8, %r9, %r10, %r11};
  st.global.v4.u32 [%rd3+32], {%r12, %r13, %r14, %r20};
"""
    got = load(body).launch("k", grid=2, block=(16, 4), smem=96, args={"out": np.zeros((128, 12), np.uint32)}).buffers["out"]
    t = np.arange(128) % 64                               # thread in its CTA
    assert got[:, 0].tolist() == (t % 32).tolist()        # %laneid
    assert got[:, 1].tolist() == (t // 32).tolist()       # %warpid
    assert (got[:, 2] == 2).all()                         # %nwarpid
    assert got[:, 3].tolist() == ((1 << (t % 32)) - 1).tolist()
    assert got[:, 4].tolist() == (t // 16).tolist() and (got[:, 5] == 4).all() and (got[:, 6] == 2).all()
    assert got[:, 7].tolist() == [0] * 64 + [1] * 64      # %smid: the CTA's index mod 132
    assert (got[:, 8] > 0).all() and (got[:, 9] == got[:, 8] + 1).all()   # %clock, then %clock64 one later
    assert (got[:, 10] == 96).all() and got[:, 11].tolist() == t.tolist()


def test_mov_pack_unpack_and_16_bit_registers():
    body = """
  mov.u32 %r4, 0x11223344;
  mov.b32 {%h1, %h2}, %r4;
  mov.b32 %r5, {%h2, %h1};
  mov.b64 %rd1, {%r4, %r5};
  mov.b64 {%r6, %r7}, %rd1;
  add.u16 %h3, %h1, %h2;
  cvt.u32.u16 %r8, %h3;
  mul.wide.u32 %rd2, %r0, 16;
  add.s64 %rd3, %rd10, %rd2;
  st.global.v4.u32 [%rd3], {%r5, %r6, %r7, %r8};
"""
    got = load(body).launch("k", block=32, args={"out": np.zeros((32, 4), np.uint32)}).buffers["out"]
    assert got[0].tolist() == [0x33441122, 0x11223344, 0x33441122, (0x3344 + 0x1122) & 0xFFFF]


def test_guarded_mov_pack_and_unpack_leave_the_other_lanes():
    """The warp-wide ``mov`` of a vector (``warp_integer``) writes only the lanes whose guard holds."""
    body = """
  mov.u32 %r4, 0x11223344;
  mov.u32 %r5, 7;
  mov.u32 %r6, 8;
  mov.u32 %r7, 9;
  and.b32 %r9, %r0, 1;
  setp.eq.u32 %p1, %r9, 1;
  @%p1 mov.b64 {%r6, %r7}, %rd0;
  mov.b32 {%h1, %h2}, %r4;
  @!%p1 mov.b32 %r5, {%h2, %h1};
  mul.wide.u32 %rd2, %r0, 16;
  add.s64 %rd3, %rd10, %rd2;
  st.global.v4.u32 [%rd3], {%r5, %r6, %r7, %r9};
"""
    got = load(body).launch("k", block=32, args={"out": np.zeros((32, 4), np.uint32)}).buffers["out"]
    lane = np.arange(32)
    odd = lane % 2 == 1
    assert got[:, 0].tolist() == np.where(odd, 7, 0x33441122).tolist()
    assert got[odd, 1].tolist() == (4 * lane[odd]).tolist() and (got[odd, 2] == 0).all()   # %rd0 = 4 * %tid
    assert (got[~odd, 1] == 8).all() and (got[~odd, 2] == 9).all()


@pytest.mark.parametrize("to", ["f16", "bf16"])
def test_cvt_pack_through_the_isa(to):
    body = f"""
  ld.global.u32 %r4, [%rd30];
  ld.global.u32 %r5, [%rd30+128];
  cvt.rn.{to}x2.f32 %r6, %r4, %r5;
""".replace("[%rd30]", "[%rd31]").replace("[%rd30+128]", "[%rd31+128]")
    body = "  add.s64 %rd31, %rd10, %rd0;\n" + body + "  add.s64 %rd32, %rd11, %rd0;\n  st.global.u32 [%rd32], %r6;\n"
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(64) * 1e3).astype(np.float32).view(np.uint32)
    x[:4] = [0x7F800000, 0xFFC00001, 0x00000001, 0x477FF000]
    res = load(body, params=("x", "out")).launch("k", block=32, args={"x": x, "out": np.zeros(32, np.uint32)})
    assert np.array_equal(res.buffers["out"], cvt_pack(x[:32], x[32:], to=to))


def test_red_and_fences():
    body = """
  membar.gl;
  fence.acq_rel.gpu;
  red.global.add.u32 [%rd10], %r1;
  red.shared.max.s32 [sm], %r1;
  bar.sync 0;
  ld.shared.u32 %r4, [sm];
  setp.eq.u32 %p1, %r1, 0;
  @%p1 st.global.u32 [%rd10+4], %r4;
"""
    res = load(body, decls=".shared .align 4 .b8 sm[4];").launch("k", block=64, args={"out": np.zeros(2, np.uint32)})
    assert res.buffers["out"].tolist() == [sum(range(64)), 63]
    assert res.stats["by_opcode"]["fence"] == 4


def test_registers_get_slots_64_bit_two_and_predicates_one():
    mod = load("")
    d = mod.decoded("k")
    slots = d.reg_names
    assert slots["%p0"][1] == 1 and slots["%r5"][1] == 1 and slots["%rd5"][1] == 2
    assert slots["%rd1"][0] - slots["%rd0"][0] == 2
    assert d.regs_per_thread == 8 + 8 + 40 + 80
    assert int(d.opnd[0, SLOT]) >= -1 and int(d.opnd[0, NW]) >= 0
