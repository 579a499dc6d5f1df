"""CUDA intrinsics as nvcc compiles them (ballot, match, funnel shifts, 64-bit high products, byte_perm,
ffs, clzll, reduce_add, atomicMax, atomicCAS), checked against Python's integers."""

from pathlib import Path

import numpy as np

import warpsim.ptx
from tests.ptx.ptx_helpers import nvcc_ptx

M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def _s64(v):
    return v - (1 << 64) if v >> 63 else v


def _byte_perm(x, y, s):
    t = (y << 32) | x
    return sum(((t >> (8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i) for i in range(4))


def test_intrinsics_compiled_by_nvcc(tmp_path):
    ptx = nvcc_ptx(tmp_path, (Path(__file__).parent / "intrinsics.cu").read_text())
    mod = warpsim.ptx.load(str(ptx))
    (kernel,) = mod.kernels
    rng = np.random.default_rng(7)
    data = rng.integers(0, 1 << 32, 128, dtype=np.uint64).astype(np.uint32)
    data[:8] = [0, 1, 0x80000000, 0xFFFFFFFF, 3, 3, 7, 0x10]
    res = mod.launch(kernel, block=64, args=[np.zeros(512, np.uint32), np.zeros(192, np.uint64), data])
    out, out64 = (res.buffers[name] for name, _ in mod.params(kernel)[:2])
    for t in range(64):
        x, y = int(data[t]), int(data[t + 64])
        X = (x << 32) | y
        warp = range(32 * (t // 32), 32 * (t // 32) + 32)
        bit = lambda lane: 1 << (lane % 32)                                   # noqa: E731
        ballot = sum(bit(u) for u in warp if data[u] & 1)
        same = sum(bit(u) for u in warp if data[u] & 3 == x & 3)
        same64 = sum(bit(u) for u in warp if int(data[u + 64]) & 7 == y & 7)
        wide = (y << 32) | x
        rot = ((wide << (t & 31)) >> 32) & M32
        rotc = (wide >> min(t, 32)) & M32
        hi = (X * ((X + 12345) & M64)) >> 64
        shi = (_s64(X) * -y) >> 64
        ffs = (x & -x).bit_length()
        red = sum(int(data[u]) & 0xFF for u in warp)
        want = [ballot, same, rot, rotc, _byte_perm(x, y, (t * 0x1111) & 0x7777), ffs + 64 * (64 - X.bit_length()),
                red + (1000 if t == 0 else 0)]
        assert out[7 * t:7 * t + 7].tolist() == [w & M32 for w in want], f"thread {t}"
        assert out64[3 * t:3 * t + 3].tolist() == [hi, shi & M64, same64], f"thread {t}"
    assert out[500] == data[:64].max() and out[501] == 1
