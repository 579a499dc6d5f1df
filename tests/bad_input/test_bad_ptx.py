"""``warpsim run`` of PTX and CUDA kernels that the GPU's tool chain refuses or that stop on the device: ptxas's
``ld``/``st`` width rules, shared memory beyond the arch's limit, a failing device ``assert``, ``malloc`` in device
code. Each is one line naming the input, exit 2, no traceback; nothing is written to the working directory."""

import shutil

import numpy as np
import pytest

from bad_input_helpers import assert_one_line_error, call

HEAD = ".version 8.8\n.target {target}\n.address_size 64\n"
KERNEL = """
.visible .entry k(.param .u64 out)
{{
  .reg .b32 %r<12>;
  .reg .b64 %rd<8>;
  .shared .align 4 .b8 tile[4096];
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  {line}
  ret;
}}
"""
GOOD = "st.global.u32 [%rd2], 7;"


def _ptx(directory, name, line=GOOD, target="sm_90"):
    path = directory / name
    path.write_text(HEAD.format(target=target) + KERNEL.format(line=line))
    return path


@pytest.fixture
def inputs(tmp_path_factory):
    """The cases' files, outside the working directory (which must stay as it was)."""
    return tmp_path_factory.mktemp("ptx_inputs")


# (the instruction, its .target, fragments of the message besides the file, line and instruction)
WIDTH_ERRORS = [
    ("ld.global.b128 %rd3, [%rd2];", "sm_90", ["a .b128 access takes one .b128 register, got .b64 register %rd3"]),
    ("st.global.b128 [%rd2], %rd3;", "sm_90", ["a .b128 access takes one .b128 register"]),
    ("ld.global.v8.b32 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, [%rd2];", "sm_90",
     ["a 256-bit load/store needs .target sm_100 or later", "this module's .target: sm_90"]),
    ("st.global.v4.b64 [%rd2], {%rd3, %rd4, %rd5, %rd6};", "sm_80", ["a 256-bit load/store", "sm_80"]),
]


@pytest.mark.parametrize("line,target,fragments", WIDTH_ERRORS, ids=[f"{t} {line[:24]}" for line, t, _ in WIDTH_ERRORS])
def test_width_ptxas_refuses(workdir, inputs, capsys, line, target, fragments):
    path = _ptx(inputs, "w.ptx", line, target)
    status, out, err = call(capsys, ["run", path, "--kernel", "k", "--arg", "out=zeros:u32:8"])
    lineno = path.read_text().splitlines().index(f"  {line}") + 1
    assert_one_line_error(status, err, "warpsim run", [f"w.ptx:{lineno}:", f"'{line.split()[0]}'", *fragments])
    assert out == ""


@pytest.mark.parametrize("arch,smem,fragments", [
    ("sm_90", 228353, ["--smem 228353 bytes of dynamic shared memory + 4096 of static .shared = 232449 bytes",
                       "sm90 allows at most 232448 (--smem at most 228352)"]),
    ("sm_80", 10**6, ["--smem 1000000", "sm80 allows at most 166912"]),
])
def test_smem_beyond_the_arch(workdir, inputs, capsys, arch, smem, fragments):
    path = _ptx(inputs, "s.ptx")
    status, out, err = call(capsys, ["run", path, "--kernel", "k", "--arg", "out=zeros:u32:8", "--smem", smem,
                                     "--arch", arch])
    assert_one_line_error(status, err, "warpsim run", ["k: --smem", *fragments])
    assert out == ""


def test_smem_at_the_limit_runs(workdir, inputs, capsys):
    path = _ptx(inputs, "s.ptx")
    status, out, err = call(capsys, ["run", path, "--kernel", "k", "--arg", "out=zeros:u32:8", "--smem", 228352])
    assert status == 0 and err == "" and "smem 228352 B" in out


ASSERT_CU = """
#include <cassert>
__global__ void check(const int* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(x[i] < n);
}
"""


def _needs_nvcc():
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")


def test_failing_device_assert(workdir, inputs, capsys):
    _needs_nvcc()
    cu = inputs / "a.cu"
    cu.write_text(ASSERT_CU)
    np.save(inputs / "x.npy", np.arange(64, dtype=np.int32))
    argv = ["run", cu, "--kernel", "check", "--grid", "2", "--block", "32", "--arg", f"x={inputs / 'x.npy'}"]
    status, out, err = call(capsys, [*argv, "--arg", "n=64"])
    assert status == 0 and err == "", err
    status, out, err = call(capsys, [*argv, "--arg", "n=40"])
    assert_one_line_error(status, err, "warpsim run", [     # the path is the first compile's (warpsim caches the PTX)
        "a.cu:5: void check(const int *, int): block: [1,0,0], thread: [8,0,0] Assertion `x[i] < n` failed."])
    assert err.strip().endswith("failed.")


def test_malloc_in_device_code(workdir, inputs, capsys):
    _needs_nvcc()
    cu = inputs / "m.cu"
    cu.write_text("__global__ void k(int* out) { int* p = (int*)malloc(8); p[0] = 1; out[0] = p[0]; free(p); }\n")
    status, out, err = call(capsys, ["run", cu, "--kernel", "k", "--arg", "out=zeros:i32:4"])
    assert_one_line_error(status, err, "warpsim run", ["m.sm_90.ptx:", "call of malloc: malloc/free in device code "
                                                       "are not supported", "'call.uni'"])


def test_a_cu_kernel_without_the_cute_headers_names_the_extra(workdir, inputs, capsys, monkeypatch):
    """nvcc is there, the ``nvidia-cutlass`` wheel is not: one line naming ``warpsim[cute]``, before nvcc runs."""
    from warpsim.frontends import nvcc
    monkeypatch.setattr(nvcc, "cute_include_dir", lambda: None)
    monkeypatch.setattr(nvcc, "find_nvcc", lambda: "/nonexistent/nvcc")      # never started: the check comes first
    cu = inputs / "c.cu"
    cu.write_text('#include "c.h"\n__global__ void k(float* out) { out[0] = 1.0f; }\n')
    (inputs / "c.h").write_text("#include <cute/tensor.hpp>\n")
    status, out, err = call(capsys, ["run", cu, "--kernel", "k", "--arg", "out=zeros:f32:4"])
    assert_one_line_error(status, err, "warpsim run", ["c.cu: includes CuTe/CUTLASS headers, which are not installed",
                                                       "pip install 'warpsim[cute]'"])
