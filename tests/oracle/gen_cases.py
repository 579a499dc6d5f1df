"""The layout-algebra oracle corpus: hand-picked cases and deterministically generated ones.

``groups()`` returns the case groups compiled into the oracle (see oracle_harness.py). Generated
cases come from ``random.Random(SEED)`` and are admissible by construction (power-of-two
extents and strides wherever CuTe has divisibility conditions; injective layouts where a
complement is taken), so every case compiles against real CuTe.

Run ``python tests/oracle/gen_cases.py`` to print the case count per operation.
"""

import random

from case_dsl import BITS_TYPE, D, L, U, X, call, fn, sw, tfn
from oracle_harness import CaseGroup, OracleCase

SEED = 20240601
LAYOUT_RIGHT = X("LayoutRight{}", "LayoutRight")

# Static tilers of the dynamic channel: name -> Python expression (dynamic_layouts.cpp).
STATIC_TILERS = {
    "@2": "2", "@4": "4", "@(2,4)": "(2, 4)", "@(4,_)": "(4, _)", "@(_,2)": "(_, 2)",
    "@L4:2": "Layout(4, 2)", "@(L2:2,L2:1)": "(Layout(2, 2), Layout(2, 1))",
}


def _seed_layouts():
    atom = fn("composition", sw(3, 3, 3), L((8, 64), (64, 1)))
    sK = fn("tile_to_shape", atom, (64, 64))
    atom_t = fn("composition", sw(3, 3, 3), L((64, 64), (1, 64)))
    sVt = fn("tile_to_shape", atom_t, (64, 64))
    return atom, sK, atom_t, sVt


def hand_cases():
    """Hand-picked cases: CuTe's documented examples, the seed's layouts, edge cases."""
    out = []

    def add(op, x):
        out.append((op, x))

    A3 = L((4, (2, 3)), (2, (1, 8)))
    # construction and printing
    for x in [L((4, 1, 1)), L((4, (2, 3))), A3, L((D(4), 3)), L((D(4), 1, (D(2), 1))),
              L((2, 3), LAYOUT_RIGHT), L(((2, 1), (3, D(4))), LAYOUT_RIGHT), L(1), L(D(1)),
              L(4, -2), L((), ()), L((4, D(1))), L((D(1), 4)), fn("make_layout", L(4), L((2, 3), (4, 8))),
              fn("make_layout", L((4, 2))), fn("make_layout", L(4, 2), L(3, 1), L(2, D(12))),
              fn("make_layout", sw(3, 3, 3)), fn("make_layout", sw(2, 0, -3))]:
        add("make_layout", x)
    add("make_ordered_layout", fn("make_ordered_layout", (2, 2, 2, 2), (0, 2, 3, 1)))
    add("make_ordered_layout", fn("make_ordered_layout", (D(2), D(3), D(4), D(5)), (2, D(67), D(42), 50)))
    add("make_ordered_layout", fn("make_ordered_layout", ((2, 2), 4), ((1, 0), 1)))
    add("make_ordered_layout", fn("make_ordered_layout", (2, 3, 4), LAYOUT_RIGHT))
    add("make_ordered_layout", fn("make_ordered_layout", (4, (2, 2)), 0))
    add("make_layout_like", fn("make_layout_like", L((2, 2, 2, 2), (0, 2, 4, 1))))
    add("make_layout_like", fn("make_layout_like", L((D(2), D(3), D(4), D(5)), (0, D(42), 1, 0))))
    for lay in [L(((2, 2), 8, (2, 2)), ((1, D(8)), 512, (D(16), D(32)))),
                L(((2, 2, 2), 1, (2, 2)), ((1, D(8), 16), 0, (D(64), D(128)))),
                L(((2, 2), 4), ((0, 1), 8)), L((D(4), 2)), L(8, 3), L((2, (2, 2)), (D(1), (8, 2))),
                L(((2, 2), 8, (2, 2)), ((1, 8), 512, (16, 32)))]:
        add("make_fragment_like", fn("make_fragment_like", lay))
    # coalesce, filter
    for lay in [L((2, (1, 6)), (1, (6, 2))), L((2, D(6)), (1, 2)), L((4, 1), (1, 0)), L((1, 1), (4, 2)),
                L((D(4), 2), (0, 0)), L((2, D(1), 4), (1, 8, 2)), L(((2, 2), (2, 2)), ((1, 4), (2, 8))),
                L((2, 4), (D(1), 2)), L((4, 2), (-1, -4))]:
        add("coalesce", fn("coalesce", lay))
    add("coalesce", fn("coalesce", L((2, 4, 3), (1, 2, 16)), (1, 1)))
    add("coalesce", fn("coalesce", L(((2, 2), (2, 2)), ((1, 2), (8, 16))), (1, 1)))
    add("coalesce", fn("coalesce", L(((2, 2), (2, 2), 3), ((1, 2), (8, 16), 64)), ((1, 1), 1)))
    for lay in [L((4, 2, 3), (0, 1, 2)), L((1, D(3)), (0, 2)), L((4, D(2)), (D(0), 1)), L((2, 2), (0, 0))]:
        add("filter", fn("filter", lay))
        add("filter_zeros", fn("filter_zeros", lay))
    add("filter", fn("filter", L(((4, 2), (2, 3)), ((0, 1), (1, 0))), (1, 1)))
    # accessors
    for name in ["size", "cosize", "rank", "depth", "shape", "stride", "flatten"]:
        add(name, fn(name, A3))
    add("cosize", fn("cosize", L((4, 2), (-1, 4))))
    add("size", tfn("size", [1], [A3], [A3, "1"]))
    add("cosize", tfn("cosize", [1], [A3], [A3, "1"]))
    add("rank", tfn("rank", [1], [A3], [A3, "1"]))
    add("shape", tfn("shape", [1, 0], [A3], [A3, "1", "0"]))
    add("get", tfn("get", [1], [A3], [A3, "1"]))
    add("get", tfn("get", [1, 1], [A3], [A3, "1", "1"]))
    B4 = L((2, 3, 4, 5), (1, 2, 6, 24))
    add("take", tfn("take", [1, 3], [B4], [B4, "1", "3"]))
    add("select", tfn("select", [2, 0], [B4], [B4, "2", "0"]))
    add("group", tfn("group", [1, 3], [B4], [B4, "1", "3"]))
    add("append", fn("append", A3, L(7, 100)))
    add("append", tfn("append", [4], [A3], [A3, "n=4"]))
    add("prepend", fn("prepend", A3, L(7, 100)))
    add("prepend", tfn("prepend", [3], [L(4, 2)], [L(4, 2), "n=3"]))
    # evaluation and slicing
    add("call", call(A3, 5))
    add("call", call(A3, D(5)))
    add("call", call(A3, 1, (1, 2)))
    add("call", call(A3, D(3), (1, D(2))))
    add("slice", call(A3, U, (1, U)))
    add("slice", call(A3, 2, U))
    add("slice", call(L(((2, 3), (4, 2)), ((1, 2), (6, 24))), (U, 1), (U, D(1))))
    add("slice", call(A3, U))
    add("slice_and_offset", fn("slice_and_offset", (U, (1, U)), A3))
    add("slice_and_offset", fn("slice_and_offset", (D(3), U), A3))
    add("dice", fn("dice", (U, (1, U)), A3))
    # composition
    add("composition", fn("composition", L((6, 2), (8, 2)), L((4, 3), (3, 1))))
    add("composition", fn("composition", L(20, 2), L((5, 4), (4, 1))))
    add("composition", fn("composition", L((10, 2), (16, 4)), L((5, 4), (1, 5))))
    add("composition", fn("composition", L((12, (4, 8)), (59, (13, 1))), (L(3, 4), L(8, 2))))
    add("composition", fn("composition", L((4, 8)), (2, L(4, 2))))
    add("composition", fn("composition", L((4, 8)), (U, L(4, 2))))
    add("composition", fn("composition", L((4, 8), (8, 1)), 8))
    add("composition", fn("composition", L((4, 4)), L(4, 0)))
    add("composition", fn("composition", L((4, 4)), L((2, 2), (0, 4))))
    add("composition", fn("composition", L(8, -1), L(4, 2)))
    add("composition", fn("composition", L((4, 1, 8), (1, 0, 4)), L(8, 2)))
    add("composition", fn("composition", L((D(12), D(8)), (1, D(12))), (4, 2)))
    add("composition", fn("composition", L((D(12), D(8)), (D(8), 1)), L((4, 2), (1, 12))))
    add("composition", fn("composition", L((12, 8), (1, 12)), L((D(4), 2), (1, D(12)))))
    add("composition", fn("composition", L(((2, 2), 2), ((1, 4), 2)), L(2, 2)))
    add("composition", fn("composition", L((4, 4), (1, 8)), L(2, D(6))))   # not checked: dynamic
    # complement
    for args in [(L(4, 2), 24), (L((2, 2), (1, 6)), 24), (L(4, 0), 8), (L((2, 4), (1, 6)),),
                 (L((4, 6), (1, 4)), D(48)), (L(4, 1), (8, 4)), (L(D(4), D(2)), D(32)), (L(1, 0),),
                 (L((2, 2), (8, 1)), 64), (L(((2, 2), 2), ((1, 8), 2)),)]:
        add("complement", fn("complement", *args))
    # inverses
    for lay in [L((4, 2), (2, 1)), L(((2, 2), (2, 2)), ((1, 4), (2, 8))), L((4, 2), (1, 8)),
                L((4, 2), (0, 1)), L((4, D(2)), (1, D(4))), L(8, 2), L((2, 3), (3, 1))]:
        add("right_inverse", fn("right_inverse", lay))
    for lay in [L((4, 2), (2, 1)), L(((2, 2), (2, 2)), ((1, 4), (2, 8))), L((4, 2), (1, 8)),
                L((4, 2), (0, 1)), L(8, 2), L((2, 3), (3, 1)), L((4, 2), (2, 16))]:
        add("left_inverse", fn("left_inverse", lay))
    # divides
    T9 = L((9, (4, 8)), (59, (13, 1)))
    tiler9 = (L(3, 3), L((2, 4), (1, 8)))
    for name in ["logical_divide", "zipped_divide", "tiled_divide", "flat_divide"]:
        add(name, fn(name, T9, tiler9))
        add(name, fn(name, L((4, 2, 3), (2, 1, 8)), L(4, 2)))
        add(name, fn(name, L((D(12), D(8)), (1, D(12))), (4, 2)))
        add(name, fn(name, L((8, 8)), (4, L(2, 2))))
    add("logical_divide", fn("logical_divide", L((8, 8)), (U, 2)))
    add("logical_divide", fn("logical_divide", L((8, 8)), 16))
    add("logical_divide", fn("logical_divide", L(((4, 4), 8)), (8, 4)))
    # products
    for name in ["logical_product", "zipped_product", "tiled_product", "flat_product"]:
        add(name, fn(name, L((2, 2), (4, 1)), L(6, 1)))
        add(name, fn(name, L((2, 2), (4, 1)), (L(3, 1), L(4, 1))))
    add("logical_product", fn("logical_product", L((2, 2), (4, 1)), L((4, 2), (2, 1))))
    add("logical_product", fn("logical_product", L(4, 1), 3))
    add("logical_product", fn("logical_product", L((2, 5), (5, 1)), (U, L(3, 1))))
    for name in ["blocked_product", "raked_product"]:
        add(name, fn(name, L((2, 5), (5, 1)), L((3, 4), (1, 3))))
        add(name, fn(name, L((2, 2)), L((3, 1))))
        add(name, fn(name, L(4, 1), L((2, 3))))
        add(name, fn(name, L((2, 2), (1, 2)), L(3, 1)))
    # tile_to_shape
    add("tile_to_shape", fn("tile_to_shape", L((2, 2)), (4, 6)))
    add("tile_to_shape", fn("tile_to_shape", L((2, 2)), (4, 6), (2, 1)))
    add("tile_to_shape", fn("tile_to_shape", L((2, 2)), (4, 6), LAYOUT_RIGHT))
    add("tile_to_shape", fn("tile_to_shape", L(4), (8, 3)))
    add("tile_to_shape", fn("tile_to_shape", L((2, 2), (2, 1)), (4, 4, 2)))
    # swizzles and composed layouts
    atom, sK, atom_t, sVt = _seed_layouts()
    for x in [atom, sK, atom_t, sVt, fn("composition", sw(2, 3, 3), L((8, 32), (32, 1))),
              fn("tile_to_shape", fn("composition", sw(2, 3, 3), L((8, 32), (32, 1))), (64, 32)),
              fn("composition", sw(0, 4, 3), L((8, 8))),
              fn("composition", L((8, 8), (8, 1)), sw(3, 0, 3)),
              fn("composition", L((8, 8), (1, 8)), sw(2, 1, 3)),
              fn("composition", sw(3, 3, 3), sw(2, 3, 3)),
              fn("composition", sK, (16, 16)), fn("composition", sK, L((8, 8), (8, 1))),
              fn("composition", L((4, 16)), fn("composition", sw(2, 0, 2), L((4, 16))))]:
        add("swizzle", x)
    for coord in [(U, 0), (U, D(0)), (U, D(8)), (0, U), (D(3), U), (D(13), U), ((U, 1), U),
                  ((U, D(1)), (U, D(1))), (U, (D(1), U)), ((D(2), U), U)]:
        add("swizzle_slice", call(sK, *coord))
        add("swizzle_slice", fn("slice_and_offset", coord, sK))
    add("swizzle_slice", call(sK, D(5), D(17)))
    for coord in [(U, D(3)), (D(9), U), ((U, D(3)), U)]:
        add("swizzle_slice", fn("slice_and_offset", coord, sVt))
    zd = fn("zipped_divide", sK, (16, 16))
    for coord in [((U, U), (D(1), D(2))), ((U, U), (1, 2)), ((D(3), U), (D(1), D(2))), ((U, D(5)), U)]:
        add("swizzle_slice", fn("slice_and_offset", coord, zd))
    for name in ["logical_divide", "zipped_divide", "tiled_divide", "flat_divide"]:
        add("swizzle_tiling", fn(name, sK, (16, 16)))
    for x in [fn("logical_product", L((2, 2)), atom), fn("blocked_product", atom, L((2, 2))),
              fn("right_inverse", atom), fn("left_inverse", atom), fn("coalesce", sK),
              fn("flatten", sK), tfn("get", [0], [sK], [sK, "0"]), fn("make_fragment_like", sK),
              fn("complement", atom), fn("cosize", sK), fn("size", sK)]:
        add("swizzle_ops", x)
    add("max_common", fn("max_common_vector", L((4, 8), (1, 4)), L((4, 8), (1, 32))))
    add("max_common", fn("max_common_layout", L((4, 8), (1, 4)), L((4, 8), (1, 32))))
    add("max_common", fn("max_common_vector", L((4, 8), (8, 1)), L((4, 8), (1, 4))))
    add("max_common", fn("max_common_layout", L((4, 8), (8, 1)), L((4, 8), (1, 4))))
    add("max_common", fn("max_common_vector", L((8, 8), (1, 8)), L((8, 8), (1, D(8)))))
    add("max_common", fn("max_common_vector", sK, L((64, 64), (64, 1))))
    add("max_common", fn("max_common_layout", sK, L((64, 64), (64, 1))))
    add("max_common", fn("max_common_vector", sK, sK))
    add("max_common", fn("max_common_vector", atom, L((8, 64), (1, 8))))
    # width changes (copy atoms declare bit layouts; LDSM source and destinations)
    ldsm = [L((32, 128), (128, 1)), L((32, (32, 4)), (32, (1, 1024))),
            L(((4, 8), (16, 2, 4)), ((256, 16), (1, 128, 1024)))]
    for lay in ldsm:
        add("recast", X(f"recast_layout<{BITS_TYPE[1]}, {BITS_TYPE[16]}>({lay.cpp})", f"recast_layout(1, 16, {lay.py})"))
    for n in [2, 4]:
        add("recast", tfn("upcast", [n], [L((4, 8), (1, 4))], [str(n), L((4, 8), (1, 4))]))
        add("recast", tfn("downcast", [n], [L((4, 8), (1, 4))], [str(n), L((4, 8), (1, 4))]))
        add("recast", tfn("upcast", [n], [L((4, (2, 8)), (D(64), (1, 2)))], [str(n), L((4, (2, 8)), (D(64), (1, 2)))]))
        add("recast", tfn("upcast", [n], [sK], [str(n), sK]))
        add("recast", tfn("downcast", [n], [sK], [str(n), sK]))
    add("recast", X(f"recast_layout<{BITS_TYPE[16]}, {BITS_TYPE[32]}>({sK.cpp})", f"recast_layout(16, 32, {sK.py})"))
    add("recast", X(f"recast_layout<{BITS_TYPE[32]}, {BITS_TYPE[8]}>({L((4, 2), (1, 4)).cpp})",
                    f"recast_layout(32, 8, {L((4, 2), (1, 4)).py})"))
    return out


def doc_cases():
    """The examples in warpsim.cute's docstrings that CuTe can print, so the docs are checked too."""
    out = []

    def add(op, x):
        out.append((op, x))

    _atom, sK, _atom_t, _sVt = _seed_layouts()
    add("call", call(sK, 1, 8))
    add("call", call(sK, 0, 8))
    add("swizzle", X("make_composed_layout(Swizzle<1,0,1>{}, Int<0>{}, Layout<_4,_1>{})",
                     "ComposedLayout(Swizzle(1, 0, 1), 0, Layout(4))"))
    add("layout", L((2, 3), (3, 1)))
    add("layout", L((2, 2), (4, 1)))
    add("call", call(L((2, 2), (4, 1)), 4))      # beyond the domain: the last mode is not wrapped
    L42 = L((4, 2), (2, 1))
    add("get", tfn("get", [1], [L42], [L42, "1"]))
    add("call", call(L42, 3, 1))
    add("slice", call(L42, U, 1))
    add("cosize", fn("cosize", L42))
    add("cosize", fn("cosize", L((4, 2), (0, 1))))
    add("slice_and_offset", fn("slice_and_offset", (U, 2), L((4, 8), (8, 1))))
    add("logical_divide", fn("logical_divide", L((4, 6)), (2, 3)))
    add("zipped_divide", fn("zipped_divide", L((4, 6)), (2, 3)))
    add("recast", X("upcast<2>(Swizzle<3,3,3>{})", "upcast(2, Swizzle(3, 3, 3))"))
    add("recast", X("downcast<2>(Swizzle<3,3,3>{})", "downcast(2, Swizzle(3, 3, 3))"))
    add("stride", fn("compact_col_major", (4, 1, D(3), 2)))
    add("stride", fn("compact_row_major", (4, (2, 3))))
    add("stride", fn("compact_order", (2, 2, 2, 2), (0, 2, 3, 1)))
    add("stride", fn("crd2idx", (1, 2), (4, 8), (1, 4)))
    add("stride", fn("crd2idx", 9, (4, 8), (1, 4)))
    add("stride", fn("crd2idx", D(5), (2, 3), (3, 1)))
    add("stride", fn("crd2idx", (1, (1, 2)), (2, (3, 4))))
    add("stride", fn("idx2crd", 9, (4, 8)))
    add("stride", fn("idx2crd", 9, (4, 8), (1, 4)))
    add("stride", fn("idx2crd", 7, (2, (3, 4))))
    add("stride", fn("idx2crd", 30, (2, 3)))
    add("stride", fn("idx2crd", D(30), (2, 3)))
    add("swizzle_fn", call(sw(3, 3, 3), 64))
    add("swizzle_fn", call(sw(3, 3, 3), 8 * 64 + 8))
    add("swizzle_fn", call(sw(3, 3, 3), D(64)))
    add("swizzle_fn", call(sw(2, 0, -2), 3))
    add("swizzle_fn", X("make_swizzle<0b1000, 0b0100>()", "make_swizzle(0b1000, 0b0100)"))
    add("swizzle_fn", X("make_swizzle<0b11000000, 0b00000110>()", "make_swizzle(0b11000000, 0b00000110)"))
    mb = X("make_mixed_bits(Int<0>{}, int(5), Int<6>{})", "make_mixed_bits(0, DInt(5), 6)")
    add("mixed_bits", mb)
    add("mixed_bits", X(f"({mb.cpp} & Int<2>{{}})", f"({mb.py} & 2)"))
    add("mixed_bits", X(f"({mb.cpp} ^ Int<1>{{}})", f"({mb.py} ^ 1)"))
    add("mixed_bits", X(f"({mb.cpp} ^ make_mixed_bits(Int<8>{{}}, int(3), Int<3>{{}}))",
                        f"({mb.py} ^ make_mixed_bits(8, DInt(3), 3))"))
    L84 = L((8, 4), (4, 1))
    add("with_shape", X(f"{L84.cpp}.with_shape(Int<4>{{}}, Int<8>{{}})", f"{L84.py}.with_shape(4, 8)"))
    add("with_shape", X(f"{L84.cpp}.with_shape(make_shape(Int<2>{{}}, Int<16>{{}}))", f"{L84.py}.with_shape((2, 16))"))
    add("with_shape", X(f"{sK.cpp}.with_shape(Int<4096>{{}})", f"{sK.py}.with_shape(4096)"))
    add("tile", X(f"{L84.cpp}.tile(Int<2>{{}}, Int<2>{{}})", f"{L84.py}.tile(2, 2)"))
    Lh = L(((2, 2), 4), ((1, 2), 4))
    for i in (7, D(13)):
        for m in ("get_hier_coord", "get_flat_coord", "get_1d_coord"):
            add("coord", X(f"{Lh.cpp}.{m}({X(f'Int<{i}>{{}}', '').cpp if not isinstance(i, D) else f'int({int(i)})'})",
                           f"{Lh.py}.{m}({'DInt(%d)' % i if isinstance(i, D) else i})"))
    add("coord", fn("crd2crd", (1, (1, 2)), (2, (3, 4)), (1, 1)))
    for lay in [L((4, 8), (1, 4)), L((4, 8), (8, 1)), L((4, 8), (1, 8)), L((2, 4), (1, D(16))),
                L((D(4), 8), (1, D(4))), L((4, 2), (2, 1)), L(((4, 2), 2), ((1, 8), 4)), sK, _atom,
                fn("composition", sw(2, 2, 3), L((8, 32), (32, 1)))]:
        add("max_alignment", fn("max_alignment", lay))
    add("domain_offset", fn("domain_offset", (1, D(2)), L((4, 8), (8, 1))))
    add("domain_offset", fn("domain_offset", (1, 2), sK))
    add("domain_offset", fn("domain_offset", (D(1), D(2)), sK))
    add("int_tuple", fn("product", (2, (3, 4))))
    add("int_tuple", fn("product", (2, D(3))))
    add("int_tuple", fn("product", ()))
    add("int_tuple", fn("shape_div", (4, 5, 6), 40))
    add("int_tuple", fn("ceil_div", (4, 5, 6), 40))
    add("int_tuple", fn("ceil_div", (D(7), 5), (2, 2)))
    add("int_tuple", fn("inner_product", (2, (3, 4)), (1, (10, D(100)))))
    add("int_tuple", fn("flatten", ((1, 2), (3, (4,)))))
    add("int_tuple", fn("filter_zeros", (0, D(0), 3), (4, 5, 6)))
    add("int_tuple", X("coalesce(make_shape(Int<2>{}, make_shape(Int<3>{}, int(4)), int(5), Int<6>{}))",
                       "coalesce((2, (3, DInt(4)), DInt(5), 6))"))
    add("int_tuple", fn("slice", (U, 2), (4, 8), py="slice_"))
    add("int_tuple", fn("slice", ((U, 1), U), ((2, 3), 4), py="slice_"))
    return out


# ---------------------------------------------------------------------------------------------
# Generated cases
# ---------------------------------------------------------------------------------------------

def _nest(rng, flat, depth):
    """Group a flat list into a random nesting of depth <= depth (every group has 2+ elements)."""
    items = list(flat)
    if depth <= 1 or len(items) < 3:
        return tuple(items)
    out, i = [], 0
    while i < len(items):
        k = rng.choice([1, 1, 2, 3])
        k = min(k, len(items) - i)
        out.append(items[i] if k == 1 else tuple(items[i:i + k]))
        i += k
    return tuple(out) if len(out) > 1 else tuple(items)


def _unflat(flat, profile):
    it = iter(flat)

    def build(p):
        return tuple(build(q) for q in p) if isinstance(p, tuple) else next(it)
    return build(profile)


def _flat(t):
    return [x for e in t for x in _flat(e)] if isinstance(t, tuple) else [t]


def rand_shape(rng, extents=(1, 2, 4, 8), modes=(1, 4), depth=2, max_size=256):
    while True:
        n = rng.randint(*modes)
        flat = [rng.choice(extents) for _ in range(n)]
        size = 1
        for e in flat:
            size *= e
        if size <= max_size:
            return flat[0] if n == 1 and rng.random() < 0.5 else _nest(rng, flat, depth)


def compact_strides(rng, shape, gaps=False):
    """Strides of a compact (or gapped, still injective) layout of ``shape`` in a random mode order."""
    flat = _flat(shape)
    order = list(range(len(flat)))
    rng.shuffle(order)
    strides, cur = [0] * len(flat), 1
    for i in order:
        strides[i] = cur
        cur *= flat[i] * (rng.choice([1, 1, 2, 4]) if gaps else 1)
    return _unflat(strides, shape) if isinstance(shape, tuple) else strides[0]


def rand_strides(rng, shape, choices=(0, 1, 2, 4, 8, 16, 32)):
    flat = [rng.choice(choices) for _ in _flat(shape)]
    return _unflat(flat, shape) if isinstance(shape, tuple) else flat[0]


def dynamize(rng, t, p=0.3):
    """Make some integers of ``t`` dynamic."""
    if isinstance(t, tuple):
        return tuple(dynamize(rng, e, p) for e in t)
    return D(t) if rng.random() < p else t


def _divisor_tiler(rng, shape):
    """A by-mode tiler of ints that divide each top mode's leading extent (or the whole mode)."""
    out = []
    for s in (shape if isinstance(shape, tuple) else (shape,)):
        lead = _flat(s)[0]
        options = [d for d in (1, 2, 3, 4, 6, 8) if lead % d == 0]
        out.append(rng.choice(options))
    return tuple(out)


def generated_cases():
    """Deterministic random static cases (with some dynamic integers where CuTe allows them)."""
    rng = random.Random(SEED)
    out = []

    def add(op, x):
        out.append((op, x))

    for _ in range(24):      # printing and evaluation of arbitrary layouts, with dynamic parts
        s = rand_shape(rng, extents=(1, 2, 3, 4))
        d = rand_strides(rng, s, (0, 1, 2, 3, 5, 8))
        add("layout", L(dynamize(rng, s, 0.2), dynamize(rng, d, 0.2)))
    for _ in range(24):      # coalesce / filter / filter_zeros of arbitrary layouts
        s = rand_shape(rng, extents=(1, 2, 3, 4))
        d = rand_strides(rng, s, (0, 1, 2, 3, 4, 6, 8, 12))
        lay = L(dynamize(rng, s, 0.15), dynamize(rng, d, 0.15))
        add("coalesce", fn("coalesce", lay))
        add("filter", fn("filter", lay))
    for _ in range(20):      # ordered / like / fragment layouts
        s = rand_shape(rng, extents=(1, 2, 3, 4), modes=(2, 4))
        order = rand_strides(rng, s, (0, 1, 2, 3, 4))
        add("make_ordered_layout", fn("make_ordered_layout", s, dynamize(rng, order, 0.3)))
        lay = L(s, dynamize(rng, rand_strides(rng, s, (0, 1, 2, 4, 8, 16)), 0.3))
        add("make_layout_like", fn("make_layout_like", lay))
        add("make_fragment_like", fn("make_fragment_like", lay))
    for _ in range(40):      # composition of power-of-two layouts (always admissible)
        sa = rand_shape(rng, modes=(1, 4))
        a = L(sa, rand_strides(rng, sa))
        sb = rand_shape(rng, modes=(1, 3), max_size=64)
        b = L(sb, rand_strides(rng, sb, (0, 1, 2, 4, 8)))
        add("composition", fn("composition", a, b))
    for _ in range(12):      # composition with dynamic left strides and a static tiler
        sa = rand_shape(rng, modes=(2, 3), depth=1)
        a = L(sa, dynamize(rng, compact_strides(rng, sa), 0.5))
        add("composition", fn("composition", a, _divisor_tiler(rng, sa)))
    for _ in range(30):      # complement of injective layouts
        s = rand_shape(rng, extents=(2, 3, 4), modes=(1, 3))
        lay = L(s, compact_strides(rng, s, gaps=True))
        if rng.random() < 0.5:
            add("complement", fn("complement", lay))
        else:
            add("complement", fn("complement", lay, rng.choice([64, 128, 256, 384])))
    for _ in range(24):      # inverses
        s = rand_shape(rng, extents=(2, 4, 8), modes=(1, 4), max_size=128)
        add("right_inverse", fn("right_inverse", L(s, compact_strides(rng, s, gaps=rng.random() < 0.5))))
        add("left_inverse", fn("left_inverse", L(s, compact_strides(rng, s, gaps=True))))
    for _ in range(12):
        s = rand_shape(rng, extents=(1, 2, 4), modes=(1, 4))
        add("right_inverse", fn("right_inverse", L(s, rand_strides(rng, s, (0, 1, 2, 4, 8)))))
    divides = ["logical_divide", "zipped_divide", "tiled_divide", "flat_divide"]
    for k in range(40):      # divides: by-mode integer tilers and power-of-two layout tilers
        s = rand_shape(rng, extents=(2, 3, 4, 6, 8), modes=(1, 3), depth=1)
        lay = L(s, compact_strides(rng, s, gaps=rng.random() < 0.3))
        if k % 2:
            tiler = _divisor_tiler(rng, s)
        else:
            s = rand_shape(rng, modes=(1, 3), depth=2)
            lay = L(s, rand_strides(rng, s, (1, 2, 4, 8, 16)))
            tiler = L(rng.choice([2, 4]), rng.choice([1, 2, 4]))
        add(divides[k % 4], fn(divides[k % 4], lay, tiler))
    products = ["logical_product", "zipped_product", "tiled_product", "flat_product"]
    for k in range(32):      # products of injective power-of-two blocks
        # (CuTe's raked_product cannot zip a tuple mode with an integer one: keep both tuples.)
        sb = _as_tuple(rand_shape(rng, extents=(2, 4), modes=(1, 2), max_size=16))
        block = L(sb, compact_strides(rng, sb, gaps=rng.random() < 0.3))
        st = _as_tuple(rand_shape(rng, extents=(1, 2, 4), modes=(1, 2), max_size=16))
        tiler = L(st, compact_strides(rng, st))
        op = products[k % 4] if k < 16 else ("blocked_product" if k % 2 else "raked_product")
        add(op, fn(op, block, tiler))
    for _ in range(16):      # tile_to_shape with column-major, row-major and permuted orders
        sb = tuple(rng.choice([1, 2, 4]) for _ in range(rng.randint(1, 2)))
        block = L(sb, compact_strides(rng, sb))
        rank = rng.randint(len(sb), 3)
        trg = tuple((sb[i] if i < len(sb) else 1) * rng.choice([1, 2, 3]) for i in range(rank))
        order = rng.choice([None, LAYOUT_RIGHT, tuple(rng.sample(range(rank), rank))])
        args = (block, trg) if order is None else (block, trg, order)
        add("tile_to_shape", fn("tile_to_shape", *args))
    for _ in range(24):      # slicing with static and dynamic coordinates
        s = rand_shape(rng, extents=(2, 3, 4), modes=(2, 4))
        lay = L(s, rand_strides(rng, s, (0, 1, 2, 3, 7, 16)))
        coord = _rand_coord(rng, s)
        add("slice_and_offset", fn("slice_and_offset", coord, lay))
    for _ in range(20):      # max_common_vector / layout of compact permutations
        s = rand_shape(rng, extents=(2, 4), modes=(2, 3), depth=1)
        a, b = L(s, compact_strides(rng, s)), L(s, compact_strides(rng, s))
        add("max_common", fn(rng.choice(["max_common_vector", "max_common_layout"]), a, b))
    for _ in range(24):      # swizzled layouts: tiling, slicing, evaluation
        b_, m_ = rng.choice([(1, 2), (2, 3), (3, 3), (2, 4), (3, 4)])
        s_ = rng.choice([b_, b_ + 1]) * rng.choice([1, -1]) if b_ > 0 else 3
        rows, cols = 1 << rng.randint(1, 3), 1 << (m_ + abs(s_) + rng.randint(0, 1))
        atom = fn("composition", sw(b_, m_, s_), L((rows, cols), (cols, 1)))
        big = fn("tile_to_shape", atom, (rows * 2, cols * rng.choice([1, 2])))
        coord = rng.choice([(U, D(rng.randrange(cols))), (D(rng.randrange(rows * 2)), U),
                            (rng.randrange(rows * 2), U), (U, rng.randrange(cols))])
        add("swizzle", big)
        add("swizzle_slice", fn("slice_and_offset", coord, big))
    return out


def _rand_coord(rng, shape):
    """A coordinate for ``shape`` with ``_`` in some modes and (static or dynamic) ints elsewhere."""
    def one(s):
        if isinstance(s, tuple) and rng.random() < 0.5:
            return tuple(one(e) for e in s)
        r = rng.random()
        if r < 0.45:
            return U
        v = rng.randrange(_size(s))
        return D(v) if r < 0.75 else v
    c = tuple(one(e) for e in shape) if isinstance(shape, tuple) else one(shape)
    return c if c is not U else (U,) * len(shape)


def _as_tuple(s):
    return s if isinstance(s, tuple) else (s,)


def _size(s):
    n = 1
    for e in _flat(s):
        n *= e
    return n


def _as_cases(prefix, pairs):
    counts, cases = {}, []
    for op, x in pairs:
        counts[op] = counts.get(op, 0) + 1
        cases.append(OracleCase(f"{prefix}/{op}/{counts[op]:03d}", x.cpp, x.py))
    return cases


def groups():
    """The layout-algebra case groups."""
    return [CaseGroup("layout_hand", _as_cases("hand", hand_cases())),
            CaseGroup("layout_docs", _as_cases("docs", doc_cases())),
            CaseGroup("layout_gen", _as_cases("gen", generated_cases()))]


def all_cases():
    return [c for g in groups() for c in g.cases]


if __name__ == "__main__":
    import collections
    for g in groups():
        ops = collections.Counter(c.id.split("/")[1] for c in g.cases)
        print(g.name, len(g.cases), dict(ops))
