"""Float instructions of PTX on one thread's values (``@njit``), every result from :mod:`warpsim.isa`.

Nothing here computes a float: each branch calls the isa's scalar model of the instruction
(``fparith``, ``fpcompare``, ``fp64`` for ``.f64``, ``cvt``, ``mufu16`` for ``ex2``/``tanh.approx`` on 16-bit types; for
``add sub mul fma .rn .f32`` its host fast path ``hostfloat``, the same bits), so the interpreter and the isa agree by construction
(their rules and evidence: docs/numerics.md). :func:`float_result` takes the decoded row's fields
and the source operands' bits and returns the destination bits ``(d, q)`` (``q``: the second
predicate of ``setp``, 0 for the others). The row's fields (filled by
:mod:`warpsim.ptx.families.floats.decode`):

======================  ========================  ===========  ===============  ==================
``Op``                  ``M0``                    ``M1``       ``M2``           ``M3``
======================  ========================  ===========  ===============  ==================
``FARITH`` d = f(a,b,c) ``FOPS`` index            rounding     ``FLAGS``        -
``FSETP``  p|q, a, b    ``fpcompare.CMP`` code    ``BOOL``     ``FLAGS``        -
``FSET``   d, a, b      ``fpcompare.CMP`` code    -            ``FLAGS``        -
``FTESTP`` p, a         ``fpcompare.TESTP`` code  -            -                -
``FCVT``   d, a(, b)    ``CVT_KINDS`` index       rounding     ``FLAGS``        src * 8 + dst fmt
======================  ========================  ===========  ===============  ==================

The type is in ``TK, TB`` (``cvt``: destination; its source in ``SK, SB``).

>>> from warpsim.ptx.opcodes import TK_F
>>> d, q = float_result(Op.FARITH, TK_F, 32, FOPS.index("add"), 0, 0, 0, 0, 0, 0x3F800000, 0x3F800000, 0,
...                     mufu_operands())
>>> hex(d)
'0x40000000'
"""

import numpy as np
from numba import njit

from warpsim.isa import fp64 as f64
from warpsim.isa import fparith as fa
from warpsim.isa import fpcompare as fc
from warpsim.isa import mufu16 as mu
from warpsim.isa import mufu32 as m32
from warpsim.isa import mufu_recip as mr
from warpsim.isa import sfu_sincos as sc
from warpsim.isa.cvt import FLOAT_CODES, cvt_float, cvt_float_to_int, cvt_int_to_float, cvt_pack_x2, cvt_round_int
from warpsim.isa.hostfloat import host_f32_add, host_f32_fma, host_f32_mul
from warpsim.isa.rounding import RN
from warpsim.isa.scratch import njit_borrowing
from warpsim.ptx.opcodes import TK_BF, TK_BF16X2, TK_F, TK_F16X2, TK_S, Op
from warpsim.ptx.operands import get, put
from warpsim.ptx.rows import M0, M1, M2, M3, NOPS, O0, SB, SK, TB, TK

__all__ = ["FOPS", "FLAGS", "NEGATE", "sign_bits", "CVT_KINDS", "FORMATS", "MUFU32_TABLE", "SINCOS_SLOT", "float_result",
           "plain_result", "setp_bool", "uses_tables", "thread_float", "kernel_mufu_tables", "mufu_operands"]

# FARITH's operations, in M0 (mad is fma; ex2 and tanh: the 16-bit .approx forms, H200 tables)
FOPS = ("add", "sub", "mul", "fma", "div", "sqrt", "rcp", "min", "max", "abs", "neg", "copysign", "ex2", "tanh", "lg2",
        "rsqrt", "sin", "cos")
(_ADD, _SUB, _MUL, _FMA, _DIV, _SQRT, _RCP, _MIN, _MAX, _ABS, _NEG, _COPYSIGN, _EX2, _TANH, _LG2,
 _RSQRT, _SIN, _COS) = range(len(FOPS))
# modifier flags in M2: the isa's parameter names (isa.fpops.MODIFIER_NAMES) and cvt's .satfinite
FLAGS = {"ftz": 1, "sat": 2, "relu": 4, "nan_mode": 8, "xorsign_abs": 16, "as_float": 32, "satfinite": 64,
         "approx": 128, "full": 256, "neg_a": 512, "neg_c": 1024, "addend": 2048}
_FTZ, _SAT, _RELU, _NAN, _XORSIGN, _AS_FLOAT, _SATFINITE, _APPROX, _FULL, _NEG_A, _NEG_C, _ADDEND = FLAGS.values()
NEGATE = _NEG_A | _NEG_C     # fma of a contracted sub (warpsim.ptx.contraction): the sign of a or c flipped first
# the f32 MUFU forms (``.approx``, M2 & APPROX): FOPS index -> warpsim.isa.mufu32 table index
MUFU32_TABLE = {FOPS.index("ex2"): m32.EX2, FOPS.index("rcp"): m32.RCP, FOPS.index("rsqrt"): m32.RSQ,
                FOPS.index("sqrt"): m32.SQRT, FOPS.index("lg2"): m32.LG2, FOPS.index("tanh"): m32.TANH,
                FOPS.index("div"): m32.RCP}
SINCOS_SLOT = len(m32.TABLE_NAMES)   # mt's entry after the mufu32 tables: sfu_sincos's coefficients, uint32[64 * 3]
# FCVT's forms, in M0: float->float, float->int, int->float, float rounded to an integral float, f32 pair->x2
CVT_KINDS = ("float", "to_int", "from_int", "round_int", "pack_x2")
FORMATS = tuple(FLOAT_CODES)                       # M3's format indices: f32 f16 bf16 tf32 f64
FMT = tuple(FLOAT_CODES[f] for f in FORMATS)      # (exp_bits, frac_bits, shift) per index


@njit(cache=True, inline="always")
def setp_bool(op, t, c):
    """``setp``'s ``.and/.or/.xor`` (``BOOL`` codes 1..3; 0: none) of ``t`` with predicate ``c``."""
    if op == 1:
        return t & c
    if op == 2:
        return t | c
    if op == 3:
        return t ^ c
    return t


@njit(cache=True)
def _mufu32(fop, a, b, ftz, full, mt, c=np.uint32(0), addend=False):
    """The f32 ``.approx`` forms and ``div.full`` (``warpsim.isa.mufu32``; ``mt``: its tables); ``addend``: a div
    whose final product ptxas fused with an add of ``c`` (warpsim.ptx.contraction)."""
    if fop == _DIV and addend:
        return m32.f32_div_add(a, b, c, mt[m32.RCP], full, ftz)
    if fop == _DIV:
        if full:
            return m32.f32_div_full_ftz(a, b, mt[m32.RCP]) if ftz else m32.f32_div_full(a, b, mt[m32.RCP])
        return m32.f32_div_approx_ftz(a, b, mt[m32.RCP]) if ftz else m32.f32_div_approx(a, b, mt[m32.RCP])
    if fop == _EX2:
        return m32.f32_ex2_approx_ftz(a, mt[m32.EX2]) if ftz else m32.f32_ex2_approx(a, mt[m32.EX2])
    if fop == _RCP:
        return m32.f32_rcp_approx_ftz(a, mt[m32.RCP]) if ftz else m32.f32_rcp_approx(a, mt[m32.RCP])
    if fop == _RSQRT:
        return m32.f32_rsqrt_approx_ftz(a, mt[m32.RSQ]) if ftz else m32.f32_rsqrt_approx(a, mt[m32.RSQ])
    if fop == _SQRT:
        return m32.f32_sqrt_approx_ftz(a, mt[m32.SQRT]) if ftz else m32.f32_sqrt_approx(a, mt[m32.SQRT])
    if fop == _TANH:
        return m32.f32_tanh_approx(a, mt[m32.TANH])
    if fop == _SIN or fop == _COS:                   # sfu_sincos (decoded while HARDWARE_PROOF names its proof)
        c = mt[SINCOS_SLOT].reshape((sc.SEGMENTS, 3))
        return sc.f32_cos_approx(a, c) if fop == _COS else sc.f32_sin_approx(a, c)
    return m32.f32_lg2_approx_ftz(a, mt[m32.LG2]) if ftz else m32.f32_lg2_approx(a, mt[m32.LG2])


@njit(cache=True)
def _f32(fop, a, b, c, rnd, flags):
    """f32 arithmetic but the MUFU forms (``.approx``, ``div.full``: :func:`_mufu32`)."""
    ftz, sat = (flags & _FTZ) != 0, (flags & _SAT) != 0
    nan, xs = (flags & _NAN) != 0, (flags & _XORSIGN) != 0
    if rnd == RN and fop <= _FMA:                     # the isa's host path: the same bits (isa.hostfloat)
        if fop == _FMA:
            return host_f32_fma(a, b, c, ftz, sat)
        if fop == _MUL:
            return host_f32_mul(a, b, ftz, sat)
        return host_f32_add(a, b ^ 0x80000000 if fop == _SUB else b, ftz, sat)
    if fop == _ADD:
        return fa.f32_add(a, b, rnd, ftz, sat)
    if fop == _SUB:
        return fa.f32_sub(a, b, rnd, ftz, sat)
    if fop == _MUL:
        return fa.f32_mul(a, b, rnd, ftz, sat)
    if fop == _FMA:
        return fa.f32_fma(a, b, c, rnd, ftz, sat)
    if fop == _DIV:
        return fa.f32_div(a, b, rnd, ftz)
    if fop == _SQRT:
        return fa.f32_sqrt(a, rnd, ftz)
    if fop == _RCP:
        return fa.f32_rcp(a, rnd, ftz)
    if fop == _MIN:
        return fc.f32_min(a, b, ftz, nan, xs)
    if fop == _MAX:
        return fc.f32_max(a, b, ftz, nan, xs)
    if fop == _ABS:
        return fc.f32_abs(a, ftz)
    if fop == _NEG:
        return fc.f32_neg(a, ftz)
    return fc.f32_copysign(a, b)


@njit(cache=True)
def _f64(fop, a, b, c, rnd):
    """f64 arithmetic (``warpsim.isa.fp64``): no ``.ftz``/``.sat`` in PTX, so no flags -- but for
    ``rcp.approx.ftz.f64`` (:func:`float_result`, ``MUFU.RCP64H``)."""
    if fop == _ADD:
        return f64.f64_add(a, b, rnd)
    if fop == _SUB:
        return f64.f64_sub(a, b, rnd)
    if fop == _MUL:
        return f64.f64_mul(a, b, rnd)
    if fop == _FMA:
        return f64.f64_fma(a, b, c, rnd)
    if fop == _DIV:
        return f64.f64_div(a, b, rnd)
    if fop == _SQRT:
        return f64.f64_sqrt(a, rnd)
    if fop == _RCP:
        return f64.f64_rcp(a, rnd)
    if fop == _MIN:
        return f64.f64_min(a, b)
    if fop == _MAX:
        return f64.f64_max(a, b)
    if fop == _ABS:
        return f64.f64_abs(a)
    if fop == _NEG:
        return f64.f64_neg(a)
    return f64.f64_copysign(a, b)


@njit(cache=True)
def _f16(fop, a, b, c, rnd, flags, x2):
    ftz, sat, relu = (flags & _FTZ) != 0, (flags & _SAT) != 0, (flags & _RELU) != 0
    nan, xs = (flags & _NAN) != 0, (flags & _XORSIGN) != 0
    if fop == _EX2:
        return mu.f16x2_ex2_approx(a) if x2 else mu.f16_ex2_approx(a)
    if fop == _TANH:
        return mu.f16x2_tanh_approx(a) if x2 else mu.f16_tanh_approx(a)
    if x2:
        if fop == _ADD:
            return fa.f16x2_add(a, b, rnd, ftz, sat)
        if fop == _SUB:
            return fa.f16x2_sub(a, b, rnd, ftz, sat)
        if fop == _MUL:
            return fa.f16x2_mul(a, b, rnd, ftz, sat)
        if fop == _FMA:
            return fa.f16x2_fma(a, b, c, rnd, ftz, sat, relu)
        if fop == _MIN:
            return fc.f16x2_min(a, b, ftz, nan, xs)
        if fop == _MAX:
            return fc.f16x2_max(a, b, ftz, nan, xs)
        if fop == _ABS:
            return fc.f16x2_abs(a, ftz)
        return fc.f16x2_neg(a, ftz)
    if fop == _ADD:
        return fa.f16_add(a, b, rnd, ftz, sat)
    if fop == _SUB:
        return fa.f16_sub(a, b, rnd, ftz, sat)
    if fop == _MUL:
        return fa.f16_mul(a, b, rnd, ftz, sat)
    if fop == _FMA:
        return fa.f16_fma(a, b, c, rnd, ftz, sat, relu)
    if fop == _MIN:
        return fc.f16_min(a, b, ftz, nan, xs)
    if fop == _MAX:
        return fc.f16_max(a, b, ftz, nan, xs)
    if fop == _ABS:
        return fc.f16_abs(a, ftz)
    return fc.f16_neg(a, ftz)


@njit(cache=True)
def _bf16(fop, a, b, c, rnd, flags, x2):
    relu, nan, xs = (flags & _RELU) != 0, (flags & _NAN) != 0, (flags & _XORSIGN) != 0
    if fop == _EX2:                                     # PTX has ex2 on bf16 with .ftz only (checked at load)
        return mu.bf16x2_ex2_approx_ftz(a) if x2 else mu.bf16_ex2_approx_ftz(a)
    if fop == _TANH:
        return mu.bf16x2_tanh_approx(a) if x2 else mu.bf16_tanh_approx(a)
    if x2:
        if fop == _ADD:
            return fa.bf16x2_add(a, b, rnd)
        if fop == _SUB:
            return fa.bf16x2_sub(a, b, rnd)
        if fop == _MUL:
            return fa.bf16x2_mul(a, b, rnd)
        if fop == _FMA:
            return fa.bf16x2_fma(a, b, c, rnd, relu)
        if fop == _MIN:
            return fc.bf16x2_min(a, b, nan, xs)
        if fop == _MAX:
            return fc.bf16x2_max(a, b, nan, xs)
        if fop == _ABS:
            return fc.bf16x2_abs(a)
        return fc.bf16x2_neg(a)
    if fop == _ADD:
        return fa.bf16_add(a, b, rnd)
    if fop == _SUB:
        return fa.bf16_sub(a, b, rnd)
    if fop == _MUL:
        return fa.bf16_mul(a, b, rnd)
    if fop == _FMA:
        return fa.bf16_fma(a, b, c, rnd, relu)
    if fop == _MIN:
        return fc.bf16_min(a, b, nan, xs)
    if fop == _MAX:
        return fc.bf16_max(a, b, nan, xs)
    if fop == _ABS:
        return fc.bf16_abs(a)
    return fc.bf16_neg(a)


@njit(cache=True)
def _compare(tk, tb, cmp, a, b, ftz):
    """``setp``'s comparison: ``(p, q)`` as the isa's x2 models give them; scalar types ``(result, False)``."""
    if tk == TK_F16X2:
        return fc.f16x2_setp(a, b, cmp, ftz)
    if tk == TK_BF16X2:
        return fc.bf16x2_setp(a, b, cmp)
    if tk == TK_BF:
        return fc.bf16_setp(a, b, cmp), False
    if tb == 64:
        return f64.f64_setp(a, b, cmp), False
    if tb == 16:
        return fc.f16_setp(a, b, cmp, ftz), False
    return fc.f32_setp(a, b, cmp, ftz), False


@njit(cache=True)
def _cvt(kind, rnd, flags, fmts, tk, tb, sk, sb, a, b):
    ftz, sat, relu, sf = (flags & _FTZ) != 0, (flags & _SAT) != 0, (flags & _RELU) != 0, (flags & _SATFINITE) != 0
    s_eb, s_fb, s_sh = FMT[fmts >> 3]
    d_eb, d_fb, d_sh = FMT[fmts & 7]
    if kind == 0:
        return cvt_float(a, s_eb, s_fb, s_sh, d_eb, d_fb, d_sh, rnd, ftz, sat, relu, sf)
    if kind == 1:
        return np.int64(cvt_float_to_int(a, s_eb, s_fb, tb, tk == TK_S, rnd, ftz))
    if kind == 2:
        return cvt_int_to_float(np.uint64(a), sb, sk == TK_S, d_eb, d_fb, d_sh, rnd)
    if kind == 3:
        return cvt_round_int(a, s_eb, s_fb, rnd, ftz)
    return np.int64(cvt_pack_x2(a, b, d_eb, d_fb, rnd, relu, sf))


@njit(cache=True, inline="always")
def sign_bits(tk, tb):
    """The sign bit(s) of a float register of type ``tk, tb``: one per half of an x2 pair."""
    if tk == TK_F16X2 or tk == TK_BF16X2:
        return np.int64(0x80008000)
    if tb == 64:
        return np.int64(-0x8000000000000000)
    return np.int64(0x8000) if tb == 16 else np.int64(0x80000000)


@njit(cache=True, inline="always")
def uses_tables(op, tk, tb, m0, m2):
    """Whether a row's result comes from the MUFU tables (``float_result``'s ``mt``): the f32 ``.approx`` forms and
    ``div.full``, and ``rcp.approx.ftz.f64``; :func:`plain_result` computes every other form."""
    return op == Op.FARITH and ((tk == TK_F and tb == 32 and (m2 & (_APPROX | _FULL)) != 0)
                                or (tb == 64 and m0 == _RCP and (m2 & _APPROX) != 0))


@njit(cache=True)
def float_result(op, tk, tb, m0, m1, m2, m3, sk, sb, a, b, c, mt):
    """The destination bits ``(d, q)`` of float instruction ``op`` (see the module docstring) on
    operand bits ``a, b, c`` (int64; ``c``: ``setp``'s predicate operand); ``mt``: the f32 MUFU tables and
    the sin/cos coefficients (:func:`mufu_operands`; empty arrays where the kernel uses none)."""
    if not uses_tables(op, tk, tb, m0, m2):
        return plain_result(op, tk, tb, m0, m1, m2, m3, sk, sb, a, b, c)
    if m2 & NEGATE:
        sign = sign_bits(tk, tb)
        a, c = a ^ (sign if m2 & _NEG_A else 0), c ^ (sign if m2 & _NEG_C else 0)
        m2 &= ~NEGATE
    if tb == 64:                                     # the one f64 .approx form the decoder lets through
        return np.int64(mr.f64_rcp_approx_ftz(np.uint64(a), mt[m32.RCP])), np.int64(0)
    return np.int64(_mufu32(m0, np.uint32(a), np.uint32(b), (m2 & _FTZ) != 0, (m2 & _FULL) != 0, mt, np.uint32(c),
                            (m2 & _ADDEND) != 0)), np.int64(0)


@njit(cache=True)
def plain_result(op, tk, tb, m0, m1, m2, m3, sk, sb, a, b, c):
    """:func:`float_result` of a row that does not use the MUFU tables (``not uses_tables(...)``)."""
    if op == Op.FARITH:
        x2 = tk == TK_F16X2 or tk == TK_BF16X2
        if m2 & NEGATE:
            sign = sign_bits(tk, tb)
            a, c = a ^ (sign if m2 & _NEG_A else 0), c ^ (sign if m2 & _NEG_C else 0)
            m2 &= ~NEGATE
        if not x2 and tb == 16:
            a, b, c = a & 0xFFFF, b & 0xFFFF, c & 0xFFFF
        if tk == TK_F and tb == 32:
            d = np.int64(_f32(m0, a, b, c, m1, m2))
        elif tb == 64:
            d = np.int64(_f64(m0, a, b, c, m1))
        elif tk == TK_BF or tk == TK_BF16X2:
            d = np.int64(_bf16(m0, a, b, c, m1, m2, x2))
        else:
            d = np.int64(_f16(m0, a, b, c, m1, m2, x2))
        return d, np.int64(0)
    if op == Op.FSETP:
        p, q = _compare(tk, tb, m0, a, b, (m2 & _FTZ) != 0)
        c &= 1
        if tk == TK_F16X2 or tk == TK_BF16X2:
            return setp_bool(m1, np.int64(p), c), setp_bool(m1, np.int64(q), c)
        return setp_bool(m1, np.int64(p), c), setp_bool(m1, np.int64(not p), c)
    if op == Op.FSET:
        ftz, as_float = (m2 & _FTZ) != 0, (m2 & _AS_FLOAT) != 0
        if tk == TK_F16X2:
            return np.int64(fc.f16x2_set(a, b, m0, ftz, as_float)), np.int64(0)
        if tk == TK_BF16X2:
            return np.int64(fc.bf16x2_set(a, b, m0, as_float)), np.int64(0)
        if tb == 64:
            return np.int64(f64.f64_set(a, b, m0, as_float)), np.int64(0)
        return np.int64(fc.f32_set(a, b, m0, ftz, as_float)), np.int64(0)
    if op == Op.FTESTP:
        if tb == 64:
            return np.int64(f64.f64_testp(a, m0)), np.int64(0)
        return np.int64(fc.f32_testp(a & 0xFFFFFFFF, m0)), np.int64(0)
    return _cvt(m0, m1, m2, m3, tk, tb, sk, sb, a, b), np.int64(0)


def mufu_operands(names=(), sincos=False) -> tuple:
    """``float_result``'s ``mt``: the mufu32 tables ``names`` (``warpsim.isa.mufu32.mufu_tables``), then at
    :data:`SINCOS_SLOT` the ``sin``/``cos`` coefficients (``warpsim.isa.sfu_sincos``) when ``sincos``; empty
    arrays for the rest."""
    coeffs = np.ascontiguousarray(sc.coefficients(), np.uint32).ravel() if sincos else np.zeros(0, np.uint32)
    return tuple(m32.mufu_tables(tuple(names))) + (coeffs,)


def kernel_mufu_tables(code) -> tuple:
    """The f32 MUFU tables a decoded kernel's rows need (``float_result``'s ``mt``, :func:`mufu_operands`):
    loaded for the ``.approx`` f32 forms it has, empty for the rest."""
    from warpsim.ptx.rows import M0, M2, OP, TB, TK
    rows = code[(code[:, OP] == Op.FARITH) & (code[:, TK] == TK_F) & (code[:, TB] == 32)
                & ((code[:, M2] & (_APPROX | _FULL)) != 0)]
    names = {m32.TABLE_NAMES[MUFU32_TABLE[int(f)]] for f in rows[:, M0] if int(f) in MUFU32_TABLE}
    if ((code[:, OP] == Op.FARITH) & (code[:, TB] == 64) & ((code[:, M2] & _APPROX) != 0)).any():
        names.add("rcp")                              # rcp.approx.ftz.f64: MUFU.RCP64H, RCP's coefficients
    return mufu_operands(names, bool(np.isin(rows[:, M0], (_SIN, _COS)).any()))


@njit_borrowing
def thread_float(p, op, t, code, opnd, r, pc, mt):
    """One thread's float instruction (``FARITH FSETP FSET FTESTP FCVT`` rows, registers ``r``): the operands' bits to
    :func:`float_result`, its ``(d, q)`` to the destinations; advances its pc."""
    o = code[p, O0:]
    tk, tb = code[p, TK], code[p, TB]
    first = 2 if op == Op.FSETP else 1                # setp: p|q, a, b, c
    n = code[p, NOPS]
    a = get(r, opnd, o[first])
    b = get(r, opnd, o[first + 1]) if n > first + 1 else np.int64(0)
    c = get(r, opnd, o[first + 2]) if n > first + 2 else np.int64(0)
    d, q = float_result(op, tk, tb, code[p, M0], code[p, M1], code[p, M2], code[p, M3], code[p, SK],
                        code[p, SB], a, b, c, mt)
    put(r, opnd, o[0], d)
    if op == Op.FSETP:
        put(r, opnd, o[1], q)
    pc[t] += 1
    return True
