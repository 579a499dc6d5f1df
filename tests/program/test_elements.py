"""Element access on memory tensors in programs, as CuTe's ``sQ(r, c) = gQ(i)``: a load and a store,
in both trace modes; and error messages that name lanes' values without printing whole lane vectors."""

import numpy as np
import pytest

from warpsim.cute import Copy_Atom, UniversalCopy, make_layout, make_smem_ptr, make_tensor, make_tiled_copy
from warpsim.errors import ProgramError
from warpsim.program import Program, syncthreads
from warpsim.program.run import run_program


def transpose(tid, *, x, y):
    """y = x^T (8x8) through shared memory, two elements per thread, by element access only."""
    s = make_tensor(make_smem_ptr(0, x.dtype), make_layout((8, 8), (8, 1)))
    r = tid // 4
    for j in range(2):
        c = (tid % 4) * 2 + j
        s[c, r] = x[r, c]               # CuTe: s(c, r) = x(r, c)
    syncthreads()
    for j in range(2):
        c = (tid % 4) * 2 + j
        y(r, c)                          # a load whose value is dropped: still one instruction
        y[r, c] = s(r, c)


@pytest.mark.parametrize("mode", ["vector", "thread"])
@pytest.mark.parametrize("dtype, bits", [("f16", 16), ("f32", 32)])
def test_element_copies_move_the_data(mode, dtype, bits):
    program = Program(transpose, threads=32, inputs={"x": ((8, 8), dtype)}, outputs={"y": ((8, 8), dtype)},
                      smem_bytes=256)
    store = np.uint16 if bits == 16 else np.uint32
    x = (np.arange(64, dtype=np.uint32) * 0x01010101 + 7).astype(store).reshape(8, 8)
    r = run_program(program, inputs={"x": x}, mode=mode)
    assert (r.outputs["y"] == x.T).all()
    assert r.stats.instructions == {f"ld.global.b{bits}": 4, f"st.shared.b{bits}": 2, "bar.sync": 1,
                                    f"ld.shared.b{bits}": 2, f"st.global.b{bits}": 2}


def test_elements_of_a_partitioned_tensor():
    """A tensor partitioned for the lane vector: each lane's element 0 and 1 are its own addresses."""
    tiled = make_tiled_copy(Copy_Atom(UniversalCopy(32), "f16"), make_layout((32, 1)), make_layout((1, 2)))

    def kernel(tid, *, x, y):
        tx = tiled.get_slice(tid).partition_S(x)        # ((2), 1, 1): this thread's two halves of row tid
        ty = tiled.get_slice(tid).partition_D(y)
        ty[1] = tx[0]
        ty[0] = tx[1]

    x = np.arange(64, dtype=np.uint16).reshape(32, 2)
    for mode in ("vector", "thread"):
        r = run_program(Program(kernel, threads=32, inputs={"x": ((32, 2), "f16")}, outputs={"y": ((32, 2), "f16")}),
                        inputs={"x": x}, mode=mode)
        assert (r.outputs["y"] == x[:, ::-1]).all()


def one_warp(kernel):
    return Program(kernel, threads=32, inputs={"x": ((32, 8), "f16")}, outputs={"y": ((32, 8), "f32")},
                   smem_bytes=512)


def store_an_int(tid, *, x, y):
    s = make_tensor(make_smem_ptr(0, "f16"), make_layout(32))
    s[tid] = 5


def store_other_type(tid, *, x, y):
    y[tid, 0] = x[tid, 0]


def store_a_stale_element(tid, *, x, y):
    s = make_tensor(make_smem_ptr(0, "f16"), make_layout(32))
    first = x[tid, 0]
    for j in range(1, 5):
        x[tid, j]
    s[tid] = first


def bad_coordinate(tid, *, x, y):
    x[tid, 1.5]


def outside_the_tensor(tid, *, x, y):
    s = make_tensor(make_smem_ptr(448, "f16"), make_layout(32))          # the last 64 of 512 bytes
    s[tid + 1] = x[tid, 0]


@pytest.mark.parametrize("mode", ["vector", "thread"])
@pytest.mark.parametrize("kernel, message", [
    (store_an_int, r"smem element .* = \.\.\. at .*: a memory element can be given an element loaded from "
                   r"memory \(u\[j\]\), not int 5"),
    (store_other_type, r"gmem element .*: the element is f16 \(.* loaded at .*\), the tensor holds f32"),
    (store_a_stale_element, r"the element .* was overwritten: 4 loads came after it, and loaded elements share 4 "),
    (bad_coordinate, r"a coordinate must hold integers, _ and tuples, got "),
])
def test_errors_are_one_line_without_lane_vectors(kernel, message, mode):
    with pytest.raises(ProgramError, match=message) as info:
        run_program(one_warp(kernel), mode=mode)
    text = str(info.value)
    assert "\n" not in text and "LaneVector" not in text and "array(" not in text
    assert len(text) < 400, text


def test_an_address_outside_shared_memory_is_a_fault_naming_the_lane():
    from warpsim.errors import SimulatorFault
    with pytest.raises(SimulatorFault, match=r"st.shared.b16: warp 0 lane 31: address 0x200"):
        run_program(one_warp(outside_the_tensor), mode="vector")


def test_outside_a_program_memory_elements_stay_unreadable():
    s = make_tensor(make_smem_ptr(0, "f16"), make_layout(32))
    with pytest.raises(TypeError, match="elements of a smem tensor live in the simulated machine"):
        s[3]
