"""Hopper's Tensor Memory Accelerator (TMA), bit-exact: the tensor map and the tile copies of
``cp.async.bulk.tensor`` between global and shared memory.

**The tensor map** (:class:`TensorMap`) holds what the host gives ``cuTensorMapEncodeTiled``: the element type, the
rank (1..5), the global address, the dimensions and the byte strides of the tensor (innermost first, as the driver
takes them), the box (the tile one copy moves), the element strides (1 here), the interleave (none), the swizzle
(none, 32B, 64B, 128B) and the out-of-bounds fill (zeros). The GPU's 128-byte ``CUtensorMap`` is opaque, so warpsim
writes its own 128 bytes (:meth:`TensorMap.encode`: a magic word, then the fields) into the kernel parameter, and its
TMA reads them back (:func:`decode_fields`); ``hwcheck`` gives the GPU the driver's encoding of the same fields.

**A tile load** at box coordinates ``c`` (signed, innermost first) moves the box's elements ``c + i`` (``0 <= i <
box``) into shared memory, densely in row-major order from the innermost dimension (element ``i`` at byte
``((i4 * b3 + i3) * b2 ... + i0) * bytes`` from the destination), each address then swizzled as the wgmma
descriptors read it (:mod:`warpsim.isa.wgmma`: bits 7.. XORed into bits 4.. of the absolute shared address). An
element outside the tensor (a coordinate below 0 or at or past its dimension) is filled with zero bits. The
transaction bytes a load completes on its mbarrier are the whole box's, filled elements included. **A tile store**
moves the box from shared memory (the same placement) to the elements of it that lie inside the tensor.

Checks (:meth:`TensorMap.check`, as the driver's, each naming the field): rank 1..5; a 16-byte aligned global
address; dimensions 1..2**32; strides multiples of 16 below 2**40; box extents 1..256 with an innermost extent of a
multiple of 16 bytes; with a swizzle the innermost box extent equal to the swizzle's span (the placement warpsim
models; shorter rows are refused, not guessed).
"""

from dataclasses import dataclass, field

import numpy as np
from numba import njit

__all__ = ["TensorMap", "DTYPES", "SWIZZLES", "MAP_BYTES", "MAGIC", "decode_fields", "tile_copy", "tile_offsets",
           "box_elements", "F_BYTES", "F_RANK", "F_SWIZZLE", "F_ADDR", "F_DIMS", "F_STRIDES", "F_BOX", "F_DTYPE",
           "NFIELDS"]

MAP_BYTES = 128
MAGIC = 0x314D5457                 # "WTM1", little-endian, in the map's first word
# CUtensorMapDataType -> bytes per element (the driver's enum order)
DTYPES = {"u8": (0, 1), "u16": (1, 2), "u32": (2, 4), "s32": (3, 4), "u64": (4, 8), "s64": (5, 8), "f16": (6, 2),
          "f32": (7, 4), "f64": (8, 8), "bf16": (9, 2), "f32_ftz": (10, 4), "tf32": (11, 4), "tf32_ftz": (12, 4)}
_NUMPY = {np.dtype(np.uint8): "u8", np.dtype(np.int8): "u8", np.dtype(np.uint16): "u16", np.dtype(np.int16): "u16",
          np.dtype(np.uint32): "u32", np.dtype(np.int32): "s32", np.dtype(np.uint64): "u64",
          np.dtype(np.int64): "s64", np.dtype(np.float16): "f16", np.dtype(np.float32): "f32",
          np.dtype(np.float64): "f64"}
SWIZZLES = {"none": 0, "32B": 1, "64B": 2, "128B": 3}       # CUtensorMapSwizzle
_SPAN = (0, 32, 64, 128)
# decoded fields (int64[NFIELDS]): element bytes, rank, swizzle, global address, dims[5], byte strides[5] (dim 0's
# is the element size), box[5], the element type (the code of DTYPES)
F_BYTES, F_RANK, F_SWIZZLE, F_ADDR, F_DIMS, F_STRIDES, F_BOX, F_DTYPE = 0, 1, 2, 3, 4, 9, 14, 19
NFIELDS = 20


@dataclass(frozen=True)
class TensorMap:
    """A tiled tensor map over a numpy ``array`` (or an explicit ``address``): what ``cuTensorMapEncodeTiled`` takes.

    ``box``: the tile's extent along each axis **in the array's axis order** (numpy's; the driver's ``boxDim`` is
    this reversed); ``swizzle``: ``"none"``, ``"32B"``, ``"64B"``, ``"128B"``; ``dtype``: the element type's PTX name
    (default from the array: ``f16``, ``f32``, ``u16`` for bf16 bits with ``dtype="bf16"``, ...). The launch places
    ``array`` in global memory (the same buffer when the array is also passed for a pointer parameter) and fills in
    the address; :meth:`encode` then gives the parameter's 128 bytes.

    >>> m = TensorMap(np.zeros((64, 128), np.float16), box=(64, 64), swizzle="128B")
    >>> m.dims, m.strides, m.box_dims
    ((128, 64), (2, 256), (64, 64))
    """

    array: np.ndarray = field(repr=False)
    box: tuple
    swizzle: str = "none"
    dtype: str = ""

    @property
    def type_name(self):
        return self.dtype or _NUMPY.get(np.dtype(self.array.dtype), "?")

    @property
    def dims(self):
        """Global dimensions, innermost first."""
        return tuple(int(n) for n in self.array.shape[::-1])

    @property
    def strides(self):
        """Byte strides, innermost first (the first is the element size)."""
        return tuple(int(s) for s in self.array.strides[::-1])

    @property
    def box_dims(self):
        """The box, innermost first."""
        return tuple(int(b) for b in self.box[::-1])

    def check(self, what="tensor map"):
        """``ValueError`` naming the field the driver would refuse (see the module docstring); the map itself."""
        name = self.type_name
        if name not in DTYPES:
            raise ValueError(f"{what}: element type {name!r} is not one TMA moves (one of {', '.join(DTYPES)})")
        size = DTYPES[name][1]
        if self.array.itemsize != size:
            raise ValueError(f"{what}: dtype {name} is {size} bytes, the array's elements {self.array.itemsize}")
        rank = self.array.ndim
        if not 1 <= rank <= 5:
            raise ValueError(f"{what}: rank {rank}: TMA takes 1 to 5 dimensions")
        if len(self.box) != rank:
            raise ValueError(f"{what}: box {tuple(self.box)} has {len(self.box)} extents for a rank-{rank} array")
        if self.strides[0] != size:
            raise ValueError(f"{what}: the innermost axis must be contiguous (its stride is {self.strides[0]} bytes)")
        for d, (n, s) in enumerate(zip(self.dims, self.strides)):
            if not 1 <= n <= 1 << 32:
                raise ValueError(f"{what}: dimension {d} (innermost first) is {n}: 1 to 2**32")
            if d and (s % 16 or s <= 0 or s >= 1 << 40):
                raise ValueError(f"{what}: stride {d} (innermost first) is {s} bytes: a positive multiple of 16 "
                                 f"below 2**40")
        for d, b in enumerate(self.box_dims):
            if not 1 <= b <= 256:
                raise ValueError(f"{what}: box extent {d} (innermost first) is {b}: 1 to 256")
        inner = self.box_dims[0] * size
        if inner % 16:
            raise ValueError(f"{what}: the box's innermost extent is {inner} bytes: a multiple of 16")
        if self.swizzle not in SWIZZLES:
            raise ValueError(f"{what}: swizzle {self.swizzle!r}: one of {', '.join(SWIZZLES)}")
        span = _SPAN[SWIZZLES[self.swizzle]]
        if span and inner != span:
            raise ValueError(f"{what}: with swizzle {self.swizzle} the box's innermost extent must be {span} bytes "
                             f"(warpsim models that placement), got {inner}")
        return self

    @classmethod
    def encoded(cls, array, fields):
        """The map over ``array`` with the fields of a ``cuTensorMapEncodeTiled`` call (a dict as
        ``warpsim.cute.TmaCopy.encode_args()`` gives: ``dims``, ``strides`` from the second dimension, ``box``, all
        innermost first, ``swizzle`` as CUtensorMapSwizzle, element strides of 1). ``ValueError`` when the array's shape
        and strides are not the ones encoded (the map would describe another view of the memory than the array)."""
        names = {code: name for name, code in SWIZZLES.items()}
        if set(fields.get("element_strides", ())) - {1} or fields.get("swizzle") not in names:
            raise ValueError(f"TensorMap.encoded: element strides of 1 and a swizzle of {sorted(names)} are modelled, "
                             f"got {fields.get('element_strides')}, {fields.get('swizzle')}")
        m = cls(array, box=tuple(fields["box"])[::-1], swizzle=names[fields["swizzle"]],
                dtype="bf16" if fields.get("dtype") == DTYPES["bf16"][0] else "")
        if (m.dims, m.strides[1:]) != (tuple(fields["dims"]), tuple(fields["strides"])):
            raise ValueError(f"TensorMap.encoded: the array's dims {m.dims} and byte strides {m.strides[1:]} (innermost "
                             f"first) are not the encoded {tuple(fields['dims'])} and {tuple(fields['strides'])}")
        return m.check()

    def encode(self, address):
        """The 128 parameter bytes of this map with the tensor at global ``address``."""
        self.check()
        code, size = DTYPES[self.type_name]
        if address % 16:
            raise ValueError(f"tensor map: global address {address:#x} is not 16-byte aligned")
        words = np.zeros(MAP_BYTES // 8, np.uint64)
        head = np.array([MAGIC, code, self.array.ndim, SWIZZLES[self.swizzle]], np.uint32)
        words[0:2] = head.view(np.uint64)
        words[2] = address
        dims = list(self.dims) + [1] * (5 - self.array.ndim)
        strides = list(self.strides) + [0] * (5 - self.array.ndim)
        box = list(self.box_dims) + [1] * (5 - self.array.ndim)
        words[3:8] = dims
        words[8:13] = strides
        words[13:15] = np.array(box + [0, 0, 0], np.uint16).view(np.uint64)
        return words.tobytes()


@njit(cache=True)
def decode_fields(raw, out):
    """Read a map's 128 bytes (``raw``: uint8) into ``out`` (int64[NFIELDS]); False when the magic word is wrong."""
    def word(i):
        v = np.int64(0)
        for b in range(8):
            v |= np.int64(raw[8 * i + b]) << (8 * b)
        return v
    head = word(0)
    if head & 0xFFFFFFFF != MAGIC:
        return False
    code = (head >> 32) & 0xFFFFFFFF
    sizes = (1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4)
    out[F_BYTES] = sizes[code] if 0 <= code < 13 else 1
    out[F_DTYPE] = code
    second = word(1)
    out[F_RANK] = second & 0xFFFFFFFF
    out[F_SWIZZLE] = (second >> 32) & 0xFFFFFFFF
    out[F_ADDR] = word(2)
    for d in range(5):
        out[F_DIMS + d] = word(3 + d)
        out[F_STRIDES + d] = word(8 + d)
        out[F_BOX + d] = np.int64(raw[104 + 2 * d]) | (np.int64(raw[105 + 2 * d]) << 8)
    return out[F_RANK] >= 1 and out[F_RANK] <= 5


@njit(cache=True)
def box_elements(f):
    """How many elements the box of map fields ``f`` holds."""
    n = 1
    for d in range(f[F_RANK]):
        n *= f[F_BOX + d]
    return n


@njit(cache=True)
def tile_offsets(f, coords, dst, goff, out):
    """Where each element of the box of map fields ``f`` at ``coords`` (int64[5], innermost first) lies: ``out``
    (int64[box_elements(f), 2]) gets, per element in box order, its shared byte (from ``dst``, swizzled as the map
    says) and its global byte (from ``goff``, the global buffer offset of the map's address), or -1 where the element
    lies outside the tensor. False when an element inside the tensor has a negative global byte (a map whose address
    lies below the buffer). The one statement of the TMA's placement: :func:`tile_copy` and the bulk reductions read
    it."""
    size, rank = f[F_BYTES], f[F_RANK]
    w = (1, 2, 4, 8)[f[F_SWIZZLE]]
    i = np.zeros(5, np.int64)
    for e in range(out.shape[0]):
        rest = e
        inside = True
        g = goff
        for d in range(rank):
            b = f[F_BOX + d]
            i[d] = rest % b
            rest //= b
            c = coords[d] + i[d]
            if c < 0 or c >= f[F_DIMS + d]:
                inside = False
            g += c * f[F_STRIDES + d]
        s = dst + e * size
        if w > 1:
            s ^= ((s >> 7) & (w - 1)) << 4
        if inside and g < 0:
            return False
        out[e, 0] = s
        out[e, 1] = g if inside else -1
    return True


@njit(cache=True)
def tile_copy(f, coords, smem, dst, gmem, goff, load):
    """One tile copy of map fields ``f`` at box ``coords`` (int64[5], innermost first): ``load`` global -> shared at
    shared byte ``dst``, else shared -> global. ``goff``: the global buffer offset of the map's address. Returns the
    bytes of the box, or -1 when an element's global or shared byte lies outside memory (nothing is checked for
    elements a load fills)."""
    size = f[F_BYTES]
    at = np.empty((box_elements(f), 2), np.int64)
    if not tile_offsets(f, coords, dst, goff, at):
        return -1
    for e in range(at.shape[0]):
        s, g = at[e, 0], at[e, 1]
        if s < 0 or s + size > smem.shape[0]:
            return -1
        if g >= 0 and g + size > gmem.shape[0]:
            return -1
        for k in range(size):
            if load:
                smem[s + k] = gmem[g + k] if g >= 0 else np.uint8(0)
            elif g >= 0:
                gmem[g + k] = smem[s + k]
    return at.shape[0] * size
