"""Integer and bit instructions on random operands, checked against the same C expressions compiled by gcc.

Each case is one PTX instruction and the C expression that states its semantics (the PTX ISA's
description; CUDA's ``__umulhi``, ``__byte_perm``, ``__brev``, ``__popc``, ``__clz`` written out
for the host). A kernel per case loads ``a, b, c`` from global memory (one element per thread),
executes the instruction and stores ``d``; a C library compiled by gcc in the test evaluates the
expression over the same arrays.
"""

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

import warpsim.ptx

# (name, PTX lines computing %d from %a %b %c, C expression of d, width in bits)
CASES32 = [
    ("add", "add.u32 %d, %a, %b;", "a + b"),
    ("sub", "sub.s32 %d, %a, %b;", "a - b"),
    ("mul.lo", "mul.lo.s32 %d, %a, %b;", "a * b"),
    ("mul.hi.u32", "mul.hi.u32 %d, %a, %b;", "(u32)(((u64)a * b) >> 32)"),
    ("mul.hi.s32", "mul.hi.s32 %d, %a, %b;", "(u32)(((i64)sa * sb) >> 32)"),
    ("mad.lo", "mad.lo.s32 %d, %a, %b, %c;", "a * b + c"),
    ("mad.hi.u32", "mad.hi.u32 %d, %a, %b, %c;", "(u32)(((u64)a * b) >> 32) + c"),
    ("div.u32", "div.u32 %d, %a, %b;", "b ? a / b : 0xFFFFFFFFu"),
    ("div.s32", "div.s32 %d, %a, %b;", "sb == 0 ? 0xFFFFFFFFu : (sa == INT32_MIN && sb == -1) ? (u32)INT32_MIN : (u32)(sa / sb)"),
    ("rem.u32", "rem.u32 %d, %a, %b;", "b ? a % b : 0xFFFFFFFFu"),   # by 0: all ones (H200)
    ("rem.s32", "rem.s32 %d, %a, %b;", "sb == 0 ? 0xFFFFFFFFu : (sa == INT32_MIN && sb == -1) ? 0 : (u32)(sa % sb)"),
    ("min.s32", "min.s32 %d, %a, %b;", "sa < sb ? a : b"),
    ("max.s32", "max.s32 %d, %a, %b;", "sa > sb ? a : b"),
    ("min.u32", "min.u32 %d, %a, %b;", "a < b ? a : b"),
    ("max.u32", "max.u32 %d, %a, %b;", "a > b ? a : b"),
    ("abs", "abs.s32 %d, %a;", "sa < 0 ? 0u - a : a"),
    ("neg", "neg.s32 %d, %a;", "0u - a"),
    ("and", "and.b32 %d, %a, %b;", "a & b"),
    ("or", "or.b32 %d, %a, %b;", "a | b"),
    ("xor", "xor.b32 %d, %a, %b;", "a ^ b"),
    ("not", "not.b32 %d, %a;", "~a"),
    ("cnot", "cnot.b32 %d, %a;", "a == 0"),
    ("shl", "and.b32 %b, %b, 63;\n shl.b32 %d, %a, %b;", "(b & 63) >= 32 ? 0 : a << (b & 63)"),
    ("shr.u32", "and.b32 %b, %b, 63;\n shr.u32 %d, %a, %b;", "(b & 63) >= 32 ? 0 : a >> (b & 63)"),
    ("shr.s32", "and.b32 %b, %b, 63;\n shr.s32 %d, %a, %b;", "(u32)(sa >> ((b & 63) > 31 ? 31 : (b & 63)))"),
    ("bfe.u32", "bfe.u32 %d, %a, %b, %c;", "bfe32(a, b & 0xFF, c & 0xFF, 0)"),
    ("bfe.s32", "and.b32 %b, %b, 31;\n and.b32 %c, %c, 31;\n bfe.s32 %d, %a, %b, %c;", "bfe32(a, b & 31, c & 31, 1)"),
    ("bfi", "bfi.b32 %d, %a, %b, %c, %c;", "bfi32(a, b, c & 0xFF, c & 0xFF)"),
    ("prmt", "prmt.b32 %d, %a, %b, %c;", "byte_perm(a, b, c)"),
    ("popc", "popc.b32 %d, %a;", "(u32)__builtin_popcount(a)"),
    ("clz", "clz.b32 %d, %a;", "a ? (u32)__builtin_clz(a) : 32u"),
    ("brev", "brev.b32 %d, %a;", "brev32(a)"),
    ("sad", "sad.s32 %d, %a, %b, %c;", "c + (sa < sb ? (u32)sb - a : a - (u32)sb)"),
    ("shf.l.wrap", "shf.l.wrap.b32 %d, %a, %b, %c;", "(c & 31) ? (b << (c & 31)) | (a >> (32 - (c & 31))) : b"),
    ("shf.r.clamp", "and.b32 %c, %c, 63;\n shf.r.clamp.b32 %d, %a, %b, %c;",
     "(c & 63) == 0 ? a : (c & 63) >= 32 ? b : (a >> (c & 63)) | (b << (32 - (c & 63)))"),
    ("lop3.xor3", "lop3.b32 %d, %a, %b, %c, 0x96;", "a ^ b ^ c"),
    ("lop3.maj", "lop3.b32 %d, %a, %b, %c, 0xE8;", "(a & b) | (a & c) | (b & c)"),
    ("lop3.sel", "lop3.b32 %d, %a, %b, %c, 0xCA;", "(a & b) | (~a & c)"),
    ("bfind.u32", "bfind.u32 %d, %a;", "a ? 31 - __builtin_clz(a) : 0xFFFFFFFFu"),
    ("bfind.s32", "bfind.s32 %d, %a;", "(sa < 0 ? ~a : a) ? 31 - __builtin_clz(sa < 0 ? ~a : a) : 0xFFFFFFFFu"),
    ("bfind.shiftamt", "bfind.shiftamt.u32 %d, %a;", "a ? (u32)__builtin_clz(a) : 0xFFFFFFFFu"),
    ("setp.lt.s32", "setp.lt.s32 %p, %a, %b;\n selp.u32 %d, 1, 0, %p;", "sa < sb"),
    ("setp.hs.u32", "setp.hs.u32 %p, %a, %b;\n selp.u32 %d, 7, 9, %p;", "a >= b ? 7 : 9"),
    ("setp.le.and", "setp.ne.u32 %q, %c, 0;\n setp.le.s32.and %p, %a, %b, %q;\n selp.u32 %d, 1, 0, %p;",
     "(sa <= sb) && c != 0"),
    ("setp.gt.xor.not", "setp.ne.u32 %q, %c, 0;\n setp.gt.u32.xor %p|%q2, %a, %b, !%q;\n selp.u32 %d, 1, 0, %q2;",
     "(!(a > b)) ^ (c == 0)"),
    ("slct", "slct.u32.s32 %d, %a, %b, %c;", "(i32)c >= 0 ? a : b"),
    ("add.sat", "add.sat.s32 %d, %a, %b;", "sat32((i64)sa + sb)"),
    ("cvt.s8", "cvt.s8.s32 %h, %a;\n cvt.s32.s8 %d, %h;", "(u32)(i32)(int8_t)a"),
    ("cvt.u16.sat", "cvt.sat.u16.s32 %h, %a;\n cvt.u32.u16 %d, %h;", "sa < 0 ? 0 : sa > 65535 ? 65535 : a"),
    ("addc", "add.cc.u32 %t, %a, %b;\n addc.u32 %d, %c, 0;", "c + (u32)(((u64)a + b) >> 32)"),
    ("subc", "sub.cc.u32 %t, %a, %b;\n subc.u32 %d, %c, 0;", "c - (a < b)"),
]

CASES64 = [
    ("add.u64", "add.u64 %d, %a, %b;", "a + b"),
    ("mul.lo.u64", "mul.lo.u64 %d, %a, %b;", "a * b"),
    ("mul.hi.u64", "mul.hi.u64 %d, %a, %b;", "(u64)(((unsigned __int128)a * b) >> 64)"),
    ("mul.hi.s64", "mul.hi.s64 %d, %a, %b;", "(u64)(((__int128)sa * sb) >> 64)"),
    ("div.s64", "div.s64 %d, %a, %b;", "sb == 0 ? ~0ull : (sa == INT64_MIN && sb == -1) ? (u64)INT64_MIN : (u64)(sa / sb)"),
    ("rem.u64", "rem.u64 %d, %a, %b;", "b ? a % b : ~0ull"),
    ("min.s64", "min.s64 %d, %a, %b;", "sa < sb ? a : b"),
    ("max.u64", "max.u64 %d, %a, %b;", "a > b ? a : b"),
    ("shr.s64", "cvt.u32.u64 %w, %b;\n and.b32 %w, %w, 127;\n shr.s64 %d, %a, %w;", "(u64)(sa >> ((b & 127) > 63 ? 63 : (b & 127)))"),
    ("shl.b64", "cvt.u32.u64 %w, %b;\n and.b32 %w, %w, 127;\n shl.b64 %d, %a, %w;", "(b & 127) >= 64 ? 0 : a << (b & 127)"),
    ("popc.b64", "popc.b64 %w, %a;\n cvt.u64.u32 %d, %w;", "(u64)__builtin_popcountll(a)"),
    ("clz.b64", "clz.b64 %w, %a;\n cvt.u64.u32 %d, %w;", "a ? (u64)__builtin_clzll(a) : 64"),
    ("brev.b64", "brev.b64 %d, %a;", "brev64(a)"),
    ("mul.wide.s32", "cvt.u32.u64 %w, %a;\n cvt.u32.u64 %w2, %b;\n mul.wide.s32 %d, %w, %w2;", "(u64)((i64)(i32)a * (i32)b)"),
    ("mad.wide.u32", "cvt.u32.u64 %w, %a;\n cvt.u32.u64 %w2, %b;\n mad.wide.u32 %d, %w, %w2, %c;", "(u64)(u32)a * (u32)b + c"),
    ("cvt.s64.s16", "cvt.u16.u64 %h, %a;\n cvt.s64.s16 %d, %h;", "(u64)(i64)(int16_t)a"),
    ("bfe.u64", "cvt.u32.u64 %w, %b;\n cvt.u32.u64 %w2, %c;\n bfe.u64 %d, %a, %w, %w2;", "bfe64(a, (u32)b, (u32)c)"),  # 64 bits: fields whole (H200)
    ("bfind.s64", "bfind.s64 %w, %a;\n cvt.u64.u32 %d, %w;",
     "(sa < 0 ? ~a : a) ? 63 - __builtin_clzll(sa < 0 ? ~a : a) : 0xFFFFFFFFull"),
    ("addc.u64", "add.cc.u64 %t64, %a, %b;\n addc.u64 %d, %c, 0;", "c + ((a + b) < a)"),
]

C_HELPERS = r"""
#include <stdint.h>
typedef uint32_t u32; typedef int32_t i32; typedef uint64_t u64; typedef int64_t i64;
static u32 bfe32(u32 a, u32 pos, u32 len, int sgn) {
  u32 sbit = (sgn && len) ? (a >> (pos + len - 1 > 31 ? 31 : pos + len - 1)) & 1 : 0, d = 0;
  for (u32 i = 0; i < 32; ++i) d |= ((i < len && pos + i <= 31) ? (a >> (pos + i)) & 1 : sbit) << i;
  return d; }
static u64 bfe64(u64 a, u32 pos, u32 len) {
  u64 d = 0; for (u32 i = 0; i < 64; ++i) if (i < len && (u64)pos + i <= 63) d |= ((a >> (pos + i)) & 1) << i;
  return d; }
static u32 bfi32(u32 a, u32 b, u32 pos, u32 len) {
  for (u32 i = 0; i < len && pos + i <= 31; ++i) b = (b & ~(1u << (pos + i))) | (((a >> i) & 1) << (pos + i));
  return b; }
static u32 byte_perm(u32 x, u32 y, u32 s) {
  u64 t = ((u64)y << 32) | x; u32 r = 0;
  for (int i = 0; i < 4; ++i) { u32 n = (s >> (4 * i)) & 15; u32 byte = (t >> (8 * (n & 7))) & 0xFF;
    if (n & 8) byte = (byte & 0x80) ? 0xFF : 0; r |= byte << (8 * i); }
  return r; }
static u32 brev32(u32 a) { u32 r = 0; for (int i = 0; i < 32; ++i) r |= ((a >> i) & 1) << (31 - i); return r; }
static u64 brev64(u64 a) { u64 r = 0; for (int i = 0; i < 64; ++i) r |= ((a >> i) & 1) << (63 - i); return r; }
static u32 sat32(i64 v) { return (u32)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v); }
"""


def _c_source():
    parts = [C_HELPERS]
    for k, (_, _, expr) in enumerate(CASES32):
        parts.append(f"void case32_{k}(const u32* A, const u32* B, const u32* C, u32* D, int n) {{"
                     f" for (int i = 0; i < n; ++i) {{ u32 a = A[i], b = B[i], c = C[i]; i32 sa = (i32)a, sb = (i32)b;"
                     f" (void)sa; (void)sb; (void)c; D[i] = (u32)({expr}); }} }}")
    for k, (_, _, expr) in enumerate(CASES64):
        parts.append(f"void case64_{k}(const u64* A, const u64* B, const u64* C, u64* D, int n) {{"
                     f" for (int i = 0; i < n; ++i) {{ u64 a = A[i], b = B[i], c = C[i]; i64 sa = (i64)a, sb = (i64)b;"
                     f" (void)sa; (void)sb; (void)c; D[i] = (u64)({expr}); }} }}")
    return "\n".join(parts)


@pytest.fixture(scope="module")
def host_lib(tmp_path_factory):
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no gcc/cc on PATH: the host reference cannot be compiled")
    d = tmp_path_factory.mktemp("hostref")
    (d / "ref.c").write_text(_c_source())
    subprocess.run([gcc, "-O1", "-shared", "-fPIC", "-fwrapv", "-o", str(d / "ref.so"), str(d / "ref.c")],
                   check=True, capture_output=True)
    return ctypes.CDLL(str(d / "ref.so"))


def _kernel(body, bits):
    t = f"u{bits}"
    size = bits // 8
    return f"""
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 A, .param .u64 B, .param .u64 C, .param .u64 D)
{{
  .reg .pred %p, %q, %q2;
  .reg .b16 %h;
  .reg .b32 %tx, %cx, %nx, %w, %w2, %t;
  .reg .b64 %i, %pa, %pb, %pc, %pd, %t64;
  .reg .b{bits} %a, %b, %c, %d;
  mov.u32 %tx, %tid.x; mov.u32 %cx, %ctaid.x; mov.u32 %nx, %ntid.x;
  mad.lo.u32 %tx, %cx, %nx, %tx;
  mul.wide.u32 %i, %tx, {size};
  ld.param.u64 %pa, [A]; ld.param.u64 %pb, [B]; ld.param.u64 %pc, [C]; ld.param.u64 %pd, [D];
  add.s64 %pa, %pa, %i; add.s64 %pb, %pb, %i; add.s64 %pc, %pc, %i; add.s64 %pd, %pd, %i;
  ld.global.{t} %a, [%pa]; ld.global.{t} %b, [%pb]; ld.global.{t} %c, [%pc];
  {body}
  st.global.{t} [%pd], %d;
  ret;
}}"""


def _operands(bits, n, seed):
    rng = np.random.default_rng(seed)
    dt = np.uint32 if bits == 32 else np.uint64
    info = np.iinfo(dt)
    x = rng.integers(0, info.max, size=(3, n), dtype=dt, endpoint=True)
    special = np.array([0, 1, 2, 7, 31, 32, 33, 63, 64, info.max, info.max // 2, info.max // 2 + 1], dt)
    for row in x:                      # special values, small values and small shift amounts
        row[:special.size] = rng.permutation(special)
        row[special.size:special.size + 64] = rng.integers(0, 40, 64, dtype=dt)
    x[1, -12:] = info.max              # divisor -1 against INT_MIN
    x[0, -12:] = info.max // 2 + 1
    return x


@pytest.mark.parametrize("bits,index", [(32, k) for k in range(len(CASES32))] + [(64, k) for k in range(len(CASES64))],
                         ids=[f"{c[0]}" for c in CASES32] + [f"{c[0]}" for c in CASES64])
def test_integer_instruction_matches_gcc(host_lib, bits, index):
    name, body, _ = (CASES32 if bits == 32 else CASES64)[index]
    n = 4 * 128
    a, b, c = _operands(bits, n, seed=index + bits)
    mod = warpsim.ptx.load(_kernel(body, bits))
    d = np.zeros(n, a.dtype)
    got = mod.launch("k", grid=4, block=128, args={"A": a, "B": b, "C": c, "D": d}).buffers["D"]
    want = np.zeros(n, a.dtype)
    ptr = ctypes.POINTER(ctypes.c_uint32 if bits == 32 else ctypes.c_uint64)
    getattr(host_lib, f"case{bits}_{index}")(*(x.ctypes.data_as(ptr) for x in (a, b, c, want)), n)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (f"{name}: {bad.size} of {n} differ; first at thread {bad[0]}: a={a[bad[0]]:#x} "
                           f"b={b[bad[0]]:#x} c={c[bad[0]]:#x}: got {got[bad[0]]:#x}, gcc says {want[bad[0]]:#x}")
