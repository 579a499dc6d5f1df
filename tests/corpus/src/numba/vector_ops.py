"""Vector operations as Numba CUDA users write them: ``cuda.grid(1)`` and a bounds check, or a grid-stride loop.

``saxpy(a, x, y, out)``: ``out[i] = a * x[i] + y[i]`` (f32); ``clamp_scale(x, out, lo, hi)``: a grid-stride loop of
``out[i] = min(max(x[i], lo), hi) * 0.5`` (f64); ``xorshift(x, out)``: three xorshift32 rounds of each u32.
"""

import numba
from numba import cuda


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def clamp_scale(x, out, lo, hi):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.shape[0], stride):
        out[i] = min(max(x[i], lo), hi) * 0.5


@cuda.jit
def xorshift(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        for _ in range(3):
            v ^= numba.uint32(v << numba.uint32(13))
            v ^= v >> numba.uint32(17)
            v ^= numba.uint32(v << numba.uint32(5))
        out[i] = v
