"""warpsim.isa.tma: the tensor map's checks (each naming its field), its encoding read back, and the tile copy: the
box's elements with zeros outside the tensor, placed where wgmma's descriptors read them; the store clipped."""

import numpy as np
import pytest

from warpsim.isa.tma import F_ADDR, F_BOX, F_DIMS, F_RANK, F_STRIDES, F_SWIZZLE, NFIELDS, TensorMap, decode_fields, \
    tile_copy
from warpsim.isa.wgmma import descriptor_addresses, make_descriptor


def _fields(tmap, address=0x1000):
    f = np.zeros(NFIELDS, np.int64)
    assert decode_fields(np.frombuffer(tmap.encode(address), np.uint8), f)
    return f


def test_the_encoding_reads_back():
    a = np.zeros((3, 100, 40), np.float16)
    f = _fields(TensorMap(a, (2, 16, 8)), 0x2000)
    assert (f[F_RANK], f[F_SWIZZLE], f[F_ADDR]) == (3, 0, 0x2000)
    assert list(f[F_DIMS:F_DIMS + 3]) == [40, 100, 3] and list(f[F_STRIDES:F_STRIDES + 3]) == [2, 80, 8000]
    assert list(f[F_BOX:F_BOX + 5]) == [8, 16, 2, 1, 1]
    assert not decode_fields(np.zeros(128, np.uint8), np.zeros(NFIELDS, np.int64))     # not a warpsim map


@pytest.mark.parametrize("kwargs,message", [
    (dict(array=np.zeros((64, 64), np.float16), box=(64, 300)), r"box extent 0 \(innermost first\) is 300: 1 to 256"),
    (dict(array=np.zeros((64, 60), np.float16), box=(64, 4)), r"stride 1 \(innermost first\) is 120 bytes"),
    (dict(array=np.zeros((64, 64), np.float16), box=(64, 32), swizzle="128B"),
     r"with swizzle 128B the box's innermost extent must be 128 bytes .*got 64"),
    (dict(array=np.zeros((64, 64), np.float16), box=(64, 4)), r"innermost extent is 8 bytes: a multiple of 16"),
    (dict(array=np.zeros((64, 64), np.float16)[:, ::2], box=(8, 8)), r"innermost axis must be contiguous"),
    (dict(array=np.zeros((2,) * 6, np.float32), box=(1,) * 6), r"rank 6: TMA takes 1 to 5 dimensions"),
    (dict(array=np.zeros((64, 64), np.float16), box=(64, 64), swizzle="256B"), r"swizzle '256B'"),
])
def test_bad_maps_name_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TensorMap(**kwargs).check()


def test_a_load_fills_outside_the_tensor_with_zeros_and_a_store_clips():
    rng = np.random.default_rng(0)
    a = rng.integers(1, 1 << 16, (50, 24)).astype(np.uint16)             # rows of 48 bytes
    tmap = TensorMap(a, (16, 8))
    gmem = a.view(np.uint8).ravel().copy()
    f = _fields(tmap, 0)
    smem = np.full(4096, 0xEE, np.uint8)
    coords = np.array([20, 40, 0, 0, 0], np.int64)                       # columns 20..27, rows 40..55
    assert tile_copy(f, coords, smem, 1024, gmem, 0, True) == 16 * 8 * 2
    box = smem[1024:1024 + 256].view(np.uint16).reshape(16, 8)
    want = np.zeros((16, 8), np.uint16)
    want[:10, :4] = a[40:50, 20:24]
    assert np.array_equal(box, want)
    out = np.zeros_like(gmem)
    smem[1024:1024 + 256] = rng.integers(0, 256, 256).astype(np.uint8)
    tile_copy(f, coords, smem, 1024, out, 0, False)
    got = out.view(np.uint16).reshape(50, 24)
    written = smem[1024:1024 + 256].view(np.uint16).reshape(16, 8)
    assert np.array_equal(got[40:50, 20:24], written[:10, :4]) and not got[:40].any() and not got[:, :20].any()


@pytest.mark.parametrize("swizzle,width", [("128B", 64), ("64B", 32), ("32B", 16)])
def test_a_swizzled_box_lands_where_a_k_major_wgmma_descriptor_reads_it(swizzle, width):
    """A box of 64 rows x (swizzle span) bytes of f16 at a 1024-aligned address: element (m, k) lies where the K-major
    descriptor of that layout (SBO 8 rows) reads (m, k) of its k16 slice, the slice's start stepped by 32 bytes."""
    a = np.arange(64 * width, dtype=np.uint16).reshape(64, width)
    f = _fields(TensorMap(a, (64, width), swizzle))
    smem = np.zeros(1024 + 64 * width * 2, np.uint8)
    tile_copy(f, np.zeros(5, np.int64), smem, 1024, a.view(np.uint8).ravel(), 0, True)
    for k0 in range(0, width, 16):
        addrs = descriptor_addresses(make_descriptor(1024 + 2 * k0, 16, 8 * width * 2, swizzle), 64)
        got = smem[addrs].astype(np.uint16) | smem[addrs + 1].astype(np.uint16) << 8
        assert np.array_equal(got, a[:, k0:k0 + 16]), k0
