"""Integer and bit instructions of PTX on one thread's values: ``@njit`` scalar functions.

Values are int64 holding the operand's bits (a 64-bit operand uses all of them, narrower ones the
low bits); ``tk``/``tb`` are the instruction's type kind and bits (:mod:`warpsim.ptx.opcodes`).
Each function states the PTX ISA semantics it implements; results are masked to the destination
width by the caller. Division by zero (undefined in PTX) gives what the H200 gives for the C
operators: ``x / 0`` all ones (unsigned) or -1 (signed), ``x % 0 == x``.

>>> hex(prmt(0x33221100, 0x77665544, 0x5140, 0) & 0xFFFFFFFF)
'0x55114400'
>>> bfe(0xF0, 4, 4, 32, True), bfe(0xF0, 4, 4, 32, False)
(-1, 15)
>>> hex(mul_hi_u64(-1, -1) & 0xFFFFFFFFFFFFFFFF)
'0xfffffffffffffffe'
"""

import numpy as np
from numba import njit

from warpsim.ptx.opcodes import TK_S, Op

__all__ = ["mask", "sext", "zext", "ult", "mul_hi_u64", "mul_hi_s64", "field", "bfe", "bfi", "BFE_FOLDED", "BFI_FOLDED", "prmt",
           "popc", "clz", "brev", "shf", "lop3", "bfind", "alu", "compare"]

_MIN64 = np.int64(-(1 << 63))
BFE_FOLDED = 1    # the mode of a bfe.s32 the driver's ptxas folds to all ones (immediate pos >= 32, len >= 1)
BFI_FOLDED = 1    # the mode of a bfi.b32 whose known length ptxas takes mod 32 (known 0 < pos < 32, len >= 32)


@njit(cache=True, inline="always")
def mask(bits):
    """All ones in the low ``bits`` bits (64: -1)."""
    if bits >= 64:
        return np.int64(-1)
    return (np.int64(1) << bits) - 1


@njit(cache=True, inline="always")
def zext(v, bits):
    return v & mask(bits)


@njit(cache=True, inline="always")
def sext(v, bits):
    if bits >= 64:
        return v
    v = v & mask(bits)
    if (v >> (bits - 1)) & 1:
        v -= np.int64(1) << bits
    return v


@njit(cache=True, inline="always")
def ult(a, b):
    """Unsigned 64-bit ``a < b`` of two int64 bit patterns."""
    return (a ^ _MIN64) < (b ^ _MIN64)


@njit(cache=True)
def mul_hi_u64(a, b):
    """The high 64 bits of the unsigned 128-bit product (as int64 bits)."""
    m = np.uint64(0xFFFFFFFF)
    ua, ub = np.uint64(a), np.uint64(b)
    a0, a1 = ua & m, ua >> np.uint64(32)
    b0, b1 = ub & m, ub >> np.uint64(32)
    cross = ((a0 * b0) >> np.uint64(32)) + ((a1 * b0) & m) + a0 * b1
    hi = ((a1 * b0) >> np.uint64(32)) + (cross >> np.uint64(32)) + a1 * b1
    return np.int64(hi)


@njit(cache=True)
def mul_hi_s64(a, b):
    """The high 64 bits of the signed 128-bit product."""
    hi = mul_hi_u64(a, b)
    if a < 0:
        hi -= b
    if b < 0:
        hi -= a
    return hi


@njit(cache=True)
def _udiv(a, b, bits):
    if bits >= 64:
        return np.int64(np.uint64(a) // np.uint64(b)), np.int64(np.uint64(a) % np.uint64(b))
    a, b = zext(a, bits), zext(b, bits)
    return a // b, a % b


@njit(cache=True)
def _sdiv(a, b, bits):
    a, b = sext(a, bits), sext(b, bits)
    if b == -1:
        return -a, np.int64(0)           # wraps for the most negative value, as the hardware
    ua = np.uint64(-a) if a < 0 else np.uint64(a)
    ub = np.uint64(-b) if b < 0 else np.uint64(b)
    q = np.int64(ua // ub)
    if (a < 0) != (b < 0):
        q = -q
    return q, a - q * b


@njit(cache=True)
def field(v, bits):
    """A ``bfe``/``bfi`` position or length as the H200 reads it: the low 8 bits for 32-bit types (PTX ISA, "bfe":
    ``pos = b & 0xff``), the whole ``u32`` for 64-bit types (the H200 does not reduce it mod 256: ``bfe.u64 d, 1, 0,
    256`` is 1, not 0; conformance/h200/h200-int-forms-run1.json, docs/ptx.md).

    >>> field(0x105, 32), field(0x105, 64)
    (5, 261)
    """
    return v & 0xFF if bits == 32 else v & 0xFFFFFFFF


@njit(cache=True)
def bfe(a, pos, length, bits, signed):
    """``bfe``: ``length`` bits of ``a`` from ``pos`` (both read by :func:`field`), sign- or zero-extended;
    positions past the msb repeat the sign bit ``a[min(pos + length - 1, msb)]`` (signed) or read 0."""
    pos = field(pos, bits)
    length = field(length, bits)
    msb = bits - 1
    sbit = np.int64(0)
    if signed and length > 0:
        sbit = (a >> min(pos + length - 1, msb)) & 1
    d = np.int64(0)
    for i in range(bits):
        if i < length and pos + i <= msb:
            bit = (a >> (pos + i)) & 1
        else:
            bit = sbit
        d |= bit << i
    return sext(d, bits) if signed else d


@njit(cache=True)
def bfi(a, b, pos, length, bits):
    """``bfi``: ``b`` with ``length`` low bits of ``a`` inserted at ``pos`` (both read by :func:`field`, clipped at
    the msb)."""
    pos = field(pos, bits)
    length = field(length, bits)
    d = b
    for i in range(min(length, bits)):
        if pos + i > bits - 1:
            break
        bit = (a >> i) & 1
        d = (d & ~(np.int64(1) << (pos + i))) | (bit << (pos + i))
    return d


@njit(cache=True)
def prmt(a, b, c, mode):
    """``prmt.b32``: bytes of ``{b, a}`` (b7..b4 from ``b``, b3..b0 from ``a``) chosen by ``c``;
    ``mode`` 0: default (a nibble per byte, bit 3 replicates the sign), 1..6: f4e b4e rc8 ecl ecr rc16."""
    t = (a & 0xFFFFFFFF) | ((b & 0xFFFFFFFF) << 32)
    d = np.int64(0)
    s = c & 3
    for i in range(4):
        if mode == 0:
            nib = (c >> (4 * i)) & 0xF
            byte = (t >> (8 * (nib & 7))) & 0xFF
            if nib & 8:
                byte = 0xFF if byte & 0x80 else 0
        else:
            if mode == 1:
                sel = (s + i) & 7
            elif mode == 2:
                sel = (s - i) & 7
            elif mode == 3:
                sel = s
            elif mode == 4:
                sel = max(i, s)
            elif mode == 5:
                sel = min(i, s)
            else:
                sel = (s & 1) * 2 + (i & 1)
            byte = (t >> (8 * sel)) & 0xFF
        d |= byte << (8 * i)
    return d


@njit(cache=True)
def popc(a, bits):
    v = np.uint64(zext(a, bits))
    v = v - ((v >> np.uint64(1)) & np.uint64(0x5555555555555555))
    v = (v & np.uint64(0x3333333333333333)) + ((v >> np.uint64(2)) & np.uint64(0x3333333333333333))
    v = (v + (v >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((v * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True)
def clz(a, bits):
    v = zext(a, bits)
    for i in range(bits):
        if (v >> (bits - 1 - i)) & 1:
            return np.int64(i)
    return np.int64(bits)


@njit(cache=True)
def brev(a, bits):
    d = np.int64(0)
    for i in range(bits):
        d |= ((a >> i) & 1) << (bits - 1 - i)
    return d


@njit(cache=True)
def shf(a, b, c, mode):
    """``shf.{l,r}.{wrap,clamp}.b32``: the funnel shift of the 64-bit ``{b, a}`` by ``c`` (mode bit 0:
    right, bit 1: clamp to 32 instead of taking ``c`` mod 32); the 32 bits kept."""
    a, b, c = zext(a, 32), zext(b, 32), zext(c, 32)
    n = min(c, 32) if mode & 2 else c & 31
    if mode & 1:
        return a if n == 0 else ((a >> n) | (b << (32 - n))) & 0xFFFFFFFF
    return b if n == 0 else ((b << n) | (a >> (32 - n))) & 0xFFFFFFFF


@njit(cache=True)
def lop3(a, b, c, lut):
    """``lop3.b32``: bit i of the result is bit ``4 a_i + 2 b_i + c_i`` of ``lut``."""
    d = np.int64(0)
    for k in range(8):
        if (lut >> k) & 1:
            d |= (a if k & 4 else ~a) & (b if k & 2 else ~b) & (c if k & 1 else ~c)
    return d


@njit(cache=True)
def bfind(a, bits, signed, shiftamt):
    """``bfind[.shiftamt]``: the position of the most significant bit that differs from the sign
    (unsigned: the highest set bit), ``0xFFFFFFFF`` when there is none; ``.shiftamt``: ``bits - 1 - pos``."""
    v = sext(a, bits) if signed else zext(a, bits)
    if signed and v < 0:
        v = ~v
    v = zext(v, bits)
    if v == 0:
        return np.int64(0xFFFFFFFF)
    pos = bits - 1 - clz(v, bits)
    return bits - 1 - pos if shiftamt else pos


@njit(cache=True)
def compare(cmp, a, b, bits, signed):
    """``setp`` comparison code ``cmp`` (``opcodes.CMP``) of ``a`` and ``b``."""
    if signed:
        a, b = sext(a, bits), sext(b, bits)
        lt = a < b
    else:
        a, b = zext(a, bits), zext(b, bits)
        lt = ult(a, b)
    eq = a == b
    if cmp == 0:
        return eq
    if cmp == 1:
        return not eq
    if cmp == 2 or cmp == 6:
        return lt
    if cmp == 3 or cmp == 7:
        return lt or eq
    if cmp == 4 or cmp == 8:
        return not (lt or eq)
    return not lt


@njit(cache=True)
def _mul(a, b, tk, tb, mode):
    """``mul.lo/.hi/.wide`` (mode 0, 1, 2)."""
    signed = tk == TK_S
    if mode == 2:
        if signed:
            return sext(a, tb) * sext(b, tb)
        return zext(a, tb) * zext(b, tb)
    if mode == 1:
        if tb == 64:
            return mul_hi_s64(a, b) if signed else mul_hi_u64(a, b)
        if signed:
            return (sext(a, tb) * sext(b, tb)) >> tb
        return np.int64((np.uint64(zext(a, tb)) * np.uint64(zext(b, tb))) >> np.uint64(tb))
    return a * b


@njit(cache=True)
def alu(op, tk, tb, mode, a, b, c, e):
    """The result of integer instruction ``op`` on operand values ``a, b, c, e`` (unmasked)."""
    signed = tk == TK_S
    if op == Op.ADD:
        return a + b
    if op == Op.SUB:
        return a - b
    if op == Op.MUL:
        return _mul(a, b, tk, tb, mode)
    if op == Op.MAD:
        return _mul(a, b, tk, tb, mode) + c
    if op == Op.DIV or op == Op.REM:
        if zext(b, tb) == 0:             # the H200: all ones for div and rem (h200-int-forms-run1.json)
            return np.int64(-1)
        q, r = _sdiv(a, b, tb) if signed else _udiv(a, b, tb)
        return q if op == Op.DIV else r
    if op == Op.MIN or op == Op.MAX:
        if signed:
            lt = sext(a, tb) < sext(b, tb)
        else:
            lt = ult(zext(a, tb), zext(b, tb))
        return (a if lt else b) if op == Op.MIN else (b if lt else a)
    if op == Op.ABS:
        v = sext(a, tb)
        return -v if v < 0 else v
    if op == Op.NEG:
        return -a
    if op == Op.AND:
        return a & b
    if op == Op.OR:
        return a | b
    if op == Op.XOR:
        return a ^ b
    if op == Op.NOT:
        return ~a
    if op == Op.CNOT:
        return np.int64(1) if zext(a, tb) == 0 else np.int64(0)
    if op == Op.SHL:
        n = zext(b, 32)
        return np.int64(0) if n >= tb else a << n
    if op == Op.SHR:
        n = zext(b, 32)
        if signed:
            return sext(a, tb) >> min(n, tb - 1)
        if n >= tb:
            return np.int64(0)
        return np.int64(np.uint64(zext(a, tb)) >> np.uint64(n))
    if op == Op.BFE:
        if mode == BFE_FOLDED:
            return np.int64(-1)
        return bfe(a, b, c, tb, signed)
    if op == Op.BFI:
        if mode == BFI_FOLDED:                     # ptxas's mask ((1 << len) - 1) << pos with len mod 32
            return bfi(a, b, c & 0xFF, (e & 0xFF) & 31, tb)
        return bfi(a, b, c, e, tb)
    if op == Op.PRMT:
        return prmt(a, b, c, mode)
    if op == Op.POPC:
        return popc(a, tb)
    if op == Op.CLZ:
        return clz(a, tb)
    if op == Op.BREV:
        return brev(a, tb)
    if op == Op.SHF:
        return shf(a, b, c, mode)
    if op == Op.LOP3:
        return lop3(a, b, c, e)
    if op == Op.BFIND:
        return bfind(a, tb, signed, mode)
    if op == Op.SAD:
        if signed:
            x, y = sext(a, tb), sext(b, tb)
            lt = x < y
        else:
            x, y = zext(a, tb), zext(b, tb)
            lt = ult(x, y)
        return c + (y - x if lt else x - y)
    return np.int64(0)
