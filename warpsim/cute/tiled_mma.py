"""``TiledMMA`` and ``ThrMMA``: MMA atoms tiled over threads and values (``include/cute/atom/mma_atom.hpp``).

CuTe 4.x semantics: ``make_tiled_mma(atom, thr_layout, permutations)`` lays ``size(thr_layout)``
copies of the atom's threads over (M, N, K) (``ThrLayoutVMNK = tiled_product(ThrID, thr_layout)``)
and tiles (M, N, K) by ``permutations`` (a tuple of static ints or layouts, ``_`` for the atom's
natural size; CuTe's ``Tile<_64,_16,_16>`` is ``(64, 16, 16)``). ``thrfrg_A/B/C`` reshape a
layout into ((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK))); a thread's slice picks its thread
coordinates out of that.

Thread ids are run-time values in a kernel (``threadIdx.x``): ``get_slice`` makes a plain int
dynamic, as CuTe's ``int`` is. A lane vector (numpy array of thread ids) gives lane-vector
partitions (see :mod:`warpsim.cute.tensor`). Everything thread-independent (the thrfrg layouts,
fragment layouts) is computed once and cached.

Examples::

    >>> tiled_mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN(), make_layout((4, 1, 1)), (64, 16, 16))
    >>> str(tiled_mma.get_thr_layout_vmnk()), tile_shape(tiled_mma)
    ('(_32,_4,_1,_1):(_1,_32,_0,_0)', (64, 16, 16))
    >>> str(tiled_mma.get_layoutB_TV())
    '((_4,_8,_4),((_2,_2),(_2,_1))):((_32,_1,_0),((_16,_128),(_8,_0)))'
    >>> str(partition_fragment_C(tiled_mma, (64, 64)).layout)
    '((_2,_2),_1,_8):((_1,_2),_0,_4)'
"""

from functools import lru_cache

import numpy as np

from warpsim.cute.integers import DInt, _, brief, cute_str, is_int, is_static, is_tuple
from warpsim.cute import int_tuple as it
from warpsim.cute.lanes import as_lanes, is_lanes, lane_flat_coord
from warpsim.cute.layout import Layout, append, is_layout, make_layout, rank, shape, size
from warpsim.cute.algebra import composition, complement, right_inverse
from warpsim.cute.tiling import logical_divide, tiled_product, zipped_divide
from warpsim.cute.mma_atom import MMA_Atom
from warpsim.cute.atoms.base import MMAOperation
from warpsim.cute.tensor import Tensor, is_tensor, make_tensor
from warpsim.cute.tiling import make_fragment_like as fragment_layout

__all__ = [
    "TiledMMA", "ThrMMA", "make_tiled_mma", "partition_fragment_C", "partition_shape_A",
    "partition_shape_B", "partition_shape_C", "tile_size", "tile_shape", "thr_size", "thread_index",
]

# operand -> (the two MNK modes it spans, the thread-layout modes that pick its threads)
_OPERAND_MODES = {"A": (0, 2), "B": (1, 2), "C": (0, 1)}


def thread_index(tid, op):
    """A thread index as CuTe sees it: a run-time int (``DInt``), or a lane vector (``int64`` array)."""
    if is_lanes(tid):
        return as_lanes(tid, op)
    if isinstance(tid, np.integer):
        tid = int(tid)
    if not is_int(tid):
        raise TypeError(f"{op}: a thread index must be an integer or a lane vector, got {tid!r}")
    if tid < 0:
        raise ValueError(f"{op}: negative thread index {tid}")
    return DInt(tid)


class TiledMMA:
    """CuTe ``TiledMMA<Atom, AtomLayoutMNK, PermutationMNK>`` (immutable, hashable)."""

    __slots__ = ("atom", "thr_layout_mnk", "permutation", "_vmnk", "_hash")

    def __init__(self, atom, thr_layout_mnk, permutation):
        if not isinstance(atom, MMA_Atom):
            raise TypeError(f"TiledMMA: expected an MMA_Atom, got {atom!r}")
        if not isinstance(thr_layout_mnk, Layout) or rank(thr_layout_mnk) != 3 or not thr_layout_mnk.is_static():
            raise ValueError(f"TiledMMA: the thread layout must be a static rank-3 layout, got {thr_layout_mnk}")
        if not is_tuple(permutation) or len(permutation) != 3:
            raise ValueError(f"TiledMMA: the permutation must have 3 modes (M,N,K), got {permutation!r}")
        for p in permutation:
            if not (p is _ or (is_int(p) and is_static(p) and p > 0) or (is_layout(p) and is_static(p))):
                raise ValueError(f"TiledMMA: permutation modes must be static ints, static layouts or _, got {p!r}")
        object.__setattr__(self, "atom", atom)
        object.__setattr__(self, "thr_layout_mnk", thr_layout_mnk)
        object.__setattr__(self, "permutation", tuple(permutation))
        object.__setattr__(self, "_vmnk", tiled_product(atom.ThrID, thr_layout_mnk))
        object.__setattr__(self, "_hash", hash(self._key()))

    def __setattr__(self, name, value):
        raise AttributeError(f"TiledMMA is immutable: cannot set {name}")

    def _key(self):
        return (self.atom, self.thr_layout_mnk, tuple(str(p) if p is _ else p for p in self.permutation))

    def __eq__(self, other):
        return isinstance(other, TiledMMA) and self._key() == other._key()

    def __hash__(self):
        return self._hash

    # -- CuTe's accessors ---------------------------------------------------------------------
    def get_thr_layout_vmnk(self):
        """``(ThrV, ThrM, ThrN, ThrK) -> thread index``."""
        return self._vmnk

    def permutation_mnk(self, i):
        """The tile of mode ``i`` (M, N, K): the permutation, or ``atom size * threads`` for ``_``."""
        perm = self.permutation[i]
        if perm is _:
            return self.atom.Shape_MNK[i] * size(self._vmnk, i + 1)
        return perm

    def tile_size_mnk(self, i):
        """``size(permutation_mnk(i))``."""
        return size(self.permutation_mnk(i))

    def size(self):
        """Number of threads: ``size(ThrLayoutVMNK)``."""
        return int(size(self._vmnk))

    # -- thrfrg: (M,N)-like layouts to ((ThrV,(Thr..)),(FrgV,(Rest..))) ---------------------------
    def thrfrg(self, operand, layout):
        """CuTe ``thrfrg_A/B/C(layout)`` for ``operand`` in ``"A"``, ``"B"``, ``"C"`` (cached)."""
        return _thrfrg(self, operand, layout)

    def thrfrg_A(self, layout):
        return self.thrfrg("A", layout)

    def thrfrg_B(self, layout):
        return self.thrfrg("B", layout)

    def thrfrg_C(self, layout):
        return self.thrfrg("C", layout)

    def get_layoutA_TV(self):
        """(thread index, value) -> (m, k) index in the tile_size(M) x tile_size(K) tile."""
        return _layout_tv(self, "A")

    def get_layoutB_TV(self):
        """(thread index, value) -> (n, k) index in the tile_size(N) x tile_size(K) tile."""
        return _layout_tv(self, "B")

    def get_layoutC_TV(self):
        """(thread index, value) -> (m, n) index in the tile_size(M) x tile_size(N) tile."""
        return _layout_tv(self, "C")

    def get_layout_TV(self, operand):
        return _layout_tv(self, operand)

    def get_slice(self, tid):
        """CuTe ``get_slice(thr_idx)``: the :class:`ThrMMA` of thread ``tid`` (or of a lane vector)."""
        return ThrMMA(self, thread_index(tid, "TiledMMA.get_slice"))

    get_thread_slice = get_slice

    def fragment_layout(self, operand, layout):
        """The register layout ``partition_fragment_{operand}`` gives for a tensor of ``layout`` (cached).

        Thread-independent: computed once from thread 0's partition (CuTe's fragment layout
        depends only on which strides of the partition are static, never on the thread).
        """
        return _fragment_layout(self, operand, layout)

    def __str__(self):
        perm = cute_str(tuple(self.permutation))
        return ("TiledMMA\n"
                f"  ThrLayoutVMNK:  {self._vmnk}\n"
                f"  PermutationMNK: {perm}\n" + str(self.atom))

    def __repr__(self):
        return (f"make_tiled_mma({self.atom.op.name}(), {self.thr_layout_mnk}, "
                f"{cute_str(tuple(self.permutation))})")


def _check_divides(op, tiled, operand, layout):
    modes = _OPERAND_MODES[operand]
    if rank(layout) < 2:
        raise ValueError(f"{op}: expected a tensor of rank >= 2, got shape {cute_str(shape(layout))}")
    tile = tuple(tiled.tile_size_mnk(m) for m in modes)
    for i, t in enumerate(tile):
        extent = size(layout, i)
        if is_static(extent) and int(extent) % int(t):
            raise ValueError(f"{op}: the TiledMMA tile {cute_str(tile)} ({'MNK'[modes[0]]}x{'MNK'[modes[1]]}) "
                             f"does not divide the tensor shape {cute_str(shape(layout))}")


@lru_cache(maxsize=1024)
def _thrfrg(tiled, operand, layout):
    if operand not in _OPERAND_MODES:
        raise ValueError(f"TiledMMA.thrfrg: operand must be 'A', 'B' or 'C', got {operand!r}")
    i, j = _OPERAND_MODES[operand]
    atom = tiled.atom
    vmnk = tiled.get_thr_layout_vmnk()
    t_tensor = logical_divide(layout, (tiled.permutation_mnk(i), tiled.permutation_mnk(j)))  # (PermI,PermJ)
    a_tile = (make_layout(atom.Shape_MNK[i]), make_layout(atom.Shape_MNK[j]))
    a_tensor = zipped_divide(t_tensor, a_tile)                      # ((AtomI,AtomJ),(RestI,RestJ))
    tv_tensor = a_tensor.compose(atom.layout_tv(operand), _)        # ((ThrV,FrgV),(RestI,RestJ))
    thr_tile = (_, (make_layout(size(vmnk, i + 1)), make_layout(size(vmnk, j + 1))))
    return zipped_divide(tv_tensor, thr_tile)                      # ((ThrV,(ThrI,ThrJ)),(FrgV,(RestI,RestJ)))


def _thridx_2_thrid(vmnk):
    """thr_idx -> (ThrV,ThrM,ThrN,ThrK) (CuTe's get_layout*_TV helper)."""
    return composition(Layout((size(vmnk), 1), (1, 0)),
                       right_inverse(make_layout(vmnk, complement(vmnk))))


@lru_cache(maxsize=256)
def _layout_tv(tiled, operand):
    i, j = _OPERAND_MODES.get(operand, (None, None))
    if i is None:
        raise ValueError(f"TiledMMA.get_layout_TV: operand must be 'A', 'B' or 'C', got {operand!r}")
    vmnk = tiled.get_thr_layout_vmnk()
    ref = make_layout((tiled.tile_size_mnk(i), tiled.tile_size_mnk(j)))
    frg = tiled.thrfrg(operand, ref)
    if operand == "A":      # (ThrV,(ThrM,ThrK)) -> (ThrV,(ThrM,ThrN,ThrK))
        frg = frg.compose((_, (Layout((size(vmnk, 1), size(vmnk, 2)), (1, 0)), _)), _)
    elif operand == "B":    # (ThrV,(ThrN,ThrK)) -> (ThrV,(ThrM,ThrN,ThrK))
        frg = frg.compose((_, (Layout((size(vmnk, 1), size(vmnk, 2)), (0, 1)), _)), _)
    return frg.compose(_thridx_2_thrid(vmnk), _)


@lru_cache(maxsize=1024)
def _fragment_layout(tiled, operand, layout):
    probe = Tensor(None, layout)
    part = ThrMMA(tiled, DInt(0))._partition(operand, probe, "partition_fragment")
    return fragment_layout(part.layout)


class ThrMMA:
    """CuTe ``ThrMMA``: a TiledMMA and one thread's (ThrV, ThrM, ThrN, ThrK) coordinate (or a lane vector's)."""

    __slots__ = ("tiled_mma", "thr_idx", "thr_vmnk")

    def __init__(self, tiled_mma, thr_idx):
        self.tiled_mma = tiled_mma
        self.thr_idx = thr_idx
        vmnk = tiled_mma.get_thr_layout_vmnk()
        if is_lanes(thr_idx):
            n = tiled_mma.size()
            if (thr_idx >= n).any():
                raise ValueError(f"TiledMMA.get_slice: thread ids {brief(thr_idx[thr_idx >= n])} are not "
                                 f"below the TiledMMA's {n} threads")
            self.thr_vmnk = lane_flat_coord(vmnk, thr_idx)
        else:
            if int(thr_idx) >= tiled_mma.size():
                raise ValueError(f"TiledMMA.get_slice: thread {int(thr_idx)} is not below the TiledMMA's "
                                 f"{tiled_mma.size()} threads")
            self.thr_vmnk = vmnk.get_flat_coord(thr_idx)

    def _partition(self, operand, tensor, op):
        if not is_tensor(tensor):
            raise TypeError(f"ThrMMA.{op}: expected a Tensor, got {tensor!r}")
        tiled = self.tiled_mma
        _check_divides(f"ThrMMA.{op}_{operand}", tiled, operand, tensor._layout)
        thr_layout = tiled.thrfrg(operand, tensor._layout)
        v, m, n, k = self.thr_vmnk
        thr = {"A": (v, (m, k)), "B": (v, (n, k)), "C": (v, (m, n))}[operand]
        coord = (thr, (_, it.repeat(_, rank(thr_layout, 1, 1))))
        viewed = tensor.with_layout(thr_layout, lambda t: t.with_layout(tiled.thrfrg(operand, t._layout)))
        if not is_lanes(self.thr_idx) and tensor.lanes is None:
            return viewed.slice(coord)
        lanes = self.thr_idx if is_lanes(self.thr_idx) else tensor.lanes
        return viewed.slice(coord, lanes, lambda tid: tiled.get_slice(tid)._partition(operand, tensor.at_thread(tid), op))

    def partition_A(self, tensor):
        """CuTe ``partition_A``: this thread's (MMA, MMA_M, MMA_K) part of an (M, K) tensor."""
        return self._partition("A", tensor, "partition")

    def partition_B(self, tensor):
        """CuTe ``partition_B``: this thread's (MMA, MMA_N, MMA_K) part of an (N, K) tensor."""
        return self._partition("B", tensor, "partition")

    def partition_C(self, tensor):
        """CuTe ``partition_C``: this thread's (MMA, MMA_M, MMA_N) part of an (M, N) tensor."""
        return self._partition("C", tensor, "partition")

    def _fragment(self, operand, tensor):
        if not is_tensor(tensor):
            raise TypeError(f"ThrMMA.partition_fragment_{operand}: expected a Tensor, got {tensor!r}")
        layout = tensor._layout if tensor._inner is None else tensor.lane(0).layout
        frag = self.tiled_mma.fragment_layout(operand, layout)
        return make_tensor(self.tiled_mma.atom.frg_type(operand), frag)

    def partition_fragment_A(self, tensor):
        """CuTe ``partition_fragment_A``: a register fragment (FrgTypeA) shaped like ``partition_A(tensor)``."""
        return self._fragment("A", tensor)

    def partition_fragment_B(self, tensor):
        """CuTe ``partition_fragment_B``: a register fragment (FrgTypeB) shaped like ``partition_B(tensor)``."""
        return self._fragment("B", tensor)

    def partition_fragment_C(self, tensor):
        """CuTe ``partition_fragment_C``: an accumulator fragment (FrgTypeC) of ``partition_C``'s shape."""
        return make_tensor(self.tiled_mma.atom.FrgTypeC, make_layout(self._partition("C", tensor, "partition").shape))

    def __str__(self):
        return "ThrMMA\n  Thr VMNK: " + cute_str(tuple(self.thr_vmnk)) + "\n" + str(self.tiled_mma)


def make_tiled_mma(atom, thr_layout=None, permutations=None):
    """CuTe ``make_tiled_mma(atom, thr_layout = (1,1,1), permutations = (_,_,_))``.

    ``atom`` is an MMA_Atom or an MMA operation; ``thr_layout`` a static layout of rank <= 3 (padded
    with ``_1:_0``); ``permutations`` a tuple of static ints/layouts/``_`` of length <= 3 (padded
    with ``_``).
    """
    if isinstance(atom, (MMAOperation, type)):
        atom = MMA_Atom(atom)
    if not isinstance(atom, MMA_Atom):
        raise TypeError(f"make_tiled_mma: expected an MMA atom or operation, got {atom!r}")
    thr_layout = make_layout((1, 1, 1)) if thr_layout is None else thr_layout
    if not isinstance(thr_layout, Layout):
        raise TypeError(f"make_tiled_mma: the thread layout must be a Layout, got {thr_layout!r}")
    if rank(thr_layout) > 3:
        raise ValueError(f"make_tiled_mma: the thread layout has more than 3 modes: {thr_layout}")
    thr_mnk = append(thr_layout, Layout(1, 0), n=3)
    perm = (_, _, _) if permutations is None else permutations
    if not is_tuple(perm):
        perm = (perm,)
    if len(perm) > 3:
        raise ValueError(f"make_tiled_mma: more than 3 permutation modes: {perm!r}")
    perm = tuple(perm) + (_,) * (3 - len(perm))
    return TiledMMA(atom, thr_mnk, perm)


def _typed(t):
    """A hashable key of an IntTuple that tells static from dynamic integers."""
    return tuple(_typed(e) for e in t) if is_tuple(t) else (is_static(t), int(t))


def _check_tiled(op, tiled):
    if not isinstance(tiled, TiledMMA):
        raise TypeError(f"{op}: expected a TiledMMA, got {tiled!r}")


def _partition_shape(op, tiled, operand, shape_):
    _check_tiled(op, tiled)
    shape_ = it.check_int_tuple(op, shape_, "shape")
    return _partition_shape_cached(op, tiled, operand, _typed(shape_), shape_)


@lru_cache(maxsize=256)
def _partition_shape_cached(op, tiled, operand, _key, shape_):
    dummy = make_layout(shape_)
    _check_divides(op, tiled, operand, dummy)
    tv = tiled.thrfrg(operand, dummy)
    return shape(tv(0, (_, it.repeat(_, rank(dummy)))))


def partition_shape_A(tiled_mma, shape_mk):
    """CuTe ``partition_shape_A``: the shape of one thread's ``partition_A`` of an (M, K) tensor."""
    return _partition_shape("partition_shape_A", tiled_mma, "A", shape_mk)


def partition_shape_B(tiled_mma, shape_nk):
    """CuTe ``partition_shape_B``: the shape of one thread's ``partition_B`` of an (N, K) tensor."""
    return _partition_shape("partition_shape_B", tiled_mma, "B", shape_nk)


def partition_shape_C(tiled_mma, shape_mn):
    """CuTe ``partition_shape_C``: the shape of one thread's ``partition_C`` of an (M, N) tensor."""
    return _partition_shape("partition_shape_C", tiled_mma, "C", shape_mn)


def partition_fragment_C(tiled_mma, shape_mn):
    """CuTe ``partition_fragment_C(tiled_mma, shape_MN)``: an accumulator fragment (FrgTypeC)."""
    return make_tensor(tiled_mma.atom.FrgTypeC, make_layout(partition_shape_C(tiled_mma, shape_mn)))


def tile_size(tiled_mma, i):
    """CuTe ``tile_size<I>(tiled_mma)``."""
    _check_tiled("tile_size", tiled_mma)
    return tiled_mma.tile_size_mnk(i)


def tile_shape(tiled_mma):
    """CuTe ``tile_shape(tiled_mma)``: ``(tile_size<0>, tile_size<1>, tile_size<2>)``."""
    _check_tiled("tile_shape", tiled_mma)
    return tuple(tiled_mma.tile_size_mnk(i) for i in range(3))


def thr_size(tiled_mma):
    """CuTe ``size(tiled_mma)``: the number of threads."""
    _check_tiled("thr_size", tiled_mma)
    return tiled_mma.size()
