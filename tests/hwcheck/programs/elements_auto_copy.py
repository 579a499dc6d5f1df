"""A test program for ``hwcheck run``: element access on memory and CuTe's automatic ``copy(src, dst)``.

One warp. ``y = x^T`` (8x8 f16) through shared memory by element access only (``s[c, r] = x[r, c]``:
16-bit loads and stores, each into the low half of a register). Then each thread moves its row
of ``w`` (32x8 f16) to shared memory, to registers and to ``z`` with ``copy(src, dst)``: CuTe picks
128-bit accesses for these contiguous rows.
"""

import numpy as np

import warpsim
from warpsim.cute import _, local_partition, make_layout, make_smem_ptr, make_tensor
from warpsim.program import copy, syncthreads

SMEM_ROWS = 128             # byte address of w's rows in shared memory, after the 8x8 tile


def row(t, tid):
    """Thread ``tid``'s row of a (32, 8) tensor."""
    return local_partition(t, make_layout((32, 1)), tid)[0, _]


def kernel(tid, *, x, w, y, z):
    s = make_tensor(make_smem_ptr(0, "f16"), make_layout((8, 8), (8, 1)))              # (8,8) -> element
    r = tid // 4
    for j in range(2):
        c = (tid % 4) * 2 + j
        s[c, r] = x[r, c]                                                               # CuTe: s(c, r) = x(r, c)
    syncthreads()
    for j in range(2):
        c = (tid % 4) * 2 + j
        y[r, c] = s(r, c)
    rows = make_tensor(make_smem_ptr(SMEM_ROWS, "f16"), make_layout((32, 8), (8, 1)))  # (32,8) -> element
    frag = make_tensor("f16", make_layout(8))
    copy(row(w, tid), row(rows, tid))
    syncthreads()
    copy(row(rows, tid), frag)
    copy(frag, row(z, tid))


def reference(params, inputs, arch):
    return {"y": np.ascontiguousarray(inputs["x"].T), "z": inputs["w"]}


program = warpsim.Program(kernel, threads=32, inputs={"x": ((8, 8), "f16"), "w": ((32, 8), "f16")},
                          outputs={"y": ((8, 8), "f16"), "z": ((32, 8), "f16")}, smem_bytes=SMEM_ROWS + 512,
                          reference=reference)
