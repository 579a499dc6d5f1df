"""warpsim.cute.make_tma_copy apart from the oracle: the tensor map it builds for a launch, and its errors (one line
naming the layouts). tests/oracle/test_tma_oracle.py checks its layouts and encode arguments against CuTe itself."""

import numpy as np
import pytest

from warpsim.isa.tma import TensorMap
from warpsim.cute import (DInt, GenRowMajor, Layout, SM90_TMA_LOAD, SM90_TMA_LOAD_MULTICAST, SM90_TMA_STORE,
                          gmma_smem_atom, make_gmem_ptr, make_layout, make_smem_ptr, make_tensor, make_tma_copy,
                          tile_to_shape)


def _gmem(shape, dtype="f16", order=GenRowMajor):
    return make_tensor(make_gmem_ptr(0, dtype), tuple(DInt(n) for n in shape), order)


def test_the_tensor_map_of_a_gmma_tile_is_the_one_the_launch_takes():
    tma = make_tma_copy(SM90_TMA_LOAD, _gmem((256, 512)), tile_to_shape(gmma_smem_atom("K", "SW128", "f16"), (64, 64)))
    array = np.zeros((256, 512), np.float16)
    m = TensorMap.encoded(array, tma.encode_args())
    assert (m.dims, m.box_dims, m.swizzle) == ((512, 256), (64, 64), "128B")
    assert m.encode(0x1000) == TensorMap(array, box=(64, 64), swizzle="128B").encode(0x1000)
    assert tma.ptx == "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
    with pytest.raises(ValueError, match=r"the array's dims \(256, 512\) .* not the encoded \(512, 256\)"):
        TensorMap.encoded(np.zeros((512, 256), np.float16), tma.encode_args())


def test_multicast_splits_the_box_over_the_cluster():
    s = tile_to_shape(gmma_smem_atom("K", "SW128", "f16"), (128, 64))
    one = make_tma_copy(SM90_TMA_LOAD, _gmem((1024, 256)), s)
    four = make_tma_copy(SM90_TMA_LOAD_MULTICAST, _gmem((1024, 256)), s, (128, 64), 4)
    assert one.box == (64, 128) and four.box == (64, 32)
    assert four.ptx.endswith(".multicast::cluster") and str(four.TiledLayout_TV).startswith("(_4,")


@pytest.mark.parametrize("call, message", [
    (lambda: make_tma_copy(Layout(4), _gmem((64, 64)), Layout((64, 64))), "expected SM90_TMA_LOAD"),
    (lambda: make_tma_copy(SM90_TMA_LOAD, make_tensor(make_smem_ptr(0, "f16"), (64, 64)), Layout((64, 64))),
     "gtensor must be a global-memory tensor"),
    (lambda: make_tma_copy(SM90_TMA_STORE, _gmem((64, 64)), Layout((64, 64)), (64, 64), 2), "needs SM90_TMA_LOAD_MULTICAST"),
    (lambda: make_tma_copy(SM90_TMA_LOAD_MULTICAST, _gmem((64, 64)), Layout((64, 64)), (64, 64), 3), "power of two"),
    (lambda: make_tma_copy(SM90_TMA_LOAD, _gmem((64, 64)), make_layout((32, 64), GenRowMajor), (64, 64)),
     "size equivalence"),
    (lambda: make_tma_copy(SM90_TMA_LOAD, _gmem((64, 64)), Layout((64, 64))), "majorness of smem"),
    (lambda: make_tma_copy(SM90_TMA_LOAD, _gmem((64, 6)), make_layout((64, 6), GenRowMajor)), "global stride 1 is 12 bytes"),
])
def test_bad_tma_copies_are_one_line_naming_the_layouts(call, message):
    with pytest.raises((ValueError, TypeError), match=message) as err:
        call()
    assert "\n" not in str(err.value) and str(err.value).startswith("make_tma_copy: ")
