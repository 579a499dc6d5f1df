"""PTX's register fragment maps, each written once as data and evaluated into integer tables.

Sources: PTX ISA, sections "Matrix fragments for mma.m16n8k16 with floating point type",
"Matrix fragments for mma.m16n8k8" and "Warp-level matrix load instruction: ldmatrix".
In every map a lane ``l`` has ``g = l // 4`` (groupID) and ``t = l % 4`` (threadID_in_group).

A fragment holds values ``x0, x1, ...`` per lane, in the order PTX numbers them; value ``i`` lives in
register ``i // per_reg`` and, for 16-bit data (two per register), in half ``i % per_reg`` (half 0 =
bits 0..15). PTX states each value's position as the lane's base position plus an offset that depends
only on ``i``, which is what the tables below declare:

- base ``"g,2t"``: value ``i`` of lane ``l`` is at ``(g + drow_i, 2t + dcol_i)``;
- base ``"2t,g"``: value ``i`` of lane ``l`` is at ``(2t + drow_i, g + dcol_i)``;
- bases ``"g,4t"`` and ``"g,t"`` likewise (the 8-bit and tf32 A operands of ``wgmma``).

Every map evaluates to ``row[lane, reg, half]`` and ``col[lane, reg, half]`` and to its inverse,
``src[row, col] = (lane * regs + reg) * halves + half``, which kernels use to gather and scatter.

>>> MMA_M16N8K16_A.at(5, 3, 1) == (9, 11)   # lane 5: g=1, t=1; a7 at (g+8, 2t+8+1)
True
>>> MMA_M16N8K16_B.at(6, 1, 0) == (12, 1)   # lane 6: g=1, t=2; b2 at (k=2t+8, n=g)
True
>>> MMA_M16N8K16_C_F32.at(7, 2, 0) == (9, 6)   # c2 at (g+8, 2t)
True
>>> ldmatrix_map(4, True).at(9, 2, 1) == (2, 3, 2)   # .trans: matrix 2, row 2t+1, col g
True
"""

from dataclasses import dataclass, field

import numpy as np

from warpsim.warp import WARP_SIZE

__all__ = [
    "FragmentMap", "LdmatrixMap",
    "MMA_M16N8K16_A", "MMA_M16N8K16_B", "MMA_M16N8K16_C_F32", "MMA_M16N8K16_C_F16",
    "MMA_M16N8K8_A", "MMA_M16N8K8_B", "MMA_M16N8K8_C_F32", "MMA_M16N8K8_C_F16",
    "MMA_FRAGMENTS", "MMA_REGS", "WGMMA_A", "WGMMA_A_TF32", "WGMMA_A_8BIT", "WGMMA_N", "wgmma_d_map",
    "LDMATRIX_MAPS", "ldmatrix_map",
    "to_fragment", "from_fragment",
]



def _lane_base(base):
    lanes = np.arange(WARP_SIZE)
    g, t = lanes // 4, lanes % 4
    if base == "g,2t":
        return g, 2 * t
    if base == "2t,g":
        return 2 * t, g
    if base == "g,4t":
        return g, 4 * t
    if base == "g,t":
        return g, t
    raise ValueError(f"fragment base: unknown base {base!r} (expected 'g,2t' or '2t,g')")


@dataclass(frozen=True)
class FragmentMap:
    """One operand's fragment: ``(lane, reg, half) -> (row, col)`` of a ``shape`` matrix.

    ``offsets[i] = (drow, dcol)`` of value ``i`` from the lane's ``base``; ``per_reg`` values share a
    32-bit register (2 for 16-bit data, 1 for f32). Post-conditions: the map is a bijection onto
    the ``shape`` matrix; ``src[row[l, r, h], col[l, r, h]] == (l * regs + r) * halves + h``.

    >>> MMA_M16N8K16_A.regs, MMA_M16N8K16_A.halves, MMA_M16N8K16_A.shape
    (4, 2, (16, 16))
    >>> int(MMA_M16N8K16_A.src[9, 11]) == (5 * 4 + 3) * 2 + 1
    True
    """

    name: str
    shape: tuple          # (rows, cols): A (M, K), B (K, N), C/D (M, N)
    base: str             # "g,2t" or "2t,g"
    offsets: tuple        # per value i: (drow, dcol)
    per_reg: int          # values per 32-bit register
    row: np.ndarray = field(init=False, repr=False, compare=False)
    col: np.ndarray = field(init=False, repr=False, compare=False)
    src: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        nvals = len(self.offsets)
        if nvals % self.per_reg:
            raise ValueError(f"FragmentMap {self.name}: {nvals} values do not fill registers of {self.per_reg}")
        r0, c0 = _lane_base(self.base)
        drow = np.array([o[0] for o in self.offsets])
        dcol = np.array([o[1] for o in self.offsets])
        shape3 = (WARP_SIZE, nvals // self.per_reg, self.per_reg)
        row = (r0[:, None] + drow[None, :]).reshape(shape3)
        col = (c0[:, None] + dcol[None, :]).reshape(shape3)
        src = np.full(self.shape, -1, dtype=np.int64)
        src[row.ravel(), col.ravel()] = np.arange(row.size)
        if row.size != src.size or (src < 0).any():
            raise ValueError(f"FragmentMap {self.name}: not a bijection onto {self.shape}")
        for name, value in (("row", row), ("col", col), ("src", src)):
            value = np.ascontiguousarray(value, dtype=np.int64)
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    @property
    def regs(self):
        """Registers per lane."""
        return self.row.shape[1]

    @property
    def halves(self):
        """Values per register: 2 (16-bit pairs) or 1 (f32)."""
        return self.row.shape[2]

    def at(self, lane, reg, half=0):
        """``(row, col)`` of ``(lane, reg, half)``."""
        return int(self.row[lane, reg, half]), int(self.col[lane, reg, half])


# mma.m16n8k16, PTX "Matrix fragments for mma.m16n8k16 with floating point type".
# A: a0..a7, row = g (+8 for a2,a3,a6,a7), col = 2t + (i & 1) (+8 for i >= 4).
MMA_M16N8K16_A = FragmentMap(  # (T32,V8) -> (M16,K16)
    "mma.m16n8k16.A", (16, 16), "g,2t",
    ((0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)), per_reg=2)
# B (K x N): b0..b3, row (k) = 2t + (i & 1) (+8 for i >= 2), col (n) = g.
MMA_M16N8K16_B = FragmentMap(  # (T32,V4) -> (K16,N8)
    "mma.m16n8k16.B", (16, 8), "2t,g",
    ((0, 0), (1, 0), (8, 0), (9, 0)), per_reg=2)
# C/D: c0..c3, row = g (+8 for i >= 2), col = 2t + (i & 1); f32 one per register, f16 two.
_C_OFFSETS = ((0, 0), (0, 1), (8, 0), (8, 1))
MMA_M16N8K16_C_F32 = FragmentMap(  # (T32,V4) -> (M16,N8)
    "mma.m16n8k16.C.f32", (16, 8), "g,2t", _C_OFFSETS, per_reg=1)
MMA_M16N8K16_C_F16 = FragmentMap(  # (T32,V4) -> (M16,N8)
    "mma.m16n8k16.C.f16", (16, 8), "g,2t", _C_OFFSETS, per_reg=2)

# mma.m16n8k8, PTX "Matrix fragments for mma.m16n8k8" (.f16/.bf16): the first half of k16's A and B;
# C/D exactly as for m16n8k16.
MMA_M16N8K8_A = FragmentMap(  # (T32,V4) -> (M16,K8)
    "mma.m16n8k8.A", (16, 8), "g,2t", MMA_M16N8K16_A.offsets[:4], per_reg=2)
MMA_M16N8K8_B = FragmentMap(  # (T32,V2) -> (K8,N8)
    "mma.m16n8k8.B", (8, 8), "2t,g", MMA_M16N8K16_B.offsets[:2], per_reg=2)
MMA_M16N8K8_C_F32 = MMA_M16N8K16_C_F32
MMA_M16N8K8_C_F16 = MMA_M16N8K16_C_F16

MMA_FRAGMENTS = {  # (shape, operand) -> map; operand "C.f32"/"C.f16" serves C and D
    ("m16n8k16", "A"): MMA_M16N8K16_A, ("m16n8k16", "B"): MMA_M16N8K16_B,
    ("m16n8k16", "C.f32"): MMA_M16N8K16_C_F32, ("m16n8k16", "C.f16"): MMA_M16N8K16_C_F16,
    ("m16n8k8", "A"): MMA_M16N8K8_A, ("m16n8k8", "B"): MMA_M16N8K8_B,
    ("m16n8k8", "C.f32"): MMA_M16N8K8_C_F32, ("m16n8k8", "C.f16"): MMA_M16N8K8_C_F16,
}

# (shape, accumulator type) -> registers per lane of the A, B and C/D operands, read off the maps above:
# {("m16n8k16", "f32"): (4, 2, 4), ("m16n8k16", "f16"): (4, 2, 2), ("m16n8k8", "f32"): (2, 1, 4), ...}
MMA_REGS = {
    (shape, operand[len("C."):]): (MMA_FRAGMENTS[(shape, "A")].regs, MMA_FRAGMENTS[(shape, "B")].regs, fmap.regs)
    for (shape, operand), fmap in MMA_FRAGMENTS.items() if operand.startswith("C.")
}


# wgmma.mma_async.m64nNk16 (sm_90a), PTX "Register fragments and shared memory matrix layouts" of wgmma. The
# warpgroup's four warps each hold 16 rows of the 64: warp w % 4 rows 16 * (w % 4) + (0..15). Within its rows a warp
# holds A (from registers) exactly as mma.m16n8k16's A, and D as mma's C repeated along N: value i (i < N/2) in
# n8 block i // 4, at (g + 8 * ((i % 4) // 2), 8 * (i // 4) + 2t + i % 2); f32 one value per register, f16 two.
WGMMA_N = tuple(range(8, 257, 8))                 # the N of m64nNk*: 8, 16, ..., 256
WGMMA_A = MMA_M16N8K16_A                          # (T32,V8) -> (M16,K16) of the warp's rows
# A from registers for the other input types, as CuTe's GMMA::ALayout_64x8 / ALayout_64x32 state them (and PTX's
# mma.m16n8k8 .tf32 / mma.m16n8k32 8-bit A): tf32 k8, a0..a3 at (g, t), (g+8, t), (g, t+4), (g+8, t+4), one a register;
# 8-bit k32, a0..a15 at (g + 8 * ((i // 4) % 2), 4t + i % 4 + 16 * (i // 8)), four a register (a0 in bits 0..7).
WGMMA_A_TF32 = FragmentMap(  # (T32,V4) -> (M16,K8)
    "wgmma.k8.A.tf32", (16, 8), "g,t", ((0, 0), (8, 0), (0, 4), (8, 4)), per_reg=1)
WGMMA_A_8BIT = FragmentMap(  # (T32,V16) -> (M16,K32)
    "wgmma.k32.A.8bit", (16, 32), "g,4t",
    tuple((8 * ((i // 4) % 2), i % 4 + 16 * (i // 8)) for i in range(16)), per_reg=4)


def wgmma_d_map(n, cd):
    """The accumulator map of one warp of ``wgmma.mma_async.m64n{n}k*`` with ``.{cd}`` accumulators: its 16 rows x n.

    >>> wgmma_d_map(256, "f32").regs, wgmma_d_map(64, "f16").regs
    (128, 16)
    >>> wgmma_d_map(64, "f32").at(5, 6, 0)           # lane 5: g=1, t=1; d6 = block 1, (g+8, 8 + 2t)
    (9, 10)
    """
    if n not in WGMMA_N or cd not in ("f32", "f16"):
        raise ValueError(f"wgmma_d_map: n must be one of 8, 16, ..., 256 and cd f32 or f16, got {n!r}, {cd!r}")
    return _wgmma_d_maps(n, cd)


def _wgmma_d_offsets(n):
    return tuple((8 * ((i % 4) // 2), 8 * (i // 4) + i % 2) for i in range(n // 2))


_WGMMA_D = {}


def _wgmma_d_maps(n, cd):
    if (n, cd) not in _WGMMA_D:
        _WGMMA_D[n, cd] = FragmentMap(f"wgmma.m64n{n}.D.{cd}", (16, n), "g,2t", _wgmma_d_offsets(n),
                                      per_reg=1 if cd == "f32" else 2)
    return _WGMMA_D[n, cd]


@dataclass(frozen=True)
class LdmatrixMap:
    """``ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16`` as data.

    Matrix ``j`` (8x8 of b16, each row 16 contiguous bytes) takes its row ``r`` address from lane
    ``addr_lane[j, r] == 8*j + r``. Lane ``l`` receives in register ``j`` the pair
    ``matrix[l, j, h], row[l, j, h], col[l, j, h]``: ``(j, g, 2t + h)``, or with ``.trans``
    ``(j, 2t + h, g)``.

    >>> m = ldmatrix_map(2, False)
    >>> m.addr_lanes == tuple(range(16)) and m.at(5, 1, 1) == (1, 1, 3)
    True
    """

    num: int
    trans: bool
    addr_lane: np.ndarray = field(init=False, repr=False, compare=False)
    matrix: np.ndarray = field(init=False, repr=False, compare=False)
    row: np.ndarray = field(init=False, repr=False, compare=False)
    col: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.num not in (1, 2, 4):
            raise ValueError(f"ldmatrix: num must be 1, 2 or 4, got {self.num!r}")
        lanes = np.arange(WARP_SIZE)
        g, t = lanes // 4, lanes % 4
        half = np.arange(2)
        shape3 = (WARP_SIZE, self.num, 2)
        matrix = np.broadcast_to(np.arange(self.num)[None, :, None], shape3)
        pair = 2 * t[:, None, None] + half[None, None, :]   # (rows or cols) 2t, 2t+1
        single = np.broadcast_to(g[:, None, None], shape3)
        row, col = (pair, single) if self.trans else (single, pair)
        tables = {
            "addr_lane": np.arange(8 * self.num).reshape(self.num, 8),  # (matrix, row) -> lane
            "matrix": matrix,
            "row": np.broadcast_to(row, shape3),
            "col": np.broadcast_to(col, shape3),
        }
        for name, value in tables.items():
            value = np.ascontiguousarray(value, dtype=np.int64)
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    @property
    def addr_lanes(self):
        """The lanes whose addresses the instruction reads, in order."""
        return tuple(int(x) for x in self.addr_lane.ravel())

    @property
    def name(self):
        """The PTX instruction, e.g. ``ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16``."""
        return f"ldmatrix.sync.aligned.m8n8.x{self.num}{'.trans' if self.trans else ''}.shared.b16"

    def at(self, lane, reg, half):
        """``(matrix, row, col)`` of ``(lane, reg, half)``."""
        return (int(self.matrix[lane, reg, half]), int(self.row[lane, reg, half]),
                int(self.col[lane, reg, half]))


LDMATRIX_MAPS = {(num, trans): LdmatrixMap(num, trans) for num in (1, 2, 4) for trans in (False, True)}


def ldmatrix_map(num, trans):
    """The ``LdmatrixMap`` of ``.x{num}`` with or without ``.trans``.

    >>> ldmatrix_map(1, False).name == "ldmatrix.sync.aligned.m8n8.x1.shared.b16"
    True
    """
    try:
        return LDMATRIX_MAPS[(num, bool(trans))]
    except (KeyError, TypeError):
        raise ValueError(f"ldmatrix: num must be 1, 2 or 4, got {num!r}") from None


def to_fragment(fmap, matrix):
    """Pack a matrix of bit patterns into register fragments through ``fmap``.

    ``matrix``: integers ``[..., rows, cols]`` (16-bit patterns when ``fmap.halves == 2``, 32-bit
    otherwise). Returns ``uint32[..., 32, fmap.regs]``; ``from_fragment`` is its inverse.

    >>> m = np.arange(256).reshape(16, 16)
    >>> f = to_fragment(MMA_M16N8K16_A, m)
    >>> hex(int(f[5, 3]))          # lane 5, a6/a7 = (9, 10) and (9, 11): values 154 and 155
    '0x9b009a'
    >>> bool((from_fragment(MMA_M16N8K16_A, f) == m).all())
    True
    """
    matrix = np.asarray(matrix)
    if matrix.ndim < 2 or matrix.shape[-2:] != fmap.shape:
        raise ValueError(f"to_fragment {fmap.name}: matrix must have shape (..., {fmap.shape[0]}, "
                         f"{fmap.shape[1]}), got {matrix.shape}")
    vals = matrix[..., fmap.row, fmap.col].astype(np.uint32)   # [..., 32, regs, halves]
    if fmap.halves == 1:
        return vals[..., 0]
    return (vals[..., 0] & 0xFFFF) | ((vals[..., 1] & 0xFFFF) << 16)


def from_fragment(fmap, frag):
    """The matrix ``[..., rows, cols]`` (uint32 values) held by fragments ``uint32[..., 32, regs]``."""
    frag = np.asarray(frag)
    if frag.ndim < 2 or frag.shape[-2:] != (WARP_SIZE, fmap.regs):
        raise ValueError(f"from_fragment {fmap.name}: frag must have shape (..., 32, {fmap.regs}), "
                         f"got {frag.shape}")
    flat = frag.reshape(frag.shape[:-2] + (WARP_SIZE * fmap.regs,)).astype(np.uint32)
    src = fmap.src // fmap.halves                  # register holding each element
    vals = flat[..., src]
    if fmap.halves == 2:
        vals = (vals >> (16 * (fmap.src % 2)).astype(np.uint32)) & 0xFFFF
    return vals
