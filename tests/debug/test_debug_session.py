"""Session: stepping, breakpoints, watches and stepping backwards, against plain runs of the executor.

The truths here are outside the session's own bookkeeping: ``run_program`` (one executor call over
the whole stream) for final states, single executor calls over stream prefixes for intermediate
states, brute-force per-step comparisons for watches, and the program's source text for where
``next`` and line breakpoints must stop.
"""

import numpy as np
import pytest

from debug_helpers import EXAMPLE, coded_inputs, source_line
from warpsim.debug.session import Session
from warpsim.errors import ProgramError
from warpsim.machine import Machine
from warpsim.program import load_program
from warpsim.program.execute import execute
from warpsim.program.instr import Op
from warpsim.program.program import Program
from warpsim.program.run import prepare, run_program


@pytest.fixture(scope="module")
def program():
    return load_program(EXAMPLE)


def state(machine):
    return machine.regs.copy(), machine.smem.copy(), machine.gmem.copy()


def assert_same_state(where, want, got):
    for name, a, b in zip(("regs", "smem", "gmem"), want, got):
        bad = np.argwhere(a != b)
        if bad.size:
            index = tuple(int(x) for x in bad[0])
            pytest.fail(f"{where}: {name}{list(index)} expected {int(a[index]):#x}, got {int(b[index]):#x} "
                        f"({len(bad)} differ)")


def prefix_state(program, params, position):
    """The machine after ``position`` instructions, by one executor call on a fresh machine."""
    trace, machine, _inputs, _s = prepare(program, params, coded_inputs(params.get("product", "qk")))
    execute(trace.stream, trace.encoded, machine, start=0, stop=position)
    return state(machine)


@pytest.mark.parametrize("params", [{"product": "qk"}, {"product": "pv", "dtype": "bf16", "swizzle": "no"}])
def test_cont_ends_where_run_program_ends(program, params):
    s = Session(program, params, coded_inputs(params["product"]))
    stop = s.cont()
    assert (stop.reason, stop.position, stop.executed) == ("end", len(s), len(s))
    r = run_program(program, params, coded_inputs(params["product"]))
    assert_same_state("cont vs run_program", state(r.machine), state(s.machine))
    assert s.cont() == type(stop)("end", len(s), 0)


def test_single_steps_pass_through_every_prefix_state(program):
    s = Session(program, {}, coded_inputs())
    for k in range(1, len(s) + 1):
        stop = s.step()
        assert stop.position == k and stop.executed == 1
        assert s.last is s.stream[k - 1]
        assert s.last_written == tuple((s.last.warp, r) for r in s.last.dst)
        if k % 53 == 0 or k in (1, 100, 104, 105, len(s)):
            assert_same_state(f"after step {k}", prefix_state(program, {}, k), state(s.machine))
    assert s.step().reason == "end"


def test_back_and_goto_reproduce_every_state(program):
    s = Session(program, {}, coded_inputs(), interval=16, max_checkpoints=6)
    seen = {0: state(s.machine)}
    while not s.finished:
        s.step(7)
        seen[s.position] = state(s.machine)
    assert len(s.checkpoints) <= 7, s.checkpoints            # bounded: max_checkpoints (+ the start)
    assert s.interval > 16                                   # it thinned its checkpoints on the way
    rng = np.random.default_rng(0)
    for target in rng.choice(sorted(seen), 12):
        target = int(target)
        if target < s.position:
            stop = s.back(s.position - target)
            assert stop.reason == "back"
        else:
            s.goto(target)
        assert s.position == target
        assert_same_state(f"back/goto to {target}", seen[target], state(s.machine))
    assert s.back(10_000).position == 0


def test_line_breakpoint_stops_at_each_gemm_call(program):
    s = Session(program)
    line = source_line("gemm(tiled_mma, tCrA")
    bp = s.break_line(line)
    mma = [k for k, i in enumerate(s.stream) if i.op == Op.MMA]
    # each gemm call issues 8 mma per warp for 4 warps, interleaved: its start is every 32nd mma
    expected = mma[::32]
    stops = []
    while True:
        stop = s.cont()
        if stop.reason != "break":
            break
        assert stop.hits[0][0] is bp and s.current.line.line == line
        stops.append(stop.position)
    assert stops == expected and len(stops) == 4             # k_blocks = 64 / 16
    assert s.hit_counts[bp.number] == 4


def test_next_visits_the_programs_operations_in_order(program):
    s = Session(program)
    texts = ["partition_S(q), gmem_thr_copy.partition_D(sQ))", "partition_S(k if product",
             "syncthreads()", "clear(acc)", "copy(smem_tiled_copy_A, tCsA[_, _, 0]",
             "copy(smem_tiled_copy_B, tCsB[_, _, 0]"]
    loop = ["copy(smem_tiled_copy_A, tCsA[_, _, i + 1]", "copy(smem_tiled_copy_B, tCsB[_, _, i + 1]",
            "gemm(tiled_mma, tCrA"]
    texts += loop * 3 + ["gemm(tiled_mma, tCrA", "copy(traits.store_tiled_copy"]
    lines = [source_line(t) for t in texts]
    visited = [s.current.line.line]
    while True:
        stop = s.next()
        if stop.reason == "end":
            break
        assert stop.reason == "line"
        visited.append(s.current.line.line)
    assert visited == lines


def test_run_to_and_kind_breakpoints(program):
    s = Session(program)
    line = source_line("copy(smem_tiled_copy_B, tCsB[_, _, 0]")
    stop = s.run_to(line)
    assert stop.reason == "line" and s.current.line.line == line and s.current.op == Op.LDMATRIX
    assert s.stream[s.position - 1].line.line != line
    bp = s.break_kind("mma")
    positions = []
    while s.cont().reason == "break":
        positions.append(s.position)
    assert positions == [k for k, i in enumerate(s.stream) if i.op == Op.MMA and k > stop.position]
    s.delete()
    s.goto(0)
    s.break_kind("ld")                                   # ld.* only: not ldmatrix
    kinds = set()
    while s.cont().reason == "break":
        kinds.add(s.current.ptx)
    assert kinds == {"ld.global.v4.b32"}


@pytest.mark.parametrize("warp,lane,reg", [(0, 5, 52), (2, 31, 4), (3, 0, 0)])
def test_register_watch_stops_after_each_change(program, warp, lane, reg):
    s = Session(program, {}, coded_inputs())
    brute = Session(program, {}, coded_inputs())
    changes = []
    value = int(brute.machine.regs[warp, lane, reg])
    while not brute.finished:
        brute.step()
        new = int(brute.machine.regs[warp, lane, reg])
        if new != value:
            changes.append(brute.position)
            value = new
    s.watch_register(warp, lane, reg)
    got = []
    while True:
        stop = s.cont()
        if stop.reason != "watch":
            break
        got.append(stop.position)
        assert f"by #{stop.position - 1} w{warp}" in stop.hits[0][1]
    assert got == changes and changes


def test_smem_watch_and_a_mov_of_zero_over_zero_is_no_change(program):
    s = Session(program, {}, coded_inputs())
    address = 0x2000 + 2 * 9                                   # some element of sK's bytes
    s.watch_smem(address, 2)
    stop = s.cont()
    assert stop.reason == "watch"
    last = s.last
    assert last.op == Op.ST and last.space == "shared"
    assert any(a <= address < a + 16 for a in last.addr.tolist())
    assert s.cont().reason == "end"                            # written once
    s.delete()
    s.goto(0)
    s.watch_register(0, 0, 4)                                  # acc: cleared to 0 (no change), then mma
    s.cont()
    assert s.last.op == Op.MMA


def test_a_fault_stops_before_the_faulting_instruction():
    from warpsim.cute import Copy_Atom, UniversalCopy, make_layout, make_smem_ptr, make_tensor, make_tiled_copy
    from warpsim.program.ops import copy

    def kernel(tid, *, x):
        tiled = make_tiled_copy(Copy_Atom(UniversalCopy(32), "f16"), make_layout(32), make_layout(2))
        thr = tiled.get_slice(tid)
        smem = make_tensor(make_smem_ptr(96, "f16"), make_layout(64))     # reaches past 128 bytes of smem
        copy(tiled, thr.partition_S(x), thr.partition_D(smem))

    s = Session(Program(kernel, threads=32, inputs={"x": ((64,), "f16")}, smem_bytes=128))
    stop = s.cont()
    assert stop.reason == "fault" and stop.position == 1 and s.position == 1
    assert "st.shared.b32" in stop.message and "lane 8" in stop.message
    before = state(s.machine)
    assert s.step().reason == "fault"
    assert_same_state("a faulting step changes nothing", before, state(s.machine))


def test_bad_arguments_are_one_line_errors(program):
    s = Session(program)
    gemm = source_line("gemm(tiled_mma, tCrA")
    cases = [
        (lambda: s.step(0), "step: the count must be a positive int, got 0"),
        (lambda: s.break_line(3), "break: no instruction comes from line 3 (lines with instructions: "),
        (lambda: s.break_line(gemm, "other.py"), f"no instruction comes from line {gemm} of other.py"),
        (lambda: s.break_kind("add"), "break: unknown instruction kind 'add'"),
        (lambda: s.watch_register(4, 0, 0), "watch: warp 4 is outside [0, 4)"),
        (lambda: s.watch_register(0, 32, 0), "watch: lane 32 is outside [0, 32)"),
        (lambda: s.watch_smem(0x4000 - 1, 2), "watch: shared bytes [0x3fff, 0x4001) are outside shared memory"),
        (lambda: s.goto(len(s) + 1), "goto: position must be an int in [0, 372]"),
        (lambda: s.delete(9), "delete: no breakpoint 9"),
        (lambda: Session(program, {"dtype": "f64"}), "param dtype='f64' is not one of the choices"),
        (lambda: Session(program, interval=0), "Session: interval must be a positive int"),
    ]
    for call, message in cases:
        with pytest.raises((ValueError, TypeError)) as e:
            call()
        assert message in str(e.value) and "\n" not in str(e.value), str(e.value)
    with pytest.raises(ProgramError, match="no such program file"):
        Session(EXAMPLE.with_name("missing.py"))


def test_the_machine_is_the_machine_prepare_builds(program):
    s = Session(program, {}, coded_inputs())
    assert isinstance(s.machine, Machine) and s.position == 0 and s.last is None and s.last_written == ()
    assert s.where().instr is s.stream[0] and s.focus_warp == 0
    q = s.machine.read_global("q", np.uint16).reshape(64, 64)
    assert (q == coded_inputs()["q"]).all()
