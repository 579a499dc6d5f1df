"""``mma.sync.aligned.{m16n8k16,m16n8k8}.row.col``: fragments in, fragments out, bit-exact.

Two levels:

- ``mma_m16n8k16(a, b, c, *, ab, cd, arch)`` and ``mma_m16n8k8(...)``: batched, over PTX register
  fragments ``a: uint32[..., 32, 4]`` (k8: ``[..., 32, 2]``), ``b: uint32[..., 32, 2]`` (k8:
  ``[..., 32, 1]``), ``c: uint32[..., 32, 4]`` (f32) or ``[..., 32, 2]`` (f16 pairs); parallel over
  the batch.
- ``warp_mma(regs_w, a_regs, b_regs, c_regs, d_regs, shape, ab, cd, block, frac_bits, ez, fault)``:
  an ``@njit`` primitive over one warp's register file ``uint32[32, R]`` for other njit code.

The type combinations are PTX's: ``.f32.f16.f16.f32``, ``.f32.bf16.bf16.f32``, ``.f16.f16.f16.f16``.
Fragments go to matrices and back only through ``warpsim.isa.fragments``; the arithmetic is
``warpsim.isa.arith.mma_core``.

>>> import numpy as np
>>> a = np.zeros((32, 4), np.uint32); a[:, :] = 0x3C003C00            # A = all 1.0 (f16)
>>> b = np.zeros((32, 2), np.uint32); b[:, :] = 0x40004000            # B = all 2.0
>>> c = np.zeros((32, 4), np.uint32); c[:, :] = 0x3F800000            # C = all 1.0 (f32)
>>> d = mma_m16n8k16(a, b, c)                                          # 1 + 16 * 2 = 33
>>> bool((d == 0x42040000).all())
True
"""

import numpy as np
from numba import njit, prange, get_num_threads

from warpsim.isa.arith import (AB_BF16, AB_TYPES, CD_F16, CD_F32, CD_TYPES, DEFAULT_ARCH, TABLE_SIZE, TILE, get_arch,
                               mma_core)
from warpsim.isa.faults import FAULT_BAD_OPERAND, FAULT_BAD_REGISTER, FAULT_BAD_TYPES, set_fault
from warpsim.isa.fragments import MMA_FRAGMENTS, MMA_REGS, from_fragment, to_fragment
from warpsim.isa.scratch import stack_array

__all__ = [
    "SHAPES", "SHAPE_M16N8K16", "SHAPE_M16N8K8", "TYPE_COMBOS", "MMA_REG_COUNTS",
    "mma_m16n8k16", "mma_m16n8k8", "mma_dot", "mma_name", "mma_params", "warp_mma",
]

SHAPE_M16N8K16 = 0
SHAPE_M16N8K8 = 1
SHAPES = {"m16n8k16": SHAPE_M16N8K16, "m16n8k8": SHAPE_M16N8K8}
TYPE_COMBOS = (("f16", "f32"), ("bf16", "f32"), ("f16", "f16"))   # PTX (ab, cd) pairs


def _register_counts():
    """``int64[shape code, accumulator code, 3]``: registers per lane of A, B, C/D (``MMA_REGS`` for njit code)."""
    counts = np.zeros((len(SHAPES), len(CD_TYPES), 3), np.int64)
    for (shape, cd), regs in MMA_REGS.items():
        counts[SHAPES[shape], CD_TYPES[cd]] = regs
    counts.setflags(write=False)
    return counts


MMA_REG_COUNTS = _register_counts()   # (shape code, cd code) -> (A, B, C/D) registers per lane


def _table_index(shape, operand):
    """``(lane, reg, half) -> position in mma_core's operand table``: ``col * TILE + row`` of the
    operand's matrix, i.e. the transposed matrix with row stride TILE (see ``warpsim.isa.arith``)."""
    fmap = MMA_FRAGMENTS[(shape, operand)]
    # uint8 (every position < 256): an unsigned index needs no wrap-around of negative values
    index = np.ascontiguousarray(fmap.col * TILE + fmap.row, dtype=np.uint8)
    index.setflags(write=False)
    return index


# Fragment value (lane, reg, half) -> its place in mma_core's operand tables, from warpsim.isa.fragments.
_A16_AT = _table_index("m16n8k16", "A")      # (T32,R4,H2) -> at[k * 16 + m], (K16,M16)
_B16_BT = _table_index("m16n8k16", "B")      # (T32,R2,H2) -> bt[n * 16 + k], (N8,K16)
_A8_AT = _table_index("m16n8k8", "A")        # (T32,R2,H2) -> at[k * 16 + m], (K8,M16)
_B8_BT = _table_index("m16n8k8", "B")        # (T32,R1,H2) -> bt[n * 16 + k], (N8,K8)
_CF32_CT = _table_index("m16n8k16", "C.f32")  # (T32,R4,H1) -> ct[n * 16 + m], (N8,M16)
_CF16_CT = _table_index("m16n8k16", "C.f16")  # (T32,R2,H2) -> ct[n * 16 + m], (N8,M16)


def mma_name(shape, ab, cd):
    """The PTX instruction, e.g. ``mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32``.

    >>> mma_name("m16n8k8", "f16", "f16")
    'mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16'
    """
    return f"mma.sync.aligned.{shape}.row.col.{cd}.{ab}.{ab}.{cd}"


def mma_params(shape, ab, cd, arch=DEFAULT_ARCH, op="mma"):
    """Integer arguments of ``warp_mma``: ``(shape, ab, cd, block, frac_bits, ez)``.

    Raises ``ValueError`` naming ``op`` for an unknown shape, type or arch, or a type combination
    PTX does not have (``ab="bf16"`` with ``cd="f16"``).

    >>> mma_params("m16n8k16", "f16", "f32", "sm80") == (0, 0, 0, 8, 24, -132)
    True
    """
    if shape not in SHAPES:
        raise ValueError(f"{op}: shape must be one of {sorted(SHAPES)}, got {shape!r}")
    if ab not in AB_TYPES:
        raise ValueError(f"{op}: ab must be one of {sorted(AB_TYPES)}, got {ab!r}")
    if cd not in CD_TYPES:
        raise ValueError(f"{op}: cd must be one of {sorted(CD_TYPES)}, got {cd!r}")
    if (ab, cd) not in TYPE_COMBOS:
        supported = ", ".join(f".{d}.{a}.{a}.{d}" for a, d in TYPE_COMBOS)
        raise ValueError(f"{op}: ab={ab!r} with cd={cd!r} is not a PTX mma type combination "
                         f"(supported: {supported})")
    model = get_arch(arch)
    ez = model.ez_f32 if cd == "f32" else model.ez_f16
    return SHAPES[shape], AB_TYPES[ab], CD_TYPES[cd], model.block, model.frac_bits, ez


@njit(cache=True, inline="always")
def _gather16(src, regs, index, table):
    """``table[index[lane, r, h]]`` = 16-bit half ``h`` of ``src[lane, regs[r]]``."""
    for r in range(index.shape[1]):
        reg = regs[r]
        for lane in range(32):
            v = src[lane, reg]
            table[index[lane, r, 0]] = v & 0xFFFF
            table[index[lane, r, 1]] = v >> 16


@njit(cache=True, inline="always")
def _mma_fragments(a_src, a_regs, b_src, b_regs, c_src, c_regs, d_dst, d_regs,
                   shape, ab, cd, block, frac_bits, ez):
    """Gather A, B, C from fragments into operand tables, run ``mma_core``, scatter D."""
    at = stack_array(TABLE_SIZE, np.int32)
    bt = stack_array(TABLE_SIZE, np.int32)
    ct = stack_array(TABLE_SIZE, np.int32)
    dt = stack_array(TABLE_SIZE, np.int32)
    if shape == SHAPE_M16N8K16:
        k_count = 16
        _gather16(a_src, a_regs, _A16_AT, at)
        _gather16(b_src, b_regs, _B16_BT, bt)
    else:
        k_count = 8
        _gather16(a_src, a_regs, _A8_AT, at)
        _gather16(b_src, b_regs, _B8_BT, bt)
    if cd == CD_F32:
        for r in range(4):
            reg = c_regs[r]
            for lane in range(32):
                ct[_CF32_CT[lane, r, 0]] = np.int32(c_src[lane, reg])   # the bits, as int32
    else:
        _gather16(c_src, c_regs, _CF16_CT, ct)
    mma_core(at, bt, ct, dt, np.int64(8), k_count, ab, cd, block, frac_bits, ez)   # int64, not Literal[8]: one
    # specialisation of mma_core serves this and mma_tile (compiled once on a first run, not twice)
    if cd == CD_F32:
        for r in range(4):
            reg = d_regs[r]
            for lane in range(32):
                d_dst[lane, reg] = np.uint32(dt[_CF32_CT[lane, r, 0]])
    else:
        for r in range(2):
            reg = d_regs[r]
            for lane in range(32):
                lo = dt[_CF16_CT[lane, r, 0]] & 0xFFFF
                hi = dt[_CF16_CT[lane, r, 1]] & 0xFFFF
                d_dst[lane, reg] = np.uint32(lo | (hi << 16))


@njit(cache=True)
def warp_mma(regs_w, a_regs, b_regs, c_regs, d_regs, shape, ab, cd, block, frac_bits, ez, fault):
    """One warp's ``mma``: ``regs_w[:, d_regs] = mma(regs_w[:, a_regs], regs_w[:, b_regs], regs_w[:, c_regs])``.

    ``regs_w``: uint32[32, R]; ``*_regs``: int64 register indices, as many as the fragment maps give
    (``MMA_REG_COUNTS``: A 4 for k16, 2 for k8; B 2 / 1; C, D 4 for f32, 2 for f16); the integer parameters come from ``mma_params``. ``d_regs`` may
    overlap the sources. On a bad register index or count, type code or register file shape sets ``fault`` (see
    ``warpsim.isa.faults``) and changes nothing. Returns True when it executed.
    """
    if shape < 0 or shape > 1 or ab < 0 or ab > 1 or cd < 0 or cd > 1 or (ab == AB_BF16 and cd == CD_F16):
        set_fault(fault, FAULT_BAD_TYPES, 0, ab, cd)
        return False
    if regs_w.shape[0] != 32:
        set_fault(fault, FAULT_BAD_OPERAND, 0, regs_w.shape[0], 32)
        return False
    na, nb, nc = MMA_REG_COUNTS[shape, cd, 0], MMA_REG_COUNTS[shape, cd, 1], MMA_REG_COUNTS[shape, cd, 2]
    for regs, count in ((a_regs, na), (b_regs, nb), (c_regs, nc), (d_regs, nc)):
        if regs.shape[0] != count:
            set_fault(fault, FAULT_BAD_OPERAND, 0, regs.shape[0], count)
            return False
    nregs = regs_w.shape[1]
    for regs in (a_regs, b_regs, c_regs, d_regs):
        for r in regs:
            if r < 0 or r >= nregs:
                set_fault(fault, FAULT_BAD_REGISTER, 0, r, nregs)
                return False
    _mma_fragments(regs_w, a_regs, regs_w, b_regs, regs_w, c_regs, regs_w, d_regs,
                   shape, ab, cd, block, frac_bits, ez)
    return True


@njit(cache=True)
def _mma_range(a, b, c, d, start, stop, shape, ab, cd, block, frac_bits, ez):
    """Batch entries ``start..stop-1`` on one thread."""
    a_regs = np.arange(a.shape[2])
    b_regs = np.arange(b.shape[2])
    c_regs = np.arange(c.shape[2])
    for i in range(start, stop):
        _mma_fragments(a[i], a_regs, b[i], b_regs, c[i], c_regs, d[i], c_regs,
                       shape, ab, cd, block, frac_bits, ez)


@njit(cache=True, parallel=True)
def _mma_batch(a, b, c, d, chunks, shape, ab, cd, block, frac_bits, ez):
    count = a.shape[0]
    for ch in prange(chunks):
        _mma_range(a, b, c, d, ch * count // chunks, (ch + 1) * count // chunks,
                   shape, ab, cd, block, frac_bits, ez)


def _check_fragment(op, name, x, regs):
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{op}: {name} must be a numpy array of uint32, got {type(x).__name__}")
    if x.dtype != np.uint32:
        raise TypeError(f"{op}: {name} must have dtype uint32 (register bit patterns), got {x.dtype}")
    if x.ndim < 2 or x.shape[-2:] != (32, regs):
        raise ValueError(f"{op}: {name} must have shape (..., 32, {regs}), got {x.shape}")
    return np.ascontiguousarray(x.reshape(-1, 32, regs))


def _mma_batched(op, shape, a, b, c, ab, cd, arch, parallel):
    params = mma_params(shape, ab, cd, arch, op=op)
    a_regs, b_regs, c_regs = MMA_REGS[(shape, cd)]
    fa = _check_fragment(op, "a", a, a_regs)
    fb = _check_fragment(op, "b", b, b_regs)
    fc = _check_fragment(op, "c", c, c_regs)
    lead = a.shape[:-2]
    for name, x in (("b", b), ("c", c)):
        if x.shape[:-2] != lead:
            raise ValueError(f"{op}: leading shapes differ (no broadcasting): a {a.shape}, {name} {x.shape}")
    d = np.empty_like(fc)   # every register of d is written
    if fa.shape[0]:
        if parallel:
            _mma_batch(fa, fb, fc, d, min(fa.shape[0], 4 * get_num_threads()), *params)
        else:
            _mma_range(fa, fb, fc, d, 0, fa.shape[0], *params)
    return d.reshape(lead + (32, c_regs))


def mma_m16n8k16(a, b, c, *, ab="f16", cd="f32", arch=DEFAULT_ARCH, parallel=True):
    """Batched ``mma.sync.aligned.m16n8k16.row.col.{cd}.{ab}.{ab}.{cd}`` on register fragments.

    ``a: uint32[..., 32, 4]``, ``b: uint32[..., 32, 2]``, ``c: uint32[..., 32, 4]`` (``cd="f32"``) or
    ``[..., 32, 2]`` (``cd="f16"``, pairs) with equal leading shapes; ``arch``: ``"sm80"`` or ``"sm90"``.
    Returns ``d`` shaped like ``c``. ``parallel=False`` runs on one thread. Bad arguments raise
    ``TypeError``/``ValueError`` naming the argument.
    """
    return _mma_batched("mma_m16n8k16", "m16n8k16", a, b, c, ab, cd, arch, parallel)


def mma_m16n8k8(a, b, c, *, ab="f16", cd="f32", arch=DEFAULT_ARCH, parallel=True):
    """Batched ``mma.sync.aligned.m16n8k8.row.col.{cd}.{ab}.{ab}.{cd}`` on register fragments.

    As ``mma_m16n8k16`` with ``a: uint32[..., 32, 2]`` and ``b: uint32[..., 32, 1]``.

    >>> import numpy as np
    >>> a = np.full((32, 2), 0x3C003C00, np.uint32); b = np.full((32, 1), 0x3C003C00, np.uint32)
    >>> bool((mma_m16n8k8(a, b, np.zeros((32, 2), np.uint32), cd="f16") == 0x48004800).all())  # 8.0
    True
    """
    return _mma_batched("mma_m16n8k8", "m16n8k8", a, b, c, ab, cd, arch, parallel)


def mma_dot(a, b, c, *, shape="m16n8k16", ab="f16", cd="f32", arch=DEFAULT_ARCH):
    """Dot products ``d = c + sum_k a[k] * b[k]`` as one ``mma`` output element each.

    ``a, b``: 16-bit patterns ``[..., K]`` (K <= 16 for m16n8k16, <= 8 for m16n8k8); ``c``: bit
    patterns ``[...]`` of type ``cd``. Each dot product becomes one instruction: ``a`` is row 0 of A
    and ``b`` column 0 of B at ``k = 0..K-1`` (zeros elsewhere), ``c`` is ``C[0, 0]``; placed and read
    back through the PTX fragment maps. Returns ``d`` bits ``uint32[...]``.

    >>> import numpy as np
    >>> int(mma_dot(np.array([0x3C00, 0x4000]), np.array([0x4000, 0x4000]), np.array(0x3F800000)))
    1088421888
    """
    if shape not in SHAPES:
        raise ValueError(f"mma_dot: shape must be one of {sorted(SHAPES)}, got {shape!r}")
    a = np.asarray(a)
    b = np.asarray(b)
    c = np.asarray(c)
    k_max = 16 if shape == "m16n8k16" else 8
    if a.shape != b.shape or a.ndim < 1 or a.shape[-1] > k_max or a.shape[:-1] != c.shape:
        raise ValueError(f"mma_dot: a and b must be [..., K<= {k_max}] and c [...], got "
                         f"{a.shape}, {b.shape}, {c.shape}")
    lead = c.shape
    k = a.shape[-1]
    count = int(np.prod(lead, dtype=np.int64))
    amat = np.zeros((count, 16, k_max), np.uint32)
    bmat = np.zeros((count, k_max, 8), np.uint32)
    cmat = np.zeros((count, 16, 8), np.uint32)
    amat[:, 0, :k] = a.reshape(count, k) & 0xFFFF
    bmat[:, :k, 0] = b.reshape(count, k) & 0xFFFF
    cmat[:, 0, 0] = c.reshape(count)
    cmap = MMA_FRAGMENTS[(shape, f"C.{cd}")]
    run = mma_m16n8k16 if shape == "m16n8k16" else mma_m16n8k8
    d = run(to_fragment(MMA_FRAGMENTS[(shape, "A")], amat), to_fragment(MMA_FRAGMENTS[(shape, "B")], bmat),
            to_fragment(cmap, cmat), ab=ab, cd=cd, arch=arch)
    return from_fragment(cmap, d)[:, 0, 0].reshape(lead)
