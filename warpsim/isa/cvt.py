"""``cvt.rn.f16x2.f32 d, a, b`` and ``cvt.rn.bf16x2.f32 d, a, b``: two f32 into one packed register.

PTX ISA, "cvt": "the value converted from input a is stored in the upper half of d and the value
converted from input b is stored in the lower half of d". Each conversion rounds to nearest, ties
to even (``.rn``), keeps subnormals (no ``.ftz``), overflows to an infinity of the input's sign,
and keeps the sign of a zero.

NaN: any NaN input gives the canonical NaN ``0x7FFF`` of the destination format, whatever its sign
and payload. PTX does not say so; the H200 does (hwcheck's cvt campaign, input class "special",
200,000 pairs per format with 0 mismatches: conformance/h200/h200-cvt.json).

>>> import numpy as np
>>> hex(cvt_pack_bits(0x3F800000, 0x40000000, BF16_CODE))   # a = 1.0 upper, b = 2.0 lower
'0x3f804000'
>>> hex(cvt_pack_bits(0x477FF000, 0x477FEFFF, F16_CODE))    # 65520 -> inf (tie, to even); below -> 65504
'0x7c007bff'
"""

import numpy as np
from numba import njit, prange

from warpsim.isa.faults import FAULT_BAD_OPERAND, FAULT_BAD_REGISTER, set_fault
from warpsim.isa.floats import INF, NAN, decode, round_rne

__all__ = ["F16_CODE", "BF16_CODE", "CVT_TYPES", "cvt_name", "cvt_f32_to_16", "cvt_pack_bits",
           "cvt_pack", "warp_cvt_pack"]

F16_CODE = 0
BF16_CODE = 1
CVT_TYPES = {"f16": F16_CODE, "bf16": BF16_CODE}
_FORMAT = ((5, 10), (8, 7))   # (exp_bits, frac_bits) per code


def cvt_name(to):
    """``cvt.rn.{to}x2.f32``."""
    if to not in CVT_TYPES:
        raise ValueError(f"cvt: to must be 'f16' or 'bf16', got {to!r}")
    return f"cvt.rn.{to}x2.f32"


@njit(cache=True)
def cvt_f32_to_16(bits, to):
    """f32 bits rounded to f16 (``to == F16_CODE``) or bf16 bits, nearest-even.

    >>> hex(cvt_f32_to_16(0x33800000, F16_CODE))   # 2**-24: the smallest f16 subnormal
    '0x1'
    >>> hex(cvt_f32_to_16(0xFFC00001, BF16_CODE))  # a NaN: canonical 0x7FFF
    '0x7fff'
    """
    eb, fb = _FORMAT[to]
    neg, sig, exp, cls = decode(np.int64(bits) & 0xFFFFFFFF, 8, 23)
    if cls == NAN:
        return np.int64(0x7FFF)
    if cls == INF:
        return (np.int64(neg) << (eb + fb)) | (((np.int64(1) << eb) - 1) << fb)
    return round_rne(neg, sig, exp - 23, eb, fb)


@njit(cache=True)
def cvt_pack_bits(a_bits, b_bits, to):
    """``(cvt(a) << 16) | cvt(b)`` as an int."""
    return (cvt_f32_to_16(a_bits, to) << 16) | cvt_f32_to_16(b_bits, to)


@njit(cache=True)
def warp_cvt_pack(regs_w, d_reg, a_reg, b_reg, to, fault):
    """One warp's ``cvt.rn.{f16,bf16}x2.f32 d, a, b`` on register indices (ints).

    ``to``: ``F16_CODE`` or ``BF16_CODE``. On a bad register index or type sets ``fault`` and
    changes nothing. ``d_reg`` may equal ``a_reg`` or ``b_reg``. Returns True when it executed.
    """
    if to != F16_CODE and to != BF16_CODE:
        set_fault(fault, FAULT_BAD_OPERAND, 0, to, 1)
        return False
    if regs_w.shape[0] != 32:
        set_fault(fault, FAULT_BAD_OPERAND, 0, regs_w.shape[0], 32)
        return False
    for r in (d_reg, a_reg, b_reg):
        if r < 0 or r >= regs_w.shape[1]:
            set_fault(fault, FAULT_BAD_REGISTER, 0, r, regs_w.shape[1])
            return False
    for lane in range(32):
        regs_w[lane, d_reg] = np.uint32(cvt_pack_bits(regs_w[lane, a_reg], regs_w[lane, b_reg], to))
    return True


@njit(cache=True, parallel=True)
def _cvt_batch(a, b, out, to):
    for i in prange(a.shape[0]):
        out[i] = np.uint32(cvt_pack_bits(a[i], b[i], to))


def cvt_pack(a, b, *, to="f16"):
    """Batched ``cvt.rn.{to}x2.f32 d, a, b`` over uint32 arrays of f32 bits of one shape.

    >>> import numpy as np
    >>> a = np.array([0x3F800000], np.uint32); b = np.array([0xBF800000], np.uint32)
    >>> hex(int(cvt_pack(a, b, to="f16")[0]))       # 1.0 upper, -1.0 lower
    '0x3c00bc00'
    """
    name = cvt_name(to)
    for arg, x in (("a", a), ("b", b)):
        if not isinstance(x, np.ndarray) or x.dtype != np.uint32:
            raise TypeError(f"{name}: {arg} must be a numpy array of uint32 (f32 bits), got "
                            f"{getattr(x, 'dtype', type(x).__name__)}")
    if a.shape != b.shape:
        raise ValueError(f"{name}: a and b must have one shape, got {a.shape} and {b.shape}")
    out = np.empty(a.size, np.uint32)
    if a.size:
        _cvt_batch(np.ascontiguousarray(a).ravel(), np.ascontiguousarray(b).ravel(), out, CVT_TYPES[to])
    return out.reshape(a.shape)
