"""An instrumented copy of a PTX kernel that records every register it writes into a trace buffer.

:func:`instrument` rewrites the text of one ``.entry`` and changes nothing else: the kernel gains a last
parameter ``.param .u64 __warpsim_trace`` (a global buffer), a prologue, and after each instruction of
the entry's body that writes registers a few instructions that store each destination register:

- a *record* is 16 bytes, four ``u32``: ``site`` (which instruction and which destination, an index
  into :attr:`Instrumented.sites`), ``step`` (this thread's dynamic step: how many register-writing
  instructions it had executed before this one), and the register's bits ``lo``, ``hi`` (``hi`` is 0
  for registers of 32 bits or fewer; a 16-bit register is zero-extended; a predicate is 0 or 1);
- each thread owns ``header_bytes + capacity * 16`` bytes of the buffer, in linear thread order over the grid
  (``tid`` x fastest within a CTA, CTAs x fastest): a 32-byte header ``[steps, records, 0, 0,
  shared window lo, hi, local window lo, hi]``, the shared-space address (``u64``) of each ``.shared``
  variable of the module (:attr:`Instrumented.shared`), then, when the entry declares ``.local``
  variables, the local-space and the generic address (``u64`` each) of the first one, its *depot*
  (:attr:`Instrumented.depot`; nvcc's ``__local_depotN``, the thread's stack frame), the whole padded
  to 16 bytes, then up to ``capacity`` records. ``steps`` and ``records`` are stored at every
  ``ret``/``exit`` of the entry; the windows (``cvta.shared``/``cvta.local`` of address 0) and the
  depot's addresses let a comparison relate addresses across machines;
- only steps in the window ``[first, last)`` are recorded, and at most ``capacity`` records: a full
  buffer keeps the first records and drops the rest (the header's ``steps`` still counts them all).

The records of an instruction follow it directly (on the lines after it, or on its line when
another statement follows there). A guarded instruction (``@%p``) is recorded, and counted as a step, only where its guard is true; an
instruction that overwrites its own guard has the guard copied first. Registers written by called
``.func`` bodies are not recorded (their ``call`` writes no register). Values that differ between
machines by nature (``%clock``, ``%clock64``, ``%globaltimer``, ``%smid``, ...) are recorded but their
sites are marked ``deterministic=False``; so are an ``atom``'s results (the old value depends on the
order in which threads reach the location, which the GPU does not fix; memory's final contents are
compared as buffers).

>>> text = '''.version 8.0
... .target sm_80
... .address_size 64
... .visible .entry k(.param .u64 out)
... {
...   .reg .b32 %r<3>; .reg .pred %p<2>;
...   mov.u32 %r1, %tid.x;
...   setp.lt.u32 %p1, %r1, 4;
...   @%p1 add.u32 %r1, %r1, 7;
...   ret;
... }'''
>>> ins = instrument(text, "k", capacity=8)
>>> [(s.register, s.opcode) for s in ins.sites]
[('%r1', 'mov.u32'), ('%p1', 'setp.lt.u32'), ('%r1', 'add.u32')]
>>> ins.thread_bytes, ".param .u64 __warpsim_trace" in ins.text
(160, True)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from warpsim.ptx.syntax import Instruction, parse_module, type_bytes

__all__ = ["TRACE_PARAM", "HEADER_BYTES", "RECORD_BYTES", "Site", "Instrumented", "instrument", "writes_registers"]

TRACE_PARAM = "__warpsim_trace"
HEADER_BYTES = 32
RECORD_BYTES = 16
NO_DESTINATION = {"st", "red", "bar", "barrier", "bra", "brx", "ret", "exit", "call", "cp", "membar", "fence",
                  "prefetch", "prefetchu", "stmatrix", "trap", "nanosleep", "griddepcontrol", "brkpt", "pmevent",
                  "wmma", "setmaxnreg", "discard", "applypriority", "createpolicy_", "cp.async", "multimem",
                  "st.async", "red.async", "tensormap", "elect_"}
NONDETERMINISTIC = ("%clock", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi", "%smid", "%nsmid",
                    "%gridid", "%warpid", "%nwarpid", "%pm0", "%pm1", "%pm2", "%pm3")
_16 = {"b16", "u16", "s16", "f16", "bf16"}
_8 = {"b8", "u8", "s8"}
_64 = {"b64", "u64", "s64", "f64"}
_32 = {"b32", "u32", "s32", "f32", "f16x2", "bf16x2"}


@dataclass(frozen=True)
class Site:
    """One destination register of one instruction: ``register`` (its PTX name), ``ptx_type`` (its
    declared type), ``opcode`` (the full opcode, ``mma.sync.aligned...``), ``ptx_line`` (in the
    original text), ``loc`` (the ``.loc``: ``(file, line)`` or None; ``inlined_at`` likewise)."""

    index: int
    register: str
    ptx_type: str
    opcode: str
    ptx_line: int
    loc: tuple | None
    inlined_at: tuple | None
    deterministic: bool = True

    def source(self, files) -> str | None:
        """``file:line`` of the ``.loc`` (``files``: the module's ``.file`` table), with its inlining site."""
        if self.loc is None:
            return None
        text = f"{files.get(self.loc[0], f'file{self.loc[0]}')}:{self.loc[1]}"
        if self.inlined_at:
            text += f" (inlined at {files.get(self.inlined_at[0], f'file{self.inlined_at[0]}')}:{self.inlined_at[1]})"
        return text


@dataclass(frozen=True)
class Instrumented:
    """The instrumented text, its kernel, record sites, per-thread capacity and window, and the
    original module's ``.file`` table."""

    text: str
    kernel: str
    sites: tuple
    capacity: int
    window: tuple
    files: dict
    shared: tuple = ()              # (name, bytes or None for .extern) of each .shared variable, in header order
    depot: tuple = ()               # (name, bytes) of the entry's first .local variable; () when it has none

    @property
    def header_bytes(self) -> int:
        words = len(self.shared) + (2 if self.depot else 0)
        return HEADER_BYTES + -(-8 * words // RECORD_BYTES) * RECORD_BYTES

    @property
    def depot_offset(self) -> int:
        """Byte offset in a thread's header of the depot's local-space address (its generic address follows)."""
        return HEADER_BYTES + 8 * len(self.shared)

    @property
    def thread_bytes(self) -> int:
        return self.header_bytes + self.capacity * RECORD_BYTES

    def buffer_bytes(self, threads: int) -> int:
        """Bytes of trace buffer for ``threads`` threads in the grid."""
        return threads * self.thread_bytes


def writes_registers(ins: Instruction) -> list:
    """The destination register operands of ``ins`` (names, ``a|b`` pairs and vectors flattened, sinks
    left out); empty for an instruction without a register destination."""
    full = ".".join((ins.opcode, *ins.mods))
    if ins.opcode in NO_DESTINATION or any(full.startswith(p) for p in NO_DESTINATION if "." in p):
        return []
    if ins.opcode == "mbarrier" and ins.mods[:1] in (("init",), ("inval",), ("expect_tx",), ("complete_tx",)):
        return []
    if ins.opcode == "mbarrier" and "arrive" in ins.mods and ins.operands and ins.operands[0].kind == "sink":
        return []
    if not ins.operands:
        return []
    first = ins.operands[0]
    items = first.items if first.kind == "vec" else [first]
    out = [o.name for o in items if o.kind == "reg"]
    if first.pair is not None and first.pair.kind == "reg":
        out.append(first.pair.name)
    return out


def _plain(name: str) -> str:
    """The register's name as written in the text (the parser's scope suffix ``#k`` removed)."""
    return name.split("#", 1)[0]


def _copy(reg: str, ptx_type: str) -> list | None:
    """Instructions that put ``reg``'s bits into ``%__wl``/``%__wh``; None for a type not recorded."""
    if ptx_type == "pred":
        return [f"selp.u32 %__wl, 1, 0, {reg};", "mov.u32 %__wh, 0;"]
    if ptx_type in _32:
        return [f"mov.b32 %__wl, {reg};", "mov.u32 %__wh, 0;"]
    if ptx_type in _64:
        return [f"mov.b64 {{%__wl, %__wh}}, {reg};"]
    if ptx_type in _16:
        return [f"mov.b16 %__wt16, {reg};", "cvt.u32.u16 %__wl, %__wt16;", "mov.u32 %__wh, 0;"]
    if ptx_type in _8:
        return [f"cvt.u32.u8 %__wl, {reg};", "mov.u32 %__wh, 0;"]
    return None


_DECLS = ("\t.reg .b32 %__ws, %__wn, %__wl, %__wh, %__wsite, %__wt<6>;\n\t.reg .b64 %__wbase, %__wa, %__wo, %__wx<3>;\n"
          "\t.reg .pred %__wq, %__wg;\n\t.reg .b16 %__wt16;\n")


def _prologue(capacity: int, thread_bytes: int, shared, depot) -> list:
    addresses = [f"mov.u64 %__wx0, {name}; st.global.u64 [%__wbase+{HEADER_BYTES + 8 * k}], %__wx0;"
                 for k, (name, _) in enumerate(shared)]
    if depot:
        at = HEADER_BYTES + 8 * len(shared)
        addresses.append(f"mov.u64 %__wx0, {depot[0]}; cvta.local.u64 %__wx1, %__wx0; "
                         f"st.global.u64 [%__wbase+{at}], %__wx0; st.global.u64 [%__wbase+{at + 8}], %__wx1;")
    return [
        f"ld.param.u64 %__wbase, [{TRACE_PARAM}];", "cvta.to.global.u64 %__wbase, %__wbase;",
        "mov.u32 %__wt0, %ctaid.z;", "mov.u32 %__wt1, %nctaid.y;", "mov.u32 %__wt2, %ctaid.y;",
        "mad.lo.s32 %__wt0, %__wt0, %__wt1, %__wt2;", "mov.u32 %__wt1, %nctaid.x;", "mov.u32 %__wt2, %ctaid.x;",
        "mad.lo.s32 %__wt0, %__wt0, %__wt1, %__wt2;",                   # linear CTA index
        "mov.u32 %__wt1, %ntid.x;", "mov.u32 %__wt2, %ntid.y;", "mul.lo.s32 %__wt3, %__wt1, %__wt2;",
        "mov.u32 %__wt4, %ntid.z;", "mul.lo.s32 %__wt3, %__wt3, %__wt4;",   # threads per CTA
        "mov.u32 %__wt4, %tid.z;", "mov.u32 %__wt5, %tid.y;", "mad.lo.s32 %__wt4, %__wt4, %__wt2, %__wt5;",
        "mov.u32 %__wt5, %tid.x;", "mad.lo.s32 %__wt4, %__wt4, %__wt1, %__wt5;",   # linear thread in the CTA
        "mad.lo.s32 %__wt0, %__wt0, %__wt3, %__wt4;",                   # linear thread in the grid
        f"mul.wide.u32 %__wo, %__wt0, {thread_bytes};", "add.s64 %__wbase, %__wbase, %__wo;",
        "mov.u32 %__ws, 0;", "mov.u32 %__wn, 0;",
        "mov.u64 %__wx0, 0;", "cvta.shared.u64 %__wx1, %__wx0;", "cvta.local.u64 %__wx2, %__wx0;",
        "st.global.v2.u32 [%__wbase], {%__ws, %__wn};",
        "st.global.u64 [%__wbase+16], %__wx1;", "st.global.u64 [%__wbase+24], %__wx2;", *addresses,
    ]


def _record(site: int, copy: list, guard: str | None, window: tuple, capacity: int, header: int) -> list:
    first, last = window
    start = (f"setp.ge.and.u32 %__wq, %__ws, {first}, {guard};" if guard else f"setp.ge.u32 %__wq, %__ws, {first};")
    return [start, f"setp.lt.and.u32 %__wq, %__ws, {last}, %__wq;", f"setp.lt.and.u32 %__wq, %__wn, {capacity}, %__wq;",
            *copy, "mul.wide.u32 %__wo, %__wn, 16;", "add.s64 %__wa, %__wbase, %__wo;",
            f"mov.u32 %__wsite, {site};",
            f"@%__wq st.global.v4.u32 [%__wa+{header}], {{%__wsite, %__ws, %__wl, %__wh}};",
            "@%__wq add.u32 %__wn, %__wn, 1;"]


def _statement_start(line: str, col: int) -> int:
    """The 0-based column where the statement whose opcode is at 1-based ``col`` starts (its ``@guard``)."""
    head = line[:col - 1]
    m = re.search(r"@\s*!?\s*[%$\w.]+\s*$", head)
    return m.start() if m else col - 1


def _statement_end(lines, line: int, col: int):
    """``(line, column after its ';')`` of the statement whose opcode is at 1-based ``line``, 0-based ``col``."""
    while True:
        code = lines[line - 1]
        end = code.find(";", col)
        comment = code.find("//", col)
        if end >= 0 and (comment < 0 or end < comment):
            return line, end + 1
        line, col = line + 1, 0


def _entry_param_end(text: str, kernel: str):
    """``(index of the entry's closing ')' , has params)``, or ``(index after the name, None)`` when the
    entry has no parameter list."""
    m = re.search(r"\.entry\s+" + re.escape(kernel) + r"\s*(\()?", text)
    if m is None:
        raise ValueError(f"instrument: no .entry {kernel} in the text")
    if m.group(1) is None:
        return m.end(), None
    depth, i = 1, m.end()
    while depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return i - 1, bool(text[m.end():i - 1].strip())


def instrument(text: str, kernel: str, *, capacity: int = 4096, window: tuple = (0, 0xFFFFFFFF),
               filename: str = "<ptx>") -> Instrumented:
    """The instrumented copy of ``kernel`` in the PTX ``text`` (see the module docstring).

    ``capacity``: records per thread; ``window``: ``(first, last)`` dynamic steps to record.
    ``ValueError`` for a kernel not in the text or a bad window.
    """
    first, last = (int(window[0]), int(window[1]))
    if not 0 <= first < last <= 0xFFFFFFFF:
        raise ValueError(f"--trace-window {first}:{last}: expected 0 <= FROM < TO < 2**32")
    if capacity < 1:
        raise ValueError(f"instrument: capacity must be at least 1, got {capacity}")
    module = parse_module(text, filename)
    f = module.functions.get(kernel)
    if f is None or not f.entry or f.declared_only:
        raise ValueError(f"instrument: no kernel {kernel!r} in {filename}")
    types = {r.name: r.type for r in f.regs}
    shared = tuple((v.name, None if v.extern else v.count * type_bytes(v.type) * v.vector)
                   for v in module.variables if v.space == "shared")
    depot = next(((v.name, v.count * type_bytes(v.type) * v.vector) for v in f.locals if v.space == "local"), ())
    header = Instrumented("", kernel, (), capacity, (first, last), {}, shared, depot).header_bytes
    thread_bytes = header + capacity * RECORD_BYTES
    lines = text.split("\n")
    before, after = {}, {}          # (line, col) -> text to insert; line -> lines to add after
    sites = []
    for item in f.body:
        if not isinstance(item, Instruction):
            continue
        tok = item.token
        full = ".".join((item.opcode, *item.mods))
        guard = None if item.guard is None else ("!" if item.guard_neg else "") + _plain(item.guard)
        if item.opcode in ("ret", "exit"):
            pre = f"{'@' + guard + ' ' if guard else ''}st.global.v2.u32 [%__wbase], {{%__ws, %__wn}}; "
            before[(tok.line, _statement_start(lines[tok.line - 1], tok.col))] = pre
            continue
        dests = writes_registers(item)
        if not dests:
            continue
        if item.guard is not None and item.guard in dests:
            before[(tok.line, _statement_start(lines[tok.line - 1], tok.col))] = \
                f"mov.pred %__wg, {_plain(item.guard)}; "
            guard = ("!" if item.guard_neg else "") + "%__wg"
        deterministic = item.opcode != "atom" and not any(
            o.kind == "sreg" and o.name.split(".")[0] in NONDETERMINISTIC for o in item.operands[1:])
        block = []
        for reg in dests:
            copy = _copy(_plain(reg), types.get(reg, ""))
            if copy is None:
                continue
            loc = item.loc
            sites.append(Site(len(sites), _plain(reg), types[reg], full, tok.line,
                              None if loc is None else (loc.file, loc.line),
                              None if loc is None or loc.inlined_at is None else (loc.inlined_at.file,
                                                                                  loc.inlined_at.line),
                              deterministic))
            block += _record(sites[-1].index, copy, guard, (first, last), capacity, header)
        block.append(f"@{guard} add.u32 %__ws, %__ws, 1;" if guard else "add.u32 %__ws, %__ws, 1;")
        end, col = _statement_end(lines, tok.line, tok.col - 1)
        if re.sub(r"//.*|/\*.*?\*/", "", lines[end - 1][col:]).strip():
            before[(end, col)] = " " + " ".join(block) + before.get((end, col), "")   # more on the line
        else:
            after.setdefault(end, []).extend(block)
    # the prologue goes where the body's first statement starts, the declarations after the body's '{'
    start = next((i for i in f.body), None)
    if start is None:
        raise ValueError(f"instrument: kernel {kernel} has an empty body")
    stok = start.token
    col = _statement_start(lines[stok.line - 1], stok.col) if isinstance(start, Instruction) else stok.col - 1
    prologue = " ".join(_prologue(capacity, thread_bytes, shared, depot)) + " "
    before[(stok.line, col)] = prologue + before.get((stok.line, col), "")
    out = []
    for n, line in enumerate(lines, 1):
        for (ln, c) in sorted((k for k in before if k[0] == n), reverse=True):
            line = line[:c] + before[(ln, c)] + line[c:]
        out.append(line)
        if n in after:
            out.extend("\t" + s for s in after[n])
    new = "\n".join(out)
    close, has_params = _entry_param_end(new, kernel)
    param = f".param .u64 {TRACE_PARAM}"
    if has_params is None:
        new = new[:close] + f"({param})" + new[close:]
        close += 1
    else:
        if has_params:
            close = len(new[:close].rstrip())
        new = new[:close] + (f",\n\t{param}" if has_params else param) + new[close:]
    brace = new.index("{", close)
    new = new[:brace + 1] + "\n" + _DECLS + new[brace + 1:]
    return Instrumented(new, kernel, tuple(sites), capacity, (first, last), dict(module.files), shared, depot)
