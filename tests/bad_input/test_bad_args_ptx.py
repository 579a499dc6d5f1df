"""``warpsim run`` (and ``debug``) of a kernel given bad arguments (issue 30's audit of the CLI): a parameter given
twice, a file whose dtype or byte order is not what the parameter takes, a kernel name that is only part of
one, ``--dump ,``, a dump under a file-size limit, a number for a pointer, ``--out`` a file, ``--cta abc``,
``--max-steps``, and faults that name a parameter as the source does. Each is one line naming the input, exit
2, no traceback; nothing is written to the working directory."""

import os
import resource
import shutil
import stat
import subprocess
import sys

import numpy as np
import pytest

from bad_input_helpers import ROOT, assert_one_line_error, call
from warpsim.frontends.kernel import find_entry

ADD = ROOT / "examples" / "ptx" / "add_index.ptx"       # y[i] = x[i] + i for i < n: x, y u32 buffers, n .u32
RUN = ["run", ADD, "--kernel", "add_index", "--block", "32"]
GOOD = ["--arg", "x=zeros:u32:32", "--arg", "y=zeros:u32:32"]
TWO = """.version 8.0
.target sm_80
.address_size 64
.visible .entry reduce_transpose(.param .u64 out) { ret; }
.visible .entry reduce_rows(.param .u64 out) { ret; }
"""
FILL_CU = "__global__ void fill(float* out, int n) { out[threadIdx.x] = n; }\n"


@pytest.fixture(scope="module", autouse=True)
def _interpreter_compiled():
    """On a fresh checkout Numba compiles the interpreter at the first launch, and the command line says so on
    stderr: that launch is made here, so no case's one line has that line before it."""
    from warpsim.frontends.kernel import open_kernel
    x, y = np.zeros(32, np.uint32), np.zeros(32, np.uint32)
    open_kernel(ADD, "add_index").launch(grid=1, block=32, args={"x": x, "y": y, "n": 8})


@pytest.fixture
def inputs(tmp_path_factory):
    """The cases' own files, outside the working directory (which must stay as it was)."""
    d = tmp_path_factory.mktemp("arg_inputs")
    np.save(d / "x_be.npy", np.arange(32, dtype=">u4"))
    np.save(d / "n_be.npy", np.array(32, dtype=">u4"))
    np.save(d / "n_f32.npy", np.array([32], dtype=np.float32))
    np.save(d / "n_two.npy", np.array([32, 32], dtype=np.uint32))
    (d / "two.ptx").write_text(TWO)
    return d


# (arguments after `warpsim run add_index.ptx --kernel add_index --block 32`, fragments of the message);
# x_str.npy, obj.npy and old.svg are the working directory's (bad_input_helpers.make_files)
ERRORS = [
    # 1. a parameter given twice: by name, by name and position
    ([*GOOD, "--arg", "n=256", "--arg", "n=16"], ["--arg n: given twice (n=256 and n=16)"]),
    ([*GOOD, "--arg", "n=256", "--arg", "2=16"],
     ["parameter n (.u32) is given twice: as --arg n=256 and as --arg 2=16"]),
    ([*GOOD, "--arg", "n=8", "--arg", "y=zeros:u32:8"], ["--arg y: given twice"]),
    # 2. what a file holds against what the parameter takes
    (["--arg", "x=x_str.npy", "--arg", "y=zeros:u32:32", "--arg", "n=8"],
     ["--arg x=x_str.npy: holds <U12, not numbers", "--arg x=raw:x_str.npy"]),
    (["--arg", "x=obj.npy", "--arg", "y=zeros:u32:32", "--arg", "n=8"], ["--arg x=obj.npy: holds Python objects"]),
    ([*GOOD, "--arg", "n={inputs}/n_f32.npy"], ["n_f32.npy: parameter n (.u32) takes a 4-byte integer",
                                                 "the array holds float32"]),
    ([*GOOD, "--arg", "n={inputs}/n_two.npy"], ["n_two.npy: parameter n (.u32) is a scalar", "not shape (2,)"]),
    (["--arg", "x=raw:missing.bin", "--arg", "y=zeros:u32:32", "--arg", "n=8"],
     ["--arg x=raw:missing.bin: cannot read: No such file or directory"]),
    # 3. --dump of no name; a kernel name that is only part of entry names
    ([*GOOD, "--arg", "n=8", "--dump", ",", "--out", "d"], ["--dump ',': expected buffer names"]),
    ([*GOOD, "--arg", "n=8", "--dump", "q", "--out", "d"], ["--dump q: not a parameter of add_index",
                                                              "its parameters: x, y, n"]),
    # 5. messages that name the input
    (["--arg", "x=zeros:u32:32", "--arg", "y=zeros:u32:-5", "--arg", "n=8"], ["--arg y=zeros:u32:-5: SHAPE"]),
    (["--arg", "x=5", "--arg", "y=zeros:u32:32", "--arg", "n=8"],
     ["--arg x=5: parameter x (.u64, a pointer) takes a buffer", "not the number 5"]),
    ([*GOOD, "--arg", "n=8", "--dump", "y", "--out", "old.svg"], ["--out old.svg: cannot make the directory"]),
    ([*GOOD, "--arg", "n=8", "--out", "d"], ["--out d: needs --dump"]),
    ([*GOOD, "--arg", "n=8", "--cta", "abc"], ["--cta abc: expected a CTA index or X,Y,Z"]),
    ([*GOOD, "--arg", "n=8", "--cta", "1"], ["--cta 1: outside the grid (1, 1, 1)"]),
    ([*GOOD, "--arg", "n=8", "--cta", "0,1"], ["--cta 0,1: outside the grid (1, 1, 1)"]),
    # 6. --max-steps
    ([*GOOD, "--arg", "n=8", "--max-steps", "5"], ["add_index: stopped after 5 warp instructions"]),
    # 7. an array larger than the simulated global memory, or of a negative extent: refused before it is made
    (["--arg", "x=random:u32:99999999999999", "--arg", "y=zeros:u32:32", "--arg", "n=8"],
     ["--arg x=random:u32:99999999999999: 99,999,999,999,999 elements need", "holds at most 4,294,967,296"]),
    (["--arg", "x=zeros:u32:32", "--arg", "y=zeros:f64:65536x65536", "--arg", "n=8"],
     ["--arg y=zeros:f64:65536x65536: 4,294,967,296 elements need 34,359,738,368 bytes"]),
    (["--arg", "x=random:u32:-32", "--arg", "y=zeros:u32:32", "--arg", "n=8"],
     ["--arg x=random:u32:-32: SHAPE is non-negative integers"]),
]


@pytest.mark.parametrize("args,fragments", ERRORS, ids=[" ".join(a)[-50:] for a, _ in ERRORS])
def test_run_error(workdir, inputs, capsys, args, fragments):
    args = [a.format(inputs=inputs) for a in args]
    status, out, err = call(capsys, [*RUN, *args])
    assert_one_line_error(status, err, "warpsim run", fragments)
    assert out == ""


def test_max_steps_is_a_positive_integer(workdir, capsys):
    status, out, err = call(capsys, [*RUN, *GOOD, "--arg", "n=8", "--max-steps", "0"])
    assert status == 2 and out == ""
    last = err.strip().splitlines()[-1]
    assert last == "warpsim run: error: argument --max-steps: expected a positive integer, got '0'"


def test_debug_refuses_a_parameter_given_twice(workdir, capsys):
    status, out, err = call(capsys, ["debug", ADD, "--kernel", "add_index", "--block", "32", *GOOD,
                                     "--arg", "n=8", "--arg", "n=16", "--commands", "-"])
    assert_one_line_error(status, err, "warpsim debug", ["--arg n: given twice (n=8 and n=16)"])


@pytest.mark.parametrize("name,fragments", [
    ("reduce", ["--kernel reduce: no kernel of that exact name; it is part of: reduce_transpose, reduce_rows"]),
    ("rows", ["--kernel rows: no kernel of that exact name; it is part of: reduce_rows"]),
])
def test_kernel_names_are_exact(workdir, inputs, capsys, name, fragments):
    status, out, err = call(capsys, ["run", inputs / "two.ptx", "--kernel", name, "--arg", "out=zeros:u32:4"])
    assert_one_line_error(status, err, "warpsim run", fragments)


def test_kernel_name_of_an_itanium_nested_entry():
    """Numba's entries are ``_ZN<namespace><name>B<abi tags>E<types>``: the name is exact, not a substring."""
    entry = "_ZN10vector_ops5saxpyB2v1B3abcE5ArrayIfLi1EE"
    assert find_entry([entry, "g"], "saxpy") == entry
    assert find_entry([entry, "g"], "vector_ops::saxpy") == entry
    with pytest.raises(ValueError, match="--kernel sax: no kernel of that exact name; it is part of: _ZN10"):
        find_entry([entry, "g"], "sax")


def _dumped(capsys, out_dir, *args):
    status, out, err = call(capsys, [*RUN, *args, "--dump", "y", "--out", out_dir])
    assert status == 0 and err == "", err
    return np.load(out_dir / "y.npy")


def test_big_endian_buffer_is_read_as_its_values(workdir, inputs, tmp_path_factory, capsys):
    """2: a '>u4' file holds the values it says (converted); raw:FILE passes its bytes as they are."""
    out = tmp_path_factory.mktemp("dumps")
    i = np.arange(32, dtype=np.uint32)
    y = _dumped(capsys, out, "--arg", f"x={inputs / 'x_be.npy'}", "--arg", "y=zeros:u32:32", "--arg", "n=32")
    assert y.dtype == np.uint32 and np.array_equal(y, 2 * i)
    y = _dumped(capsys, out, "--arg", f"x=raw:{inputs / 'x_be.npy'}", "--arg", "y=zeros:u32:32", "--arg", "n=32")
    assert np.array_equal(y, i.byteswap() + i)


def test_scalar_from_a_big_endian_npy(workdir, inputs, tmp_path_factory, capsys):
    """2: a one-element file of the parameter's type gives the scalar, whatever its byte order."""
    out = tmp_path_factory.mktemp("dumps")
    y = _dumped(capsys, out, "--arg", "x=zeros:u32:32", "--arg", "y=zeros:u32:32", "--arg", f"n={inputs / 'n_be.npy'}")
    assert np.array_equal(y, np.arange(32, dtype=np.uint32))


def test_cta_coordinates_count_from_zero(workdir, capsys):
    status, out, err = call(capsys, [*RUN, *GOOD, "--arg", "n=8", "--grid", "2", "--cta", "1,0,0"])
    assert status == 0 and err == "" and "CTA (1, 0, 0) only" in out


def test_dump_has_the_usual_mode(workdir, tmp_path_factory, capsys):
    """4: the dump is made as open() would make it (0666 less the umask), not mkstemp's 0600."""
    out = tmp_path_factory.mktemp("dumps")
    old = os.umask(0o022)
    try:
        _dumped(capsys, out, *GOOD, "--arg", "n=8")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(out / "y.npy").st_mode) == 0o644


def _limit_file_size():
    resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))


def test_dump_under_a_file_size_limit(tmp_path):
    """4: under RLIMIT_FSIZE (16 KiB) a 256 KiB dump fails whole: one line naming the file, exit 2, no file."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "warpsim", *map(str, RUN), "--arg", "x=zeros:u32:32",
                           "--arg", "y=zeros:u32:65536", "--arg", "n=8", "--dump", "y", "--out", "d"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
                          preexec_fn=_limit_file_size)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == "warpsim run: error: cannot write d/y.npy: File too large"
    assert os.listdir(tmp_path / "d") == []


def test_fault_names_the_parameter_as_the_source_does(workdir, inputs, capsys):
    """7: nvcc calls ``out`` ``_Z4fillPfi_param_0``; the fault names both."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    cu = inputs / "fill.cu"
    cu.write_text(FILL_CU)
    status, out, err = call(capsys, ["run", cu, "--kernel", "fill", "--block", "32", "--arg", "out=zeros:f32:4",
                                     "--arg", "n=1"])
    assert_one_line_error(status, err, "warpsim run", ["past the end of buffer out (_Z4fillPfi_param_0)"])
    status, out, err = call(capsys, ["run", cu, "--kernel", "fill", "--block", "32", "--arg", "out=7",
                                     "--arg", "n=1"])
    assert_one_line_error(status, err, "warpsim run", ["--arg out=7: parameter out (.u64, a pointer) takes a buffer"])
