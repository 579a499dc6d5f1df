"""CuTe atoms as data: MMA and copy operations, and registries built from their definitions.

``MMA_OPS`` and ``COPY_OPS`` map CuTe's names to atom instances, and ``GMMA_OPS`` the SM90 warpgroup atoms (with
K-major A and B; ``gmma_op(name, tnspA, tnspB)`` for others); they are built by walking the modules below, never by
hand. ``TMA_OPS`` names the TMA operation classes, which ``make_tma_copy`` sizes to their box.

>>> sorted(MMA_OPS)[:2]
['SM80_16x8x16_F16F16F16F16_TN', 'SM80_16x8x16_F32BF16BF16F32_TN']
>>> len(MMA_OPS), len(COPY_OPS), COPY_OPS["UniversalCopy<uint64_t>"].bits
(6, 10, 64)
"""

from warpsim.cute.atoms import copy_sm75, copy_universal, mma_sm80, mma_sm90
from warpsim.cute.atoms.base import CopyOperation, MMAOperation, walk_operations
from warpsim.cute.atoms.copy_sm75 import (
    LDSM, SM75_U16x2_LDSM_T, SM75_U16x4_LDSM_T, SM75_U16x8_LDSM_T, SM75_U32x1_LDSM_N,
    SM75_U32x2_LDSM_N, SM75_U32x4_LDSM_N,
)
from warpsim.cute.atoms.copy_universal import UniversalCopy
from warpsim.cute.atoms.copy_sm90_tma import (
    SM90_TMA, SM90_TMA_LOAD, SM90_TMA_LOAD_MULTICAST, SM90_TMA_REDUCE_ADD, SM90_TMA_STORE, TMA_OPS,
)
from warpsim.cute.atoms.mma_sm90 import SM90_GMMA, gmma_op, gmma_smem_atom
from warpsim.cute.atoms.mma_sm80 import (
    SM80_16x8x8_F16F16F16F16_TN, SM80_16x8x8_F32BF16BF16F32_TN, SM80_16x8x8_F32F16F16F32_TN,
    SM80_16x8x16_F16F16F16F16_TN, SM80_16x8x16_F32BF16BF16F32_TN, SM80_16x8x16_F32F16F16F32_TN,
)

__all__ = [
    "MMAOperation", "CopyOperation", "MMA_OPS", "GMMA_OPS", "COPY_OPS", "LDSM", "UniversalCopy", "SM90_GMMA", "gmma_op",
    "gmma_smem_atom", "SM90_TMA", "SM90_TMA_LOAD", "SM90_TMA_LOAD_MULTICAST", "SM90_TMA_STORE", "SM90_TMA_REDUCE_ADD",
    "TMA_OPS",
    "SM80_16x8x8_F16F16F16F16_TN", "SM80_16x8x8_F32F16F16F32_TN", "SM80_16x8x8_F32BF16BF16F32_TN",
    "SM80_16x8x16_F16F16F16F16_TN", "SM80_16x8x16_F32F16F16F32_TN", "SM80_16x8x16_F32BF16BF16F32_TN",
    "SM75_U32x1_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N",
    "SM75_U16x2_LDSM_T", "SM75_U16x4_LDSM_T", "SM75_U16x8_LDSM_T",
]

MMA_OPS = walk_operations(MMAOperation, [mma_sm80])
GMMA_OPS = walk_operations(MMAOperation, [mma_sm90])       # the SM90 warpgroup atoms, K-major A and B
COPY_OPS = walk_operations(CopyOperation, [copy_sm75, copy_universal])
