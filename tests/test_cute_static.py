"""Static/dynamic tracking and CuTe's printed text, against facts CuTe C++ printed (docs/hardware-model.md §1).

These run without nvcc; the oracle tests (tests/oracle) check the same against live CuTe.
"""

import numpy as np
import pytest

from warpsim.cute import (
    DInt, Layout, Swizzle, composition, cute_str, is_static, layout_table, make_dynamic,
    make_fragment_like, make_layout, size, slice_and_offset, tile_to_shape, _,
)


def test_acceptance_texts():
    assert str(make_layout((4, 1, 1))) == "(_4,_1,_1):(_1,_0,_0)"
    atom = composition(Swizzle(3, 3, 3), make_layout((8, 64), (64, 1)))
    assert str(tile_to_shape(atom, (64, 64))) == "Sw<3,3,3> o _0 o ((_8,_8),(_64,_1)):((_64,_512),(_1,_0))"
    assert str(make_layout((DInt(4), 3))) == "(4,_3):(_1,4)"


def test_fragment_order_follows_static_then_dynamic_strides():
    # docs/hardware-model.md §1: the partition of the seed's sK for thread 0, and its register fragment.
    part = Layout(((2, 2), 8, (2, 2)), ((1, DInt(8)), 512, (DInt(16), DInt(32))))
    assert str(part) == "((_2,_2),_8,(_2,_2)):((_1,8),_512,(16,32))"
    assert str(make_fragment_like(part)) == "((_2,_2),_8,(_2,_2)):((_1,_2),_4,(_32,_64))"
    all_static = Layout(((2, 2), 8, (2, 2)), ((1, 8), 512, (16, 32)))
    assert str(make_fragment_like(all_static)) == "((_2,_2),_8,(_2,_2)):((_1,_2),_16,(_4,_8))"


@pytest.mark.parametrize("expr, static", [
    (lambda: DInt(3) + 1, False), (lambda: 1 + DInt(3), False), (lambda: 0 * DInt(3), True),
    (lambda: DInt(3) * 0, True), (lambda: DInt(3) * 1, False), (lambda: DInt(3) % 1, True),
    (lambda: 0 % DInt(3), True), (lambda: 0 // DInt(3), True), (lambda: DInt(6) // 2, False),
    (lambda: DInt(3) & 0, True), (lambda: -DInt(3), False), (lambda: abs(DInt(-3)), False),
    (lambda: DInt(3) ^ 0, False), (lambda: sum([1, 2, DInt(3)]), False),
])
def test_dint_arithmetic_follows_cute(expr, static):
    assert is_static(expr()) == static


def test_dynamic_shapes_keep_dynamic_strides():
    lay = make_layout(make_dynamic((4, 8)))
    assert str(lay) == "(4,8):(_1,4)"
    assert str(make_layout((4, DInt(1)))) == "(_4,1):(_1,_4)"
    assert str(make_layout((DInt(1), 4))) == "(1,_4):(_1,1)"


def test_swizzled_slice_with_dynamic_row_has_dynamic_strides():
    sK = tile_to_shape(composition(Swizzle(3, 3, 3), make_layout((8, 64), (64, 1))), (64, 64))
    sliced, off = slice_and_offset((DInt(3), _), sK)
    assert cute_str((sliced, off)) == "((((_8,_2,_2,_2),_1)):(((_1,-8,-16,32),_0)),216)"
    sliced_s, off_s = slice_and_offset((3, _), sK)
    assert is_static(sliced_s) and is_static(off_s)
    assert np.array_equal(layout_table(sliced) + off, [sK(3, j) for j in range(64)])


def test_layout_equality_and_hash_see_static_ness():
    a, b = Layout((4, 2)), Layout((4, DInt(2)))
    assert a == Layout((4, 2), (1, 4)) and hash(a) == hash(Layout((4, 2), (1, 4)))
    assert a != b and size(a) == size(b)
