"""The Python API given bad inputs: an exception naming the input (never a crash, a hang or a silent wrong
answer), and files written whole or not at all."""

import os

import numpy as np
import pytest

import warpsim.isa as isa
from bad_input_helpers import ECHO, OLD
from warpsim.commands.run import compare_outputs
from warpsim.draw.scene import Scene
from warpsim.errors import ProgramError, SimulatorFault
from warpsim.explain import ConfigError, explain
from warpsim.files import WriteError, write_atomic
from warpsim.machine import Machine
from warpsim.program.program import Program, load_program
from warpsim.program.run import run_program

NEAR = 2**63 - 8          # an address whose + 16 overflows int64: the check must not wrap


def lanes(value, lane=3, dtype=np.int64):
    a = np.zeros(32, dtype)
    a[lane] = value
    return a


def nothing(tid, **_):
    pass


MACHINE_ERRORS = [
    (lambda m: m.execute_ld(0, "shared", [0], lanes(NEAR), size=4), SimulatorFault,
     "ld.shared.b32: warp 0 lane 3: address 0x7ffffffffffffff8 + 4 bytes is outside shared memory"),
    (lambda m: m.execute_ld(0, "shared", [0, 1, 2, 3], lanes(NEAR), size=16), SimulatorFault,
     "address 0x7ffffffffffffff8 + 16 bytes is outside shared memory"),
    (lambda m: m.execute_ld(0, "global", [0], lanes(NEAR), size=2), SimulatorFault, "outside global memory"),
    (lambda m: m.execute_st(0, "shared", [0], lanes(NEAR), size=4), SimulatorFault,
     "st.shared.b32: warp 0 lane 3: address 0x7ffffffffffffff8"),
    (lambda m: m.execute_st(0, "global", [0, 1], lanes(NEAR), size=8), SimulatorFault, "outside global memory"),
    (lambda m: m.execute_ldmatrix(0, [0], lanes(NEAR), num=1), SimulatorFault,
     "ldmatrix.sync.aligned.m8n8.x1.shared.b16: warp 0 lane 3: address 0x7ffffffffffffff8 + 16 bytes"),
    (lambda m: m.execute_ldmatrix(0, [0, 1, 2, 3], lanes(2**63 - 1, 31), num=4), SimulatorFault, "lane 31"),
    (lambda m: m.execute_ld(0, "shared", [0], lanes(2**63 + 8, 5, np.uint64), size=4), SimulatorFault,
     "lane 5: address 0x8000000000000008 is outside every memory"),
    (lambda m: m.execute_ldmatrix(0, [0], lanes(2**64 - 16, 0, np.uint64), num=1), SimulatorFault,
     "lane 0: address 0xfffffffffffffff0"),
    (lambda m: m.execute_ld(0, "shared", [0], lanes(-4), size=4), SimulatorFault, "address -0x4"),
    (lambda m: m.execute_ld(0, "shared", [0], lanes(2), size=4), SimulatorFault, "not 4-byte aligned"),
    (lambda m: m.execute_ld(0, "shared", [0], np.zeros(31, np.int64), size=4), ValueError, "got shape (31,)"),
    (lambda m: m.execute_ld(0, "shared", [0], np.zeros(32), size=4), ValueError, "of float64"),
    (lambda m: m.execute_ld(0, "local", [0], lanes(0), size=4), ValueError, "space must be 'shared' or 'global'"),
    (lambda m: m.execute_ld(0, "shared", [0], lanes(0), size=3), ValueError, "size must be one of (2, 4, 8, 16)"),
    (lambda m: m.execute_ld(5, "shared", [0], lanes(0), size=4), ValueError, "warp must be an int in [0, 1), got 5"),
    (lambda m: m.execute_ld(0, "shared", [99], lanes(0), size=4), SimulatorFault, "99"),
    (lambda m: m.execute_ldmatrix(0, [0], lanes(0), num=4.0), ValueError, "num must be 1, 2 or 4, got 4.0"),
    (lambda m: m.execute_ld(0, "shared", [0], lanes(0), size=2, half=np.str_("not an array")), ValueError,
     "ld.shared.b16: half must be an int in [0, 2), got np.str_('not an array')"),
    (lambda m: m.execute_st(0, "shared", [0], lanes(0), size=2, half=2), ValueError, "half must be an int in [0, 2)"),
    (lambda m: m.execute_cvt_pack(0, 0, "r1", 2), ValueError, "a_reg must be an int in [0, 8), got 'r1'"),
    (lambda m: m.execute_cvt_pack(0, 99, 1, 2), ValueError, "d_reg must be an int in [0, 8), got 99"),
    (lambda m: m.execute_ldmatrix(0, [0], lanes(0), num=True), ValueError, "num must be 1, 2 or 4, got True"),
    (lambda m: m.execute_ldmatrix(0, [0, 1, 2], lanes(0), num=3), ValueError, "got 3"),
    (lambda m: m.alloc_global("huge", (1 << 32) + 1), ValueError,  # before anything is allocated (gmem stays 0 bytes)
     "alloc_global: buffer 'huge' of 4,294,967,297 bytes would end at byte 4,294,967,297 of global memory"),
    (lambda m: (m.alloc_global("a", 1024), m.alloc_global("b", (1 << 32) - 512))[1], ValueError,
     "buffer 'b' of 4,294,966,784 bytes would end at byte 4,294,967,808"),
]


@pytest.mark.parametrize("case,error,message", MACHINE_ERRORS, ids=[m[:50] for _c, _e, m in MACHINE_ERRORS])
def test_machine_error(case, error, message):
    m = Machine(1, 8, 256)
    before = m.regs.copy(), m.smem.copy()
    with pytest.raises(error) as e:
        case(m)
    assert message in str(e.value) and "\n" not in str(e.value)
    assert np.array_equal(m.regs, before[0]) and np.array_equal(m.smem, before[1])   # nothing written
    assert m.gmem.size <= 1024 and "huge" not in m.buffers and "b" not in m.buffers


SMEM = np.zeros(256, np.uint8)
LDMATRIX_ERRORS = [
    (lambda: isa.ldmatrix(SMEM, lanes(NEAR), num=1), SimulatorFault, "lane 3: address 0x7ffffffffffffff8 + 16"),
    (lambda: isa.ldmatrix(SMEM, lanes(NEAR, 31), num=4), SimulatorFault, "lane 31"),
    (lambda: isa.ldmatrix(SMEM, np.stack([lanes(0), lanes(NEAR)]), num=1), SimulatorFault, "entry 1"),
    (lambda: isa.ldmatrix(SMEM, lanes(2**63, 0, np.uint64), num=1), ValueError, "too large"),
    (lambda: isa.ldmatrix(SMEM, lanes(0), num=4.0), ValueError, "num must be 1, 2 or 4, got 4.0"),
    (lambda: isa.ldmatrix(SMEM, lanes(0), num=np.float64(2)), ValueError, "num must be 1, 2 or 4, got np.float64(2.0)"),
    (lambda: isa.ldmatrix(SMEM, lanes(0), num="4"), ValueError, "got '4'"),
    (lambda: isa.ldmatrix(SMEM, lanes(0), num=1, trans="yes"), TypeError, "trans must be a bool"),
    (lambda: isa.ldmatrix(SMEM.astype(np.uint16), lanes(0), num=1), TypeError, "smem must be a numpy array of uint8"),
    (lambda: isa.ldmatrix(SMEM, lanes(0).astype(float), num=1), TypeError, "addrs must be a numpy array of integers"),
    (lambda: isa.ldmatrix(SMEM, np.zeros(16, np.int64), num=1), ValueError, "addrs must have shape (..., 32)"),
    (lambda: isa.ldmatrix(np.zeros((3, 256), np.uint8), np.zeros((2, 32), np.int64), num=1), ValueError,
     "leading shapes differ"),
    (lambda: isa.ldmatrix(SMEM, lanes(8), num=1), SimulatorFault, "not 16-byte aligned"),
    (lambda: isa.ldmatrix(np.zeros(0, np.uint8), lanes(0), num=1), SimulatorFault, "outside shared memory"),
]


@pytest.mark.parametrize("case,error,message", LDMATRIX_ERRORS, ids=[m[:40] for _c, _e, m in LDMATRIX_ERRORS])
def test_ldmatrix_error(case, error, message):
    with pytest.raises(error) as e:
        case()
    assert message in str(e.value) and "\n" not in str(e.value)


ECHO_PROGRAM = load_program(ECHO)
RUN_ERRORS = [
    (dict(program="echo.py"), TypeError, "expected a warpsim Program"),
    (dict(seed=-1), ValueError, "seed must be a non-negative int, got -1"),
    (dict(seed=1.5), ValueError, "seed must be a non-negative int, got 1.5"),
    (dict(inputs=[np.zeros((32, 8), np.uint16)]), TypeError, "inputs must be a dict"),
    (dict(inputs={"x": np.zeros((32, 8), np.float16)}, params={"dtype": "bf16"}), ValueError,
     "'x' is a bf16 buffer: give raw bits (uint16) or bfloat16 values, got float16"),
    (dict(inputs={"x": np.zeros((32, 8), np.float32)}), ValueError, "got float32"),
    (dict(inputs={"x": np.zeros((32, 8), np.int16)}), ValueError, "got int16"),
    (dict(inputs={"x": "not an array"}), ValueError, "got <U12"),
    (dict(inputs={"x": np.zeros((8, 32), np.uint16)}), ValueError, "must have shape (32, 8), got (8, 32)"),
    (dict(inputs={"y": np.zeros((32, 8), np.uint16)}), ValueError, "unknown input 'y' (inputs: x)"),
    (dict(params={"dtype": "f64"}), ValueError, "param dtype='f64' is not one of the choices: f16, bf16"),
    (dict(arch="sm70"), ValueError, "sm70"),
]


@pytest.mark.parametrize("kwargs,error,message", RUN_ERRORS, ids=[m[:40] for _k, _e, m in RUN_ERRORS])
def test_run_program_error(kwargs, error, message):
    kwargs = dict(kwargs)
    program = kwargs.pop("program", ECHO_PROGRAM)
    with pytest.raises(error) as e:
        run_program(program, **kwargs)
    assert message in str(e.value) and "\n" not in str(e.value)


LIMIT_ERRORS = [
    (dict(threads=33554432), "threads=33554432: a CTA has at most 1024 threads"),
    (dict(threads=2048), "a CTA has at most 1024 threads"),
    (dict(threads=32, smem_bytes=10**13), "10000000000000 bytes of shared memory per CTA; sm90 allows at most 232448"),
    (dict(threads=32, smem_bytes=228 * 1024), "sm90 allows at most 232448"),
    (dict(threads=32, smem_bytes=lambda p: 2**40), "1099511627776 bytes of shared memory"),
    (dict(threads=32, inputs={"x": ((10**6, 10**6), "f32")}), "'x': (1000000, 1000000) f32"),
]


@pytest.mark.parametrize("kwargs,message", LIMIT_ERRORS, ids=[m[:40] for _k, m in LIMIT_ERRORS])
def test_hardware_limits_come_before_allocation(kwargs, message):
    with pytest.raises(ValueError) as e:
        run_program(Program(nothing, **kwargs))
    assert message in str(e.value)


def test_shared_memory_limits_per_arch_and_raised():
    program = Program(nothing, threads=32, smem_bytes=200 * 1024)
    assert run_program(program, arch="sm90").machine.smem.size == 200 * 1024
    with pytest.raises(ValueError, match="sm80 allows at most 166912"):
        run_program(program, arch="sm80")
    assert run_program(program, arch="sm80", max_smem_bytes=256 * 1024).machine.smem.size == 200 * 1024


def test_big_endian_and_own_dtype_inputs_give_the_same_bits():
    bits = np.arange(256, dtype=np.uint16).reshape(32, 8) + 0x3C00
    want = run_program(ECHO_PROGRAM, inputs={"x": bits}).outputs["y"]
    assert np.array_equal(want, bits)
    for given in (bits.astype(">u2"), bits.view(np.float16), bits.view(np.float16).astype(">f2")):
        assert np.array_equal(run_program(ECHO_PROGRAM, inputs={"x": given}).outputs["y"], bits), given.dtype


COMPARE_ERRORS = [
    ({"y": np.zeros((8, 32), np.uint16)}, "the reference's 'y' has shape (8, 32); the output has (32, 8)"),
    ({"y": np.zeros(256, np.uint16)}, "has shape (256,)"),
    ({"y": np.zeros((32, 8))}, "holds float64"),
    ({"y": [["a"] * 8] * 32}, "holds <U1"),
]


@pytest.mark.parametrize("expected,message", COMPARE_ERRORS, ids=[m[:30] for _e, m in COMPARE_ERRORS])
def test_compare_outputs_refuses_what_a_reshape_would_hide(expected, message):
    with pytest.raises(ValueError) as e:
        compare_outputs({"y": np.zeros((32, 8), np.uint16)}, expected)
    assert message in str(e.value)


def test_load_program_errors(tmp_path):
    (tmp_path / "exits.py").write_text("import sys\nsys.exit('bye')\n")
    with pytest.raises(ProgramError, match=r"exits.py:2: the program file exited while loading \(sys.exit\('bye'\)\)"):
        load_program(tmp_path / "exits.py")
    with pytest.raises(ProgramError, match="is a directory, not a program file"):
        load_program(tmp_path)


EXPLAIN_ERRORS = [("0-1000000000", "unknown thread 1000000000"), ("99999999999999999999", "unknown thread"),
                  ([0, 10**12], "unknown thread 1000000000000"), ([0.5], "unknown thread 0.5")]


@pytest.mark.parametrize("threads,message", EXPLAIN_ERRORS, ids=[str(t) for t, _m in EXPLAIN_ERRORS])
def test_explain_threads(threads, message):
    with pytest.raises(ConfigError, match=message):
        explain("seed", threads)


def _scene():
    from warpsim.draw.cells import Cell
    s = Scene(40, 20)
    s.items.append(Cell(0, 0, 20, 20, (255, 255, 255), ("x",)))
    return s


def test_picture_write_failure_leaves_the_old_file(tmp_path, monkeypatch):
    """Point 7: a failing write (a full disk) leaves the old picture and no temporary file."""
    path = tmp_path / "old.svg"
    path.write_bytes(OLD)
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, data):
            self.f.write(data[:10])
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fdopen", lambda fd, mode: Full(real_fdopen(fd, mode)))
    with pytest.raises(WriteError, match=f"cannot write {path}: No space left on device"):
        _scene().save(path)
    assert path.read_bytes() == OLD and os.listdir(tmp_path) == ["old.svg"]


def test_write_atomic_names_the_file(tmp_path):
    with pytest.raises(WriteError, match="cannot write .*nodir/a.bin: No such file or directory"):
        write_atomic(tmp_path / "nodir" / "a.bin", lambda f: f.write(b"x"))
    with pytest.raises(ZeroDivisionError):
        write_atomic(tmp_path / "a.bin", lambda f: 1 / 0)
    assert os.listdir(tmp_path) == []
    (tmp_path / "a.bin").write_bytes(b"old")
    os.chmod(tmp_path, 0o500)
    try:
        if os.access(tmp_path, os.W_OK):
            pytest.skip("running as a user who can write anywhere")
        with pytest.raises(WriteError, match="a.bin: Permission denied"):
            write_atomic(tmp_path / "a.bin", lambda f: f.write(b"new"))
    finally:
        os.chmod(tmp_path, 0o700)
    assert (tmp_path / "a.bin").read_bytes() == b"old"
