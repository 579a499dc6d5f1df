"""The debugger for PTX kernels (``warpsim debug K.cu|K.ptx|K_dsl.py``): the acceptance sessions of issue 13.

- CuTe C++ ``examples/cute_cpp/gemm_smem.cu`` through a real pseudo-terminal: break at the C++ line of the
  ``copy`` into the ``retile_D`` view, step over it, and lane 5's registers hold the Q elements CuTe's copy
  view for thread 5 names (computed by ``warpsim.cute``, never by the debugger);
- the CuTe DSL tile kernel, breaking on a Python line;
- a diverged warp shown with each lane's pc; a fault stopping the session with its lanes named;
- every command's one-line errors, and ``back`` replaying to the same state.
"""

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import warpsim.cute as cute
from debug_helpers import EXAMPLE, ROOT, coded_inputs, decode
from test_debug_repl import Terminal
from warpsim.debug.repl import COMMANDS, Repl
from warpsim.debug.session import Session
from warpsim.debug.views import lane_ranges
from warpsim.ptx import load
from warpsim.toolchain import find_nvcc
from tests.docs.pages import section as docs_section

GEMM_CU = ROOT / "examples" / "cute_cpp" / "gemm_smem.cu"
TILE_DSL = ROOT / "examples" / "cute_dsl" / "tile_cp_async_dsl.py"
CACHE = os.environ.get("WARPSIM_CACHE") or os.path.expanduser("~/.cache/warpsim-ptx")
need_nvcc = pytest.mark.skipif(find_nvcc() is None and os.environ.get("CI") != "true",
                               reason="nvcc not found on PATH or under CUDA_HOME")


def line_of(path, text):
    lines = [n for n, line in enumerate(Path(path).read_text().splitlines(), 1) if text in line]
    assert len(lines) == 1, f"{text!r} is on lines {lines} of {path}"
    return lines[0]


def cute_copy_view_a(thread):
    """``[(row, col) of Q]`` per 16-bit half of the first copy of A through CuTe's copy view of ``thread``:
    the ldmatrix.x4's destination register ``j`` holds halves ``2j`` (low) and ``2j + 1`` (high)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("seed_example_for_ptx_tests", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    traits = module.kernel_traits("f16", "yes")
    thr = traits.tiled_mma.get_slice(thread)
    frag = thr.partition_fragment_A(cute.make_tensor(cute.make_smem_ptr(0, "f16"), traits.smem_layout_q))
    view = cute.make_tiled_copy_A(traits.smem_copy_atom, traits.tiled_mma).get_slice(thread).retile_D(frag)
    ident = thr.partition_A(cute.make_identity_tensor((64, 64)))
    coord = {int(frag.address(i)): tuple(int(c) for c in ident[i]) for i in range(int(cute.size(frag.layout)))}
    per_copy = int(cute.size(view.layout)) // int(cute.product(cute.shape(view.layout)[2]))   # values of one k-block
    return [coord[int(view.address(v))] for v in range(per_copy)]


def gemm_args(tmp_path):
    inputs = coded_inputs()
    np.save(tmp_path / "q.npy", inputs["q"])
    np.save(tmp_path / "k.npy", inputs["k"])
    return ["--kernel", "gemm_smem_f16_qk_swizzle", "--arch", "sm_80", "--arg", f"q={tmp_path / 'q.npy'}",
            "--arg", f"k={tmp_path / 'k.npy'}", "--arg", "s=zeros:f32:64x64"]


def environment(tmp_path, **extra):
    env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(tmp_path), TERM="dumb", WARPSIM_CACHE=CACHE)
    env.pop("NO_COLOR", None)
    env.update(extra)
    return env


@need_nvcc
def test_acceptance_gemm_smem_cu_through_a_pseudo_terminal(tmp_path):
    copy_line = line_of(GEMM_CU, "copy(smem_tiled_copy_A, tCsA(_, _, _0{}), tCrA_copy_view(_, _, _0{}))")
    term = Terminal([sys.executable, "-m", "warpsim", "debug", str(GEMM_CU), *gemm_args(tmp_path)],
                    environment(tmp_path))
    try:
        banner = term.read_prompt(timeout=300)
        assert "kernel gemm_smem_f16_qk_swizzle" in banner and "=> #0, CTA (0, 0, 0), warp 0" in banner
        assert f"Breakpoint 1: line gemm_smem.cu:{copy_line}" in term.command(f"break gemm_smem.cu:{copy_line}")
        os.write(term.master, b"cont\n")                  # the first step: Numba may compile the interpreter
        stop = term.read_prompt(timeout=600).split("\n", 1)[1]
        assert f"Breakpoint 1, line gemm_smem.cu:{copy_line}: w0" in stop
        assert f"gemm_smem.cu:{copy_line}: copy(smem_tiled_copy_A, tCsA" in stop
        listing = term.command("list")
        assert re.search(rf"^ +{copy_line} B=> +copy\(smem_tiled_copy_A", listing, re.M), listing
        assert "ldmatrix.sync.aligned.x4.m8n8.shared.b16" in listing           # the PTX of the line, beside it
        stop = term.command("next")
        executed = re.search(r"the last: w0 ldmatrix\S* \{(%r\d+), (%r\d+), (%r\d+), (%r\d+)\}", stop)
        assert executed, stop
        names = executed.groups()
        regs = term.command(f"print {' '.join(names)} lane 5 hex")
        row = re.search(r"^   5 (.*)$", regs, re.M).group(1).split()
        assert all(cell.startswith("*0x") for cell in row), row                  # written by the ldmatrix
        halves = [h for cell in row for word in [int(cell[1:], 16)] for h in (word & 0xFFFF, word >> 16)]
        assert [decode(h, "q") for h in halves] == cute_copy_view_a(5)
        banks = term.command("banks")
        assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16: 4 phases, 4 wavefronts, conflict-free" in banks
        assert "converged: every live lane" in term.command("info cuda lanes")
        assert term.command("frobnicate").startswith("error: unknown command 'frobnicate'")
        assert "=> #" in term.command("where")                                   # the session went on
    finally:
        status = term.close()
    assert status == 0
    assert f"break gemm_smem.cu:{copy_line}" in (tmp_path / ".warpsim_history").read_text()


@pytest.mark.skipif(__import__("importlib").util.find_spec("cutlass") is None and os.environ.get("CI") != "true",
                    reason="CuTe DSL not installed (pip install 'warpsim[dsl]')")
def test_cute_dsl_tile_kernel_breaks_on_a_python_line():
    depth = 64
    rng = np.random.default_rng(0)
    a, b = (rng.integers(0, 0x3C00, (64, depth)).astype(np.uint16) for _ in range(2))
    args = {"a": [("u64", a), ("s32", depth), ("s32", depth)], "b": [("u64", b), ("s32", depth), ("s32", depth)],
            "c": np.zeros((64, 64), np.float32)}
    session = Session.open(TILE_DSL, "tile_kernel", block=128, args=args, smem=8192, arch="sm_80")
    gemm = line_of(TILE_DSL, "cute.gemm(tiled_mma, tCrC")
    out = io.StringIO()
    status = Repl(session, out).run_script([f"break tile_cp_async_dsl.py:{gemm}", "cont", "list", "where",
                                                "step", "mask"])
    text = out.getvalue()
    assert status == 0, text
    assert f"Breakpoint 1, line tile_cp_async_dsl.py:{gemm}: w0" in text
    assert re.search(rf"^ +{gemm} B=> +cute\.gemm\(tiled_mma", text, re.M), text
    assert "mma.sync.aligned.m16n8k16" in text.split("(warpsim) list", 1)[1]
    assert session.line_of(session.last.pc) == ("tile_cp_async_dsl.py", gemm)


DIVERGE = """.version 8.0
.target sm_80
.address_size 64
.visible .entry diverge(.param .u64 out)
{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  .reg .f32 %f<2>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 3;
  mov.u32 %r3, 0;
LOOP:
  add.u32 %r3, %r3, %r2;
  sub.u32 %r2, %r2, 1;
  setp.ne.u32 %p1, %r2, 0xFFFFFFFF;
  @%p1 bra LOOP;
  mov.b32 %f1, %r3;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  setp.eq.u32 %p2, %r1, 7;
  @%p2 add.s64 %rd3, %rd3, 4096;
  st.global.f32 [%rd3], %f1;
  ret;
}
"""


def diverge_session(tmp_path, grid=1, text=DIVERGE):
    path = tmp_path / "diverge.ptx"
    path.write_text(text)
    mod = load(text, filename="diverge.ptx")
    return Session(mod, "diverge", grid=grid, block=32, args={"out": np.zeros(32 * grid, np.float32)},
                      source=path)


def run_script(session, commands):
    out = io.StringIO()
    status = Repl(session, out).run_script(commands)
    return status, out.getvalue()


def test_a_diverged_warp_shows_each_lanes_pc_and_a_fault_names_its_lanes(tmp_path):
    session = diverge_session(tmp_path)
    status, mask = run_script(session, ["stepi 9", "mask"])
    mask = mask.split("(warpsim) mask\n", 1)[1]
    assert "diverged: 2 pcs" in mask, mask
    lanes_at = dict(re.findall(r"pc +(\d+)  lanes (\S+)", mask))
    pcs = session.run.pc[:32]
    assert set(map(int, lanes_at)) == set(pcs.tolist())
    for pc, lanes in lanes_at.items():                    # each pc's lanes are those the interpreter holds there
        assert lanes == lane_ranges(sum(1 << lane for lane in range(32) if pcs[lane] == int(pc))), (pc, lanes)
    status, text = run_script(session, ["pred", "regs %r2..%r3 lanes 0-4", "list", "cont", "where", "back 1",
                                        "where"])
    assert "lane pcs: 0:" in mask and re.search(r"^=> pc", mask, re.M)
    assert re.search(r"^%p1 +[01]{32}$", text, re.M)
    assert "registers: %r: .b32" in text and "(no .loc source lines: the PTX)" in text
    fault = text.split("(warpsim) cont\n", 1)[1]
    assert fault.startswith("fault: st.global.f32 [%rd3], %f1"), fault
    assert "warp 0 lane 7" in fault and "not inside one global buffer" in fault
    assert re.search(r"^stopped at #\d+ w0 lanes 0-31: PTX line \d+: st.global.f32 \[%rd3\], %f1", fault, re.M), fault
    assert "stopped at a fault" in text.split("(warpsim) where\n", 1)[1]
    assert text.count("(warpsim) where\n=> #") == 2 and status == 0          # back leaves the fault


def test_back_replays_to_the_same_state_and_next_goes_by_source_line(tmp_path):
    session = diverge_session(tmp_path)
    session.interval = 4
    session.stepi(13)
    regs, pcs = session.run.machine.regs.copy(), session.run.pc.copy()
    session.stepi(5)
    assert session.back(5).reason == "back" and session.position == 13
    assert np.array_equal(session.run.machine.regs, regs) and np.array_equal(session.run.pc, pcs)
    assert len(session.checkpoints) > 1


def test_every_command_has_help_and_errors_are_one_line(tmp_path):
    session = diverge_session(tmp_path)
    status, text = run_script(session, ["help", "step x", "regs %q1", "regs %r5..%r2", "break ptx 999", "break x:3",
                                        "watch %r9", "smem 0", "banks", "warp 7", "cta 3", "until 3", "list 1000",
                                        "where"])
    assert status == 1
    for name, (usage, _t) in COMMANDS.items():
        assert usage in text, name
    errors = [line for line in text.splitlines() if line.startswith("error:")]
    assert len(errors) == 11, errors
    assert any(e.startswith("error: list: diverge has no .loc source lines") for e in errors)
    assert "error: step: expected an integer, got 'x'" in errors
    assert any(e.startswith("error: no register '%q1' in diverge (its registers: %fN, %pN, %rN, %rdN)") for e in errors)
    assert "error: registers: '%r5..%r2' is an empty range (write the lower register first)" in errors
    assert any(e.startswith("error: break: PTX line 999 holds no instruction of diverge") for e in errors)
    assert "error: warp must be an int in [0, 1), got 7" in errors
    assert text.split("(warpsim) where\n", 1)[1].startswith("=> #0, CTA (0, 0, 0), warp 0")


def test_command_line_routes_ptx_files_and_reports_errors_in_one_line(tmp_path):
    path = tmp_path / "diverge.ptx"
    path.write_text(DIVERGE)
    cmd = [sys.executable, "-m", "warpsim", "debug", str(path), "--kernel", "diverge", "--block", "32",
           "--arg", "out=zeros:f32:32"]
    env = environment(tmp_path, NO_COLOR="1")
    done = subprocess.run(cmd + ["--commands", "-"], input="stepi 2\nregs %r1 lanes 6-7\n", capture_output=True,
                          text=True, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "(warpsim) regs %r1 lanes 6-7\nwarp 0, CTA (0, 0, 0), typed, after #1 mov.u32" in done.stdout
    assert re.search(r"^   7 +\*0x00000007$", done.stdout, re.M)
    done = subprocess.run(cmd[:-2] + ["--arg", "nope=1"], capture_output=True, text=True, env=env, cwd=ROOT, input="")
    assert done.returncode == 2 and done.stderr.startswith("warpsim debug: error: ") and \
        done.stderr.count("\n") == 1, done.stderr


@need_nvcc
def test_the_readme_transcript_is_real(tmp_path):
    section = docs_section("guides/debugger.md", "Debugging: one debugger for every front end")
    block = section.split("```\n$ warpsim debug examples/cute_cpp/", 1)[1].split("```", 1)[0]
    block = "$ warpsim debug examples/cute_cpp/" + block
    command, transcript = block.split("\n", 1)
    assert command.startswith("$ warpsim debug ")
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    inputs = coded_inputs()
    np.save(tmp_path / "q.npy", inputs["q"])
    np.save(tmp_path / "k.npy", inputs["k"])
    commands = [line.split("(warpsim) ", 1)[1] for line in transcript.splitlines() if line.startswith("(warpsim) ")]
    done = subprocess.run([sys.executable, "-m", "warpsim", *command.split()[2:]], input="\n".join(commands) + "\n",
                          capture_output=True, text=True, cwd=tmp_path, env=environment(tmp_path, NO_COLOR="1"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == transcript


BRANCHY = """// a test kernel for the PTX debugger: a lane-dependent loop, a printf, two CTAs
#include <cstdio>

extern "C" __global__ void branchy(int* out) {
    int t = threadIdx.x;
    int acc = 0;
    for (int i = 0; i < (t & 3) + (int)blockIdx.x; ++i) {
        acc += i + t;
    }
    if (t == 3) printf("cta %d thread %d acc %d\\n", (int)blockIdx.x, t, acc);
    out[blockIdx.x * blockDim.x + t] = acc;
}
"""


@need_nvcc
def test_a_cu_kernel_until_watch_printf_and_ctas(tmp_path):
    from warpsim.frontends.kernel import open_kernel
    source = tmp_path / "branchy.cu"
    source.write_text(BRANCHY)
    kernel = open_kernel(source, "branchy", arch="sm_80")
    out = np.zeros(64, np.int32)
    session = Session(kernel.module, kernel.name, grid=2, block=32, args=kernel.core_args({"out": out}),
                         source=kernel.source)
    printf_line = line_of(source, "printf(")
    store_line = line_of(source, "out[blockIdx.x")
    status, text = run_script(session, [f"until {printf_line}", "where", "watch %r1 lane 3", "delete", "printf",
                                        f"break branchy.cu:{store_line}", "cont", "printf", "list", "cta 1", "cta",
                                        "delete", "cont", "printf", "cta 0", "cta"])
    assert status == 0, text
    assert f"branchy.cu:{printf_line}: if (t == 3) printf(" in text.split("(warpsim) where\n", 1)[1]
    assert "no printf output yet" in text.split("(warpsim) printf\n", 1)[1]
    stop = text.split("(warpsim) cont\n", 1)[1]
    assert stop.startswith("printf: cta 0 thread 3 acc 12\n") and f"Breakpoint 2, line branchy.cu:{store_line}" in stop
    assert "CTA (0, 0, 0) thread (3, 0, 0): cta 0 thread 3 acc 12" in text
    assert re.search(rf"^ +{store_line} B=> +out\[blockIdx", text, re.M)
    assert "CTA (1, 0, 0) (index 1 of 2)" in text
    last_cont = text.rsplit("(warpsim) cont\n", 1)[1]
    assert "printf: cta 1 thread 3 acc 18" in last_cont and "the launch has finished" in last_cont
    assert text.rstrip().endswith("CTA (0, 0, 0) (index 0 of 2)")                  # cta 0: a replay
    want = [sum(i + t for i in range((t & 3) + c)) for c in range(2) for t in range(32)]
    session.cont()
    assert session.run.result().buffers[kernel.param_name("out")].tolist() == want


def test_watch_stops_after_the_register_changes(tmp_path):
    session = diverge_session(tmp_path)
    status, text = run_script(session, ["watch %r3 lane 2", "cont", "regs %r3 lane 2", "cont", "break"])
    assert status == 0, text
    stops = text.split("(warpsim) cont\n")
    assert stops[1].startswith("Watch 1, watch w0 lane 2 %r3: changed\nexecuted")
    assert "add.u32 %r3, %r3, %r2" in stops[1]
    assert re.search(r"^   2 +\*0x00000002$", text, re.M)                          # 0 + 2
    assert stops[2].startswith("Watch 1") and "(hit 2 times)" in text


def test_cta_runs_to_the_start_of_a_cta_as_single_steps_do(tmp_path):
    safe = DIVERGE.replace("  @%p2 add.s64 %rd3, %rd3, 4096;\n", "")        # no fault: every CTA runs
    session, single = diverge_session(tmp_path, 5, safe), diverge_session(tmp_path, 5, safe)
    session.interval = 8
    assert session.go_cta(3).reason == "cta" and session.cta == (3, 0, 0)
    while single.cta != (3, 0, 0):
        single.stepi()
    assert session.position == single.position > 0
    assert np.array_equal(session.run.pc, single.run.pc) and session.next_instruction() == single.next_instruction()
    per_cta = single.position // 3                  # every CTA runs the same instructions
    assert session.go_cta(1).reason == "cta" and (session.cta, session.position) == ((1, 0, 0), per_cta)   # a replay


def test_info_mbarriers_and_info_wgmma_show_the_asynchronous_state():
    """The mbarrier PTX of tests/ptx/test_mbarrier.py: once warp 0 waits at its try_wait, ``info mbarriers`` names
    the barrier, its phase and what it waits for, and the waiting lanes; a wgmma kernel stepped past its
    mma_async shows the accumulators in flight until its wait_group."""
    from tests.ptx.test_mbarrier import HEAD, PRODUCER_CONSUMER, TAIL
    mod = load(HEAD + PRODUCER_CONSUMER + TAIL, filename="k.ptx")
    session = Session(mod, "k", block=64, args={"out": np.zeros(64, np.uint32), "arrivals": 32})
    arrive = next(n for n, t in enumerate(mod.text.splitlines(), 1) if "mbarrier.arrive" in t)
    status, text = run_script(session, ["info mbarriers", f"break ptx {arrive}", "cont", "info mbarriers"])
    first, later = text.split("(warpsim) info mbarriers\n")[1:3]
    assert status == 0 and "no mbarrier initialised" in first
    assert re.search(r"shared 0x400: phase 0 \(parity 0\), 32 of 32 arrivals and 0 transaction bytes pending; "
                     r"waiting: warp 0 lanes 0-31", later), later
    from tests.ptx.test_wgmma_forms import MMA, _module
    from warpsim.isa.wgmma import make_descriptor
    mod = load(_module(MMA), filename="w.ptx")
    desc = make_descriptor(1024, 16, 128)
    session = Session(mod, "k", block=128, args={"out": np.zeros(128, np.float32), "da": desc, "db": desc})
    line = next(n for n, t in enumerate(mod.text.splitlines(), 1) if "wgmma.commit_group" in t)
    status, text = run_script(session, [f"break ptx {line}", "cont", "info wgmma", "cont", "info wgmma"])
    parts = text.split("(warpsim) info wgmma\n")
    assert re.search(r"warp 0: 0 groups committed; in flight: open group: 4 registers \(%f1 \.\. %f4\)", parts[1])
    assert "no wgmma in flight" in parts[2] or "warp 0" not in parts[2]


def test_info_tma_lists_the_bulk_copies_issued():
    """tests/ptx/test_mbarrier.py's bulk copy: before it ``info tma`` says none; after, the copy's step, warp and lane,
    PTX line, form, size and addresses (the destination the CTA's shared window, the source global memory)."""
    from tests.ptx.test_mbarrier import BULK
    mod = load(BULK, filename="b.ptx")
    session = Session(mod, "k", block=32, args={"out": np.zeros(32, np.uint32),
                                                "src": np.arange(100, 132, dtype=np.uint32), "size": 128})
    line = next(n for n, t in enumerate(mod.text.splitlines(), 1) if "cp.async.bulk" in t)
    status, text = run_script(session, ["info tma", f"break ptx {line}", "cont", "stepi", "info tma"])
    first, later = text.split("(warpsim) info tma\n")[1:3]
    assert status == 0 and "no bulk copy (TMA) issued yet" in first, text
    found = re.search(r"CTA \(0, 0, 0\): 1 bulk copy issued\n  #(\d+) warp 0 lane 0, PTX line (\d+): global -> shared: "
                      r"128 bytes to (0x[0-9a-f]+) from (0x[0-9a-f]+)", later)
    assert found, later
    at = int(re.search(r"executed (\d+) warp instructions", text.split("(warpsim) cont\n")[1]).group(1))
    assert int(found.group(2)) == line and int(found.group(1)) == at       # the step the breakpoint stopped before
    (copy,) = session.run.bulk_transfers()
    assert (copy["size"], copy["thread"], hex(copy["dst"]), hex(copy["src"])) == (128, 0, found.group(3), found.group(4))


def test_a_warp_specialised_kernel_is_stepped_by_role():
    """examples/hopper/tma_gemm.cu's gemm_tn_ws: warps 4-7 give registers back (setmaxnreg.dec: the producer), warps
    0-3 take them (.inc: the consumers). Past the split, ``info cuda warps`` shows each warp's role and ``cuda role``
    focuses the first warp of one, which ``step`` then follows."""
    from tests.ptx.test_cluster import HOPPER, _kernel
    from warpsim.isa.tma import TensorMap
    _kernel("gemm_tn_ws", "tma_gemm.cu")                       # skips without nvcc and the CuTe headers
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((64, 128)).astype(np.float16) for _ in range(2))
    args = {"tma_a": TensorMap(a, (64, 64), swizzle="128B"), "tma_b": TensorMap(b, (64, 64), swizzle="128B"),
            "c": np.zeros((64, 64), np.float32), "M": 64, "N": 64, "K": 128}
    session = Session.open(f"{HOPPER}/tma_gemm.cu", "gemm_tn_ws", block=256, args=args, smem=66560, arch="sm_90")
    assert session.roles and {session.role_of(w) for w in range(8)} == {None}
    status, text = run_script(session, ["cuda role producer"])
    assert status == 1 and "cuda role: no warp of CTA (0, 0, 0) is a producer yet" in text
    status, text = run_script(session, ["break setmaxnreg"] + ["cont"] * 5 + ["delete", "stepi", "info cuda warps",
                                        "cuda role producer", "step", "cuda role consumer"])
    assert status == 0, text
    warps = text.split("(warpsim) info cuda warps\n")[1].split("(warpsim)")[0]
    roles = {int(m.group(1)): m.group(2) for m in re.finditer(r"warp\s+(\d+)\s+\S+(?: \S+)*?\s+(producer|consumer|-)\s",
                                                              warps)}
    assert roles == {0: "consumer", 1: "consumer", 2: "consumer", 3: "consumer", 4: "producer", 5: "-", 6: "-",
                     7: "-"}, warps                           # 5-7 have not reached their setmaxnreg.dec
    assert re.search(r"focus warp 4 \(pinned\), the first producer of warps 4\n", text), text
    assert re.search(r"=> #\d+, CTA \(0, 0, 0\), warp 4 ", text.split("(warpsim) step\n")[1]), text
    assert re.search(r"focus warp 0 \(pinned\), the first consumer of warps 0, 1, 2, 3", text), text
