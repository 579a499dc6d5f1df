"""The GPU's own encoding of a TMA tensor map: ``cuTensorMapEncodeTiled`` of the CUDA driver, called through ctypes
with the fields of a :class:`warpsim.isa.tma.TensorMap` and the tensor's device address.

The simulator reads its own 128-byte encoding of the same fields (:meth:`TensorMap.encode`); a kernel's
``CUtensorMap`` parameter gets this one on the GPU, so both sides run the same copies.
"""

from __future__ import annotations

import ctypes

from hwcheck.errors import HwcheckError
from warpsim.isa.tma import DTYPES, MAP_BYTES, SWIZZLES

__all__ = ["encode_tiled"]

_DRIVER = None


def _driver():
    global _DRIVER
    if _DRIVER is None:
        try:
            _DRIVER = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise HwcheckError(f"tensor map: cannot load the CUDA driver (libcuda.so.1): {e}") from None
        fn = _DRIVER.cuTensorMapEncodeTiled
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p,
                       ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64),
                       ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint32),
                       ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    return _DRIVER


def encode_tiled(tmap, address, what="tensor map"):
    """The driver's 128 bytes for ``tmap`` (a checked :class:`~warpsim.isa.tma.TensorMap`) over device ``address``:
    no interleave, element strides 1, no L2 promotion, zero out-of-bounds fill (what warpsim models)."""
    tmap.check(what)
    rank = tmap.array.ndim
    dims = (ctypes.c_uint64 * rank)(*tmap.dims)
    strides = (ctypes.c_uint64 * max(rank - 1, 1))(*(tmap.strides[1:] or (0,)))
    box = (ctypes.c_uint32 * rank)(*tmap.box_dims)
    ones = (ctypes.c_uint32 * rank)(*([1] * rank))
    raw = (ctypes.c_uint8 * (MAP_BYTES + 64))()
    at = ctypes.addressof(raw)
    aligned = (at + 63) // 64 * 64                      # the driver wants the map 64-byte aligned
    rc = _driver().cuTensorMapEncodeTiled(aligned, DTYPES[tmap.type_name][0], rank, address, dims, strides, box,
                                          ones, 0, SWIZZLES[tmap.swizzle], 0, 0)
    if rc != 0:
        raise HwcheckError(f"{what}: cuTensorMapEncodeTiled refused the map (CUresult {rc}): dims {tmap.dims}, "
                           f"strides {tmap.strides}, box {tmap.box_dims}, swizzle {tmap.swizzle}")
    return bytes(raw[aligned - at:aligned - at + MAP_BYTES])
