"""Integer forms where the H200 is the reference: directed cases, each from a record of the H200 or from the SASS
the driver's ptxas makes of the form (docs/ptx.md, "Integer forms: what the H200 runs").

One thread runs one instruction on operands loaded from memory (so that ptxas cannot know them), or, where the
case is about ptxas's folding, on immediates and registers set by ``mov``.
"""

import os
import re

import numpy as np
import pytest

import warpsim.ptx
from hwcheck.device.sass import disassemble, find_tool
from ptx_helpers import kernel

_REGS = {"r": ".b32", "rd": ".b64", "h": ".b16"}


_SLOTS = {"a": ("b32", 0), "b": ("b32", 1), "c": ("b32", 2), "x": ("b64", 3), "y": ("b64", 4), "z": ("b64", 5)}


def _run(lines, out_bits=32, **operands):
    """Run ``lines`` (PTX using %a %b %c (.b32), %x %y %z (.b64) and writing %d or %dd (64-bit)) in one thread;
    the stored result. ``operands`` (``a=0x80``) are loaded from memory, so ptxas cannot know them; a register set
    by ``mov`` in ``lines`` is a constant ptxas folds with."""
    store = "st.global.u64 [%rd10], %dd;" if out_bits == 64 else "st.global.u32 [%rd10], %d;"
    decls = "  .reg .b32 %a, %b, %c, %d;\n  .reg .b64 %x, %y, %z, %dd;\n  .reg .b16 %hh;\n"
    loads = [f"ld.global.{'u64' if _SLOTS[n][0] == 'b64' else 'u32'} %{n}, [%rd11+{8 * _SLOTS[n][1]}];"
             for n in operands]
    body = "\n".join(f"  {line}" for line in loads + list(lines)) + f"\n  {store}"
    text = kernel(body, params=("out", "inp"), prologue=False, decls=decls)
    inp = np.zeros(6, np.uint64)
    for n, v in operands.items():
        inp[_SLOTS[n][1]] = v
    out = np.zeros(1, np.uint64 if out_bits == 64 else np.uint32)
    res = warpsim.ptx.load(text).launch("k", block=1, args={"out": out, "inp": inp}, quiet=True)
    return int(res.buffers["out"][0])


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
    assert _run([f"{form} %d, %a;"], a=a) == want


@pytest.mark.parametrize("a, want", [(0x8000000000000000, 0x7FFFFFFFFFFFFFFF), (0xFFFFFFFFFFFFFFFE, 0x7FFFFFFFFFFFFFFF),
                                     (0x7FFFFFFFFFFFFFFF, 0x7FFFFFFFFFFFFFFF), (5, 5)])
def test_cvt_sat_s64_u64_clamps(a, want):
    # PTX ISA, cvt: .sat clamps to the destination's range; ptxas folds the constant case so (it was not clamped)
    assert _run(["cvt.sat.s64.u64 %dd, %x;"], 64, x=a) == want


def test_cvt_into_a_16_bit_register_keeps_16_bits():
    got = _run(["cvt.s16.s32 %hh, %a;", "cvt.u32.u16 %d, %hh;"], a=0x18000)
    assert got == 0x8000


def test_cvt_to_s16_in_a_64_bit_register_sign_extends_to_64():
    assert _run(["cvt.s16.s32 %dd, %a;"], 64, a=0x8000) == 0xFFFFFFFFFFFF8000


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
    got = _run(["bfe.s64 %dd, %x, %b, %c;"], 64, x=a, b=pos, c=length)
    assert got == want, f"bfe.s64 a={a:#x} pos={pos:#x} len={length:#x}: {got:#x}, want {want:#x}"


def test_bfe_u64_reads_whole_fields():
    got = _run(["bfe.u64 %dd, %x, %b, %c;"], 64, x=0xFFFFFFFFFFFFFFFF, b=0x101, c=8)
    assert got == 0   # pos 257 is past the msb (mod 256 it would be 1: 0xff)


@pytest.mark.parametrize("pos, length, want", [
    (0x100, 8, 0x1111111111111111),     # pos 256: nothing inserted (mod 256 it would insert at 0)
    (4, 0x100, 0xAAAAAAAAAAAAAAA1),     # len 256 >= 64: a inserted up to the msb
    (60, 8, 0xA111111111111111),
])
def test_bfi_b64_reads_whole_fields(pos, length, want):
    got = _run(["bfi.b64 %dd, %x, %y, %b, %c;"], 64, x=0xAAAAAAAAAAAAAAAA, y=0x1111111111111111, b=pos, c=length)
    assert got == want


# --- bfe / bfi on 32-bit types: the low 8 bits of the fields, as the PTX ISA says -----------------------------
@pytest.mark.parametrize("form, a, pos, length, want", [
    ("bfe.s32", 0x000000F0, 0x104, 0x204, 0xFFFFFFFF),   # pos 4, len 4
    ("bfe.u32", 0x000000F0, 0x104, 0x204, 0x0000000F),
    ("bfe.s32", 0x80000000, 0x20, 7, 0xFFFFFFFF),        # pos 32 in a register: a[31] replicated
    ("bfe.s32", 0x00000000, 0x20, 7, 0x00000000),
    ("bfe.s32", 0x80000000, 0x20, 0x100, 0x00000000),    # len 256 reads as 0
])
def test_bfe_32_bit_fields_are_taken_mod_256(form, a, pos, length, want):
    assert _run([f"{form} %d, %a, %b, %c;"], a=a, b=pos, c=length) == want


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
    assert _run([f"bfe.s32 %d, %a, {pos}, {length};"], a=a) == want


def test_bfe_u32_with_immediate_fields_is_not_folded_differently():
    assert _run(["bfe.u32 %d, %a, 40, 7;"], a=0xFFFFFFFF) == 0


# --- the same, where the fields reach bfe.s32 through registers holding constants ptxas knows -----------------
@pytest.mark.parametrize("lines, want", [
    # H200, hwcheck fuzz seed 100022: mov.u32 %r9, 3777034593 ... bfe.s32 %r1, %r6, %r9, 7 with %r6 = 0: all ones
    (["mov.u32 %b, 3777034593;", "bfe.s32 %d, %a, %b, 7;"], 0xFFFFFFFF),
    (["mov.u32 %b, 40;", "mov.u32 %c, %b;", "bfe.s32 %d, %a, %c, 1;"], 0xFFFFFFFF),        # a copy
    (["mov.u32 %b, 20;", "add.u32 %c, %b, %b;", "bfe.s32 %d, %a, %c, 7;"], 0xFFFFFFFF),    # a sum
    (["mov.u32 %b, 0x105;", "bfe.s32 %d, %a, %b, 4;"], 0x00000000),                        # low byte 5: computed
    (["mov.u32 %b, 0x120;", "bfe.s32 %d, %a, %b, 4;"], 0xFFFFFFFF),                        # low byte 32: folded
])
def test_bfe_s32_with_constant_registers_as_ptxas_folds_it(lines, want):
    assert _run(lines, a=0) == want


@pytest.mark.parametrize("a, want", [(0x00000001, 0x00000000), (0x80000000, 0xFFFFFFFF)])
def test_bfe_s32_with_every_operand_constant_folds_as_the_isa(a, want):
    # ptxas 13.0, all three known: the ISA's a[31] replicated (STG of RZ for a = 1)
    assert _run([f"mov.b32 %a, {a:#x};", "bfe.s32 %d, %a, 40, 7;"]) == want


def test_a_field_that_is_not_constant_on_every_path_is_computed():
    lines = ["mov.u32 %b, 40;", "setp.eq.u32 %p1, %a, 0;", "@%p1 bra $L_skip;", "ld.global.u32 %b, [%rd11+8];",
             "$L_skip:", "bfe.s32 %d, %a, %b, 7;"]
    assert _run(lines, a=0) == 0   # %b is 40 on one path only: the run-time sequence, a[31] = 0


# --- the same, where ptxas learns `a` later than the fields: its early folding knows one segment of straight-line
# code (warpsim.ptx.constants.segment_constants); a constant `a` from an earlier segment is learnt after the fold
_A = "mov.u32 %b, 399750814;"    # 0x17d3b69e: a[31] = 0, so the ISA gives 0 and ptxas's fold all ones
LEARNS_AFTER = [
    # H200, hwcheck fuzz seed 107088: mov.u32 %r9, 399750814 ... bfe.u64 ... bfe.s32 %r0, %r9, 255, 64: all ones
    ([_A, "bfe.u64 %dd, %x, 255, %c;", "bfe.s32 %d, %b, 255, 64;"], 0xFFFFFFFF),
    ([_A, "bfe.s32 %d, %b, 255, 64;", "bfe.u64 %dd, %x, 255, %c;"], 0x00000000),    # the 64-bit bfe after it
    ([_A, "bfe.s32 %d, %b, 255, 64;"], 0x00000000),                                # one segment: the ISA
    ([_A, "$L_a:", "bfe.s32 %d, %b, 255, 64;"], 0xFFFFFFFF),                       # a label ends a segment
    ([_A, "div.u32 %a, %a, %c;", "bfe.s32 %d, %b, 255, 64;"], 0xFFFFFFFF),         # so does a div
    ([_A, "brev.b64 %dd, %x;", "bfe.s32 %d, %b, 255, 64;"], 0xFFFFFFFF),
    ([_A, "popc.b64 %a, %x;", "bfe.s32 %d, %b, 255, 64;"], 0x00000000),            # not a popc
    ([_A, "fence.sc.cta;", "bfe.s32 %d, %b, 255, 64;"], 0xFFFFFFFF),
    ([_A, "div.approx.f32 %a, %a, %c;", "bfe.s32 %d, %b, 255, 64;"], 0xFFFFFFFF),  # f32 without .ftz
    ([_A, "ex2.approx.ftz.f32 %a, %a;", "bfe.s32 %d, %b, 255, 64;"], 0x00000000),  # with .ftz: not
    ([_A, "mov.u32 %a, 255;", "$L_a:", "bfe.s32 %d, %b, %a, 64;"], 0x00000000),    # fields learnt with a
    (["mov.u32 %a, 255;", "$L_a:", _A, "bfe.s32 %d, %b, %a, 64;"], 0x00000000),    # a learnt first
    ([_A, "$L_a:", "mov.u32 %a, 255;", "bfe.s32 %d, %b, %a, 64;"], 0xFFFFFFFF),    # fields learnt first
    ([_A, "$L_a:", "xor.b32 %a, %b, 1;", "bfe.s32 %d, %a, 255, 64;"], 0xFFFFFFFF),
    # H200, hwcheck fuzz seed 105231: cvt.s32.s64 %r5, %rd5 of a mov'd %rd5 (low byte 0x59) as the position
    (["mov.b64 %y, 0xd8bde4e9f4359559;", "cvt.s32.s64 %a, %y;", "$L_a:", "bfe.s32 %d, %c, %a, 32;"], 0xFFFFFFFF),
    (["mov.b64 %y, 0xd8bde4e9f4359518;", "cvt.s32.s64 %a, %y;", "$L_a:", "bfe.s32 %d, %c, %a, 32;"], 0x00000000),
]


@pytest.mark.parametrize("lines, want", LEARNS_AFTER)
def test_bfe_s32_whose_a_ptxas_learns_after_the_fields(lines, want):
    # ptxas 13.0 -arch=sm_90 read with nvdisasm: MOV R, 0xffffffff where all ones, STG of RZ (or SGXT) where 0
    assert _run(lines, c=0, x=0x0123456789ABCDEF) == want


_MISSING = [t for t in ("ptxas", "nvdisasm") if find_tool(t) is None]
_CONSTANT = re.compile(r"^(?:MOV|IMAD\.MOV\.U32) (R\d+), (?:RZ, RZ, )?(-?0x[0-9a-f]+|\d+)$")


def _stored_constant(sass):
    """The constant the last ``STG`` of ``sass`` stores (``RZ`` is 0), or None where it is computed."""
    store = [s for s in sass if s.startswith("STG")][-1]
    reg = store.split(",")[-1].strip()
    if reg == "RZ":
        return 0
    value = None
    for s in sass[:sass.index(store)]:
        m = _CONSTANT.match(s)
        if m and m.group(1) == reg:
            value = int(m.group(2), 0) & 0xFFFFFFFF
        elif re.match(rf"^(@!?P\d+ )?\S+ {reg}\b", s):
            value = None
    return value


@pytest.mark.skipif(bool(_MISSING) and os.environ.get("CI") != "true",
                    reason=f"needs {' and '.join(_MISSING)} (nvdisasm: pip install nvidia-cuda-nvdisasm)")
@pytest.mark.parametrize("lines, want", LEARNS_AFTER)
def test_ptxas_stores_what_the_interpreter_gives(lines, want, monkeypatch):
    """The same kernels through ptxas (sm_90) and nvdisasm: where the SASS stores a constant, it is the
    interpreter's result; where it computes (the run-time sequence, the ISA's value), the interpreter gives the
    ISA's value, which an all-ones fold is not here."""
    texts, load = [], warpsim.ptx.load
    monkeypatch.setattr(warpsim.ptx, "load", lambda text, **kw: texts.append(text) or load(text, **kw))
    got = _run(lines, c=0, x=0x0123456789ABCDEF)
    ptxas = _stored_constant(disassemble(texts[0], "sm_90"))
    assert ptxas == got if ptxas is not None else got != 0xFFFFFFFF, (
        f"{' '.join(lines)}: ptxas stores {ptxas}, the interpreter gives {got:#x}")
