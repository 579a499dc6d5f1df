"""local_tile / local_partition: bad input, lane vectors, and post-conditions without nvcc.

The layouts themselves are checked against CuTe in ``tests/oracle/test_partition_oracle.py``.
"""

import numpy as np
import pytest

from warpsim.cute import (
    DInt, Swizzle, X, _, composition, inner_partition, local_partition, local_tile, make_gmem_ptr,
    make_layout, make_smem_ptr, make_tensor, outer_partition, tile_to_shape, warp_lanes,
)

SK = tile_to_shape(composition(Swizzle(3, 3, 3), make_layout((8, 64), (64, 1))), (64, 64))


def gmem(*layout):
    return make_tensor(make_gmem_ptr(0, "f32"), make_layout(*layout))


@pytest.mark.parametrize("call, words", [
    (lambda: local_tile(gmem((64, 32)), (16, 8, 2), (0, 0, 0)), ["local_tile", "rank mismatch", "(_16,_8,_2)"]),
    (lambda: local_tile(gmem((64, 32)), (12, 8), (0, 0)), ["local_tile", "does not divide", "_12"]),
    (lambda: local_tile(gmem((DInt(60), 32)), (16, 8), (0, 0)), ["local_tile", "does not divide", "60"]),
    (lambda: local_tile(gmem((64, 32)), (16, 8), (4, 0)), ["local_tile", "outside", "(_4,_4)"]),
    (lambda: local_tile(gmem((64, 32)), (16, 8), DInt(16)), ["local_tile", "outside"]),
    (lambda: local_tile(gmem((64, 32)), (16, 8), (0, 0, 0)), ["local_tile", "rank mismatch"]),
    (lambda: local_tile(gmem((64, 32)), (16, _), (0, 0)), ["local_tile", "holds _"]),
    (lambda: local_tile(gmem((64, 32)), (16, 8, 4), (0, 0, _), (1, X)), ["local_tile", "projection"]),
    (lambda: local_tile(gmem((64, 32)), (16, 8), (warp_lanes(0) % 4, 0)), ["local_tile", "lane vector"]),
    (lambda: outer_partition(gmem((64, 32)), (4, 8), (4, 0)), ["outer_partition", "outside", "tile"]),
    (lambda: inner_partition(gmem((64, 32)), (4, 8), (0, -1)), ["inner_partition", "outside"]),
    (lambda: local_partition(gmem((64, 32)), make_layout((4, 8)), 32), ["local_partition", "thread 32", "(_4,_8)"]),
    (lambda: local_partition(gmem((64, 32)), make_layout((4, 8)), warp_lanes(1)), ["local_partition", "thread"]),
    (lambda: local_partition(gmem((64, 30)), make_layout((4, 8)), 0), ["local_partition", "does not divide"]),
    (lambda: local_partition(gmem((64, 32)), make_layout((4, 8, 2)), 0), ["local_partition", "rank mismatch"]),
    (lambda: local_partition(gmem((64, 32)), make_layout((4, 8)), 0, (1, X, 1)), ["local_partition", "projection"]),
])
def test_bad_input_is_a_value_error_naming_the_call(call, words):
    with pytest.raises(ValueError) as e:
        call()
    for w in words:
        assert w in str(e.value), f"{w!r} not in: {e.value}"


def test_type_errors():
    with pytest.raises(TypeError, match="local_tile: expected a Tensor"):
        local_tile(make_layout((4, 4)), (2, 2), (0, 0))
    with pytest.raises(TypeError, match="local_partition: the thread layout must be a Layout"):
        local_partition(gmem((64, 32)), (4, 8), 0)


@pytest.mark.parametrize("tensor", [gmem((64, 32), (32, 1)), make_tensor(make_smem_ptr(0, "f16"), SK),
                                    make_tensor("f32", make_layout((16, 32)))],
                         ids=["gmem", "swizzled smem", "registers"])
@pytest.mark.parametrize("thr", [make_layout((4, 8)), make_layout((8, 4), (4, 1))], ids=["(4,8)", "(8,4):(4,1)"])
def test_threads_cover_the_tensor_once(tensor, thr):
    """Post-condition: the threads' partitions are disjoint and together hold every element."""
    seen = np.concatenate([local_partition(tensor, thr, t).address_table() for t in range(32)])
    assert np.array_equal(np.sort(seen), np.sort(tensor.address_table()))


def test_tiles_cover_the_tensor_once():
    t = make_tensor(make_smem_ptr(0, "f16"), SK)
    seen = np.concatenate([local_tile(t, (16, 32), (DInt(i), DInt(j))).address_table()
                           for i in range(4) for j in range(2)])
    assert np.array_equal(np.sort(seen), np.sort(t.address_table()))


@pytest.mark.parametrize("tensor", [gmem((64, 32)), make_tensor(make_smem_ptr(0, "f16"), SK)], ids=["gmem", "swizzled"])
def test_lane_vectors_agree_with_one_thread(tensor):
    """A lane-vector partition, and a tile of it, hold each lane's one-thread addresses and layout."""
    thr, lanes = make_layout((8, 4), (4, 1)), warp_lanes(0)
    vec = local_partition(tensor, thr, lanes)
    tiled = local_tile(vec, (4, 2), (1, DInt(1)))
    for i in lanes:
        one = local_partition(tensor, thr, int(i))
        assert np.array_equal(vec.address_table()[i], one.address_table())
        assert str(vec.lane(i)) == str(one)
        one_tile = local_tile(one, (4, 2), (1, DInt(1)))
        assert np.array_equal(tiled.address_table()[i], one_tile.address_table())
        assert str(tiled.lane(i)) == str(one_tile)


def test_projection_drops_the_x_modes():
    """local_tile with (1, X, 1) equals local_tile with the M and K parts of tiler and coordinate."""
    a = gmem((64, 32), (32, 1))
    projected = local_tile(a, (16, 64, 8), (DInt(2), DInt(0), _), (1, X, 1))
    plain = local_tile(a, (16, 8), (DInt(2), _))
    assert str(projected) == str(plain) and str(projected.layout) == "(_16,_8,_4):(_32,_1,_8)"
