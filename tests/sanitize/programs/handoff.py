"""A Python CuTe-dialect program with a planted race: warp 1 stores a tile to shared memory (# A) and warp 0 reads it
back (# B); with ``sync=no`` the ``syncthreads()`` between them is missing. ``warpsim sanitize`` must name both lines
for ``sync=no`` and find nothing for ``sync=yes``."""

from warpsim.cute import Copy_Atom, UniversalCopy, make_layout, make_smem_ptr, make_tensor, make_tiled_copy
from warpsim.program import Program, copy, syncthreads

TILED_COPY = make_tiled_copy(Copy_Atom(UniversalCopy(32), "u32"), make_layout((32, 1)), make_layout((1, 1)))


def handoff(tid, *, x, y, sync):
    tile = make_tensor(make_smem_ptr(0, "u32"), make_layout((32, 2), (2, 1)))
    thr = TILED_COPY.get_slice(tid % 32)
    if tid // 32 == 1:
        copy(TILED_COPY, thr.partition_S(x), thr.partition_D(tile))    # A
    if sync == "yes":
        syncthreads()
    if tid // 32 == 0:
        copy(TILED_COPY, thr.partition_S(tile), thr.partition_D(y))    # B


program = Program(handoff, threads=64, smem_bytes=256, inputs={"x": ((32, 2), "u32")},
                  outputs={"y": ((32, 2), "u32")}, params={"sync": ("no", "yes")})
