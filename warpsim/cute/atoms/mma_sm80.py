"""SM80 tensor-core MMA atoms (``include/cute/atom/mma_traits_sm80.hpp``), as data.

The F16-accumulator atoms state the layouts; the F32-accumulator and BF16 atoms inherit them and
change only value types, as CuTe's traits do. Layouts map (thread, value) to the column-major
index of the atom's tile: A (M x K), B (N x K), C (M x N).

>>> op = SM80_16x8x16_F32BF16BF16F32_TN()
>>> str(op.ALayout), op.Shape_MNK, op.ValTypeA, op.ptx
('((_4,_8),(_2,_2,_2)):((_32,_1),(_16,_8,_128))', (16, 8, 16), 'bf16', 'mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32')
"""

from dataclasses import dataclass

from warpsim.cute.layout import Layout
from warpsim.cute.atoms.base import MMAOperation

__all__ = [
    "SM80_8x8_Row", "SM80_16x8_Row",
    "SM80_16x8x8_F16F16F16F16_TN", "SM80_16x8x8_F32F16F16F32_TN", "SM80_16x8x8_F32BF16BF16F32_TN",
    "SM80_16x8x16_F16F16F16F16_TN", "SM80_16x8x16_F32F16F16F32_TN", "SM80_16x8x16_F32BF16BF16F32_TN",
]

# (T32,V2) -> (M8,N8)
SM80_8x8_Row = Layout(((4, 8), 2), ((16, 1), 8))
# (T32,V4) -> (M16,N8)
SM80_16x8_Row = Layout(((4, 8), (2, 2)), ((32, 1), (16, 8)))


@dataclass(frozen=True)
class SM80_16x8x8_F16F16F16F16_TN(MMAOperation):
    """``mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16``."""
    ValTypeD: str = "f16"
    ValTypeA: str = "f16"
    ValTypeB: str = "f16"
    ValTypeC: str = "f16"
    Shape_MNK: tuple = (16, 8, 8)
    ThrID: Layout = Layout(32)                # _32:_1
    ALayout: Layout = SM80_16x8_Row           # (T32,V4) -> (M16,K8)
    BLayout: Layout = SM80_8x8_Row            # (T32,V2) -> (N8,K8)
    CLayout: Layout = SM80_16x8_Row           # (T32,V4) -> (M16,N8)


@dataclass(frozen=True)
class SM80_16x8x16_F16F16F16F16_TN(MMAOperation):
    """``mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16``."""
    ValTypeD: str = "f16"
    ValTypeA: str = "f16"
    ValTypeB: str = "f16"
    ValTypeC: str = "f16"
    Shape_MNK: tuple = (16, 8, 16)
    ThrID: Layout = Layout(32)                # _32:_1
    # (T32,V8) -> (M16,K16)
    ALayout: Layout = Layout(((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128)))
    # (T32,V4) -> (N8,K16)
    BLayout: Layout = Layout(((4, 8), (2, 2)), ((16, 1), (8, 64)))
    CLayout: Layout = SM80_16x8_Row           # (T32,V4) -> (M16,N8)


@dataclass(frozen=True)
class SM80_16x8x8_F32F16F16F32_TN(SM80_16x8x8_F16F16F16F16_TN):
    """``mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32``: the F16 atom's layouts, f32 C and D."""
    ValTypeD: str = "f32"
    ValTypeC: str = "f32"


@dataclass(frozen=True)
class SM80_16x8x16_F32F16F16F32_TN(SM80_16x8x16_F16F16F16F16_TN):
    """``mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32``: the F16 atom's layouts, f32 C and D."""
    ValTypeD: str = "f32"
    ValTypeC: str = "f32"


@dataclass(frozen=True)
class SM80_16x8x8_F32BF16BF16F32_TN(SM80_16x8x8_F16F16F16F16_TN):
    """``mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32``: the F16 atom's layouts, bf16 A and B."""
    ValTypeD: str = "f32"
    ValTypeA: str = "bf16"
    ValTypeB: str = "bf16"
    ValTypeC: str = "f32"


@dataclass(frozen=True)
class SM80_16x8x16_F32BF16BF16F32_TN(SM80_16x8x16_F16F16F16F16_TN):
    """``mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32``: the F16 atom's layouts, bf16 A and B."""
    ValTypeD: str = "f32"
    ValTypeA: str = "bf16"
    ValTypeB: str = "bf16"
    ValTypeC: str = "f32"
