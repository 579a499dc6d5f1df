"""A block reduction as in Numba's documentation: a shared-memory tree per block, one partial sum per block.

``block_sum(x, partial)``: ``partial[b] = sum of x[b * 256 : (b + 1) * 256]`` (f32, the tail read as 0), 256
threads per block, ``cuda.shared.array`` and ``cuda.syncthreads``; ``count_positive(x, count)``: ``count[0] +=``
the number of ``x[i] > 0`` by ``cuda.atomic.add`` (an int32 total: order-free, bit for bit).
"""

import numba
from numba import cuda

THREADS = 256


@cuda.jit
def block_sum(x, partial):
    buf = cuda.shared.array(THREADS, numba.float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[tid] = x[i] if i < x.size else numba.float32(0.0)
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if tid < step:
            buf[tid] += buf[tid + step]
        cuda.syncthreads()
        step //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = buf[0]


@cuda.jit
def count_positive(x, count):
    i = cuda.grid(1)
    if i < x.size and x[i] > 0:
        cuda.atomic.add(count, 0, 1)
