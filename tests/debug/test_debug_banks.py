"""The debugger's bank-conflict counts for the seed program, swizzled and not, recomputed here from the
instructions' addresses (never from the bank model), and the README's numbers.

Independent count: a phase's lanes each touch bytes ``[a, a + w)`` (ldmatrix: 8 row addresses of 16
bytes per 8x8 matrix; st/ld.shared.v4: 8 lanes of 16 bytes); bank = (byte // 4) % 32; the phase takes
as many wavefronts as the most distinct 4-byte words asked of one bank.
"""

import io
import re

import pytest

from debug_helpers import EXAMPLE, ROOT
from warpsim.debug.repl import Repl
from warpsim.debug.session import Session
from warpsim.debug.views import banks_view
from warpsim.program import load_program
from warpsim.program.instr import Op
from tests.docs.pages import page, section


def phase_degree(ranges):
    words = [set() for _ in range(32)]
    for start, width in ranges:
        for byte in range(start, start + width):
            words[(byte // 4) % 32].add(byte // 4)
    return max(len(w) for w in words)


def independent_counts(stream):
    """``{kind: (accesses, phases, extra wavefronts, worst degree)}`` for ``"ldmatrix"`` and ``"st.shared"``."""
    out = {}
    for instr in stream:
        if instr.op == Op.LDMATRIX:
            kind, groups, width = "ldmatrix", [range(8 * j, 8 * j + 8) for j in range(instr.num)], 16
        elif instr.op == Op.ST and instr.space == "shared":
            assert instr.bits == 128                          # the seed's fill: 16 bytes per lane
            kind, groups, width = "st.shared", [range(8 * j, 8 * j + 8) for j in range(4)], 16
        else:
            continue
        degrees = [phase_degree([(int(instr.addr[lane]), width) for lane in g]) for g in groups]
        acc, phases, extra, worst = out.get(kind, (0, 0, 0, 0))
        out[kind] = (acc + 1, phases + len(groups), extra + sum(d - 1 for d in degrees), max(worst, *degrees))
    return out


@pytest.fixture(scope="module")
def program():
    return load_program(EXAMPLE)


CASES = [("qk", "yes"), ("qk", "no"), ("pv", "yes"), ("pv", "no")]


@pytest.mark.parametrize("product,swizzle", CASES)
def test_banks_all_equals_the_count_from_addresses(program, product, swizzle):
    s = Session.program(program, {"product": product, "swizzle": swizzle})
    want = independent_counts(s.traced.stream)
    # the closed form: swizzled every phase is conflict-free; row-major 128-byte rows put the 8 rows of a
    # phase in the same 4 banks: 8-way, 7 extra wavefronts per phase. Stores are one row per phase.
    assert want["ldmatrix"] == (80, 320, 0 if swizzle == "yes" else 7 * 320, 1 if swizzle == "yes" else 8)
    assert want["st.shared"] == (32, 128, 0, 1)
    report = banks_view(s, "all").report
    got = {}
    for name, totals in report.by_instruction().items():
        kind = "ldmatrix" if name.startswith("ldmatrix") else "st.shared"
        acc, phases, extra, worst = got.get(kind, (0, 0, 0, 0))
        got[kind] = (acc + totals.accesses, phases + totals.phases, extra + totals.extra_wavefronts,
                     max(worst, totals.worst_degree))
    assert got == want
    assert report.totals.extra_wavefronts == want["ldmatrix"][2]


def test_banks_so_far_counts_only_the_executed_instructions(program):
    s = Session.program(program, {"swizzle": "no"})
    s.stepi(300)
    executed = s.traced.executed()
    assert 0 < executed.sum() < executed.size
    want = independent_counts([i for k, i in enumerate(s.traced.stream) if executed[k]])
    assert banks_view(s).report.totals.extra_wavefronts == want["ldmatrix"][2] > 0
    assert banks_view(s).report.totals.accesses == want["ldmatrix"][0] + want["st.shared"][0]
    lines = [ln for ln in banks_view(s, each=True).text().splitlines() if re.match(r"w\d ", ln)]
    assert len(lines) == want["ldmatrix"][0] + want["st.shared"][0]
    assert sum("28 extra (worst 8-way)" in ln for ln in lines) == want["ldmatrix"][0]     # 4 phases x 7 each


def readme_section():
    return section("guides/debugger.md", "Debugging: one debugger for every front end")


def test_the_readme_table_is_what_the_debugger_says(program):
    rows = re.findall(r"^\| `(--param [^`]*)`[^|]*\| (\d+) \((\d+)\) \| \*\*(\d+)\*\* \| (\d+)-way \| (\d+) \((\d+)\) \| (\d+) \|$",
                      readme_section(), re.M)
    assert len(rows) == 4
    for args, acc, phases, extra, worst, st_acc, st_phases, st_extra in rows:
        params = dict(a.split("=") for a in re.findall(r"--param (\S+)", args))
        out = io.StringIO()
        Repl(Session.program(program, params), out).execute("banks all")
        text = out.getvalue()
        ldm = sum(int(x) for x in re.findall(r"ldmatrix\S*: (\d+) accesses", text))
        assert ldm == int(acc), (args, text)
        assert f"{int(phases) + int(st_phases)} phases" in text and f"{extra} extra (worst {worst}-way)" in text, text
        assert f"st.shared.v4.b32: {st_acc} accesses, {st_phases} phases, {st_phases} wavefronts, {st_extra} extra" in text


def test_the_readme_reconciles_with_the_part_a_table(program):
    """Q + K + V^T over the qk and pv programs are the 576 phases and 4032 extra wavefronts of "Bank conflicts"."""
    part_a = page("guides/pictures.md").split("### Bank conflicts", 1)[1].split("\n## ", 1)[0]
    assert "**0** (576 wavefronts)" in part_a and "**4032** (4608 wavefronts)" in part_a
    phases, extra = 0, 0
    for product in ("qk", "pv"):
        stream = Session.program(program, {"product": product, "swizzle": "no"}).traced.stream
        by_operand = {}
        for i in stream:
            if i.op == Op.LDMATRIX:
                operand = "Q" if int(i.addr.min()) < 0x2000 else ("K" if product == "qk" else "Vt")
                by_operand.setdefault(operand, []).append(i)
        for operand, instrs in by_operand.items():
            if operand == "Q" and product == "pv":
                continue                                          # Q counted once, as in part A
            c = independent_counts(instrs)["ldmatrix"]
            phases += c[1]
            extra += c[2]
    assert (phases, extra) == (576, 4032)

