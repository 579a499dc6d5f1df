"""The one session over a traced Python program (``Session.program``): its lowered kernel stepped on the PTX core.

The end state must be ``run_program``'s, every backwards move must reproduce the state seen going forwards,
the stream's progress read off the warps' pcs must follow the instructions the schedule runs, and the
breakpoints and watches must stop where brute-force single steps say they should.
"""

import re

import numpy as np
import pytest

from debug_helpers import EXAMPLE, coded_inputs, source_line
from warpsim.debug.session import Session
from warpsim.errors import ProgramError, SimulatorFault
from warpsim.program import load_program
from warpsim.program.instr import Op
from warpsim.program.program import Program
from warpsim.program.run import run_program


@pytest.fixture(scope="module")
def program():
    return load_program(EXAMPLE)


def state(s):
    """The program's view of the machine: its registers (%r0.., every warp), shared window and buffers."""
    t = s.traced
    regs = s.run.machine.regs[:, :, [t.slot(r) for r in range(t.trace.regs_per_thread)]]
    gmem = s.run.machine.gmem[t.gmem_base:t.gmem_base + sum(b.nbytes for b in t.trace.buffers)]
    return regs.copy(), t.smem.copy(), gmem.copy()


def assert_same_state(where, want, got):
    for name, a, b in zip(("regs", "smem", "gmem"), want, got):
        bad = np.argwhere(a[:b.size] != b[:a.size]) if a.ndim == 1 else np.argwhere(a != b)
        if bad.size:
            index = tuple(int(x) for x in bad[0])
            pytest.fail(f"{where}: {name}{list(index)} expected {int(a[index]):#x}, got {int(b[index]):#x} "
                        f"({len(bad)} differ)")


@pytest.mark.parametrize("params", [{"product": "qk"}, {"product": "pv", "dtype": "bf16", "swizzle": "no"}])
def test_cont_ends_where_run_program_ends(program, params):
    s = Session.program(program, params, coded_inputs(params["product"]))
    stop = s.cont()
    assert stop.reason == "end" and stop.executed == s.position > len(s.traced.stream)
    r = run_program(program, params, coded_inputs(params["product"]))
    m = r.machine
    assert_same_state("cont vs run_program", (m.regs, m.smem, m.gmem), state(s))
    assert s.traced.executed().all()
    assert s.cont() == type(stop)("end", s.position, 0)


def test_single_steps_follow_the_stream(program):
    """Every warp instruction of the launch, one at a time: the stream positions read off the pcs advance by
    exactly the position the instruction runs, and what it writes is that stream instruction's dst."""
    s = Session.program(program, {}, coded_inputs())
    t = s.traced
    done = t.executed()
    assert not done.any()
    ran = []
    while not s.finished:
        stop = s.stepi()
        assert stop.executed == 1
        last = s.last
        k = t.position_at(last.warp, last.pc)
        now = t.executed()
        if k is None:                                   # the kernel's own code: table loads, address setup
            assert (now == done).all(), f"#{last.position} {s.text[last.pc]} moved the stream"
        else:
            assert np.flatnonzero(now & ~done).tolist() == [k], f"#{last.position}: {s.text[last.pc]}"
            instr = t.stream[k]
            assert instr.warp == last.warp and s.text[last.pc].startswith(instr.ptx)
            dst = {f"%r{r}" for r in instr.dst}
            if instr.op in (Op.MMA, Op.LDMATRIX):
                assert set(last.written) == dst
            elif instr.op != Op.LD:                     # a 16-bit load writes its register through a bfi
                assert set(last.written) <= dst         # a mov of several registers: one PTX mov each
            ran.append(k)
        done = now
    assert sorted(ran) == list(range(len(t.stream))) and done.all()
    end = state(s)
    bulk = Session.program(program, {}, coded_inputs())
    bulk.cont()
    assert_same_state("stepi to the end vs cont", state(bulk), end)


def test_back_and_goto_reproduce_every_state(program):
    s = Session.program(program, {}, coded_inputs(), interval=16, max_checkpoints=6)
    seen = {0: state(s)}
    while not s.finished:
        s.stepi(37)
        seen[s.position] = state(s)
    assert len(s.checkpoints) <= 7, s.checkpoints            # bounded: max_checkpoints (+ the start)
    assert s.interval > 16                                   # it thinned its checkpoints on the way
    rng = np.random.default_rng(0)
    for target in rng.choice(sorted(seen), 12):
        target = int(target)
        if target < s.position:
            assert s.back(s.position - target).reason == "back"
        else:
            s.goto(target)
        assert s.position == target
        assert_same_state(f"back/goto to {target}", seen[target], state(s))
    assert s.back(10_000).position == 0


def _entries(t, line):
    """``(warp, pc)`` of the stream positions where a warp enters source ``line`` (its previous one is another)."""
    out, prev = [], {}
    for k, i in enumerate(t.stream):
        here = i.line.line if i.line else None
        if here == line and prev.get(i.warp) != line:
            out.append((i.warp, int(t.pcs[k])))
        if i.op != Op.BAR:
            prev[i.warp] = here
    return out


def test_line_breakpoint_stops_where_each_warp_enters_the_gemm(program):
    s = Session.program(program)
    line = source_line("gemm(tiled_mma, tCrA")
    bp = s.break_line(line, "gemm_smem.py")
    stops = []
    while s.cont().reason == "break":
        w, pc, _lanes = s.next_instruction()
        assert s.line_of(pc) == ("gemm_smem.py", line) and s.text[pc].startswith("mma.sync")
        stops.append((w, pc))
    want = _entries(s.traced, line)
    # k_blocks = 64 / 16, but the last gemm follows the one before on the same line (no copies in between):
    # 3 entries a warp
    assert sorted(stops) == sorted(want) and len(stops) == 4 * 3
    assert s.hit_counts[bp.number] == 12


def test_step_visits_the_focus_warps_source_lines_in_order(program):
    s = Session.program(program)
    s.pinned_warp = 1
    t = s.traced
    want = []
    for i in t.stream:
        if i.warp == 1 and i.line and (not want or want[-1] != i.line.line):
            want.append(i.line.line)
    visited = []
    while not s.finished:
        pc = s.warp_next_pc(1)
        line = s.line_of(pc) if pc is not None else None
        if line is not None and (not visited or visited[-1] != line[1]):
            visited.append(line[1])
        if s.step().reason == "end":
            break
    assert visited == want and source_line("gemm(tiled_mma, tCrA") in visited


def test_run_to_and_opcode_breakpoints(program):
    s = Session.program(program)
    line = source_line("copy(smem_tiled_copy_B, tCsB[_, _, 0]")
    assert s.run_to(line).reason == "line"
    w, pc, _ = s.next_instruction()
    assert s.line_of(pc)[1] == line and s.line_of(s.last_of_warp[w].pc)[1] != line
    bp = s.break_kind("mma")
    hits = 0
    while s.cont().reason == "break":
        hits += 1
        assert s.text[s.next_instruction()[1]].startswith("mma.sync")
    assert hits == sum(i.op == Op.MMA for i in s.traced.stream) and s.hit_counts[bp.number] == hits
    s.delete()
    s.goto(0)
    s.break_kind("ld")                                   # ld.* only: not ldmatrix
    kinds = set()
    while s.cont().reason == "break":
        kinds.add(s.text[s.next_instruction()[1]].split()[0])
    assert kinds == {"ld.param.u64", "ld.global.u32", "ld.global.u64", "ld.global.v4.b32"}   # bases, then tiles


@pytest.mark.parametrize("warp,lane,reg", [(0, 5, 52), (2, 31, 4)])
def test_register_watch_stops_after_each_change(program, warp, lane, reg):
    s = Session.program(program, {}, coded_inputs())
    brute = Session.program(program, {}, coded_inputs())
    slot = brute.traced.slot(reg)
    changes, value = [], int(brute.run.machine.regs[warp, lane, slot])
    while not brute.finished:
        brute.stepi()
        new = int(brute.run.machine.regs[warp, lane, slot])
        if new != value:
            changes.append(brute.position)
            value = new
    s.watch_register(f"%r{reg}", lane, warp)
    got = []
    while s.cont().reason == "watch":
        got.append(s.position)
        assert s.last.warp == warp and f"%r{reg}" in s.last.written
    assert got == changes and changes


def test_smem_watch_stops_after_the_store(program):
    s = Session.program(program, {}, coded_inputs())
    address = s.traced.smem_base + 0x2000 + 2 * 9          # an element of sK's bytes
    s.watch_smem(address, 2)
    assert s.cont().reason == "watch"
    assert s.text[s.last.pc].startswith("st.shared.v4.b32")
    assert s.cont().reason == "end"                        # written once


def test_an_address_a_lane_would_fault_on_is_refused_before_anything_runs():
    from warpsim.cute import Copy_Atom, UniversalCopy, make_layout, make_smem_ptr, make_tensor, make_tiled_copy
    from warpsim.program.ops import copy

    def kernel(tid, *, x):
        tiled = make_tiled_copy(Copy_Atom(UniversalCopy(32), "f16"), make_layout(32), make_layout(2))
        thr = tiled.get_slice(tid)
        smem = make_tensor(make_smem_ptr(96, "f16"), make_layout(64))     # reaches past 128 bytes of smem
        copy(tiled, thr.partition_S(x), thr.partition_D(smem))

    with pytest.raises(SimulatorFault, match="st.shared.b32") as e:
        Session.program(Program(kernel, threads=32, inputs={"x": ((64,), "f16")}, smem_bytes=128))
    assert "lane 8" in str(e.value)


def test_bad_arguments_are_one_line_errors(program):
    s = Session.program(program)
    gemm = source_line("gemm(tiled_mma, tCrA")
    cases = [
        (lambda: s.step(0), "step: the count must be a positive int, got 0"),
        (lambda: s.stepi(-1), "stepi: the count must be a positive int, got -1"),
        (lambda: s.break_line(3), "break: no instruction of warpsim_program comes from line 3"),
        (lambda: s.break_line(gemm, "other.py"), f"comes from line {gemm} of other.py"),
        (lambda: s.break_kind("tex"), "break: no instruction of warpsim_program is 'tex'"),
        (lambda: s.watch_register("%r0", 0, 4), "warp must be an int in [0, 4), got 4"),
        (lambda: s.watch_register("%r999", 0), "no register '%r999'"),
        (lambda: s.watch_register("%r0", 32), "watch: lane must be in [0, 32)"),
        (lambda: s.watch_smem(s.run.machine.smem.size - 1, 2), "are outside shared memory"),
        (lambda: s.goto(-1), "goto: expected a position >= 0"),
        (lambda: s.delete(9), "delete: no breakpoint 9"),
        (lambda: Session.program(program, {"dtype": "f64"}), "param dtype='f64' is not one of the choices"),
    ]
    for call, message in cases:
        with pytest.raises((ValueError, TypeError)) as e:
            call()
        assert message in str(e.value) and "\n" not in str(e.value), str(e.value)
    with pytest.raises(ProgramError, match="no such program file"):
        Session.program(EXAMPLE.with_name("missing.py"))


def test_the_inputs_are_in_the_kernels_global_memory(program):
    s = Session.program(program, {}, coded_inputs())
    assert s.position == 0 and s.last is None and s.warp == 0
    t = s.traced
    q = next(b for b in t.trace.buffers if b.name == "q")
    start = t.gmem_base + q.base
    bits = s.run.machine.gmem[start:start + q.nbytes].view(np.uint16).reshape(64, 64)
    assert (bits == coded_inputs()["q"]).all() and (t.inputs["q"] == bits).all()
    assert re.fullmatch(r".*gemm_smem\.py", s.source)
