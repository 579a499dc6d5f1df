"""Global accesses must lie inside ONE buffer; .const and .param accesses inside one variable / parameter.

Buffers (``x`` then ``out``) are laid out with a red zone after each, so reading ``x[n]`` of an
``n``-element ``x`` faults instead of reading ``out``. Addresses: ``x`` at ``0x100000000``.
"""

import numpy as np
import pytest

import warpsim.ptx
from warpsim.errors import SimulatorFault
from warpsim.machine import GLOBAL_ALIGN
from warpsim.ptx.memory import object_ends, redzone

from tests.ptx.ptx_helpers import HEADER, kernel, load, nvcc_ptx, store_r

X = 0x100000000
WHO = r"CTA \(0, 0, 0\) thread \({t}, 0, 0\) \(warp 0 lane {t}\)"


def run(body, x, block=32, decls="", extra=""):
    mod = load(body, params=("x", "out"), decls=decls, extra=extra)
    return mod.launch("k", block=block, args={"x": x, "out": np.zeros(block, np.uint32)})


def read_at(index, op="ld.global.u32", vec=""):
    """Each thread reads ``x[index + tid]`` (u32 elements) and stores what it read to ``out[tid]``."""
    dst = "{%r5, %r6, %r7, %r8}" if vec else "%r5"
    return (f"  add.s64 %rd30, %rd10, %rd0;\n  add.s64 %rd30, %rd30, {4 * index};\n"
            f"  {op}{vec} {dst}, [%rd30];\n" + store_r("%r5", "%rd11"))


def test_one_past_the_end_faults_naming_thread_instruction_line_and_buffer():
    body = read_at(97)                                     # lane 31 reads x[128]
    line = kernel(body, params=("x", "out")).splitlines().index("  ld.global.u32 %r5, [%rd30];") + 1
    with pytest.raises(SimulatorFault) as e:
        run(body, np.arange(128, dtype=np.uint32))
    assert str(e.value) == (f"ld.global.u32 %r5, [%rd30] (<ptx>:{line}): CTA (0, 0, 0) thread (31, 0, 0) "
                            f"(warp 0 lane 31): global address 0x100000200 + 4 bytes is not inside one global "
                            f"buffer: 0x100000200 is 0 bytes past the end of buffer x [0x100000000, 0x100000200)")


def test_the_next_buffer_is_not_read_through_an_overrun():
    """The issue's case: x[128..255] of a 128-element x used to return out's bytes or padding (an
    address far past x names the nearest buffer, which may be the next one)."""
    for index in (97, 128, 160):
        with pytest.raises(SimulatorFault, match=WHO.format(t=31 if index == 97 else 0) + r": global address "
                           r"0x1000002\w\w \+ 4 bytes is not inside one global buffer: .* past the end of buffer x"):
            run(read_at(index), np.arange(128, dtype=np.uint32))


def test_before_the_start_faults():
    with pytest.raises(SimulatorFault, match=WHO.format(t=0) + r": global address 0xfffffffc \+ 4 bytes is not "
                                             r"inside one global buffer: 0xfffffffc is 4 bytes before the start of "
                                             r"buffer x \[0x100000000, 0x100000200\)"):
        run(read_at(-1), np.arange(128, dtype=np.uint32))


def test_a_v4_straddling_the_end_faults():
    x = np.arange(126, dtype=np.uint32)                    # 504 bytes: [X, X + 0x1f8)
    body = ("  add.s64 %rd30, %rd10, 496;\n  ld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd30];\n"
            + store_r("%r5", "%rd11"))
    with pytest.raises(SimulatorFault, match=r"ld\.global\.v4\.u32 .*" + WHO.format(t=0) + r": global address "
                                             r"0x1000001f0 \+ 16 bytes is not inside one global buffer: 0x1000001f0 "
                                             r"\+ 16 bytes runs 8 bytes past the end of buffer x "
                                             r"\[0x100000000, 0x1000001f8\)"):
        run(body, x)


def test_the_padding_between_buffers_faults_naming_the_nearest_buffer():
    x = np.arange(100, dtype=np.uint32)                    # [X, X + 0x190), then padding and a red zone
    out_start = X + (400 + redzone(400) + GLOBAL_ALIGN - 1) // GLOBAL_ALIGN * GLOBAL_ALIGN
    body = f"  mov.u64 %rd30, {out_start - 4};\n  st.global.u32 [%rd30], %r1;\n"
    with pytest.raises(SimulatorFault, match=rf"st\.global\.u32 .*{out_start - 4:#x} is 4 bytes before the start "
                                             rf"of buffer out \[{out_start:#x}, {out_start + 128:#x}\)"):
        run(body, x)
    body = f"  mov.u64 %rd30, {X + 0x190};\n  st.global.u32 [%rd30], %r1;\n"
    with pytest.raises(SimulatorFault, match=r"0x100000190 is 0 bytes past the end of buffer x"):
        run(body, x)


def test_a_generic_address_faults_like_a_global_one():
    with pytest.raises(SimulatorFault, match=r"ld\.u32 %r5.*" + WHO.format(t=31) + r": global address 0x100000200 "
                                             r"\+ 4 bytes is not inside one global buffer: 0x100000200 is 0 bytes past "
                                             r"the end of buffer x"):
        run(read_at(97, op="ld.u32"), np.arange(128, dtype=np.uint32))


CP_ASYNC = """
  mov.u32 %r4, sm;
  shl.b32 %r5, %r1, 4;
  add.u32 %r6, %r4, %r5;
  mul.wide.u32 %rd1, %r1, 16;
  add.s64 %rd2, %rd10, %rd1;
  add.s64 %rd2, %rd2, {shift};
  cp.async.cg.shared.global [%r6], [%rd2], 16, {srcsize};
  cp.async.wait_all;
  ld.shared.u32 %r9, [%r6];
""" + store_r("%r9", "%rd11")


def test_cp_async_source_past_the_end_faults_and_src_size_bounds_the_read():
    x = np.arange(128, dtype=np.uint32)                    # 512 bytes: 32 lanes x 16 bytes
    decls = ".shared .align 16 .b8 sm[512];"
    with pytest.raises(SimulatorFault, match=r"cp\.async\.cg\.shared\.global .*" + WHO.format(t=31)
                       + r": global address 0x100000200 \+ 16 bytes is not inside one global buffer: 0x100000200 "
                         r"is 0 bytes past the end of buffer x"):
        run(CP_ASYNC.format(shift=16, srcsize=16), x, decls=decls)
    # only src-size bytes are read: src-size 0 at an address past the end reads nothing (zero fill)
    out = run(CP_ASYNC.format(shift=16, srcsize=0), x, decls=decls).buffers["out"]
    assert out.tolist() == [0] * 32
    with pytest.raises(SimulatorFault, match=r"global address 0x100000200 \+ 4 bytes is not inside one"):
        run(CP_ASYNC.format(shift=16, srcsize=4), x, decls=decls)


@pytest.mark.parametrize("op", ["atom.global.add.u32 %r5, [%rd30], 1;", "red.global.add.u32 [%rd30], 1;",
                                "atom.add.u32 %r5, [%rd30], 1;"])
def test_atomics_past_the_end_fault(op):
    body = f"  add.s64 %rd30, %rd10, 512;\n  {op}\n"
    with pytest.raises(SimulatorFault, match=WHO.format(t=0) + r": global address 0x100000200 \+ 4 bytes is not "
                                             r"inside one global buffer: 0x100000200 is 0 bytes past the end of "
                                             r"buffer x"):
        run(body, np.zeros(128, np.uint32))


def test_a_global_variable_is_a_buffer_too_and_source_lines_are_named():
    extra = '.file 1 "k.cu"\n.global .align 4 .b32 table[4] = {1, 2, 3, 4};\n'
    body = ("  mov.u64 %rd30, table;\n  add.s64 %rd30, %rd30, %rd0;\n  .loc 1 13 5\n"
            "  ld.global.u32 %r5, [%rd30];\n" + store_r("%r5", "%rd11"))
    with pytest.raises(SimulatorFault, match=r"ld\.global\.u32 %r5, \[%rd30\] \(k\.cu:13, <ptx>:\d+\): "
                                             + WHO.format(t=4) + r": global address 0x100000010 \+ 4 bytes is not "
                                             r"inside one global buffer: 0x100000010 is 0 bytes past the end of "
                                             r"buffer \.global table \[0x100000000, 0x100000010\)"):
        run(body, np.zeros(4, np.uint32), extra=extra)
    assert run(body, np.zeros(4, np.uint32), block=4, extra=extra).buffers["out"].tolist() == [1, 2, 3, 4]


def test_a_kernel_in_bounds_is_unaffected():
    """Reads up to the last byte of each buffer, vectors ending exactly at the end, atomics on the
    last element, generic addresses: the results are the numpy ones, bit for bit."""
    x = np.random.default_rng(1).integers(0, 1 << 32, 128, dtype=np.uint32)
    body = """
  add.s64 %rd30, %rd10, %rd0;
  add.s64 %rd30, %rd30, 384;
  ld.global.u32 %r5, [%rd30];
  ld.u32 %r6, [%rd30];
  mul.wide.u32 %rd1, %r1, 16;
  add.s64 %rd31, %rd10, %rd1;
  ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd31];
  xor.b32 %r5, %r5, %r6;
  xor.b32 %r5, %r5, %r13;
  add.s64 %rd32, %rd10, 508;
  atom.global.add.u32 %r7, [%rd32], 1;
""" + store_r("%r5", "%rd11")
    res = run(body, x.copy())
    t = np.arange(32)
    want = x[96 + t] ^ x[96 + t] ^ x[4 * t + 3]
    assert res.buffers["out"].tolist() == want.tolist()
    assert int(res.buffers["x"][127]) == (int(x[127]) + 32) & 0xFFFFFFFF
    assert res.buffers["x"][:127].tolist() == x[:127].tolist()


def test_const_and_param_reads_stay_inside_one_variable_or_parameter():
    extra = ".const .align 4 .b32 c[3] = {7, 8, 9};\n.const .align 8 .b64 d[1] = {5};\n"
    ok = "  mov.u64 %rd30, c;\n  ld.const.u32 %r5, [%rd30+8];\n" + store_r("%r5", "%rd11")
    assert run(ok, np.zeros(4, np.uint32), extra=extra).buffers["out"].tolist() == [9] * 32
    bad = "  mov.u64 %rd30, c;\n  ld.const.u32 %r5, [%rd30+12];\n"     # c[3]: not d's bytes
    with pytest.raises(SimulatorFault, match=r"const address 0xc \+ 4 bytes is not inside one \.const variable: "
                                             r"0xc is 0 bytes past the end of variable c \[0x0, 0xc\)"):
        run(bad, np.zeros(4, np.uint32), extra=extra)
    d = "  mov.u64 %rd30, d;\n  ld.const.u32 %r5, [%rd30+4];\n" + store_r("%r5", "%rd11")
    assert run(d, np.zeros(4, np.uint32), extra=extra).buffers["out"].tolist() == [0] * 32
    with pytest.raises(SimulatorFault, match=r"const address 0x\w+ \+ 4 bytes is not inside one \.const variable: "
                                             r"0x\w+ is 4 bytes before the start of variable d"):
        run("  mov.u64 %rd30, d;\n  ld.const.u32 %r5, [%rd30+-4];\n", np.zeros(4, np.uint32), extra=extra)
    text = (f"{HEADER}\n.visible .entry k(.param .u32 n, .param .u64 x)\n{{\n  .reg .b64 %rd<40>;\n"
            f"  ld.param.u64 %rd30, [x+4];\n  ret;\n}}\n")
    # parameters are numbered from 0x70 in the param space, as an H100 numbers them (warpsim.ptx.memory.KPARAM_BASE)
    with pytest.raises(SimulatorFault, match=r"ld\.param\.u64 %rd30, \[x\+4\].*param address 0x7c \+ 8 bytes is not "
                                             r"inside one kernel parameter: 0x7c \+ 8 bytes runs 4 bytes past the end "
                                             r"of parameter x \[0x78, 0x80\)"):
        warpsim.ptx.load(text).launch("k", block=1, args={"n": 1, "x": 2})


def test_object_ends_table():
    ends = object_ends(1024, [(0, 4), (512, 300)], 4, [(0, 4)], 8, [(0, 4), (4, 4)])
    assert ends[:4].tolist() == [4, 0, 812, 812]
    assert ends[4:8].tolist() == [4] * 4 and ends[8:].tolist() == [4] * 4 + [8] * 4
    with pytest.raises(ValueError, match="not 256-byte aligned"):
        object_ends(1024, [(8, 4)], 0, [], 0, [])


def test_local_accesses_stay_inside_the_threads_window():
    decls = "  .local .align 4 .b8 buf[12];\n"
    ok = "  mov.u64 %rd30, buf;\n  st.local.u32 [%rd30+8], %r1;\n  ld.local.u32 %r5, [%rd30+8];\n" \
        + store_r("%r5", "%rd11")
    assert run(ok, np.zeros(4, np.uint32), decls=decls).buffers["out"].tolist() == list(range(32))
    bad = "  mov.u64 %rd30, buf;\n  ld.local.u32 %r5, [%rd30+12];\n"
    with pytest.raises(SimulatorFault, match=WHO.format(t=0) + r": address 0xc \+ 4 bytes is outside local memory "
                                             r"\[0, 0xc\) per thread"):
        run(bad, np.zeros(4, np.uint32), decls=decls)
    with pytest.raises(SimulatorFault, match=r"address 0x0 \+ 4 bytes is outside local memory \[0, 0x0\)"):
        run("  mov.u64 %rd30, 0;\n  ld.local.u32 %r5, [%rd30];\n", np.zeros(4, np.uint32))


def test_generic_accesses_mixing_global_and_shared_lanes():
    """Even lanes load through a generic global address, odd lanes through a generic shared one (the
    thread-by-thread path); then every lane through a shared one (the warp path); a shared generic
    address past the end faults as before."""
    decls = "  .shared .align 4 .b32 sm[32];\n"
    body = """
  mov.u64 %rd20, sm;
  cvta.shared.u64 %rd21, %rd20;
  add.s64 %rd21, %rd21, %rd0;
  add.u32 %r6, %r1, 1000;
  st.u32 [%rd21], %r6;
  add.s64 %rd22, %rd10, %rd0;
  and.b32 %r7, %r1, 1;
  setp.eq.u32 %p1, %r7, 1;
  selp.b64 %rd23, %rd21, %rd22, %p1;
  ld.u32 %r5, [%rd23];
  ld.u32 %r8, [%rd21];
  add.u32 %r5, %r5, %r8;
""" + store_r("%r5", "%rd11")
    x = np.arange(32, dtype=np.uint32) * 7
    out = run(body, x, decls=decls).buffers["out"]
    t = np.arange(32)
    assert out.tolist() == np.where(t % 2 == 1, 2 * (t + 1000), x + t + 1000).tolist()
    bad = "  mov.u64 %rd20, sm;\n  cvta.shared.u64 %rd21, %rd20;\n  ld.u32 %r5, [%rd21+128];\n"
    with pytest.raises(SimulatorFault, match=WHO.format(t=0) + r": address 0x10000000480 \+ 4 bytes is outside "
                                             r"shared memory \[0x400, 0x480\)"):
        run(bad, x, decls=decls)


def test_the_issues_kernel_compiled_by_nvcc_names_its_source_line(tmp_path):
    """x[128..255] of a 128-element x: the first thread past the end faults, naming k.cu's line."""
    src = ('extern "C" __global__ void shifted(const float *x, float *y) {\n'
           "    int i = threadIdx.x;\n"
           "    y[i] = x[i + 128];\n"
           "}\n")
    mod = warpsim.ptx.load(nvcc_ptx(tmp_path, src))
    args = [np.zeros(128, np.float32), np.zeros(128, np.float32)]
    with pytest.raises(SimulatorFault, match=r"^ld\.global\S*\s+%f\d+, \[%rd\d+(\+\d+)?\] \(k\.cu:3, k\.ptx:\d+\): "
                                             + WHO.format(t=0) + r": global address 0x100000200 \+ 4 bytes is not "
                                             r"inside one global buffer: 0x100000200 is 0 bytes past the end of "
                                             r"buffer shifted_param_0 \[0x100000000, 0x100000200\)$"):
        mod.launch(mod.kernels[0], block=128, args=args)
