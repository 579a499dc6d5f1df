"""Differential tests against pycute (the pure-Python CuTe algebra in the nvidia-cutlass wheel).

pycute has no static integers and prints differently, so only the functions (values at every
index) are compared. pycute bugs and differences found (nvidia-cutlass 4.2.0.0):

* ``pycute.logical_product(A, n)`` with an integer tiler calls ``logical_divide`` (a typo), so
  integer tilers are not compared for products.
* ``Layout.__call__(None)`` (pycute's ``_``) returns the layout wrapped in a rank-1 tuple,
  ``((s)):((d))``, where CuTe's ``layout(_)`` is the layout itself.
* ``Layout.cosize()`` is ``L(size-1) + 1``, wrong for negative strides (CuTe uses
  ``(shape-1)*|stride|``); only non-negative strides are compared.
* ``logical_divide`` takes the complement up to ``size(A)`` where CuTe uses
  ``shape(coalesce(A))``; the values agree on CuTe's domain for the layouts below.
"""

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

pycute = pytest.importorskip("pycute")

from cute_strategies import compact_layouts, injective_layouts, layouts   # noqa: E402
from warpsim.cute import (   # noqa: E402
    Layout, coalesce, complement, composition, filter, layout_table, left_inverse, logical_divide,
    logical_product, right_inverse, size, tiled_divide, zipped_divide, zipped_product,
)

SETTINGS = settings(max_examples=120, deadline=None)


def to_py(layout):
    return pycute.Layout(_plain(layout.shape), _plain(layout.stride))


def _plain(t):
    return tuple(_plain(e) for e in t) if isinstance(t, tuple) else int(t)


def values(layout):
    return layout_table(layout).tolist()


def py_values(p):
    return [p(i) for i in range(pycute.size(p))]


@SETTINGS
@given(layouts(strides=(0, 1, 2, 3, 4, 6, 8)))
def test_coalesce_and_filter(a):
    assert values(coalesce(a)) == py_values(pycute.coalesce(to_py(a)))
    assert values(filter(a)) == py_values(pycute.filter(to_py(a)))


@SETTINGS
@given(layouts(), injective_layouts(extents=(1, 2, 4), gaps=(1, 2, 4), max_size=64))
def test_composition(a, b):
    assume(max(values(b)) < size(a))
    assert values(composition(a, b)) == py_values(pycute.composition(to_py(a), to_py(b)))


@SETTINGS
@given(injective_layouts(), st.integers(1, 3))
def test_complement(a, k):
    from warpsim.cute import cosize
    m = cosize(a) * k
    ours, theirs = values(complement(a, m)), py_values(pycute.complement(to_py(a), m))
    n = min(len(ours), len(theirs))
    assert ours[:n] == theirs[:n]


@SETTINGS
@given(compact_layouts())
def test_right_inverse(a):
    assert values(right_inverse(a)) == py_values(pycute.right_inverse(to_py(a)))


@SETTINGS
@given(injective_layouts(extents=(1, 2, 4), gaps=(1, 2, 4)))
def test_left_inverse_on_the_image(a):
    ours, theirs = left_inverse(a), pycute.left_inverse(to_py(a))
    assert [ours(a(i)) for i in range(size(a))] == [theirs(a(i)) for i in range(size(a))]


@SETTINGS
@given(compact_layouts(max_size=128), st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 2]))
def test_divides(a, n, d):
    # Beyond A's domain CuTe keeps A's function (coalesce_x) and pycute does not: stay inside.
    assume(n * d <= size(a))
    tiler = Layout(n, d)
    pt = pycute.Layout(n, d)
    assert values(logical_divide(a, tiler)) == py_values(pycute.logical_divide(to_py(a), pt))
    assert values(zipped_divide(a, tiler)) == py_values(pycute.zipped_divide(to_py(a), pt))
    assert values(tiled_divide(a, tiler)) == py_values(pycute.tiled_divide(to_py(a), pt))


@SETTINGS
@given(injective_layouts(extents=(1, 2, 4), gaps=(1, 2), max_size=16), compact_layouts(max_size=16))
def test_products(block, tiler):
    assert values(logical_product(block, tiler)) == py_values(pycute.logical_product(to_py(block), to_py(tiler)))
    assert values(zipped_product(block, tiler)) == py_values(pycute.zipped_product(to_py(block), to_py(tiler)))


def test_pycute_logical_product_with_an_integer_tiler_is_a_divide():
    # The pycute typo noted above, kept visible: warpsim's product repeats the block.
    ours = logical_product(Layout(2, 1), 3)
    assert values(ours) == [0, 1, 2, 3, 4, 5]
    theirs = pycute.logical_product(pycute.Layout(2, 1), 3)
    assert py_values(theirs) != values(ours)
