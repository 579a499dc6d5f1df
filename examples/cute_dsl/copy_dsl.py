"""A plain copy kernel in CuTe DSL: each CTA copies 128 f32 values, one per thread.

``dst[i] = src[i]`` for ``i`` in ``[0, n)``; ``n`` is a multiple of 128 fixed at compile time (1024).
Launch: grid ``(n // 128, 1, 1)``, block ``(128, 1, 1)``. The tensors have static shapes, so each
is passed as its pointer alone (an 8-byte ``.param`` struct).

    warpsim run examples/cute_dsl/copy_dsl.py --kernel copy_kernel --grid 8 --block 128 \\
        --arg src=src.npy --arg dst=zeros:f32:1024 --dump dst --out out
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor

N = 1024
THREADS = 128


@cute.kernel
def copy_kernel(src: cute.Tensor, dst: cute.Tensor):
    tid, _, _ = cute.arch.thread_idx()
    cta, _, _ = cute.arch.block_idx()
    gsrc = cute.local_tile(src, (THREADS,), (cta,))       # this CTA's 128 values
    gdst = cute.local_tile(dst, (THREADS,), (cta,))
    gdst[tid] = gsrc[tid]


@cute.jit
def copy_host(src: cute.Tensor, dst: cute.Tensor):
    copy_kernel(src, dst).launch(grid=(cute.size(src) // THREADS, 1, 1), block=(THREADS, 1, 1))


# warpsim: compile copy_host on two static 1024-element f32 tensors (see warpsim.frontends.cute_dsl)
WARPSIM = dict(jit=copy_host, args=lambda: (make_fake_compact_tensor(cutlass.Float32, (N,)),
                                            make_fake_compact_tensor(cutlass.Float32, (N,))))
