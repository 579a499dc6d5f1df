"""Integer forms where the H200 is the reference: directed cases, each from a record of the H200 or from the SASS
the driver's ptxas makes of the form (docs/ptx.md, "Integer forms: what the H200 runs").

One thread runs one instruction on operands given as immediates moved into registers (so nothing but the
instruction's own semantics decides the result; an immediate operand of the form itself is marked as such).
"""

import numpy as np
import pytest

import warpsim.ptx
from ptx_helpers import kernel

_REGS = {"r": ".b32", "rd": ".b64", "h": ".b16"}


def _run(lines, out_bits=32):
    """Run ``lines`` (PTX using %a..%c, %x..%z and writing %d or %dd) in one thread; the stored result."""
    store = "st.global.u64 [%rd10], %dd;" if out_bits == 64 else "st.global.u32 [%rd10], %d;"
    decls = ("  .reg .b32 %a, %b, %c, %d;\n  .reg .b64 %x, %y, %z, %dd;\n  .reg .b16 %hh;\n")
    text = kernel("\n".join(f"  {line}" for line in lines) + f"\n  {store}", prologue=False, decls=decls)
    out = np.zeros(1, np.uint64 if out_bits == 64 else np.uint32)
    return int(warpsim.ptx.load(text).launch("k", block=1, args={"out": out}, quiet=True).buffers["out"][0])


# --- cvt into a register wider than the destination type: sign-extended for a signed type -------------------
@pytest.mark.parametrize("form, a, want", [
    ("cvt.sat.s16.s32", 0xA69DE4DA, 0xFFFF8000),   # H200, hwcheck fuzz seed 100000 lane 5: 0xffff8000 (was 0x8000)
    ("cvt.sat.s16.s32", 0x00012345, 0x00007FFF),
    ("cvt.s16.s32", 0x00018000, 0xFFFF8000),
    ("cvt.s8.u32", 0x00000080, 0xFFFFFF80),
    ("cvt.s8.s32", 0x0000007F, 0x0000007F),
    ("cvt.u16.s32", 0xFFFF8000, 0x00008000),       # unsigned: zero-extended
    ("cvt.sat.u8.s32", 0xFFFFFFFF, 0x00000000),
])
def test_cvt_to_a_narrow_signed_type_sign_extends_the_register(form, a, want):
    assert _run([f"mov.b32 %a, {a:#x};", f"{form} %d, %a;"]) == want


def test_cvt_into_a_16_bit_register_keeps_16_bits():
    got = _run(["mov.b32 %a, 0x18000;", "cvt.s16.s32 %hh, %a;", "cvt.u32.u16 %d, %hh;"])
    assert got == 0x8000


def test_cvt_to_s16_in_a_64_bit_register_sign_extends_to_64():
    assert _run(["mov.b32 %a, 0x8000;", "cvt.s16.s32 %dd, %a;"], 64) == 0xFFFFFFFFFFFF8000


# --- bfe / bfi on 64-bit types: position and length are whole u32 values (not taken mod 256) ----------------
@pytest.mark.parametrize("a, pos, length, want", [
    # H200 records of hwcheck fuzz (conformance/h200/h200-ptx-fuzz.json): seed, lane
    (0xD17422A89DD104D3, 1, 0x0B0B0B0B, 0xE8BA11544EE88269),            # 100018, 1 (mod 256: 0x269)
    (0xD2BB64B44980456E, 1, 0x0D0D0D0D, 0xE95DB25A24C022B7),            # 100018, 2
    (0x8FF7DAAEF084496D, 0x1F5B9200, 32, 0xFFFFFFFFFFFFFFFF),           # 100009, 2 (mod 256: 0xfffffffff084496d)
    (0x5AD971B96915349C, 0xDA7E7F09, 32, 0x0000000000000000),           # 100009, 21
    (0x79973B745B7EC765, 0x2686B52C, 0x7192A1B2, 0x0000000000000000),   # 100017, 2
    (0xDDD266845F57A42D, 0x5E336E06, 0x5F887C2A, 0xFFFFFFFFFFFFFFFF),   # 100017, 6
    (0x90E70DE16D62A1AA, 0xE82CC718, 0xFFFFFFCF, 0xFFFFFFFFFFFFFFFF),   # 100022, 0
    (0x00000000000000F0, 4, 4, 0xFFFFFFFFFFFFFFFF),                     # in range: as the PTX ISA
    (0x00000000000000F0, 0x104, 4, 0x0000000000000000),                 # pos 260: past the msb, a[63] = 0
    (0x8000000000000000, 0x100, 0x100, 0xFFFFFFFFFFFFFFFF),             # pos 256, len 256 (mod 256: len 0 -> 0)
    (0x8000000000000000, 3, 0x100, 0xF000000000000000),                 # len 256 >= 64 (mod 256: 0)
])
def test_bfe_s64_reads_whole_fields(a, pos, length, want):
    got = _run([f"mov.b64 %x, {a:#x};", f"mov.b32 %b, {pos:#x};", f"mov.b32 %c, {length:#x};",
                "bfe.s64 %dd, %x, %b, %c;"], 64)
    assert got == want, f"bfe.s64 a={a:#x} pos={pos:#x} len={length:#x}: {got:#x}, want {want:#x}"


def test_bfe_u64_reads_whole_fields():
    lines = ["mov.b64 %x, 0xFFFFFFFFFFFFFFFF;", "mov.b32 %b, 0x101;", "mov.b32 %c, 8;", "bfe.u64 %dd, %x, %b, %c;"]
    assert _run(lines, 64) == 0   # pos 257 is past the msb (mod 256 it would be 1: 0xff)


@pytest.mark.parametrize("pos, length, want", [
    (0x100, 8, 0x1111111111111111),     # pos 256: nothing inserted (mod 256 it would insert at 0)
    (4, 0x100, 0xAAAAAAAAAAAAAAA1),     # len 256 >= 64: a inserted up to the msb
    (60, 8, 0xA111111111111111),
])
def test_bfi_b64_reads_whole_fields(pos, length, want):
    lines = ["mov.b64 %x, 0xAAAAAAAAAAAAAAAA;", "mov.b64 %y, 0x1111111111111111;", f"mov.b32 %b, {pos:#x};",
             f"mov.b32 %c, {length:#x};", "bfi.b64 %dd, %x, %y, %b, %c;"]
    assert _run(lines, 64) == want


# --- bfe / bfi on 32-bit types: the low 8 bits of the fields, as the PTX ISA says -----------------------------
@pytest.mark.parametrize("form, a, pos, length, want", [
    ("bfe.s32", 0x000000F0, 0x104, 0x204, 0xFFFFFFFF),   # pos 4, len 4
    ("bfe.u32", 0x000000F0, 0x104, 0x204, 0x0000000F),
    ("bfe.s32", 0x80000000, 0x20, 7, 0xFFFFFFFF),        # pos 32 in a register: a[31] replicated
    ("bfe.s32", 0x00000000, 0x20, 7, 0x00000000),
    ("bfe.s32", 0x80000000, 0x20, 0x100, 0x00000000),    # len 256 reads as 0
])
def test_bfe_32_bit_fields_are_taken_mod_256(form, a, pos, length, want):
    lines = [f"mov.b32 %a, {a:#x};", f"mov.b32 %b, {pos:#x};", f"mov.b32 %c, {length:#x};", f"{form} %d, %a, %b, %c;"]
    assert _run(lines) == want


# --- bfe.s32 with an immediate position >= 32 and an immediate length >= 1: the driver's ptxas folds it to -1 ----
@pytest.mark.parametrize("a, pos, length, want", [
    (0x00000000, 40, 7, 0xFFFFFFFF),    # ptxas 13.0 -arch=sm_90: MOV R, 0xffffffff (PTX ISA: a[31] = 0)
    (0x00000000, 32, 1, 0xFFFFFFFF),
    (0x12345678, 255, 255, 0xFFFFFFFF),
    (0x00000000, 100, 0, 0x00000000),   # len 0: 0, as the ISA
    (0x00000000, 31, 7, 0x00000000),    # pos 31 is computed: a[31] replicated, as the ISA
    (0x80000000, 31, 7, 0xFFFFFFFF),
])
def test_bfe_s32_with_immediate_fields_as_ptxas_folds_it(a, pos, length, want):
    assert _run([f"mov.b32 %a, {a:#x};", f"bfe.s32 %d, %a, {pos}, {length};"]) == want


def test_bfe_u32_with_immediate_fields_is_not_folded_differently():
    assert _run(["mov.b32 %a, 0xFFFFFFFF;", "bfe.u32 %d, %a, 40, 7;"]) == 0
