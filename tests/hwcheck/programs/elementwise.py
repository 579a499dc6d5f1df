"""A test program for ``hwcheck run``: element-wise arithmetic on register tensors (``warpsim.program.arith``).

Two warps; thread ``t`` loads row ``t`` of ``x`` (64x8 f32, rows 40.. skipped by ``copy_if``, their
registers left 0), folds its 8 values as 2 rows x 4 columns into a row max and a row sum, combines them
over its quad with ``shfl.sync.bfly``, then computes every form of the dialect (``add sub mul div fma
max neg ex2 lg2``, ``set``/``slct`` through ``where``, a per-lane mask) and stores its row
of ``y`` where the row is even (``copy_if``).
"""

import operator

import numpy as np

import warpsim
from warpsim.cute import Copy_Atom, UniversalCopy, make_fragment_like, make_identity_tensor, make_layout, make_tensor, \
    make_tiled_copy
from warpsim.program import allreduce, copy_if, equ, exp2, fma, fmax, log2, reduce_max, reduce_sum, where


def kernel(tid, *, x, y):
    cp = make_tiled_copy(Copy_Atom(UniversalCopy(32), "f32"), make_layout((64, 1)), make_layout((1, 1)))
    thr = cp.get_slice(tid)
    coord = thr.partition_S(make_identity_tensor((64, 8)))                 # (CPY, 1, 8) -> (row, column)
    f = make_fragment_like(thr.partition_S(x))
    copy_if(cp, [coord[0, 0, j][0] < 40 for j in range(8)], thr.partition_S(x), f)
    rows = make_tensor(f.engine, make_layout((2, 4)))                        # the 8 values as (row, column)
    m, s = make_tensor("f32", (2,)), make_tensor("f32", (2,))
    for r in range(2):
        m[r] = -np.inf
        s[r] = 0.0
    reduce_max(rows, m)
    allreduce(m, fmax, 4)
    reduce_sum(rows, s)
    allreduce(s, operator.add, 4)
    for i in range(8):
        v = where(coord[0, 0, i][1] < 6, f[i], -np.inf)                      # a mask known when tracing
        m_use = where(m[i % 2] == -np.inf, 0.0, m[i % 2])
        f[i] = exp2(fma(v - m_use, 1.4426950408889634, -(s[i % 2] * 0.5)))
        f[i] = where(equ(f[i], 0.0), 1.0, 1.0 / f[i]) + log2(f[i]) * 3.0
    copy_if(cp, [coord[0, 0, j][0] % 2 == 0 for j in range(8)], f, thr.partition_D(y))


program = warpsim.Program(kernel, threads=64, inputs={"x": ((64, 8), "f32")}, outputs={"y": ((64, 8), "f32")},
                          smem_bytes=16, name="elementwise")
