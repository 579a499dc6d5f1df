"""PTX as real compilers write it (issue 26): Triton's one-element brace vectors, nvcc's device ``assert``, and the
``ld``/``st`` widths and shared-memory sizes ptxas and the driver refuse."""

import shutil
import subprocess

import numpy as np
import pytest

import warpsim.ptx
from warpsim.errors import DeviceAssertion, PtxSyntaxError, UnsupportedType
from tests.ptx.ptx_helpers import kernel, load, nvcc_ptx

# Triton 3.9 (python/triton, NVPTX back end) writes a masked scalar load or store with its value in braces, a
# one-element vector, and zeroes the destination first (these lines are copied from its output for sm_80/sm_90).
TRITON_BODY = """
  setp.lt.u32 %p1, %r0, 20;
  add.s64 %rd1, %rd10, %rd0;
  add.s64 %rd2, %rd11, %rd0;
  mov.u32 %r5, 0x0;
  @%p1 ld.global.b32 { %r5 }, [ %rd1 + 0 ];
  mul.lo.s32 %r6, %r5, 3;
  @%p1 st.global.b32 [ %rd2 + 0 ], { %r6 };
  mul.wide.u32 %rd3, %r0, 2;
  add.s64 %rd4, %rd12, %rd3;
  add.s64 %rd5, %rd13, %rd3;
  mov.u16 %h1, 0x0;
  @%p1 ld.global.b16 { %h1 }, [ %rd4 + 0 ];
  @%p1 st.global.b16 [ %rd5 + 0 ], { %h1 };
"""
PARAMS = ("x", "out", "h", "hout")


def _triton_args():
    return {"x": np.arange(64, dtype=np.int32) - 7, "out": np.full(64, -1, np.int32),
            "h": np.arange(64, dtype=np.uint16) * 1000, "hout": np.full(64, 7, np.uint16)}


def test_triton_masked_scalar_load_and_store_in_braces():
    args = _triton_args()
    res = load(TRITON_BODY, params=PARAMS).launch("k", block=64, args=args)
    live = np.arange(64) < 20
    assert res.buffers["out"].tolist() == np.where(live, (args["x"] * 3), -1).tolist()
    assert res.buffers["hout"].tolist() == np.where(live, args["h"], 7).tolist()


def test_one_element_vector_decodes_as_its_register():
    """``{ %r }`` in ld, st and mov (both sides) gives the very rows of ``%r``."""
    braces = TRITON_BODY + """
  mov.b32 {%r7}, %r6;
  mov.b32 %r8, {%r7};
  ld.param.u64 { %rd6 }, [x];
  st.global.b32 [%rd2], {%r8};
"""
    plain = braces.replace("{ %r5 }", "%r5").replace("{ %r6 }", "%r6").replace("{ %h1 }", "%h1")
    plain = plain.replace("{%r7}", "%r7").replace("{%r8}", "%r8").replace("{ %rd6 }", "%rd6")
    assert "{" not in plain
    a, b = (load(body, params=PARAMS).decoded("k") for body in (braces, plain))
    assert np.array_equal(a.code[:, :11], b.code[:, :11]) and np.array_equal(a.opnd, b.opnd)


def test_shared_load_and_store_in_braces():
    body = """
  mov.u32 %r5, buf;
  shl.b32 %r6, %r1, 2;
  add.u32 %r5, %r5, %r6;
  add.u32 %r7, %r1, 100;
  st.shared.b32 [ %r5 + 0 ], { %r7 };
  bar.sync 0;
  ld.shared.b32 { %r8 }, [ %r5 + 0 ];
""" + "  add.s64 %rd30, %rd10, %rd0;\n  st.global.u32 [%rd30], {%r8};\n"
    got = load(body, decls="  .shared .align 4 .b32 buf[32];\n").launch("k", block=32, args={"out": np.zeros(32, np.uint32)})
    assert got.buffers["out"].tolist() == list(range(100, 132))


def test_triton_output_runs():
    """Triton's own PTX for a masked scalar kernel, where Triton is installed (a dev tool, not a dependency)."""
    triton = pytest.importorskip("triton")
    tl = pytest.importorskip("triton.language")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def triple(x_ptr, out_ptr, n):
        pid = tl.program_id(0)
        v = tl.load(x_ptr + pid, mask=pid < n)
        tl.store(out_ptr + pid, v * 3, mask=pid < n)

    src = ASTSource(fn=triple, signature={"x_ptr": "*i32", "out_ptr": "*i32", "n": "i32"}, constexprs={})
    ptx = triton.compile(src, target=GPUTarget("cuda", 90, 32)).asm["ptx"]
    assert "{ %r" in ptx
    mod = warpsim.ptx.load(ptx, filename="triple.ptx")
    (name,) = mod.kernels
    x = np.arange(8, dtype=np.int32)
    scratch = [np.zeros(1, np.uint8)] * (len(mod.params(name)) - 3)      # Triton's scratch pointers
    res = mod.launch(name, grid=8, block=128, args=[x, np.zeros(8, np.int32), 5, *scratch])
    assert res.buffers[mod.params(name)[1][0]].tolist() == [0, 3, 6, 9, 12, 0, 0, 0]


# --- ld/st widths ptxas refuses --------------------------------------------------------------------------------
WIDE_REGS = "  .reg .b16 %s<8>;\n"
V8 = "{%r20, %r21, %r22, %r23, %r24, %r25, %r26, %r27}"
V8H = "{%s0, %s1, %s2, %s3, %s4, %s5, %s6, %s7}"
V4D = "{%rd20, %rd21, %rd22, %rd23}"
# (instruction, .target, refused); each verdict is ptxas 13.0's (test_widths_agree_with_ptxas asks it again). Not
# here: an ld .v8 of 8- or 16-bit elements whose values are never used, on which ptxas 13.0 crashes (SIGSEGV) in some
# runs and not in others; with its values used ptxas takes it (test_wide_loads_run_where_allowed runs one)
WIDTHS = [
    ("ld.global.b128 %rd20, [%rd10];", 90, True),
    ("st.global.b128 [%rd10], %rd20;", 90, True),
    ("ld.global.b128 {%rd20, %rd21}, [%rd10];", 90, True),
    ("st.global.b128 [%rd10], {%rd20, %rd21};", 100, True),
    (f"ld.global.v8.b32 {V8}, [%rd10];", 90, True),
    (f"st.global.v8.b32 [%rd10], {V8};", 80, True),
    (f"ld.global.v8.f32 {V8}, [%rd10];", 90, True),
    (f"ld.global.v4.b64 {V4D}, [%rd10];", 90, True),
    (f"ld.shared.v8.b32 {V8}, [%r1];", 100, True),
    ("ld.param.v8.b32 {V8}, [out];".replace("{V8}", V8), 100, True),
    (f"ld.global.v8.u64 {{%rd20, %rd21, %rd22, %rd23, %rd24, %rd25, %rd26, %rd27}}, [%rd10];", 100, True),
    (f"ld.global.v8.b32 {V8}, [%rd10];", 100, False),
    (f"st.v8.b32 [%rd10], {V8};", 100, False),
    (f"st.global.v4.b64 [%rd10], {V4D};", 100, False),
    (f"st.global.v8.b16 [%rd10], {V8H};", 90, False),
    (f"st.global.v8.b8 [%rd10], {V8H};", 80, False),
    ("ld.global.v4.b32 {%r20, %r21, %r22, %r23}, [%rd10];", 90, False),
    ("ld.global.v2.b64 {%rd20, %rd21}, [%rd10];", 80, False),
]


def _width_kernel(line, sm):
    """A kernel holding ``line`` for ``.target sm_{sm}``, PTX 8.8 (the first with 256-bit loads and stores)."""
    return kernel(f"  {line}\n", decls=WIDE_REGS).replace(".target sm_80", f".target sm_{sm}").replace(
        ".version 8.0", ".version 8.8")


@pytest.mark.parametrize("line,sm,refused", WIDTHS, ids=[f"sm_{sm} {line[:40]}" for line, sm, _ in WIDTHS])
def test_widths_ptxas_refuses_are_refused_at_load(line, sm, refused):
    text = _width_kernel(line, sm)
    if not refused:
        warpsim.ptx.load(text)
        return
    with pytest.raises(PtxSyntaxError) as e:
        warpsim.ptx.load(text, filename="w.ptx")
    message = str(e.value)
    opcode = line.split()[0]
    assert "\n" not in message and message.startswith("w.ptx:") and f"'{opcode}'" in message, message
    assert f":{text.splitlines().index('  ' + line) + 1}:" in message, message      # its line


def test_wide_loads_run_where_allowed():
    """sm_100's 256-bit ``ld.global.v8.b32`` and a 128-bit ``.v8.b16`` move their bytes."""
    body = f"""
  mul.wide.u32 %rd1, %r0, 32;
  add.s64 %rd2, %rd10, %rd1;
  add.s64 %rd3, %rd11, %rd1;
  ld.global.v8.b32 {V8}, [%rd2];
  st.global.v8.b32 [%rd3], {V8};
  ld.global.v8.b16 {V8}, [%rd2];
  st.global.v8.b16 [%rd3+16], {V8};
"""
    text = kernel(body, params=("x", "out"), decls=WIDE_REGS).replace(".target sm_80", ".target sm_100")
    x = np.arange(32 * 8, dtype=np.uint32)
    got = warpsim.ptx.load(text).launch("k", block=32, args={"x": x, "out": np.zeros(32 * 8, np.uint32)})
    want = x.reshape(32, 8).copy()
    want[:, 4:] = want[:, :4]
    assert got.buffers["out"].reshape(32, 8).tolist() == want.tolist()


def test_widths_agree_with_ptxas(tmp_path):
    """Every verdict of WIDTHS is ptxas's (for the .target's own -arch)."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas is not on PATH")
    for k, (line, sm, refused) in enumerate(WIDTHS):
        path = tmp_path / f"w{k}.ptx"
        path.write_text(_width_kernel(line, sm))
        run = subprocess.run([ptxas, f"-arch=sm_{sm}", str(path), "-o", str(tmp_path / "w.cubin")],
                             capture_output=True, text=True)
        assert (run.returncode != 0) == refused, (line, sm, run.stderr)


# --- device assert -----------------------------------------------------------------------------------------------
ASSERT_DECL = """
.extern .func __assertfail(.param .b64 m, .param .b64 f, .param .b32 l, .param .b64 fn, .param .b64 c);
.global .align 1 .b8 $msg[9] = {120, 91, 105, 93, 32, 60, 32, 110};
.global .align 1 .b8 $file[5] = {107, 46, 99, 117};
.const .align 1 .b8 $fn[7] = {118, 111, 105, 100, 32, 107};
"""
# %rd1 = &out[linear thread index], then assert(x[i] < n) as nvcc 13.0 writes it (the function name is put in
# .const here, to read strings from there too)
ASSERT_BODY = """
  mov.u32 %r9, %tid.y;
  mad.lo.u32 %r10, %r9, 8, %r1;
  mad.lo.u32 %r11, %r2, 32, %r10;
  mul.wide.u32 %rd9, %r11, 4;
  add.s64 %rd1, %rd10, %rd9;
  ld.global.u32 %r5, [%rd1];
  setp.lt.s32 %p1, %r5, 20;
  @%p1 bra $L__ok;
  mov.u64 %rd2, $msg;
  cvta.global.u64 %rd3, %rd2;
  mov.u64 %rd4, $file;
  cvta.global.u64 %rd5, %rd4;
  mov.u64 %rd6, $fn;
  cvta.const.u64 %rd7, %rd6;
  { // callseq 0, 0
  .param .b64 param0;
  st.param.b64 [param0+0], %rd3;
  .param .b64 param1;
  st.param.b64 [param1+0], %rd5;
  .param .b32 param2;
  st.param.b32 [param2+0], 5;
  .param .b64 param3;
  st.param.b64 [param3+0], %rd7;
  .param .b64 param4;
  st.param.b64 [param4+0], 1;
  call.uni
  __assertfail,
  (
  param0,
  param1,
  param2,
  param3,
  param4
  );
  } // callseq 0
$L__ok:
  st.global.u32 [%rd1], 1;
"""


def test_passing_assert_runs():
    res = load(ASSERT_BODY, extra=ASSERT_DECL).launch("k", grid=2, block=(8, 4), args={"out": np.arange(64, dtype=np.int32) % 20})
    assert (res.buffers["out"] == 1).all()


def test_failing_assert_stops_with_cudas_line():
    x = np.zeros(64, np.int32)
    x[45] = 20                                             # CTA 1, thread (5, 1, 0)
    with pytest.raises(DeviceAssertion) as e:
        load(ASSERT_BODY, extra=ASSERT_DECL).launch("k", grid=2, block=(8, 4), args={"out": x})
    assert str(e.value) == "k.cu:5: void k: block: [1,0,0], thread: [5,1,0] Assertion `x[i] < n` failed."


ASSERT_CU = """
#include <cassert>
__global__ void check(const int* x, int n, int* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(x[i] < n);
    out[i] = 2 * x[i];
}
"""


def test_nvcc_assert(tmp_path):
    mod = warpsim.ptx.load(str(nvcc_ptx(tmp_path, ASSERT_CU, arch="sm_90")))
    (name,) = mod.kernels
    x = np.arange(64, dtype=np.int32)
    ok = mod.launch(name, grid=2, block=32, args=[x, 64, np.zeros(64, np.int32)])
    assert ok.buffers[mod.params(name)[2][0]].tolist() == (2 * x).tolist()
    with pytest.raises(DeviceAssertion) as e:
        mod.launch(name, grid=2, block=32, args=[x, 40, np.zeros(64, np.int32)])
    assert str(e.value) == (f"{tmp_path / 'k.cu'}:5: void check(const int *, int, int *): block: [1,0,0], "
                            f"thread: [8,0,0] Assertion `x[i] < n` failed.")


@pytest.mark.parametrize("source,flags,name,why", [
    ("__global__ void k(int* out) { int* p = (int*)malloc(8); p[0] = 1; out[0] = p[0]; free(p); }", (), "malloc",
     "malloc/free in device code are not supported"),
    ("__device__ int ext(int);\n__global__ void k(int* out) { out[0] = ext(out[1]); }", ("-rdc=true",), "_Z3exti",
     "a function without a body"),
])
def test_runtime_calls_are_refused_at_load(tmp_path, source, flags, name, why):
    ptx = nvcc_ptx(tmp_path, source, arch="sm_90", flags=flags)
    with pytest.raises(UnsupportedType) as e:
        warpsim.ptx.load(str(ptx))
    message = str(e.value)
    line = next(k + 1 for k, text in enumerate(ptx.read_text().splitlines()) if text.strip().startswith("call"))
    assert "\n" not in message and message.startswith(f"k.ptx:{line}:") and f"call of {name}: {why}" in message


# --- shared memory per CTA --------------------------------------------------------------------------------------
SMEM_BODY = """
  mov.u32 %r5, dyn;
  st.shared.u32 [%r5], %r1;
"""
SMEM_DECL = ".extern .shared .align 16 .b8 dyn[];\n"
STATIC = "  .shared .align 4 .b8 tile[4096];\n  mov.u32 %r6, tile;\n  st.shared.u32 [%r6], %r1;\n"


@pytest.mark.parametrize("arch,limit", [("sm90", 232448), ("sm80", 166912)])
def test_shared_memory_limit_per_cta(arch, limit, monkeypatch):
    mod = load(STATIC + SMEM_BODY, extra=SMEM_DECL)
    mod.launch("k", block=32, smem=limit - 4096, arch=arch, args={"out": np.zeros(32, np.uint32)})     # the most
    made = []
    monkeypatch.setattr("warpsim.ptx.launch.Machine", lambda *a, **k: made.append(a))
    with pytest.raises(ValueError) as e:
        mod.launch("k", block=32, smem=limit - 4095, arch=arch, args={"out": np.zeros(32, np.uint32)})
    assert str(e.value) == (f"k: --smem {limit - 4095} bytes of dynamic shared memory + 4096 of static .shared = "
                            f"{limit + 1} bytes per CTA; {arch} allows at most {limit} (--smem at most {limit - 4096})")
    assert made == []                                      # refused before anything was allocated
