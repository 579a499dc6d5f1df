"""Bad input to warpsim.cute raises ValueError/TypeError that names the operation and operands.

The ValueErrors mirror CuTe's static assertions (a static divisibility condition, a
non-injective layout in complement, rank mismatches that would not compile).
"""

import pytest

from warpsim.cute import (
    DInt, Layout, Swizzle, complement, composition, crd2idx, left_inverse, logical_divide,
    make_layout, make_ordered_layout, make_swizzle, shape_div, slice_, tile_to_shape, upcast,
    zipped_divide, _,
)


@pytest.mark.parametrize("call, words", [
    (lambda: composition(Layout((4, 4), (1, 8)), Layout(2, 6)), ["composition", "stride divisibility", "(_4,_4):(_1,_8)", "_2:_6"]),
    (lambda: composition(Layout((4, 4), (1, 8)), Layout(6, 1)), ["composition", "shape divisibility", "_6:_1"]),
    (lambda: composition(Layout((4, 4)), (2, 2, 2)), ["composition", "more modes", "(_4,_4):(_1,_4)"]),
    (lambda: logical_divide(Layout((4, 4), (1, 8)), 6), ["composition", "(_4,_4):(_1,_8)"]),
    (lambda: logical_divide(Layout((4, 4)), (2, 2, 2)), ["logical_divide", "too many modes"]),
    (lambda: zipped_divide(Layout((4, 4)), (2, _)), ["zip2_by", "rank-2"]),
    (lambda: tile_to_shape(Layout((2, 2)), (3, 4)), ["tile_to_shape", "does not divide", "(_2,_2):(_1,_2)", "(_3,_4)"]),
    (lambda: tile_to_shape(Layout((2, 2, 2)), (4, 4)), ["tile_to_shape", "rank"]),
    (lambda: complement(Layout((2, 2), (1, 1))), ["complement", "non-injective", "(_2,_2):(_1,_1)"]),
    (lambda: complement(Layout((DInt(2), DInt(2)), (DInt(1), DInt(4)))), ["complement", "dynamic", "rank-1"]),
    (lambda: left_inverse(Layout((2, 3), (3, 2))), ["left_inverse", "divisibility", "(_2,_3):(_3,_2)"]),
    (lambda: left_inverse(Layout(4, DInt(2))), ["left_inverse", "static strides"]),
    (lambda: make_layout((4, 2), (1,)), ["not congruent", "(_4,_2)", "(_1)"]),
    (lambda: Layout((4, -2)), ["negative", "(_4,_-2)"]),
    (lambda: crd2idx((1, 2, 3), (4, 8), (1, 4)), ["crd2idx", "(_1,_2,_3)", "(_4,_8)"]),
    (lambda: Layout((4, 8))(1, 2, 3), ["crd2idx", "(_1,_2,_3)"]),
    (lambda: slice_((_, 1, 2), (4, 8)), ["slice", "rank mismatch"]),
    (lambda: shape_div(6, 4), ["shape_div", "_6", "_4"]),
    (lambda: make_ordered_layout((4, 2), (0, 1, 2)), ["make_ordered_layout", "order"]),
    (lambda: Swizzle(3, 3, 2), ["Swizzle", "|S|"]),
    (lambda: Swizzle(-1, 3, 3), ["Swizzle", "non-negative"]),
    (lambda: make_swizzle(0b11, 0b100), ["make_swizzle", "number of bits"]),
    (lambda: upcast(3, Layout(8, 2)), ["upcast", "N=3"]),
])
def test_value_errors_name_operands(call, words):
    with pytest.raises(ValueError) as info:
        call()
    for w in words:
        assert w in str(info.value), f"{w!r} not in {str(info.value)!r}"


@pytest.mark.parametrize("call, words", [
    (lambda: Layout((4, 2.0)), ["Layout", "shape"]),
    (lambda: Layout((4, True)), ["Layout", "shape"]),
    (lambda: Layout(4, "1"), ["Layout", "stride"]),
    (lambda: DInt(1.5), ["DInt"]),
    (lambda: Swizzle(DInt(3), 3, 3), ["Swizzle", "static"]),
    (lambda: composition(Layout(4), "x"), ["composition", "right operand"]),
    (lambda: composition("x", Layout(4)), ["composition", "left operand"]),
    (lambda: Swizzle(3, 3, 3)(1.0), ["Sw<3,3,3>", "offset"]),
    (lambda: Layout((4, 2))(1.5), ["(_4,_2):(_1,_4)", "coordinate"]),
    (lambda: Layout((4, 2))(_, 0.5), ["(_4,_2):(_1,_4)", "coordinate"]),
])
def test_type_errors_name_operands(call, words):
    with pytest.raises(TypeError) as info:
        call()
    for w in words:
        assert w in str(info.value), f"{w!r} not in {str(info.value)!r}"


def test_dynamic_values_are_not_checked_like_cute():
    # CuTe checks divisibility only on static values: with a dynamic stride the same composition
    # goes through and gives what CuTe gives (the oracle case hand/composition/016 prints it).
    r = composition(Layout((4, 4), (1, 8)), Layout(2, DInt(6)))
    assert str(r) == "(1,2):(6,16)"
