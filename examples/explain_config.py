"""A `warpsim explain` configuration: 4 warps as 2x2 over (M, N), bf16, K-major swizzled A and B.

Run: warpsim explain --config examples/explain_config.py --threads 0,37

A configuration defines `tiled_mma` and `fragments = {name: (operand, smem_tensor, tiled_copy
[, fragment_source])}`; see README "warpsim explain".
"""

from warpsim.cute import (
    Copy_Atom, SM75_U32x4_LDSM_N, SM80_16x8x16_F32BF16BF16F32_TN, Swizzle, composition, make_layout,
    make_smem_ptr, make_tensor, make_tiled_copy_A, make_tiled_copy_B, make_tiled_mma, tile_to_shape,
)

description = "2x2 warps, 32x32x16 tile, bf16, Swizzle<2,3,3> K-major shared layouts"

tiled_mma = make_tiled_mma(SM80_16x8x16_F32BF16BF16F32_TN(), make_layout((2, 2, 1)), (32, 32, 16))

smem_atom = composition(Swizzle(2, 3, 3), make_layout((8, 32), (32, 1)))      # (8 rows, 32 k) K-major
sA = make_tensor(make_smem_ptr(0x0000, "bf16"), tile_to_shape(smem_atom, (32, 32)))
sB = make_tensor(make_smem_ptr(0x0800, "bf16"), tile_to_shape(smem_atom, (32, 32)))
ldsm = Copy_Atom(SM75_U32x4_LDSM_N(), "bf16")

fragments = {
    "A": ("A", sA, make_tiled_copy_A(ldsm, tiled_mma)),
    "B": ("B", sB, make_tiled_copy_B(ldsm, tiled_mma)),
}
