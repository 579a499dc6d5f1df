"""An instrumented copy of a PTX kernel that records every register it writes into a trace buffer.

:func:`instrument` rewrites the text of one ``.entry`` and of the ``.func`` bodies it calls, and changes
nothing else they compute: the kernel gains two last parameters, ``.param .u64 __warpsim_trace`` and
``.param .u64 __warpsim_shared`` (global buffers), the module two ``.global .u64`` variables holding their
addresses (``__warpsim_trace_ptr``, ``__warpsim_shared_ptr``) and the function ``__warpsim_exit`` of
:mod:`hwcheck.device.shared_capture` (each CTA's final shared memory), each instrumented function a prologue, and
after each instruction that writes registers a few instructions that store each destination register:

- a *record* is 16 bytes, four ``u32``: ``site`` (which instruction and which destination, an index
  into :attr:`Instrumented.sites`), ``step`` (this thread's dynamic step: how many register-writing
  instructions it had executed before this one, in the entry and the functions it called), and the
  register's bits ``lo``, ``hi`` (``hi`` is 0 for registers of 32 bits or fewer; a 16-bit register is
  zero-extended; a predicate is 0 or 1);
- each thread owns ``header_bytes + capacity * 16`` bytes of the buffer, in linear thread order over the grid
  (``tid`` x fastest within a CTA, CTAs x fastest): a 32-byte header ``[steps, records, 0, 0,
  shared window lo, hi, local window lo, hi]``, the shared-space address (``u64``) of each ``.shared``
  variable of the module (:attr:`Instrumented.shared`), then, when the entry declares ``.local``
  variables, the local-space and the generic address (``u64`` each) of the first one, its *depot*
  (:attr:`Instrumented.depot`; nvcc's ``__local_depotN``, the thread's stack frame), the whole padded
  to 16 bytes, then up to ``capacity`` records. ``steps`` and ``records`` are stored at every
  ``ret``/``exit``; the windows (``cvta.shared``/``cvta.local`` of address 0) and the
  depot's addresses let a comparison relate addresses across machines;
- only steps in the window ``[first, last)`` are recorded, and at most ``capacity`` records: a full
  buffer keeps the first records and drops the rest (the header's ``steps`` still counts them all).

Called functions: a ``.func`` has neither the parameter nor the entry's registers, so the thread's counts
travel through its header: the caller stores ``steps`` and ``records`` there before a ``call`` and loads
them back after it; the callee's prologue finds its thread's slot from ``__warpsim_trace_ptr`` (its thread
and CTA indices) and loads them, and it stores them at each ``ret``. Its records name it
(:attr:`Site.function`). Every place a thread leaves the kernel (``ret``/``exit`` of the entry, ``exit`` of
a function) calls ``__warpsim_exit``.

The records of an instruction follow it directly (on the lines after it, or on its line when
another statement follows there). A guarded instruction (``@%p``) is recorded, and counted as a step, only
where its guard is true; an instruction that overwrites its own guard has the guard copied first. A
``call`` writes no register (its results are ``.param`` variables; the ``ld.param`` that reads one is
recorded). Values that differ between
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
>>> ins.thread_bytes, ".param .u64 __warpsim_trace" in ins.text, ins.capture.regions
(160, True, ())
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hwcheck.device.shared_capture import (EXIT_FUNCTION, SHARED_PARAM, SHARED_POINTER, SharedCapture, exit_function,
                                           plan_capture)
from hwcheck.device.shared_capture import prologue as shared_prologue
from warpsim.ptx.syntax import Instruction, parse_module, type_bytes

__all__ = ["TRACE_PARAM", "HEADER_BYTES", "RECORD_BYTES", "Site", "Instrumented", "instrument", "writes_registers"]

TRACE_PARAM = "__warpsim_trace"
TRACE_POINTER = "__warpsim_trace_ptr"     # a .global .u64: the trace buffer, for the called .func bodies
HEADER_BYTES = 32
PARAM_OFFSET = 8          # header bytes 8..15: the generic address of the kernel's first parameter, where it takes
                          # parameters' generic addresses (cvta.param); else 0
RECORD_BYTES = 16
NO_DESTINATION = {"st", "red", "bar", "barrier", "bra", "brx", "ret", "exit", "call", "cp", "membar", "fence",
                  "prefetch", "prefetchu", "stmatrix", "trap", "nanosleep", "griddepcontrol", "brkpt", "pmevent",
                  "wmma", "wgmma", "mbarrier", "setmaxnreg", "discard", "applypriority", "createpolicy_", "cp.async", "multimem",
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
    function: str = ""              # the .entry or .func whose body holds the instruction

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
    capture: SharedCapture = SharedCapture(())   # the final shared memory captured (hwcheck.device.shared_capture)

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


def _thread_base(thread_bytes: int) -> list:
    """Instructions that add this thread's offset in the trace buffer to ``%__wbase``."""
    return [
        "mov.u32 %__wt0, %ctaid.z;", "mov.u32 %__wt1, %nctaid.y;", "mov.u32 %__wt2, %ctaid.y;",
        "mad.lo.s32 %__wt0, %__wt0, %__wt1, %__wt2;", "mov.u32 %__wt1, %nctaid.x;", "mov.u32 %__wt2, %ctaid.x;",
        "mad.lo.s32 %__wt0, %__wt0, %__wt1, %__wt2;",                   # linear CTA index
        "mov.u32 %__wt1, %ntid.x;", "mov.u32 %__wt2, %ntid.y;", "mul.lo.s32 %__wt3, %__wt1, %__wt2;",
        "mov.u32 %__wt4, %ntid.z;", "mul.lo.s32 %__wt3, %__wt3, %__wt4;",   # threads per CTA
        "mov.u32 %__wt4, %tid.z;", "mov.u32 %__wt5, %tid.y;", "mad.lo.s32 %__wt4, %__wt4, %__wt2, %__wt5;",
        "mov.u32 %__wt5, %tid.x;", "mad.lo.s32 %__wt4, %__wt4, %__wt1, %__wt5;",   # linear thread in the CTA
        "mad.lo.s32 %__wt0, %__wt0, %__wt3, %__wt4;",                   # linear thread in the grid
        f"mul.wide.u32 %__wo, %__wt0, {thread_bytes};", "add.s64 %__wbase, %__wbase, %__wo;",
    ]


def _prologue(thread_bytes: int, shared, depot, capture, kernel: str, param=None) -> list:
    addresses = [f"mov.u64 %__wx0, {name}; st.global.u64 [%__wbase+{HEADER_BYTES + 8 * k}], %__wx0;"
                 for k, (name, _) in enumerate(shared)]
    if param:
        addresses.append(f"mov.u64 %__wx0, {param}; cvta.param.u64 %__wx0, %__wx0; "
                         f"st.global.u64 [%__wbase+{PARAM_OFFSET}], %__wx0;")
    if depot:
        at = HEADER_BYTES + 8 * len(shared)
        addresses.append(f"mov.u64 %__wx0, {depot[0]}; cvta.local.u64 %__wx1, %__wx0; "
                         f"st.global.u64 [%__wbase+{at}], %__wx0; st.global.u64 [%__wbase+{at + 8}], %__wx1;")
    return [
        *shared_prologue(capture, kernel, True, ("%__wt0", "%__wt1", "%__wt2"), "%__wx1", "%__wx0"),
        f"ld.param.u64 %__wbase, [{TRACE_PARAM}];", "cvta.to.global.u64 %__wbase, %__wbase;",
        f"st.global.u64 [{TRACE_POINTER}], %__wbase;", *_thread_base(thread_bytes),
        "mov.u32 %__ws, 0;", "mov.u32 %__wn, 0;",
        "mov.u64 %__wx0, 0;", "cvta.shared.u64 %__wx1, %__wx0;", "cvta.local.u64 %__wx2, %__wx0;",
        "st.global.v2.u32 [%__wbase], {%__ws, %__wn};",
        "st.global.u64 [%__wbase+16], %__wx1;", "st.global.u64 [%__wbase+24], %__wx2;", *addresses,
    ]


def _func_prologue(thread_bytes: int, capture, name: str) -> list:
    """A called ``.func``'s: the addresses of its ``.shared`` variables for the capture, its thread's trace slot,
    and the step and record counts its caller stored there."""
    return [*shared_prologue(capture, name, False, ("%__wt0", "%__wt1", "%__wt2"), "%__wx1", "%__wx0"),
            f"ld.global.u64 %__wbase, [{TRACE_POINTER}];", *_thread_base(thread_bytes),
            "ld.global.v2.u32 {%__ws, %__wn}, [%__wbase];"]


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


def _function_brace(text: str, name: str) -> int:
    """The index of the ``{`` that opens the body of function ``name`` in ``text`` (not a declaration)."""
    for m in re.finditer(r"\.(?:entry|func)\s*(?:\([^)]*\))?\s*" + re.escape(name) + r"(?![\w$])", text):
        i = m.end()
        while text[i].isspace():
            i += 1
        if text[i] == "(":
            i = text.index(")", i) + 1
        body, decl = text.find("{", i), text.find(";", i)
        if body >= 0 and (decl < 0 or body < decl):
            return body
    raise ValueError(f"instrument: no body of {name} in the text")


def _body_end(text: str, brace: int) -> int:
    """The index of the ``}`` that closes the body opened at ``brace`` (comments skipped)."""
    depth, i = 0, brace
    while True:
        if text.startswith("//", i):
            i = text.index("\n", i)
        elif text.startswith("/*", i):
            i = text.index("*/", i) + 1
        elif text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1


_FIRST_FUNCTION = re.compile(r"^[ \t]*(?:\.(?:visible|extern|weak|common)\s+)*\.(?:entry|func)\b", re.MULTILINE)


class _Rewrite:
    """Insertions into the lines of a PTX text: ``before[(line, column)]`` text, ``after[line]`` lines."""

    def __init__(self, text: str):
        self.lines = text.split("\n")
        self.before, self.after = {}, {}

    def at(self, line: int, col: int, text: str):
        self.before[(line, col)] = text + self.before.get((line, col), "")

    def at_statement(self, tok, text: str):
        """``text`` before the statement whose opcode is ``tok`` (before its guard)."""
        self.at(tok.line, _statement_start(self.lines[tok.line - 1], tok.col), text)

    def after_statement(self, tok, block: list):
        end, col = _statement_end(self.lines, tok.line, tok.col - 1)
        if re.sub(r"//.*|/\*.*?\*/", "", self.lines[end - 1][col:]).strip():
            self.at(end, col, " " + " ".join(block))            # more on the line: insert right after the ';'
        else:
            self.after.setdefault(end, []).extend(block)

    def text(self) -> str:
        out = []
        for n, line in enumerate(self.lines, 1):
            for (_, c) in sorted((k for k in self.before if k[0] == n), reverse=True):
                line = line[:c] + self.before[(n, c)] + line[c:]
            out.append(line)
            out.extend("\t" + s for s in self.after.get(n, ()))
        return "\n".join(out)


def _callee(ins: Instruction):
    return next((o.name for o in ins.operands if o.kind == "sym"), None) if ins.opcode == "call" else None


def _reachable(module, kernel: str) -> list:
    """The names of the functions with a body that ``kernel`` calls, directly or not, in first-call order."""
    seen, todo = [], [kernel]
    while todo:
        f = module.functions[todo.pop(0)]
        for ins in f.body:
            n = _callee(ins) if isinstance(ins, Instruction) else None
            g = module.functions.get(n)
            if g is not None and not g.declared_only and n not in seen and n != kernel:
                seen.append(n)
                todo.append(n)
    return seen


def _instrument_body(f, entry: bool, rw: _Rewrite, sites: list, window: tuple, capacity: int, header: int,
                     defined: set):
    """Add the records of ``f``'s register-writing instructions, and what its exits and calls need, to ``rw``."""
    types = {r.name: r.type for r in f.regs}
    for item in f.body:
        if not isinstance(item, Instruction):
            continue
        tok = item.token
        full = ".".join((item.opcode, *item.mods))
        guard = None if item.guard is None else ("!" if item.guard_neg else "") + _plain(item.guard)
        when = f"@{guard} " if guard else ""
        if item.opcode in ("ret", "exit"):
            leave = item.opcode == "exit" or entry
            rw.at_statement(tok, f"{when}st.global.v2.u32 [%__wbase], {{%__ws, %__wn}}; "
                                 + (f"{when}call {EXIT_FUNCTION}; " if leave else ""))
            continue
        if _callee(item) in defined:          # the callee continues this thread's counts from its slot
            rw.at_statement(tok, "st.global.v2.u32 [%__wbase], {%__ws, %__wn}; ")
            rw.after_statement(tok, ["ld.global.v2.u32 {%__ws, %__wn}, [%__wbase];"])
            continue
        dests = writes_registers(item)
        if not dests:
            continue
        if item.guard is not None and item.guard in dests:
            rw.at_statement(tok, f"mov.pred %__wg, {_plain(item.guard)}; ")
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
                              deterministic, f.name))
            block += _record(sites[-1].index, copy, guard, window, capacity, header)
        block.append(f"@{guard} add.u32 %__ws, %__ws, 1;" if guard else "add.u32 %__ws, %__ws, 1;")
        rw.after_statement(tok, block)
    start = next((i for i in f.body), None)
    if start is None:
        raise ValueError(f"instrument: function {f.name} has an empty body")
    return start


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
    shared = tuple((v.name, None if v.extern else v.count * type_bytes(v.type) * v.vector)
                   for v in module.variables if v.space == "shared")
    depot = next(((v.name, v.count * type_bytes(v.type) * v.vector) for v in f.locals if v.space == "local"), ())
    header = Instrumented("", kernel, (), capacity, (first, last), {}, shared, depot).header_bytes
    thread_bytes = header + capacity * RECORD_BYTES
    callees = _reachable(module, kernel)
    capture = plan_capture(module, kernel, callees)
    rw = _Rewrite(text)
    sites = []
    for name in (kernel, *callees):
        g = module.functions[name]
        start = _instrument_body(g, g is f, rw, sites, (first, last), capacity, header, set(callees))
        # the prologue goes where the body's first statement starts
        stok = start.token
        col = _statement_start(rw.lines[stok.line - 1], stok.col) if isinstance(start, Instruction) else stok.col - 1
        # a kernel that takes a parameter's generic address (cvta.param: a __grid_constant__ CUtensorMap) records
        # the generic address of its first parameter in the header, for relating such addresses across machines
        param = f.params[0].name if f.params and "cvta.param" in text else None
        pro = (_prologue(thread_bytes, shared, depot, capture, kernel, param) if g is f
               else _func_prologue(thread_bytes, capture, name))
        rw.at(stok.line, col, " ".join(pro) + " ")
    declare, define = exit_function(capture)
    top = _FIRST_FUNCTION.search(text)
    rw.at(text.count("\n", 0, top.start()) + 1, 0,
          f".global .align 8 .u64 {TRACE_POINTER};\n.global .align 8 .u64 {SHARED_POINTER};\n{declare}")
    new = rw.text()
    close, has_params = _entry_param_end(new, kernel)
    params = f".param .u64 {TRACE_PARAM}, .param .u64 {SHARED_PARAM}"
    if has_params is None:
        new = new[:close] + f"({params})" + new[close:]
    else:
        if has_params:
            close = len(new[:close].rstrip())
        new = new[:close] + (f",\n\t{params}" if has_params else params) + new[close:]
    for name in (kernel, *callees):
        brace = _function_brace(new, name)
        end = _body_end(new, brace)           # a body that runs off its end leaves (or returns) there too
        leave = f" call {EXIT_FUNCTION};" if name == kernel else ""
        new = (new[:brace + 1] + "\n" + _DECLS + new[brace + 1:end]
               + f"\tst.global.v2.u32 [%__wbase], {{%__ws, %__wn}};{leave} ret;\n" + new[end:])
    new = new.rstrip("\n") + "\n\n" + define
    return Instrumented(new, kernel, tuple(sites), capacity, (first, last), dict(module.files), shared, depot,
                        capture)
