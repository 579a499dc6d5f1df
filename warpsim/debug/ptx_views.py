"""Text views of a :class:`~warpsim.debug.ptx_session.PtxSession`: where, source with its PTX, registers by
PTX name, predicates, the warp's lanes and pcs, shared memory, the bank model, printf.

Registers are shown by their declared type (``.f32`` as a float, ``.s32`` signed, ``.u32`` decimal,
``.b32``/``.b64`` hex, ``.pred`` 0/1, ``.f16`` a half); ``hex`` shows the bits of any. A cell the last
executed instruction of that warp wrote (for the lanes that executed it) is marked ``*``.

>>> format_register(0x3F800000, "f32", 1), format_register(0xFFFFFFFF, "s32", 1), format_register(5, "b32", 1)
('1.0', '-1', '0x00000005')
>>> lane_ranges(0b1111_0000_0101)
'0,2,8-11'
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from warpsim.ptx.codes import ABSENT, EXITED, RUNNING, WAITING
from warpsim.ptx.memory import SHARED_BASE

__all__ = ["where_text", "source_text", "regs_text", "pred_text", "mask_text", "smem_text", "banks_text",
           "printf_text", "format_register", "lane_ranges", "REGISTER_RANGE"]

REGISTER_RANGE = re.compile(r"^(%[A-Za-z_$]+)(\d+)\.\.(?:%[A-Za-z_$]+)?(\d+)$")


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


def format_register(bits, rtype, words, fmt="typed"):
    """One register's bits as its declared PTX type (or ``hex``)."""
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
    return (f"{head}, warp {w} lanes {lane_ranges(lanes)}: {s.where_text(pc)}: {s.text[pc]}" + text)


def source_text(session, line=None, warp=None, context=5):
    """The source around the focus warp's line (or ``line``) with the PTX of that line beside it."""
    s = session
    warp = s.warp if warp is None else warp
    pc = _focus_pc(s, warp)
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


def _names(session, tokens):
    out = []
    for tok in tokens:
        m = REGISTER_RANGE.match(tok)
        if m:
            lo, hi = int(m.group(2)), int(m.group(3))
            if hi < lo:
                raise ValueError(f"regs: {tok!r} is an empty range")
            names = [f"{m.group(1)}{k}" for k in range(lo, hi + 1)]
            for n in names:
                session.register(n)
            out += names
        else:
            session.register(tok)
            out.append(tok)
    return out


def _operands(session, pc):
    return [n for n in re.findall(r"%[A-Za-z_$][\w$]*", session.text[pc]) if n in session.regs_by_name]


def regs_text(session, names=(), lanes=None, fmt="typed", warp=None):
    """A table: one row per lane, one column per register (default: the registers of the focus warp's
    last executed instruction and of its next one)."""
    s = session
    warp = s.warp if warp is None else warp
    s._check_warp(warp)
    names = _names(s, names)
    last = s.last_of_warp.get(warp)
    if not names:
        pcs = ([last.pc] if last is not None else []) + [p for p in [s.warp_next_pc(warp)] if p is not None]
        for p in pcs:
            names += [n for n in _operands(s, p) if n not in names]
        if not names:
            return f"warp {warp}: no instruction with registers to show; name them: regs %r1..%r4"
    lanes = list(range(32)) if lanes is None else lanes
    written = set(last.written) if last is not None else set()
    after = "before its first instruction"
    if last is not None:
        after = f"after #{last.position} {s.text[last.pc].split()[0]}"
    cells = []
    for lane in lanes:
        row = []
        for n in names:
            _slot, words, rtype = s.register(n)
            text = format_register(s.register_value(n, warp, lane), rtype, words, fmt)
            if n in written and (last.lanes >> lane) & 1:
                text = "*" + text
            row.append(text)
        cells.append(row)
    widths = [max(len(n), *(len(r[k]) for r in cells)) for k, n in enumerate(names)]
    types = ", ".join(sorted({f"{n.rstrip('0123456789')}: .{s.register(n)[2]}" for n in names}))
    lines = [f"warp {warp}, CTA {s.cta}, {after} ({types}; * written by it)",
             "lane  " + "  ".join(f"{n:>{w}}" for n, w in zip(names, widths))]
    for lane, row in zip(lanes, cells):
        lines.append(f"{lane:4d}  " + "  ".join(f"{c:>{w}}" for c, w in zip(row, widths)))
    return "\n".join(lines)


def pred_text(session, warp=None):
    """Every predicate register of the warp: one 32-character row of 0/1, lane 0 first."""
    s = session
    warp = s.warp if warp is None else warp
    s._check_warp(warp)
    preds = sorted((n for n, (_s, _w, t) in s.regs_by_name.items() if t == "pred"),
                   key=lambda n: (n.rstrip("0123456789"), int(n[len(n.rstrip("0123456789")):] or 0)))
    if not preds:
        return f"{s.kernel} declares no predicate registers"
    lines = [f"warp {warp}, CTA {s.cta}: predicates by lane (lane 0 first)",
             f"{'':8s}{''.join(str(k // 10) if k % 10 == 0 else ' ' for k in range(32))}"]
    for n in preds:
        lines.append(f"{n:8s}{''.join(str(s.register_value(n, warp, lane) & 1) for lane in range(32))}")
    return "\n".join(lines)


def mask_text(session, warp=None):
    """The warp's lanes: running, waiting at a barrier, exited; converged at one pc, or each pc's lanes."""
    s = session
    warp = s.warp if warp is None else warp
    pcs, status = s.warp_pcs(warp)
    bits = {k: sum(1 << i for i in range(32) if status[i] == k) for k in (RUNNING, WAITING, EXITED, ABSENT)}
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


_SMEM_TYPES = {"hex": (np.uint32, 4), "u32": (np.uint32, 4), "s32": (np.int32, 4), "f32": (np.float32, 4),
               "f16": (np.float16, 2), "u16": (np.uint16, 2), "u8": (np.uint8, 1), "f64": (np.float64, 8)}


def smem_text(session, address, count=16, fmt="hex"):
    """``count`` elements of shared memory from byte ``address``, 8 per row."""
    smem = session.run.machine.smem
    if fmt not in _SMEM_TYPES:
        raise ValueError(f"smem: unknown type {fmt!r}; one of {', '.join(_SMEM_TYPES)}")
    dtype, size = _SMEM_TYPES[fmt]
    if address < SHARED_BASE or address % size or count < 1 or address + count * size > smem.size:
        raise ValueError(f"smem: {count} x {size} bytes at {address:#x} are outside shared memory "
                         f"[{SHARED_BASE:#x}, {smem.size:#x}) or not {size}-byte aligned")
    values = smem[address:address + count * size].view(dtype)
    lines = [f"shared memory of CTA {session.cta}, {fmt}, from {address:#x}"]
    for k in range(0, count, 8):
        row = values[k:k + 8]
        cells = [f"{int(v):#0{2 * size + 2}x}" if fmt == "hex" else str(v) for v in row]
        lines.append(f"{address + k * size:#07x}: " + " ".join(f"{c:>12}" for c in cells))
    return "\n".join(lines)


def banks_text(session, warp=None, which="last"):
    """The bank model (:func:`warpsim.isa.banks.bank_report`) on the actual addresses of the warp's last
    shared access (``which="last"``) or of the instruction it runs next (``"next"``)."""
    from warpsim.isa.banks import bank_report
    s = session
    warp = s.warp if warp is None else warp
    s._check_warp(warp)
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
