"""CuTe's two-argument ``copy(src, dst)`` in programs: the instruction CuTe picks, and the data it moves.

The widths follow ``include/cute/algorithm/copy.hpp`` (``warpsim.cute.auto_copy``); each case states
the width CuTe's rule gives by hand, and the data must arrive unchanged in both trace modes.
"""

import numpy as np
import pytest

from warpsim.cute import DInt, _, local_partition, make_layout, make_smem_ptr, make_tensor
from warpsim.errors import ProgramError
from warpsim.program import Program, copy, syncthreads
from warpsim.program.run import run_program


def row(t, tid):
    """Thread ``tid``'s row of a (32, 8) tensor, as a (8,) tensor."""
    return local_partition(t, make_layout((32, 1)), tid)[0, _]


def rows_program(reg_layout, smem_stride=(8, 1)):
    """Thread t: row t of x (8 halves) -> shared -> registers (``reg_layout``) -> row t of y, all by copy(src, dst)."""
    def kernel(tid, *, x, y):
        s = make_tensor(make_smem_ptr(0, "f16"), make_layout((32, 8), smem_stride))
        r = make_tensor("f16", reg_layout)
        copy(row(x, tid), row(s, tid))
        syncthreads()
        copy(row(s, tid), r)
        copy(r, row(y, tid))
    return Program(kernel, threads=32, inputs={"x": ((32, 8), "f16")}, outputs={"y": ((32, 8), "f16")}, smem_bytes=1024)


@pytest.mark.parametrize("mode", ["vector", "thread"])
def test_contiguous_rows_move_as_128_bit_vectors(mode):
    x = np.arange(256, dtype=np.uint16).reshape(32, 8) * 7
    r = run_program(rows_program(make_layout(8)), inputs={"x": x}, mode=mode)
    assert (r.outputs["y"] == x).all()
    assert r.stats.instructions == {"ld.global.v4.b32": 1, "st.shared.v4.b32": 1, "bar.sync": 1,
                                    "ld.shared.v4.b32": 1, "st.global.v4.b32": 1}


def test_a_strided_side_limits_the_vector():
    """Shared rows with column stride 2 (a (32,8):(16,2) view): no two elements are contiguous in
    shared memory, so every copy touching it moves one 16-bit element."""
    x = np.arange(256, dtype=np.uint16).reshape(32, 8) + 1000
    r = run_program(rows_program(make_layout(8), smem_stride=(16, 2)), inputs={"x": x})
    assert (r.outputs["y"] == x).all()
    counts = r.stats.instructions
    assert counts["st.shared.b16"] == 8 and counts["ld.shared.b16"] == 8 and counts["st.global.v4.b32"] == 1


def test_the_register_layout_decides_the_width():
    """Registers (2,4):(1,2) are contiguous like (8):(1): 128 bits; (2,4):(4,1) puts element 1 four
    slots after element 0: no common vector, one element per copy."""
    x = np.arange(256, dtype=np.uint16).reshape(32, 8)
    r = run_program(rows_program(make_layout((2, 4), (1, 2))), inputs={"x": x})
    assert (r.outputs["y"] == x).all()
    assert r.stats.instructions["ld.shared.v4.b32"] == 1     # (2,4):(1,2) is contiguous: still 128 bits
    r = run_program(rows_program(make_layout((2, 4), (4, 1))), inputs={"x": x})
    assert (r.outputs["y"] == x).all()
    assert r.stats.instructions["ld.shared.b16"] == 8        # element 1 is 4 slots away: one at a time


def test_dynamic_strides_assume_only_byte_alignment():
    """A dynamic stride in the copied mode makes the layout dynamic: CuTe assumes 8-bit alignment and
    copies elements (a dynamic row stride would not matter: slicing the row drops it)."""
    def kernel(tid, *, x, y):
        s = make_tensor(make_smem_ptr(0, "f16"), make_layout((32, 8), (8, DInt(1))))
        copy(row(x, tid), row(s, tid))
        syncthreads()
        copy(row(s, tid), row(y, tid))
    x = np.arange(256, dtype=np.uint16).reshape(32, 8)
    r = run_program(Program(kernel, threads=32, inputs={"x": ((32, 8), "f16")}, outputs={"y": ((32, 8), "f16")}, smem_bytes=1024),
                    inputs={"x": x})
    assert (r.outputs["y"] == x).all()
    assert r.stats.instructions["st.shared.b16"] == 8


def test_bad_calls_are_program_errors():
    def wrong_arity(tid, *, x, y):
        copy(x)

    def wrong_types(tid, *, x, y):
        copy(row(x, tid), make_tensor("f32", make_layout(8)))

    for kernel, message in ((wrong_arity, r"copy takes \(src, dst\) or \(copy_atom or tiled_copy, src, dst\), got 1"),
                            (wrong_types, r"copy\(src, dst\) at .*: src holds f16, dst f32")):
        program = Program(kernel, threads=32, inputs={"x": ((32, 8), "f16")}, outputs={"y": ((32, 8), "f16")}, smem_bytes=1024)
        with pytest.raises(ProgramError, match=message):
            run_program(program)
