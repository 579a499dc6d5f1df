"""Tensor partitioning by tilers and thread layouts (``include/cute/tensor_impl.hpp``).

``zipped_divide`` splits a tensor into ``((tile modes), (rest modes))``. Slicing the rest modes
keeps one tile (``inner_partition``, ``local_tile``: a CTA's block of a matrix); slicing the tile
modes keeps one element of every tile (``outer_partition``, ``local_partition``: a thread's share
of a block). The projected forms take a step such as ``(1, X, 1)``: ``X`` is CuTe's alias of
``_`` (``using X = Underscore``), and the modes marked ``X`` are dropped from the tiler and the
coordinate with ``dice`` before partitioning.

Lane vectors: ``local_partition`` takes a lane vector of thread ids (as ``get_slice`` does) and
returns one tensor with per-lane offsets; a lane-vector tensor can be tiled by ``local_tile``.
A ``local_tile`` coordinate holding a lane vector is refused (``ValueError``): block coordinates
are the same for every lane of a warp.

Pre-conditions (``ValueError`` naming the function and operands): the tiler has no more modes
than the tensor; each tiler mode divides its tensor mode (also for run-time extents: warpsim does
not model CuTe's partial last tile); the coordinate has no more modes than the rest (or tile) and
lies inside it; a thread index is below the thread layout's size.

Examples::

    >>> gA = make_tensor(make_gmem_ptr(0, "f16"), make_layout((DInt(128), DInt(64)), (DInt(64), 1)))
    >>> str(local_tile(gA, (32, 16), (DInt(2), 1)).layout)
    '(_32,_16):(64,_1)'
    >>> local_tile(gA, (32, 16), (DInt(2), 1)).address(0)
    8224
    >>> str(local_tile(gA, (32, 64, 16), (DInt(2), DInt(0), _), (1, X, 1)).layout)
    '(_32,_16,4):(64,_1,_16)'
    >>> tA = local_partition(make_tensor(make_smem_ptr(0, "f32"), make_layout((16, 8))), make_layout((4, 8)), 9)
    >>> str(tA.layout), tA.address(0)
    ('(_4,_1):(_4,_0)', 132)
"""

import numpy as np

from warpsim.cute.integers import _, cute_str, is_int, is_tuple
from warpsim.cute import int_tuple as it
from warpsim.cute.lanes import has_lanes, is_lanes, lane_flat_coord
from warpsim.cute.layout import Layout, dice, is_layout, rank, shape, size
from warpsim.cute.tiling import zipped_divide
from warpsim.cute.tensor import is_tensor
from warpsim.cute.tiled_mma import thread_index

__all__ = ["X", "inner_partition", "outer_partition", "local_tile", "local_partition"]

X = _
"""CuTe's ``X`` (``using X = Underscore``): marks the modes a projection ``Step`` drops."""


def _describe(tensor):
    return f"{tensor.space} tensor {tensor._layout}"


def _tiler_size(t):
    return size(t) if is_layout(t) else it.product(t)


def _check_tiler(op, tensor, tiler):
    """The tiler fits the tensor's rank and divides each of its modes."""
    layout = tensor._layout
    if is_tuple(tiler):
        if len(tiler) > rank(layout):
            raise ValueError(f"{op}: rank mismatch: the tiler {cute_str(tiler)} has {len(tiler)} modes, "
                             f"the {_describe(tensor)} has {rank(layout)}")
        pairs = [(size(layout, i), t, i) for i, t in enumerate(tiler)]
    else:
        pairs = [(size(layout), tiler, None)]
    for extent, t, i in pairs:
        if t is _ or (is_tuple(t) and it.has_underscore(t)):
            raise ValueError(f"{op}: the tiler {cute_str(tiler)} holds _: zipped_divide needs a tile size "
                             f"in every mode (CuTe rejects it too)")
        if not (is_int(t) or is_layout(t) or is_tuple(t)):
            raise TypeError(f"{op}: a tiler mode must be an int, a shape or a Layout, got {t!r}")
        n = int(_tiler_size(t))
        if n <= 0 or int(extent) % n:
            where = "the tensor" if i is None else f"mode {i} of the tensor"
            raise ValueError(f"{op}: the tiler {cute_str(tiler)} does not divide {where} "
                             f"({cute_str(extent)} by {cute_str(t)}): {_describe(tensor)}")


def _check_in_range(op, coord, shape_, what, tensor):
    """Every integer (or lane-vector) leaf of ``coord`` lies inside ``shape_``."""
    bad = _outside(coord, shape_)
    if bad is not None:
        raise ValueError(f"{op}: {bad}: the coordinate {_show(coord)} for the {what} {cute_str(shape_)} "
                         f"of the {_describe(tensor)}")


def _outside(coord, shape_):
    """Why ``coord`` does not fit ``shape_`` (None if it does)."""
    if coord is _:
        return None
    if is_tuple(coord):
        if not is_tuple(shape_) or len(coord) > len(shape_):
            return "rank mismatch"
        return next((b for b in (_outside(c, s) for c, s in zip(coord, shape_)) if b is not None), None)
    values = np.asarray(coord) if isinstance(coord, np.ndarray) else int(coord)
    n = int(it.product(shape_))
    if np.any(values < 0) or np.any(values >= n):
        return f"{_show(coord)} is outside 0..{n - 1}"
    return None


def _show(coord):
    if isinstance(coord, np.ndarray):
        return str(coord.tolist())
    if is_tuple(coord):
        return "(" + ",".join(_show(c) for c in coord) + ")"
    return cute_str(coord)


def _check_coord(op, coord):
    if coord is _ or is_int(coord) or isinstance(coord, np.ndarray):
        return int(coord) if isinstance(coord, np.integer) else coord
    if is_tuple(coord):
        return tuple(_check_coord(op, c) for c in coord)
    raise TypeError(f"{op}: a coordinate must hold integers, _ and tuples, got {coord!r}")


def _divided(op, tensor, tiler):
    """``zipped_divide(tensor, tiler)``: the same data viewed as ((tile modes), (rest modes))."""
    if not is_tensor(tensor):
        raise TypeError(f"{op}: expected a Tensor, got {tensor!r}")
    _check_tiler(op, tensor, tiler)
    return tensor.with_layout(zipped_divide(tensor._layout, tiler), lambda t: _divided(op, t, tiler))


def _slice(tensor, coord, lanes, recipe):
    if lanes is None and tensor.lanes is None:
        return tensor.slice(coord)
    return tensor.slice(coord, lanes if lanes is not None else tensor.lanes, recipe)


def inner_partition(tensor, tiler, coord):
    """CuTe ``inner_partition``: ``zipped_divide(tensor, tiler)`` sliced at ``coord`` in the rest modes.

    Keeps one tile: the result's modes are the tile's. A tuple ``coord`` is padded with ``_``
    to the rest's rank (``_`` leaves keep their rest modes after the tile's); an integer
    ``coord`` is a 1-D index into the whole rest.

    >>> t = make_tensor(make_gmem_ptr(0, "f32"), make_layout((8, 6)))
    >>> str(inner_partition(t, (4, 3), (1, 1)).layout), inner_partition(t, (4, 3), 3).address(0)
    ('(_4,_3):(_1,_8)', 112)
    """
    return _inner("inner_partition", tensor, tiler, coord)


def _inner(op, tensor, tiler, coord):
    coord = _check_coord(op, coord)
    if has_lanes(coord):
        raise ValueError(f"{op}: a tile coordinate must be the same for every lane, got the lane vector "
                         f"coordinate {_show(coord)}; partition per thread with local_partition instead")
    tiled, coord, keep = _divided_at(op, tensor, tiler, coord, 1)
    return _slice(tiled, (keep, coord), None, lambda tid: _inner(op, tensor.at_thread(tid), tiler, coord))


def _divided_at(op, tensor, tiler, coord, mode):
    """``zipped_divide(tensor, tiler)``, ``coord`` checked against its mode ``mode`` (0: tile, 1: rest)
    and padded with ``_`` to that mode's rank, and the ``_`` that keeps the other mode."""
    tiled = _divided(op, tensor, tiler)
    extents, r = shape(tiled._layout, mode), rank(tiled._layout, mode)
    what = ("tile", "tile counts")[mode]
    if is_tuple(coord):
        if len(coord) > r:
            raise ValueError(f"{op}: rank mismatch: the coordinate {_show(coord)} has {len(coord)} modes, "
                             f"the {what} {cute_str(extents)} of the {_describe(tensor)} has {r}")
        coord = it.append(coord, _, n=r)
    _check_in_range(op, coord, extents, what, tensor)
    return tiled, coord, it.repeat(_, rank(tiled._layout, 1 - mode))


def outer_partition(tensor, tiler, coord):
    """CuTe ``outer_partition``: ``zipped_divide(tensor, tiler)`` sliced at ``coord`` in the tile modes.

    Keeps element ``coord`` of every tile: the result's modes are the rest's. A tuple
    ``coord`` is padded with ``_`` to the tile's rank; leaves may be lane vectors.

    >>> t = make_tensor(make_gmem_ptr(0, "f32"), make_layout((8, 6)))
    >>> str(outer_partition(t, (4, 3), (1, 2)).layout), outer_partition(t, (4, 3), (1, 2)).address(0)
    ('(_2,_2):(_4,_24)', 68)
    """
    return _outer("outer_partition", tensor, tiler, _check_coord("outer_partition", coord))


def _outer(op, tensor, tiler, coord, lanes=None, recipe=None):
    tiled, coord, keep = _divided_at(op, tensor, tiler, coord, 0)
    if lanes is None and has_lanes(coord):
        raise ValueError(f"{op}: a lane-vector coordinate needs its lane vector; use local_partition")
    if recipe is None:
        recipe = lambda tid: _outer(op, tensor.at_thread(tid), tiler, coord)
    return _slice(tiled, (coord, keep), lanes, recipe)


def local_tile(tensor, tiler, coord, proj=None):
    """CuTe ``local_tile(tensor, tiler, coord[, proj])``: the tile of ``tensor`` at block coordinate ``coord``.

    Equals ``inner_partition(tensor, tiler, coord)``. With a projection step ``proj`` (a tuple of
    ``1`` and ``X``), first ``tiler = dice(proj, tiler)`` and ``coord = dice(proj, coord)``: the
    ``X`` modes are dropped, so one (M, N, K) tiler and coordinate serve A (``(1, X, 1)``),
    B (``(X, 1, 1)``) and C (``(1, 1, X)``).

    >>> gC = make_tensor(make_gmem_ptr(0, "f32"), make_layout((64, 64)))
    >>> str(local_tile(gC, (32, 16, 8), (1, 2, _), (1, 1, X)).layout)
    '(_32,_16):(_1,_64)'
    >>> local_tile(gC, (32, 16, 8), (1, 2, _), (1, 1, X)).address(0)
    8320
    """
    if proj is not None:
        tiler, coord = _project("local_tile", proj, tiler, "tiler"), _project("local_tile", proj, coord, "coordinate")
    return _inner("local_tile", tensor, tiler, coord)


def _project(op, proj, x, what):
    if not is_tuple(proj) or not is_tuple(x) or len(proj) != len(x):
        raise ValueError(f"{op}: rank mismatch: the projection {cute_str(proj)} for the {what} {cute_str(x)}")
    return dice(proj, x)


def local_partition(tensor, thr_layout, thr_idx, proj=None):
    """CuTe ``local_partition(tensor, thr_layout, thr_idx[, proj])``: thread ``thr_idx``'s elements.

    ``outer_partition(tensor, product_each(shape(thr_layout)), thr_layout.get_flat_coord(thr_idx))``:
    the threads of ``thr_layout`` tile the tensor and each keeps its element of every tile. The
    thread index is a run-time integer (as CuTe's ``threadIdx``: a plain int becomes ``DInt``) or a
    lane vector of thread ids. ``proj`` (``(1, X, 1)``, ...) first replaces ``thr_layout`` by
    ``dice(proj, thr_layout)``.

    >>> sA = make_tensor(make_smem_ptr(0, "f16"), make_layout((16, 64), (64, 1)))
    >>> tA = local_partition(sA, make_layout((8, 4), (4, 1)), 5)
    >>> str(tA.layout), tA.address(0)
    ('(_2,_16):(_512,_4)', 130)
    """
    op = "local_partition"
    if not is_layout(thr_layout) or not isinstance(thr_layout, Layout):
        raise TypeError(f"{op}: the thread layout must be a Layout, got {thr_layout!r}")
    idx, full = thread_index(thr_idx, op), thr_layout
    n = int(size(thr_layout))
    if (idx >= n).any() if is_lanes(idx) else int(idx) >= n:
        shown = idx[idx >= n].tolist() if is_lanes(idx) else int(idx)
        raise ValueError(f"{op}: thread {shown} is not below the {n} threads of the thread layout {thr_layout}")
    if proj is not None:
        if not is_tuple(proj) or len(proj) != rank(thr_layout):
            raise ValueError(f"{op}: rank mismatch: the projection {cute_str(proj)} for the thread layout {thr_layout}")
        thr_layout = dice(proj, thr_layout)
    tiler = it.product_each(shape(thr_layout))
    if not is_lanes(idx):
        return _outer(op, tensor, tiler, thr_layout.get_flat_coord(idx))
    coord = lane_flat_coord(thr_layout, idx)
    coord = coord if is_tuple(thr_layout.shape) else coord[0]
    recipe = lambda tid: local_partition(tensor.at_thread(tid), full, tid, proj)
    return _outer(op, tensor, tiler, coord, idx, recipe)
