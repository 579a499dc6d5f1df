"""The tensor-core arithmetic of ``mma`` with f16/bf16 inputs, bit-exact, per architecture.

One output element is ``d = c + sum_k a[k] * b[k]``. The model (docs/hardware-model.md §4):

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
split and fraction bits per architecture, special values); docs/hardware-model.md §4 (sm_90 checked on
an H200 over about 2e7 outputs; the evidence classes of ``warpsim.isa.inputs``, run on the H200
by the acceptance set, count how often each neighbour value of sm_90's parameters disagrees with
the GPU: docs/evidence.md). sm_80's second block, its EZ
floor and its special values have no hardware vectors here: they rest on the two papers.

Everything here computes on integers: the products, the alignment, the sum and the rounding.

The kernel, ``mma_core``, works on operand tables (below) and is written for speed: per output column
the 16 rows are contiguous, so that its inner loops run over rows and LLVM turns each into 8-lane
int32 vector operations. Each such trick is explained where it is used.

Indices: every vectorised loop indexes a row view from 0 (``exp = a_exp[row:row + TILE]``, then
``exp[m]`` for ``m in range(TILE)``), never ``a_exp[row + m]``. numba adds an array's length to a
negative index, lane by lane, and LLVM cannot prove ``row + m >= 0`` for a ``row`` computed from an
argument: with AVX-512 it then loads through gathers, which cost Zen 4 and Zen 5 hosts more than
half the kernel's speed (``tests/isa/test_codegen.py`` checks the AVX-512 code has none).

>>> SM90.block, SM90.frac_bits, SM90.ez_f32, SM90.ez_f16
(16, 25, -133, -21)
>>> sorted(ARCHS) == ["sm80", "sm90"]
True

A model with one parameter changed (``ArchModel.variant``) runs through the same kernel: the
discriminating input classes (``warpsim.isa.inputs.EVIDENCE_CLASSES``) and the hardware campaigns use
the neighbours of each parameter (``neighbours``) to show which values the data rules out.

>>> sorted(neighbours(SM90))
['block=8', 'ez_f16=-20', 'ez_f16=-22', 'ez_f32=-132', 'ez_f32=-134', 'frac_bits=24']
"""

from dataclasses import dataclass, replace

import numpy as np
from numba import njit

from warpsim.isa.floats import INF, NAN, decode, decode_fields, round_u32
from warpsim.isa.scratch import stack_array

__all__ = [
    "ArchModel", "SM80", "SM90", "ARCHS", "DEFAULT_ARCH", "get_arch", "arch_name", "arch_option_names",
    "PARAMETERS", "neighbours",
    "AB_TYPES", "CD_TYPES", "AB_F16", "AB_BF16", "CD_F32", "CD_F16",
    "TILE", "TABLE_SIZE", "mma_core", "mma_tile", "new_workspace",
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
    """The tensor-core parameters of one architecture (docs/hardware-model.md §4).

    ``block``: products per block ``L``; ``frac_bits``: fraction bits ``F`` kept below the block's
    largest exponent; ``ez_f32`` / ``ez_f16``: the floor ``EZ`` of that exponent for f32 / f16
    output; ``evidence``: where the numbers come from.
    Pre-conditions: ``block * 2**(frac_bits + 2) <= 2**31`` (a block's aligned products fit int32)
    and ``frac_bits >= 23`` (f32's fraction bits: an aligned ``c`` loses none of its own bits).
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
        if self.frac_bits < 23:
            raise ValueError(f"ArchModel {self.name}: frac_bits {self.frac_bits} below f32's 23")

    def variant(self, **changes):
        """This model with the given parameters changed, named after them (for evidence checks).

        Raises ``ValueError`` (from the pre-conditions) for a variant the kernel cannot compute.

        >>> SM90.variant(ez_f32=-132).name, SM90.variant(ez_f32=-132).ez_f32
        ('sm90[ez_f32=-132]', -132)
        """
        label = ",".join(f"{k}={v}" for k, v in changes.items())
        return replace(self, name=f"{self.name}[{label}]", evidence=f"a variant of {self.name}", **changes)


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
              "docs/hardware-model.md §4: an H200 run with no mismatch in about 2e7 outputs."),
)
ARCHS = {m.name: m for m in list(globals().values()) if isinstance(m, ArchModel)}
DEFAULT_ARCH = SM90.name     # the H200 of the seed configuration
PARAMETERS = ("block", "frac_bits", "ez_f32", "ez_f16")   # the numbers that define a model


def _neighbour_values(model, parameter):
    value = getattr(model, parameter)
    if parameter == "block":
        return [24 - value]   # the other choice: 8 <-> 16
    return [value - 1, value + 1]


def neighbours(model, parameters=PARAMETERS):
    """``{"parameter=value": ArchModel}``: ``model`` with one parameter moved to a neighbour (+-1, the
    other block size), for each variant the kernel can compute (sm90's ``frac_bits=26`` would overflow
    its int32 sums and is left out; the exact-fraction reference in the tests covers it).

    >>> sorted(neighbours(SM80, ["frac_bits"]))
    ['frac_bits=23', 'frac_bits=25']
    """
    out = {}
    for parameter in parameters:
        for value in _neighbour_values(model, parameter):
            try:
                out[f"{parameter}={value}"] = model.variant(**{parameter: value})
            except ValueError:
                pass
    return out


def arch_name(arch):
    """The model name (``"sm90"``) of an architecture however it is spelled: ``sm_90`` (PTX's and every
    ``--arch``'s spelling), ``sm90``, ``90``; ``ValueError`` naming the spellings for another.

    >>> arch_name("sm_90"), arch_name("SM80"), arch_name("90")
    ('sm90', 'sm80', 'sm90')
    """
    name = "sm" + str(arch).strip().lower().removeprefix("sm").lstrip("_")
    if name not in ARCHS:
        raise ValueError(f"unknown architecture {arch!r} (choose one of {', '.join(arch_option_names())})")
    return name


def arch_option_names():
    """What ``--arch`` is spelled as in help and messages: ``('sm_80', 'sm_90')``."""
    return tuple(f"sm_{name[2:]}" for name in sorted(ARCHS))


def get_arch(arch):
    """The ``ArchModel`` named ``arch`` (any spelling :func:`arch_name` takes), or the model itself.

    >>> get_arch("sm80") is SM80 and get_arch("sm_90") is get_arch(SM90) is SM90
    True
    """
    if isinstance(arch, ArchModel):
        return arch
    if isinstance(arch, str):
        return ARCHS[arch_name(arch)]
    raise ValueError(f"unknown architecture {arch!r} (choose one of {', '.join(arch_option_names())})")


TILE = 16                  # rows M of a tile, and the row stride of every operand table
TABLE_SIZE = TILE * TILE

# The operand tables of mma_core: int32 bit patterns (16-bit values in the low bits), each operand's
# matrix TRANSPOSED, row stride TILE:
#   at[k * TILE + m] = A[m, k]    # (K16, M16) -> A
#   bt[n * TILE + k] = B[k, n]    # (N16, K16) -> B
#   ct[n * TILE + m] = C[m, n]    # (N16, M16) -> C; dt likewise for D
# One column n of C/D is 16 contiguous rows m, and so is one k of A: the inner loops run over m.


def new_workspace():
    """Operand tables for ``mma_tile``: ``int32[4, TABLE_SIZE]`` (at, bt, ct, dt); reuse it."""
    return np.zeros((4, TABLE_SIZE), dtype=np.int32)


@njit(cache=True, inline="always")
def _decode_range(src, start, stop, exp_bits, frac_bits, shift, sig, exp, neg):
    """Decode ``src[start:stop]`` into int32 ``sig << shift``, ``exp`` and ``neg`` (0 or -1, a mask).
    Returns 1 if any value is an infinity or a NaN, else 0."""
    special = _I32(0)
    for i in range(start, stop):
        n_, s_, e_, sp = decode_fields(src[i], exp_bits, frac_bits)   # no branch: vectorises
        sig[i] = _I32(s_ << (shift & 31))   # "& 31": a shift LLVM can keep in int32
        exp[i] = e_
        neg[i] = -n_
        special |= _I32(sp)
    return special


@njit(cache=True, inline="always")
def _decode_rows(src, rows, cols, exp_bits, frac_bits, shift, sig, exp, neg):
    """``_decode_range`` of ``src[r * TILE + c]`` for ``r < rows, c < cols``."""
    if cols == TILE:   # whole rows: one flat loop (a long loop vectorises better)
        return _decode_range(src, 0, rows * TILE, exp_bits, frac_bits, shift, sig, exp, neg)
    special = _I32(0)
    for r in range(rows):   # rows as views: _decode_range's loop then indexes from 0
        row = slice(r * TILE, r * TILE + cols)
        special |= _decode_range(src[row], 0, cols, exp_bits, frac_bits, shift, sig[row], exp[row], neg[row])
    return special


@njit(cache=True, inline="always")
def _decode_operand(src, rows, cols, ab, shift, sig, exp, neg):
    """``_decode_rows`` in format ``ab``, written once per format: constant field widths keep every
    shift in int32 (with widths unknown LLVM keeps int64, half as many lanes)."""
    if ab == AB_F16:
        return _decode_rows(src, rows, cols, 5, 10, shift, sig, exp, neg)
    return _decode_rows(src, rows, cols, 8, 7, shift, sig, exp, neg)


@njit(cache=True, inline="always")
def _decode_c(c_src, count, exp_bits, frac_bits, c_s0, ez, c_bits, c_sig, c_exp, c_neg, emax):
    """Decode ``c_src[:count]`` (keeping a copy in ``c_bits``) into ``c_sig << c_s0``, ``c_exp``,
    ``c_neg`` (a mask), and start ``emax`` at ``max(ez, c_exp)``. Returns 1 if any is inf or NaN, else 0."""
    special = _I32(0)
    for i in range(count):      # no branch: vectorises
        bits = c_src[i]
        c_bits[i] = bits
        n_, s_, e_, sp = decode_fields(bits, exp_bits, frac_bits)
        c_sig[i] = _I32(s_ << (c_s0 & 31))
        c_exp[i] = e_
        c_neg[i] = -n_
        emax[i] = max(_I32(ez), _I32(e_))   # rule 4's floor; a zero c has exp ZERO_EXP < EZ
        special |= _I32(sp)
    return special


@njit(cache=True, inline="always")
def _column_maxima(a_exp, b_exp, emax, n0, n_count, k0, k1):
    """``emax[n * TILE + m] = max(emax[...], a_exp[k, m] + b_exp[n, k] for k0 <= k < k1)`` for the
    four columns ``n0 .. n0+3`` (the last valid column stands in for missing ones)."""
    # Four columns at a time in a 64-entry stack table at fixed offsets: the m loop's body is then
    # large enough that LLVM vectorises it instead of unrolling it into scalar code, and the 8
    # vector maxima per k are independent.
    em = stack_array(64, np.int32)
    o0 = n0 * TILE
    o1 = min(n0 + 1, n_count - 1) * TILE
    o2 = min(n0 + 2, n_count - 1) * TILE
    o3 = min(n0 + 3, n_count - 1) * TILE
    # rows as views: the m loops index from 0 (see "Indices" above)
    col0, col1, col2, col3 = emax[o0:o0 + TILE], emax[o1:o1 + TILE], emax[o2:o2 + TILE], emax[o3:o3 + TILE]
    for m in range(TILE):
        em[m] = col0[m]
        em[16 + m] = col1[m]
        em[32 + m] = col2[m]
        em[48 + m] = col3[m]
    for k in range(k0, k1):
        e0 = b_exp[o0 + k]
        e1 = b_exp[o1 + k]
        e2 = b_exp[o2 + k]
        e3 = b_exp[o3 + k]
        exp = a_exp[k * TILE:(k + 1) * TILE]
        for m in range(TILE):
            x = exp[m]
            em[m] = max(em[m], _I32(x + e0))
            em[16 + m] = max(em[16 + m], _I32(x + e1))
            em[32 + m] = max(em[32 + m], _I32(x + e2))
            em[48 + m] = max(em[48 + m], _I32(x + e3))
    for m in range(TILE):   # o1..o3 may repeat o0: the repeated columns hold the same maxima
        col0[m] = em[m]
        col1[m] = em[16 + m]
        col2[m] = em[32 + m]
        col3[m] = em[48 + m]


@njit(cache=True, inline="always")
def _column_sums(a_sig, a_exp, a_neg, b_sig, b_exp, b_neg, emax, acc, n, k0, k1):
    """``acc[m]`` = the exact sum of the products ``k0 .. k1-1`` of column ``n``, each aligned to
    ``emax`` and truncated toward zero, as int32 (``|acc| < 2**31``: ``ArchModel``'s bound)."""
    o = n * TILE
    e_max = emax[o:o + TILE]   # rows as views: the m loops index from 0 (see "Indices" above)
    for m in range(TILE):
        acc[m] = 0
    for k in range(k0, k1):
        e_b = b_exp[o + k]
        s_b = b_sig[o + k]
        n_b = b_neg[o + k]
        row = k * TILE
        sig, exp, neg = a_sig[row:row + TILE], a_exp[row:row + TILE], a_neg[row:row + TILE]
        for m in range(TILE):   # int32 throughout (numba would widen each step to int64): 8 lanes
            # shift d = emax - e, at most 31; "& 31" tells LLVM that d is in 0..31 so that it keeps
            # the shift in int32 (a_sig carries the product's alignment: every term < 2**(F+2))
            d = min(_I32(e_max[m] - _I32(exp[m] + e_b)), _I32(31)) & _I32(31)
            t = _I32(_I32(sig[m] * s_b) >> d)   # the magnitude, truncated
            sg = _I32(neg[m] ^ n_b)              # 0 or -1: (t ^ sg) - sg is t or -t
            acc[m] = _I32(acc[m] + _I32(_I32(t ^ sg) - sg))


@njit(cache=True, inline="always")
def _round_sum(total, tc, lsb, cd):
    """Bits (int32) of the block sum ``(total + tc) * 2**lsb`` in format ``cd``; zeros give +0.

    ``total``: the products' int32 sum; ``tc``: the aligned c, signed, ``|tc| < 2**27``.
    """
    # The exact sum needs 33 bits (|sum| < 2**31 + 2**27) but its magnitude fits a uint32: add in
    # int32 with wrap-around, and on a signed overflow (both operands' sign differs from the wrapped
    # sum's) the true sign is the operands' one; the magnitude is then +-w modulo 2**32 either way.
    w = _I32(total + tc)
    overflow = _I32(_I32(total ^ w) & _I32(tc ^ w)) < 0
    neg = (total < 0) if overflow else (w < 0)
    mag = np.uint32(_I32(-w)) if neg else np.uint32(w)
    if cd == CD_F32:
        bits = round_u32(neg, mag, lsb, 8, 23, False)   # truncation
    else:
        bits = round_u32(neg, mag, lsb, 5, 10, True)    # to nearest, ties to even
    return _I32(0) if bits == _I32(neg << (31 if cd == CD_F32 else 15)) else bits   # -0 -> +0


@njit(cache=True, inline="always")
def _special_kind(at, bt, c_bits, m, n, k0, k1, ab, cd):
    """Result class of output ``(m, n)``'s block from the raw bits: 0 none, 1 +inf, -1 -inf, 2 NaN."""
    in_eb, in_fb = _AB_FORMAT[ab]
    out_eb, out_fb = _CD_FORMAT[cd]
    c_neg, _, _, c_cls = decode(c_bits[n * TILE + m], out_eb, out_fb)
    nan = c_cls == NAN
    pinf = c_cls == INF and c_neg == 0
    ninf = c_cls == INF and c_neg != 0
    for k in range(k0, k1):
        a_neg, a_sig, _, ca = decode(at[k * TILE + m] & 0xFFFF, in_eb, in_fb)
        b_neg, b_sig, _, cb = decode(bt[n * TILE + k] & 0xFFFF, in_eb, in_fb)
        if ca == NAN or cb == NAN:
            nan = True
        elif ca == INF or cb == INF:
            if (ca != INF and a_sig == 0) or (cb != INF and b_sig == 0):
                nan = True   # inf * 0
            elif a_neg != b_neg:
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
def _block(a_sig, a_exp, a_neg, b_sig, b_exp, b_neg, at, bt, c_src, dt, n_count, k0, k1, ab, cd,
           frac_bits, ez, special):
    """One block: ``dt = round(c_src + products k0 .. k1-1)`` for ``n_count`` columns (rules 3-6).

    ``c_src`` may be ``dt`` itself (sm_80's second block). ``special``: whether any A or B value is
    an infinity or a NaN.
    """
    out_eb, out_fb = _CD_FORMAT[cd]
    c_bits = stack_array(TABLE_SIZE, np.int32)
    c_sig = stack_array(TABLE_SIZE, np.int32)
    c_exp = stack_array(TABLE_SIZE, np.int32)
    c_neg = stack_array(TABLE_SIZE, np.int32)
    emax = stack_array(TABLE_SIZE, np.int32)
    acc = stack_array(TILE, np.int32)
    count = n_count * TILE
    c_s0 = frac_bits - out_fb   # c's last bit -> aligned last bit, before the shift by emax - c_exp
    if cd == CD_F32:            # constant field widths, as in _decode_operand
        c_special = _decode_c(c_src, count, 8, 23, c_s0, ez, c_bits, c_sig, c_exp, c_neg, emax)
    else:
        c_special = _decode_c(c_src, count, 5, 10, c_s0, ez, c_bits, c_sig, c_exp, c_neg, emax)
    for n0 in range(0, n_count, 4):
        _column_maxima(a_exp, b_exp, emax, n0, n_count, k0, k1)
    for n in range(n_count):
        _column_sums(a_sig, a_exp, a_neg, b_sig, b_exp, b_neg, emax, acc, n, k0, k1)
        col = slice(n * TILE, (n + 1) * TILE)   # rows as views: the m loop indexes from 0
        sig, exp, neg, e_max, d_col = c_sig[col], c_exp[col], c_neg[col], emax[col], dt[col]
        for m in range(TILE):   # no branch: vectorises, reading acc from vector registers
            # c aligned like a product (c_sig < 2**27 carries its alignment), truncated, signed
            tc = _I32(sig[m] >> (min(_I32(e_max[m] - exp[m]), _I32(31)) & _I32(31)))
            tc = _I32(_I32(tc ^ neg[m]) - neg[m])
            d_col[m] = _round_sum(acc[m], tc, _I32(e_max[m] - frac_bits), cd)
    if special or c_special != 0:   # rare: outputs whose block has an inf or a NaN get rule 6's result
        nan_bits = 0x7FFFFFFF if cd == CD_F32 else 0x7FFF
        inf_bits = ((1 << out_eb) - 1) << out_fb
        sign_bit = 1 << (out_eb + out_fb)
        for n in range(n_count):
            for m in range(TILE):
                kind = _special_kind(at, bt, c_bits, m, n, k0, k1, ab, cd)
                if kind == 2:
                    dt[n * TILE + m] = nan_bits
                elif kind != 0:
                    dt[n * TILE + m] = _I32(inf_bits | (sign_bit if kind < 0 else 0))


@njit(cache=True)
def mma_core(at, bt, ct, dt, n_count, k_count, ab, cd, block, frac_bits, ez):
    """``D = C + A B`` bit-exactly, per the model above, on operand tables (``at, bt, ct, dt``).

    The tables are int32 arrays of ``TABLE_SIZE`` laid out as stated at ``TILE``; ``A`` has 16 rows,
    ``n_count`` (1..16) columns of ``B``, ``C`` and ``D`` are used, ``k_count`` (8 or 16) values of k.
    ``ab``/``cd``: type codes; ``block``, ``frac_bits``, ``ez``: from an ``ArchModel`` (``ez`` for
    ``cd``). Writes ``dt[n * TILE + m]`` for ``n < n_count`` (f16 results in the low 16 bits, f32 as
    a signed int32); ``dt`` may be ``ct``. Returns nothing.
    """
    a_sig = stack_array(TABLE_SIZE, np.int32)
    a_exp = stack_array(TABLE_SIZE, np.int32)
    a_neg = stack_array(TABLE_SIZE, np.int32)
    b_sig = stack_array(TABLE_SIZE, np.int32)
    b_exp = stack_array(TABLE_SIZE, np.int32)
    b_neg = stack_array(TABLE_SIZE, np.int32)
    # A's significands carry the products' alignment: product bits * 2**(F - 2 * in_fb) puts the
    # product's last bit at 2**(e - F) before the shift by emax - e
    shift = frac_bits - 2 * _AB_FORMAT[ab][1]
    special = _decode_operand(at, k_count, TILE, ab, shift, a_sig, a_exp, a_neg)
    special |= _decode_operand(bt, n_count, k_count, ab, 0, b_sig, b_exp, b_neg)
    step = block if block < k_count else k_count
    for k0 in range(0, k_count, step):   # sm_80 m16n8k16: two blocks, the first's result is c
        _block(a_sig, a_exp, a_neg, b_sig, b_exp, b_neg, at, bt, ct if k0 == 0 else dt, dt,
               n_count, k0, k0 + step, ab, cd, frac_bits, ez, special != 0)


@njit(cache=True)
def mma_tile(a, bt, c, d, m_count, n_count, k_count, ab, cd, block, frac_bits, ez, w):
    """``d[m, n] = c[m, n] + sum_k a[m, k] * bt[n, k]`` bit-exactly, per the model above.

    ``a`` (M, K) and ``bt`` (N, K: B transposed) hold 16-bit patterns of type ``ab`` (``AB_F16`` or
    ``AB_BF16``); ``c`` and ``d`` (M, N) hold bit patterns of type ``cd`` (``CD_F32``, or ``CD_F16`` in
    the low 16 bits); ``block``, ``frac_bits``, ``ez`` come from an ``ArchModel`` (``ez`` for
    ``cd``); ``w`` is a ``new_workspace()``. Pre-conditions: ``M, N <= 16``, ``K`` 8 or 16,
    ``block`` 8 or 16 (other values compute nothing). Writes ``d``; returns nothing.
    """
    if (k_count != 8 and k_count != 16) or (block != 8 and block != 16):
        return
    at_, bt_, ct_, dt_ = w[0], w[1], w[2], w[3]
    mask = 0xFFFFFFFF if cd == CD_F32 else 0xFFFF
    at_[:] = 0   # rows m >= m_count: zeros, computed and dropped
    for m in range(m_count):
        for k in range(k_count):
            at_[k * TILE + m] = a[m, k] & 0xFFFF
    for n in range(n_count):
        for k in range(k_count):
            bt_[n * TILE + k] = bt[n, k] & 0xFFFF
        for m in range(TILE):
            ct_[n * TILE + m] = _I32(c[m, n] & mask) if m < m_count else 0
    mma_core(at_, bt_, ct_, dt_, n_count, k_count, ab, cd, block, frac_bits, ez)
    for m in range(m_count):
        for n in range(n_count):
            d[m, n] = np.int64(dt_[n * TILE + m]) & mask
