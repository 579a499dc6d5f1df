"""``wgmma.mma_async.sync.aligned.m64nNk16`` (sm_90a) with f16/bf16 inputs, bit-exact: the shared-memory matrix
descriptor, the canonical layouts it reads, the warpgroup's fragments and the tensor-core arithmetic.

One ``wgmma`` computes ``D (64 x N) = A (64 x 16) * B (16 x N) + D * scale_d``. A comes from shared memory through a
matrix descriptor, or from registers; B always from shared memory. The four warps of a warpgroup each own 16 rows
of A and D (warp ``w % 4`` rows ``16 * (w % 4) ..``); a warp's D rows depend on its own A rows and all of B only, so
each warp computes its slice when it issues the instruction (:func:`warp_wgmma`).

**The descriptor** (64 bits; PTX ISA "Matrix Descriptor Format", CuTe ``GmmaDescriptor``): bits 0-13 the start
address >> 4, 16-29 the leading byte offset (LBO) >> 4, 32-45 the stride byte offset (SBO) >> 4, 49-51 the base
offset, 62-63 the layout: 0 none (interleaved), 1 128-byte swizzle, 2 64-byte, 3 32-byte.

**The canonical layouts** it describes, for an element ``(mn, k)`` of the operand (A: ``mn`` = row m; B: ``mn`` = column
n), with ``T`` elements per 16 bytes (8 for 16-bit types) and ``W`` 16-byte chunks per swizzle row (1, 2, 4, 8 for
none, 32B, 64B, 128B); CuTe's ``make_gmma_desc`` states the same as layouts in units of 16 bytes:

- K-major (``imm-trans`` 0): core matrices of 8 rows (mn) x 16 bytes (k). Interleaved: row ``mn % 8`` at 16 bytes,
  the next 8 rows at SBO, the second 16 bytes of k at LBO. Swizzled: rows ``W * 16`` bytes apart, the next 8 rows at
  SBO, k contiguous along the row (LBO unused).
- MN-major (``imm-trans`` 1): 16 bytes of mn contiguous, k rows 16 (interleaved) or ``W * 16`` bytes apart.
  Interleaved: the next 16 bytes of mn at SBO, the next 8 k at LBO. Swizzled: ``W`` chunks of mn contiguous, the
  next ``W * 16`` bytes of mn at LBO, the next 8 k at SBO.

Swizzling XORs the byte address's bits 7.. into its bits 4.. (``W - 1`` of them: CuTe's ``Swizzle<log2 W, 4, 3>``),
on the absolute shared address, as TMA writes it. A non-zero base offset (for a start address off the swizzle
pattern's repeat) is not modelled: a fault, not a guess.

**The arithmetic** is the tensor core's ``mma`` model of :mod:`warpsim.isa.arith` (one block of 16 on sm_90): each
16-column chunk of D goes through :func:`~warpsim.isa.arith.mma_core`. ``imm-scale-a/b`` = -1 negates A/B (the sign
bit); ``scale-d`` false adds a zero C. Evidence: docs/hardware-model.md, "wgmma".
"""

from dataclasses import dataclass

import numpy as np
from numba import njit

from warpsim.isa.arith import AB_TYPES, CD_F32, CD_TYPES, DEFAULT_ARCH, TABLE_SIZE, TILE, get_arch, mma_core
from warpsim.isa.dot_add import DOT_TYPES, SM90_FP8, SM90_TF32, dot_add, int_dot_add
from warpsim.isa.faults import FAULT_BAD_DESCRIPTOR, FAULT_BAD_OPERAND, FAULT_OUT_OF_RANGE, set_fault
from warpsim.isa.fragments import WGMMA_A, WGMMA_A_8BIT, WGMMA_A_TF32, WGMMA_N, wgmma_d_map
from warpsim.isa.memory import read_bytes
from warpsim.isa.scratch import stack_array

__all__ = ["LAYOUTS", "SWIZZLE_WIDTH", "MatrixDescriptor", "make_descriptor", "element_address",
           "descriptor_addresses", "descriptor_text", "warp_wgmma", "warp_wgmma_dot", "wgmma", "TYPE_COMBOS",
           "DOT_COMBOS", "WGMMA_N", "WGMMA_K"]

LAYOUTS = {"none": 0, "128B": 1, "64B": 2, "32B": 3}          # the descriptor's layout field
SWIZZLE_WIDTH = (1, 8, 4, 2)                                  # layout code -> W: 16-byte chunks per swizzle row
TYPE_COMBOS = (("f16", "f32"), ("bf16", "f32"), ("f16", "f16"))   # (ab, cd) through the mma model (k16)
# (a, b, cd) through the dot-add model (warpsim.isa.dot_add): tf32 k8, fp8 k32 (mixed e4m3/e5m2), integers k32
DOT_COMBOS = ((("tf32",), ("tf32",), ("f32",)), (("e4m3", "e5m2"), ("e4m3", "e5m2"), ("f32", "f16")),
              (("s8", "u8"), ("s8", "u8"), ("s32",)))
WGMMA_K = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32}
_W = np.array(SWIZZLE_WIDTH, np.int64)


@dataclass(frozen=True)
class MatrixDescriptor:
    """The fields of a wgmma matrix descriptor, in bytes (``start``, ``leading``, ``stride``), ``base_offset`` and
    ``layout`` (``"none"``, ``"128B"``, ``"64B"``, ``"32B"``).

    >>> d = MatrixDescriptor.from_bits(0x4000004000010040)
    >>> d.start, d.leading, d.stride, d.layout
    (1024, 16, 1024, '128B')
    >>> hex(d.bits())
    '0x4000004000010040'
    """

    start: int
    leading: int
    stride: int
    base_offset: int = 0
    layout: str = "none"

    @classmethod
    def from_bits(cls, bits):
        bits = int(bits) & (1 << 64) - 1
        name = {v: k for k, v in LAYOUTS.items()}[bits >> 62]
        return cls(((bits >> 0) & 0x3FFF) << 4, ((bits >> 16) & 0x3FFF) << 4, ((bits >> 32) & 0x3FFF) << 4,
                   (bits >> 49) & 7, name)

    def bits(self):
        """The 64-bit descriptor; ``ValueError`` naming the field that does not fit."""
        for name in ("start", "leading", "stride"):
            value = getattr(self, name)
            if value < 0 or value % 16 or value >> 4 > 0x3FFF:
                raise ValueError(f"MatrixDescriptor: {name} {value} must be a multiple of 16 below {0x4000 << 4}")
        if self.layout not in LAYOUTS or not 0 <= self.base_offset < 8:
            raise ValueError(f"MatrixDescriptor: layout must be one of {sorted(LAYOUTS)} and base_offset 0..7, got "
                             f"{self.layout!r}, {self.base_offset!r}")
        return ((self.start >> 4) | (self.leading >> 4) << 16 | (self.stride >> 4) << 32 | self.base_offset << 49
                | LAYOUTS[self.layout] << 62)

    def __str__(self):
        return (f"descriptor start {self.start:#x} LBO {self.leading} SBO {self.stride} layout {self.layout}"
                + (f" base offset {self.base_offset}" if self.base_offset else ""))


def make_descriptor(start, leading, stride, layout="none", base_offset=0):
    """The 64-bit descriptor of the fields (bytes), as an ``int``: ``MatrixDescriptor(...).bits()``."""
    return MatrixDescriptor(start, leading, stride, base_offset, layout).bits()


@njit(cache=True, inline="always")
def element_address(desc, mn, k, mn_major, elem_bytes):
    """The shared-memory byte address of operand element ``(mn, k)`` under descriptor ``desc`` (int64 bits):
    the canonical layout of the module docstring, swizzled. ``mn_major``: ``imm-trans`` 1."""
    start = (desc & 0x3FFF) << 4
    lbo = ((desc >> 16) & 0x3FFF) << 4
    sbo = ((desc >> 32) & 0x3FFF) << 4
    w = _W[(desc >> 62) & 3]
    t = 16 // elem_bytes
    if not mn_major:
        r, g, c, e = mn % 8, mn // 8, k // t, k % t
        if w == 1:
            off = g * sbo + r * 16 + c * lbo + e * elem_bytes
        else:
            off = g * sbo + r * 16 * w + c * 16 + e * elem_bytes
    else:
        e, c, r, kg = mn % t, mn // t, k % 8, k // 8
        if w == 1:
            off = c * sbo + r * 16 + kg * lbo + e * elem_bytes
        else:
            off = (c // w) * lbo + (c % w) * 16 + r * 16 * w + kg * sbo + e * elem_bytes
    addr = start + off
    if w > 1:
        addr ^= ((addr >> 7) & (w - 1)) << 4
    return addr


@njit(cache=True)
def _addresses(desc, rows, ks, mn_major, elem_bytes, out):
    for mn in range(rows):
        for k in range(ks):
            out[mn, k] = element_address(desc, mn, k, mn_major, elem_bytes)


def descriptor_addresses(desc, rows, k=16, mn_major=False, elem_bytes=2):
    """``int64[rows, k]``: the shared byte address of each operand element ``(mn, k)`` that descriptor ``desc``
    (bits, or a :class:`MatrixDescriptor`) reads: for pictures, ``explain`` and tests.

    >>> a = descriptor_addresses(make_descriptor(1024, 16, 1024, "128B"), 8)
    >>> [int(x) for x in a[1, ::8]]             # row 1, k = 0 and 8: chunks 0 and 1 XOR 1
    [1168, 1152]
    """
    bits = desc.bits() if isinstance(desc, MatrixDescriptor) else int(desc)
    out = np.zeros((rows, k), np.int64)
    _addresses(np.int64(bits - (1 << 64) if bits >= 1 << 63 else bits), rows, k, bool(mn_major), elem_bytes, out)
    return out


def descriptor_text(desc, rows=64, mn_major=False):
    """What a descriptor reads, as text (``warpsim explain --descriptor``): its fields, then for each of ``rows``
    rows (M of A, N of B) of 16-bit elements the shared byte address of k = 0..7 and of k = 8..15 (each 16
    contiguous bytes when K-major) and, for a swizzled layout, the 16-byte chunk each lands in.

    >>> print(descriptor_text(make_descriptor(1024, 16, 1024, "128B"), rows=2))
    descriptor 0x4000004000010040: start 0x400, LBO 16, SBO 1024, layout 128B, K-major, 16-bit elements
      row  k 0-7            k 8-15
        0  0x400 (chunk 0)  0x410 (chunk 1)
        1  0x490 (chunk 1)  0x480 (chunk 0)
    """
    d = desc if isinstance(desc, MatrixDescriptor) else MatrixDescriptor.from_bits(desc)
    addrs = descriptor_addresses(d, rows, mn_major=mn_major)
    head = (f"descriptor {d.bits():#018x}: start {d.start:#x}, LBO {d.leading}, SBO {d.stride}, layout {d.layout}"
            + (f", base offset {d.base_offset}" if d.base_offset else "")
            + f", {'MN' if mn_major else 'K'}-major, 16-bit elements")
    chunk = (lambda a: f" (chunk {(a >> 4) & 7})") if d.layout != "none" else (lambda a: "")    # noqa: E731
    cells = [[f"{int(a):#x}{chunk(int(a))}" for a in (row[0], row[8])] for row in addrs]
    width = max(len(c) for r in cells for c in r)
    lines = [head, f"  row  {'k 0-7':<{width}}  k 8-15"]
    lines += [f"  {m:>3}  {a:<{width}}  {b}" for m, (a, b) in enumerate(cells)]
    return "\n".join(lines)


# value i of a warp's f32 D (per register) -> (row, col), for N = 256; a smaller N uses the first N/2 values, and
# .f16 D the same positions with value i in register i // 2, half i % 2
TF32_CODE = DOT_TYPES["tf32"]
# the dot-add models' parameters as constants the compiled code can read: (frac_bits, out_frac, zero_exp)
_TF32_MODEL = (SM90_TF32.frac_bits, SM90_TF32.out_frac, SM90_TF32.zero_exp, SM90_TF32.min_quantum)
_FP8_MODEL = (SM90_FP8.frac_bits, SM90_FP8.out_frac, SM90_FP8.zero_exp, SM90_FP8.min_quantum)
_D_MAP = wgmma_d_map(256, "f32")
_D_ROW = np.ascontiguousarray(_D_MAP.row[:, :, 0])
_D_COL = np.ascontiguousarray(_D_MAP.col[:, :, 0])
_A_ROW = WGMMA_A.row
_A_COL = WGMMA_A.col
_AT_ROW = np.ascontiguousarray(WGMMA_A_TF32.row[:, :, 0])
_AT_COL = np.ascontiguousarray(WGMMA_A_TF32.col[:, :, 0])
_A8_ROW = WGMMA_A_8BIT.row
_A8_COL = WGMMA_A_8BIT.col


@njit(cache=True, inline="always")
def _load16(smem, addr):
    return np.int32(smem[addr]) | (np.int32(smem[addr + 1]) << 8)


@njit(cache=True)
def _check_operand(desc, rows, mn0, mn_major, smem_size, fault, ks=16, elem_bytes=2):
    """Whether every element (``ks`` along k, ``elem_bytes`` each) of rows ``mn0 ..`` that ``desc`` reads lies in shared
    memory; else a fault."""
    if (desc >> 62) & 3 and (desc >> 49) & 7:
        set_fault(fault, FAULT_BAD_DESCRIPTOR, 0, desc, 1)
        return False
    for mn in range(mn0, mn0 + rows):
        for k in range(ks):
            addr = element_address(desc, mn, k, mn_major, elem_bytes)
            if addr < 0 or addr + elem_bytes > smem_size:
                set_fault(fault, FAULT_OUT_OF_RANGE, 0, addr, elem_bytes)
                return False
    return True


@njit(cache=True)
def warp_wgmma(regs_w, quarter, smem, a_desc, a_regs, b_desc, d_regs, n, ab, cd, scale_d, neg_a, neg_b, trans_a,
               trans_b, block, frac_bits, ez, fault):
    """One warp's part of ``wgmma.mma_async.m64n{n}k16``: its 16 rows of D, in ``regs_w[:, d_regs]``.

    ``regs_w``: uint32[32, R]; ``quarter``: the warp's index in its warpgroup (0..3: its rows ``16 * quarter ..``);
    ``smem``: uint8[S]; ``a_desc``/``b_desc``: descriptor bits (int64); ``a_regs``: A's four registers, or empty for A
    from ``a_desc``; ``d_regs``: ``n/2`` (f32) or ``n/4`` (f16) registers, read as C unless ``scale_d`` is 0;
    ``neg_a``/``neg_b``: ``imm-scale`` -1; ``trans_a``/``trans_b``: ``imm-trans`` (MN-major); ``block``,
    ``frac_bits``, ``ez``: the arithmetic model (:mod:`warpsim.isa.arith`). Faults (nothing written): an element
    outside shared memory, a swizzled descriptor with a base offset, a register count that does not fit ``n``.
    Returns True when it executed.
    """
    per_reg = 1 if cd == CD_F32 else 2
    if n % 8 or n < 8 or n > 256 or d_regs.shape[0] * per_reg * 2 != n or (a_regs.shape[0] not in (0, 4)):
        set_fault(fault, FAULT_BAD_OPERAND, 0, d_regs.shape[0], n // (2 * per_reg))
        return False
    if a_regs.shape[0] == 0 and not _check_operand(a_desc, 16, 16 * quarter, trans_a, smem.shape[0], fault):
        return False
    if not _check_operand(b_desc, n, 0, trans_b, smem.shape[0], fault):
        return False
    at = stack_array(TABLE_SIZE, np.int32)
    bt = stack_array(TABLE_SIZE, np.int32)
    ct = stack_array(TABLE_SIZE, np.int32)
    dt = stack_array(TABLE_SIZE, np.int32)
    sign_a = np.int32(0x8000) if neg_a else np.int32(0)
    sign_b = np.int32(0x8000) if neg_b else np.int32(0)
    if a_regs.shape[0] == 4:
        for r in range(4):
            for lane in range(32):
                v = regs_w[lane, a_regs[r]]
                for h in range(2):
                    at[_A_COL[lane, r, h] * TILE + _A_ROW[lane, r, h]] = np.int32((v >> (16 * h)) & 0xFFFF) ^ sign_a
    else:
        for m in range(16):
            for k in range(16):
                at[k * TILE + m] = _load16(smem, element_address(a_desc, 16 * quarter + m, k, trans_a, 2)) ^ sign_a
    for c0 in range(0, n, 16):
        nc = min(16, n - c0)
        for j in range(nc):
            for k in range(16):
                bt[j * TILE + k] = _load16(smem, element_address(b_desc, c0 + j, k, trans_b, 2)) ^ sign_b
        first, last = c0 // 2, (c0 + nc) // 2                 # the D values of these columns
        for lane in range(32):
            for i in range(first, last):
                at_ = (_D_COL[lane, i] - c0) * TILE + _D_ROW[lane, i]
                if scale_d == 0:
                    ct[at_] = 0
                elif per_reg == 1:
                    ct[at_] = np.int32(regs_w[lane, d_regs[i]])
                else:
                    ct[at_] = np.int32((regs_w[lane, d_regs[i >> 1]] >> (16 * (i & 1))) & 0xFFFF)
        mma_core(at, bt, ct, dt, np.int64(nc), np.int64(16), ab, cd, block, frac_bits, ez)
        for lane in range(32):
            for i in range(first, last):
                v = dt[(_D_COL[lane, i] - c0) * TILE + _D_ROW[lane, i]]
                if per_reg == 1:
                    regs_w[lane, d_regs[i]] = np.uint32(np.int64(v) & 0xFFFFFFFF)
                else:
                    s = 16 * (i & 1)
                    old = np.int64(regs_w[lane, d_regs[i >> 1]]) & ~(np.int64(0xFFFF) << s)
                    regs_w[lane, d_regs[i >> 1]] = np.uint32(old | ((np.int64(v) & 0xFFFF) << s))
    return True


@njit(cache=True)
def warp_wgmma_dot(regs_w, quarter, smem, a_desc, a_regs, b_desc, d_regs, n, k, ta, tb, cd, scale_d, neg_a, neg_b,
                   satfinite, fault):
    """One warp's part of ``wgmma.mma_async.m64n{n}k{k}`` with tf32, e4m3/e5m2 or s8/u8 inputs (``ta``/``tb``: the
    codes of :data:`warpsim.isa.dot_add.DOT_TYPES`; ``cd`` 0 f32, 1 f16, 2 s32): its 16 rows of D, in
    ``regs_w[:, d_regs]``. A from its four registers ``a_regs`` (``WGMMA_A_TF32``, ``WGMMA_A_8BIT``) or, with ``a_regs``
    empty, from shared memory through ``a_desc``; B through ``b_desc`` (K-major: these types have no ``imm-trans``);
    ``neg_a``/``neg_b`` the ``imm-scale`` -1 of the float types; ``satfinite`` for s32. The arithmetic is
    :mod:`warpsim.isa.dot_add`'s. Faults as :func:`warp_wgmma`. Returns True when it executed."""
    per_reg = 2 if cd == 1 else 1
    if n % 8 or n < 8 or n > 256 or d_regs.shape[0] * per_reg * 2 != n:
        set_fault(fault, FAULT_BAD_OPERAND, 0, d_regs.shape[0], n // (2 * per_reg))
        return False
    ea = 4 if ta == TF32_CODE else 1
    eb = 4 if tb == TF32_CODE else 1
    if a_regs.shape[0] == 0 and not _check_operand(a_desc, 16, 16 * quarter, False, smem.shape[0], fault, k, ea):
        return False
    if a_regs.shape[0] not in (0, 4):
        set_fault(fault, FAULT_BAD_OPERAND, 0, a_regs.shape[0], 4)
        return False
    if not _check_operand(b_desc, n, 0, False, smem.shape[0], fault, k, eb):
        return False
    sign_a = np.int64(neg_a) << (8 * ea - 1)
    sign_b = np.int64(neg_b) << (8 * eb - 1)
    a = np.empty((16, 32), np.int64)
    b = np.empty((n, 32), np.int64)
    if a_regs.shape[0] == 4:
        per = 4 // ea                                   # values a register: 1 (tf32) or 4 (8-bit)
        for r in range(4):
            for lane in range(32):
                v = np.int64(regs_w[lane, a_regs[r]])
                for h in range(per):
                    if ea == 4:
                        a[_AT_ROW[lane, r], _AT_COL[lane, r]] = v ^ sign_a
                    else:
                        a[_A8_ROW[lane, r, h], _A8_COL[lane, r, h]] = ((v >> (8 * h)) & 0xFF) ^ sign_a
    else:
        for m in range(16):
            for kk in range(k):
                a[m, kk] = read_bytes(smem, element_address(a_desc, 16 * quarter + m, kk, False, ea), ea) ^ sign_a
    for j in range(n):
        for kk in range(k):
            b[j, kk] = read_bytes(smem, element_address(b_desc, j, kk, False, eb), eb) ^ sign_b
    for lane in range(32):
        for i in range(n // 2):
            row, col = _D_ROW[lane, i], _D_COL[lane, i]
            if scale_d == 0:
                c = np.int64(0)
            elif per_reg == 1:
                c = np.int64(regs_w[lane, d_regs[i]])
            else:
                c = (np.int64(regs_w[lane, d_regs[i >> 1]]) >> (16 * (i & 1))) & 0xFFFF
            if cd == 2:
                v = int_dot_add(a[row], b[col], k, ta, tb, c, satfinite)
            elif ta == TF32_CODE:
                v = dot_add(a[row], b[col], k, ta, tb, c, cd, _TF32_MODEL[0], _TF32_MODEL[1], _TF32_MODEL[2],
                            _TF32_MODEL[3])
            else:
                v = dot_add(a[row], b[col], k, ta, tb, c, cd, _FP8_MODEL[0], _FP8_MODEL[1], _FP8_MODEL[2],
                            _FP8_MODEL[3])
            if per_reg == 1:
                regs_w[lane, d_regs[i]] = np.uint32(v & 0xFFFFFFFF)
            else:
                s = 16 * (i & 1)
                old = np.int64(regs_w[lane, d_regs[i >> 1]]) & ~(np.int64(0xFFFF) << s)
                regs_w[lane, d_regs[i >> 1]] = np.uint32(old | ((v & 0xFFFF) << s))
    return True


def wgmma(a, b, c=None, *, ab="f16", cd="f32", arch=DEFAULT_ARCH):
    """``D = A B + C`` of one ``wgmma.mma_async.m64n{N}k16`` on matrices of bit patterns: the reference the
    interpreter's results are checked against.

    ``a``: 16-bit patterns ``[64, 16]``; ``b``: ``[16, N]`` (N in 8, 16, ..., 256); ``c``: ``[64, N]`` bits of ``cd``
    (None: ``scale-d`` false). Returns ``uint32[64, N]`` bits (f16 in the low 16). ``ValueError`` naming the argument.

    >>> import numpy as np
    >>> d = wgmma(np.full((64, 16), 0x3C00), np.full((16, 8), 0x4000))     # 16 * (1 * 2) = 32.0 in f32
    >>> bool((d == 0x42000000).all()), d.shape
    (True, (64, 8))
    """
    if (ab, cd) not in TYPE_COMBOS:
        raise ValueError(f"wgmma: (ab, cd) must be one of {TYPE_COMBOS}, got {(ab, cd)!r}")
    a = np.asarray(a)
    b = np.asarray(b)
    n = b.shape[1] if b.ndim == 2 else -1
    if a.shape != (64, 16) or b.shape[0] != 16 or n not in WGMMA_N:
        raise ValueError(f"wgmma: a must be [64, 16] and b [16, N] with N in 8..256 step 8, got {a.shape}, {b.shape}")
    if c is not None and np.shape(c) != (64, n):
        raise ValueError(f"wgmma: c must be [64, {n}], got {np.shape(c)}")
    model = get_arch(arch)
    ez = model.ez_f32 if cd == "f32" else model.ez_f16
    at = np.zeros(TABLE_SIZE, np.int32)
    bt = np.zeros(TABLE_SIZE, np.int32)
    ct = np.zeros(TABLE_SIZE, np.int32)
    dt = np.zeros(TABLE_SIZE, np.int32)
    d = np.zeros((64, n), np.uint32)
    mask = 0xFFFFFFFF if cd == "f32" else 0xFFFF
    for m0 in range(0, 64, 16):
        at[:] = (a[m0:m0 + 16, :].T.astype(np.int64) & 0xFFFF).astype(np.int32).ravel()
        for c0 in range(0, n, 16):
            nc = min(16, n - c0)
            bt[:] = 0
            ct[:] = 0
            bt[:nc * TILE] = (b[:, c0:c0 + nc].T.astype(np.int64) & 0xFFFF).astype(np.int32).ravel()
            if c is not None:
                cc = np.asarray(c)[m0:m0 + 16, c0:c0 + nc].T.astype(np.int64) & mask
                ct[:nc * TILE] = cc.astype(np.uint32).view(np.int32).ravel()
            mma_core(at, bt, ct, dt, np.int64(nc), np.int64(16), AB_TYPES[ab], CD_TYPES[cd], model.block,
                     model.frac_bits, ez)
            d[m0:m0 + 16, c0:c0 + nc] = (dt[:nc * TILE].reshape(nc, TILE).T.astype(np.int64) & mask).astype(np.uint32)
    return d
