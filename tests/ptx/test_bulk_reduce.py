"""Hopper's bulk reductions in the core (examples/hopper/bulk_reduce.cu, libcu++'s cuda::ptx::cp_reduce_async_bulk, and
tma_copy.cu's tile_reduce_add, CuTe's SM90_TMA_REDUCE_ADD): into global memory, into the peer CTA of a cluster through
its mbarrier, and a TMA box added into a tensor, each against numpy on values where numpy's arithmetic is the
instruction's (finite, normal: one rounding to nearest even); a map of a type the reduction does not take is a fault."""

import os

import numpy as np
import pytest

from warpsim.errors import SimulatorFault
from warpsim.isa.tma import TensorMap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOPPER = os.path.join(ROOT, "examples", "hopper")
N = 256


def _kernel(name, source):
    from warpsim.toolchain import find_nvcc
    if find_nvcc() is None and os.environ.get("CI") != "true":
        pytest.skip(f"nvcc not found on PATH or under CUDA_HOME (examples/hopper/{source} is CUDA C++)")
    pytest.importorskip("cutlass_library", reason="the CuTe headers (pip install -e '.[cute]')")
    from warpsim.frontends.kernel import open_kernel
    return open_kernel(os.path.join(HOPPER, source), name, arch="sm_90")


def _run(k, grid, smem, args):
    res = k.launch(grid=grid, block=64, smem=smem, args=args)
    return {p.source_name: res.buffers[p.name] for p in k.params if p.name in res.buffers}


RNG = np.random.default_rng(11)
U32 = lambda: RNG.integers(0, 1 << 32, 4 * N, dtype=np.uint64).astype(np.uint32)   # noqa: E731
U64 = lambda: RNG.integers(0, 1 << 63, 4 * N, dtype=np.uint64) * np.uint64(2) + np.uint64(1)  # noqa: E731
CASES = {   # kernel: (out, in, what numpy says out becomes)
    "reduce_add_f32": (RNG.standard_normal(4 * N).astype(np.float32), RNG.standard_normal(4 * N).astype(np.float32),
                       np.add),
    "reduce_add_f64": (RNG.standard_normal(4 * N), RNG.standard_normal(4 * N), np.add),
    "reduce_add_f16": (RNG.standard_normal(4 * N).astype(np.float16), RNG.standard_normal(4 * N).astype(np.float16),
                       np.add),
    "reduce_add_u32": (U32(), U32(), np.add),
    "reduce_min_s32": (U32().view(np.int32), U32().view(np.int32), np.minimum),
    "reduce_max_u64": (U64(), U64(), np.maximum),
    "reduce_inc_u32": (U32() % 1000, U32() % 1000, lambda o, i: np.where(o >= i, 0, o + 1).astype(np.uint32)),
    "reduce_xor_b64": (U64(), U64(), np.bitwise_xor),
}


@pytest.mark.parametrize("kernel", sorted(CASES))
def test_a_bulk_reduction_into_global_memory_is_numpys(kernel):
    out, inp, want = CASES[kernel]
    got = _run(_kernel(kernel, "bulk_reduce.cu"), 4, N * out.itemsize, {"out": out.copy(), "in": inp, "n": N})["out"]
    expect = want(out, inp).astype(out.dtype)
    assert (got.view(np.uint8) == expect.view(np.uint8)).all(), kernel


def test_a_reduction_into_the_peer_cta_completes_on_its_mbarrier():
    out, inp = U32(), U32()
    got = _run(_kernel("reduce_add_peer", "bulk_reduce.cu"), 4, 2 * N * 4, {"out": out.copy(), "in": inp, "n": N})
    peer = inp.reshape(2, 2, N)[:, ::-1].reshape(-1)          # CTA b gets the slice of b ^ 1
    assert (got["out"] == out + peer).all()


@pytest.mark.parametrize("shape, box, swizzle", [((40, 56), (16, 32), "none"), ((100, 64), (64, 32), "128B")])
def test_a_tma_box_added_into_the_tensor_is_numpys(shape, box, swizzle):
    k = _kernel("tile_reduce_add", "tma_copy.cu")
    t = RNG.standard_normal(shape).astype(np.float32)
    grid = (-(-shape[1] // box[1]), -(-shape[0] // box[0]))
    nbytes = box[0] * box[1] * 4
    inp = RNG.standard_normal(grid[0] * grid[1] * box[0] * box[1]).astype(np.float32)
    res = k.launch(grid=grid, block=128, smem=nbytes, args={"map": TensorMap(t.copy(), box, swizzle=swizzle),
                                                            "in": inp.view(np.uint32), "box0": box[1],
                                                            "box1": box[0], "bytes": nbytes})
    got = res.buffers[k.params[0].name].reshape(shape)
    want = t.copy()
    for y in range(grid[1]):
        for x in range(grid[0]):
            words = inp[(y * grid[0] + x) * box[0] * box[1]:][:box[0] * box[1]].view(np.uint32)
            if swizzle == "128B":                            # the words as the swizzled box lies in shared memory
                idx = np.arange(words.size) * 4
                words = words[(idx ^ (((idx >> 7) & 7) << 4)) // 4]
            tile = words.view(np.float32).reshape(box)
            r0, c0 = y * box[0], x * box[1]
            rows, cols = min(box[0], shape[0] - r0), min(box[1], shape[1] - c0)
            want[r0:r0 + rows, c0:c0 + cols] += tile[:rows, :cols]
    assert (got.view(np.uint32) == want.view(np.uint32)).all()


def test_a_tma_reduction_of_a_type_it_does_not_take_is_a_fault_naming_the_map():
    k = _kernel("tile_reduce_add", "tma_copy.cu")
    t = np.zeros((16, 32), np.float64)                       # .add takes no f64 tensor
    with pytest.raises(SimulatorFault, match=r"cp.reduce.async.bulk.tensor.*tensor map"):
        k.launch(grid=1, block=128, smem=4096, args={"map": TensorMap(t, (16, 16)), "in": np.zeros(1024, np.uint32),
                                                     "box0": 16, "box1": 16, "bytes": 2048})


def test_the_h100s_float_rules_of_the_bulk_add():
    """conformance/h100/hopper-tma-fifth-run/: on every bit pattern the H100's bulk f32 add kept subnormal operands and
    results where red.global.add.f32 flushes them (4 words of 10 seeds), and its f64 add passed signalling NaNs through
    unquieted (5 words: 0xfff24ff89b0fa287 where add.f64 gives 0xfffa...)."""
    out32 = np.zeros(4 * N, np.uint32)
    in32 = np.zeros(4 * N, np.uint32)
    out32[:3] = [0x00800000, 0x00000001, 0x030C8440]             # the smallest normal, a subnormal, a tiny normal
    in32[:3] = [0x80400000, 0x00000002, 0x000135A6]              # -half of it, another subnormal, a subnormal
    got = _run(_kernel("reduce_add_f32", "bulk_reduce.cu"), 4, N * 4, {"out": out32.view(np.float32).copy(),
                                                                        "in": in32.view(np.float32), "n": N})["out"]
    want = out32.view(np.float32) + in32.view(np.float32)        # numpy: IEEE, subnormals kept
    assert (got.view(np.uint32)[:3] == want.view(np.uint32)[:3]).all() and got.view(np.uint32)[0] == 0x00400000
    out64 = np.zeros(4 * N, np.uint64)
    in64 = np.zeros(4 * N, np.uint64)
    out64[:2] = [0xFFF24FF89B0FA287, 0x3FF0000000000000]
    in64[:2] = [0x3FF0000000000000, 0x7FF59EB026C60114]          # 1.0 beside each signalling NaN
    got = _run(_kernel("reduce_add_f64", "bulk_reduce.cu"), 4, N * 8, {"out": out64.view(np.float64).copy(),
                                                                        "in": in64.view(np.float64), "n": N})["out"]
    assert got.view(np.uint64)[:2].tolist() == [0xFFF24FF89B0FA287, 0x7FF59EB026C60114]
