"""Row softmax in CuTe DSL: one warp per row, the row's maximum and sum by ``cute.arch.warp_reduction_*``.

``x``, ``y``: static (R, N) = (64, 256) f32, row-major; ``y[r] = exp(x[r] - max x[r]) / sum exp(x[r] - max x[r])``.
A 128-thread CTA takes 4 rows (warp w: row 4 * cta + w); each lane holds 2 x 4 values of its row (128-bit
copies through a thread-value layout), reduces them as a ``TensorSSA``, then across the warp.
Launch: grid ``(R / 4)``, block ``128``.
"""

import math

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor

R, N = 64, 256
ROWS_PER_CTA = 4


@cute.kernel
def softmax_kernel(gX: cute.Tensor, gY: cute.Tensor, thr_layout: cute.Layout, val_layout: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    blkX = gX[((None, None), (bidx, 0))]                   # (4, N): this CTA's rows
    blkY = gY[((None, None), (bidx, 0))]

    copy_atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), gX.element_type, num_bits_per_copy=128)
    tiled_copy = cute.make_tiled_copy_tv(copy_atom, thr_layout, val_layout)
    thr_copy = tiled_copy.get_slice(tidx)
    thrX = thr_copy.partition_S(blkX)                       # (4 values, 1, N / 128)
    thrY = thr_copy.partition_D(blkY)
    frg = cute.make_fragment_like(thrX)
    cute.copy(copy_atom, thrX, frg)

    x = frg.load()
    row_max = cute.arch.warp_reduction_max(x.reduce(cute.ReductionOp.MAX, -math.inf, 0))
    e = cute.math.exp(x - row_max)
    row_sum = cute.arch.warp_reduction_sum(e.reduce(cute.ReductionOp.ADD, 0.0, 0))
    frg.store(e / row_sum)
    cute.copy(copy_atom, frg, thrY)


@cute.jit
def softmax(mX: cute.Tensor, mY: cute.Tensor):
    thr_layout = cute.make_ordered_layout((ROWS_PER_CTA, 32), order=(1, 0))
    val_layout = cute.make_ordered_layout((1, 4), order=(1, 0))
    gX = cute.zipped_divide(mX, (ROWS_PER_CTA, N))          # ((4, N), (R / 4, 1))
    gY = cute.zipped_divide(mY, (ROWS_PER_CTA, N))
    softmax_kernel(gX, gY, thr_layout, val_layout).launch(grid=[R // ROWS_PER_CTA, 1, 1], block=[128, 1, 1])


WARPSIM = dict(jit=softmax, args=lambda: tuple(make_fake_compact_tensor(cutlass.Float32, (R, N), stride_order=(1, 0),
                                                                        assumed_align=16) for _ in range(2)))
