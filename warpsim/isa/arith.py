"""The tensor-core arithmetic of ``mma`` with f16/bf16 inputs, bit-exact, per architecture.

One output element is ``d = c + sum_k a[k] * b[k]``. The model (REFERENCE.md section 4):

1. Decoding: a normal input is ``1.f * 2**e``, a subnormal ``0.f * 2**emin`` (no flush to zero).
2. Products are exact: significand product, exponent ``ea + eb``, not renormalised.
3. Products are summed in blocks of ``L`` (``ArchModel.block``) together with the running
   accumulator ``c``. In a block every non-zero term is aligned to the block's largest exponent
   ``emax`` and keeps ``F`` (``frac_bits``) fraction bits below ``2**emax``; the bits shifted out are
   truncated toward zero, per term, on the magnitude. The aligned terms are summed exactly.
4. ``emax`` is never below the floor ``EZ`` (``ez_f32`` / ``ez_f16``). The sources state the floor
   for a block with a zero term (a zero product or ``c == 0``); with ``c != 0`` the floor cannot
   act, since ``c``'s exponent is at least the output format's ``emin > EZ``, so applying it
   always is the same rule.
5. The block sum is rounded to the output format: f32 by truncation (toward zero, subnormals
   kept, a magnitude of ``2**128`` or more gives inf), f16 by round-to-nearest-even (a result that
   rounds to ``2**16`` or more gives inf). With ``L == 8`` (sm_80) the sum of ``k = 0..7`` and ``c``
   is rounded, then becomes the ``c`` of ``k = 8..15``. ``m16n8k8`` is one block of 8 everywhere.
6. Special values, per block: a NaN input, ``inf * 0``, or ``+inf`` and ``-inf`` together give the
   canonical NaN (``0x7FFFFFFF`` f32, ``0x7FFF`` f16); otherwise an infinity wins with its sign.
   Every zero result is ``+0``.

Evidence: Khattak & Mikaitis, "Accurate Models of NVIDIA Tensor Cores", arXiv 2512.07004 (models
``A100TC.m``, ``H100TC.m`` and hardware vectors for A100, L40S, H100, H200, reproduced with zero
mismatches by ``tests/isa/test_conformance.py``); Xie et al., "MMA-Sim", arXiv 2511.10909 (block
split and fraction bits per architecture, special values); REFERENCE.md section 4 (sm_90 checked on
an H200 over about 2e7 outputs). sm_80's second block, its EZ floor and its special values have no
hardware vectors here: they rest on the two papers.

Everything here computes on integers: the products, the alignment, the sum and the rounding.

>>> SM90.block, SM90.frac_bits, SM90.ez_f32, SM90.ez_f16
(16, 25, -133, -21)
>>> sorted(ARCHS) == ["sm80", "sm90"]
True
"""

from dataclasses import dataclass

import numpy as np
from numba import njit

from warpsim.isa.floats import FINITE, INF, NAN, decode, round_rne, round_rz

__all__ = [
    "ArchModel", "SM80", "SM90", "ARCHS", "DEFAULT_ARCH", "get_arch",
    "AB_TYPES", "CD_TYPES", "AB_F16", "AB_BF16", "CD_F32", "CD_F16",
    "mma_tile", "new_workspace",
]

AB_F16 = 0
AB_BF16 = 1
CD_F32 = 0
CD_F16 = 1
AB_TYPES = {"f16": AB_F16, "bf16": AB_BF16}   # name -> code given to kernels
CD_TYPES = {"f32": CD_F32, "f16": CD_F16}

# (exp_bits, frac_bits) of each code
_AB_FORMAT = ((5, 10), (8, 7))
_I32 = np.int32
_CD_FORMAT = ((8, 23), (5, 10))


@dataclass(frozen=True)
class ArchModel:
    """The tensor-core parameters of one architecture (REFERENCE.md section 4).

    ``block``: products per block ``L``; ``frac_bits``: fraction bits ``F`` kept below the block's
    largest exponent; ``ez_f32`` / ``ez_f16``: the floor ``EZ`` of that exponent for f32 / f16
    output; ``evidence``: where the numbers come from.
    Pre-condition: ``block * 2**(frac_bits + 2) <= 2**31`` (a block's aligned products fit int32).
    """

    name: str
    gpus: str
    block: int
    frac_bits: int
    ez_f32: int
    ez_f16: int
    evidence: str

    def __post_init__(self):
        if self.block not in (8, 16):
            raise ValueError(f"ArchModel {self.name}: block must be 8 or 16, got {self.block}")
        if self.block << (self.frac_bits + 2) > 1 << 31:
            raise ValueError(f"ArchModel {self.name}: frac_bits {self.frac_bits} too large for int32 sums")


SM80 = ArchModel(
    name="sm80", gpus="A100, L40S (sm_89 shares the model)", block=8, frac_bits=24,
    ez_f32=-132, ez_f16=-20,
    evidence=("Khattak & Mikaitis arXiv 2512.07004 (A100TC.m: fma=8, neab=1, min_exp_limit -132 / -20; "
              "A100 and L40S vectors with k = 0..7); MMA-Sim arXiv 2511.10909 (Ampere: 24 fraction bits, "
              "k16 split into two halves). No hardware data here for k = 8..15, the floor or specials."),
)
SM90 = ArchModel(
    name="sm90", gpus="H100, H200", block=16, frac_bits=25, ez_f32=-133, ez_f16=-21,
    evidence=("Khattak & Mikaitis arXiv 2512.07004 (H100TC.m: fma=16, neab=2, min_exp_limit -133 / -21; "
              "H100 and H200 vectors); MMA-Sim arXiv 2511.10909 (Hopper: 25 fraction bits); "
              "REFERENCE.md section 4: an H200 run with no mismatch in about 2e7 outputs."),
)
ARCHS = {m.name: m for m in list(globals().values()) if isinstance(m, ArchModel)}
DEFAULT_ARCH = "sm90"


def get_arch(arch):
    """The ``ArchModel`` named ``arch`` (``"sm80"`` or ``"sm90"``), or the model itself.

    >>> get_arch("sm80") is SM80 and get_arch(SM90) is SM90
    True
    """
    if isinstance(arch, ArchModel):
        return arch
    if isinstance(arch, str) and arch in ARCHS:
        return ARCHS[arch]
    raise ValueError(f"arch: unknown architecture {arch!r} (known: {', '.join(sorted(ARCHS))})")


# Workspace rows: decoded A (M, K) and B transposed (N, K), as int32.
_A_SIG, _A_EXP, _A_NEG, _A_CLS, _B_SIG, _B_EXP, _B_NEG, _B_CLS = range(8)


def new_workspace():
    """Scratch space for one ``mma_tile`` call at a time (reuse it: no allocation per mma)."""
    return np.empty((8, 16, 16), dtype=np.int32)


@njit(cache=True, inline="always")
def _decode_rows(bits, rows, k_count, exp_bits, frac_bits, sig, exp, neg, cls):
    """Decode ``bits[r, k]`` into int32 sig, exp, neg (0 or -1) and cls (see ``floats.decode``).

    Returns whether any value is an infinity or a NaN.
    """
    special = False
    for r in range(rows):
        for k in range(k_count):
            n_, s_, e_, c_ = decode(bits[r, k] & 0xFFFF, exp_bits, frac_bits)
            sig[r, k] = s_
            exp[r, k] = e_
            neg[r, k] = -n_
            cls[r, k] = c_
            special |= c_ != FINITE
    return special


@njit(cache=True, inline="always")
def _special_block(w, m, n, k0, k1, c_neg, c_cls):
    """Result class of a block with special values: 0 none, 1 +inf, -1 -inf, 2 NaN."""
    nan = c_cls == NAN
    pinf = c_cls == INF and c_neg == 0
    ninf = c_cls == INF and c_neg != 0
    for k in range(k0, k1):
        ca = w[_A_CLS, m, k]
        cb = w[_B_CLS, n, k]
        if ca == NAN or cb == NAN:
            nan = True
        elif ca == INF or cb == INF:
            if (ca == FINITE and w[_A_SIG, m, k] == 0) or (cb == FINITE and w[_B_SIG, n, k] == 0):
                nan = True   # inf * 0
            elif (w[_A_NEG, m, k] ^ w[_B_NEG, n, k]) != 0:
                ninf = True
            else:
                pinf = True
    if nan or (pinf and ninf):
        return 2
    if pinf:
        return 1
    if ninf:
        return -1
    return 0


@njit(cache=True, inline="always")
def _finite_block(sa, ea, na, sb, eb, nb, k0, k1, c_neg, c_sig, c_exp, s0, c_s0, frac_bits, ez):
    """Exact block sum ``(neg, mag, lsb)``: products ``k0..k1-1`` and ``c`` aligned to ``emax``.

    ``sa, ea, na``: one row of A decoded (significand, exponent, sign mask 0/-1); ``sb, eb, nb``:
    one column of B; ``s0 = F - 2 * frac_bits_in`` aligns a product's last bit to ``2**(e - F)``.
    The loops are written in int32 so that LLVM vectorises the sum.
    """
    m0 = _I32(max(ez, c_exp))
    m1 = m0
    m2 = m0
    m3 = m0
    for k in range(k0, k1, 4):   # four independent maxima: no loop-carried chain of 16 compares
        e0 = _I32(ea[k] + eb[k])
        e1 = _I32(ea[k + 1] + eb[k + 1])
        e2 = _I32(ea[k + 2] + eb[k + 2])
        e3 = _I32(ea[k + 3] + eb[k + 3])
        m0 = e0 if e0 > m0 else m0
        m1 = e1 if e1 > m1 else m1
        m2 = e2 if e2 > m2 else m2
        m3 = e3 if e3 > m3 else m3
    m0 = m1 if m1 > m0 else m0
    m2 = m3 if m3 > m2 else m2
    emax = m2 if m2 > m0 else m0
    acc = _I32(0)   # |term| < 2**(F+2); a block of <= 16 terms fits int32 (ArchModel check)
    for k in range(k0, k1):
        d = _I32(min(_I32(emax - _I32(ea[k] + eb[k])), _I32(31)))
        t = _I32(_I32(_I32(sa[k] * sb[k]) << _I32(s0)) >> d)   # truncate the magnitude
        sg = _I32(na[k] ^ nb[k])                                 # 0 or -1
        acc = _I32(acc + _I32(_I32(t ^ sg) - sg))
    total = np.int64(acc)
    dc = min(np.int64(emax) - c_exp, 63)
    tc = (np.int64(c_sig) << c_s0) >> dc
    total += -tc if c_neg else tc
    if total < 0:
        return 1, -total, np.int64(emax) - frac_bits
    return 0, total, np.int64(emax) - frac_bits


@njit(cache=True, inline="always")
def _block_bits(w, m, n, k0, step, any_special, c_neg, c_sig, c_exp, c_cls, s0, c_s0, frac_bits, ez,
                cd, out_eb, out_fb):
    """Output bits of one block: products ``k0 .. k0+step-1`` of output ``(m, n)`` plus ``c``."""
    if any_special or c_cls != FINITE:
        kind = _special_block(w, m, n, k0, k0 + step, c_neg, c_cls)
        if kind == 2:
            return np.int64(0x7FFFFFFF if cd == CD_F32 else 0x7FFF)
        if kind != 0:
            return (((np.int64(1) << out_eb) - 1) << out_fb) | ((np.int64(1) << (out_eb + out_fb)) if kind < 0 else 0)
    neg, mag, lsb = _finite_block(w[_A_SIG, m], w[_A_EXP, m], w[_A_NEG, m], w[_B_SIG, n], w[_B_EXP, n],
                                  w[_B_NEG, n], k0, k0 + step, c_neg, c_sig, c_exp, s0, c_s0, frac_bits, ez)
    if cd == CD_F32:
        bits = round_rz(neg, mag, lsb, out_eb, out_fb)
    else:
        bits = round_rne(neg, mag, lsb, out_eb, out_fb)
    if bits == np.int64(1) << (out_eb + out_fb):   # every zero result is +0
        return np.int64(0)
    return bits


@njit(cache=True)
def mma_tile(a, bt, c, d, m_count, n_count, k_count, ab, cd, block, frac_bits, ez, w):
    """``d[m, n] = c[m, n] + sum_k a[m, k] * bt[n, k]`` bit-exactly, per the model above.

    ``a`` (M, K) and ``bt`` (N, K: B transposed) hold 16-bit patterns of type ``ab`` (``AB_F16`` or
    ``AB_BF16``); ``c`` and ``d`` (M, N) hold bit patterns of type ``cd`` (``CD_F32``, or ``CD_F16`` in
    the low 16 bits); ``block``, ``frac_bits``, ``ez`` come from an ``ArchModel`` (``ez`` for
    ``cd``); ``w`` is a ``new_workspace()``. Pre-conditions: ``M, N <= 16``, ``K`` 8 or 16,
    ``block`` 8 or 16 (other values compute nothing). Writes ``d``; returns nothing.
    """
    # Constant trip counts let LLVM vectorise the block loops: one inlined copy per block shape.
    if k_count == 16 and block == 16:
        _tile(a, bt, c, d, m_count, n_count, 16, 16, ab, cd, frac_bits, ez, w)
    elif k_count == 16 and block == 8:
        _tile(a, bt, c, d, m_count, n_count, 16, 8, ab, cd, frac_bits, ez, w)
    elif k_count == 8:
        _tile(a, bt, c, d, m_count, n_count, 8, 8, ab, cd, frac_bits, ez, w)


@njit(cache=True, inline="always")
def _tile(a, bt, c, d, m_count, n_count, k_count, step, ab, cd, frac_bits, ez, w):
    """``mma_tile`` for one block shape: ``k_count`` products in blocks of ``step`` (16/16, 16/8, 8/8)."""
    in_eb, in_fb = _AB_FORMAT[ab]
    out_eb, out_fb = _CD_FORMAT[cd]
    s0 = frac_bits - 2 * in_fb        # product significand LSB -> aligned LSB, before the shift by d
    c_s0 = frac_bits - out_fb
    a_special = _decode_rows(a, m_count, k_count, in_eb, in_fb,
                             w[_A_SIG], w[_A_EXP], w[_A_NEG], w[_A_CLS])
    b_special = _decode_rows(bt, n_count, k_count, in_eb, in_fb,
                             w[_B_SIG], w[_B_EXP], w[_B_NEG], w[_B_CLS])
    any_special = a_special or b_special
    mask = 0xFFFFFFFF if cd == CD_F32 else 0xFFFF
    nan_bits = 0x7FFFFFFF if cd == CD_F32 else 0x7FFF
    inf_bits = (((1 << out_eb) - 1) << out_fb)
    sign_bit = 1 << (out_eb + out_fb)
    for m in range(m_count):
        for n in range(n_count):
            bits = np.int64(c[m, n]) & mask
            c_neg, c_sig, c_exp, c_cls = decode(bits, out_eb, out_fb)
            if step == k_count:   # one block (sm_90, and m16n8k8 everywhere): _block_bits written
                # out, which measured 2-3 % faster on this hot path than the call
                kind = 0
                if any_special or c_cls != FINITE:
                    kind = _special_block(w, m, n, 0, step, c_neg, c_cls)
                if kind == 2:
                    bits = nan_bits
                elif kind != 0:
                    bits = inf_bits | (sign_bit if kind < 0 else 0)
                else:
                    neg, mag, lsb = _finite_block(
                        w[_A_SIG, m], w[_A_EXP, m], w[_A_NEG, m], w[_B_SIG, n], w[_B_EXP, n], w[_B_NEG, n],
                        0, step, c_neg, c_sig, c_exp, s0, c_s0, frac_bits, ez)
                    if cd == CD_F32:
                        bits = round_rz(neg, mag, lsb, out_eb, out_fb)
                    else:
                        bits = round_rne(neg, mag, lsb, out_eb, out_fb)
                    if bits == sign_bit:   # every zero result is +0
                        bits = 0
            else:   # sm_80 m16n8k16: two blocks; the rounded first block is the second block's c
                bits = _block_bits(w, m, n, 0, step, any_special, c_neg, c_sig, c_exp, c_cls, s0, c_s0,
                                   frac_bits, ez, cd, out_eb, out_fb)
                c_neg, c_sig, c_exp, c_cls = decode(bits, out_eb, out_fb)
                bits = _block_bits(w, m, n, step, step, any_special, c_neg, c_sig, c_exp, c_cls, s0, c_s0,
                                   frac_bits, ez, cd, out_eb, out_fb)
            d[m, n] = bits
