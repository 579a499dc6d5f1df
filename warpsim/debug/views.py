"""What the debugger shows: each view is a function of a :class:`~warpsim.debug.session.Session` returning data
with a ``text()`` rendering (and an HTML table for Jupyter, ``_repr_html_``).

- :func:`register_view`: one warp's register file, 32 lanes x registers, as ``hex``, ``f16x2``,
  ``bf16x2`` or ``f32`` (``warpsim.draw.register_grid``), the registers the last instruction wrote
  marked ``*``;
- :func:`frag_view`: a register tensor through its MMA view or its copy view: per lane, the value
  at each coordinate;
- :func:`who_view` / :func:`from_view`: which lane and register (half) hold an element of a memory
  tensor, and where a register's halves came from (:mod:`warpsim.debug.dataflow`);
- :func:`smem_view` / :func:`smem_banks`: a shared tensor in its logical shape, read from shared
  memory through its layout (swizzle included), and its bank map with the last instruction's access
  marked;
- :func:`banks_view`: the bank-conflict model's report of the shared accesses executed so far, of
  the whole program, or of one instruction (:mod:`warpsim.debug.banks`);
- :func:`where_text`, :func:`source_text`: the position and the program's source around it.

Values are decoded for display only (the registers stay ``uint32`` bit patterns).

>>> from warpsim.program.program import Program
>>> from warpsim.program.ops import clear
>>> from warpsim.cute import make_tensor
>>> def kernel(tid):
...     acc = make_tensor("f32", (2,))
...     clear(acc)
>>> from warpsim.debug.session import Session
>>> s = Session(Program(kernel, threads=32))
>>> _ = s.step()
>>> view = register_view(s, fmt="f32", lanes=[5])
>>> view.text().splitlines()[1:]
['lane  r0  r1', '   5 *0  *0', 'registers: r0-r1 acc (f32)']
"""

from __future__ import annotations

import linecache
import os
import re
from dataclasses import dataclass

import numpy as np

from warpsim.cute.numeric import dtype_bits
from warpsim.debug.banks import instr_bank_report, stream_bank_report
from warpsim.draw.bankmap import bank_map
from warpsim.draw.bits import REGISTER_FORMATS, format_bits
from warpsim.draw.colors import bank_color
from warpsim.draw.html import html_table, smem_tile
from warpsim.draw.registers import TEXT_WIDTH, register_grid
from warpsim.isa.banks import bank_of
from warpsim.isa.fragments import MMA_REGS
from warpsim.program.instr import Op

__all__ = ["RegisterView", "register_view", "parse_registers", "FragView", "frag_view", "WhoView", "who_view",
           "FromView", "from_view", "Tile", "smem_view", "smem_banks", "BanksView", "banks_view", "where_text",
           "source_text", "element_text", "register_ranges"]


def _warp(session, warp):
    warp = session.focus_warp if warp is None else warp
    if isinstance(warp, bool) or not isinstance(warp, (int, np.integer)) or not 0 <= warp < session.machine.warps:
        raise ValueError(f"warp must be an int in [0, {session.machine.warps}), got {warp!r}")
    return int(warp)


def register_ranges(regs):
    """``'r4-r7, r9'`` for registers ``[4, 5, 6, 7, 9]``.

    >>> register_ranges([4, 5, 6, 7, 9])
    'r4-r7, r9'
    """
    out, regs = [], sorted(set(int(r) for r in regs))
    start = prev = None
    for r in regs + [None]:
        if start is not None and (r is None or r != prev + 1):
            out.append(f"r{start}" if start == prev else f"r{start}-r{prev}")
            start = None
        if r is not None and start is None:
            start = r
        prev = r
    return ", ".join(out)


def parse_registers(session, spec, warp=0):
    """Registers named by ``spec``: ``"r36-r51"``, ``"36-51"``, ``"r4,r8"``, a register tensor's name, ``"all"``,
    or an iterable of ints. ``ValueError`` for anything else or a register outside the machine."""
    top = session.machine.regs_per_thread
    if spec == "all":
        return list(range(top))
    if not isinstance(spec, str):
        regs = [int(r) for r in spec]
    elif spec in session.trace.tensors:
        return sorted(set(session.tensors.register_tensor(spec).registers(warp).tolist()))
    else:
        regs = []
        for part in spec.split(","):
            m = re.fullmatch(r"r?(\d+)(?:-r?(\d+))?", part.strip())
            if not m:
                raise ValueError(f"registers: expected r4, r4-r7, a list of them, all, or a tensor name "
                                 f"({', '.join(session.trace.tensors)}), got {spec!r}")
            a, b = int(m.group(1)), int(m.group(2) or m.group(1))
            if a > b:
                raise ValueError(f"registers: {part.strip()!r} is an empty range (write the lower register first)")
            if b >= top:                                    # before the range is expanded
                raise ValueError(f"registers: r{b} is outside r0-r{top - 1}")
            regs += list(range(a, b + 1))
    bad = [r for r in regs if not 0 <= r < top]
    if bad:
        raise ValueError(f"registers: r{bad[0]} is outside r0-r{top - 1}")
    if not regs:
        raise ValueError(f"registers: {spec!r} names no register")
    return regs


def _legend(session, warp, regs):
    shown, parts, named = set(regs), [], set()
    for name in session.trace.tensors:
        rt = session.tensors.register_tensor(name)
        own = [r for r in rt.registers(warp).tolist() if r in shown]
        if own:
            parts.append(f"{register_ranges(own)} {name} ({rt.dtype})")
            named.update(own)
    rest = sorted(shown - named)
    if rest:
        parts.append(f"{register_ranges(rest)} unnamed (scratch)")
    return "registers: " + "; ".join(parts)


@dataclass(frozen=True, eq=False)
class RegisterView:
    """One warp's registers: ``grid`` (:class:`~warpsim.draw.registers.RegisterGrid`) of ``registers``,
    the ``lanes`` shown in text (None: all), a ``legend`` naming the tensors the registers belong to."""

    warp: int
    registers: tuple
    grid: object
    lanes: tuple | None
    legend: str

    def text(self, width=TEXT_WIDTH):
        """The table (columns wrapped into blocks ``width`` characters wide) and the legend."""
        return self.grid.text(lanes=self.lanes, width=width) + self.legend + "\n"

    def svg(self):
        return self.grid.svg()

    def save(self, path):
        """Write the register picture (``.svg``, or ``.png`` with ``warpsim[draw]``)."""
        self.grid.save(path)

    def _repr_html_(self):
        return self.grid._repr_html_()


def register_view(session, warp=None, fmt="hex", registers=None, lanes=None):
    """A :class:`RegisterView` of ``warp`` (default: the session's focus warp) in ``fmt``; ``registers``: as
    :func:`parse_registers` takes (default: those the warp's instructions have written so far, or the
    first eight before any was); ``lanes``: the lanes the text shows (default all)."""
    warp = _warp(session, warp)
    if fmt not in REGISTER_FORMATS:
        raise ValueError(f"regs: unknown format {fmt!r}; expected one of {', '.join(REGISTER_FORMATS)}")
    if registers is None:
        regs = session.written_registers(warp) or list(range(min(8, session.machine.regs_per_thread)))
    else:
        regs = parse_registers(session, registers, warp)
    if lanes is not None:
        lanes = tuple(int(x) for x in lanes)
        if any(not 0 <= x < 32 for x in lanes):
            raise ValueError(f"regs: lanes must be in [0, 32), got {list(lanes)}")
    column = {r: k for k, r in enumerate(regs)}
    hot = [(lane, column[r]) for w, r in session.last_written if w == warp and r in column for lane in range(32)]
    last = session.last
    title = f"warp {warp}, {fmt}, after #{session.position - 1} {last.ptx}" if last else f"warp {warp}, {fmt}, at the start"
    grid = register_grid(session.machine.regs[warp][:, regs], fmt, highlight=hot, names=[f"r{r}" for r in regs],
                         title=title)
    return RegisterView(warp, tuple(regs), grid, lanes, _legend(session, warp, regs))


def element_text(bits, dtype, fmt="value"):
    """One element's bits as text: decoded by ``dtype`` (``f16``, ``bf16``, ``f32``) or hex (``fmt="hex"``,
    and always for ``u16``/``u32``).

    >>> element_text(0x3C00, "f16"), element_text(0x3F80, "bf16"), element_text(0x3C00, "f16", "hex")
    ('1', '1', '0x3c00')
    """
    bits = int(bits)
    if fmt == "hex" or dtype in ("u16", "u32"):
        return f"0x{bits:0{dtype_bits(dtype) // 4}x}"
    if dtype == "f32":
        return format_bits(bits, "f32")
    return format_bits(bits & 0xFFFF, f"{dtype}x2").split(" | ")[0]


@dataclass(frozen=True, eq=False)
class FragView:
    """A register tensor through one view: ``coords[i]`` (text) of element ``i``, its ``slots``,
    ``registers`` and ``halves`` (-1 for 32-bit elements), and ``bits[lane, i]`` its value in every lane."""

    name: str
    kind: str
    layout: str
    dtype: str
    warp: int
    copy_name: str
    coords: tuple
    slots: np.ndarray
    registers: np.ndarray
    halves: np.ndarray
    bits: np.ndarray

    def register_text(self, i):
        h = int(self.halves[i])
        return f"r{int(self.registers[i])}" + ("" if h < 0 else (".lo", ".hi")[h])

    def text(self, lanes=None, fmt="value", per_line=4):
        """Per lane (``lanes``, default all), ``coordinate register value`` for every element."""
        lanes = range(32) if lanes is None else lanes
        cw = max(len(c) for c in self.coords)
        rw = max(len(self.register_text(i)) for i in range(len(self.coords)))
        through = f" through {self.copy_name}" if self.kind == "copy" else ""
        lines = [f"{self.name} ({self.dtype}), {self.kind.upper() if self.kind == 'mma' else 'copy'} view{through} "
                 f"{self.layout}, warp {self.warp}"]
        for lane in lanes:
            lines.append(f"lane {lane} (thread {32 * self.warp + lane}):")
            cells = [f"{c:<{cw}} {self.register_text(i):<{rw}} {element_text(self.bits[lane, i], self.dtype, fmt)}"
                     for i, c in enumerate(self.coords)]
            vw = max(len(c) for c in cells)
            for k in range(0, len(cells), per_line):
                lines.append("  " + "  ".join(f"{c:<{vw}}" for c in cells[k:k + per_line]).rstrip())
        return "\n".join(lines) + "\n"

    def _repr_html_(self):
        cells = [[element_text(self.bits[lane, i], self.dtype) for i in range(len(self.coords))] for lane in range(32)]
        return html_table(cells, row_labels=list(range(32)), col_labels=list(self.coords),
                          title=f"{self.name} {self.kind} view {self.layout}, warp {self.warp}", corner="lane")


def frag_view(session, name, kind="mma", warp=None):
    """A :class:`FragView` of register tensor ``name`` through view ``kind`` (``"mma"`` or ``"copy"``)."""
    warp = _warp(session, warp)
    rt = session.tensors.register_tensor(name)
    view = rt.view(kind)
    slots = view.address_table()
    regs = rt.registers(warp)[slots]
    halves = rt.halves()[slots]
    words = session.machine.regs[warp][:, regs]                              # [32, n]
    bits = np.where(halves >= 0, (words >> (16 * np.maximum(halves, 0)).astype(np.uint32)) & 0xFFFF, words)
    coords = tuple(rt.coord(kind, i) for i in range(slots.size))
    return FragView(name, kind, str(view.layout), rt.dtype, warp, rt.copy_name if kind == "copy" else "", coords,
                    slots, regs, halves, bits.astype(np.uint32))


def _instr_text(session, k, with_line=True):
    i = session.stream[k]
    line = f"  {os.path.basename(i.line.file)}:{i.line.line}" if with_line and i.line else ""
    return f"#{k} w{i.warp} {i.ptx}{line}"


def _half_name(reg, half):
    return f"r{reg}" + ("" if half < 0 else (".lo", ".hi")[half])


@dataclass(frozen=True, eq=False)
class WhoView:
    """:class:`~warpsim.debug.dataflow.Who` with its rendering."""

    who: object
    lines: tuple

    @property
    def entries(self):
        return self.who.entries

    def text(self):
        return "\n".join(self.lines) + "\n"


def who_view(session, name, coord, memory=None):
    """Which lanes and registers of register tensor ``name`` hold element ``coord`` of a memory tensor
    (``memory``: its name; default the one ``name`` is loaded from or stored to)."""
    who = session.dataflow.who(name, tuple(coord), memory, position=session.position)
    rt = session.tensors.register_tensor(name)
    c = "(" + ", ".join(map(str, who.coord)) + ")"
    bank = f", bank {bank_of(who.address)}" if who.space == "shared" else ""
    lines = [f"{name}: element {c} of {who.memory} is {who.space} byte {who.address:#x}{bank}"]
    if not who.entries:
        lines.append(f"  no register of {name} holds it")
    for e in who.entries:
        mma = ",".join(rt.coord("mma", i) for i in rt.index_of_slot("mma", e.slot))
        copy = ""
        if rt.copy_tensor is not None:
            copy = "  copy " + ",".join(rt.coord("copy", i) for i in rt.index_of_slot("copy", e.slot))
        arrow = "->" if e.store else "<-"
        state = "done" if e.done else "pending"
        lines.append(f"  w{e.warp} lane {e.lane:2d} (thread {32 * e.warp + e.lane:3d}) {_half_name(e.reg, e.half):<7} "
                     f"slot {e.slot:<3d} MMA {mma}{copy}  {arrow} {_instr_text(session, e.instr, False)} ({state})")
    if who.others:
        lines.append(f"  (coordinates of {who.memory}; `in NAME` for {', '.join(who.others)})")
    return WhoView(who, tuple(lines))


@dataclass(frozen=True, eq=False)
class FromView:
    """:class:`~warpsim.debug.dataflow.Origin` with its rendering."""

    origin: object
    lines: tuple

    def text(self):
        return "\n".join(self.lines) + "\n"


def _coords_text(coords):
    return " = ".join(f"{n}({', '.join(map(str, c))})" for n, c in coords) or "no tensor"


def _step_text(session, step):
    instr = session.stream[step.instr]
    head = _instr_text(session, step.instr)
    if instr.op == Op.MMA:
        pos = session.dataflow.mma_position(instr, step.lane, step.reg)
        na, nb, _nc = MMA_REGS[(instr.shape, instr.cd)]
        a, b = instr.src[:na], instr.src[na:na + nb]
        return [f"{head}", f"      D({pos[0]}, {pos[1]}) of its 16x8 tile = A x B + C; A {register_ranges(a)}, "
                           f"B {register_ranges(b)}, C {register_ranges(instr.src[na + nb:])}"]
    if instr.op == Op.MOV:
        return [f"{head}", f"      set to {instr.imm:#x}"]
    if instr.op == Op.CVT:
        return [f"{head}", f"      from r{instr.src[0]} (upper half) and r{instr.src[1]} (lower half)"]
    if instr.op == Op.ALU:
        return [f"{head}", f"      {instr.form} of {', '.join(f'r{r}' for r in instr.src)} (element-wise arithmetic)"]
    if instr.op == Op.SHFL:
        return [f"{head}", f"      r{instr.src[0]} of lane {step.lane ^ instr.imm} (shfl.sync.bfly by {instr.imm})"]
    if instr.op == Op.MOVL:
        return [f"{head}", f"      set to {int(instr.addr[step.lane]) & 0xFFFFFFFF:#x} (this lane's value, known when "
                           f"the program was traced)"]
    who = f"lane {step.lane} {_half_name(step.reg, step.half)}"
    verb = "from" if instr.op in (Op.LD, Op.LDMATRIX) else "into"
    return [f"{head}  {who}", f"      {verb} {step.space} {step.address:#x} = {_coords_text(step.coords)}"]


def from_view(session, lane, reg, warp=None):
    """Where each half of register ``reg`` of ``lane`` (in ``warp``, default the focus warp) came from, as of
    the session's position."""
    warp = _warp(session, warp)
    session._check_register("from", warp, lane, reg)
    origin = session.dataflow.origin(warp, lane, reg, session.position)
    owners = session.tensors.owners(warp, reg)
    dtype = session.tensors.register_tensor(owners[0][0]).dtype if owners else "u32"
    held = "; ".join(f"{n} slot{'s' if len(s) > 1 else ''} {', '.join(map(str, s))}" for n, s in owners) or "no tensor"
    value = int(session.machine.regs[warp, lane, reg])
    lines = [f"w{warp} lane {lane} r{reg} = 0x{value:08x} ({held}), after #{session.position - 1}"]
    for h, steps in origin.halves.items():
        part = value if h < 0 else (value >> (16 * h)) & 0xFFFF
        label = "   " if h < 0 else ("lo", "hi")[h] + " "
        shown = element_text(part, dtype) if h >= 0 or dtype == "f32" else f"0x{part:08x}"
        if not steps:
            lines.append(f"  {label}{shown}  never written (0 since the start)")
            continue
        for k, step in enumerate(steps):
            text = _step_text(session, step)
            lines.append(f"  {label if k == 0 else '   '}{shown if k == 0 else ' ' * len(shown)}  <- {text[0]}")
            lines += [" " * (len(label) + len(shown)) + t for t in text[1:]]
    return FromView(origin, tuple(lines))


@dataclass(frozen=True, eq=False)
class Tile:
    """Rows ``rows`` and columns ``cols`` (``(start, stop)``) of a 2-D grid of texts with their real indices;
    ``marked``: ``(row, col)`` cells prefixed ``*`` in text; ``fills``: per-cell colours for HTML."""

    title: str
    values: np.ndarray
    rows: tuple
    cols: tuple
    marked: frozenset = frozenset()
    fills: object = None
    picture: object = None

    def text(self):
        (r0, r1), (c0, c1) = self.rows, self.cols
        cells = [[("*" if (r, c) in self.marked else "") + str(self.values[r, c]) for c in range(c0, c1)]
                 for r in range(r0, r1)]
        width = max([len(str(c1 - 1))] + [len(x) for row in cells for x in row])
        lines = [self.title, " " * 4 + "".join(f" {c:>{width}}" for c in range(c0, c1))]
        lines += [f"{r:4d}" + "".join(f" {x:>{width}}" for x in row) for r, row in zip(range(r0, r1), cells)]
        return "\n".join(lines) + "\n"

    def _repr_html_(self):
        (r0, r1), (c0, c1) = self.rows, self.cols
        fills = None if self.fills is None else [row[c0:c1] for row in self.fills[r0:r1]]
        bold = [[(r, c) in self.marked for c in range(c0, c1)] for r in range(r0, r1)]
        return html_table(self.values[r0:r1, c0:c1], row_labels=range(r0, r1), col_labels=range(c0, c1),
                          fills=fills, bold=bold, title=self.title)

    def save(self, path):
        """Write the bank map picture of these rows (``.svg``, or ``.png`` with ``warpsim[draw]``)."""
        if self.picture is None:
            raise ValueError("save: only bank maps are pictures; use smem NAME banks")
        self.picture.save(path, rows=self.rows)


def _ranges(shape, rows, cols):
    out = []
    for what, rng, n in (("rows", rows, shape[0]), ("cols", cols, shape[1])):
        start, stop = (0, n) if rng is None else (int(rng[0]), int(rng[1]))
        if not 0 <= start < stop <= n:
            raise ValueError(f"{what} must be START:STOP within 0:{n}, got {start}:{stop}")
        out.append((start, stop))
    return out


def _shared_tensor(session, name):
    t = session.tensors.memory_tensor(name)
    if t.space != "smem":
        raise ValueError(f"{name} is in global memory; smem shows shared tensors "
                         f"({', '.join(session.tensors.memory_tensors('smem')) or 'none'})")
    return t


def smem_view(session, name, fmt=None, rows=None, cols=None):
    """The values shared tensor ``name`` holds now, in its logical ``(rows, cols)`` shape (first mode down),
    read through its layout, swizzle included; ``fmt``: ``f16``, ``bf16``, ``f32`` or ``hex``."""
    t = _shared_tensor(session, name)
    tile = smem_tile(t, session.machine.smem, fmt)
    rows, cols = _ranges(tile.values.shape, rows, cols)
    return Tile(f"{name}: {t}", tile.values, rows, cols)


def smem_banks(session, name, rows=None, cols=None):
    """The bank of every element of shared tensor ``name`` (``(address // 4) % 32``, after the swizzle), the
    lanes of the last instruction's shared access marked (``*``)."""
    t = _shared_tensor(session, name)
    last = session.last
    report = instr_bank_report(last) if last is not None else None
    m = bank_map(t, report, title=f"banks of {name}: {t}" + (f"; marked: #{session.position - 1} {last.ptx}"
                                                            if report is not None else ""))
    rows, cols = _ranges(m.shape, rows, cols)
    fills = [[bank_color(b) for b in row] for row in m.bank.tolist()]
    return Tile(m.title, m.bank.astype(object), rows, cols, frozenset(m.marks), fills, m)


@dataclass(frozen=True, eq=False)
class BanksView:
    """A bank-conflict report (:class:`~warpsim.debug.banks.StreamBankReport` or
    :class:`~warpsim.debug.banks.BankReport`) and what it covers."""

    title: str
    report: object
    detail: bool = False
    each: bool = False

    def text(self):
        if not hasattr(self.report, "entries"):
            return f"{self.title}\n{self.report.text()}"
        lines = [self.title, self.report.text(detail=self.detail).rstrip("\n")]
        if self.each:
            for i, instr, r in self.report.entries:
                verdict = "conflict-free" if r.conflict_free else f"{r.extra_wavefronts} extra (worst {r.degree}-way)"
                lines.append(f"#{i} w{instr.warp} {instr.ptx}: {len(r.phases)} phases, {r.wavefronts} wavefronts, "
                             f"{verdict}")
        return "\n".join(lines) + "\n"


def banks_view(session, scope="done", detail=False, each=False):
    """The bank model's report: ``scope`` ``"done"`` (the instructions executed so far), ``"all"`` (the
    whole program) or an instruction index; ``detail``: the phases of every access with a conflict;
    ``each``: one line per access."""
    n = len(session.stream)
    if scope == "done":
        done = f"#0-#{session.position - 1}" if session.position else "none yet"
        return BanksView(f"shared accesses executed so far ({done}):",
                         stream_bank_report(session.stream[:session.position]), detail, each)
    if scope == "all":
        return BanksView(f"shared accesses of the whole program ({n} instructions):",
                         stream_bank_report(session.stream), detail, each)
    if isinstance(scope, bool) or not isinstance(scope, (int, np.integer)) or not 0 <= scope < n:
        raise ValueError(f"banks: expected 'done', 'all' or an instruction index in [0, {n}), got {scope!r}")
    report = instr_bank_report(session.stream[scope])
    if report is None:
        raise ValueError(f"banks: #{scope} {session.stream[scope].ptx} does not access shared memory")
    return BanksView(_instr_text(session, int(scope)) + ":", report, True)


def where_text(session):
    """The position: the next instruction (index, warp, PTX with registers, source line) and the last one."""
    w = session.where()
    lines = []
    if w.instr is None:
        lines.append(f"end of the program: {w.total} of {w.total} instructions executed")
    else:
        regs = ", ".join(f"r{r}" for r in w.instr.dst + w.instr.src)
        lines.append(f"=> #{w.position} of {w.total}, warp {w.instr.warp}: {w.instr.ptx} {regs}".rstrip())
        if w.instr.line:
            lines.append(f"   {w.instr.line}")
    if w.last is not None:
        lines.append(f"   last: {_instr_text(session, w.position - 1)}")
    return "\n".join(lines) + "\n"


def source_text(session, line=None, context=5):
    """The program's source around ``line`` (default: the next instruction's), ``=>`` at the next
    instruction's line and ``B`` at line breakpoints."""
    instr = session.current or session.last
    if instr is None or instr.line is None:
        raise ValueError("list: the stream records no source lines")
    path, here = instr.line.file, instr.line.line
    centre = here if line is None else int(line)
    breaks = {b.line for b in session.breakpoints if b.kind == "line"}
    out = []
    for n in range(max(1, centre - context), centre + context + 1):
        text = linecache.getline(path, n)
        if not text:
            continue
        mark = ("B" if n in breaks else " ") + ("=>" if n == here and session.current is not None else "  ")
        out.append(f"{n:5d} {mark} {text.rstrip()}")
    if not out:
        raise ValueError(f"list: {os.path.basename(path)} has no line {centre}")
    return "\n".join(out) + "\n"
