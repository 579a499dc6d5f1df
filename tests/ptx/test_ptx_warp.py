"""Warp-collective instructions: mma and ldmatrix through the ISA kernels, stmatrix, shfl, vote, match."""

import numpy as np
import pytest

from warpsim.errors import SimulatorFault, UnsupportedType
from warpsim.isa import ldmatrix, mma_m16n8k8, mma_m16n8k16
from tests.ptx.ptx_helpers import load


def _regs(prefix, first, n):
    return "{" + ", ".join(f"%{prefix}{first + k}" for k in range(n)) + "}"


def _load_regs(ptr, first, n):
    """Load n 32-bit registers %r{first}.. from ptr[lane * n + k]."""
    lines = [f"  mul.wide.u32 %rd31, %r1, {4 * n};", f"  add.s64 %rd32, {ptr}, %rd31;"]
    lines += [f"  ld.global.u32 %r{first + k}, [%rd32+{4 * k}];" for k in range(n)]
    return "\n".join(lines) + "\n"


def _store_regs(ptr, first, n):
    lines = [f"  mul.wide.u32 %rd31, %r1, {4 * n};", f"  add.s64 %rd32, {ptr}, %rd31;"]
    lines += [f"  st.global.u32 [%rd32+{4 * k}], %r{first + k};" for k in range(n)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("shape,ab,cd,arch", [("m16n8k16", "f16", "f32", "sm80"), ("m16n8k16", "bf16", "f32", "sm90"),
                                              ("m16n8k16", "f16", "f16", "sm90"), ("m16n8k8", "f16", "f32", "sm80")])
def test_mma_sync_matches_the_isa_kernel(shape, ab, cd, arch):
    na, nb = (4, 2) if shape == "m16n8k16" else (2, 1)
    nc = 4 if cd == "f32" else 2
    rng = np.random.default_rng(3)
    # random finite halves: exponents in a narrow range so that sums round
    def halves(n):
        v = rng.standard_normal(2 * n).astype(np.float16 if ab == "f16" else np.float32)
        bits = v.view(np.uint16) if ab == "f16" else (v.view(np.uint32) >> 16).astype(np.uint16)
        return bits.view(np.uint32).reshape(32, -1)
    a, b = halves(32 * na), halves(32 * nb)
    c = (rng.standard_normal(32 * nc).astype(np.float32).view(np.uint32) if cd == "f32"
         else halves(32 * nc).ravel()).reshape(32, nc)
    body = (_load_regs("%rd10", 10, na) + _load_regs("%rd11", 20, nb) + _load_regs("%rd12", 24, nc)
            + f"  mma.sync.aligned.{shape}.row.col.{cd}.{ab}.{ab}.{cd} {_regs('r', 30, nc)}, {_regs('r', 10, na)}, "
              f"{_regs('r', 20, nb)}, {_regs('r', 24, nc)};\n" + _store_regs("%rd13", 30, nc))
    mod = load(body, params=("A", "B", "C", "D"))
    d = mod.launch("k", block=32, arch=arch,
                   args={"A": a, "B": b, "C": c, "D": np.zeros((32, nc), np.uint32)}).buffers["D"]
    want = (mma_m16n8k16 if shape == "m16n8k16" else mma_m16n8k8)(a, b, c, ab=ab, cd=cd, arch=arch)
    assert np.array_equal(d, want)


def test_unsupported_mma_shape_is_a_load_time_error():
    body = "  mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r1,%r2,%r3,%r4}, {%r5,%r6,%r7,%r8}, {%r9,%r10}, {%r1,%r2,%r3,%r4};\n"
    with pytest.raises(UnsupportedType, match=r"<ptx>:\d+:\d+: .*m16n8k32.*not modelled"):
        load(body)


@pytest.mark.parametrize("num,trans", [(1, False), (2, True), (4, False), (4, True)])
def test_ldmatrix_and_stmatrix(num, trans):
    # smem <- global (16 bytes per thread); lane L gives row address ((L * 3) % 32) * 16 (a permutation)
    t = ".trans" if trans else ""
    body = f"""
  mov.u32 %r4, sm;
  shl.b32 %r5, %r1, 4;
  add.u32 %r6, %r4, %r5;
  mul.wide.u32 %rd31, %r1, 16;
  add.s64 %rd32, %rd10, %rd31;
  ld.global.v4.u32 {{%r10, %r11, %r12, %r13}}, [%rd32];
  st.shared.v4.u32 [%r6], {{%r10, %r11, %r12, %r13}};
  bar.sync 0;
  mul.lo.u32 %r7, %r1, 3;
  rem.u32 %r7, %r7, 32;
  shl.b32 %r7, %r7, 4;
  add.u32 %r8, %r4, %r7;
  ldmatrix.sync.aligned.m8n8.x{num}{t}.shared.b16 {_regs('r', 20, num)}, [%r8];
  cvta.shared.u64 %rd20, %rd21;
  cvt.u64.u32 %rd21, %r8;
  cvta.shared.u64 %rd22, %rd21;
  stmatrix.sync.aligned.m8n8.x{num}{t}.b16 [%rd22+512], {_regs('r', 20, num)};
  bar.sync 0;
  ld.shared.v4.u32 {{%r10, %r11, %r12, %r13}}, [%r6+512];
  st.global.v4.u32 [%rd32], {{%r10, %r11, %r12, %r13}};
""" + _store_regs("%rd11", 20, num)
    body = body.replace("  cvta.shared.u64 %rd20, %rd21;\n", "")
    mod = load(body, params=("S", "R"), decls=".shared .align 16 .b8 sm[1024];")
    rng = np.random.default_rng(num)
    smem = rng.integers(0, 256, 512, dtype=np.uint8)
    res = mod.launch("k", block=32, args={"S": smem.copy(), "R": np.zeros((32, num), np.uint32)})
    addrs = (np.arange(32) * 3 % 32) * 16
    want = ldmatrix(smem, addrs, num=num, trans=trans)
    assert np.array_equal(res.buffers["R"], want)
    rows = sorted(set(addrs[:8 * num] // 16))    # stmatrix wrote back exactly the rows ldmatrix read
    back = res.buffers["S"].reshape(32, 16)
    assert np.array_equal(back[rows], smem.reshape(32, 16)[rows])


def test_shfl_modes_with_clamp_and_segments():
    body = """
  mul.lo.u32 %r4, %r1, 10;
  shfl.sync.up.b32 %r5|%p1, %r4, 3, 0, -1;
  shfl.sync.down.b32 %r6|%p2, %r4, 5, 0x1f, -1;
  shfl.sync.idx.b32 %r7, %r4, 2, 0x181f, -1;
  shfl.sync.bfly.b32 %r8, %r4, 6, 0x1f, -1;
  selp.u32 %r9, 1, 0, %p1;
  selp.u32 %r10, 2, 0, %p2;
  add.u32 %r11, %r9, %r10;
  mul.wide.u32 %rd30, %r1, 32;
  add.s64 %rd30, %rd10, %rd30;
  st.global.v4.u32 [%rd30], {%r5, %r6, %r7, %r8};
  st.global.u32 [%rd30+16], %r11;
"""
    res = load(body).launch("k", block=32, args={"out": np.zeros((32, 8), np.uint32)})
    got = res.buffers["out"][:, :5]
    lane = np.arange(32)
    v = lane * 10
    up = np.where(lane >= 3, v[np.maximum(lane - 3, 0)], v)
    down = np.where(lane + 5 <= 31, v[np.minimum(lane + 5, 31)], v)
    idx = v[(lane & ~7) | 2]                       # segments of 8 lanes (c = 0x181f: segmask 0x18)
    bfly = v[lane ^ 6]
    pred = (lane >= 3) * 1 + (lane + 5 <= 31) * 2
    assert got.tolist() == np.stack([up, down, idx, bfly, pred], 1).tolist()


def test_vote_and_match():
    body = """
  and.b32 %r4, %r1, 3;
  setp.ne.u32 %p1, %r4, 0;
  vote.sync.all.pred %p2, %p1, -1;
  vote.sync.any.pred %p3, %p1, -1;
  vote.sync.uni.pred %p4, %p1, 0xF0F0F0F0;
  setp.lt.u32 %p5, %r1, 8;
  @%p5 bra SKIP;
  vote.sync.ballot.b32 %r5, %p1, 0xFFFFFF00;
  match.any.sync.b32 %r6, %r4, 0xFFFFFF00;
  match.all.sync.b32 %r7|%p6, %r4, 0xFFFFFF00;
SKIP:
  selp.u32 %r8, 1, 0, %p2;
  selp.u32 %r9, 2, 0, %p3;
  selp.u32 %r10, 4, 0, %p4;
  or.b32 %r8, %r8, %r9;
  or.b32 %r8, %r8, %r10;
  add.s64 %rd30, %rd10, %rd0;
  add.s64 %rd30, %rd30, %rd0;
  add.s64 %rd30, %rd30, %rd0;
  add.s64 %rd30, %rd30, %rd0;
  st.global.v4.u32 [%rd30], {%r8, %r5, %r6, %r7};
"""
    got = load(body).launch("k", block=32, args={"out": np.zeros((32, 4), np.uint32)}).buffers["out"]
    lane = np.arange(32)
    assert (got[:, 0] == 2).all()                    # not all, any, not uniform
    hi = lane >= 8
    ballot = sum(1 << i for i in range(8, 32) if i % 4)
    assert (got[hi, 1] == ballot).all() and (got[~hi, 1] == 0).all()
    for i in range(8, 32):
        assert got[i, 2] == sum(1 << j for j in range(8, 32) if j % 4 == i % 4)
    assert (got[hi, 3] == 0).all()                   # values differ: match.all gives 0


def test_misaligned_ldmatrix_row_names_the_thread_and_address():
    body = """
  mov.u32 %r4, sm;
  shl.b32 %r5, %r1, 4;
  add.u32 %r6, %r4, %r5;
  add.u32 %r6, %r6, 4;
  ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r10}, [%r6];
"""
    mod = load(body, decls=".shared .align 16 .b8 sm[1024];")
    with pytest.raises(SimulatorFault, match=r"ldmatrix\.sync\.aligned\.m8n8\.x1\.shared\.b16 \{%r10\}, \[%r6\] \(<ptx>:\d+\): "
                                             r"CTA \(0, 0, 0\) thread \(0, 0, 0\) \(warp 0 lane 0\): address 0x404 is not 16-byte aligned"):
        mod.launch("k", block=32, args={"out": np.zeros(32, np.uint32)})


def test_mma_in_a_partial_warp_faults():
    body = _load_regs("%rd10", 10, 4) + ("  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r1,%r2,%r3,%r4}, "
                                         "{%r10,%r11,%r12,%r13}, {%r14,%r15}, {%r1,%r2,%r3,%r4};\n")
    with pytest.raises(SimulatorFault, match=r"mma\.sync.*lanes 0,1,.*,15 execute it but lanes 0-31 must arrive"):
        load(body).launch("k", block=16, args={"out": np.zeros((32, 4), np.uint32)})
