"""``warpsim.cute``: CuTe in Python, exact to CuTe C++ (CUTLASS 4.2): the layout algebra, atoms,
tiled MMA/copy, tensors and partitions.

Plain ``int`` values are static (``Int<N>``, printed ``_N``); :class:`DInt` values are dynamic
(printed ``N``). ``str()`` of every object is what CuTe's ``print()`` writes.

>>> from warpsim.cute import *
>>> str(make_layout((4, 1, 1)))
'(_4,_1,_1):(_1,_0,_0)'
>>> str(tile_to_shape(composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1))), (64, 64)))
'Sw<3,3,3> o _0 o ((_8,_8),(_64,_1)):((_64,_512),(_1,_0))'
"""

from warpsim.cute.integers import (
    DInt, Underscore, _, cute_str, div, is_static, make_dynamic, mod, cute_min, cute_max, cute_gcd,
    ceil_div_int, is_int, is_tuple, is_constant,
)
from warpsim.cute.int_tuple import (
    product, product_each, product_like, inner_product, unflatten, wrap, unwrap, repeat,
    repeat_like, congruent, weakly_congruent, compatible, evenly_divides, shape_div, ceil_div,
    elem_scale, prefix_product, has_underscore, all_underscore, zip_tuples, zip2_by,
    coalesce_shape, flatten_to_tuple,
)
from warpsim.cute.stride import (
    crd2idx, idx2crd, crd2crd, compact_major, compact_col_major, compact_row_major, compact_order,
    LayoutLeft, LayoutRight, GenColMajor, GenRowMajor,
)
from warpsim.cute.layout import (
    Layout, make_layout, make_shape, make_stride, make_coord, make_tile, is_layout, is_composed,
    size, cosize, coshape, rank, depth, shape, stride, get, take, select, flatten, group, append,
    prepend, slice_, dice, slice_and_offset, domain_offset, coalesce, filter, filter_zeros, transform_layout,
    make_ordered_layout, make_layout_like, make_identity_layout,
)
from warpsim.cute.table import layout_table, crd_table, eval_layout
from warpsim.cute.algebra import (
    composition, complement, right_inverse, left_inverse, max_common_layout, max_common_vector,
)
from warpsim.cute.tiling import (
    logical_divide, zipped_divide, tiled_divide, flat_divide, logical_product, zipped_product,
    tiled_product, flat_product, blocked_product, raked_product, tile_to_shape, tile_unzip,
    zip_layouts, max_alignment,
)
from warpsim.cute.swizzle import Swizzle, make_swizzle, MixedBits, make_mixed_bits, to_mixed_bits
from warpsim.cute.composed import (
    ComposedLayout, make_composed_layout, make_swizzle_layout, get_swizzle_portion,
    get_nonswizzle_portion,
)
from warpsim.cute.recast import upcast, downcast, recast_layout
from warpsim.cute.basis import (
    ScaledBasis, E, ArithmeticTuple, make_basis_like, as_arithmetic_tuple,
)
from warpsim.cute.numeric import DTYPES, dtype_bits
from warpsim.cute.atoms import (
    MMA_OPS, GMMA_OPS, COPY_OPS, MMAOperation, CopyOperation, UniversalCopy, SM90_GMMA, gmma_op, gmma_smem_atom,
    TMA_OPS, SM90_TMA_LOAD, SM90_TMA_LOAD_MULTICAST, SM90_TMA_STORE, SM90_TMA_REDUCE_ADD,
    SM80_16x8x8_F16F16F16F16_TN, SM80_16x8x8_F32F16F16F32_TN, SM80_16x8x8_F32BF16BF16F32_TN,
    SM80_16x8x16_F16F16F16F16_TN, SM80_16x8x16_F32F16F16F32_TN, SM80_16x8x16_F32BF16BF16F32_TN,
    SM75_U32x1_LDSM_N, SM75_U32x2_LDSM_N, SM75_U32x4_LDSM_N,
    SM75_U16x2_LDSM_T, SM75_U16x4_LDSM_T, SM75_U16x8_LDSM_T,
)
from warpsim.cute.mma_atom import MMA_Atom
from warpsim.cute.copy_atom import Copy_Atom
from warpsim.cute.pointer import (
    Pointer, RegisterStorage, make_smem_ptr, make_gmem_ptr, register_of_slot,
)
from warpsim.cute.lanes import warp_lanes, is_lanes
from warpsim.cute.tensor import (
    Tensor, make_tensor, make_fragment_like, make_identity_tensor, is_tensor,
)
from warpsim.cute.tiled_mma import (
    TiledMMA, ThrMMA, make_tiled_mma, partition_fragment_C, partition_shape_A, partition_shape_B,
    partition_shape_C, tile_size, tile_shape, thr_size,
)
from warpsim.cute.tiled_copy import (
    TiledCopy, ThrCopy, make_tiled_copy, make_tiled_copy_A, make_tiled_copy_B, make_tiled_copy_C,
)
from warpsim.cute.partition import X, inner_partition, outer_partition, local_tile, local_partition
from warpsim.cute.tma_copy import TmaCopy, make_tma_copy

__all__ = [
    # integers
    "DInt", "Underscore", "_", "cute_str", "div", "mod", "is_static", "make_dynamic", "cute_min",
    "cute_max", "cute_gcd", "ceil_div_int", "is_int", "is_tuple", "is_constant",
    # int tuples
    "product", "product_each", "product_like", "inner_product", "unflatten", "wrap", "unwrap",
    "repeat", "repeat_like", "congruent", "weakly_congruent", "compatible", "evenly_divides",
    "shape_div", "ceil_div", "elem_scale", "prefix_product", "has_underscore", "all_underscore",
    "zip_tuples", "zip2_by", "coalesce_shape", "flatten_to_tuple",
    # strides
    "crd2idx", "idx2crd", "crd2crd", "compact_major", "compact_col_major", "compact_row_major",
    "compact_order", "LayoutLeft", "LayoutRight", "GenColMajor", "GenRowMajor",
    # layouts
    "Layout", "make_layout", "make_shape", "make_stride", "make_coord", "make_tile", "is_layout",
    "is_composed", "size", "cosize", "coshape", "rank", "depth", "shape", "stride", "get", "take",
    "select", "flatten", "group", "append", "prepend", "slice_", "dice", "slice_and_offset",
    "domain_offset",
    "coalesce", "filter", "filter_zeros", "transform_layout", "make_ordered_layout",
    "make_layout_like", "layout_table", "crd_table", "eval_layout",
    # algebra
    "composition", "complement", "right_inverse", "left_inverse", "max_common_layout",
    "max_common_vector", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
    "logical_product", "zipped_product", "tiled_product", "flat_product", "blocked_product",
    "raked_product", "tile_to_shape", "tile_unzip", "zip_layouts", "make_fragment_like", "max_alignment",
    # swizzles and composed layouts
    "Swizzle", "make_swizzle", "MixedBits", "make_mixed_bits", "to_mixed_bits", "ComposedLayout",
    "make_composed_layout", "make_swizzle_layout", "get_swizzle_portion", "get_nonswizzle_portion",
    # width changes
    "upcast", "downcast", "recast_layout",
    # identity layouts
    "ScaledBasis", "E", "ArithmeticTuple", "make_basis_like", "make_identity_layout",
    "as_arithmetic_tuple",
    # atoms
    "DTYPES", "dtype_bits", "MMA_OPS", "GMMA_OPS", "COPY_OPS", "MMAOperation", "CopyOperation", "UniversalCopy",
    "SM90_GMMA", "gmma_op", "gmma_smem_atom", "TMA_OPS", "SM90_TMA_LOAD", "SM90_TMA_LOAD_MULTICAST", "SM90_TMA_STORE",
    "SM90_TMA_REDUCE_ADD",
    "SM80_16x8x8_F16F16F16F16_TN", "SM80_16x8x8_F32F16F16F32_TN", "SM80_16x8x8_F32BF16BF16F32_TN",
    "SM80_16x8x16_F16F16F16F16_TN", "SM80_16x8x16_F32F16F16F32_TN", "SM80_16x8x16_F32BF16BF16F32_TN",
    "SM75_U32x1_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N",
    "SM75_U16x2_LDSM_T", "SM75_U16x4_LDSM_T", "SM75_U16x8_LDSM_T", "MMA_Atom", "Copy_Atom",
    # tensors
    "Pointer", "RegisterStorage", "make_smem_ptr", "make_gmem_ptr", "register_of_slot",
    "warp_lanes", "is_lanes", "Tensor", "make_tensor", "make_identity_tensor", "is_tensor",
    # tiled MMA and copy
    "TiledMMA", "ThrMMA", "make_tiled_mma", "partition_fragment_C", "partition_shape_A",
    "partition_shape_B", "partition_shape_C", "tile_size", "tile_shape", "thr_size",
    "TiledCopy", "ThrCopy", "make_tiled_copy", "make_tiled_copy_A", "make_tiled_copy_B",
    "make_tiled_copy_C", "TmaCopy", "make_tma_copy",
    # tensor partitioning
    "X", "inner_partition", "outer_partition", "local_tile", "local_partition",
]
