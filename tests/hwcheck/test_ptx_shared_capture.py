"""hwcheck for PTX programs without a GPU: each CTA's final shared memory (the simulator's own, and the capture the
instrumented kernel makes of it), and the registers written inside called ``.func`` bodies."""

import os

import numpy as np
import pytest

from hwcheck.device.instrument import TRACE_PARAM, instrument
from hwcheck.runs.ptx_examples import PTX_EXAMPLES, ROOT, ptx_jobs
from hwcheck.runs.ptx_run import PtxJob, SimulatorAsGpu, check_ptx
from hwcheck.device.shared_capture import SHARED_PARAM, compare_captures, expected_capture
from warpsim import ptx

FUNC_SMEM = next(e for e in PTX_EXAMPLES if e[1] == "func_smem")
BLOCK, GRID = 64, 2


def _func_smem_text():
    with open(os.path.join(ROOT, FUNC_SMEM[0])) as f:
        return f.read()


def _x(seed=0):
    return np.random.default_rng(seed).integers(0, 1 << 32, BLOCK * GRID, dtype=np.uint64).astype(np.uint32)


def _instrumented_run(text, kernel, args, grid, block, smem=0, capacity=256):
    ins = instrument(text, kernel, capacity=capacity)
    ctas, threads = int(np.prod(grid)), int(np.prod(grid)) * int(np.prod(block))
    args = dict(args, **{TRACE_PARAM: np.zeros(ins.buffer_bytes(threads) // 4, np.uint32),
                         SHARED_PARAM: np.zeros(ins.capture.buffer_bytes(ctas, smem) // 4, np.uint32)})
    return ins, ptx.load(ins.text).launch(kernel, grid=grid, block=block, args=args, smem=smem, quiet=True)


def test_the_simulator_keeps_each_ctas_final_shared_memory():
    """func_smem's shared memory, restated from its definition: tile[t] = the Collatz step of x[i], the counter
    64, flags[t] = 7t for t < 5."""
    text, x = _func_smem_text(), _x()
    module = ptx.load(text)
    res = module.launch("func_smem", grid=GRID, block=BLOCK, args={"x": x, "y": np.zeros_like(x)}, quiet=True,
                        keep_shared=True)
    where = {name: (address, size) for name, address, size in module.decoded("func_smem").shared}
    assert [cta for cta, _ in res.shared] == [(0, 0, 0), (1, 0, 0)]
    for c, (_, window) in enumerate(res.shared):
        v = x[c * BLOCK:(c + 1) * BLOCK].astype(np.uint64)
        step = np.where(v & 1, (3 * v + 1) & 0xFFFFFFFF, v >> 1).astype(np.uint32)
        at, size = where["func_smem_tile"]
        assert size == 4 * BLOCK and np.array_equal(window[at:at + size].view(np.uint32), step)
        at, _ = where["func_smem_count"]
        assert window[at:at + 4].view(np.uint32)[0] == BLOCK
        at, size = where["func_smem_flags"]
        assert window[at:at + size].tolist() == [0, 7, 14, 21, 28]
    assert module.launch("func_smem", grid=GRID, block=BLOCK, args={"x": x, "y": np.zeros_like(x)},
                         quiet=True).shared is None


def test_the_instrumented_kernel_captures_what_the_simulator_keeps():
    text, x = _func_smem_text(), _x(3)
    module = ptx.load(text)
    want = module.launch("func_smem", grid=GRID, block=BLOCK, args={"x": x, "y": np.zeros_like(x)}, quiet=True,
                         keep_shared=True)
    ins, got = _instrumented_run(text, "func_smem", {"x": x, "y": np.zeros_like(x)}, (GRID, 1, 1), (BLOCK, 1, 1))
    assert [r.name for r in ins.capture.regions] == ["func_smem_tile", "func_smem_count", "func_smem_flags"]
    assert np.array_equal(got.buffers["y"], want.buffers["y"])
    expected = expected_capture(ins.capture, module.decoded("func_smem").shared, [w for _, w in want.shared], 0,
                                BLOCK)
    cmp = compare_captures(ins.capture, expected, got.buffers[SHARED_PARAM], 0, (GRID, 1, 1))
    assert (cmp.compared, cmp.mismatched) == (GRID * (64 + 1 + 2), 0)
    assert np.array_equal(np.asarray(got.buffers[SHARED_PARAM]).view(np.uint8), expected)   # the addresses too


_DYNAMIC = """.version 8.0
.target sm_80
.address_size 64
.extern .shared .align 16 .b8 dyn[];
.visible .entry bytes(.param .u64 x)
{
  .shared .align 2 .b8 local_tile[6];
  .reg .b32 %r<6>; .reg .pred %p<2>; .reg .b64 %rd<3>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %dynamic_smem_size;
  setp.ge.u32 %p1, %r1, %r2;
  @%p1 bra DONE;
  mul.lo.u32 %r3, %r1, 37;
  mov.u32 %r4, %ctaid.x;
  add.u32 %r3, %r3, %r4;
  mov.u32 %r5, dyn;
  add.u32 %r5, %r5, %r1;
  st.shared.u8 [%r5], %r3;
  setp.lt.u32 %p1, %r1, 6;
  mov.u32 %r5, local_tile;
  add.u32 %r5, %r5, %r1;
  @%p1 st.shared.u8 [%r5], %r1;
DONE:
}
"""


def test_dynamic_shared_memory_of_odd_size_and_a_kernel_scope_variable_are_captured():
    """The dynamic window (10 bytes: two words and two bytes) and a .shared declared in the kernel's body; the
    kernel runs off the end of its body instead of a ret."""
    ins, got = _instrumented_run(_DYNAMIC, "bytes", {"x": np.zeros(4, np.uint32)}, (3, 1, 1), (32, 1, 1), smem=10)
    assert [(r.name, r.nbytes) for r in ins.capture.regions] == [("local_tile", 6), ("dyn", None)]
    slabs = np.asarray(got.buffers[SHARED_PARAM]).view(np.uint8).reshape(3, -1)
    for c in range(3):
        assert slabs[c, :4].view(np.uint32)[0] == 32
        assert slabs[c, 16:22].tolist() == list(range(6))
        assert slabs[c, 32:42].tolist() == [(37 * t + c) & 0xFF for t in range(10)]


def test_check_ptx_counts_shared_words_and_names_a_wrong_one():
    """A GPU whose capture has one wrong word of the tile of CTA 1: the record names the CTA, the variable, the
    offset, both machines' shared addresses and the bits."""
    def corrupt(kind, buffers):
        if kind == "instrumented":
            buffers[SHARED_PARAM].reshape(GRID, -1)[1, (16 + 4 * 9) // 4] ^= 0x100     # CTA 1, tile word 9
    job = ptx_jobs([FUNC_SMEM])[0]
    runs, status, _error, code = check_ptx(SimulatorAsGpu(), [job], seeds=1)
    assert (status, code) == ("pass", 0) and runs[0].seeds[0].shared_words == GRID * 67
    runs, status, _error, code = check_ptx(SimulatorAsGpu(corrupt=corrupt), [job], seeds=1)
    assert (status, code) == ("fail", 1) and runs[0].seeds[0].shared_bad == 1
    record = runs[0].records[0]
    assert (record["cta"], record["variable"], record["offset"]) == ([1, 0, 0], "func_smem_tile", 36)
    assert record["what"] == "final shared memory differs"
    assert int(record["shared_address"], 16) == 0x400 + 36 and "actual_shared_address" in record
    assert int(record["expected"], 16) ^ int(record["actual"], 16) == 0x100


def test_a_cta_whose_threads_did_not_all_leave_is_named():
    def corrupt(kind, buffers):
        if kind == "instrumented":
            buffers[SHARED_PARAM].reshape(GRID, -1)[0, 0] = 63
    runs, status, _error, _code = check_ptx(SimulatorAsGpu(corrupt=corrupt), ptx_jobs([FUNC_SMEM]), seeds=1)
    record = runs[0].records[0]
    assert status == "fail" and record["cta"] == [0, 0, 0]
    assert (record["expected_threads"], record["actual_threads"]) == (64, 63)


def test_registers_inside_called_functions_are_traced_and_named():
    """mix and finish (a .func that exits) are instrumented; their records follow the caller's steps, and a wrong
    register inside mix is named with its function."""
    text = _func_smem_text()
    ins, got = _instrumented_run(text, "func_smem", {"x": _x(), "y": np.zeros(BLOCK * GRID, np.uint32)},
                                 (GRID, 1, 1), (BLOCK, 1, 1))
    by_function = {}
    for s in ins.sites:
        by_function.setdefault(s.function, []).append(s.register)
    assert by_function["mix"] == ["%r1", "%r2", "%r3", "%p1", "%r4", "%r4", "%r5", "%r6", "%r6", "%r7"]
    assert by_function["finish"] == ["%rd1", "%r1", "%r2"]
    words = ins.thread_bytes // 4
    trace = np.asarray(got.buffers[TRACE_PARAM]).reshape(GRID * BLOCK, words)
    for t in (3, 4):                                    # thread 3 calls finish and exits there; thread 4 returns
        steps, count = trace[t, :2]
        records = trace[t, ins.header_bytes // 4:].reshape(-1, 4)[:count]
        assert steps == count and records[:, 1].tolist() == list(range(count))     # steps go on across calls
        functions = [ins.sites[s].function for s in records[:, 0]]
        assert functions.count("mix") == 9                 # one of %r4's two writes, by parity
        assert functions.count("finish") == (3 if t == 3 else 0)
        assert functions[-1] == ("finish" if t == 3 else "func_smem")

    mix_record = next(k for k, s in enumerate(trace[5, ins.header_bytes // 4:].reshape(-1, 4)[:, 0])
                      if ins.sites[s].function == "mix" and ins.sites[s].register == "%r7")

    def corrupt(kind, buffers):
        if kind == "instrumented":
            buffers[TRACE_PARAM].reshape(GRID * BLOCK, -1)[5, ins.header_bytes // 4 + 4 * mix_record + 2] ^= 1
    runs, status, _error, _code = check_ptx(SimulatorAsGpu(corrupt=corrupt), ptx_jobs([FUNC_SMEM]), seeds=1,
                                            capacity=256)
    record = runs[0].records[0]
    assert status == "fail" and (record["lane"], record["function"], record["register"]) == (5, "mix", "%r7")


def test_the_instrumented_text_declares_what_the_functions_need():
    ins = instrument(_func_smem_text(), "func_smem", capacity=8)
    text = ins.text
    assert ".global .align 8 .u64 __warpsim_trace_ptr;" in text and ".func __warpsim_exit()\n{" in text
    assert text.index(".func __warpsim_exit()\n;") < text.index(".func (.param .b32 mix_ret) mix(")
    assert text.count("call __warpsim_exit;") == 3            # the entry's ret and end, finish's exit
    assert ".param .u64 __warpsim_trace, .param .u64 __warpsim_shared" in text


@pytest.mark.parametrize("seed", [0, 1])
def test_func_smem_passes_against_itself(seed):
    runs, status, error, _code = check_ptx(SimulatorAsGpu(), ptx_jobs([FUNC_SMEM]), seeds=1, first_seed=seed)
    assert (status, error) == ("pass", None)
    assert runs[0].seeds[0].records > GRID * BLOCK * 30 and runs[0].seeds[0].instrumented_bad == 0


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_the_instrumented_kernel_with_dynamic_shared_memory_assembles(arch, tmp_path):
    import shutil
    import subprocess
    if shutil.which("ptxas") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("ptxas not found (required in CI)")
        pytest.skip("ptxas (CUDA toolkit) not found on PATH")
    path = tmp_path / "k.ptx"
    path.write_text(instrument(_DYNAMIC, "bytes", capacity=16).text)
    done = subprocess.run(["ptxas", f"-arch={arch}", str(path), "-o", os.devnull], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[:2000]


def test_only_the_bytes_the_kernel_wrote_are_compared(tmp_path):
    """A GPU does not clear shared memory: 6 threads write 6 of the 16 dynamic bytes; a GPU whose other bytes
    hold something else still passes, a wrong written byte fails and its record shows which bytes were written."""
    source = tmp_path / "bytes.ptx"
    source.write_text(_DYNAMIC)
    job = PtxJob(str(source), "bytes", (2, 1, 1), (6, 1, 1), 16, {"x": ("random", "u32", (4,))})

    def changed(byte):
        def corrupt(kind, buffers):
            if kind == "instrumented":
                buffers[SHARED_PARAM].view(np.uint8).reshape(2, -1)[1, 32 + byte] ^= 0x40   # CTA 1, dyn[byte]
        return corrupt
    runs, status, _error, _code = check_ptx(SimulatorAsGpu(corrupt=changed(6)), [job], seeds=1)
    assert status == "pass" and runs[0].seeds[0].shared_words == 2 * (2 + 2)      # local_tile 2 words, dyn 2
    runs, status, _error, _code = check_ptx(SimulatorAsGpu(shared_fill=0x5A), [job], seeds=1)
    assert status == "pass" and runs[0].seeds[0].shared_words == 2 * (2 + 2)      # leftovers are not compared
    runs, status, _error, _code = check_ptx(SimulatorAsGpu(corrupt=changed(5)), [job], seeds=1)
    record = runs[0].records[0]
    assert status == "fail" and (record["variable"], record["offset"], record["cta"]) == ("dyn", 4, [1, 0, 0])
    assert record["written"] == "0x0000ffff"


def test_shared_fill_starts_every_cta_with_that_byte():
    """Bytes a kernel does not write keep the fill, in every CTA; a fill that is not a byte is refused."""
    module = ptx.load(_DYNAMIC)
    res = module.launch("bytes", grid=2, block=4, args={"x": np.zeros(4, np.uint32)}, smem=8, quiet=True,
                        keep_shared=True, shared_fill=0xA5)
    dyn = next(address for name, address, _ in module.decoded("bytes").shared if name == "dyn")
    for c, (_, window) in enumerate(res.shared):
        assert window[dyn:dyn + 8].tolist() == [(37 * t + c) & 0xFF for t in range(4)] + [0xA5] * 4
    with pytest.raises(ValueError, match="shared_fill"):
        module.launch("bytes", block=4, args={"x": np.zeros(4, np.uint32)}, shared_fill=256)


@pytest.mark.parametrize("kernel", ["func_smem", "calls"])
def test_a_gpu_with_leftovers_in_shared_memory_passes(kernel):
    """A stand-in GPU whose shared memory starts as 0x5A in every CTA (a GPU does not clear it) agrees: the kernels
    write every byte they leave, and the capture reads each CTA's own."""
    example = next(e for e in PTX_EXAMPLES if e[1] == kernel)
    if example[0].endswith(".cu"):
        from warpsim.toolchain import find_nvcc
        if find_nvcc() is None:
            pytest.skip("nvcc not found")
    runs, status, error, _code = check_ptx(SimulatorAsGpu(shared_fill=0x5A), ptx_jobs([example]), seeds=1)
    assert (status, error) == ("pass", None) and runs[0].seeds[0].shared_words > 0


_PROTOTYPE = """.version 8.0
.target sm_80
.address_size 64
.func (.param .b32 twice_ret) twice
(
    .param .b32 twice_v
)
;
.visible .entry uses(.param .u64 y)
{
  .reg .b32 %r<4>; .reg .b64 %rd<3>;
  mov.u32 %r1, %tid.x;
  {
  .param .b32 param0;
  st.param.b32 [param0], %r1;
  .param .b32 retval0;
  call.uni (retval0), twice, (param0);
  ld.param.b32 %r2, [retval0];
  }
  ld.param.u64 %rd1, [y];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %r2;
  ret;
}
.func (.param .b32 twice_ret) twice(.param .b32 twice_v)
{
  .reg .b32 %r<3>;
  ld.param.u32 %r1, [twice_v];
  add.u32 %r2, %r1, %r1;
  st.param.b32 [twice_ret], %r2;
}
"""


def test_a_function_declared_before_and_defined_after_the_kernel(tmp_path):
    """A prototype before the kernel, the body after it (and running off its end): the body is instrumented,
    the counts come back to the caller, the instrumented text assembles."""
    ins, got = _instrumented_run(_PROTOTYPE, "uses", {"y": np.zeros(32, np.uint32)}, (1, 1, 1), (32, 1, 1))
    assert [s.function for s in ins.sites] == ["uses"] * 6 + ["twice"] * 2
    assert got.buffers["y"].tolist() == [2 * t for t in range(32)]
    trace = np.asarray(got.buffers[TRACE_PARAM]).reshape(32, -1)
    assert trace[:, 0].tolist() == [8] * 32 and trace[:, 1].tolist() == [8] * 32
    steps = trace[:, ins.header_bytes // 4:].reshape(32, -1, 4)[:, :8]
    assert [ins.sites[k].register for k in steps[0, :, 0]] == ["%r1", "%r1", "%r2", "%r2", "%rd1", "%rd1", "%rd2",
                                                              "%rd1"]      # twice's %r1, %r2 between the call's
    assert (steps[:, :, 1] == np.arange(8)).all()
    import shutil
    import subprocess
    if shutil.which("ptxas") is not None:
        path = tmp_path / "k.ptx"
        path.write_text(ins.text)
        done = subprocess.run(["ptxas", "-arch=sm_80", str(path), "-o", os.devnull], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[:2000]
