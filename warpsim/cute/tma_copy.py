"""``make_tma_copy``: CuTe's TMA TiledCopy and the tensor map it asks the driver for (``copy_traits_sm90_tma.hpp``).

CuTe traces the shared-memory layout back into global memory to find the largest box one TMA instruction can move:

1. ``construct_tma_gbasis``: the inverse of the (unswizzled) smem layout, composed with the CTA tile's coordinate
   map, gives for each smem index the global mode it walks (scaled bases ``_1@i``); the modes are kept while their
   scale is 1, merged up to extents of 256 (``coalesce_256``), the global modes the box does not cover appended with
   extent 1, and the trailing ones grouped so that at most five remain: ``tma_gbasis``, box extent -> global
   mode(s).
2. ``make_tma_copy_desc``: from it, the arguments of ``cuTensorMapEncodeTiled``: global dims and byte strides per
   TMA mode (a grouped mode by CuTe's recurrence), the box, element strides of 1, the swizzle of the smem layout,
   interleave none, L2 promotion 128B, no NaN fill; a multicast of ``n`` CTAs splits the box's outer modes by ``n``.
3. ``make_tma_copy_tiled``: a :class:`~warpsim.cute.tiled_copy.TiledCopy` of one thread (per multicast CTA) whose
   values are the smem coordinates of the box, in smem order.

>>> from warpsim.cute import *
>>> g = make_tensor(make_gmem_ptr(0, "f32"), (DInt(1024), DInt(256)), GenRowMajor)      # K-major
>>> tma = make_tma_copy(SM90_TMA_LOAD, g, make_layout((64, 32), GenRowMajor))
>>> str(tma.tma_gbasis), tma.box, str(tma.TiledLayout_TV), cute_str(tma.Tiler_MN)
('(_32,_64):(_1@1,_1@0)', (32, 64), '(_1,(((_32,_64),_1))):(_0,(((_64,_1),_0)))', '(_64,_32)')
>>> tma.encode_text()
'dtype=7 rank=2 dims=(256,1024) strides=(1024) box=(32,64) elem=(1,1) interleave=0 swizzle=0 l2=2 oob=0'
"""

from warpsim.cute import int_tuple as it
from warpsim.cute.algebra import composition, right_inverse
from warpsim.cute.atoms.copy_sm90_tma import SM90_TMA, SM90_TMA_LOAD_MULTICAST
from warpsim.cute.basis import basis_get, basis_value
from warpsim.cute.composed import get_nonswizzle_portion, get_swizzle_portion
from warpsim.cute.copy_atom import Copy_Atom
from warpsim.cute.integers import cute_gcd, is_constant, is_static, is_tuple
from warpsim.cute.layout import (Layout, coalesce, cosize, group, is_composed, make_identity_layout, make_layout, shape,
                                 size, stride, take)
from warpsim.cute.numeric import dtype_bits
from warpsim.cute.tiled_copy import TiledCopy
from warpsim.cute.tiling import tile_to_shape

__all__ = ["make_tma_copy", "TmaCopy", "TMA_DATA_TYPES", "construct_tma_gbasis", "coalesce_256"]

# CuTe's TMA::to_CUtensorMapDataType: element type -> CUtensorMapDataType (cuda.h)
TMA_DATA_TYPES = {"u16": 1, "u32": 2, "f16": 6, "f32": 7, "bf16": 9}
L2_PROMOTION_128B = 2                      # CU_TENSOR_MAP_L2_PROMOTION_L2_128B, what CuTe asks for


def coalesce_256(layout):
    """CuTe ``detail::coalesce_256``: merge flattened modes whose strides continue each other while the merged extent
    stays at most 256 (a TMA box's limit); only where both strides are static (a dynamic equality is not a
    compile-time fact, so CuTe keeps the modes apart); extent-1 modes dropped."""
    fs, fd = it.flatten_to_tuple(layout.shape), it.flatten_to_tuple(layout.stride)
    new_s, new_d = [fs[0]], [fd[0]]
    for s, d in zip(fs[1:], fd[1:]):
        if is_constant(1, s):
            continue
        if len(new_s) == 1 and is_constant(1, new_s[0]):
            new_s, new_d = [s], [d]
            continue
        joined = new_s[-1] * new_d[-1]
        if is_static(joined) and is_static(d) and joined == d and is_static(s * new_s[-1]) and s * new_s[-1] <= 256:
            new_s[-1] = s * new_s[-1]
            continue
        new_s.append(s)
        new_d.append(d)
    if len(new_s) == 1:
        return Layout(1, 0) if is_constant(1, new_s[0]) else Layout(new_s[0], new_d[0])
    return Layout(tuple(new_s), tuple(new_d))


def construct_tma_gbasis(g_layout, smem_layout, cta_v_map):
    """CuTe ``detail::construct_tma_gbasis`` (element type = the TMA's type): the box's layout, extent -> global mode
    basis (``_1@i``, or a tuple of them for grouped modes). ``ValueError`` where CuTe's static assertions fail."""
    if size(smem_layout) != size(cta_v_map):
        raise ValueError(f"make_tma_copy: the smem layout {smem_layout} has {size(smem_layout)} elements, the CTA tile "
                         f"{cta_v_map} {size(cta_v_map)} (TMA requires CTA_Tile and SLayout top-level size equivalence)")
    inv_smem_layout = right_inverse(smem_layout)
    sidx2gmode_full = coalesce(composition(cta_v_map, inv_smem_layout))
    strides = sidx2gmode_full.stride if is_tuple(sidx2gmode_full.stride) else (sidx2gmode_full.stride,)
    smem_rank = next((i for i, e in enumerate(strides) if not is_constant(1, basis_value(e))), len(strides))
    if smem_rank == 0:
        raise ValueError(f"make_tma_copy: no common tile-gmem vectorization: the smem layout {smem_layout} does not "
                         f"start along a global mode with stride 1 ({sidx2gmode_full})")
    sidx2gmode = take(sidx2gmode_full, 0, smem_rank) if is_tuple(sidx2gmode_full.shape) else sidx2gmode_full
    tile_gstride = composition(g_layout, sidx2gmode)
    tma_gstride = coalesce_256(tile_gstride)
    gbasis = make_identity_layout(g_layout.shape)
    tile_gbasis_tmp = composition(gbasis, sidx2gmode)
    tile_gbasis = Layout(tile_gstride.shape, tile_gbasis_tmp.stride)
    tma_gbasis_tile = composition(tile_gbasis, make_layout(it.wrap(tma_gstride.shape)))
    used = set(_leaves(tma_gbasis_tile.stride))
    remaining = tuple(e for s, d, e in zip(it.flatten_to_tuple(g_layout.shape), it.flatten_to_tuple(g_layout.stride),
                                           it.flatten_to_tuple(gbasis.stride))
                      if not (is_constant(1, s) or is_constant(0, d)) and e not in used)
    full = Layout(it.wrap(tma_gbasis_tile.shape) + (1,) * len(remaining),
                  it.wrap(tma_gbasis_tile.stride) + remaining)
    r = len(it.wrap(full.shape))
    return group(full, min(r, 4), -1)


def _leaves(t):
    return it.flatten_to_tuple(t) if is_tuple(t) else (t,)


class TmaCopy(TiledCopy):
    """CuTe's TMA ``TiledCopy`` (what ``make_tma_copy`` returns) with what CuTe's traits keep beside it: the op (sized
    to the box), the box's ``tma_gbasis``, the global tensor's layout and element type, the swizzle and the multicast
    count.

    ``encode_args()`` are the arguments CuTe passes to ``cuTensorMapEncodeTiled`` (``encode_text()`` the same as one
    line); ``warpsim.isa.tma.TensorMap.encoded(array, copy.encode_args())`` is the tensor map a launch takes for a numpy
    array with those fields.
    """

    __slots__ = ("op", "tma_gbasis", "g_layout", "dtype", "swizzle", "num_multicast")

    def __init__(self, atom, layout_tv, tiler_mn, op, tma_gbasis, g_layout, dtype, swizzle, num_multicast):
        super().__init__(atom, layout_tv, tiler_mn)
        for name, value in (("op", op), ("tma_gbasis", tma_gbasis), ("g_layout", g_layout), ("dtype", dtype),
                            ("swizzle", swizzle), ("num_multicast", num_multicast)):
            object.__setattr__(self, name, value)

    @property
    def rank(self):
        """The tensor map's number of dimensions (``rank(tma_gbasis)``)."""
        return len(it.wrap(self.tma_gbasis.shape))

    @property
    def box(self):
        """``boxDim``, innermost first: each TMA mode's extent, the outer ones split by the multicast count."""
        box = [int(size(self.tma_gbasis, i)) for i in range(self.rank)]
        multicast = self.num_multicast
        for i in range(self.rank - 1, -1, -1):
            if multicast <= 1:
                break
            if box[i] % multicast and multicast % box[i]:
                raise ValueError(f"make_tma_copy: a multicast over {multicast} CTAs does not divide the box's mode {i} "
                                 f"of {box[i]}")
            box[i], multicast = -(-box[i] // multicast), -(-multicast // box[i])
        return tuple(box)

    def gmem_shape_stride(self):
        """``(globalDim, element strides)`` per TMA mode, CuTe's ``fill_tma_gmem_shape_stride`` (strides in elements,
        the first 1)."""
        gshape, gstride = self.g_layout.shape, self.g_layout.stride
        dims, strides = [], []
        for i in range(self.rank):
            bases = it.wrap(stride(self.tma_gbasis, i)) if is_tuple(stride(self.tma_gbasis, i)) else None
            if bases is None or len(bases) == 1:
                e = bases[0] if bases else stride(self.tma_gbasis, i)
                dims.append(int(basis_get(e, gshape)))
                strides.append(int(basis_get(e, gstride)))
                continue
            n, d = 1, 0
            for e in _leaves(bases):
                shape_j, stride_j = int(basis_get(e, gshape)), int(basis_get(e, gstride))
                old = d
                d = int(cute_gcd(d, stride_j))
                n = (n - 1) * (old // d) + (shape_j - 1) * (stride_j // d) + 1 if d else shape_j
            dims.append(n)
            strides.append(d)
        if strides[0] != 1:
            raise ValueError(f"make_tma_copy: the global tensor {self.g_layout} is not contiguous along the box's "
                             f"first mode {self.tma_gbasis} (majorness of smem doesn't match majorness of gmem)")
        return tuple(dims), tuple(strides)

    def encode_args(self):
        """The fields CuTe gives ``cuTensorMapEncodeTiled``: ``dtype`` (CUtensorMapDataType), ``rank``, ``dims``,
        ``strides`` (bytes, from the second dimension), ``box``, ``element_strides``, ``interleave``, ``swizzle``
        (CUtensorMapSwizzle), ``l2_promotion``, ``oob_fill``."""
        dims, strides = self.gmem_shape_stride()
        nbytes = dtype_bits(self.dtype) // 8
        byte_strides = tuple(s * nbytes for s in strides[1:])
        for d, s in enumerate(byte_strides, 1):
            if s % 16 or s >= 1 << 40:
                raise ValueError(f"make_tma_copy: global stride {d} is {s} bytes; TMA needs a multiple of 16 below "
                                 f"2**40 ({self.g_layout} of {self.dtype})")
        box = self.box
        if any(not 1 <= b <= 256 for b in box):
            raise ValueError(f"make_tma_copy: box {box} has an extent outside 1..256")
        return {"dtype": TMA_DATA_TYPES[self.dtype], "rank": self.rank, "dims": dims, "strides": byte_strides,
                "box": box, "element_strides": (1,) * self.rank, "interleave": 0, "swizzle": self.swizzle,
                "l2_promotion": L2_PROMOTION_128B, "oob_fill": 0}

    def encode_text(self):
        """:meth:`encode_args` as one line (the oracle's format)."""
        a = self.encode_args()
        t = lambda v: "(" + ",".join(str(x) for x in v) + ")"      # noqa: E731
        return (f"dtype={a['dtype']} rank={a['rank']} dims={t(a['dims'])} strides={t(a['strides'])} box={t(a['box'])} "
                f"elem={t(a['element_strides'])} interleave={a['interleave']} swizzle={a['swizzle']} "
                f"l2={a['l2_promotion']} oob={a['oob_fill']}")

    @property
    def ptx(self):
        """The PTX instruction the copy issues (without operands)."""
        return self.op.ptx(self.rank)


def make_tma_copy(op, gtensor, slayout, cta_tiler=None, cluster_size=1):
    """CuTe ``make_tma_copy(op, gtensor, slayout[, cta_tiler, cluster_size])``: the TMA :class:`TmaCopy` moving the
    CTA tile ``cta_tiler`` (default: the smem layout's shape per mode) of ``gtensor`` (a global-memory tensor: its
    layout and element type matter, not its address) into or out of shared memory of layout ``slayout``
    (swizzled or not). ``op``: ``SM90_TMA_LOAD``, ``SM90_TMA_LOAD_MULTICAST`` (with ``cluster_size`` CTAs sharing the
    box), ``SM90_TMA_STORE`` or ``SM90_TMA_REDUCE_ADD`` (the class or an instance).

    ``ValueError`` (one line naming the layouts) where CuTe's static assertions or the driver's limits fail.
    """
    op_class = op if isinstance(op, type) else type(op)
    if not (isinstance(op_class, type) and issubclass(op_class, SM90_TMA)) or op_class is SM90_TMA:
        raise TypeError(f"make_tma_copy: expected SM90_TMA_LOAD, SM90_TMA_LOAD_MULTICAST, SM90_TMA_STORE or "
                        f"SM90_TMA_REDUCE_ADD, got {op!r}")
    dtype = getattr(gtensor, "dtype", None)
    if getattr(gtensor, "space", None) != "gmem" or dtype not in TMA_DATA_TYPES:
        raise ValueError(f"make_tma_copy: gtensor must be a global-memory tensor of {', '.join(TMA_DATA_TYPES)}, got "
                         f"{gtensor}")
    if not isinstance(cluster_size, int) or cluster_size < 1 or cluster_size & (cluster_size - 1) or cluster_size > 16:
        raise ValueError(f"make_tma_copy: cluster_size is a power of two up to 16, got {cluster_size!r}")
    if cluster_size > 1 and op_class is not SM90_TMA_LOAD_MULTICAST:
        raise ValueError(f"make_tma_copy: cluster_size {cluster_size} needs SM90_TMA_LOAD_MULTICAST, not "
                         f"{op_class.__name__}")
    if not (isinstance(slayout, Layout) or is_composed(slayout)):
        raise TypeError(f"make_tma_copy: slayout must be a layout (swizzled or not), got {slayout!r}")
    g_layout = gtensor.layout
    if cta_tiler is None:
        cta_tiler = it.product_each(shape(slayout))
    cta_v_map = composition(make_identity_layout(g_layout.shape), cta_tiler)
    cta_t_map = Layout(cluster_size)
    swizzle = get_swizzle_portion(slayout)
    if swizzle.num_bits and swizzle.num_base != 4:
        raise ValueError(f"make_tma_copy: the smem layout's swizzle {swizzle} is not one TMA writes (Sw<B,4,3>)")
    smem_layout = get_nonswizzle_portion(slayout)
    tma_gbasis = construct_tma_gbasis(g_layout, smem_layout, cta_v_map)
    bits = int(size(tma_gbasis)) * dtype_bits(dtype)
    atom = Copy_Atom(op_class(bits), dtype)
    cta_tiler_mn = it.product_each(shape(cta_v_map))
    num_elems_per_tma = int(size(tma_gbasis))
    inv_smem_layout = right_inverse(smem_layout)
    layout_v = composition(inv_smem_layout, num_elems_per_tma)
    layout_V = tile_to_shape(make_layout(layout_v), size(cta_v_map))
    if num_elems_per_tma % int(cosize(cta_t_map)):
        raise ValueError(f"make_tma_copy: a box of {num_elems_per_tma} elements does not split over {cluster_size} CTAs")
    layout_t = Layout(cosize(cta_t_map), num_elems_per_tma // int(cosize(cta_t_map)))
    layout_T = composition(inv_smem_layout, composition(layout_t, cta_t_map))
    layout_TV = make_layout(layout_T, layout_V)
    copy = TmaCopy(atom, layout_TV, cta_tiler_mn, atom.op, tma_gbasis, g_layout, dtype, swizzle.num_bits,
                   cluster_size)
    copy.encode_args()                                   # the driver's limits, checked now as CuTe's asserts do
    return copy

