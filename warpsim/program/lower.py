"""A traced program as PTX: the warp instruction stream becomes one PTX kernel that the PTX front end runs.

The Python CuTe dialect and the PTX front end share one machine this way: a program is traced into its
stream (:mod:`warpsim.program.instr`), lowered here to PTX text, and from then on it is a kernel like any
other — the same parser, interpreter, debugger and GPU path.

The kernel, ``.visible .entry warpsim_program(.param .u64 gmem, .param .u64 table)``, runs one CTA of
``32 * warps`` threads with ``smem_bytes`` of dynamic shared memory:

- the program's registers are the thread's ``%r0 .. %r{R-1}`` (``.b32``); the stream assumes they start at
  0, so the ones it may read before writing them (``zero``: all unless told) are set to 0 at entry; its
  instructions keep their PTX names (``Instr.ptx``);
- per-lane values known when the program was traced — addresses (already swizzled), predicates, the
  values of ``MOVL`` — come from a table in global memory (``table``, ``int64``): value ``p`` of thread ``t``
  is ``table[p * threads + t]`` (:class:`Lowered.table`). A ``MOVL`` value is a row of its own, loaded where it
  is used; instructions with the same per-thread predicate share a predicate register set at entry (``%q<k>``,
  the first :data:`MAX_PREDICATES` patterns; beyond, a row loaded into ``%p1`` where it is used);
- a global address is a byte offset into ``gmem`` (the program's buffers, laid out as traced); a shared
  address an offset into the dynamic shared window ``smem``. Addresses are not loaded one by one: accesses
  whose per-thread addresses differ by one constant over every thread that issues them share a *base*, a
  register loaded from the table once at entry (``%a<k>`` shared, ``%g<k>`` global), and the access is
  ``[base+offset]``, as compiled code addresses the elements of one tile. The first :data:`MAX_BASES`
  patterns get a base; an access of a pattern beyond them loads its own row into ``%rd3``;
- a 16-bit access moves one half of its register (``bfi`` after the load, ``shr`` before the store);
- the stream is cut into phases at ``bar.sync``; a phase in which every warp issues the same code (only
  the table's values differ) is written once, else each warp gets its own block behind a branch on
  ``%tid.x / 32``. The barrier is written once, outside any branch.

Each instruction carries a ``.loc`` to the program's source line, so a debugger of the PTX shows the
Python line; :attr:`Lowered.ptx_line` maps every stream position to the PTX line that executes it.

Two options make the kernel checkable on a GPU (``hwcheck run`` launches this very text there and on the
simulator):

- ``snapshots``: a parameter ``snap``; each destination register is stored after its instruction to
  ``snap[slot * threads + tid]`` (``uint32``). Slots are numbered in code order, one per (emitted instruction,
  destination), so the warps of a uniform phase share them: :attr:`Lowered.snap_slots`
  (``int64[len(stream), 4]``, -1 where none) maps stream positions to slots, ``snap_positions`` counts them.
- ``shared_out``: a parameter ``smem_out``; shared memory is zeroed at entry (a GPU's is not; the simulator's
  and the stream's are), and after a closing ``bar.sync`` its ``ceil(smem_bytes / 4)`` words are copied to
  ``smem_out`` (``uint32``). Launch with the dynamic shared size rounded up to 4 bytes (:attr:`Lowered.smem_launch`).

>>> from warpsim.program.instr import Instr, Op
>>> low = lower([Instr(Op.MOV, w, dst=(0,), imm=7) for w in range(2)], warps=2, regs=1, smem_bytes=0)
>>> [line.strip() for line in low.text.splitlines() if "%r0," in line]
['mov.b32 %r0, 0;', 'mov.b32 %r0, 7;']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from warpsim.isa.alu32 import alu_sources
from warpsim.isa.fragments import MMA_REGS
from warpsim.program.instr import Instr, Op

__all__ = ["Lowered", "lower", "KERNEL", "PTX_TARGET", "MAX_BASES", "MAX_PREDICATES"]

KERNEL = "warpsim_program"
PTX_TARGET = ("8.0", "sm_80")        # .version, .target: mma.sync m16n8k16 and ldmatrix need sm_80
MAX_BASES = 256                      # address registers held from entry to exit (beyond: a table load per access)
MAX_PREDICATES = 64                  # predicate registers held from entry to exit (beyond: a table load per use)
OFFSET_SPAN = 1 << 31               # a base's offsets lie within this (each written as a non-negative s32)
_MARKER = re.compile(r"@@(\d+)@@")


@dataclass(frozen=True)
class Lowered:
    """A lowered stream: ``text`` (the PTX module), ``table`` (``int64[rows * threads]``, the per-lane values),
    ``threads``, ``smem_bytes``; ``ptx_line``: ``int64[len(stream)]``, the line of ``text`` (from 1) that
    executes each stream position (shared by the positions of all warps in a uniform phase)."""

    text: str
    table: np.ndarray
    threads: int
    smem_bytes: int
    ptx_line: np.ndarray
    snap_slots: np.ndarray | None = None
    snap_positions: int = 0

    @property
    def smem_launch(self) -> int:
        """The dynamic shared bytes to launch with: ``smem_bytes`` rounded up to whole words."""
        return -(-self.smem_bytes // 4) * 4


def _phases(stream, warps):
    """Each warp's stream positions, cut at ``bar.sync``: ``phases[k][w]``, and the barriers between them:
    ``bars[k][w]``, the position of warp ``w``'s ``k``-th ``bar.sync``; every warp must reach the same number."""
    per_warp = [[[]] for _ in range(warps)]
    bars = [[] for _ in range(warps)]
    for index, instr in enumerate(stream):
        if not 0 <= instr.warp < warps:
            raise ValueError(f"lower: instruction {index} ({instr.ptx}) names warp {instr.warp}, "
                             f"but the CTA has {warps} warps")
        if instr.op == Op.BAR:
            per_warp[instr.warp].append([])
            bars[instr.warp].append(index)
        else:
            per_warp[instr.warp][-1].append(index)
    counts = [len(p) - 1 for p in per_warp]
    if len(set(counts)) != 1:
        raise ValueError(f"lower: warps reach different numbers of bar.sync: {counts}")
    return ([[per_warp[w][k] for w in range(warps)] for k in range(counts[0] + 1)],
            [[bars[w][k] for w in range(warps)] for k in range(counts[0])])


class _Base:
    """A base register of ``space`` (``"shared"`` or ``"global"``): table row ``index``, its values per warp in
    ``row`` (warp -> ``int64[32]``; warps no access has issued it for yet are absent, and 0 in the table);
    ``lo``/``hi``: the lowest and highest offset an access reads it with."""

    def __init__(self, space, index, row):
        self.space, self.index, self.row = space, index, row
        self.lo = self.hi = 0

    def offset(self, values):
        """The constant ``c`` with ``values[w] == row[w] + c`` on every lane of every warp of ``values``
        (warp -> ``int64[32]``), the warps the row lacks taking ``values[w] - c``; None if there is none, or if
        the base's offsets would then span :data:`OFFSET_SPAN` or more (PTX's ``[reg+imm]`` is a 32-bit signed
        immediate, and :meth:`_Writer.finish` writes them from the lowest)."""
        c = None
        for w, v in values.items():
            if w in self.row:
                diff = v - self.row[w]
                if (diff != diff[0]).any() or (c is not None and diff[0] != c):
                    return None
                c = int(diff[0])
        c = 0 if c is None else c
        if max(self.hi, c) - min(self.lo, c) >= OFFSET_SPAN:
            return None
        self.lo, self.hi = min(self.lo, c), max(self.hi, c)
        for w, v in values.items():
            if w not in self.row:
                self.row[w] = v - c
        return c


class _Writer:
    """PTX lines and table rows, written in code order."""

    def __init__(self, stream, threads, files, snapshots):
        self.stream, self.threads, self.files = stream, threads, files
        self.snap_slots = np.full((len(stream), 4), -1, np.int64) if snapshots else None
        self.snap_positions = 0
        self.lines: list[str] = []
        self.rows: list[dict] = []                      # per table row: warp -> int64[32]
        self.ptx_line = np.zeros(len(stream), np.int64)
        self.label = 0
        self.loc = None
        self.bases: list[_Base] = []
        self.predicates: list[tuple[int, dict]] = []    # per predicate register: its table row, warp -> bool[32]
        self.offsets: list[tuple[int, int]] = []        # per offset marker: (base, offset from its first row)

    def emit(self, text):
        self.lines.append(text)

    def row(self, by_warp, field):
        """A new table row holding ``field`` of the instructions ``by_warp`` (warp -> stream position); the
        PTX that loads it into ``%rd3``."""
        self.rows.append({w: np.asarray(getattr(self.stream[i], field), np.int64) for w, i in by_warp.items()})
        return f"ld.global.u64 %rd3, [%rd1+{8 * self.threads * (len(self.rows) - 1)}];"

    def predicate(self, by_warp):
        """The guard (``@%q<k> ``) of an instruction issued by the warps of ``by_warp`` with a predicate: the
        register of an earlier one with the same value in every thread that issues it, else a new one; past
        :data:`MAX_PREDICATES`, a row of its own loaded into ``%p1`` here."""
        values = {w: np.asarray(self.stream[i].pred, np.int64) != 0 for w, i in by_warp.items()}
        for k, (_, row) in enumerate(self.predicates):
            if all(w not in row or np.array_equal(row[w], v) for w, v in values.items()):
                break
        else:
            if len(self.predicates) == MAX_PREDICATES:
                self.emit("\t" + self.row(by_warp, "pred"))
                self.emit("\tsetp.ne.s64 %p1, %rd3, 0;")
                return "@%p1 "
            k = len(self.predicates)
            self.rows.append({})
            self.predicates.append((len(self.rows) - 1, self.rows[-1]))
        row = self.predicates[k][1]
        for w, v in values.items():
            row.setdefault(w, v)
        return f"@%q{k} "

    def address(self, by_warp, instr):
        """``(setup, operand)``: the address operand of ``instr``, issued by the warps of ``by_warp``: a base
        register and an offset (a marker :meth:`finish` replaces), or past :data:`MAX_BASES` a row of its own."""
        space = "global" if instr.space == "global" else "shared"
        if instr.space not in ("global", "shared") and instr.op != Op.LDMATRIX:
            raise ValueError(f"lower: {instr.ptx}: unknown state space {instr.space!r}")
        values = {w: np.asarray(self.stream[i].addr, np.int64) for w, i in by_warp.items()}
        for k, base in enumerate(self.bases):
            if base.space == space:
                offset = base.offset(values)
                if offset is not None:
                    break
        else:
            if len(self.bases) == MAX_BASES:
                return [self.row(by_warp, "addr")] + _address_of_row(space), "[%t1]" if space == "shared" else "[%rd4]"
            k, offset = len(self.bases), 0
            self.rows.append({})
            self.bases.append(_Base(space, len(self.rows) - 1, self.rows[-1]))
            self.bases[k].offset(values)
        self.offsets.append((k, offset))
        register = "%a" if space == "shared" else "%g"
        return [], f"[{register}{k}+@@{len(self.offsets) - 1}@@]"

    def finish(self):
        """The entry lines that set the predicate registers and load the bases; every base moved down to its
        lowest offset so that each offset written is non-negative, and the markers replaced by them."""
        low = [0] * len(self.bases)
        for k, offset in self.offsets:
            low[k] = min(low[k], offset)
        for base, shift in zip(self.bases, low):
            for w in base.row:
                base.row[w] = base.row[w] + shift
        def written(marker):
            k, offset = self.offsets[int(marker.group(1))]
            return str(offset - low[k])

        self.lines = [_MARKER.sub(written, line) if "@@" in line else line for line in self.lines]
        entry = []
        for k, (index, _) in enumerate(self.predicates):
            entry += [f"\tld.global.u64 %rd3, [%rd1+{8 * self.threads * index}];", f"\tsetp.ne.s64 %q{k}, %rd3, 0;"]
        for k, base in enumerate(self.bases):
            where = f"[%rd1+{8 * self.threads * base.index}]"
            if base.space == "shared":
                entry += [f"\tld.global.u32 %a{k}, {where};", f"\tadd.u32 %a{k}, %a{k}, %r_smem;"]
            else:
                entry += [f"\tld.global.u64 %g{k}, {where};", f"\tadd.s64 %g{k}, %g{k}, %rd0;"]
        return entry

    def instruction(self, by_warp):
        """One instruction issued alike by the warps of ``by_warp`` (warp -> stream position)."""
        first = self.stream[next(iter(by_warp.values()))]
        if first.line is not None:
            loc = (self.files.setdefault(first.line.file, len(self.files) + 1), first.line.line)
            if loc != self.loc:
                self.emit(f"\t.loc {loc[0]} {loc[1]} 0")
                self.loc = loc
        guard = "" if first.pred is None else self.predicate(by_warp)   # lanes where it is 0 do nothing
        if first.op == Op.MOVL:
            setup, where = [self.row(by_warp, "addr")], None
        elif first.addr is not None:
            setup, where = self.address(by_warp, first)
        else:
            setup, where = [], None
        setup, body = _code(first, setup, where)
        for line in setup:
            self.emit("\t" + line)
        for line in body:
            self.emit("\t" + guard + line)
        for i in by_warp.values():
            self.ptx_line[i] = len(self.lines)
        if self.snap_slots is not None:
            if len(first.dst) > 4:
                raise ValueError(f"lower: {first.ptx} writes {len(first.dst)} registers; snapshots hold 4")
            for j, reg in enumerate(first.dst):
                slot = self.snap_positions
                self.snap_positions += 1
                self.snap_slots[list(by_warp.values()), j] = slot
                self.emit(f"\tst.global.b32 [%rd5+{4 * self.threads * slot}], %r{reg};")

    def barrier(self, positions):
        """The ``bar.sync`` every warp reaches at ``positions`` (one stream position per warp)."""
        line = self.stream[positions[0]].line
        if line is not None:
            loc = (self.files.setdefault(line.file, len(self.files) + 1), line.line)
            if loc != self.loc:
                self.emit(f"\t.loc {loc[0]} {loc[1]} 0")
                self.loc = loc
        self.emit("\tbar.sync 0;")
        self.ptx_line[list(positions)] = len(self.lines)

    def table(self):
        table = np.zeros(max(1, len(self.rows)) * self.threads, np.int64)
        for r, row in enumerate(self.rows):
            for warp, values in row.items():
                start = r * self.threads + 32 * warp
                table[start:start + 32] = values
        return table


def lower(stream: list[Instr], *, warps: int, regs: int, smem_bytes: int, zero=None, snapshots: bool = False,
          shared_out: bool = False) -> Lowered:
    """Lower ``stream`` for a CTA of ``warps`` warps with ``regs`` registers per thread (see the module
    docstring); ``zero``: the registers to set to 0 at entry (None: all of them); ``snapshots``, ``shared_out``:
    the GPU check's outputs (see the module docstring). ``ValueError`` naming the instruction for a register
    outside ``regs``, a warp outside the CTA, or warps that reach different numbers of ``bar.sync``."""
    threads = 32 * warps
    for index, instr in enumerate(stream):
        for reg in instr.dst + instr.src:
            if not 0 <= reg < regs:
                raise ValueError(f"lower: instruction {index} ({instr.ptx}) uses register r{reg}, "
                                 f"outside the {regs} registers of a thread")
    files: dict[str, int] = {}
    w = _Writer(stream, threads, files, snapshots)
    phases, bars = _phases(stream, warps)
    for k, phase in enumerate(phases):
        if k:
            w.barrier(bars[k - 1])
        lengths = {len(p) for p in phase}
        uniform = len(lengths) == 1 and all(len({stream[phase[v][j]].key() for v in range(warps)}) == 1
                                            for j in range(len(phase[0])))
        if uniform:
            for j in range(len(phase[0])):
                w.instruction({v: phase[v][j] for v in range(warps)})
            continue
        for v in range(warps):
            if not phase[v]:
                continue
            w.label += 1
            w.emit(f"\tsetp.ne.u32 %p2, %r_warp, {v};")
            w.emit(f"\t@%p2 bra $L_skip{w.label};")
            for i in phase[v]:
                w.instruction({v: i})
            w.emit(f"$L_skip{w.label}:")
    entry = w.finish()
    head = [f".version {PTX_TARGET[0]}", f".target {PTX_TARGET[1]}", ".address_size 64", ""]
    head += [f'.file {n} "{path}"' for path, n in files.items()]
    head += ["", ".extern .shared .align 128 .b8 smem[];", "",
             f".visible .entry {KERNEL}(.param .u64 gmem, .param .u64 table"
             + (", .param .u64 snap" if snapshots else "") + (", .param .u64 smem_out" if shared_out else "") + ")",
             f".reqntid {threads}, 1, 1", "{",
             f"\t.reg .b32 %r<{max(regs, 1)}>;",
             "\t.reg .b32 %r_warp, %r_smem, %t<4>;",
             "\t.reg .b16 %h<1>;",
             "\t.reg .b64 %rd<7>;",
             "\t.reg .pred %p<3>;"]
    if w.predicates:
        head.append(f"\t.reg .pred %q<{len(w.predicates)}>;")
    shared = sum(base.space == "shared" for base in w.bases)
    if shared:
        head.append(f"\t.reg .b32 %a<{len(w.bases)}>;")
    if shared < len(w.bases):
        head.append(f"\t.reg .b64 %g<{len(w.bases)}>;")
    head += [

             "\tld.param.u64 %rd0, [gmem];",
             "\tcvta.to.global.u64 %rd0, %rd0;",
             "\tld.param.u64 %rd1, [table];",
             "\tcvta.to.global.u64 %rd1, %rd1;",
             "\tmov.u32 %t0, %tid.x;",
             "\tmul.wide.u32 %rd2, %t0, 8;",
             "\tadd.s64 %rd1, %rd1, %rd2;",
             "\tshr.u32 %r_warp, %t0, 5;",
             "\tmov.u32 %r_smem, smem;"] + entry
    if snapshots:                                         # %rd5 = &snap[tid]
        head += ["\tld.param.u64 %rd5, [snap];", "\tcvta.to.global.u64 %rd5, %rd5;",
                 "\tmul.wide.u32 %rd6, %t0, 4;", "\tadd.s64 %rd5, %rd5, %rd6;"]
    head += [f"\tmov.b32 %r{r}, 0;" for r in (range(regs) if zero is None else sorted(zero))]
    tail = ["\tret;", "}", ""]
    if shared_out:
        head += ["\tmov.b32 %t3, 0;"] + _word_loop(threads, smem_bytes, "zero", ["st.shared.b32 [%t2], %t3;"])
        head += ["\tbar.sync 0;"]
        tail = (["\tbar.sync 0;", "\tld.param.u64 %rd6, [smem_out];", "\tcvta.to.global.u64 %rd6, %rd6;"]
                + _word_loop(threads, smem_bytes, "copy", ["ld.shared.b32 %t3, [%t2];", "cvt.u64.u32 %rd2, %t1;",
                                                           "add.s64 %rd4, %rd6, %rd2;", "st.global.b32 [%rd4], %t3;"])
                + tail)
    offset = len(head)
    text = "\n".join(head + w.lines + tail)
    return Lowered(text=text, table=w.table(), threads=threads, smem_bytes=smem_bytes,
                   ptx_line=w.ptx_line + offset, snap_slots=w.snap_slots, snap_positions=w.snap_positions)


def _word_loop(threads, smem_bytes, name, body):
    """PTX lines of a loop over the words of shared memory, thread ``tid`` taking words ``tid, tid + threads, ...``:
    ``%t1`` is the word's byte offset, ``%t2`` its shared address, when ``body`` runs."""
    return ["\tshl.b32 %t1, %t0, 2;", f"$L_{name}:", f"\tsetp.ge.u32 %p1, %t1, {-(-smem_bytes // 4) * 4};",
            f"\t@%p1 bra $L_{name}_done;", "\tadd.u32 %t2, %t1, %r_smem;"] + ["\t" + line for line in body] + [
            f"\tadd.u32 %t1, %t1, {4 * threads};", f"\tbra $L_{name};", f"$L_{name}_done:"]


def _vec(regs, braces=False):
    names = [f"%r{r}" for r in regs]
    return names[0] if len(names) == 1 and not braces else "{" + ", ".join(names) + "}"


def _address_of_row(space):
    """The PTX that turns the table value in ``%rd3`` into an address of ``space`` (``ldmatrix``: shared)."""
    if space == "global":
        return ["add.s64 %rd4, %rd0, %rd3;"]
    return ["cvt.u32.u64 %t1, %rd3;", "add.u32 %t1, %t1, %r_smem;"]


def _code(instr: Instr, setup: list[str], where: str | None) -> tuple[list[str], list[str]]:
    """The PTX of one instruction as ``(setup, body)``: ``setup`` computes operands (for ``MOVL``, loads its
    table value into ``%rd3``), ``where`` is the address operand of an access, ``body`` is what a predicate
    guards."""
    op, d, s = instr.op, instr.dst, instr.src
    if op == Op.MOV:
        return [], [f"mov.b32 %r{r}, {instr.imm & 0xFFFFFFFF};" for r in d]
    if op == Op.MOVL:
        return setup, [f"cvt.u32.u64 %r{d[0]}, %rd3;"]
    if op in (Op.LD, Op.ST):
        if instr.bits == 16:
            (reg,) = d if op == Op.LD else s
            lo = 16 * instr.half
            if op == Op.LD:
                return setup, [f"{instr.ptx} %h0, {where};", "cvt.u32.u16 %t2, %h0;",
                               f"bfi.b32 %r{reg}, %t2, %r{reg}, {lo}, 16;"]
            return setup + [f"shr.u32 %t2, %r{reg}, {lo};", "cvt.u16.u32 %h0, %t2;"], [f"{instr.ptx} {where}, %h0;"]
        if op == Op.LD:
            return setup, [f"{instr.ptx} {_vec(d)}, {where};"]
        return setup, [f"{instr.ptx} {where}, {_vec(s)};"]
    if op == Op.LDMATRIX:
        return setup, [f"{instr.ptx} {_vec(d, braces=True)}, {where};"]
    if op == Op.MMA:
        na, nb, nc = MMA_REGS[(instr.shape, instr.cd)]
        if len(s) != na + nb + nc or len(d) != nc:
            raise ValueError(f"lower: {instr.ptx} needs {na}+{nb}+{nc} source and {nc} destination registers")
        groups = [d, s[:na], s[na:na + nb], s[na + nb:]]
        return [], [f"{instr.ptx} " + ", ".join("{" + ", ".join(f"%r{r}" for r in g) + "}" for g in groups) + ";"]
    if op == Op.CVT:
        return [], [f"{instr.ptx} %r{d[0]}, %r{s[0]}, %r{s[1]};"]
    if op == Op.ALU:
        if len(s) != alu_sources(instr.form):
            raise ValueError(f"lower: {instr.form} needs {alu_sources(instr.form)} source registers, got {len(s)}")
        return [], [f"{instr.form} " + ", ".join(f"%r{r}" for r in d + s) + ";"]
    if op == Op.SHFL:
        return [], [f"{instr.ptx} %r{d[0]}, %r{s[0]}, {instr.imm}, 0x1f, 0xffffffff;"]
    raise ValueError(f"lower: cannot lower {instr.ptx}")
