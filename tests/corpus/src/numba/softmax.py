"""Row softmax in Numba CUDA: one thread per row (a plain loop over the columns), ``math.exp``.

``softmax_rows(x, y)``: ``y[r, :] = exp(x[r, :] - max x[r, :]) / sum exp(x[r, :] - max x[r, :])``, x and y 2-D f32.
"""

import math

from numba import cuda


@cuda.jit
def softmax_rows(x, y):
    r = cuda.grid(1)
    if r < x.shape[0]:
        m = x[r, 0]
        for c in range(1, x.shape[1]):
            m = max(m, x[r, c])
        s = 0.0
        for c in range(x.shape[1]):
            e = math.exp(x[r, c] - m)
            y[r, c] = e
            s += e
        for c in range(x.shape[1]):
            y[r, c] /= s
