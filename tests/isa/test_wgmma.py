"""warpsim.isa.wgmma: the matrix descriptor, the canonical layouts it reads (checked against CuTe's statement of them
through warpsim's own layout algebra), the reference ``wgmma`` against ``mma.sync``'s model, and the PTX core's
``wgmma.mma_async`` against that reference on CuTe's GMMA atoms (examples/hopper/wgmma_probe.cu)."""

import os

import numpy as np
import pytest

from warpsim.cute import Swizzle, make_layout
from warpsim.isa import MMA_FRAGMENTS, mma_m16n8k16, to_fragment
from warpsim.isa.fragments import wgmma_d_map
from warpsim.isa.wgmma import MatrixDescriptor, descriptor_addresses, make_descriptor, wgmma

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBE = os.path.join(ROOT, "examples", "hopper", "wgmma_probe.cu")
WIDTH = {"none": 1, "32B": 2, "64B": 4, "128B": 8}


def test_descriptor_fields_round_trip_and_read_tritons_constants():
    # the two constants Triton 3.9 ORs into its sm_90 matmul's descriptors (A K-major 64-byte rows, B MN-major)
    a = MatrixDescriptor.from_bits(-9223371899415822336 & (1 << 64) - 1)
    b = MatrixDescriptor.from_bits(4611686293305294848)
    assert (a.layout, a.stride, a.leading) == ("64B", 512, 0)
    assert (b.layout, b.stride, b.leading) == ("128B", 1024, 0)
    d = MatrixDescriptor(4096 + 32, 2048, 1024, 0, "32B")
    assert MatrixDescriptor.from_bits(d.bits()) == d
    with pytest.raises(ValueError, match="stride"):
        make_descriptor(0, 16, 1 << 18)


def _cute_bytes(layout, mn_major, rows):
    """CuTe's canonical GMMA layout (mma_traits_sm90_gmma.hpp, ``make_gmma_desc``) for 16-bit elements, in bytes:
    ``((mn), (k)) -> byte offset`` with LBO 2048 and SBO 1024 (the swizzle ``Swizzle<log2 W, 4, 3>`` applies to the
    start address plus it)."""
    w = WIDTH[layout]
    lbo, sbo = 2048, 1024
    if not mn_major:                       # K-major: ((8, m), (T, 2)) : ((16 W, SBO), (1, LBO or 16)) elements
        mn = ((8, rows // 8), (16 * w, sbo))
        k = ((8, 2), (2, lbo if w == 1 else 16))
    elif w == 1:                           # MN-major interleaved: ((T, m), (8, k)) : ((1, SBO), (16, LBO))
        mn = ((8, rows // 8), (2, sbo))
        k = ((8, 2), (16, lbo))
    else:                                  # MN-major swizzled: ((T, W, m), (8, k)) : ((1, 16, LBO), (16 W, SBO))
        mn = ((8, w, max(1, rows // (8 * w))), (2, 16, lbo))
        k = ((8, 2), (16 * w, sbo))
    return make_layout((mn[0], k[0]), (mn[1], k[1]))


def _coord(shape, i):
    """Colexicographic coordinate of ``i`` in a (possibly nested) mode shape."""
    if isinstance(shape, int):
        return i
    out = []
    for s in shape:
        size = int(np.prod(s)) if not isinstance(s, int) else s
        out.append(_coord(s, i % size))
        i //= size
    return tuple(out)


# a start 32 bytes into a swizzle row: how a k loop steps a K-major swizzled descriptor
@pytest.mark.parametrize("layout,mn_major,start", [(layout, mn_major, 4096) for layout in WIDTH
                                                   for mn_major in (False, True)]
                         + [(layout, False, 4096 + 32) for layout in ("32B", "64B", "128B")])
def test_addresses_are_cutes_canonical_layouts(layout, mn_major, start):
    rows = 64
    inner = _cute_bytes(layout, mn_major, rows)
    got = descriptor_addresses(make_descriptor(start, 2048, 1024, layout), rows, mn_major=mn_major)
    mn_shape, k_shape = inner.shape
    for mn in range(rows):
        for k in range(16):
            offset = inner((_coord(mn_shape, mn), _coord(k_shape, k)))
            want = Swizzle(*{1: (0, 4, 3), 2: (1, 4, 3), 4: (2, 4, 3), 8: (3, 4, 3)}[WIDTH[layout]])(start + offset)
            assert got[mn, k] == want, (mn, k, layout, mn_major)


def test_reference_is_mma_syncs_model_tile_by_tile():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 1 << 16, (64, 16)) & 0xBFFF            # no infinities or NaNs: exponents below 31
    b = rng.integers(0, 1 << 16, (16, 24)) & 0xBFFF
    c = rng.standard_normal((64, 24)).astype(np.float32).view(np.uint32)
    d = wgmma(a, b, c)
    for m0 in range(0, 64, 16):
        for n0 in range(0, 24, 8):
            frag = lambda op, x: to_fragment(MMA_FRAGMENTS[("m16n8k16", op)], x.astype(np.uint32))  # noqa: E731
            got = mma_m16n8k16(frag("A", a[m0:m0 + 16]), frag("B", b[:, n0:n0 + 8]),
                               frag("C.f32", c[m0:m0 + 16, n0:n0 + 8]))
            want = frag("C.f32", d[m0:m0 + 16, n0:n0 + 8])
            assert np.array_equal(got, want), (m0, n0)


def _nvcc():
    from warpsim.toolchain import find_nvcc
    if find_nvcc() is None and os.environ.get("CI") != "true":
        pytest.skip("nvcc not found on PATH or under CUDA_HOME (examples/hopper/wgmma_probe.cu is CUDA C++)")
    pytest.importorskip("cutlass_library", reason="the CuTe headers (pip install -e '.[cute]')")


@pytest.mark.parametrize("kernel,n,mn_a,mn_b,acc", [("ss_f32_f16_n64_k_mn", 64, False, True, "f32"),
                                                    ("ss_f32_f16_n24_mn_k", 24, True, False, "f32"),
                                                    ("ss_f16_f16_n64_k_k", 64, False, False, "f16")])
def test_core_runs_cutes_gmma_atoms_as_the_reference(kernel, n, mn_a, mn_b, acc):
    """Each CTA of the probe reads shared memory through its own pair of descriptors; the core's registers (y)
    must be the reference wgmma of the operands gathered through descriptor_addresses, placed by wgmma_d_map."""
    _nvcc()
    from warpsim.frontends.kernel import open_kernel
    ctas = (0, 7, 13, 22, 47, 60)                               # layouts, start offsets, scale-d false (>= 48)
    rng = np.random.default_rng(5)
    x = rng.standard_normal(24576).astype(np.float16)
    per = n // 2 if acc == "f32" else n // 4
    c = rng.standard_normal(96 * 128 * per * (1 if acc == "f32" else 2)).astype(np.float32 if acc == "f32" else
                                                                                  np.float16)
    kern = open_kernel(PROBE, kernel, arch="sm_90")
    smem = np.zeros(1024 + 49152, np.uint8)                      # the 1 KB the system reserves, then s[]
    smem[1024:] = x.view(np.uint8)
    cbits = c.view(np.uint32).reshape(96, 128, per)
    for cta in ctas:
        res = kern.launch(grid=(96, 1, 1), block=(128, 1, 1), args={"x": x, "c": c, "y": np.zeros(96 * 128 * per,
                                                                                                 np.uint32)}, cta=cta)
        y = res.buffers["y"] if "y" in res.buffers else next(v for k, v in res.buffers.items() if k.endswith("_2"))
        shift = (0, 32, 256)[(cta // 16) % 3]
        da = make_descriptor(1024 + shift, 2048, 1024, ("none", "128B", "64B", "32B")[cta & 3])
        db = make_descriptor(1024 + 8192 + shift, 2048, 1024, ("none", "128B", "64B", "32B")[(cta >> 2) & 3])
        half = lambda addr: smem[addr].astype(np.int64) | smem[addr + 1].astype(np.int64) << 8  # noqa: E731
        a = half(descriptor_addresses(da, 64, mn_major=mn_a))
        b = half(descriptor_addresses(db, n, mn_major=mn_b)).T
        dmap = wgmma_d_map(n, acc)
        cmat = np.zeros((64, n), np.int64)
        got = np.zeros((64, n), np.int64)
        ybits = y.reshape(96, 128, per)[cta]
        for warp in range(4):
            for lane in range(32):
                for r in range(dmap.regs):
                    for h in range(dmap.halves):
                        row, col = dmap.at(lane, r, h)
                        word_c, word_y = int(cbits[cta, 32 * warp + lane, r]), int(ybits[32 * warp + lane, r])
                        shift_h = 16 * h if acc == "f16" else 0
                        mask = 0xFFFF if acc == "f16" else 0xFFFFFFFF
                        cmat[16 * warp + row, col] = (word_c >> shift_h) & mask
                        got[16 * warp + row, col] = (word_y >> shift_h) & mask
        want = wgmma(a, b, None if cta >= 48 else cmat, cd=acc)
        assert np.array_equal(got, want.astype(np.int64)), f"CTA {cta}"


@pytest.mark.parametrize("n", [8, 24, 64, 256])
def test_cutes_gmma_atom_layouts_are_the_isa_fragment_maps(n):
    """CuTe's GMMA::CLayout_64xN and ALayout_64x16 (warpsim.cute, checked against CuTe by the oracle) place every
    (thread, value) of the warpgroup where the isa's tables (wgmma_d_map, WGMMA_A, warp w % 4 holding rows 16 w ..)
    do: the atom layer and the semantics agree."""
    from warpsim.cute import gmma_op
    from warpsim.isa.fragments import WGMMA_A
    op = gmma_op(f"SM90_64x{n}x16_F32F16F16_RS")
    dmap = wgmma_d_map(n, "f32")
    for t in range(128):
        for v in range(n // 2):
            row, col = dmap.at(t % 32, v)
            assert op.CLayout((t, v)) == 16 * (t // 32) + row + 64 * col, (t, v)
        for v in range(8):
            row, col = WGMMA_A.at(t % 32, v // 2, v % 2)
            assert op.ALayout((t, v)) == 16 * (t // 32) + row + 64 * col, (t, v)
