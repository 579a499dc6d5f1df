"""warpsim.frontends: .cu through nvcc, CuTe DSL through the WARPSIM convention, and their errors."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from warpsim import toolchain
from warpsim.frontends import cute_dsl
from warpsim.frontends.compiled import CompileError, relative_file_lines
from warpsim.frontends.kernel import entry_params, find_entry, source_param_names
from warpsim.frontends.nvcc import cuda_source_text, source_nvcc_flags
from warpsim.frontends.source import compile_source, source_kind

ROOT = Path(__file__).resolve().parents[2]
AXPY = """// y = a*x + y
extern "C" __global__ void axpy(float a, float const* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def test_source_kind_tells_dsl_from_program(tmp_path):
    dsl = tmp_path / "k_dsl.py"
    dsl.write_text("import cutlass\nWARPSIM = dict(jit=None, args=())\n")
    prog = tmp_path / "prog.py"
    prog.write_text("import warpsim\nprogram = warpsim.Program(None)\n# WARPSIM = 1 only in a comment\n")
    assert source_kind(dsl) == "dsl"
    assert source_kind(prog) == "program"
    assert source_kind(ROOT / "examples/gemm_smem.py") == "program"
    assert source_kind(ROOT / "examples/cute_dsl/copy_dsl.py") == "dsl"
    assert source_kind("k.cu") == "cuda" and source_kind("k.ptx") == "ptx"
    with pytest.raises(ValueError, match="not a .cu, .ptx or CuTe DSL"):
        source_kind("k.txt")


def test_relative_file_lines(tmp_path):
    proj, inc, other = tmp_path / "proj", tmp_path / "inc", tmp_path / "x"
    ptx = (f'\t.file\t1 "{proj}/k.cu"\n\t.file\t2 "{inc}/cute/layout.hpp", 1, 2\n'
           f'\t.file\t3 "{other}/y.h"\n')
    out = relative_file_lines(ptx, [str(proj), str(inc)])
    assert out == '\t.file\t1 "k.cu"\n\t.file\t2 "cute/layout.hpp", 1, 2\n\t.file\t3 "y.h"\n'


def test_cuda_compiles_with_relative_paths_and_is_cached(tmp_path, need_nvcc, cache_dir):
    src = tmp_path / "axpy.cu"
    src.write_text(AXPY)
    compiled = compile_source(src, "sm_80")
    ptx = compiled.ptx
    assert ".target sm_80" in ptx and ".entry axpy(" in ptx
    assert '.file\t1 "axpy.cu"' in ptx
    assert str(tmp_path) not in ptx
    assert len(list(cache_dir.glob("*.ptx"))) == 1
    assert compile_source(src, "sm_80").ptx == ptx                       # from the cache
    assert len(list(cache_dir.glob("*.ptx"))) == 1
    assert ".target sm_90" in compile_source(src, "sm90").ptx            # another key
    src.write_text(AXPY.replace("a * x[i]", "x[i] * a"))
    compile_source(src, "sm_80")
    assert len(list(cache_dir.glob("*.ptx"))) == 3                       # the source changed: compiled again


FAKE_NVCC = """#!/bin/sh
# counts its compiles in $COUNT and takes a second over each, then writes a PTX file where -o says
if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 0.0, V0.0.0"; exit 0; fi
echo compile >> "$COUNT"
sleep 1
while [ $# -gt 0 ]; do if [ "$1" = "-o" ]; then printf '.version 8.0\\n.target sm_80\\n' > "$2"; fi; shift; done
"""


def test_two_processes_compiling_one_source_compile_it_once(tmp_path, cache_dir):
    """warpsim.toolchain.cache_lock: the second process waits for the first's compile and reads it from the cache
    (tests/prewarm.py's background compiles rely on it)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvcc").write_text(FAKE_NVCC)
    (bin_dir / "nvcc").chmod(0o755)
    src = tmp_path / "k.cu"
    src.write_text(AXPY)
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH")}
    env.update(PATH=f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin", COUNT=str(tmp_path / "count"),
               WARPSIM_CACHE=str(cache_dir), PYTHONPATH=str(ROOT))
    code = "import sys; from warpsim.frontends.nvcc import compile_cuda; print(compile_cuda(sys.argv[1], 'sm_80'))"
    procs = [subprocess.Popen([sys.executable, "-c", code, str(src)], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert outs[0] == outs[1] and ".target sm_80" in outs[0]
    assert (tmp_path / "count").read_text().splitlines() == ["compile"]    # once, not twice


def test_nvcc_errors_are_one_line(tmp_path, need_nvcc, cache_dir):
    src = tmp_path / "bad.cu"
    src.write_text('extern "C" __global__ void f(int* p) { *p = undefined_name; }\n')
    with pytest.raises(CompileError) as e:
        compile_source(src, "sm_80")
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith("bad.cu: nvcc failed: ")
    assert 'identifier "undefined_name" is undefined' in message
    assert str(tmp_path) not in message
    assert not list(cache_dir.glob("*.ptx"))


def test_a_source_carries_its_own_nvcc_flags(tmp_path, need_nvcc, cache_dir):
    """``// warpsim: nvcc-flags`` of the file compiled (not of its includes) reach nvcc before the caller's;
    the kernel's parameter names are found in the included file."""
    scaled = AXPY.replace("a * x[i]", "SCALE * x[i]")
    (tmp_path / "axpy.cu").write_text("// warpsim: nvcc-flags -DSCALE=3.0f\n" + scaled)
    (tmp_path / "fast.cu").write_text('// warpsim: nvcc-flags --use_fast_math -DSCALE=5.0f\n#include "axpy.cu"\n')
    assert source_nvcc_flags((tmp_path / "fast.cu").read_text()) == ("--use_fast_math", "-DSCALE=5.0f")
    plain = compile_source(tmp_path / "axpy.cu", "sm_80").ptx
    fast = compile_source(tmp_path / "fast.cu", "sm_80").ptx
    assert "0f40400000" in plain and ".ftz" not in plain            # 3.0f
    assert "0f40A00000" in fast and "fma.rn.ftz.f32" in fast         # 5.0f: the includer's flag, fast math
    assert "0f40800000" in compile_source(tmp_path / "axpy.cu", "sm_80", nvcc_flags=("-DSCALE=4.0f",)).ptx  # last wins
    assert source_param_names(cuda_source_text(tmp_path / "fast.cu"), "cuda")["axpy"] == ["a", "x", "y", "n"]


def test_missing_nvcc(tmp_path, monkeypatch):
    src = tmp_path / "k.cu"
    src.write_text(AXPY)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    with pytest.raises(CompileError, match=r"^k.cu: nvcc not found on PATH or under CUDA_HOME"):
        compile_source(src, "sm_80")


def test_nvcc_under_cuda_home(tmp_path, monkeypatch):
    (tmp_path / "cuda/bin").mkdir(parents=True)
    nvcc = tmp_path / "cuda/bin/nvcc"
    nvcc.write_text("#!/bin/sh\n")
    nvcc.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    assert toolchain.find_nvcc() == str(nvcc)


def test_bad_arch_and_missing_file(tmp_path):
    with pytest.raises(ValueError, match="--arch sm_70: choose one of sm_80, sm_90"):
        compile_source(tmp_path / "k.cu", "sm_70")
    with pytest.raises(CompileError, match="no such file"):
        compile_source(tmp_path / "missing.cu", "sm_80")


def test_missing_dsl(tmp_path, monkeypatch):
    src = tmp_path / "k_dsl.py"
    src.write_text("WARPSIM = dict(jit=None, args=())\n")
    real = cute_dsl.importlib.util.find_spec
    monkeypatch.setattr(cute_dsl.importlib.util, "find_spec",
                        lambda name, *a: None if name.startswith("cutlass") else real(name, *a))
    with pytest.raises(CompileError, match=r"CuTe DSL is not installed \(pip install 'warpsim\[dsl\]'"):
        compile_source(src, "sm_80")


@pytest.mark.parametrize("name, kernel, params", [
    ("copy_dsl.py", "copy_kernel", [8, 8]),
    ("mma_ldmatrix_dsl.py", "mma_kernel", [8, 8, 8]),
    ("tile_cp_async_dsl.py", "tile_kernel", [16, 16, 8]),
])
def test_dsl_examples_compile(name, kernel, params, need_dsl, cache_dir):
    path = ROOT / "examples/cute_dsl" / name
    compiled = compile_source(path, "sm_80")
    entries = entry_params(compiled.ptx)
    entry = find_entry(entries, kernel)
    assert entry.startswith(f"kernel_cutlass_{kernel}_")
    assert [p.size for p in entries[entry]] == params
    assert f'.file\t1 "{name}"' in compiled.ptx
    want = ["src", "dst"] if kernel == "copy_kernel" else ["a", "b", "c"]
    assert source_param_names(path.read_text(), "dsl")[kernel] == want


def test_dsl_errors_are_one_line(tmp_path, need_dsl, cache_dir):
    src = tmp_path / "bad_dsl.py"
    src.write_text("WARPSIM = dict(jit=None)\n")
    with pytest.raises(CompileError, match=r"bad_dsl.py: CuTe DSL compile failed: ValueError: bad_dsl.py: "
                                           r"WARPSIM entry 0 must be dict\(jit="):
        compile_source(src, "sm_80")


def test_kernel_and_param_names():
    src = ('template <class T> __global__ void tmpl(T* p) {}\n'
           'extern "C" __global__ void __launch_bounds__(128) k(cute::half_t const* q, float* s, int n) {}')
    assert source_param_names(src, "cuda")["k"] == ["q", "s", "n"]
    assert find_entry(["_Z4tmplIfEvPT_", "k"], "tmpl") == "_Z4tmplIfEvPT_"
    with pytest.raises(ValueError, match="--kernel nope: no such kernel; the module has: a, b"):
        find_entry(["a", "b"], "nope")
    with pytest.raises(ValueError, match="names 2 kernels: _Z4tmplIfEvPT_, _Z4tmplIiEvPT_"):
        find_entry(["_Z4tmplIfEvPT_", "_Z4tmplIiEvPT_"], "tmpl")        # a template's instances
    with pytest.raises(ValueError, match="no kernel of that exact name; it is part of: gemm_a, gemm_b"):
        find_entry(["gemm_a", "gemm_b"], "gemm")
