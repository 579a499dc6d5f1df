"""The views against CuTe: with inputs whose bits name their coordinates, what a view shows must be what
``warpsim.cute`` says thread by thread (partitions of identity tensors, retile_D copy views, shared
layouts), and what ``from`` traces back must end at the global element the bits name.
"""

import re

import numpy as np
import pytest

import warpsim.cute as cute
from debug_helpers import EXAMPLE, coded_inputs, decode, seed_cute, source_line
from warpsim.debug.session import Session
from warpsim.debug.views import (banks_view, frag_view, from_view, register_view, smem_banks, smem_view,
                                 source_text, where_text, who_view)
from warpsim.program import load_program
from warpsim.program.instr import Op


@pytest.fixture(scope="module")
def program():
    return load_program(EXAMPLE)


@pytest.fixture(scope="module")
def finished(program):
    s = Session.program(program, {}, coded_inputs())
    s.cont()
    return s


@pytest.fixture(scope="module")
def finished_pv(program):
    s = Session.program(program, {"product": "pv"}, coded_inputs("pv"))
    s.cont()
    return s


THREADS = [0, 5, 38, 127]


@pytest.mark.parametrize("thread", THREADS)
def test_frag_views_hold_the_elements_cute_assigns(finished, thread):
    cute_side = seed_cute(thread)
    warp, lane = divmod(thread, 32)
    mma = frag_view(finished, "tSrK", "mma", warp)
    assert mma.layout == str(cute_side["frag"].layout)
    for i, want in enumerate(cute_side["coords"]):
        got = decode(mma.bits[lane, i], "k")
        assert got == want, f"thread {thread} MMA view element {i} ({mma.coords[i]}): expected K{want}, got K{got}"
    copy = frag_view(finished, "tSrK", "copy", warp)
    view = cute_side["copy_view"]
    assert copy.layout == str(view.layout) and copy.copy_name == "smem_thr_copy_K"
    frag = cute_side["frag"]
    index_of_slot = {int(frag.address(i)): i for i in range(len(cute_side["coords"]))}
    for j in range(int(view.size())):
        want = cute_side["coords"][index_of_slot[int(view.address(j))]]
        got = decode(copy.bits[lane, j], "k")
        assert got == want, f"thread {thread} copy view element {j}: expected K{want}, got K{got}"


@pytest.mark.parametrize("thread", [5, 70])
def test_who_answers_as_cute_partitions(finished, thread):
    cute_side = seed_cute(thread)
    warp, lane = divmod(thread, 32)
    frag = cute_side["frag"]
    base = finished.traced.trace.tensors["tSrK"].bases[warp]
    for i in (0, 3, 17, 64, 127):
        n, k = cute_side["coords"][i]
        view = who_view(finished, "tSrK", (n, k))
        assert view.who.memory == "sK" and view.who.address == cute_side["smem_b"].address(n, k)
        mine = [e for e in view.entries if e.warp == warp]
        slot = int(frag.address(i))
        assert [(e.lane, e.reg, e.half, e.slot) for e in mine] == [(lane, base + slot // 2, slot % 2, slot)], \
            f"who tSrK {n} {k}: warp {warp} entries {mine}"
        assert {e.warp for e in view.entries} == {0, 1, 2, 3}          # every warp along M holds all of B
        line = next(t for t in view.text().splitlines() if t.startswith(f"  w{warp} lane {lane:2d}"))
        mma_coord = str(cute.idx2crd(i, frag.shape)).replace(" ", "")
        assert f"slot {slot} " in line and f"MMA {mma_coord} " in line and "<- w" in line and "ldmatrix" in line, line


def test_who_through_the_transposed_layout(finished_pv):
    cute_side = seed_cute(5, "pv")
    frag = cute_side["frag"]
    base = finished_pv.traced.trace.tensors["tOrVt"].bases[0]
    for i in (0, 9, 100):
        n, k = cute_side["coords"][i]                       # (d, key): coordinates of sVt
        view = who_view(finished_pv, "tOrVt", (n, k), memory="sVt")
        slot = int(frag.address(i))
        mine = [(e.lane, e.reg, e.half) for e in view.entries if e.warp == 0]
        assert mine == [(5, base + slot // 2, slot % 2)], (n, k, mine)
        assert view.who.address == cute_side["smem_b"].address(n, k)


@pytest.mark.parametrize("m,n", [(9, 2), (40, 63)])
def test_who_of_the_accumulator_follows_its_stores(finished, m, n):
    view = who_view(finished, "acc", (m, n))
    assert view.who.memory == "s" and view.who.space == "global"
    tiled_mma = seed_cute(0)["traits"].tiled_mma
    holders = []
    for t in range(128):
        thr = tiled_mma.get_slice(t)
        ident = thr.partition_C(cute.make_identity_tensor((64, 64)))
        acc = cute.partition_fragment_C(tiled_mma, (64, 64))
        for i in range(int(ident.size())):
            if tuple(int(c) for c in ident[i]) == (m, n):
                holders.append((t // 32, t % 32, int(acc.address(i))))
    got = [(e.warp, e.lane, e.slot) for e in view.entries]
    assert got == holders and all(e.store for e in view.entries)


def test_from_traces_a_register_back_to_the_global_element(program):
    s = Session.program(program, {}, coded_inputs())
    s.run_to(source_line("copy(smem_tiled_copy_B, tCsB[_, _, 0]"))
    s.step()
    cute_side = seed_cute(5)
    base = s.traced.trace.tensors["tSrK"].bases[0]
    view = from_view(s, 5, base + 1)                       # slots 2, 3
    for h, slot in ((0, 2), (1, 3)):
        steps = view.origin.halves[h]
        n, k = cute_side["coords"][[int(cute_side["frag"].address(i)) for i in range(128)].index(slot)]
        assert [s.traced.stream[st.instr].op for st in steps] == [Op.LDMATRIX, Op.ST, Op.LD]
        assert steps[0].coords == (("sK", (n, k)),) and steps[0].address == cute_side["smem_b"].address(n, k)
        assert steps[2].coords == (("k", (n, k)),) and steps[2].space == "global"
        bits = (int(s.run.machine.regs[0, 5, s.traced.slot(base + 1)]) >> (16 * h)) & 0xFFFF
        assert decode(bits, "k") == (n, k)
    text = view.text()
    assert "tSrK slots 2, 3" in text and "sK(" in text and "k(" in text
    never = from_view(s, 5, base + 20)                     # k-block 1: loaded in the loop
    assert "never written" in never.text()
    s.cont()
    acc = from_view(s, 5, s.traced.trace.tensors["acc"].bases[0])
    assert "mma.sync" in acc.text() and "of its 16x8 tile" in acc.text()


@pytest.mark.parametrize("swizzle", ["yes", "no"])
def test_smem_view_reads_the_logical_tile_through_the_layout(program, swizzle):
    s = Session.program(program, {"swizzle": swizzle}, coded_inputs())
    s.run_to(source_line("copy(smem_tiled_copy_A, tCsA[_, _, 0]"))          # after the barrier
    tile = smem_view(s, "sK", fmt="hex")
    want = coded_inputs()["k"]
    got = np.vectorize(lambda x: int(x, 16))(tile.values)
    assert (got == want).all()
    assert ("Sw<3,3,3>" in tile.title) == (swizzle == "yes")
    sub = smem_view(s, "sK", fmt="hex", rows=(8, 10), cols=(60, 64))
    lines = sub.text().splitlines()
    assert lines[1].split() == ["60", "61", "62", "63"] and lines[2].split()[0] == "8"
    assert lines[2].split()[1] == f"0x{want[8, 60]:04x}"


def test_bank_map_marks_the_last_access(program):
    s = Session.program(program, {}, coded_inputs())
    s.run_to(source_line("copy(smem_tiled_copy_B, tCsB[_, _, 0]"))
    s.step()
    sK = seed_cute(0)["smem_b"]
    tile = smem_banks(s, "sK")
    for r, c in [(0, 0), (5, 17), (63, 63)]:
        assert tile.values[r, c] == (sK.address(r, c) // 4) % 32
    last = s.traced.stream[s.traced.position_at(s.last.warp, s.last.pc)]
    assert last.op == Op.LDMATRIX and s.last.shared[0] == "ldmatrix"
    rows = {int(a) for a in last.addr.tolist()}               # the 32 row addresses of the ldmatrix.x4 ...
    read = {a + b for a in rows for b in range(0, 16, 2)}
    assert {sK.address(r, c) for r, c in tile.marked} == read   # ... are the marked elements: 32 rows x 8
    assert len(tile.marked) == 32 * 8


def test_regs_view_marks_what_the_last_instruction_wrote(program):
    s = Session.program(program, {}, coded_inputs())
    s.run_to(source_line("copy(smem_tiled_copy_B, tCsB[_, _, 0]"))
    s.step()
    last = s.last                                  # the last ldmatrix of the line, then the source line moved on
    instr = s.traced.stream[s.traced.position_at(last.warp, last.pc)] if s.traced.position_at(last.warp, last.pc) \
        is not None else None
    view = register_view(s, warp=last.warp)
    assert view.warp == last.warp
    ptx = re.findall(r"%[a-z_]+\d*", s.text[last.pc]) + re.findall(r"%[a-z_]+\d*", s.text[s.warp_next_pc(last.warp)])
    assert list(view.names) == list(dict.fromkeys(n for n in ptx if n in s.regs_by_name))   # last + next operands
    written = set(last.written)
    assert view.grid.highlight == {(lane, k) for lane in range(32) for k, n in enumerate(view.names) if n in written}
    if instr is not None:
        assert written == {f"%r{r}" for r in instr.dst}
    tensor = register_view(s, "tSrK", fmt="f16x2", lanes=[5], warp=0)
    regs = s.traced.trace.tensors["tSrK"].registers(0)
    assert list(tensor.names) == [f"%r{r}" for r in sorted(set(regs.tolist()))]
    assert (tensor.grid.regs == s.traced.words(0, sorted(set(regs.tolist())))).all()
    assert max(len(line) for line in tensor.text().splitlines()[:-1]) <= 120   # the legend may be longer
    headers = [line.split()[1:] for line in tensor.text().splitlines() if line.startswith("lane")]
    assert len(headers) > 1 and sum(headers, []) == list(tensor.names)          # wrapped, in order
    assert "tSrK (f16)" in tensor.legend and "%r52..%r115 tSrK" in tensor.legend
    same = register_view(s, ["r52-r55"], warp=0)
    assert same.names == ("%r52", "%r53", "%r54", "%r55") == register_view(s, ["%r52..%r55"], warp=0).names
    with pytest.raises(ValueError, match=r"%r999 is outside the program's %r0\.\.%r115"):
        register_view(s, ["r0-r999"])
    with pytest.raises(ValueError, match="no register '%q1'"):
        register_view(s, ["%q1"])


def test_where_list_and_banks_texts(program):
    s = Session.program(program)
    line = source_line("gemm(tiled_mma, tCrA")
    s.break_line(line)
    s.cont()
    where = where_text(s)
    assert where.startswith(f"=> #{s.position}, CTA (0, 0, 0), warp 0 lanes 0-31: gemm_smem.py:{line}, PTX line")
    assert "mma.sync.aligned.m16n8k16" in where and f"gemm_smem.py:{line}: gemm(" in where
    listing = source_text(s)
    assert any(row.startswith(f"{line:5d} B=>") for row in listing.splitlines())
    done = banks_view(s)
    executed = s.traced.executed()
    ldm = [i for k, i in enumerate(s.traced.stream) if executed[k] and i.op == Op.LDMATRIX]
    assert 0 < len(ldm) < 80 and f"ldmatrix.sync.aligned.m8n8.x4.shared.b16: {len(ldm)} accesses" in done.text()
    assert "80 accesses" in banks_view(s, "all").text()
    with pytest.raises(ValueError, match="no register tensor 'tSrX'"):
        frag_view(s, "tSrX")
    with pytest.raises(ValueError, match="outside sK's shape"):
        who_view(s, "tSrK", (64, 0))


def test_a_thread_mode_trace_gives_the_same_answers(program, finished):
    threaded = Session.program(program, {}, coded_inputs(), mode="thread")
    threaded.cont()
    for coord in [(1, 10), (63, 0), (17, 44)]:
        assert who_view(threaded, "tSrK", coord).text() == who_view(finished, "tSrK", coord).text()
    base = finished.traced.trace.tensors["tSrK"].bases[0]
    assert from_view(threaded, 5, base + 1).text() == from_view(finished, 5, base + 1).text()
    for kind in ("mma", "copy"):
        a, b = frag_view(threaded, "tSrK", kind, 2), frag_view(finished, "tSrK", kind, 2)
        assert a.layout == b.layout and a.coords == b.coords and (a.bits == b.bits).all()
