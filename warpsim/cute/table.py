"""Vectorised evaluation of layouts into integer tables (numpy, no per-element Python).

Later stages (register maps, shared-memory addressing) evaluate a layout once into an
``int64`` table and gather with it; these are the functions that build such tables, with
CuTe's ``crd2idx`` semantics (the last mode of an index is not wrapped).

Examples::

    >>> layout_table(make_layout((2, 3), (3, 1))).tolist()
    [0, 3, 1, 4, 2, 5]
    >>> eval_layout(Layout((2, 2), (4, 1)), np.array([0, 3, 4])).tolist()
    [0, 5, 2]
"""

import numpy as np

from warpsim.cute import int_tuple as it
from warpsim.cute.integers import cute_str, is_tuple
from warpsim.cute.layout import Layout, is_composed, is_layout, shape, size

__all__ = ["layout_table", "crd_table", "eval_layout"]


def _cdivmod(idx, p):
    """C++ truncating division and remainder of an int64 array by a positive integer."""
    q = np.abs(idx) // p
    q = np.where(idx < 0, -q, q)
    return q, idx - q * p


def _eval(shp, strd, idx):
    if is_tuple(shp):
        out = np.zeros(idx.shape, dtype=np.int64)
        for n, (s, d) in enumerate(zip(shp, strd)):
            if n == len(shp) - 1:
                out += _eval(s, d, idx)
            else:
                p = int(it.product(s))
                if p == 0:
                    raise ValueError(f"eval_layout: extent-0 mode in {cute_str(shp)}")
                idx, r = _cdivmod(idx, p)
                out += _eval(s, d, r)
        return out
    return idx * np.int64(int(strd))


def eval_layout(layout, idx):
    """Evaluate a layout at every index of the int64 array ``idx`` (vectorised ``layout(i)``).

    Indices beyond ``size(layout)`` extend the last mode, as CuTe's ``crd2idx`` does.
    """
    idx = np.asarray(idx, dtype=np.int64)
    if is_composed(layout):
        return layout.eval(idx)
    if not isinstance(layout, Layout):
        raise TypeError(f"eval_layout: expected a layout, got {layout!r}")
    return _eval(layout.shape, layout.stride, idx)


def layout_table(layout):
    """``numpy.int64[size(layout)]``: ``layout(i)`` for every 1-D index ``i``.

    Works for composed (swizzled) layouts too; computed with numpy, no per-element Python.

    >>> layout_table(Layout((2, 2), (4, 1))).tolist()
    [0, 4, 1, 5]
    """
    return eval_layout(layout, np.arange(int(size(layout)), dtype=np.int64))


def crd_table(shape_):
    """``numpy.int64[size, n]``: the flat colexicographic coordinate of every index of ``shape_``.

    Column ``k`` is the coordinate in the ``k``-th leaf of ``flatten(shape_)``.

    >>> crd_table((2, 3))[4].tolist()
    [0, 2]
    """
    if is_layout(shape_):
        shape_ = shape(shape_)
    flat = it.flatten_to_tuple(shape_)
    idx = np.arange(int(it.product(shape_)), dtype=np.int64)
    out = np.zeros((idx.size, len(flat)), dtype=np.int64)
    for k, s in enumerate(flat):
        s = int(s)
        out[:, k] = idx % s if s else 0
        idx = idx // s if s else idx
    return out
