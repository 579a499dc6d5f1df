"""A test program for ``hwcheck run``: what the seed example does not exercise.

Two warps; warp-uniform branches make per-warp phases (a ``switch (warp)`` in the lowered kernel).
Warp 0 loads rows of ``x`` (f32, 128-bit loads), converts them to ``dtype`` (``cvt.rn.*x2.f32``) and
stores them with 64-bit stores to shared memory ABOVE 48 KB (the launch must raise the kernel's
dynamic shared memory limit); warp 1 clears an f32 fragment and writes it to ``n``. After the
barrier warp 1 copies the shared rows to ``y`` element by element (16-bit loads and stores through
scratch registers, each into one half of a register).
"""

import warpsim
from warpsim.cute import Copy_Atom, UniversalCopy, make_fragment_like, make_layout, make_smem_ptr, make_tensor, \
    make_tiled_copy
from warpsim.program import clear, convert, copy, syncthreads

SMEM_ROWS = 0xC000          # byte address of the rows in shared memory: 48 KB


def rows_copy(dtype, bits, cols):
    """Thread t of a warp moves ``bits`` of row t per call: a (32, cols) tile."""
    per = bits // (32 if dtype == "f32" else 16)
    # (32,1) -> thread: one row each; (1,per) -> value: per contiguous elements
    return make_tiled_copy(Copy_Atom(UniversalCopy(bits), dtype), make_layout((32, 1)), make_layout((1, per)))


def kernel(tid, *, dtype, x, y, n):
    load = rows_copy("f32", 128, 8)
    to_smem = rows_copy(dtype, 64, 8)
    element = rows_copy(dtype, 16, 8)
    s = make_tensor(make_smem_ptr(SMEM_ROWS, dtype), make_layout((32, 8), (8, 1)))    # (32,8) -> element
    lane = tid % 32
    if tid // 32 == 0:
        tx = load.get_slice(lane).partition_S(x)
        fx = make_fragment_like(tx)
        copy(load, tx, fx)
        ts = to_smem.get_slice(lane).partition_D(s)
        fs = make_fragment_like(ts)
        convert(fx, fs)
        copy(to_smem, fs, ts)
    else:
        zeros = make_fragment_like(load.get_slice(lane).partition_S(x))
        clear(zeros)
        copy(load, zeros, load.get_slice(lane).partition_D(n))
    syncthreads()
    if tid // 32 == 1:
        t = element.get_slice(lane)
        copy(element, t.partition_S(s), t.partition_D(y))


program = warpsim.Program(
    kernel,
    threads=64,
    params={"dtype": ("f16", "bf16")},
    inputs={"x": ((32, 8), "f32")},
    outputs=lambda p: {"y": ((32, 8), p["dtype"]), "n": ((32, 8), "f32")},
    smem_bytes=SMEM_ROWS + 32 * 8 * 2,
    name="big_smem_convert",
)
