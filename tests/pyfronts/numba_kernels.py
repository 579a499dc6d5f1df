"""Numba CUDA kernels written as Numba's users write them, with host wrappers launching them as on a GPU
(``kernel[blocks, threads](numpy arrays...)``: Numba copies host arrays in and out). Nothing here knows warpsim."""

import math

from numba import cuda, float32, int32


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def clamp_scale(x, out, lo, hi):
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, x.shape[0], stride):                # a grid-stride loop
        out[i] = min(max(x[i], lo), hi) * 0.5


@cuda.jit
def block_sum(x, partial):
    tile = cuda.shared.array(256, float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    tile[t] = x[i] if i < x.size else float32(0)
    cuda.syncthreads()
    s = 128
    while s > 0:
        if t < s:
            tile[t] += tile[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = tile[0]


@cuda.jit
def histogram(x, bins):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(bins, x[i] % bins.size, int32(1))


@cuda.jit
def weighted_histogram(x, w, bins):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(bins, x[i] % bins.size, w[i])


@cuda.jit
def matrix_add_2d(a, b, c):
    row, col = cuda.grid(2)
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = a[row, col] + b[row, col]


@cuda.jit
def softmax_rows(x, y):
    r = cuda.grid(1)
    if r < x.shape[0]:
        m = x[r, 0]
        for j in range(1, x.shape[1]):
            m = max(m, x[r, j])
        s = float32(0)
        for j in range(x.shape[1]):
            e = math.exp(x[r, j] - m)
            y[r, j] = e
            s += e
        for j in range(x.shape[1]):
            y[r, j] /= s


@cuda.jit(lineinfo=True)
def racy_total(x, total):
    i = cuda.grid(1)
    if i < x.size and cuda.threadIdx.x == 0:
        total[0] = x[i]                                   # every block stores to one word: a race (the bug)


@cuda.jit
def hello(x):
    i = cuda.grid(1)
    if i < x.size:
        print("thread", i, "has", x[i])
