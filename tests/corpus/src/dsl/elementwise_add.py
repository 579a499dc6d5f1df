"""Elementwise ``c = a + b`` in CuTe DSL, in the shape of the DSL's ``elementwise_add`` example.

``a``, ``b``, ``c``: static (M, N) = (64, 512) f32, row-major. The (M, N) tensors are divided into CTA tiles by a
thread-value layout (``make_layout_tv``): 4 x 32 threads, each taking 4 x 4 values with 128-bit copies, so one
128-thread CTA covers a (16, 128) tile; grid ``(M / 16) * (N / 128) = 16``, block ``128``. Each thread copies its
values into registers (``CopyUniversalOp``), adds them as a ``TensorSSA`` and copies the sum out.
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor

M, N = 64, 512


@cute.kernel
def elementwise_add_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor, thr_layout: cute.Layout,
                           val_layout: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    blk_coord = ((None, None), bidx)
    blkA = gA[blk_coord]                                    # (TileM, TileN)
    blkB = gB[blk_coord]
    blkC = gC[blk_coord]

    copy_atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), gA.element_type, num_bits_per_copy=128)
    tiled_copy = cute.make_tiled_copy_tv(copy_atom, thr_layout, val_layout)
    thr_copy = tiled_copy.get_slice(tidx)
    thrA = thr_copy.partition_S(blkA)
    thrB = thr_copy.partition_S(blkB)
    thrC = thr_copy.partition_D(blkC)

    frgA = cute.make_fragment_like(thrA)
    frgB = cute.make_fragment_like(thrB)
    frgC = cute.make_fragment_like(thrC)
    cute.copy(copy_atom, thrA, frgA)
    cute.copy(copy_atom, thrB, frgB)
    frgC.store(frgA.load() + frgB.load())
    cute.copy(copy_atom, frgC, thrC)


@cute.jit
def elementwise_add(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    vector = 128 // mA.element_type.width
    thr_layout = cute.make_ordered_layout((4, 32), order=(1, 0))
    val_layout = cute.make_ordered_layout((4, vector), order=(1, 0))
    tiler_mn, tv_layout = cute.make_layout_tv(thr_layout, val_layout)
    gA = cute.zipped_divide(mA, tiler_mn)                   # ((TileM, TileN), (RestM, RestN))
    gB = cute.zipped_divide(mB, tiler_mn)
    gC = cute.zipped_divide(mC, tiler_mn)
    elementwise_add_kernel(gA, gB, gC, thr_layout, val_layout).launch(
        grid=[cute.size(gC, mode=[1]), 1, 1], block=[cute.size(tv_layout, mode=[0]), 1, 1])


WARPSIM = dict(jit=elementwise_add, args=lambda: tuple(make_fake_compact_tensor(cutlass.Float32, (M, N), stride_order=(1, 0),
                                                                                 assumed_align=16)
                                                        for _ in range(3)))
