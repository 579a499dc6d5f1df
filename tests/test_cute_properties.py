"""Post-conditions of warpsim.cute's layout algebra, on hypothesis-generated static layouts.

Each property is the contract CuTe states for the operation (include/cute/layout.hpp), checked
element by element with the layout's own evaluation (``layout_table`` and ``__call__`` agree).
"""

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cute_strategies import compact_layouts, injective_layouts, layouts, shapes
from warpsim.cute import (
    DInt, Layout, Swizzle, blocked_product, coalesce, complement, composition, cosize, depth,
    filter, flat_divide, idx2crd, crd2idx, is_static, layout_table, left_inverse, logical_divide,
    logical_product, make_layout, make_ordered_layout, raked_product, rank, right_inverse,
    size, slice_and_offset, tile_to_shape, tiled_divide, zipped_divide, _,
)

SETTINGS = settings(max_examples=150, deadline=None)


def table(layout):
    return layout_table(layout).tolist()


@SETTINGS
@given(layouts())
def test_table_matches_call(a):
    assert table(a) == [a(i) for i in range(size(a))]


@SETTINGS
@given(shapes(), st.data())
def test_crd2idx_idx2crd_roundtrip(shp, data):
    i = data.draw(st.integers(0, size(Layout(shp)) - 1))
    assert crd2idx(idx2crd(i, shp), shp) == i


@SETTINGS
@given(layouts(), injective_layouts(extents=(1, 2, 4), gaps=(1, 2, 4), max_size=64))
def test_composition_is_function_composition(a, b):
    # CuTe's contract: B is admissible (here: injective with power-of-two spans) and its image
    # lies in A's domain; composition distributes over B's modes.
    assume(max(table(b)) < size(a))
    r = composition(a, b)
    assert size(r) == size(b)
    assert table(r) == [a(b(i)) for i in range(size(b))]


@SETTINGS
@given(layouts(), st.data())
def test_composition_by_mode_tiler(a, data):
    tiler = tuple(data.draw(st.sampled_from([_, 1, 2])) for _m in range(rank(a)))
    tiler = tuple(t if t is _ or t <= size(a, i) else _ for i, t in enumerate(tiler))
    r = composition(a, tiler)
    for i, t in enumerate(tiler):
        mode = Layout(a.shape[i], a.stride[i]) if isinstance(a.shape, tuple) else a
        want = table(mode) if t is _ else [mode(j) for j in range(t)]
        assert table(Layout(r.shape[i], r.stride[i]) if isinstance(r.shape, tuple) else r) == want


@SETTINGS
@given(layouts(strides=(0, 1, 2, 3, 4, 6, 8)))
def test_coalesce_and_filter(a):
    c = coalesce(a)
    assert size(c) == size(a) and depth(c) <= 1
    assert table(c) == table(a)
    f = filter(a)
    assert set(table(f)) == set(table(a)), "filter keeps the image"
    dropped = 1
    for s, d in zip(_flat(a.shape), _flat(a.stride)):
        dropped *= s if d == 0 else 1
    assert size(f) == size(a) // dropped, "filter drops exactly the stride-0 modes"


@SETTINGS
@given(injective_layouts(), st.integers(1, 4))
def test_complement_disjoint_and_covering(a, k):
    m = cosize(a) * k
    c = complement(a, m)
    image_a, image_c = set(table(a)), table(c)
    assert image_c == sorted(image_c), "complement is ordered"
    assert image_a & set(image_c) == {0}, "complement meets the layout only at 0"
    both = table(make_layout(a, c))
    assert len(set(both)) == len(both), "(layout, complement) is injective"
    assert set(range(m)) <= set(both), "(layout, complement) covers the cotarget"
    assert size(c) >= m // size(filter(a))


@SETTINGS
@given(layouts(extents=(1, 2, 4), strides=(0, 1, 2, 4, 8, 16)))
def test_right_inverse(a):
    r = right_inverse(a)
    assert [a(r(i)) for i in range(size(r))] == list(range(size(r)))


@SETTINGS
@given(compact_layouts())
def test_right_inverse_of_bijection_is_full(a):
    r = right_inverse(a)
    assert size(r) == size(a)
    assert table(composition(a, r)) == list(range(size(a)))


@SETTINGS
@given(injective_layouts(extents=(1, 2, 4), gaps=(1, 2, 4)))
def test_left_inverse(a):
    li = left_inverse(a)
    assert [li(a(i)) for i in range(size(a))] == list(range(size(a)))


@SETTINGS
@given(compact_layouts(max_size=128), st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 2, 4]))
def test_divide_shapes_and_values(a, n, d):
    tiler = Layout(n, d)
    ld = logical_divide(a, tiler)
    full = make_layout(tiler, complement(tiler, size(a)))
    assert rank(ld) == 2 and size(ld, 0) == n and size(ld) == size(full)
    assert table(ld) == [a(full(i)) for i in range(size(ld))]
    zd, td, fd = zipped_divide(a, tiler), tiled_divide(a, tiler), flat_divide(a, tiler)
    assert table(zd) == table(ld) == table(td) == table(fd)
    assert rank(td) == 1 + rank(zd, 1) and size(td, 0) == n


@SETTINGS
@given(compact_layouts(max_size=64), st.data())
def test_by_mode_divide(a, data):
    tiler = []
    for i in range(rank(a)):
        s = size(a, i)
        tiler.append(data.draw(st.sampled_from([t for t in (1, 2, 4, 8) if s % t == 0])))
    if rank(a) == 1:
        return
    z = zipped_divide(a, tuple(tiler))
    assert tuple(size(z, 0, i) for i in range(len(tiler))) == tuple(tiler) and size(z) == size(a)
    assert sorted(table(z)) == sorted(table(a))


@SETTINGS
@given(injective_layouts(extents=(1, 2, 4), gaps=(1, 2), max_size=16), compact_layouts(max_size=16))
def test_products(block, tiler):
    p = logical_product(block, tiler)
    assert rank(p) == 2 and size(p) == size(block) * size(tiler)
    assert table(Layout(p.shape[0], p.stride[0])) == table(block)
    assert len(set(table(p))) == size(p), "product of injective layouts is injective"
    for op in (blocked_product, raked_product):
        try:
            r = op(block, tiler)
        except ValueError as e:          # CuTe cannot zip a tuple mode with an integer mode either
            assert "zip" in str(e)
            continue
        assert rank(r) == max(rank(block), rank(tiler)) and size(r) == size(p)
        assert sorted(table(r)) == sorted(table(p))


@SETTINGS
@given(st.lists(st.sampled_from([1, 2, 4]), min_size=1, max_size=2), st.data())
def test_tile_to_shape(block_shape, data):
    block = Layout(tuple(block_shape))
    target = tuple(b * data.draw(st.sampled_from([1, 2, 3])) for b in block_shape)
    r = tile_to_shape(block, target)
    assert tuple(size(r, i) for i in range(rank(r))) == target
    assert sorted(table(r)) == list(range(size(r)))


@SETTINGS
@given(shapes(extents=(1, 2, 3, 4), max_size=64), st.data())
def test_make_ordered_layout_is_compact_and_ordered(shp, data):
    flat_n = len(_flat(shp))
    order = data.draw(st.permutations(range(flat_n)))
    order_t = _unflat(list(order), shp) if isinstance(shp, tuple) else order[0]
    r = make_ordered_layout(shp, order_t)
    assert sorted(table(r)) == list(range(size(r)))
    flat_s, flat_d = _flat(r.shape), _flat(r.stride)
    ranked = sorted((o, d) for o, s, d in zip(order, flat_s, flat_d) if s != 1)
    assert [d for _o, d in ranked] == sorted(d for _o, d in ranked)


@SETTINGS
@given(st.sampled_from([(1, 0, 1), (2, 0, 2), (3, 3, 3), (2, 3, 3), (3, 4, 3), (2, 1, -3), (3, 0, -4)]))
def test_swizzle_is_an_involutive_bijection(bms):
    sw = Swizzle(*bms)
    n = 1 << (bms[1] + bms[0] + abs(bms[2]))
    xs = np.arange(n)
    ys = sw(xs)
    assert sorted(ys.tolist()) == list(range(n))
    assert sw(ys).tolist() == xs.tolist()
    assert [sw(int(x)) for x in xs] == ys.tolist()


def _swizzled(bms, rows, cols_mult):
    b, m, s = bms
    cols = 1 << (m + abs(s)) * 1
    cols *= cols_mult
    atom = composition(Swizzle(b, m, s), Layout((rows, cols), (cols, 1)))
    return tile_to_shape(atom, (rows * 2, cols * 2))


@settings(max_examples=120, deadline=None)
@given(st.sampled_from([(1, 2, 1), (2, 3, 3), (3, 3, 3), (2, 4, 3), (3, 4, -4), (2, 2, -2)]),
       st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 2]), st.data())
def test_swizzle_slice_and_offset_keeps_the_function(bms, rows, cols_mult, data):
    """sliced(j) + offset == layout(coordinate with j in the _ position), static or dynamic."""
    lay = _swizzled(bms, rows, cols_mult)
    m, n = size(lay, 0), size(lay, 1)
    dynamic = data.draw(st.booleans())
    wrap = DInt if dynamic else int
    if data.draw(st.booleans()):
        r = data.draw(st.integers(0, m - 1))
        sliced, off = slice_and_offset((wrap(r), _), lay)
        got = [sliced(j) + off for j in range(n)]
        want = [lay(r, j) for j in range(n)]
    else:
        c = data.draw(st.integers(0, n - 1))
        sliced, off = slice_and_offset((_, wrap(c)), lay)
        got = [sliced(i) + off for i in range(m)]
        want = [lay(i, c) for i in range(m)]
    assert got == want
    if not dynamic:
        assert is_static(off) or not is_static(lay)


def _flat(t):
    return [x for e in t for x in _flat(e)] if isinstance(t, tuple) else [t]


def _unflat(flat, profile):
    it = iter(flat)

    def build(p):
        return tuple(build(q) for q in p) if isinstance(p, tuple) else next(it)
    return build(profile)
