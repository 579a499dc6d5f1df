"""Float instructions for the lanes of a warp at once (``@njit``): the operands' bits in, the results' bits out.

Each form below is decided once per warp instruction and run as one loop over the lanes with one isa call each,
giving for each lane exactly what :func:`warpsim.ptx.families.floats.fpu.float_result` gives for it (the same isa
models, called with the same arguments). The forms compiled CUDA code runs most, and the flash-attention forward's
inner loop is made of:

- :func:`f32_in_place`, straight from the registers to the destination register:
  ``add sub mul fma .rn{.ftz}{.sat}.f32`` (the host's binary32 unit, ``warpsim.isa.hostfloat``; a contracted sub's
  negated operand too), ``max min{.ftz}{.NaN}{.xorsign.abs}.f32`` and ``neg abs{.ftz}.f32``
  (``warpsim.isa.fpcompare``), ``ex2.approx{.ftz}.f32`` (``MUFU.EX2``: ``warpsim.isa.mufu32``, ``sfu_exp``'s
  datapath, its coefficients taken once); nvcc's default forms (no ``.ftz``/``.sat``) on 32-bit registers only in
  loops without the operand kinds' branches (``_f32_registers``: half the host cycles);
- :func:`hoisted_in_place`, also register to register: ``add sub mul fma .rz .rm .rp{.ftz}{.sat}.f32`` and
  ``.f16x2`` (``warpsim.isa.fparith``), ``setp{.bop}{.ftz}.f32`` (``fpcompare.f32_setp``), ``cvt.{irnd}.{int}.f32``
  (``cvt.cvt_float_to_int``);
- :func:`warp_float`, on operands gathered into arrays: ``cvt`` between float formats (``cvt.rn.f16.f32``,
  ``cvt.f32.f16`` ...: ``warpsim.isa.cvt.cvt_float``, the formats and modifiers decoded once; ``cvt.rn.f16.f32`` and
  ``cvt.rn.bf16.f32`` by ``cvt_f32_to_16``, the same bits in a few integer operations), and every other form
  lane by lane through ``plain_result`` (``float_result`` without the MUFU tables' tuple, which costs a lane more
  to pass than most of its forms cost to compute) or, for the MUFU forms, ``float_result``.

``tests/ptx/test_warp_float.py`` checks all three against ``float_result`` on special and random bits.

>>> import numpy as np
>>> from warpsim.ptx.families.floats.fpu import FOPS, mufu_operands
>>> from warpsim.ptx.opcodes import TK_F
>>> a = np.full(32, 0x3F800000, np.int64); d = np.zeros(32, np.int64); q = np.zeros(32, np.int64)
>>> warp_float(Op.FARITH, TK_F, 32, FOPS.index("add"), 0, 0, 0, 0, 0, 0xFFFFFFFF, a, a, a, d, q, mufu_operands())
>>> hex(d[0]), int(d[31])
('0x40000000', 1073741824)
"""

import numpy as np

from warpsim.isa import fparith as fa
from warpsim.isa import fpcompare as fc
from warpsim.isa import mufu32 as m32
from warpsim.isa.cvt import BF16_CODE, F16_CODE, cvt_f32_to_16, cvt_float, cvt_float_to_int
from warpsim.isa.hostfloat import host_f32_add, host_f32_fma, host_f32_mul
from warpsim.isa.rounding import RN
from warpsim.isa.scratch import njit_borrowing, stack_array
from warpsim.ptx.families.floats.fpu import (CVT_KINDS, FLAGS, FMT, FOPS, FORMATS, NEGATE, float_result,
                                             plain_result, setp_bool, sign_bits, uses_tables)
from warpsim.ptx.opcodes import TK_F, TK_F16X2, TK_S, Op
from warpsim.ptx.operands import advance, lane_get, lane_put, operand_fields
from warpsim.ptx.rows import K_REG, M0, M1, M2, M3, SB, SK, TB, TK

__all__ = ["f32_in_place", "hoisted_in_place", "warp_float", "warp_float_rows"]

_ADD, _SUB, _MUL, _FMA = FOPS.index("add"), FOPS.index("sub"), FOPS.index("mul"), FOPS.index("fma")
_MIN, _MAX, _ABS, _NEG = FOPS.index("min"), FOPS.index("max"), FOPS.index("abs"), FOPS.index("neg")
_EX2 = FOPS.index("ex2")
_FTZ, _SAT, _NAN, _XORSIGN = FLAGS["ftz"], FLAGS["sat"], FLAGS["nan_mode"], FLAGS["xorsign_abs"]
_NEG_A, _NEG_C = FLAGS["neg_a"], FLAGS["neg_c"]
_RELU, _SATFINITE = FLAGS["relu"], FLAGS["satfinite"]
_CVT_FLOAT, _CVT_TO_INT = CVT_KINDS.index("float"), CVT_KINDS.index("to_int")
_F32 = FORMATS.index("f32")
_MUFU = FLAGS["approx"] | FLAGS["full"]          # the forms float_result takes to warpsim.isa.mufu32


@njit_borrowing
def _cvt_lanes(rnd, flags, fmts, gmask, a, d):
    """``cvt`` between float formats (``CVT_KINDS``' ``float``: ``warpsim.isa.cvt.cvt_float``) for the lanes of
    ``gmask``, the formats and modifiers decoded once."""
    ftz, sat = (flags & _FTZ) != 0, (flags & _SAT) != 0
    relu, sf = (flags & _RELU) != 0, (flags & _SATFINITE) != 0
    s_eb, s_fb, s_sh = FMT[fmts >> 3]
    d_eb, d_fb, d_sh = FMT[fmts & 7]
    if rnd == RN and not (sat or relu or sf) and s_eb == 8 and s_fb == 23 and s_sh == 0 and d_sh == 0 and (
            (d_eb == 5 and d_fb == 10) or (d_eb == 8 and d_fb == 7 and not ftz)):
        to = F16_CODE if d_eb == 5 else BF16_CODE           # cvt.rn{.ftz}.f16.f32, cvt.rn.bf16.f32: the same bits
        for lane in range(32):                              # by integer arithmetic (cvt_f32_to_16's proof)
            if (gmask >> lane) & 1:
                d[lane] = cvt_f32_to_16(a[lane], to)
        return True
    for lane in range(32):
        if (gmask >> lane) & 1:
            d[lane] = cvt_float(a[lane], s_eb, s_fb, s_sh, d_eb, d_fb, d_sh, rnd, ftz, sat, relu, sf)
    return True


@njit_borrowing
def warp_float(op, tk, tb, m0, m1, m2, m3, sk, sb, gmask, a, b, c, d, q, mt):
    """``d[lane], q[lane] = float_result(op, ..., a[lane], b[lane], c[lane], mt)`` for each lane of ``gmask``.

    ``a, b, c``: int64[32], the source operands' bits as ``float_result`` takes them; ``d, q``: int64[32],
    written at the lanes of ``gmask`` only; the row fields as :mod:`warpsim.ptx.families.floats.fpu` describes them.
    """
    if op == Op.FARITH and m2 & NEGATE:               # a contracted sub: its fma's operand negated once, here
        sign = sign_bits(tk, tb)
        for lane in range(32):
            a[lane] ^= sign if m2 & _NEG_A else 0
            c[lane] ^= sign if m2 & _NEG_C else 0
        m2 &= ~NEGATE
    if op == Op.FCVT and m0 == _CVT_FLOAT and _cvt_lanes(m1, m2, m3, gmask, a, d):
        for lane in range(32):
            if (gmask >> lane) & 1:
                q[lane] = 0
        return
    if uses_tables(op, tk, tb, m0, m2):
        for lane in range(32):
            if (gmask >> lane) & 1:
                d[lane], q[lane] = float_result(op, tk, tb, m0, m1, m2, m3, sk, sb, a[lane], b[lane], c[lane], mt)
        return
    for lane in range(32):                              # the tables' tuple not passed lane by lane: 2-4x faster
        if (gmask >> lane) & 1:
            d[lane], q[lane] = plain_result(op, tk, tb, m0, m1, m2, m3, sk, sb, a[lane], b[lane], c[lane])


@njit_borrowing
def _f32_registers(fop, flags, gmask, r, s0, s1, s2, s3, na, nc):
    """``add sub mul fma .rn.f32`` and ``max min{.NaN}{.xorsign.abs}.f32`` of 32-bit registers (slots ``s1 s2 s3`` to
    ``s0`` of ``r``: one warp's registers), no ``.ftz``/``.sat``: :func:`f32_in_place`'s loops without the operand
    kinds' branches."""
    if fop == _MAX or fop == _MIN:
        nan, xs = (flags & _NAN) != 0, (flags & _XORSIGN) != 0
        for lane in range(32):
            if (gmask >> lane) & 1:
                a, b = np.int64(r[lane, s1]) ^ na, np.int64(r[lane, s2])
                r[lane, s0] = fc.f32_max(a, b, False, nan, xs) if fop == _MAX else fc.f32_min(a, b, False, nan, xs)
    elif fop == _FMA:
        for lane in range(32):
            if (gmask >> lane) & 1:
                r[lane, s0] = host_f32_fma(np.int64(r[lane, s1]) ^ na, np.int64(r[lane, s2]),
                                           np.int64(r[lane, s3]) ^ nc, False, False)
    elif fop == _MUL:
        for lane in range(32):
            if (gmask >> lane) & 1:
                r[lane, s0] = host_f32_mul(np.int64(r[lane, s1]) ^ na, np.int64(r[lane, s2]), False, False)
    else:
        flip = np.int64(0x80000000) if fop == _SUB else np.int64(0)
        for lane in range(32):
            if (gmask >> lane) & 1:
                r[lane, s0] = host_f32_add(np.int64(r[lane, s1]) ^ na, np.int64(r[lane, s2]) ^ flip, False, False)


@njit_borrowing
def f32_in_place(fop, rnd, flags, gmask, regs, w, k0, s0, n0, k1, s1, n1, i1, g1, k2, s2, n2, i2, g2, k3, s3, n3,
                 i3, g3, ex2):
    """The in-place f32 forms of the module docstring for the lanes of ``gmask`` of warp ``w``: operands ``a, b, c``
    (fields ``k1 s1 n1 i1 g1`` ...: :func:`warpsim.ptx.operands.operand_fields`) to the destination ``k0 s0 n0``, one
    loop per operation (``rnd``, ``flags``: the row's ``M1``, ``M2``; ``ex2``: the EX2 coefficients). False, with
    nothing written, for any other form."""
    ftz, sat = (flags & _FTZ) != 0, (flags & _SAT) != 0
    na = np.int64(0x80000000) if flags & _NEG_A else np.int64(0)      # a contracted sub's negated operand
    nc = np.int64(0x80000000) if flags & _NEG_C else np.int64(0)
    if (not (flags & (_MUFU | _FTZ | _SAT)) and (fop <= _FMA and rnd == RN or fop == _MAX or fop == _MIN)
            and k0 == K_REG and n0 == 1 and k1 == K_REG and n1 == 1 and k2 == K_REG and n2 == 1
            and (fop != _FMA or (k3 == K_REG and n3 == 1))):
        _f32_registers(fop, flags, gmask, regs[w], s0, s1, s2, s3, na, nc)   # nvcc's default forms, registers only
        return True
    if flags & _MUFU:
        if fop != _EX2:
            return False
        for lane in range(32):
            if (gmask >> lane) & 1:
                a = np.uint32(lane_get(regs, w, lane, k1, s1, n1, i1, g1))
                lane_put(regs, w, lane, k0, s0, n0, np.int64(m32.f32_ex2_approx_ftz(a, ex2) if ftz
                                                              else m32.f32_ex2_approx(a, ex2)))
    elif fop == _FMA and rnd == RN:
        for lane in range(32):
            if (gmask >> lane) & 1:
                lane_put(regs, w, lane, k0, s0, n0, np.int64(host_f32_fma(
                    lane_get(regs, w, lane, k1, s1, n1, i1, g1) ^ na, lane_get(regs, w, lane, k2, s2, n2, i2, g2),
                    lane_get(regs, w, lane, k3, s3, n3, i3, g3) ^ nc, ftz, sat)))
    elif fop == _MUL and rnd == RN:
        for lane in range(32):
            if (gmask >> lane) & 1:
                lane_put(regs, w, lane, k0, s0, n0, np.int64(host_f32_mul(
                    lane_get(regs, w, lane, k1, s1, n1, i1, g1) ^ na, lane_get(regs, w, lane, k2, s2, n2, i2, g2),
                    ftz, sat)))
    elif (fop == _ADD or fop == _SUB) and rnd == RN:
        flip = np.int64(0x80000000) if fop == _SUB else np.int64(0)
        for lane in range(32):
            if (gmask >> lane) & 1:
                lane_put(regs, w, lane, k0, s0, n0, np.int64(host_f32_add(
                    lane_get(regs, w, lane, k1, s1, n1, i1, g1) ^ na,
                    lane_get(regs, w, lane, k2, s2, n2, i2, g2) ^ flip, ftz, sat)))
    elif fop == _MAX or fop == _MIN:
        nan, xs = (flags & _NAN) != 0, (flags & _XORSIGN) != 0
        for lane in range(32):
            if (gmask >> lane) & 1:
                a = lane_get(regs, w, lane, k1, s1, n1, i1, g1) ^ na
                b = lane_get(regs, w, lane, k2, s2, n2, i2, g2)
                lane_put(regs, w, lane, k0, s0, n0, np.int64(fc.f32_max(a, b, ftz, nan, xs) if fop == _MAX
                                                              else fc.f32_min(a, b, ftz, nan, xs)))
    elif fop == _NEG or fop == _ABS:
        for lane in range(32):
            if (gmask >> lane) & 1:
                a = lane_get(regs, w, lane, k1, s1, n1, i1, g1) ^ na
                lane_put(regs, w, lane, k0, s0, n0, np.int64(fc.f32_neg(a, ftz) if fop == _NEG else fc.f32_abs(a, ftz)))
    else:
        return False
    return True


@njit_borrowing
def hoisted_in_place(op, tk, tb, m0, m1, m2, m3, gmask, regs, w, k0, s0, n0, k1, s1, n1, i1, g1, k2, s2, n2, i2, g2,
                     k3, s3, n3, i3, g3, k4, s4, n4, i4, g4):
    """Forms compiled code runs in loops, for the lanes of ``gmask`` of warp ``w`` straight from the registers to the
    destination, the modifiers decoded once, one isa call a lane (what :func:`plain_result` calls for them):

    - ``add sub mul fma`` ``.rz .rm .rp{.ftz}{.sat}.f32`` (``warpsim.isa.fparith``; ``.rn``: :func:`f32_in_place`)
      and ``.f16x2`` (a contracted sub's negated operand too);
    - ``setp.{cmp}{.bop}{.ftz}.f32 p|q, a, b, c`` (``fpcompare.f32_setp``);
    - ``cvt.{irnd}{.ftz}{.sat}.{int}.f32`` (``cvt.cvt_float_to_int``).

    The operands' fields as :func:`warpsim.ptx.operands.operand_fields` gives them, by position in the row: 0 the
    destination (``setp``: ``p``), 1 ``a`` (``setp``: ``q``), then ``b``, ``c`` (``setp``: ``a, b, c``); ``m0 ..
    m3``: the row's ``M0 .. M3``. False, with nothing written, for any other form."""
    ftz, sat, relu = (m2 & _FTZ) != 0, (m2 & _SAT) != 0, (m2 & _RELU) != 0
    if op == Op.FSETP:
        if tk != TK_F or tb != 32:
            return False
        for lane in range(32):
            if (gmask >> lane) & 1:
                p = fc.f32_setp(lane_get(regs, w, lane, k2, s2, n2, i2, g2), lane_get(regs, w, lane, k3, s3, n3, i3, g3),
                                m0, ftz)
                pred = lane_get(regs, w, lane, k4, s4, n4, i4, g4) & 1
                lane_put(regs, w, lane, k0, s0, n0, setp_bool(m1, np.int64(p), pred))
                lane_put(regs, w, lane, k1, s1, n1, setp_bool(m1, np.int64(not p), pred))
        return True
    if op == Op.FCVT:
        if m0 != _CVT_TO_INT or (m3 >> 3) != _F32:
            return False
        signed = tk == TK_S
        for lane in range(32):
            if (gmask >> lane) & 1:
                lane_put(regs, w, lane, k0, s0, n0, np.int64(cvt_float_to_int(
                    lane_get(regs, w, lane, k1, s1, n1, i1, g1), 8, 23, tb, signed, m1, ftz)))
        return True
    if op != Op.FARITH or m0 > _FMA or m2 & _MUFU:
        return False
    x2 = tk == TK_F16X2
    if not (x2 or (tk == TK_F and tb == 32 and m1 != RN)):
        return False
    sign = np.int64(0x80008000) if x2 else np.int64(0x80000000)
    na = sign if m2 & _NEG_A else np.int64(0)          # a contracted sub's negated operand
    nc = sign if m2 & _NEG_C else np.int64(0)
    for lane in range(32):
        if (gmask >> lane) & 1:
            a = lane_get(regs, w, lane, k1, s1, n1, i1, g1) ^ na
            b = lane_get(regs, w, lane, k2, s2, n2, i2, g2)
            if m0 == _FMA:
                c = lane_get(regs, w, lane, k3, s3, n3, i3, g3) ^ nc
                d = np.int64(fa.f16x2_fma(a, b, c, m1, ftz, sat, relu) if x2 else fa.f32_fma(a, b, c, m1, ftz, sat))
            elif m0 == _MUL:
                d = np.int64(fa.f16x2_mul(a, b, m1, ftz, sat) if x2 else fa.f32_mul(a, b, m1, ftz, sat))
            elif m0 == _ADD:
                d = np.int64(fa.f16x2_add(a, b, m1, ftz, sat) if x2 else fa.f32_add(a, b, m1, ftz, sat))
            else:
                d = np.int64(fa.f16x2_sub(a, b, m1, ftz, sat) if x2 else fa.f32_sub(a, b, m1, ftz, sat))
            lane_put(regs, w, lane, k0, s0, n0, d)
    return True


@njit_borrowing
def warp_float_rows(p, op, w, group, gmask, code, opnd, regs, pc, mt):
    """A float instruction (``FARITH ... FCVT`` rows) for a whole group: the lanes' operands gathered once,
    :func:`warp_float`, the results scattered; advances the group's pcs."""
    tk, tb, m0 = code[p, TK], code[p, TB], code[p, M0]
    t0 = 32 * w
    # operand fields, read once: d (0), a (1), b (2), c (3), e (4)
    k0, s0, n0, i0, g0 = operand_fields(code, opnd, p, 0)
    k1, s1, n1, i1, g1 = operand_fields(code, opnd, p, 1)
    k2, s2, n2, i2, g2 = operand_fields(code, opnd, p, 2)
    k3, s3, n3, i3, g3 = operand_fields(code, opnd, p, 3)
    k4, s4, n4, i4, g4 = operand_fields(code, opnd, p, 4)
    if op == Op.FARITH and tk == TK_F and tb == 32 \
            and f32_in_place(m0, code[p, M1], code[p, M2], gmask, regs, w, k0, s0, n0, k1, s1, n1, i1, g1, k2, s2, n2,
                             i2, g2, k3, s3, n3, i3, g3, mt[m32.EX2]):
        pass
    elif hoisted_in_place(op, tk, tb, m0, code[p, M1], code[p, M2], code[p, M3], gmask, regs, w, k0, s0, n0, k1, s1, n1,
                          i1, g1, k2, s2, n2, i2, g2, k3, s3, n3, i3, g3, k4, s4, n4, i4, g4):
        pass
    elif op >= Op.FARITH and op <= Op.FCVT:
        m1, m2, m3, sk, sb = code[p, M1], code[p, M2], code[p, M3], code[p, SK], code[p, SB]
        setp = op == Op.FSETP                               # p|q, a, b, c; the others d, a, b, c
        av, bv, cv = stack_array(32, np.int64), stack_array(32, np.int64), stack_array(32, np.int64)
        dv, qv = stack_array(32, np.int64), stack_array(32, np.int64)
        for lane in range(32):
            if (gmask >> lane) & 1:
                if setp:
                    av[lane] = lane_get(regs, w, lane, k2, s2, n2, i2, g2)
                    bv[lane] = lane_get(regs, w, lane, k3, s3, n3, i3, g3)
                    cv[lane] = lane_get(regs, w, lane, k4, s4, n4, i4, g4)
                else:
                    av[lane] = lane_get(regs, w, lane, k1, s1, n1, i1, g1)
                    bv[lane] = lane_get(regs, w, lane, k2, s2, n2, i2, g2)
                    cv[lane] = lane_get(regs, w, lane, k3, s3, n3, i3, g3)
        warp_float(op, tk, tb, m0, m1, m2, m3, sk, sb, gmask, av, bv, cv, dv, qv, mt)
        for lane in range(32):
            if (gmask >> lane) & 1:
                lane_put(regs, w, lane, k0, s0, n0, dv[lane])
                if setp:
                    lane_put(regs, w, lane, k1, s1, n1, qv[lane])
    advance(pc, t0, group)
    return True
