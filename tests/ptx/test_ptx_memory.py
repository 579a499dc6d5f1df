"""Memory: state spaces and generic addresses, vectors, sub-word loads, atomics, cp.async, faults."""

import os
import re

import numpy as np
import pytest

import warpsim.ptx
from hwcheck.device.sass import disassemble, find_tool
from warpsim.errors import SimulatorFault
from warpsim.ptx.memory import SHARED_BASE
from tests.ptx.ptx_helpers import HEADER, load, store_r


def test_spaces_generic_vectors_and_subword_loads():
    extra = """
.const .align 4 .b32 table[4] = {10, 20, 30, 40};
.global .align 1 .b8 bytes_[4] = {0x80, 0x7F, 0xFF, 1};
.extern .shared .align 16 .b8 dyn[];
"""
    body = """
  .local .align 8 .b8 loc[16];
  and.b32 %r4, %r1, 3;
  shl.b32 %r5, %r4, 2;
  mov.u64 %rd1, table;
  cvta.const.u64 %rd2, %rd1;
  cvt.u64.u32 %rd3, %r5;
  add.s64 %rd4, %rd2, %rd3;
  ld.u32 %r6, [%rd4];                      // generic load from .const
  mov.u64 %rd5, bytes_;
  cvt.u64.u32 %rd6, %r4;
  add.s64 %rd7, %rd5, %rd6;
  ld.global.s8 %r7, [%rd7];                // sign-extended byte
  ld.global.u8 %r8, [%rd7];
  mov.u64 %rd8, loc;
  st.local.v2.u32 [%rd8], {%r1, %r6};
  cvta.local.u64 %rd9, %rd8;
  ld.v2.u32 {%r9, %r10}, [%rd9];           // generic load from .local
  mov.u32 %r11, dyn;
  shl.b32 %r12, %r1, 2;
  add.u32 %r13, %r11, %r12;
  st.shared.u32 [%r13], %r7;
  cvta.shared.u64 %rd20, %rd21;
  cvt.u64.u32 %rd21, %r13;
  cvta.shared.u64 %rd22, %rd21;
  ld.u32 %r14, [%rd22];                    // generic load from .shared
  add.u32 %r15, %r6, %r8;
  add.u32 %r15, %r15, %r9;
  add.u32 %r15, %r15, %r10;
  xor.b32 %r15, %r15, %r14;
""" + store_r("%r15")
    mod = load(body, extra=extra)
    got = mod.launch("k", block=32, smem=256, args={"out": np.zeros(32, np.uint32)}).buffers["out"]
    lane = np.arange(32)
    table = np.array([10, 20, 30, 40])[lane % 4]
    raw = np.array([0x80, 0x7F, 0xFF, 1])[lane % 4]
    signed = np.where(raw >= 128, raw - 256, raw).astype(np.int64) & 0xFFFFFFFF
    want = ((table + raw + lane + table) ^ signed) & 0xFFFFFFFF
    assert got.tolist() == want.tolist()


def test_byte_struct_param_and_scalars():
    text = HEADER + """
.visible .entry k(.param .align 8 .b8 T[24], .param .u32 n, .param .f32 scale)
{
  .reg .b32 %r<8>; .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [T];
  ld.param.u32 %r1, [T+8];
  ld.param.u64 %rd2, [T+16];
  ld.param.u32 %r2, [n];
  ld.param.u32 %r3, [scale];
  mov.u32 %r4, %tid.x;
  add.u32 %r5, %r4, %r1;
  add.u32 %r5, %r5, %r2;
  cvt.u32.u64 %r6, %rd2;
  add.u32 %r5, %r5, %r6;
  mul.wide.u32 %rd3, %r4, 4;
  add.s64 %rd4, %rd1, %rd3;
  st.global.u32 [%rd4], %r5;
  st.global.u32 [%rd4+128], %r3;
  ret;
}"""
    mod = warpsim.ptx.load(text)
    a = np.zeros(64, np.uint32)
    res = mod.launch("k", block=32, args={"T": [("u64", a), ("s32", 100), ("s64", 7)],
                                          "n": 1000, "scale": 1.5})
    assert res.buffers["T"][:32].tolist() == (np.arange(32) + 1107).tolist()
    assert (res.buffers["T"][32:] == np.float32(1.5).view(np.uint32)).all()


def test_the_align_of_a_pointer_parameter_is_the_pointees():
    """``.param .u64 .ptr .global .align 16 p``: 16 is the alignment of what ``p`` points to (PTX ISA, "Kernel
    Function Parameter Attribute: .ptr"); the parameters lie 8 bytes apart, as ptxas lays them out (the CuTe DSL
    flash kernel: ``c[0x0][0x210]``, ``0x218``, ... in its SASS). A layout with 16-byte slots made the GPU refuse the
    launch (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: a parameter block larger than the kernel's)."""
    text = HEADER + """
.visible .entry k(.param .u64 .ptr .global .align 16 x, .param .u64 .ptr .global .align 16 y,
                  .param .u64 .ptr .align 4 z, .param .u32 n, .param .align 16 .b8 s[16])
{
  .reg .b32 %r<4>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [y];
  ld.param.u32 %r1, [n];
  st.global.u32 [%rd1], %r1;
  ret;
}"""
    decoded = warpsim.ptx.load(text).decoded("k")
    assert [(name, offset) for name, _t, offset, _size, _struct in decoded.params] == [
        ("x", 0), ("y", 8), ("z", 16), ("n", 24), ("s", 32)]
    assert decoded.param_bytes == 48
    y = np.zeros(1, np.uint32)
    res = warpsim.ptx.load(text).launch("k", block=1, args={"x": np.zeros(1, np.uint32), "y": y,
                                                            "z": np.zeros(1, np.uint32), "n": 77,
                                                            "s": [("u64", 0), ("u64", 0)]})
    assert int(res.buffers["y"][0]) == 77
    missing = [t for t in ("ptxas", "nvdisasm") if find_tool(t) is None]
    if missing and os.environ.get("CI") != "true":
        pytest.skip(f"ptxas's layout not checked: needs {' and '.join(missing)} (pip install nvidia-cuda-nvdisasm)")
    sass = disassemble(text.replace("st.global.u32 [%rd1], %r1;", "ld.param.u64 %rd2, [z];\n"
                                    "  st.global.u64 [%rd1+8], %rd2;\n  st.global.u32 [%rd1], %r1;"), "sm_90")
    read = {int(a, 16) for s in sass for a in re.findall(r"c\[0x0\]\[(0x2[0-9a-f]{2})\]", s)}
    offsets = {name: offset for name, _t, offset, _size, _struct in decoded.params}
    want = {0x210 + offsets[p] for p in ("y", "z", "n")}     # sm_90's parameters start at c[0x0][0x210]
    assert want <= read, f"ptxas reads {sorted(map(hex, read))}, the decoder's offsets are {sorted(map(hex, want))}"


@pytest.mark.parametrize("space", ["global", "shared"])
@pytest.mark.parametrize("op,typ,init,operand,combine", [
    ("add", "u32", 5, "%r1", lambda old, v: old + v),
    ("min", "s32", 3, "%r20", lambda old, v: min(old, v)),
    ("max", "u32", 0, "%r1", lambda old, v: max(old, v)),
    ("inc", "u32", 0, "9", lambda old, v: 0 if old >= v else old + 1),
    ("dec", "u32", 4, "9", lambda old, v: v if old == 0 or old > v else old - 1),
    ("and", "b32", 0xFFFF, "%r1", lambda old, v: old & (v | 0xFF00)),
    ("or", "b32", 0, "%r1", lambda old, v: old | v),
    ("xor", "b32", 0, "%r1", lambda old, v: old ^ v),
    ("exch", "b32", 77, "%r1", lambda old, v: v),
    ("add", "u64", 1 << 40, "%rd20", lambda old, v: old + v),
])
def test_atomics_return_old_values_in_lane_order(space, op, typ, init, operand, combine):
    bits = int(typ[1:])
    reg = "%rd" if bits == 64 else "%r"
    prelude = """
  sub.s32 %r20, 10, %r1;
  cvt.u64.u32 %rd20, %r1;
  or.b32 %r21, %r1, 0xFF00;
"""
    if op == "and":
        operand = "%r21"
    addr = "[%rd10]" if space == "global" else "[sm]"
    setup = "" if space == "global" else f"  mov.u32 %r22, %tid.x;\n  setp.eq.u32 %p1, %r22, 0;\n  @%p1 st.shared.{typ} [sm], {reg}30;\n  bar.sync 0;\n"
    init_reg = f"  ld.global.{typ} {reg}30, [%rd10];\n"
    body = (prelude + init_reg + setup + f"  atom.{space}.{op}.{typ} {reg}31, {addr}, {operand};\n  bar.sync 0;\n"
            + (f"  ld.shared.{typ} {reg}32, [sm];\n  st.global.{typ} [%rd10], {reg}32;\n" if space == "shared" else "")
            + f"  mul.wide.u32 %rd33, %r1, {bits // 8};\n  add.s64 %rd34, %rd11, %rd33;\n  st.global.{typ} [%rd34], {reg}31;\n")
    mod = load(body, params=("cell", "olds"), decls=".shared .align 8 .b8 sm[8];")
    dt = np.uint64 if bits == 64 else np.uint32
    res = mod.launch("k", block=32, args={"cell": np.array([init], dt), "olds": np.zeros(32, dt)})
    vals = {"%r1": list(range(32)), "%r20": [10 - i for i in range(32)], "9": [9] * 32,
            "%r21": list(range(32)), "%rd20": list(range(32))}[operand]
    old, olds = init, []
    m = (1 << bits) - 1
    for v in vals:
        olds.append(old)
        if typ == "s32":
            s = lambda x: x - (1 << 32) if x >> 31 else x
            old = combine(s(old), s(v & m)) & m
        else:
            old = combine(old, v & m) & m
    assert res.buffers["olds"].tolist() == olds
    assert int(res.buffers["cell"][0]) == old


def test_atom_cas():
    body = """
  ld.global.u32 %r4, [%rd10];
  atom.global.cas.b32 %r5, [%rd10], %r1, 100;
""" + store_r("%r5", "%rd11")
    res = load(body, params=("cell", "out")).launch("k", block=32, args={"cell": np.array([3], np.uint32),
                                                                         "out": np.zeros(32, np.uint32)})
    assert res.buffers["out"].tolist() == [3, 3, 3, 3] + [100] * 28
    assert int(res.buffers["cell"][0]) == 100


CP_ASYNC = """
  mov.u32 %r4, sm;
  shl.b32 %r5, %r1, 4;
  add.u32 %r6, %r4, %r5;
  mul.wide.u32 %rd1, %r1, 16;
  add.s64 %rd2, %rd10, %rd1;
  and.b32 %r7, %r1, 15;
  cp.async.cg.shared.global [%r6], [%rd2], 16, %r7;
  cp.async.commit_group;
  {read_early}
  cp.async.wait_group 0;
  bar.sync 0;
  ld.shared.v4.u32 {{%r10, %r11, %r12, %r13}}, [%r6];
  add.s64 %rd3, %rd11, %rd1;
  st.global.v4.u32 [%rd3], {{%r10, %r11, %r12, %r13}};
"""


def test_cp_async_lands_at_wait_with_zero_fill():
    mod = load(CP_ASYNC.format(read_early=""), params=("src", "dst"), decls=".shared .align 16 .b8 sm[512];")
    src = np.arange(512, dtype=np.uint8)
    dst = mod.launch("k", block=32, args={"src": src, "dst": np.zeros(512, np.uint8)}).buffers["dst"]
    want = src.reshape(32, 16).copy()
    for t in range(32):
        want[t, t % 16:] = 0           # src-size = t % 16 bytes, the rest zero-filled
    assert dst.reshape(32, 16).tolist() == want.tolist()


def test_cp_async_read_before_wait_is_a_race():
    mod = load(CP_ASYNC.format(read_early="ld.shared.u32 %r20, [%r6];"), params=("src", "dst"),
               decls=".shared .align 16 .b8 sm[512];")
    with pytest.raises(SimulatorFault, match=r"ld\.shared\.u32 %r20.*thread \(0, 0, 0\).*cp\.async not yet waited"):
        mod.launch("k", block=32, args={"src": np.zeros(512, np.uint8), "dst": np.zeros(512, np.uint8)})


def test_out_of_range_and_misaligned_faults_name_everything():
    body = "  add.s64 %rd30, %rd10, %rd0;\n  add.s64 %rd30, %rd30, 60;\n  st.global.u32 [%rd30], %r1;\n"
    with pytest.raises(SimulatorFault, match=r"st\.global\.u32 \[%rd30\], %r1 \(<ptx>:\d+\): CTA \(0, 0, 0\) "
                                             r"thread \(1, 0, 0\) \(warp 0 lane 1\): global address 0x100000040 \+ 4 "
                                             r"bytes is not inside one global buffer: 0x100000040 is 0 bytes past the "
                                             r"end of buffer out \[0x100000000, 0x100000040\)$"):
        load(body).launch("k", block=32, args={"out": np.zeros(16, np.uint32)})
    body = "  add.s64 %rd30, %rd10, 2;\n  ld.global.u32 %r5, [%rd30];\n"
    with pytest.raises(SimulatorFault, match=r"ld\.global\.u32.*thread \(0, 0, 0\).*0x100000002 is not 4-byte aligned"):
        load(body).launch("k", block=32, args={"out": np.zeros(16, np.uint32)})
    body = "  mov.u64 %rd30, 0;\n  ld.u32 %r5, [%rd30];\n"
    with pytest.raises(SimulatorFault, match=r"address 0x0 \+ 4 bytes is not inside one global buffer: 0x0 is "
                                             r"4294967296 bytes before the start of buffer out"):
        load(body).launch("k", block=32, args={"out": np.zeros(16, np.uint32)})


def test_grid_ctas_share_global_memory_and_cta_runs_one():
    body = """
  mov.u32 %r4, %ctaid.y;
  mov.u32 %r5, %nctaid.x;
  mad.lo.u32 %r6, %r4, %r5, %r2;
  mul.lo.u32 %r7, %r3, %r6;
  add.u32 %r8, %r7, %r1;
  mul.wide.u32 %rd1, %r8, 4;
  add.s64 %rd2, %rd10, %rd1;
  st.global.u32 [%rd2], %r6;
"""
    mod = load(body)
    res = mod.launch("k", grid=(3, 2), block=32, args={"out": np.full(6 * 32, 99, np.uint32)})
    assert res.buffers["out"].tolist() == [c for c in range(6) for _ in range(32)]
    assert res.stats["ctas"] == 6
    one = mod.launch("k", grid=(3, 2), block=32, cta=(1, 1, 0), args={"out": np.full(6 * 32, 99, np.uint32)})
    assert one.buffers["out"].tolist() == [99] * 128 + [4] * 32 + [99] * 32


def test_dynamic_shared_starts_after_static_at_its_alignment():
    # the reserved 0x400 bytes, stat at 0x400..0x464, dyn at 0x464 rounded up to 1024 = 0x800
    extra = ".extern .shared .align 1024 .b8 dyn[];\n.shared .align 4 .b8 stat[100];\n"
    mod = load("  mov.u32 %r5, dyn;\n" + store_r("%r5"), extra=extra)
    assert mod.decoded("k").shared_static == 0x800
    res = mod.launch("k", block=32, smem=64, args={"out": np.zeros(32, np.uint32)})
    assert (res.buffers["out"] == 0x800).all() and res.machine.smem.size == 0x800 + 64


def test_shared_memory_starts_after_the_reserved_kilobyte():
    # as on sm_80+ GPUs: the first static variable at 0x400, dynamic shared alone at 0x400 too
    mod = load("  mov.u32 %r5, stat;\n" + store_r("%r5"), extra=".shared .align 4 .b8 stat[8];\n")
    assert (mod.launch("k", block=32, args={"out": np.zeros(32, np.uint32)}).buffers["out"] == SHARED_BASE).all()
    mod = load("  mov.u32 %r5, dyn;\n" + store_r("%r5"), extra=".extern .shared .align 1024 .b8 dyn[];\n")
    res = mod.launch("k", block=32, smem=64, args={"out": np.zeros(32, np.uint32)})
    assert (res.buffers["out"] == 0x400).all() and res.machine.smem.size == 0x400 + 64


@pytest.mark.parametrize("op", ["ld.shared.u32 %r6, [%r5]", "atom.shared.add.u32 %r6, [%r5], 1",
                                "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r6}, [%r5]"])
@pytest.mark.parametrize("address", [0, SHARED_BASE - 16])
def test_shared_access_in_the_reserved_bytes_faults(op, address):
    mod = load(f"  mov.u32 %r5, {address};\n  {op};\n" + store_r("%r6"), extra=".shared .align 16 .b8 stat[16];\n")
    with pytest.raises(SimulatorFault, match=rf"{re.escape(op.split()[0])}.*address {address:#x}"):
        mod.launch("k", block=32, args={"out": np.zeros(32, np.uint32)})
