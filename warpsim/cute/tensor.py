"""``Tensor``: an engine (where elements live) and a layout (``include/cute/tensor_impl.hpp``).

Three kinds of tensor, by engine (:mod:`warpsim.cute.pointer`):

* memory tensors on a shared/global :class:`~warpsim.cute.pointer.Pointer`: ``t.address(i)`` is the
  byte address of element ``i`` after any swizzle;
* register tensors on a :class:`~warpsim.cute.pointer.RegisterStorage`: ``t.address(i)`` is the
  storage SLOT of element ``i``; ``t[i]`` reads its raw bits and ``t[i] = v`` writes them;
* identity tensors (``make_identity_tensor``): ``t[i]`` is the coordinate element ``i`` holds.

Element ``i`` is a 1-D index (colexicographic) or a coordinate; a coordinate with ``_`` slices, as
CuTe's ``tensor(_, _, k)`` does (``t[_, _, k]`` and ``t(_, _, k)`` are the same).

Lane vectors. A tensor partitioned for a lane vector of thread ids (``get_slice(tid)`` with a
numpy array, see :mod:`warpsim.cute.lanes`) holds one offset per lane. Its addresses are arrays
(``address(i)``: ``int64[lanes]``; ``address_table()``: ``int64[lanes, size]``). On a swizzled
layout CuTe's per-thread layout decays into per-bit modes whose strides differ between threads;
a lane-vector tensor instead keeps the swizzle and evaluates ``base + A(inner + B(c))`` per lane,
which is the same function (tests check it lane by lane), and builds CuTe's exact per-thread
tensor only on request: ``t.lane(i)``. ``t.layout`` of a lane-vector tensor is the layout when
every lane has the same one; otherwise it raises ``ValueError`` pointing at ``t.lane(i)``.

Examples::

    >>> sK = make_tensor(make_smem_ptr(0, "f16"), tile_to_shape(
    ...     composition(Swizzle(3, 3, 3), make_layout((8, 64), (64, 1))), (64, 64)))
    >>> sK.address(1, 8), sK.address_table()[:3].tolist()
    (128, [0, 144, 288])
    >>> frag = make_tensor("f32", make_layout((2, 2)))
    >>> frag[3] = 7; frag.storage.tolist(), frag.address(1, 1)
    ([0, 0, 0, 7], 3)
    >>> ident = make_identity_tensor((4, 8))
    >>> ident[9], str(ident[_, 2])
    ((1, 2), 'ArithTuple(_0,_2) o (_4):(_1@0)')
"""

from functools import lru_cache

import numpy as np

from warpsim.cute.basis import ArithmeticTuple, ScaledBasis, as_arithmetic_tuple, coord_values
from warpsim.cute.composed import ComposedLayout
from warpsim.cute.integers import _, brief, cute_str, is_static, is_tuple
from warpsim.cute import int_tuple as it
from warpsim.cute.lanes import eval_crd, has_lanes
from warpsim.cute.layout import (
    check_coord, cosize, is_composed, is_layout, make_identity_layout, make_layout, rank, shape, size,
    slice_, slice_and_offset,
)
from warpsim.cute.numeric import check_dtype, dtype_bits
from warpsim.cute.pointer import (
    CoordEngine, Pointer, RegisterStorage,
)
from warpsim.cute.table import eval_layout, layout_table
from warpsim.cute.tiling import make_fragment_like as _fragment_layout
from warpsim.cute.swizzle import Swizzle

__all__ = ["Tensor", "make_tensor", "make_fragment_like", "make_identity_tensor", "is_tensor", "element_table",
           "memory_elements"]


# Element access on shared/global memory and registers (``t[i]``, ``t[i] = v``): the layer that traces
# programs pushes a handler with ``load(tensor, key)`` and ``store(tensor, key, value)`` while a program
# runs (a load instruction, a store instruction, register arithmetic); without one, memory elements are
# not readable and register elements are the storage's host bits.
_MEMORY_ELEMENTS = []


def memory_elements(handler):
    """Push (``handler`` an object) or pop (``None``) the handler of memory element access."""
    if handler is None:
        _MEMORY_ELEMENTS.pop()
    else:
        _MEMORY_ELEMENTS.append(handler)


def is_tensor(x):
    """True for a :class:`Tensor`."""
    return isinstance(x, Tensor)


class Tensor:
    """CuTe ``Tensor<Engine, Layout>``; see the module docstring for the three kinds and lane vectors.

    Build tensors with :func:`make_tensor`, :func:`make_fragment_like`, :func:`make_identity_tensor`
    and by partitioning; the constructor is internal.
    """

    __slots__ = ("_engine", "_layout", "_offset", "_inner", "_lanes", "_recipe")

    def __init__(self, engine, layout, offset=0, inner=None, lanes=None, recipe=None):
        self._engine = engine
        self._layout = layout
        self._offset = offset          # element offset (ArithmeticTuple for identity tensors)
        self._inner = inner            # lane vectors on a composed layout: offset inside it
        self._lanes = lanes            # int64 thread ids, or None for a single thread
        self._recipe = recipe          # tid -> this tensor for that one thread (CuTe's exact form)

    # -- what it is ---------------------------------------------------------------------------
    @property
    def engine(self):
        """The Pointer, RegisterStorage or CoordEngine the tensor views."""
        return self._engine

    data = engine

    @property
    def space(self):
        """``"smem"``, ``"gmem"``, ``"rmem"`` (registers) or ``"coord"`` (identity)."""
        if isinstance(self._engine, Pointer):
            return self._engine.space
        return "rmem" if isinstance(self._engine, RegisterStorage) else "coord"

    @property
    def dtype(self):
        """The element type name, or None for an identity tensor."""
        return getattr(self._engine, "dtype", None)

    @property
    def lanes(self):
        """The lane vector of thread ids this tensor was partitioned for, or None."""
        return self._lanes

    @property
    def storage(self):
        """The raw-bits numpy array of a register tensor (shared by its views)."""
        if not isinstance(self._engine, RegisterStorage):
            raise TypeError(f"Tensor.storage: only register tensors have storage; this one is in {self.space}")
        return self._engine.data

    @property
    def offset(self):
        """The element offset of element 0 from the engine's start (per lane for lane vectors)."""
        return self._offset

    @property
    def layout(self):
        """The tensor's layout (CuTe's, to the character); see the module docstring for lane vectors."""
        if self._inner is not None:
            raise ValueError("Tensor.layout: this lane-vector tensor's layout differs between lanes "
                             "(a sliced swizzle); use t.lane(i).layout for lane i")
        return self._layout

    @property
    def shape(self):
        return shape(self._layout)

    def size(self):
        return size(self._layout)

    def __len__(self):
        return int(self.size())

    @property
    def rank(self):
        return rank(self._layout)

    def lane(self, i):
        """The tensor of lane ``i`` alone, exactly as CuTe builds it for that thread."""
        if self._lanes is None:
            return self
        return self._recipe(int(self._lanes[i]))

    def at_thread(self, tid):
        """The tensor for thread ``tid`` alone (``tid`` must be one of the lanes for a lane vector)."""
        if self._lanes is None:
            return self
        if int(tid) not in self._lanes:
            raise ValueError(f"Tensor.at_thread: thread {tid} is not one of the lanes {brief(self._lanes)}")
        return self._recipe(int(tid))

    # -- slicing and elements -------------------------------------------------------------------
    def __call__(self, *coord):
        return self[coord[0] if len(coord) == 1 else tuple(coord)]

    def __getitem__(self, key):
        if it.has_underscore(key):
            return self.slice(key)
        if isinstance(self._engine, CoordEngine):
            return self._coord(key)
        if _MEMORY_ELEMENTS:
            return _MEMORY_ELEMENTS[-1].load(self, key)
        if isinstance(self._engine, RegisterStorage):
            return self._engine.data[self.address(key)]
        raise TypeError(f"Tensor: elements of a {self.space} tensor live in the simulated machine; "
                        f"use t.address(i) for their byte address (a traced program reads them with t[i])")

    def __setitem__(self, key, value):
        if isinstance(self._engine, (Pointer, RegisterStorage)) and _MEMORY_ELEMENTS:
            _MEMORY_ELEMENTS[-1].store(self, key, value)
            return
        if not isinstance(self._engine, RegisterStorage):
            raise TypeError(f"Tensor: only register tensor elements can be written here; this one is in {self.space} "
                            f"(a traced program writes memory elements with t[i] = u[j])")
        self._engine.data[self.address(key)] = value

    def slice(self, coord, lanes=None, recipe=None):
        """CuTe ``tensor(coord)`` with ``_`` in ``coord``: the sub-tensor of the ``_`` modes.

        ``coord`` leaves may be lane vectors (thread coordinates); the result then holds one
        offset per lane, and ``recipe(tid)`` must build the one-thread tensor for ``t.lane(i)``.
        """
        coord = _check_tensor_coord(coord)
        if self._lanes is None and not has_lanes(coord):
            sliced, off = _slice_and_offset(_typed_coord(coord), coord, self._layout)
            return Tensor(self._engine, sliced, _add(self._offset, off))
        if lanes is None:
            lanes = self._lanes
            parent = self
            recipe = lambda tid: parent.at_thread(tid).slice(coord)
        if lanes is None:
            raise ValueError("Tensor.slice: a lane-vector coordinate needs the lane vector it belongs to")
        layout = self._layout
        pattern = _pattern(coord)
        if is_composed(layout):
            inner = self._inner if self._inner is not None else int(layout.offset)
            b = layout.layout_b
            new_layout = _lane_composed(pattern, layout)
            return Tensor(self._engine, new_layout, _lane_array(self._offset, lanes),
                          _lane_array(inner, lanes) + eval_crd(coord, b.shape, b.stride), lanes, recipe)
        off = eval_crd(coord, layout.shape, layout.stride)
        if isinstance(self._engine, CoordEngine):
            new_offset = self._offset + off
        else:
            new_offset = _lane_array(self._offset, lanes) + off
        return Tensor(self._engine, _sliced(pattern, layout), new_offset, None, lanes, recipe)

    def with_layout(self, layout, recipe_fn=None):
        """The same engine and offsets viewed through ``layout`` (for lane vectors: per lane ``recipe_fn(t)``)."""
        recipe = None
        if self._lanes is not None:
            parent = self
            recipe = lambda tid: recipe_fn(parent.at_thread(tid))
        return Tensor(self._engine, layout, self._offset, self._inner, self._lanes, recipe)

    def compose(self, *layouts):
        """CuTe ``tensor.compose(layouts...)``: the same data through ``layout.compose(...)``."""
        return self.with_layout(self._layout.compose(*layouts), lambda t: t.compose(*layouts))

    # -- addresses ------------------------------------------------------------------------------
    def _index(self, key):
        """Element offset of ``key`` from the engine start (int, or int64[lanes])."""
        c = check_coord(f"{self}", key)
        layout = self._layout
        if self._inner is not None:
            a, b = layout.layout_a, layout.layout_b
            return self._offset + _apply_a(a, self._inner + int(b(c)))
        return _add_int(self._offset, layout(c))

    def address(self, *key):
        """Byte address (memory tensors) or storage slot (register tensors) of element ``key``.

        ``key`` is a 1-D index or a coordinate; for a lane-vector tensor the result is an
        ``int64`` array with one entry per lane.
        """
        key = key[0] if len(key) == 1 else tuple(key)
        if isinstance(self._engine, CoordEngine):
            raise TypeError("Tensor.address: an identity tensor holds coordinates; use t[i]")
        idx = self._index(key)
        if isinstance(self._engine, Pointer):
            return self._engine.address + idx * self._engine.element_bytes
        return idx

    def address_table(self):
        """Every element's byte address (memory) or slot (registers), in the tensor's 1-D order.

        ``int64[size]`` for a single thread, ``int64[lanes, size]`` for a lane vector.
        """
        if isinstance(self._engine, CoordEngine):
            raise TypeError("Tensor.address_table: an identity tensor holds coordinates; use coord_table()")
        return self.gather(np.arange(int(self.size()), dtype=np.int64))

    def gather(self, index, pre=None):
        """Addresses (memory) or slots (registers) of the elements with 1-D indices ``index``.

        ``index`` is an int64 array of any shape ``[..., V]``; a lane vector adds a lane axis
        before the last one: ``[..., lanes, V]``. ``pre`` may give
        ``element_table(layout, lane_form)[index]`` when the caller has it cached.
        """
        if pre is None:
            pre = element_table(self._layout, self._inner is not None)[index]
        if self._lanes is None:
            idx = pre + np.int64(int(self._offset))
        else:
            pre = pre[..., None, :]                            # [..., 1, V]
            outer = self._offset[:, None]                      # [lanes, 1]
            if self._inner is None:
                idx = outer + pre
            else:
                idx = outer + _apply_a(self._layout.layout_a, self._inner[:, None] + pre)
        if isinstance(self._engine, Pointer):
            return np.int64(self._engine.address) + idx * np.int64(self._engine.element_bytes)
        return idx

    def slot_table(self):
        """Every element's storage slot (register tensors): ``int64[size]``."""
        if not isinstance(self._engine, RegisterStorage):
            raise TypeError(f"Tensor.slot_table: only register tensors have slots; this one is in {self.space}")
        return self.address_table()

    def _coord(self, key):
        c = check_coord(f"{self}", key)
        value = self._offset + eval_crd(c, self._layout.shape, self._layout.stride)
        if self._lanes is None:
            return coord_values(value)
        return _lane_coord(value, self._lanes.size)

    def coord_table(self):
        """Identity tensors: the coordinate of every element, ``int64[size, r]`` (``[lanes, size, r]``).

        Column ``j`` is coordinate mode ``j`` (nested coordinates are flattened, outer mode first).
        """
        if not isinstance(self._engine, CoordEngine):
            raise TypeError("Tensor.coord_table: only identity tensors hold coordinates")
        n = int(self.size())
        value = eval_crd(np.arange(n, dtype=np.int64), self._layout.shape, self._layout.stride)
        if self._lanes is None:
            columns = _flat_columns(self._offset + value)
            return np.stack([np.broadcast_to(np.asarray(col, np.int64), (n,)) for col in columns], axis=-1)
        lanes = self._lanes.size
        columns = _flat_columns(_map_leaves(self._offset, lambda x: _column(x, lanes)) + value)
        return np.stack([np.broadcast_to(np.asarray(col, np.int64), (lanes, n)) for col in columns], axis=-1)

    # -- printing -------------------------------------------------------------------------------
    def __str__(self):
        if self._lanes is not None:
            where = f"{self._engine}".split("(")[0]
            body = self._layout if self._inner is None else "<lane-dependent layout: see t.lane(i)>"
            return f"{where}(lanes {brief(self._lanes, 4)}) o {body}"
        if isinstance(self._engine, CoordEngine):
            return f"ArithTuple{cute_str(self._offset)} o {self._layout}"
        if isinstance(self._engine, Pointer):
            p = self._engine
            return f"{p.space}_ptr[{dtype_bits(p.dtype)}b]({p.address + int(self._offset) * p.element_bytes:#x}) o {self._layout}"
        return f"rmem_ptr[{dtype_bits(self.dtype)}b](slot {int(self._offset)}) o {self._layout}"

    __repr__ = __str__


@lru_cache(maxsize=4096)
def _table(layout):
    """``layout_table(layout)``, computed once per layout (read-only)."""
    table = layout_table(layout)
    table.setflags(write=False)
    return table


def element_table(layout, lane_form=False):
    """Offsets of every element of ``layout`` (its layout B, before the swizzle, in lane form)."""
    return _table(layout.layout_b if lane_form else layout)


def _pattern(coord):
    """A coordinate with its lane vectors replaced by 0: the hashable key of its slice's layout."""
    if isinstance(coord, np.ndarray):
        return 0
    if is_tuple(coord):
        return tuple(_pattern(c) for c in coord)
    return coord


def _typed_coord(coord):
    """A hashable key of a coordinate that tells static from dynamic integers."""
    if is_tuple(coord):
        return tuple(_typed_coord(c) for c in coord)
    if coord is _:
        return "_"
    return (is_static(coord), int(coord))


_SLICES = {}


def _slice_and_offset(key, coord, layout):
    """CuTe's ``slice_and_offset``, memoised per (static/dynamic-typed coordinate, layout)."""
    entry = _SLICES.get((key, layout))
    if entry is None:
        if len(_SLICES) > 16384:
            _SLICES.clear()
        entry = _SLICES[(key, layout)] = slice_and_offset(coord, layout)
    return entry


@lru_cache(maxsize=4096)
def _sliced(pattern, layout):
    return slice_(pattern, layout)


@lru_cache(maxsize=4096)
def _lane_composed(pattern, layout):
    return ComposedLayout(layout.layout_a, 0, slice_(pattern, layout.layout_b))


def _check_tensor_coord(coord):
    if type(coord) is int or isinstance(coord, np.ndarray) or coord is _:
        return coord
    if is_tuple(coord):
        return tuple(_check_tensor_coord(c) for c in coord)
    if isinstance(coord, np.integer):
        return int(coord)
    return check_coord("Tensor", coord)


def _add(offset, off):
    if isinstance(offset, (ArithmeticTuple, ScaledBasis)) or isinstance(off, (ArithmeticTuple, ScaledBasis)):
        return offset + off
    return _add_int(offset, off)


def _add_int(offset, off):
    """Offset arithmetic in plain ints (CuTe's pointer + MixedBits/int offset is run-time arithmetic)."""
    if isinstance(offset, np.ndarray):
        return offset + int(off)
    return int(offset) + int(off)


def _lane_array(x, lanes):
    if isinstance(x, np.ndarray):
        return x
    return np.full(lanes.shape, int(x), dtype=np.int64)


def _apply_a(a, x):
    if isinstance(a, Swizzle):
        return a(np.asarray(x, dtype=np.int64)) if isinstance(x, np.ndarray) else a(int(x))
    return eval_layout(a, np.asarray(x, dtype=np.int64))


def _flat_columns(value):
    if isinstance(value, ArithmeticTuple):
        out = []
        for v in value.values:
            out.extend(_flat_columns(v))
        return out
    return [value]


def _map_leaves(value, fn):
    if isinstance(value, ArithmeticTuple):
        return ArithmeticTuple(_map_leaves(v, fn) for v in value.values)
    return fn(value)


def _column(x, lanes):
    """A per-lane offset as an ``int64[lanes, 1]`` column (broadcasts against element tables)."""
    if isinstance(x, np.ndarray):
        return x.reshape(lanes, 1)
    return np.full((lanes, 1), int(x), dtype=np.int64)


def _lane_coord(value, lanes):
    if isinstance(value, ArithmeticTuple):
        return tuple(_lane_coord(v, lanes) for v in value.values)
    if isinstance(value, np.ndarray):
        return value
    return np.full(lanes, int(value), dtype=np.int64)


@lru_cache(maxsize=4096)
def _owning_size(layout):
    if not is_static(layout):
        raise ValueError(f"make_tensor: an owning register tensor needs a static layout, got {layout}")
    return int(cosize(layout))


def _as_layout(op, args):
    if len(args) == 1 and is_layout(args[0]):
        return args[0]
    if not args:
        raise TypeError(f"{op}: needs a layout (or a shape and stride)")
    return make_layout(*args)


def make_tensor(engine, *layout_args):
    """CuTe ``make_tensor``: a tensor on ``engine`` with a layout (or ``make_layout(*layout_args)``).

    ``engine`` is a Pointer (``make_smem_ptr``/``make_gmem_ptr``), a RegisterStorage, a dtype
    name (an owning register tensor of ``cosize(layout)`` elements, CuTe's ``make_tensor<T>``;
    static layouts only), or a 1-D ``uint16``/``uint32`` numpy array used as register storage.

    >>> str(make_tensor(make_gmem_ptr(64, "f32"), (4, 2), (2, 1)))
    'gmem_ptr[32b](0x40) o (_4,_2):(_2,_1)'
    """
    layout = _as_layout("make_tensor", layout_args)
    if isinstance(engine, Pointer):
        return Tensor(engine, layout)
    if isinstance(engine, str):
        check_dtype("make_tensor", engine)
        return Tensor(RegisterStorage(engine, _owning_size(layout)), layout)
    if isinstance(engine, np.ndarray):
        kinds = {np.dtype(np.uint16): "u16", np.dtype(np.uint32): "u32"}
        if engine.ndim != 1 or engine.dtype not in kinds:
            raise ValueError(f"make_tensor: numpy storage must be a 1-D uint16 or uint32 array, "
                             f"got {engine.dtype} of shape {engine.shape}")
        engine = RegisterStorage(kinds[engine.dtype], engine.size, engine)
    if isinstance(engine, RegisterStorage):
        if int(cosize(layout)) > engine.size:
            raise ValueError(f"make_tensor: layout {layout} needs {cosize(layout)} slots, storage has {engine.size}")
        return Tensor(engine, layout)
    raise TypeError(f"make_tensor: expected a pointer, register storage, dtype name or numpy array, got {engine!r}")


def make_fragment_like(x, dtype=None):
    """CuTe ``make_fragment_like``: a register tensor shaped like ``x``, laid out for registers.

    For a tensor (or a layout with ``dtype``) the result is an owning register tensor whose
    layout is the fragment layout of ``x``'s layout (mode 0 compact, the rest ordered by
    ``make_ordered_layout``; a swizzled layout uses its layout B). Without ``dtype``, a layout
    or shape gives the fragment LAYOUT, as CuTe's layout overload does.

    >>> str(make_fragment_like(make_tensor(make_smem_ptr(0, "f16"), (4, 8), (8, 1))))
    'rmem_ptr[16b](slot 0) o (_4,(_8)):(_1,(_4))'
    """
    if isinstance(x, Tensor):
        if x.space == "coord" and dtype is None:
            raise ValueError("make_fragment_like: an identity tensor has no element type; pass dtype")
        layout = x.lane(0).layout if x.lanes is not None else x.layout
        return make_tensor(dtype or x.dtype, _fragment_layout(layout))
    if dtype is None:
        return _fragment_layout(x)
    return make_tensor(dtype, _fragment_layout(x))


def make_identity_tensor(shape_):
    """CuTe ``make_identity_tensor``: element ``c`` holds the coordinate ``c`` itself.

    >>> str(make_identity_tensor((64, 64)))
    'ArithTuple(_0,_0) o (_64,_64):(_1@0,_1@1)'
    """
    shape_ = it.check_int_tuple("make_identity_tensor", shape_, "shape")
    layout = make_identity_layout(shape_)
    return Tensor(CoordEngine(), layout, as_arithmetic_tuple(it.repeat_like(shape_, 0)))
