"""``TiledCopy`` and ``ThrCopy``: copy atoms tiled over threads and values (``include/cute/atom/copy_atom.hpp``).

A TiledCopy is a copy atom, a ``TiledLayout_TV`` ((thread, value) -> (m, n) index of a tile) and
the tile ``Tiler_MN``. ``make_tiled_copy_A/B/C(atom, tiled_mma)`` take the TV layout of the MMA's
operand, so a thread copies exactly the values its MMA fragment needs; ``retile_D`` then views
that fragment's registers in the copy's value order (the seed's point: the same registers,
written through the copy view, read through the MMA view).

Examples::

    >>> tiled_mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN(), make_layout((4, 1, 1)), (64, 16, 16))
    >>> copy_B = make_tiled_copy_B(Copy_Atom(SM75_U32x4_LDSM_N(), "f16"), tiled_mma)
    >>> cute_str(copy_B.Tiler_MN), str(copy_B.TiledLayout_TV)
    ('(_16,_16)', '((_4,_8,_4),((_2,_2),(_2,_1))):((_32,_1,_0),((_16,_128),(_8,_0)))')
    >>> str(copy_B.retile(Layout(((2, 2), 8, 4), ((1, 2), 4, 32))))
    '((_8,_1),_4,_4):((_1,_0),_8,_32)'
"""

from functools import lru_cache

import numpy as np

from warpsim.cute.integers import _, brief, cute_str, is_static
from warpsim.cute import int_tuple as it
from warpsim.cute.lanes import is_lanes
from warpsim.cute.layout import Layout, coalesce, make_layout, rank, shape, size
from warpsim.cute.algebra import right_inverse
from warpsim.cute.tiling import logical_product, raked_product, zipped_divide
from warpsim.cute.recast import upcast
from warpsim.cute.table import layout_table
from warpsim.cute.numeric import dtype_bits
from warpsim.cute.copy_atom import Copy_Atom
from warpsim.cute.tensor import is_tensor
from warpsim.cute.tiled_mma import TiledMMA, thread_index

__all__ = [
    "TiledCopy", "ThrCopy", "make_tiled_copy", "make_tiled_copy_A", "make_tiled_copy_B",
    "make_tiled_copy_C", "make_tiled_copy_impl",
]


class TiledCopy:
    """CuTe ``TiledCopy<Copy_Atom, LayoutCopy_TV, ShapeTiler_MN>`` (immutable, hashable).

    Pre-conditions (CuTe's static assertions): the TV layout's thread and value counts are
    multiples of the atom's; otherwise ``ValueError`` naming the atom and the TV layout.
    """

    __slots__ = ("atom", "TiledLayout_TV", "Tiler_MN", "_hash", "_sizes")

    def __init__(self, atom, layout_tv, tiler_mn):
        if not isinstance(atom, Copy_Atom):
            raise TypeError(f"TiledCopy: expected a Copy_Atom, got {atom!r}")
        if not isinstance(layout_tv, Layout) or rank(layout_tv) != 2:
            raise ValueError(f"TiledCopy: the TV layout must be a rank-2 Layout (thread, value), got {layout_tv}")
        tiler_mn = it.check_int_tuple("TiledCopy", tiler_mn, "tiler")
        object.__setattr__(self, "atom", atom)
        object.__setattr__(self, "TiledLayout_TV", layout_tv)
        object.__setattr__(self, "Tiler_MN", tiler_mn)
        object.__setattr__(self, "_hash", hash(self._key()))
        ref = atom.ValLayoutRef
        object.__setattr__(self, "_sizes", (int(size(ref, 0)), int(size(ref, 1)),
                                            int(size(layout_tv, 0)), int(size(layout_tv, 1))))
        if int(size(layout_tv, 0)) % int(size(ref, 0)):
            raise ValueError(f"TiledCopy: {atom.op.name} needs a multiple of {size(ref, 0)} threads, but the TV "
                             f"layout {layout_tv} has {size(layout_tv, 0)} (TiledCopy uses too few thrs)")
        if int(size(layout_tv, 1)) % int(size(ref, 1)):
            raise ValueError(f"TiledCopy: {atom.op.name} moves {size(ref, 1)} {atom.dtype} values per thread, but the "
                             f"TV layout {layout_tv} gives each thread {size(layout_tv, 1)} (TiledCopy uses too few vals)")

    def __setattr__(self, name, value):
        raise AttributeError(f"TiledCopy is immutable: cannot set {name}")

    def _key(self):
        return (self.atom, self.TiledLayout_TV, cute_str(self.Tiler_MN))

    def __eq__(self, other):
        return isinstance(other, TiledCopy) and self._key() == other._key()

    def __hash__(self):
        return self._hash

    # -- sizes -----------------------------------------------------------------------------
    @property
    def AtomNumThr(self):
        return self._sizes[0]

    @property
    def AtomNumVal(self):
        return self._sizes[1]

    @property
    def TiledNumThr(self):
        return self._sizes[2]

    @property
    def TiledNumVal(self):
        return self._sizes[3]

    def size(self):
        """CuTe ``size(tiled_copy)``: the number of threads."""
        return self.TiledNumThr

    # -- layouts -----------------------------------------------------------------------------
    def tidfrg_S(self, layout):
        """CuTe ``tidfrg_S``: (M,N,...) -> (Thr,(FrgV,FrgX),(RestM,RestN,...)) in src value order (cached)."""
        return _tidfrg(self, "S", layout)

    def tidfrg_D(self, layout):
        """CuTe ``tidfrg_D``: as ``tidfrg_S`` in dst value order (cached)."""
        return _tidfrg(self, "D", layout)

    def tile2thrfrg(self, layout, ref2trg):
        """CuTe ``tile2thrfrg``: ((TileM,TileN,...),(RestM,RestN,...)) -> (Thr,(FrgV,FrgX),(Rest...))."""
        atom_layout_tv = zipped_divide(self.TiledLayout_TV, (self.AtomNumThr, self.AtomNumVal))
        trg_layout_tv = atom_layout_tv.compose(ref2trg, _)     # ((trg_tid,trg_val),(rest_tid,rest_val))
        zipped = Layout(it.zip_tuples(trg_layout_tv.shape), it.zip_tuples(trg_layout_tv.stride))
        thrval2mn = coalesce(zipped, (1, (1, 1)))              # ((trg_tid,rest_tid),(trg_val,rest_val))
        tv_tensor = layout.compose(thrval2mn, _)               # ((thrid,val),(RestM,RestN,...))
        return tv_tensor((_, _), _)

    def retile(self, layout):
        """CuTe ``TiledCopy::retile``: a thread's fragment layout in this copy's value order (cached)."""
        return _retile(self, layout)

    def get_layoutS_TV(self):
        """(thread index, src value) -> (m, n) index in the tile."""
        return _layout_tv(self, "S")

    def get_layoutD_TV(self):
        """(thread index, dst value) -> (m, n) index in the tile."""
        return _layout_tv(self, "D")

    def get_slice(self, tid):
        """CuTe ``get_slice(thr_idx)``: the :class:`ThrCopy` of thread ``tid`` (or of a lane vector)."""
        return ThrCopy(self, thread_index(tid, "TiledCopy.get_slice"))

    get_thread_slice = get_slice

    def __str__(self):
        return ("TiledCopy\n"
                f"  Tiler_MN:       {cute_str(self.Tiler_MN)}\n"
                f"  TiledLayout_TV: {self.TiledLayout_TV}\n" + str(self.atom))

    def __repr__(self):
        return f"TiledCopy({self.atom!r}, {self.TiledLayout_TV}, {cute_str(self.Tiler_MN)})"


def _ref2trg(tiled, which):
    atom = tiled.atom
    trg = atom.ValLayoutSrc if which == "S" else atom.ValLayoutDst
    return right_inverse(atom.ValLayoutRef).compose(trg)


@lru_cache(maxsize=1024)
def _tidfrg(tiled, which, layout):
    if rank(layout) < it.rank(tiled.Tiler_MN):
        raise ValueError(f"TiledCopy.tidfrg_{which}: a rank-{rank(layout)} layout is too small for the tiler "
                         f"{cute_str(tiled.Tiler_MN)}: {layout}")
    return tiled.tile2thrfrg(zipped_divide(layout, tiled.Tiler_MN), _ref2trg(tiled, which))


@lru_cache(maxsize=256)
def _layout_tv(tiled, which):
    ref = make_layout((shape(tiled.Tiler_MN), 1))
    return tiled.tile2thrfrg(ref, _ref2trg(tiled, which))(_, _, 0)


@lru_cache(maxsize=1024)
def _retile(tiled, layout):
    r = rank(layout)
    v = size(layout, 0)
    frg_layout_mn = upcast(tiled.TiledNumThr * int(v),
                           right_inverse(tiled.TiledLayout_TV).with_shape(shape(tiled.Tiler_MN)))
    frg_layout_v = zipped_divide(logical_product(make_layout(v), right_inverse(frg_layout_mn)),
                                 make_layout(tiled.AtomNumVal))
    t_tensor = zipped_divide(layout, it.prepend(it.product_each(shape(frg_layout_mn)), v))
    v_tensor = t_tensor.compose(frg_layout_v, _)
    return v_tensor(_, it.append(0, _, n=r))


def _check_tensor(op, tiled, tensor):
    if not is_tensor(tensor):
        raise TypeError(f"{op}: expected a Tensor, got {tensor!r}")
    if tensor.dtype is not None and dtype_bits(tensor.dtype) != dtype_bits(tiled.atom.dtype):
        raise ValueError(f"{op}: the copy atom {tiled.atom.op.name} moves {tiled.atom.dtype} elements, but the "
                         f"tensor holds {tensor.dtype} ({dtype_bits(tensor.dtype)}-bit) elements")


def _check_tiler_divides(op, tiled, layout):
    problem = _tiler_problem(tiled, layout)
    if problem:
        raise ValueError(f"{op}: {problem}")


@lru_cache(maxsize=1024)
def _tiler_problem(tiled, layout):
    tiler = it.wrap(tiled.Tiler_MN)
    if rank(layout) < len(tiler):
        return f"a rank-{rank(layout)} tensor is too small for the copy tile {cute_str(tiled.Tiler_MN)}"
    for i, t in enumerate(tiler):
        extent = size(layout, i)
        if is_static(extent) and int(extent) % int(it.product(t)):
            return f"the copy tile {cute_str(tiled.Tiler_MN)} does not divide the tensor shape {cute_str(shape(layout))}"
    return None


class ThrCopy:
    """CuTe ``ThrCopy``: a TiledCopy and one thread index (or a lane vector of them)."""

    __slots__ = ("tiled_copy", "thr_idx")

    def __init__(self, tiled_copy, thr_idx):
        n = tiled_copy.size()
        bad = (thr_idx >= n).any() if is_lanes(thr_idx) else int(thr_idx) >= n
        if bad:
            raise ValueError(f"TiledCopy.get_slice: thread {thr_idx if not is_lanes(thr_idx) else brief(thr_idx[thr_idx >= n])} "
                             f"is not below the TiledCopy's {n} threads")
        self.tiled_copy = tiled_copy
        self.thr_idx = thr_idx

    def _partition(self, which, tensor):
        op = f"ThrCopy.partition_{which}"
        tiled = self.tiled_copy
        _check_tensor(op, tiled, tensor)
        _check_tiler_divides(op, tiled, tensor._layout)
        frg = _tidfrg(tiled, which, tensor._layout)
        viewed = tensor.with_layout(frg, lambda t: t.with_layout(_tidfrg(tiled, which, t._layout)))
        coord = (self.thr_idx, _, it.repeat(_, rank(tensor._layout)))
        if not is_lanes(self.thr_idx) and tensor.lanes is None:
            return viewed.slice(coord)
        lanes = self.thr_idx if is_lanes(self.thr_idx) else tensor.lanes
        return viewed.slice(coord, lanes, lambda tid: tiled.get_slice(tid)._partition(which, tensor.at_thread(tid)))

    def partition_S(self, tensor):
        """CuTe ``partition_S``: this thread's (CPY, CPY_M, CPY_N, ...) part of a source tensor."""
        return self._partition("S", tensor)

    def partition_D(self, tensor):
        """CuTe ``partition_D``: this thread's (CPY, CPY_M, CPY_N, ...) part of a destination tensor."""
        return self._partition("D", tensor)

    def _retile(self, which, tensor):
        op = f"ThrCopy.retile_{which}"
        tiled = self.tiled_copy
        _check_tensor(op, tiled, tensor)
        if tensor._inner is not None:
            raise ValueError(f"{op}: retile a one-thread tensor (t.lane(i)); this lane-vector tensor's layout "
                             f"differs between lanes")
        try:
            layout = tiled.retile(tensor._layout)
        except ValueError as e:
            raise ValueError(f"{op}: {tiled.atom.op.name} cannot retile the fragment {tensor._layout}: {e}") from None
        if tensor.space == "rmem":
            _check_cover(op, tiled, tensor._layout, layout)
        return tensor.with_layout(layout, lambda t: ThrCopy._retile(self, which, t))

    def retile_S(self, tensor):
        """CuTe ``retile_S``: the same registers, viewed in this copy's source value order."""
        return self._retile("S", tensor)

    def retile_D(self, tensor):
        """CuTe ``retile_D``: the same registers, viewed in this copy's destination value order."""
        return self._retile("D", tensor)

    def __str__(self):
        tid = self.thr_idx.tolist() if is_lanes(self.thr_idx) else int(self.thr_idx)
        return f"ThrCopy\n  ThrIdx: {tid}\n" + str(self.tiled_copy)


@lru_cache(maxsize=1024)
def _check_cover(op, tiled, frag_layout, view_layout):
    """A copy view of a register fragment must cover each of its slots exactly once."""
    frag = np.sort(layout_table(frag_layout))
    view = np.sort(layout_table(view_layout))
    if frag.shape != view.shape or not np.array_equal(frag, view):
        raise ValueError(f"{op}: {tiled.atom.op.name} ({tiled.atom.dtype}) is incompatible with the fragment "
                         f"{frag_layout}: its copy view {view_layout} does not cover the fragment's slots once each")
    return True


def make_tiled_copy_impl(atom, layout_tv, tiler):
    """CuTe ``make_tiled_copy_impl``: a TiledCopy from its parts."""
    return TiledCopy(atom, layout_tv, tiler)


def _mma_copy(op, atom, tiled_mma, operand, modes):
    if not isinstance(atom, Copy_Atom):
        raise TypeError(f"{op}: expected a Copy_Atom, got {atom!r}")
    if not isinstance(tiled_mma, TiledMMA):
        raise TypeError(f"{op}: expected a TiledMMA, got {tiled_mma!r}")
    return _mma_copy_cached(op, atom, tiled_mma, operand, modes)


@lru_cache(maxsize=256)
def _mma_copy_cached(op, atom, tiled_mma, operand, modes):
    """The TiledCopy of ``make_tiled_copy_A/B/C`` (immutable: cached per atom and TiledMMA)."""
    frg = tiled_mma.atom.frg_type(operand)
    if dtype_bits(frg) != dtype_bits(atom.dtype):
        raise ValueError(f"{op}: the copy atom {atom.op.name} moves {atom.dtype} elements, but the MMA's "
                         f"{operand} fragment holds {frg}")
    tiler = tuple(tiled_mma.tile_size_mnk(m) for m in modes)
    try:
        return TiledCopy(atom, tiled_mma.get_layout_TV(operand), tiler)
    except ValueError as e:
        raise ValueError(f"{op}: {atom.op.name} cannot serve the MMA's {operand} fragment "
                         f"({tiled_mma.atom.op.name}, tile {cute_str(tiler)}): {e}") from None


def make_tiled_copy_A(copy_atom, tiled_mma):
    """CuTe ``make_tiled_copy_A``: the copy that fills the MMA's A fragments (tile M x K)."""
    return _mma_copy("make_tiled_copy_A", copy_atom, tiled_mma, "A", (0, 2))


def make_tiled_copy_B(copy_atom, tiled_mma):
    """CuTe ``make_tiled_copy_B``: the copy that fills the MMA's B fragments (tile N x K)."""
    return _mma_copy("make_tiled_copy_B", copy_atom, tiled_mma, "B", (1, 2))


def make_tiled_copy_C(copy_atom, tiled_mma):
    """CuTe ``make_tiled_copy_C``: the copy of the MMA's C fragments (tile M x N)."""
    return _mma_copy("make_tiled_copy_C", copy_atom, tiled_mma, "C", (0, 1))


def make_tiled_copy(copy_atom, thr_layout=None, val_layout=None):
    """CuTe ``make_tiled_copy(atom, thr_layout, val_layout)``: threads and values laid over (M, N).

    ``thr_layout`` maps (m, n) to a thread index, ``val_layout`` (default ``_1:_0``) to a value
    index; their raked product gives the TV layout and the tiler.

    >>> atom = Copy_Atom(UniversalCopy(128), "f16")
    >>> tc = make_tiled_copy(atom, make_layout((32, 4), (4, 1)), make_layout((1, 8)))
    >>> cute_str(tc.Tiler_MN), str(tc.TiledLayout_TV)
    ('(_32,_32)', '((_4,_32),_8):((_256,_1),_32)')
    """
    if not isinstance(copy_atom, Copy_Atom):
        raise TypeError(f"make_tiled_copy: expected a Copy_Atom, got {copy_atom!r}")
    thr_layout = make_layout(1) if thr_layout is None else thr_layout
    val_layout = make_layout(1) if val_layout is None else val_layout
    for name, lay in (("thr_layout", thr_layout), ("val_layout", val_layout)):
        if not isinstance(lay, Layout) or not lay.is_static():
            raise ValueError(f"make_tiled_copy: {name} must be a static Layout, got {lay!r}")
    layout_mn = raked_product(thr_layout, val_layout)
    layout_tv = right_inverse(layout_mn).with_shape((size(thr_layout), size(val_layout)))
    tiler = it.product_each(shape(layout_mn))
    return TiledCopy(copy_atom, layout_tv, tiler)

