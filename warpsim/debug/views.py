"""What the debugger shows: each view is a function of a :class:`~warpsim.debug.session.Session`.

Views of the machine, for every front end:

- :func:`where_text`, :func:`source_text`: the next instruction (warp, lanes, source line, PTX line) and
  the source around it with the PTX of its line beside it;
- :func:`register_view`: registers by PTX name per lane (``%r5``, ``%r1..%r8``, ``$r5``; a traced
  program's ``r36-r51`` and tensor names too), typed by their declaration or as ``hex``, ``f16x2``,
  ``bf16x2``, ``f32``; a cell the warp's last instruction wrote (for the lanes that ran it) marked ``*``;
- :func:`lanes_text` (the warp's lanes and pcs), :func:`warps_text` (every warp of the CTA),
  :func:`pred_text`, :func:`memory_text` (shared or global words), :func:`printf_text`;
- :func:`banks_text`: the bank model on the actual addresses of a warp's last (or next) shared access.

Views of a traced Python program (``session.traced``; a kernel has no such metadata and says so):

- :func:`frag_view`: a register tensor through its MMA view or its copy view, per lane by coordinate;
- :func:`who_view` / :func:`from_view`: which lane and register (half) hold an element of a memory
  tensor, and where a register's halves came from (:mod:`warpsim.debug.dataflow`);
- :func:`smem_view` / :func:`smem_banks`: a shared tensor in its logical shape through its layout
  (swizzle included), and its bank map with the focus warp's last shared access marked;
- :func:`banks_view`: the bank model's report of the stream's shared accesses executed so far, or of all.

Values are decoded for display only (the registers stay ``uint32`` bit patterns). Shared addresses are
the CTA's (a traced program's byte ``a`` is ``traced.smem_base + a``), global ones offsets into the
simulated global memory, as ``x/`` takes them.

>>> format_register(0x3F800000, "f32", 1), format_register(0xFFFFFFFF, "s32", 1), format_register(5, "b32", 1)
('1.0', '-1', '0x00000005')
>>> lane_ranges(0b1111_0000_0101), register_ranges([4, 5, 6, 7, 9])
('0,2,8-11', '%r4..%r7, %r9')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from warpsim.cute.numeric import dtype_bits
from warpsim.debug.banks import StreamBankReport, instr_bank_report, stream_bank_report
from warpsim.draw.bankmap import bank_map
from warpsim.draw.bits import REGISTER_FORMATS, format_bits
from warpsim.draw.colors import bank_color
from warpsim.draw.html import html_table, smem_tile
from warpsim.draw.bits import REGISTER_FORMATS, format_bits
from warpsim.draw.registers import TEXT_WIDTH, RegisterGrid
from warpsim.warp import WARP_SIZE
from warpsim.isa.banks import bank_of, bank_report
from warpsim.isa.fragments import MMA_REGS
from warpsim.program.instr import Op
from warpsim.ptx.codes import ABSENT, EXITED, RUNNING, WAITING
from warpsim.ptx.memory import SHARED_BASE

__all__ = ["where_text", "source_text", "RegisterView", "register_view", "register_names", "lanes_text",
           "warps_text", "pred_text", "memory_text", "banks_text", "printf_text", "FragView", "frag_view",
           "WhoView", "who_view", "FromView", "from_view", "Tile", "smem_view", "smem_banks", "BanksView",
           "banks_view", "format_register", "element_text", "lane_ranges", "register_ranges", "FORMATS"]

FORMATS = ("typed",) + REGISTER_FORMATS          # typed: as the register's declaration says
_RANGE = re.compile(r"^(%[A-Za-z_$]+)(\d+)\.\.(?:%[A-Za-z_$]+)?(\d+)$")
_DIALECT = re.compile(r"^(?:%?r)?(\d+)(?:-r?(\d+))?$")


def lane_ranges(mask):
    """``"0-3,8"`` for the set bits of ``mask`` (``"none"`` when empty)."""
    lanes = [i for i in range(32) if (mask >> i) & 1]
    parts, k = [], 0
    while k < len(lanes):
        j = k
        while j + 1 < len(lanes) and lanes[j + 1] == lanes[j] + 1:
            j += 1
        parts.append(str(lanes[k]) if j == k else f"{lanes[k]}-{lanes[j]}")
        k = j + 1
    return ",".join(parts) or "none"


def register_ranges(regs):
    """``'%r4..%r7, %r9'`` for the dialect's registers ``[4, 5, 6, 7, 9]`` (the kernel's ``%rI``)."""
    out, regs = [], sorted(set(int(r) for r in regs))
    start = prev = None
    for r in regs + [None]:
        if start is not None and (r is None or r != prev + 1):
            out.append(f"%r{start}" if start == prev else f"%r{start}..%r{prev}")
            start = None
        if r is not None and start is None:
            start = r
        prev = r
    return ", ".join(out)


def format_register(bits, rtype, words, fmt="typed"):
    """One register's bits as its declared PTX type (``fmt="typed"``), or ``hex``, ``f16x2``, ``bf16x2``, ``f32``."""
    if fmt in REGISTER_FORMATS[1:] and words == 1:
        return format_bits(bits, fmt)
    if fmt == "hex" or rtype.startswith("b"):
        return f"{bits:#0{2 + 8 * words}x}"
    if rtype == "pred":
        return str(bits & 1)
    if rtype == "f32":
        return str(np.array([bits], np.uint32).view(np.float32)[0])
    if rtype == "f64":
        return str(np.array([bits], np.uint64).view(np.float64)[0])
    if rtype == "f16":
        return str(np.array([bits & 0xFFFF], np.uint16).view(np.float16)[0])
    width = int(rtype[1:]) if rtype[1:].isdigit() else 32 * words
    value = bits & ((1 << width) - 1)
    if rtype.startswith("s") and value >> (width - 1):
        value -= 1 << width
    return str(value)


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


def _warp(session, warp):
    warp = session.warp if warp is None else warp
    session._check_warp(warp)
    return int(warp)


def _traced(session, what):
    if session.traced is None:
        raise ValueError(f"{what}: {session.kernel} is a kernel, not a traced Python program: it has no dialect "
                         f"tensors (print registers by name: print %r1..%r4)")
    return session.traced


# -- where, source -----------------------------------------------------------------------------------
def _lines_of(session, chain_file):
    """The text lines of a source file named in the ``.loc`` chains, or None where it is not found."""
    src = Path(session.source) if session.source else None
    if src is None:
        return None
    for path in (src if src.name == chain_file else None, src.parent / chain_file):
        if path is not None and path.is_file():
            return path.read_text(encoding="utf-8", errors="replace").splitlines()
    return None


def _focus_pc(session, warp):
    pc = session.warp_next_pc(warp)
    if pc is None and session.last_of_warp.get(warp) is not None:
        pc = session.last_of_warp[warp].pc
    return pc


def where_text(session):
    """Where the session stands: position, CTA, the next instruction with its source and PTX line."""
    s = session
    head = f"=> #{s.position}, CTA {s.cta}"
    if s.fault:
        return f"{head}: stopped at a fault: {s.fault}"
    if s.finished:
        return f"{head}: the launch has finished ({s.position} warp instructions)"
    nxt = s.next_instruction()
    if nxt is None:
        return f"{head}: every live thread waits at a barrier; the next step releases it"
    w, pc, lanes = nxt
    line = s.line_of(pc)
    text = ""
    if line is not None:
        lines = _lines_of(s, line[0])
        if lines is not None and 0 < line[1] <= len(lines):
            text = "\n    " + f"{line[0]}:{line[1]}: {lines[line[1] - 1].strip()}"
    return f"{head}, warp {w} lanes {lane_ranges(lanes)}: {s.where_text(pc)}: {s.text[pc]}" + text


def source_text(session, line=None, warp=None, context=5):
    """The source around the focus warp's line (or ``line``) with the PTX of that line beside it."""
    s = session
    pc = _focus_pc(s, _warp(s, warp))
    here = s.line_of(pc)
    if here is None and line is None:
        return _ptx_text(s, pc, context)
    files = [u[0] for u in s.user if u]
    if here is None and not files:
        raise ValueError(f"list: {s.kernel} has no .loc source lines (compile with -lineinfo); `list` shows its "
                         f"PTX without a line number")
    file = here[0] if here is not None else files[0]
    target = line if line is not None else here[1]
    lines = _lines_of(s, file)
    if lines is None:
        raise ValueError(f"list: the source file {file} is not found next to {s.source}")
    if not 1 <= target <= len(lines):
        raise ValueError(f"list: line {target} is outside {file} (1-{len(lines)})")
    breaks = {bp.line for bp in s.breakpoints if bp.kind == "line" and bp.file in ("", file)}
    left = []
    for n in range(max(1, target - context), min(len(lines), target + context) + 1):
        mark = ("B" if n in breaks else " ") + ("=>" if here is not None and n == here[1] else "  ")
        left.append(f"{n:5d} {mark} {lines[n - 1].rstrip()}")
    pcs = [p for p, u in enumerate(s.user) if u == (file, target)]
    right = [f"PTX of {file}:{target} ({len(pcs)} instructions):"]
    for p in pcs[:24]:
        right.append(f"{'=>' if p == pc else '  '} {s.ptx_line[p]:5d}  {s.text[p]}")
    if len(pcs) > 24:
        right.append(f"   ... {len(pcs) - 24} more")
    width = max(len(t) for t in left) + 3
    rows = max(len(left), len(right))
    left += [""] * (rows - len(left))
    right += [""] * (rows - len(right))
    return "\n".join(f"{a:<{width}}| {b}".rstrip() for a, b in zip(left, right))


def _ptx_text(s, pc, context):
    if pc is None:
        return "no instruction to show (the warp has exited)"
    out = ["(no .loc source lines: the PTX)"]
    for p in range(max(0, pc - context), min(len(s.text), pc + context + 1)):
        out.append(f"{'=>' if p == pc else '  '} {s.ptx_line[p]:5d}  {s.text[p]}")
    return "\n".join(out)


# -- registers -------------------------------------------------------------------------------------
def register_names(session, tokens, warp=None):
    """The PTX register names ``tokens`` name: ``%r5``, ``$r5`` (cuda-gdb's spelling), ``%r1..%r8``; for a
    traced program also ``r36-r51`` / ``36`` (the dialect's registers) and a register tensor's name.
    ``ValueError`` naming the kernel's registers for anything else."""
    out = []
    traced = session.traced
    for tok in tokens:
        tok = "%" + tok[1:] if tok.startswith("$") else tok
        m, d = _RANGE.match(tok), _DIALECT.match(tok)
        if m or (d and traced is not None):
            prefix, lo, hi = (m.group(1), int(m.group(2)), int(m.group(3))) if m else \
                ("%r", int(d.group(1)), int(d.group(2) or d.group(1)))
            if hi < lo:
                raise ValueError(f"registers: {tok!r} is an empty range (write the lower register first)")
            top = traced.trace.regs_per_thread if traced is not None and prefix == "%r" else None
            if top is not None and hi >= top:
                raise ValueError(f"registers: %r{hi} is outside the program's %r0..%r{top - 1}")
            session.register(f"{prefix}{hi}")                  # before the range is expanded
            names = [f"{prefix}{k}" for k in range(lo, hi + 1)]
        elif traced is not None and tok in traced.trace.tensors:
            regs = traced.tensors.register_tensor(tok).registers(_warp(session, warp))
            names = [f"%r{r}" for r in sorted(set(regs.tolist()))]
        else:
            names = [tok]
        for n in names:
            session.register(n)
        out += names
    return out


def _operands(session, pc):
    return [n for n in re.findall(r"%[A-Za-z_$][\w$]*", session.text[pc]) if n in session.regs_by_name]


def _legend(session, warp, names):
    traced = session.traced
    if traced is None:
        return ", ".join(sorted({f"{n.rstrip('0123456789')}: .{session.register(n)[2]}" for n in names}))
    regs = {int(n[2:]) for n in names if re.fullmatch(r"%r\d+", n) and int(n[2:]) < traced.trace.regs_per_thread}
    parts, named = [], set()
    for name in traced.trace.tensors:
        rt = traced.tensors.register_tensor(name)
        own = [r for r in rt.registers(warp).tolist() if r in regs]
        if own:
            parts.append(f"{register_ranges(own)} {name} ({rt.dtype})")
            named.update(own)
    if regs - named:
        parts.append(f"{register_ranges(regs - named)} unnamed (scratch)")
    if len(regs) < len(names):
        parts.append("others: the lowered kernel's own (addresses, predicates)")
    return "; ".join(parts)


@dataclass(frozen=True, eq=False)
class RegisterView:
    """One warp's registers: ``names`` (PTX), ``grid`` (:class:`~warpsim.draw.registers.RegisterGrid`; the low
    word of a 64-bit register in its bits), the ``lanes`` shown in text (None: all), a ``legend``."""

    warp: int
    names: tuple
    grid: object
    lanes: tuple | None
    legend: str

    def text(self, width=TEXT_WIDTH):
        """The table (columns wrapped into blocks ``width`` characters wide) and the legend."""
        return self.grid.text(lanes=self.lanes, width=width) + "registers: " + self.legend + "\n"

    def svg(self):
        return self.grid.svg()

    def save(self, path):
        """Write the register picture (``.svg``, or ``.png`` with ``warpsim[draw]``)."""
        self.grid.save(path)

    def _repr_html_(self):
        return self.grid._repr_html_()


def register_view(session, names=(), lanes=None, fmt="typed", warp=None):
    """A :class:`RegisterView` of ``warp`` (default: the focus warp): the registers ``names`` name (as
    :func:`register_names` takes them; default: those of the warp's last and next instruction, or where they
    have none — a traced program at its end — the program's own ``%r0..%rN``), the
    ``lanes`` the text shows (default all), in ``fmt`` (one of :data:`FORMATS`)."""
    s = session
    warp = _warp(s, warp)
    if fmt not in FORMATS:
        raise ValueError(f"print: unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    names = register_names(s, [names] if isinstance(names, str) else names, warp)
    last = s.last_of_warp.get(warp)
    if not names:
        pcs = ([last.pc] if last is not None else []) + [p for p in [s.warp_next_pc(warp)] if p is not None]
        for p in pcs:
            names += [n for n in _operands(s, p) if n not in names]
        if not names and s.traced is not None:
            names = [f"%r{r}" for r in range(s.traced.trace.regs_per_thread)]
        if not names:
            raise ValueError(f"warp {warp}: no instruction with registers to show; name them: print %r1..%r4")
    if lanes is not None:
        lanes = tuple(int(x) for x in lanes)
        if any(not 0 <= x < 32 for x in lanes):
            raise ValueError(f"print: lanes must be in [0, 32), got {list(lanes)}")
    written = set(last.written) if last is not None else set()
    regs = s.run.machine.regs[warp]
    words = np.zeros((32, len(names)), np.uint32)
    cells = np.empty((32, len(names)), dtype=object)
    hot = set()
    for k, n in enumerate(names):
        slot, nwords, rtype = s.register(n)
        words[:, k] = regs[:, slot]
        for lane in range(32):
            cells[lane, k] = format_register(s.register_value(n, warp, lane), rtype, nwords, fmt)
            if n in written and (last.lanes >> lane) & 1:
                hot.add((lane, k))
    after = f"after #{last.position} {s.text[last.pc].split()[0]}" if last is not None else \
        f"at #{s.position}" if s.position else "before its first instruction"
    title = f"warp {warp}, CTA {s.cta}, {fmt}, {after} (* written by it)"
    grid = RegisterGrid(words, fmt if fmt in REGISTER_FORMATS else "hex", frozenset(hot), tuple(names), title, cells)
    return RegisterView(warp, tuple(names), grid, lanes, _legend(s, warp, names))


# -- lanes, warps, predicates, memory, printf ------------------------------------------------------------
def pred_text(session, warp=None):
    """Every predicate register of the warp: one 32-character row of 0/1, lane 0 first."""
    s = session
    warp = _warp(s, warp)
    preds = sorted((n for n, (_s, _w, t) in s.regs_by_name.items() if t == "pred"),
                   key=lambda n: (n.rstrip("0123456789"), int(n[len(n.rstrip("0123456789")):] or 0)))
    if not preds:
        return f"{s.kernel} declares no predicate registers"
    lines = [f"warp {warp}, CTA {s.cta}: predicates by lane (lane 0 first)",
             f"{'':8s}{''.join(str(k // 10) if k % 10 == 0 else ' ' for k in range(32))}"]
    for n in preds:
        lines.append(f"{n:8s}{''.join(str(s.register_value(n, warp, lane) & 1) for lane in range(32))}")
    return "\n".join(lines)


def _status_masks(status):
    return {k: sum(1 << i for i in range(32) if status[i] == k) for k in (RUNNING, WAITING, EXITED, ABSENT)}


def lanes_text(session, warp=None):
    """The warp's lanes (cuda-gdb's ``info cuda lanes``): running, waiting at a barrier, exited; converged at
    one pc, or each pc's lanes."""
    s = session
    warp = _warp(s, warp)
    pcs, status = s.warp_pcs(warp)
    bits = _status_masks(status)
    lines = [f"warp {warp}, CTA {s.cta}: running {lane_ranges(bits[RUNNING])}; waiting at a barrier "
             f"{lane_ranges(bits[WAITING])}; exited {lane_ranges(bits[EXITED])}" +
             (f"; absent {lane_ranges(bits[ABSENT])}" if bits[ABSENT] else "")]
    groups = {}
    for lane in range(32):
        if status[lane] in (RUNNING, WAITING):
            groups.setdefault(int(pcs[lane]) - (status[lane] == WAITING), []).append(lane)
    if not groups:
        return lines[0]
    nxt = s.warp_next_pc(warp)
    if len(groups) == 1:
        pc = next(iter(groups))
        lines.append(f"converged: every live lane at pc {pc} ({s.where_text(pc)}: {s.text[pc]})")
        return "\n".join(lines)
    lines.append(f"diverged: {len(groups)} pcs (the lanes at the smallest run next)")
    for pc in sorted(groups):
        mask = sum(1 << lane for lane in groups[pc])
        lines.append(f"{'=>' if pc == nxt else '  '} pc {pc:4d}  lanes {lane_ranges(mask):<16s} "
                     f"{s.where_text(pc)}: {s.text[pc]}")
    lines.append("lane pcs: " + " ".join(f"{lane}:{int(pcs[lane]) - (status[lane] == WAITING)}"
                                         for lane in range(32) if status[lane] in (RUNNING, WAITING)))
    return "\n".join(lines)


def warps_text(session):
    """Every warp of the current CTA (cuda-gdb's ``info cuda warps``): its state, its role in a warp-specialised
    kernel (producer or consumer, by its last ``setmaxnreg``: :meth:`~warpsim.debug.session.Session.role_of`), the
    pc and source line it
    runs next, and its last instruction; ``*`` marks the focus warp, ``=>`` the warp the schedule runs next."""
    s = session
    nxt = s.next_instruction()
    lines = [f"CTA {s.cta}, {s.warps} warps, #{s.position} warp instructions executed"]
    for w in range(s.warps):
        _pcs, status = s.warp_pcs(w)
        bits = _status_masks(status)
        state = "exited" if not bits[RUNNING] and not bits[WAITING] else \
            "at a barrier" if not bits[RUNNING] else "running"
        pc = s.warp_next_pc(w)
        here = f"pc {pc} {s.where_text(pc)}: {s.text[pc]}" if pc is not None else "-"
        last = s.last_of_warp.get(w)
        done = f" (last #{last.position})" if last is not None else ""
        mark = ("=>" if nxt is not None and nxt[0] == w else "  ") + ("*" if w == s.warp else " ")
        role = f"{s.role_of(w) or '-':<9s}" if s.roles else ""
        lines.append(f"{mark} warp {w:3d}  {state:<12s} {role}lanes {lane_ranges(bits[RUNNING] | bits[WAITING]):<6s} "
                     f"{here}{done}")
    return "\n".join(lines)


def mbarriers_text(session):
    """The current CTA's mbarriers (``info mbarriers``): each one's shared address, phase, the arrivals and
    transaction bytes its phase still waits for, and the lanes waiting at a ``try_wait`` on it."""
    from warpsim.ptx.families.mbarrier import ADDR, EXPECTED, LIVE, PENDING, PHASE, TX
    s = session
    table = s.run.mbarriers
    live = [i for i in range(table.shape[0]) if table[i, LIVE]]
    if not live:
        return f"CTA {s.cta}: no mbarrier initialised"
    waiting = s.run.mbarrier_waiters()
    lines = [f"CTA {s.cta}: {len(live)} mbarrier{'s' if len(live) != 1 else ''}"]
    for i in live:
        threads = waiting.get(i, [])
        who = ""
        if threads:
            warps = sorted({t // WARP_SIZE for t in threads})
            who = "; waiting: " + ", ".join(
                f"warp {w} lanes {lane_ranges(sum(1 << (t % WARP_SIZE) for t in threads if t // WARP_SIZE == w))}"
                for w in warps)
        lines.append(f"  shared {int(table[i, ADDR]):#x}: phase {int(table[i, PHASE])} (parity "
                     f"{int(table[i, PHASE]) & 1}), {int(table[i, PENDING])} of {int(table[i, EXPECTED])} arrivals "
                     f"and {int(table[i, TX])} transaction bytes pending{who}")
    return "\n".join(lines)


def tma_text(session, last=16):
    """The current CTA's bulk copies (``info tma``): the ``last`` ones its threads issued, oldest first -- the step
    (``#N``, as ``back``/``where`` count), warp and lane, the PTX line, the form and its operands (a tensor box: its
    shared address, map and coordinates, a load's mbarrier; contiguous bytes: size, destination and source). warpsim
    moves the bytes when the copy is issued and completes a load's bytes on its mbarrier then (``info mbarriers``
    shows what a phase still waits for)."""
    s = session
    moves = s.run.bulk_transfers()
    if not moves:
        return f"CTA {s.cta}: no bulk copy (TMA) issued yet"
    shown = moves[-last:]
    lines = [f"CTA {s.cta}: {len(moves)} bulk cop{'ies' if len(moves) != 1 else 'y'} issued"
             + (f", the last {len(shown)}" if len(shown) < len(moves) else "")]
    for m in shown:
        warp, lane = divmod(m["thread"], WARP_SIZE)
        head = f"  #{m['step']} warp {warp} lane {lane}, PTX line {s.ptx_line[m['row']]}: {m['form']}"
        if "map" in m:
            what = f"shared {m['shared']:#x}, map {m['map']:#x} at ({', '.join(str(c) for c in m['coords'])})"
            if "mbarrier" in m:
                what += f", mbarrier {m['mbarrier']:#x}"
        else:
            what = f"{m['size']} bytes to {m['dst']:#x} from {m['src']:#x}"
        lines.append(f"{head}: {what}")
    return "\n".join(lines)


def wgmma_text(session):
    """The registers each warp's ``wgmma.mma_async`` in flight own (``info wgmma``): by commit group, the open one
    (not committed yet) first; reading or writing one before its ``wgmma.wait_group`` stops the run."""
    s = session
    table = s.run.wgmma_in_flight
    nregs = table.shape[1] - 2
    names = {}
    for name, (slot, words, _) in s.decoded.reg_names.items():
        for k in range(words):
            names[slot + k] = name
    lines = []
    for w in range(table.shape[0]):
        owned = table[w, :nregs]
        if not owned.any():
            continue
        groups = {}
        for slot in np.flatnonzero(owned):
            groups.setdefault(int(owned[slot]), []).append(names.get(int(slot), f"slot {int(slot)}"))
        parts = [f"{'open group' if g < 0 else f'group {g}'}: {len(regs)} registers ({regs[0]} .. {regs[-1]})"
                 for g, regs in sorted(groups.items())]
        lines.append(f"  warp {w}: {int(table[w, nregs])} groups committed; in flight: " + "; ".join(parts))
    return "\n".join([f"CTA {s.cta}: wgmma in flight"] + lines) if lines else f"CTA {s.cta}: no wgmma in flight"


_MEMORY_TYPES = {"x": (np.uint32, 4, "hex"), "u": (np.uint32, 4, "u32"), "d": (np.int32, 4, "s32"),
                 "f": (np.float32, 4, "f32"), "h": (np.float16, 2, "f16"), "s": (np.uint16, 2, "u16"),
                 "b": (np.uint8, 1, "u8"), "g": (np.float64, 8, "f64")}


def memory_text(session, address, count=16, fmt="x", space="shared"):
    """``count`` elements of ``space`` memory (``shared``: the CTA's shared addresses; ``global``: offsets into
    the simulated global memory) from byte ``address``, 8 per row; ``fmt`` a letter of ``x`` (hex words),
    ``u``, ``d``, ``f`` (f32), ``h`` (f16), ``s`` (u16), ``b`` (bytes), ``g`` (f64)."""
    m = session.run.machine
    if fmt not in _MEMORY_TYPES:
        raise ValueError(f"x: unknown format {fmt!r}; one of {', '.join(_MEMORY_TYPES)}")
    if space not in ("shared", "global"):
        raise ValueError(f"x: unknown memory {space!r}; shared or global")
    dtype, size, label = _MEMORY_TYPES[fmt]
    mem, low = (m.smem, SHARED_BASE) if space == "shared" else (m.gmem, 0)
    if count < 1 or address < low or address % size or address + count * size > mem.size:
        raise ValueError(f"x: {count} x {size} bytes at {address:#x} are outside {space} memory "
                         f"[{low:#x}, {mem.size:#x}) or not {size}-byte aligned")
    values = mem[address:address + count * size].view(dtype)
    lines = [f"{space} memory" + (f" of CTA {session.cta}" if space == "shared" else "") + f", {label}, from {address:#x}"]
    for k in range(0, count, 8):
        cells = [f"{int(v):#0{2 * size + 2}x}" if fmt == "x" else str(v) for v in values[k:k + 8]]
        lines.append(f"{address + k * size:#07x}: " + " ".join(f"{c:>12}" for c in cells))
    return "\n".join(lines)


def banks_text(session, warp=None, which="last"):
    """The bank model (:func:`warpsim.isa.banks.bank_report`) on the actual addresses of the warp's last
    shared access (``which="last"``) or of the instruction it runs next (``"next"``)."""
    s = session
    warp = _warp(s, warp)
    if which == "next":
        pc = s.warp_next_pc(warp)
        pcs, status = s.warp_pcs(warp)
        lanes = sum(1 << i for i in range(32) if status[i] == RUNNING and pcs[i] == pc) if pc is not None else 0
        access = s._shared_access(warp, pc, lanes) if pc is not None else None
        label = f"next instruction of warp {warp}"
    else:
        last = s.last_of_warp.get(warp)
        access, pc, lanes = (last.shared, last.pc, last.lanes) if last is not None else (None, None, 0)
        label = f"#{last.position} of warp {warp}" if last is not None else f"warp {warp}"
    if access is None and pc is None:
        return f"{label}: no instruction executed yet" if which == "last" else f"{label}: none (the warp has exited)"
    if access is None:
        return f"{label}: {s.text[pc]} is not a shared-memory access (ld/st.shared, ldmatrix)"
    kind, addrs, num, bits, trans = access
    addrs = addrs.copy()
    fill = next(int(addrs[i]) for i in range(32) if (lanes >> i) & 1)
    for i in range(32):                 # lanes that did not execute: a copy of an executing lane's address
        if not (lanes >> i) & 1:
            addrs[i] = fill
    report = bank_report(kind, addrs, num=num, bits=bits, trans=trans)
    return f"{label}: {s.where_text(pc)}: {s.text[pc]}\n" + report.text().rstrip("\n")


def printf_text(session):
    """Device printf output so far: ``CTA (x,y,z) thread (x,y,z): text``."""
    lines = session.run.printf
    if not lines:
        return "no printf output yet"
    return "\n".join(f"CTA {cta} thread {tid}: {text.rstrip(chr(10))}" for cta, tid, text in lines)


# -- a traced program's tensors ----------------------------------------------------------------------------
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
        return f"%r{int(self.registers[i])}" + ("" if h < 0 else (".lo", ".hi")[h])

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
    traced = _traced(session, "print")
    warp = _warp(session, warp)
    rt = traced.tensors.register_tensor(name)
    view = rt.view(kind)
    slots = view.address_table()
    regs = rt.registers(warp)[slots]
    halves = rt.halves()[slots]
    words = traced.words(warp, regs)                                        # [32, n]
    bits = np.where(halves >= 0, (words >> (16 * np.maximum(halves, 0)).astype(np.uint32)) & 0xFFFF, words)
    coords = tuple(rt.coord(kind, i) for i in range(slots.size))
    return FragView(name, kind, str(view.layout), rt.dtype, warp, rt.copy_name if kind == "copy" else "", coords,
                    slots, regs, halves, bits.astype(np.uint32))


def _instr_text(session, k):
    """Stream position ``k`` as the debugger names it: warp, PTX name, source line, PTX line."""
    traced = session.traced
    i = traced.stream[k]
    line = f" {Path(i.line.file).name}:{i.line.line}" if i.line else ""
    return f"w{i.warp} {i.ptx}{line} (PTX line {session.ptx_line[int(traced.pcs[k])]})"


def _half_name(reg, half):
    return f"%r{reg}" + ("" if half < 0 else (".lo", ".hi")[half])


def _address_text(traced, space, address):
    return f"{space} {address + (traced.smem_base if space == 'shared' else traced.gmem_base):#x}"


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
    traced = _traced(session, "who")
    who = traced.dataflow.who(name, tuple(coord), memory, executed=traced.executed())
    rt = traced.tensors.register_tensor(name)
    c = "(" + ", ".join(map(str, who.coord)) + ")"
    bank = f", bank {bank_of(who.address)}" if who.space == "shared" else ""
    lines = [f"{name}: element {c} of {who.memory} is {_address_text(traced, who.space, who.address)}{bank}"]
    if not who.entries:
        lines.append(f"  no register of {name} holds it")
    for e in who.entries:
        mma = ",".join(rt.coord("mma", i) for i in rt.index_of_slot("mma", e.slot))
        copy = ""
        if rt.copy_tensor is not None:
            copy = "  copy " + ",".join(rt.coord("copy", i) for i in rt.index_of_slot("copy", e.slot))
        arrow = "->" if e.store else "<-"
        state = "done" if e.done else "pending"
        lines.append(f"  w{e.warp} lane {e.lane:2d} (thread {32 * e.warp + e.lane:3d}) {_half_name(e.reg, e.half):<8} "
                     f"slot {e.slot:<3d} MMA {mma}{copy}  {arrow} {_instr_text(session, e.instr)} ({state})")
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
    traced = session.traced
    instr = traced.stream[step.instr]
    head = _instr_text(session, step.instr)
    if instr.op == Op.MMA:
        pos = traced.dataflow.mma_position(instr, step.lane, step.reg)
        na, nb, _nc = MMA_REGS[(instr.shape, instr.cd)]
        a, b = instr.src[:na], instr.src[na:na + nb]
        return [f"{head}", f"      D({pos[0]}, {pos[1]}) of its 16x8 tile = A x B + C; A {register_ranges(a)}, "
                           f"B {register_ranges(b)}, C {register_ranges(instr.src[na + nb:])}"]
    if instr.op == Op.MOV:
        return [f"{head}", f"      set to {instr.imm:#x}"]
    if instr.op == Op.CVT:
        return [f"{head}", f"      from %r{instr.src[0]} (upper half) and %r{instr.src[1]} (lower half)"]
    if instr.op == Op.ALU:
        return [f"{head}", f"      {instr.form} of {', '.join(f'%r{r}' for r in instr.src)} (element-wise arithmetic)"]
    if instr.op == Op.SHFL:
        return [f"{head}", f"      %r{instr.src[0]} of lane {step.lane ^ instr.imm} (shfl.sync.bfly by {instr.imm})"]
    if instr.op == Op.MOVL:
        return [f"{head}", f"      set to {int(instr.addr[step.lane]) & 0xFFFFFFFF:#x} (this lane's value, known when "
                           f"the program was traced)"]
    who = f"lane {step.lane} {_half_name(step.reg, step.half)}"
    verb = "from" if instr.op in (Op.LD, Op.LDMATRIX) else "into"
    return [f"{head}  {who}",
            f"      {verb} {_address_text(traced, step.space, step.address)} = {_coords_text(step.coords)}"]


def from_view(session, lane, reg, warp=None):
    """Where each half of the dialect's register ``reg`` (the kernel's ``%r{reg}``) of ``lane`` (in ``warp``,
    default the focus warp) came from, as of where the warp stands."""
    traced = _traced(session, "from")
    warp = _warp(session, warp)
    if isinstance(lane, bool) or not isinstance(lane, (int, np.integer)) or not 0 <= lane < 32:
        raise ValueError(f"from: lane {lane} is outside [0, 32)")
    top = traced.trace.regs_per_thread
    if isinstance(reg, bool) or not isinstance(reg, (int, np.integer)) or not 0 <= reg < top:
        raise ValueError(f"from: register %r{reg} is outside the program's %r0..%r{top - 1}")
    before = traced.next_position(warp)
    origin = traced.dataflow.origin(warp, lane, reg, before)
    owners = traced.tensors.owners(warp, reg)
    dtype = traced.tensors.register_tensor(owners[0][0]).dtype if owners else "u32"
    held = "; ".join(f"{n} slot{'s' if len(s) > 1 else ''} {', '.join(map(str, s))}" for n, s in owners) or "no tensor"
    value = int(traced.words(warp, [reg])[lane, 0])
    last = session.last_of_warp.get(warp)
    lines = [f"w{warp} lane {lane} %r{reg} = 0x{value:08x} ({held}), "
             + (f"after #{last.position}" if last is not None else "at the start")]
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
            raise ValueError("save: only bank maps are pictures; use print NAME banks")
        self.picture.save(path, rows=self.rows)


def _ranges(shape, rows, cols):
    out = []
    for what, rng, n in (("rows", rows, shape[0]), ("cols", cols, shape[1])):
        start, stop = (0, n) if rng is None else (int(rng[0]), int(rng[1]))
        if not 0 <= start < stop <= n:
            raise ValueError(f"{what} must be START:STOP within 0:{n}, got {start}:{stop}")
        out.append((start, stop))
    return out


def _shared_tensor(traced, name):
    t = traced.tensors.memory_tensor(name)
    if t.space != "smem":
        raise ValueError(f"{name} is in global memory; a tile view shows shared tensors "
                         f"({', '.join(traced.tensors.memory_tensors('smem')) or 'none'})")
    return t


def smem_view(session, name, fmt=None, rows=None, cols=None):
    """The values shared tensor ``name`` holds now, in its logical ``(rows, cols)`` shape (first mode down),
    read through its layout, swizzle included; ``fmt``: ``f16``, ``bf16``, ``f32`` or ``hex``."""
    traced = _traced(session, "print")
    t = _shared_tensor(traced, name)
    tile = smem_tile(t, traced.smem, fmt)
    rows, cols = _ranges(tile.values.shape, rows, cols)
    return Tile(f"{name}: {t}", tile.values, rows, cols)


def smem_banks(session, name, rows=None, cols=None, warp=None):
    """The bank of every element of shared tensor ``name`` (``(address // 4) % 32``, after the swizzle), the
    lanes of the focus warp's last shared access marked (``*``)."""
    traced = _traced(session, "print")
    t = _shared_tensor(traced, name)
    last = session.last_of_warp.get(_warp(session, warp))
    k = traced.position_at(last.warp, last.pc) if last is not None else None
    report = instr_bank_report(traced.stream[k]) if k is not None else None
    marked = f"; marked: {_instr_text(session, k)}" if report is not None else ""
    m = bank_map(t, report, title=f"banks of {name}: {t}{marked}")
    rows, cols = _ranges(m.shape, rows, cols)
    fills = [[bank_color(b) for b in row] for row in m.bank.tolist()]
    return Tile(m.title, m.bank.astype(object), rows, cols, frozenset(m.marks), fills, m)


@dataclass(frozen=True, eq=False)
class BanksView:
    """A bank-conflict report (:class:`~warpsim.debug.banks.StreamBankReport`) and what it covers."""

    title: str
    report: object
    detail: bool = False
    each: bool = False
    session: object = None

    def text(self):
        lines = [self.title, self.report.text(detail=self.detail).rstrip("\n")]
        if self.each:
            for k, _instr, r in self.report.entries:
                verdict = "conflict-free" if r.conflict_free else f"{r.extra_wavefronts} extra (worst {r.degree}-way)"
                lines.append(f"{_instr_text(self.session, k)}: {len(r.phases)} phases, {r.wavefronts} wavefronts, "
                             f"{verdict}")
        return "\n".join(lines) + "\n"


def banks_view(session, scope="done", detail=False, each=False):
    """The bank model's report of a traced program's stream: ``scope`` ``"done"`` (the shared accesses the
    warps have executed) or ``"all"`` (the whole program); ``detail``: the phases of every access with a
    conflict; ``each``: one line per access."""
    traced = _traced(session, "banks")
    report = stream_bank_report(traced.stream)
    if scope == "all":
        return BanksView(f"shared accesses of the whole program ({len(traced.stream)} stream instructions):",
                         report, detail, each, session)
    if scope != "done":
        raise ValueError(f"banks: expected last, next, done or all, got {scope!r}")
    executed = traced.executed()
    done = StreamBankReport(tuple(e for e in report.entries if executed[e[0]]))
    return BanksView(f"shared accesses executed so far ({int(executed.sum())} of {len(traced.stream)} stream "
                     f"instructions):", done, detail, each, session)
