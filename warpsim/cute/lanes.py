"""Lane vectors: the thread ids of a warp as one numpy array, for tracing a warp in one pass.

A program is written per thread, as a CuTe kernel is; warpsim traces a whole warp at once by
passing ``tid`` as an ``int64`` array of the warp's thread ids (a *lane vector*). Thread-dependent
quantities (coordinates of a thread in a tiled MMA, offsets and addresses of its partitions)
become arrays with one entry per lane; thread-independent ones (layouts of register fragments,
copy views, slots) stay plain.

>>> warp_lanes(1)[:3].tolist(), is_lanes(warp_lanes(0)), is_lanes(5)
([32, 33, 34], True, False)
>>> [c.tolist() for c in lane_flat_coord(make_layout((32, 4)), np.array([0, 33, 127]))]
[[0, 1, 31], [0, 1, 3]]
>>> eval_crd((np.array([1, 2]), _), (4, 8), (8, 1)).tolist()
[8, 16]
"""

import numpy as np

from warpsim.cute.basis import ArithmeticTuple, ScaledBasis
from warpsim.cute.integers import _, brief, cute_str, is_int, is_tuple
from warpsim.cute import int_tuple as it
from warpsim.cute.layout import Layout
from warpsim.warp import WARP_SIZE

__all__ = ["is_lanes", "as_lanes", "warp_lanes", "has_lanes", "lane_flat_coord", "eval_crd"]


def is_lanes(x):
    """True for a lane vector: a 1-D numpy array of integers."""
    return isinstance(x, np.ndarray) and x.ndim == 1 and x.dtype.kind in "iu"


def as_lanes(x, op="lanes"):
    """``x`` as an ``int64`` lane vector; ``ValueError`` naming ``op`` for anything else."""
    if not is_lanes(x) or x.size == 0:
        raise ValueError(f"{op}: a lane vector must be a non-empty 1-D integer numpy array, got {brief(x)}")
    x = np.asarray(x, dtype=np.int64)     # a plain ndarray, also for subclasses (a program's lane vectors)
    if (x < 0).any():
        raise ValueError(f"{op}: negative thread id {int(x[x < 0][0])} in lane vector {brief(x)}")
    return x


def warp_lanes(warp, warp_size=WARP_SIZE):
    """The thread ids of warp ``warp``: ``warp*warp_size + arange(warp_size)``."""
    return np.arange(warp_size, dtype=np.int64) + np.int64(warp * warp_size)


def has_lanes(coord):
    """True if any leaf of a coordinate is a lane vector."""
    if isinstance(coord, np.ndarray):
        return True
    return is_tuple(coord) and any(has_lanes(c) for c in coord)


def lane_flat_coord(layout, tids):
    """Vectorised ``layout.get_flat_coord(tid)`` for a compact thread layout: one array per top mode.

    Pre-condition: every leaf of extent > 1 has a nonzero stride (the layout is a bijection onto
    its image, as a thread layout is); otherwise ``ValueError``.
    """
    out = []
    for mode_shape, mode_stride in zip(it.wrap(layout.shape), it.wrap(layout.stride)):
        flat = np.zeros(tids.shape, dtype=np.int64)
        scale = 1
        for s, d in zip(it.flatten_to_tuple(mode_shape), it.flatten_to_tuple(mode_stride)):
            s, d = int(s), int(d)
            if s != 1:
                if d == 0:
                    raise ValueError(f"lane_flat_coord: stride-0 mode of extent {s} in thread layout {layout}")
                flat += ((tids // d) % s) * scale
            scale *= s
        out.append(flat)
    return tuple(out)


def _leaf(c):
    if c is _:
        return 0
    if isinstance(c, np.ndarray):
        return np.asarray(c, dtype=np.int64)
    if isinstance(c, np.integer):
        return int(c)
    if is_int(c):
        return int(c)
    raise TypeError(f"eval_crd: a coordinate leaf must be an integer, _ or a lane vector, got {c!r}")


def _basis_scale(c, modes):
    if not modes:
        return c
    return ArithmeticTuple((0,) * modes[0] + (_basis_scale(c, modes[1:]),))


def _scale(c, d):
    if isinstance(c, int) and c == 0:
        return 0
    if isinstance(d, ScaledBasis):
        return _basis_scale(c * int(d.value), d.modes)
    if int(d) == 0:
        return 0
    return c * int(d)


def eval_crd(coord, shape, stride):
    """Vectorised ``crd2idx``: leaves of ``coord`` may be ints, ``_`` (as 0) or lane vectors.

    Returns an int, an ``int64`` array, or (for basis strides) an ArithmeticTuple whose leaves
    are ints or arrays. An integer coordinate for a tuple shape is split colexicographically
    (the last mode is not wrapped), as CuTe does. Integer strides go through a plan compiled
    once per (coordinate pattern, shape, stride): a constant plus ``(c // div % mod) * stride``
    terms per lane-vector leaf.
    """
    arrays = []
    key = _plan_key(coord, arrays)
    plan = _PLANS.get((key, shape, stride))
    if plan is None:
        plan = _compile(key, shape, stride)
        if len(_PLANS) > 8192:
            _PLANS.clear()
        _PLANS[(key, shape, stride)] = plan
    if plan is _GENERIC:
        return _eval_generic(coord, shape, stride)
    const, terms = plan
    total = const
    for leaf, div, mod, d in terms:
        c = arrays[leaf]
        if div != 1:
            c = c // div
        if mod is not None:
            c = c % mod
        total = total + c * d
    return total


_PLANS = {}
_GENERIC = object()


class _Leaf:
    """A lane-vector leaf of a coordinate pattern (its position among the arrays)."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def __hash__(self):
        return hash(("leaf", self.index))

    def __eq__(self, other):
        return isinstance(other, _Leaf) and other.index == self.index


def _plan_key(coord, arrays):
    if isinstance(coord, np.ndarray):
        arrays.append(np.asarray(coord, dtype=np.int64))
        return _Leaf(len(arrays) - 1)
    if is_tuple(coord):
        return tuple(_plan_key(c, arrays) for c in coord)
    return _leaf(coord)


def _compile(key, shape, stride):
    """(constant, [(leaf, div, mod, stride)]) for integer strides; _GENERIC if a basis is involved."""
    if any(isinstance(d, ScaledBasis) for d in it.flatten_to_tuple(stride)):
        return _GENERIC
    terms = []
    const = _compile_into(key, shape, stride, terms)
    return const, terms


def _compile_into(key, shape, stride, terms):
    if is_tuple(key):
        if not is_tuple(shape) or len(key) != len(shape):
            raise ValueError(f"eval_crd: coordinate of rank {len(key)} does not fit shape {cute_str(shape)}")
        return sum(_compile_into(k, s, d, terms) for k, s, d in zip(key, shape, stride))
    if isinstance(key, _Leaf):
        _split(key.index, 1, None, shape, stride, terms)
        return 0
    return int(eval_crd_generic_int(key, shape, stride))


def _split(leaf, div, mod, shape, stride, terms):
    """Terms of leaf coordinate ``(c // div) % mod`` (no modulo when ``mod`` is None) split over ``shape``."""
    if is_tuple(shape):
        for n, (s, d) in enumerate(zip(shape, stride)):
            p = int(it.product(s))
            last = n == len(shape) - 1
            _split(leaf, div, mod if last else p, s, d, terms)
            div *= p
            if mod is not None and not last:
                mod = mod // p if mod % p == 0 else mod
        return
    if int(stride) != 0:
        terms.append((leaf, div, mod, int(stride)))


def eval_crd_generic_int(c, shape, stride):
    """``crd2idx`` of a plain int coordinate (used while compiling plans)."""
    return _eval_generic(c, shape, stride)


def _eval_generic(coord, shape, stride):
    if is_tuple(coord):
        if not is_tuple(shape) or len(coord) != len(shape):
            raise ValueError(f"eval_crd: coordinate of rank {len(coord)} does not fit shape {cute_str(shape)}")
        total = 0
        for c, s, d in zip(coord, shape, stride):
            term = _eval_generic(c, s, d)
            total = term if (isinstance(total, int) and total == 0) else total + term
        return total
    c = _leaf(coord)
    if is_tuple(shape):
        total = 0
        for n, (s, d) in enumerate(zip(shape, stride)):
            if n == len(shape) - 1:
                term = _eval_generic(c, s, d)
            else:
                p = int(it.product(s))
                term = _eval_generic(c % p, s, d)
                c = c // p
            total = term if (isinstance(total, int) and total == 0) else total + term
        return total
    return _scale(c, stride)


def eval_layout_crd(layout, coord):
    """``eval_crd`` on a plain :class:`~warpsim.cute.layout.Layout`."""
    if not isinstance(layout, Layout):
        raise TypeError(f"eval_crd: expected a Layout, got {layout!r}")
    return eval_crd(coord, layout.shape, layout.stride)
