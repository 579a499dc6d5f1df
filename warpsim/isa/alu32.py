"""Per-lane 32-bit instructions of element-wise program arithmetic: forms, PTX names, warp kernels.

A traced program's element-wise arithmetic (``warpsim.program.arith``) lowers to these PTX
instructions, each on one 32-bit register per lane:

=========================  =======  ===============================================================
form (its PTX name)        sources  result, per lane
=========================  =======  ===============================================================
``mov.b32``                a        ``a``
``add.rn.f32``             a, b     ``fparith.f32_add(a, b, RN)``; ``sub``, ``mul`` alike
``fma.rn.f32``             a, b, c  ``fparith.f32_fma(a, b, c, RN)`` (one rounding)
``div.rn.f32``             a, b     ``fparith.f32_div(a, b, RN)`` (IEEE division)
``max.f32``                a, b     ``fpcompare.f32_max`` (a NaN operand gives the other one)
``neg.f32``                a        ``fpcompare.f32_neg`` (the sign bit flipped, NaN too)
``ex2.approx.ftz.f32``     a        ``mufu32.f32_ex2_approx_ftz`` (the H200's MUFU.EX2)
``lg2.approx.ftz.f32``     a        ``mufu32.f32_lg2_approx_ftz`` (the H200's MUFU.LG2)
``set.{cmp}.s32.f32``      a, b     ``0xFFFFFFFF`` where ``a cmp b`` holds, else 0 (``fpcompare.f32_set``)
``slct.b32.s32``           a, b, c  ``a`` where ``c >= 0`` as a signed integer, else ``b``
=========================  =======  ===============================================================

``{cmp}`` is one of ``eq ne lt le gt ge equ neu`` (``equ``: equal or either operand NaN).
:func:`warp_alu` runs one form for the 32 lanes of a warp; :func:`warp_shfl_bfly` is
``shfl.sync.bfly.b32 d, a, offset, 0x1f, 0xffffffff`` (every lane active: lane ``l`` reads lane
``l ^ offset``); :func:`warp_mov_lanes` sets a register to one value per lane (the lowering takes it
from a table, as it takes addresses).

>>> import numpy as np
>>> from warpsim.isa.faults import new_fault
>>> regs = np.zeros((32, 4), np.uint32); regs[:, 0] = 0x3F800000; regs[:, 1] = np.arange(32, dtype=np.float32).view(np.uint32)
>>> warp_alu(regs, 2, np.array([0, 1, -1]), ALU_FORMS.index("add.rn.f32"), NO_TABLES, new_fault())
True
>>> hex(int(regs[0, 2])), hex(int(regs[1, 2]))
('0x3f800000', '0x40000000')
>>> warp_shfl_bfly(regs, 3, 1, 2, new_fault()); regs[:4, 3].view(np.float32).tolist()
True
[2.0, 3.0, 0.0, 1.0]
>>> alu_sources("fma.rn.f32"), alu_sources("slct.b32.s32")
(3, 3)
"""

import numpy as np
from numba import njit

from warpsim.isa import fparith, fpcompare
from warpsim.isa.faults import FAULT_BAD_OPERAND, FAULT_BAD_REGISTER, set_fault
from warpsim.isa.fpcompare import CMP
from warpsim.isa.mufu32 import EX2, LG2, f32_ex2_approx_ftz, f32_lg2_approx_ftz, mufu_tables
from warpsim.isa.rounding import RN

__all__ = ["ALU_FORMS", "SET_COMPARISONS", "alu_sources", "alu_tables", "NO_TABLES", "warp_alu", "warp_shfl_bfly",
           "warp_mov_lanes", "SHFL_BFLY"]

SET_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu")
ALU_FORMS = (("mov.b32", "add.rn.f32", "sub.rn.f32", "mul.rn.f32", "fma.rn.f32", "div.rn.f32", "max.f32",
              "neg.f32", "ex2.approx.ftz.f32", "lg2.approx.ftz.f32", "slct.b32.s32")
             + tuple(f"set.{c}.s32.f32" for c in SET_COMPARISONS))
SHFL_BFLY = "shfl.sync.bfly.b32"
_SOURCES = {"mov.b32": 1, "neg.f32": 1, "ex2.approx.ftz.f32": 1, "lg2.approx.ftz.f32": 1,
            "fma.rn.f32": 3, "slct.b32.s32": 3}
_MOV, _ADD, _SUB, _MUL, _FMA, _DIV, _MAX, _NEG, _EX2, _LG2, _SLCT = range(11)
_SET = 11                                         # set.{SET_COMPARISONS[k]}: form _SET + k
_SET_CMP = np.array([CMP[c] for c in SET_COMPARISONS], np.int64)
_EMPTY = np.zeros(0, np.uint32)
NO_TABLES = (_EMPTY, _EMPTY)          # alu_tables of forms without MUFU instructions


def alu_sources(form):
    """Source registers that ``form`` reads (1, 2 or 3); ``ValueError`` for an unknown form."""
    if form not in ALU_FORMS:
        raise ValueError(f"alu: unknown instruction {form!r}; forms: {', '.join(ALU_FORMS)}")
    return _SOURCES.get(form, 2)


def alu_tables(forms):
    """``(ex2 table, lg2 table)`` of ``warpsim.isa.mufu32`` that :func:`warp_alu` needs for ``forms``
    (an empty array for a table none of them uses: the tables are large and load on first use)."""
    forms = set(forms)
    names = tuple(n for n, f in (("ex2", "ex2.approx.ftz.f32"), ("lg2", "lg2.approx.ftz.f32")) if f in forms)
    if not names:
        return NO_TABLES
    tables = mufu_tables(names)
    return tables[EX2], tables[LG2]


@njit(cache=True)
def _one(form, a, b, c, tables):
    if form == _MOV:
        return a
    if form == _ADD:
        return fparith.f32_add(a, b, RN, False, False)
    if form == _SUB:
        return fparith.f32_sub(a, b, RN, False, False)
    if form == _MUL:
        return fparith.f32_mul(a, b, RN, False, False)
    if form == _FMA:
        return fparith.f32_fma(a, b, c, RN, False, False)
    if form == _DIV:
        return fparith.f32_div(a, b, RN, False)
    if form == _MAX:
        return fpcompare.f32_max(a, b, False, False, False)
    if form == _NEG:
        return fpcompare.f32_neg(a, False)
    if form == _EX2:
        return f32_ex2_approx_ftz(a, tables[0])
    if form == _LG2:
        return f32_lg2_approx_ftz(a, tables[1])
    if form == _SLCT:
        return a if np.int32(c) >= 0 else b
    return fpcompare.f32_set(a, b, _SET_CMP[form - _SET], False, False)


@njit(cache=True)
def warp_alu(regs_w, dst, src, form, tables, fault):
    """``regs_w[:, dst] = form(regs_w[:, src[0]], ...)`` for 32 lanes (``src``: int64[3], unused -1;
    ``tables``: :func:`alu_tables` of the form).

    On a bad register or form nothing changes and ``fault`` is set; returns True when it executed.
    """
    nregs = regs_w.shape[1]
    if form < 0 or form >= _SET + _SET_CMP.shape[0]:
        set_fault(fault, FAULT_BAD_OPERAND, 0, form, _SET + _SET_CMP.shape[0])
        return False
    if dst < 0 or dst >= nregs:
        set_fault(fault, FAULT_BAD_REGISTER, 0, dst, nregs)
        return False
    for j in range(3):
        if src[j] >= nregs:
            set_fault(fault, FAULT_BAD_REGISTER, 0, src[j], nregs)
            return False
    zero = np.uint32(0)
    for lane in range(32):
        a = regs_w[lane, src[0]] if src[0] >= 0 else zero
        b = regs_w[lane, src[1]] if src[1] >= 0 else zero
        c = regs_w[lane, src[2]] if src[2] >= 0 else zero
        regs_w[lane, dst] = np.uint32(_one(form, a, b, c, tables))
    return True


@njit(cache=True)
def warp_shfl_bfly(regs_w, dst, src, offset, fault):
    """``shfl.sync.bfly.b32 d, a, offset, 0x1f, 0xffffffff``: lane ``l`` gets ``a`` of lane ``l ^ offset``."""
    nregs = regs_w.shape[1]
    if dst < 0 or dst >= nregs or src < 0 or src >= nregs:
        set_fault(fault, FAULT_BAD_REGISTER, 0, max(dst, src), nregs)
        return False
    if offset < 0 or offset > 31:
        set_fault(fault, FAULT_BAD_OPERAND, 0, offset, 31)
        return False
    values = regs_w[:, src].copy()
    for lane in range(32):
        regs_w[lane, dst] = values[lane ^ offset]
    return True


@njit(cache=True)
def warp_mov_lanes(regs_w, dst, values, fault):
    """``regs_w[l, dst] = values[l]`` (``values``: int64[32], the low 32 bits kept)."""
    nregs = regs_w.shape[1]
    if dst < 0 or dst >= nregs:
        set_fault(fault, FAULT_BAD_REGISTER, 0, dst, nregs)
        return False
    for lane in range(32):
        regs_w[lane, dst] = np.uint32(values[lane] & 0xFFFFFFFF)
    return True
