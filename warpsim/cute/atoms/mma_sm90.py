"""SM90 warpgroup MMA atoms, GMMA (``include/cute/atom/mma_traits_sm90_gmma.hpp``), as data.

CuTe's ``SM90_64xNx16_{D}{A}{B}_{SS,RS}<tnspA, tnspB>``: a warpgroup of 128 threads computes a 64 x N tile. ``SS``
reads A and B from shared memory through matrix descriptors, so their layouts map every thread to the whole tile
(``GMMA::ABLayout<M, K>``: thread stride 0); ``RS`` holds A in registers (``GMMA::ALayout_64x16``). C is
``GMMA::CLayout_64xN``: warp ``w`` of the warpgroup holds rows ``16 w ..`` as ``mma.m16n8k16`` holds C, repeated along N.
The majorness of A and B (``"K"`` or ``"MN"``, CuTe's ``GMMA::Major``) changes the descriptor, not the layouts.

>>> op = SM90_64x64x16_F32F16F16_SS()
>>> str(op.CLayout), op.Shape_MNK, op.ptx
('((_4,_8,_4),(_2,_2,_8)):((_128,_1,_16),(_64,_8,_512))', (64, 64, 16), 'wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16')
>>> str(SM90_64x64x16_F32F16F16_RS().ALayout), str(op.ALayout)
('((_4,_8,_4),(_2,_2,_2)):((_128,_1,_16),(_64,_8,_512))', '(_128,(_64,_16)):(_0,(_1,_64))')
"""

from dataclasses import dataclass, field

from warpsim.cute.algebra import composition
from warpsim.cute.atoms.base import MMAOperation
from warpsim.cute.layout import Layout
from warpsim.cute.numeric import dtype_bits
from warpsim.cute.swizzle import Swizzle

__all__ = ["GMMA_N", "gmma_smem_atom", "GMMA_SMEM_SWIZZLES", "ab_layout", "c_layout_64xn", "ALAYOUT_64X16", "ALAYOUT_64X8", "ALAYOUT_64X32", "SM90_GMMA",
           "INSTANCES", "gmma_op"]

GMMA_N = (8, 16, 32, 64, 96, 128, 192, 256)         # the N of the instances registered (CuTe has every 8)
MAJORS = ("K", "MN")


def ab_layout(m, k):
    """``GMMA::ABLayout<M, K>``: every thread of the warpgroup sees the whole M x K operand in shared memory."""
    return Layout((128, (m, k)), (0, (1, m)))


def c_layout_64xn(n):
    """``GMMA::CLayout_64xN<N>``: (T128, V) -> the column-major index of the 64 x N accumulator tile."""
    return Layout(((4, 8, 4), (2, 2, n // 8)), ((128, 1, 16), (64, 8, 512)))


ALAYOUT_64X16 = Layout(((4, 8, 4), (2, 2, 2)), ((128, 1, 16), (64, 8, 512)))   # GMMA::ALayout_64x16 (16-bit A)
ALAYOUT_64X8 = Layout(((4, 8, 4), (2, 2)), ((64, 1, 16), (8, 256)))             # GMMA::ALayout_64x8 (tf32 A)
ALAYOUT_64X32 = Layout(((4, 8, 4), (4, 2, 2)), ((256, 1, 16), (64, 8, 1024)))   # GMMA::ALayout_64x32 (8-bit A)
_A_REGS = {8: ALAYOUT_64X8, 16: ALAYOUT_64X16, 32: ALAYOUT_64X32}
# CuTe's type names -> (D, A, B, K); the k16 ones take majors, the others are K-major ("_TN" in their names)
_TYPES = {"F32F16F16": ("f32", "f16", "f16", 16), "F32BF16BF16": ("f32", "bf16", "bf16", 16),
          "F16F16F16": ("f16", "f16", "f16", 16), "F32TF32TF32": ("f32", "tf32", "tf32", 8)}
_TYPES.update({f"{d.upper()}{a.upper()}{b.upper()}": (d, a, b, 32) for d in ("f32", "f16")
               for a in ("e4m3", "e5m2") for b in ("e4m3", "e5m2")})
_TYPES.update({f"S32{a.upper()}{b.upper()}": ("s32", a, b, 32) for a in ("s8", "u8") for b in ("s8", "u8")})


@dataclass(frozen=True)
class SM90_GMMA(MMAOperation):
    """One GMMA atom: ``N``, the value types, ``rs`` (A from registers) and the majors of A and B."""

    N: int = 64
    types: str = "F32F16F16"
    rs: bool = False
    tnspA: str = "K"
    tnspB: str = "K"
    ValTypeD: str = field(init=False)
    ValTypeA: str = field(init=False)
    ValTypeB: str = field(init=False)
    ValTypeC: str = field(init=False)
    Shape_MNK: tuple = field(init=False)
    ThrID: Layout = field(init=False)
    ALayout: Layout = field(init=False)
    BLayout: Layout = field(init=False)
    CLayout: Layout = field(init=False)
    abstract = True

    def __post_init__(self):
        k16 = _TYPES.get(self.types, (0, 0, 0, 16))[3] == 16
        if self.N % 8 or not 8 <= self.N <= 256 or self.types not in _TYPES or self.tnspA not in MAJORS \
                or self.tnspB not in MAJORS or (self.rs and self.tnspA != "K") \
                or (not k16 and (self.tnspA, self.tnspB) != ("K", "K")):
            raise ValueError(f"SM90 GMMA: N a multiple of 8 up to 256, types one of {sorted(_TYPES)}, majors K or MN "
                             f"(A from registers, and types other than 16-bit: K), got N={self.N}, {self.types}, "
                             f"{self.tnspA}, {self.tnspB}")
        d, a, b, k = _TYPES[self.types]
        values = {"ValTypeD": d, "ValTypeA": a, "ValTypeB": b, "ValTypeC": d, "Shape_MNK": (64, self.N, k),
                  "ThrID": Layout(128), "ALayout": _A_REGS[k] if self.rs else ab_layout(64, k),
                  "BLayout": ab_layout(self.N, k), "CLayout": c_layout_64xn(self.N)}
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @property
    def name(self):
        """CuTe's name: ``SM90_64x64x16_F32F16F16_SS`` (its template arguments are the majors), or for the K-major-only
        types ``SM90_64x64x32_F32E4M3E4M3_SS_TN``."""
        k = self.Shape_MNK[2]
        return f"SM90_64x{self.N}x{k}_{self.types}_{'RS' if self.rs else 'SS'}{'' if k == 16 else '_TN'}"

    @property
    def ptx(self):
        """The PTX instruction: ``wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16``."""
        return (f"wgmma.mma_async.sync.aligned.m64n{self.N}k{self.Shape_MNK[2]}.{self.ValTypeD}.{self.ValTypeA}."
                f"{self.ValTypeB}")


def gmma_op(name, tnspA="K", tnspB="K"):
    """The atom CuTe names ``name`` (``SM90_64x128x16_F32BF16BF16_SS``, ``SM90_64x64x32_F32E4M3E4M3_RS_TN``) with the
    given majors (K only for the ``_TN`` ones)."""
    try:
        head, n, rest = name.split("x", 2)
        k, types, kind, *tn = rest.split("_")
        assert head == "SM90_64" and kind in ("SS", "RS") and tn == ([] if k == "16" else ["TN"])
        assert types in _TYPES and _TYPES[types][3] == int(k) and n.isdigit()
    except (ValueError, AssertionError):
        raise ValueError(f"gmma_op: {name!r} is not an SM90_64xNxK_<types>_<SS|RS>[_TN] name") from None
    return SM90_GMMA(int(n), types, kind == "RS", tnspA, tnspB)        # N or the majors wrong: its own error


# CuTe's GMMA::Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom_Bits: the swizzle's bits and the atom's extent in bits
# along the contiguous mode, 8 rows (K-major) or columns (MN-major) of it
GMMA_SMEM_SWIZZLES = {"INTER": (0, 128), "SW32": (1, 256), "SW64": (2, 512), "SW128": (3, 1024)}


def gmma_smem_atom(major, swizzle, dtype):
    """CuTe's ``GMMA::Layout_{major}_{swizzle}_Atom<T>`` (``mma_traits_sm90_gmma.hpp``): the shared-memory layout
    atom a wgmma descriptor reads, ``Sw<B,4,3> o (8, W/bits):(W/bits, 1)`` for K-major, ``(W/bits, 8):(1, W/bits)`` for
    MN-major (``W`` the swizzle's width in bits), to tile with ``tile_to_shape``.

    >>> str(gmma_smem_atom("K", "SW128", "f16")), str(gmma_smem_atom("MN", "SW64", "f32"))
    ('Sw<3,4,3> o _0 o (_8,_64):(_64,_1)', 'Sw<2,4,3> o _0 o (_16,_8):(_1,_16)')
    """
    if major not in MAJORS or swizzle not in GMMA_SMEM_SWIZZLES:
        raise ValueError(f"gmma_smem_atom: major K or MN and swizzle one of {', '.join(GMMA_SMEM_SWIZZLES)}, got "
                         f"{major!r}, {swizzle!r}")
    b, width = GMMA_SMEM_SWIZZLES[swizzle]
    w = width // dtype_bits(dtype)
    layout = Layout((8, w), (w, 1)) if major == "K" else Layout((w, 8), (1, w))
    return composition(Swizzle(b, 4, 3), layout)


def _factory(n, types, rs):
    cls_name = SM90_GMMA(n, types, rs).name
    k = _TYPES[types][3]

    def make(tnspA="K", tnspB="K"):
        return SM90_GMMA(n, types, rs, tnspA, tnspB)
    make.__name__ = make.__qualname__ = cls_name
    make.__doc__ = (f"CuTe's ``{cls_name}<tnspA, tnspB>``: ``wgmma.mma_async...m64n{n}k{k}`` with "
                    f"{'A in registers' if rs else 'A and B'} "
                    f"{'and B in shared memory' if rs else 'in shared memory'}; majors ``\"K\"`` or ``\"MN\"``.")
    return make


# the registered atoms (K-major A and B), and a constructor per CuTe name taking the majors
INSTANCES = tuple(SM90_GMMA(n, t, rs) for t in _TYPES for rs in (False, True) for n in GMMA_N)
for _op in INSTANCES:
    globals()[_op.name] = _factory(_op.N, _op.types, _op.rs)
    __all__.append(_op.name)
