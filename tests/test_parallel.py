"""Grids of CTAs (warpsim.parallel): a 16-CTA grid on a local Ray cluster equals the sequential run;
CTAs that depend on each other are refused, with the reason and the way out."""

import numpy as np
import pytest

from warpsim.isa import mma_m16n8k16
from warpsim.parallel import GlobalMemory, GridDependenceError, check_independent, cta_access, run_grid

# Global memory of a grid of mma tiles: per CTA, A (uint32[32, 4]), B ([32, 2]), C ([32, 4]) as fragments,
# then D ([32, 4]) written by the CTA. Offsets in bytes.
A, B, C = 512, 256, 512
TILE = A + B + C
CTAS = 16
D0 = CTAS * TILE                   # the D tiles follow the inputs


def _words(mem, offset, shape):
    return mem.read(offset, 4 * int(np.prod(shape))).view(np.uint32).reshape(shape)


def mma_tile(cta, mem):
    """CTA ``cta``: D[cta] = A[cta] B[cta] + C[cta], one warp, one mma.m16n8k16 (f16 in, f32 out)."""
    base = cta * TILE
    a, b, c = _words(mem, base, (32, 4)), _words(mem, base + A, (32, 2)), _words(mem, base + A + B, (32, 4))
    mem.write(D0 + cta * 512, mma_m16n8k16(a, b, c, ab="f16", cd="f32"))


def chained_tile(cta, mem):
    """As :func:`mma_tile`, but C is the previous CTA's D: CTA i needs CTA i-1's output."""
    base = cta * TILE
    a, b = _words(mem, base, (32, 4)), _words(mem, base + A, (32, 2))
    c = _words(mem, D0 + (cta - 1) * 512, (32, 4)) if cta else _words(mem, base + A + B, (32, 4))
    mem.write(D0 + cta * 512, mma_m16n8k16(a, b, c, ab="f16", cd="f32"))


def count_tiles(cta, mem):
    """Every CTA adds 1 to one counter (an atomic add to global memory, as a grid would)."""
    mem.write(0, _words(mem, 0, (1,)) + np.uint32(1))


def _grid_memory(seed=0):
    rng = np.random.default_rng(seed)
    halves = rng.integers(0x3000, 0x4000, size=CTAS * (A + B) // 2, dtype=np.uint16)   # f16 in [0.125, 2)
    gmem = np.zeros(D0 + CTAS * 512, np.uint8)
    for cta in range(CTAS):
        ab = halves[cta * (A + B) // 2:(cta + 1) * (A + B) // 2]
        gmem[cta * TILE:cta * TILE + A + B] = ab.view(np.uint8)
        gmem[cta * TILE + A + B:(cta + 1) * TILE] = rng.integers(0, 2**32, 128, dtype=np.uint32).view(np.uint8) & 0x3F
    return gmem


def test_a_16_cta_grid_on_ray_equals_the_sequential_run(ray_cluster):
    gmem = _grid_memory()
    sequential = run_grid(mma_tile, gmem, CTAS)
    seen = []
    parallel = run_grid(mma_tile, gmem, CTAS, ray=True, ctas_per_task=3, progress=lambda done, n: seen.append(done))
    assert parallel.mode == "ray" and parallel.tasks == 6 and seen[-1] == CTAS
    assert np.array_equal(parallel.gmem, sequential.gmem)
    assert not np.array_equal(sequential.gmem[D0:], gmem[D0:]), "the grid must have written its D tiles"
    assert np.array_equal(gmem, _grid_memory()), "the input memory is not changed"
    d5 = sequential.gmem[D0 + 5 * 512:D0 + 6 * 512].view(np.uint32).reshape(32, 4)
    mem = GlobalMemory(gmem.copy())
    a, b, c = _words(mem, 5 * TILE, (32, 4)), _words(mem, 5 * TILE + A, (32, 2)), _words(mem, 5 * TILE + A + B, (32, 4))
    assert np.array_equal(d5, mma_m16n8k16(a, b, c, ab="f16", cd="f32"))


def test_a_cta_reading_another_s_output_is_refused_and_runs_in_sequence(ray_cluster):
    gmem = _grid_memory()
    with pytest.raises(GridDependenceError, match=rf"CTA 1 reads global byte {D0:#x} that CTA 0 writes: .*--no-ray"):
        run_grid(chained_tile, gmem, CTAS, ray=True)
    run_grid(chained_tile, gmem, CTAS)                     # the way out


def test_two_ctas_writing_one_counter_are_refused():
    gmem = np.zeros(64, np.uint8)
    accesses = [cta_access(count_tiles, gmem, cta) for cta in range(3)]
    with pytest.raises(GridDependenceError, match=r"CTAs 0 and 1 both write global byte 0x0"):
        check_independent(accesses, gmem.size)
    assert run_grid(count_tiles, gmem, 3).gmem[:4].view(np.uint32)[0] == 3


def test_a_write_behind_the_memory_s_back_is_seen():
    def sneaky(cta, mem):
        mem.data[8 + cta] = 1                                  # not through write(): found by the diff
        mem.read(8 + (cta + 1) % 2, 1)
    with pytest.raises(GridDependenceError, match="CTA 0 reads global byte 0x9 that CTA 1 writes"):
        check_independent([cta_access(sneaky, np.zeros(16, np.uint8), cta) for cta in range(2)])


def test_a_cta_s_own_error_reaches_the_caller_unwrapped(ray_cluster):
    def bad(cta, mem):
        mem.read(1 << 20, 4)
    with pytest.raises(ValueError, match=r"GlobalMemory.read: bytes \[0x100000, 0x100004\) are outside"):
        run_grid(bad, np.zeros(16, np.uint8), 2, ray=True)


def _untracked(fn):
    """``fn`` with its reads hidden, as an interpreter that loads from ``mem.data`` would be."""
    def cta_fn(cta, mem):
        fn(cta, mem)
        mem.reads[:] = False
    return cta_fn


def test_the_rerun_check_needs_no_reported_reads(ray_cluster):
    gmem = _grid_memory()
    assert np.array_equal(run_grid(_untracked(mma_tile), gmem, CTAS, ray=True, check="rerun").gmem,
                          run_grid(mma_tile, gmem, CTAS).gmem)
    with pytest.raises(GridDependenceError, match=r"CTA 1 writes global byte 0x5... differently after CTAs 0..0 ran"):
        run_grid(_untracked(chained_tile), gmem, CTAS, ray=True, check="rerun")
    unchecked = run_grid(_untracked(chained_tile), gmem, CTAS, ray=True)      # what the rerun check prevents:
    assert not np.array_equal(unchecked.gmem, run_grid(chained_tile, gmem, CTAS).gmem)   # a silent difference
