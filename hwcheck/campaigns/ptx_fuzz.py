"""``hwcheck fuzz``: random valid integer PTX programs, each run on the GPU and the simulator, register by register;
``hwcheck fuzz --float``: random valid float programs made for testing ptxas's FMA contraction
(:mod:`hwcheck.campaigns.ptx_fuzz_float`, ``program(seed, kind="float")``).

:func:`program` makes one kernel from a seed (``random.Random(seed)``; the same seed, the same text):

- one CTA of 32 or 64 threads (one or two warps); kernel ``fuzz(.param .u64 inp, .param .u64 out)``;
- each thread loads 8 ``u32`` and 4 ``u64`` words of ``inp`` (random per seed) into ``%r0..%r7`` and
  ``%rd0..%rd3``; the other registers start from ``%tid.x`` and constants, so nothing is read unset;
- a body of straight-line blocks mixing ``add/sub/mul(.lo/.hi/.wide)/mad/div/rem`` (divisors made non-zero
  and never -1), ``min/max/abs/neg``, ``and/or/xor/not``, ``shl/shr``, ``bfe/bfi``, ``prmt``,
  ``popc/clz/brev``, ``setp`` (every integer comparison) / ``selp``, ``cvt`` between integer widths, and,
  where the warp is converged, ``shfl.sync`` / ``vote.sync``; and branching blocks: if/else on
  lane-dependent predicates (reconverging after), loops whose trip count (0..7) depends on the lane, and an
  early exit of some lanes (a jump to the final stores; no warp-wide op follows it);
- every ``%r``/``%rd`` register is stored to ``out`` at the end.

:func:`fuzz` runs ``count`` programs through :func:`hwcheck.runs.ptx_run.run_one` (buffers and the register trace of
the instrumented copy), never stopping at a mismatch, and writes a JSON report (atomically) holding the counts,
the PTX text and records of the first failing programs (register records before buffer records), and for
EVERY failing program its earliest mismatching register record by dynamic step, with the PTX instruction text
and line (``first_mismatches``); ``totals.first_opcodes`` counts the failing programs by the opcode of that
instruction, so the instruction forms to look at (``hwcheck campaign --instr int --forms ...``) stand out.

In float mode the report also holds, for EVERY program (``programs``), its candidate ``mul`` + ``add``/``sub``
pairs (:attr:`FuzzProgram.pairs`: how many, none meaning it had none) and how many of them the simulator fused
(``fused_pairs``, from the loaded module's ``contraction``, None where the simulator did not say), and, for the
campaign, which compiler decided the contraction (``contraction``: ``{"ptxas 13.0.88": programs}``, from
``module.contraction``'s ``compiler`` and ``version``; empty where no loaded module had one). ``totals`` counts
the programs with candidate pairs, the pairs, the fused ones, and the errors by message (``errors_by_message``;
the simulator refuses a program whose fusions it cannot resolve exactly: ``warpsim.ptx.ContractionError``).

>>> program(3) == program(3) and program(3) != program(4)
True
>>> ".entry fuzz(" in program(0).text and program(0).out_words == OUT_WORDS
True
>>> f = program(3, kind="float"); f.kind, f.out_words, len(f.pairs) > 0, f == program(3, kind="float")
('float', 18, True, True)
"""

from __future__ import annotations

import os
import random
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field, fields

from hwcheck.campaigns.ptx_fuzz_float import OUT_WORDS as FLOAT_OUT_WORDS, float_program
from hwcheck.report import new_report, write_json_atomic
from warpsim.isa.arith import DEFAULT_ARCH
from warpsim.ptx.contraction import DECISION

__all__ = ["FuzzProgram", "FuzzTotals", "program", "fuzz", "check_range", "first_record", "CHUNK",
           "KERNEL", "KINDS", "R32", "R64", "IN_WORDS", "OUT_WORDS", "NO_REGISTER", "COMPILED_APART", "ERROR"]

KERNEL = "fuzz"
R32, R64, PREDS = 12, 6, 4           # %r0..%r11, %rd0..%rd5, %p0..%p3 (the body's registers)
IN_WORDS = 16                          # per thread: 8 u32 then 4 u64
OUT_WORDS = R32 + 2 * R64              # per thread: every %r, then every %rd
KEEP = 5                               # failing programs kept in the report
KINDS = ("int", "float")               # program(seed, kind): the integer mode and the float (contraction) mode

_CMP_S = ("eq", "ne", "lt", "le", "gt", "ge")
_CMP_U = ("eq", "ne", "lo", "ls", "hi", "hs")


@dataclass(frozen=True)
class FuzzProgram:
    """One generated kernel: its ``seed``, PTX ``text``, threads per CTA (``block``), ``kind`` (``int`` or
    ``float``) and, for a float program, its candidate ``mul`` + ``add``/``sub`` ``pairs`` (PTX lines)."""

    seed: int
    text: str
    block: int
    kind: str = "int"
    pairs: tuple = ()

    @property
    def out_words(self) -> int:
        """``u32`` words each thread stores to ``out`` (it loads :data:`IN_WORDS` in both kinds)."""
        return FLOAT_OUT_WORDS if self.kind == "float" else OUT_WORDS


class _Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.lines, self.labels = [], 0

    # operands -----------------------------------------------------------------------------------------------
    def r(self):
        return f"%r{self.rng.randrange(R32)}"

    def rd(self):
        return f"%rd{self.rng.randrange(R64)}"

    def p(self):
        return f"%p{self.rng.randrange(PREDS)}"

    def imm32(self):
        return str(self.rng.choice([0, 1, 2, 7, 31, 32, 33, 255, 0x7FFFFFFF, -1, -2, -0x80000000,
                                    self.rng.randrange(1 << 32) - (1 << 31)]))

    def field(self):
        """A bfe/bfi position or length: a register (any value) or an immediate in 0..255."""
        return self.r() if self.rng.random() < 0.6 else str(self.rng.choice([0, 1, 7, 8, 16, 31, 32, 33, 64, 255]))

    def src32(self):
        return self.r() if self.rng.random() < 0.8 else self.imm32()

    def emit(self, line):
        self.lines.append("  " + line)

    def label(self, stem):
        self.labels += 1
        return f"$L_{stem}{self.labels}"

    # instructions -------------------------------------------------------------------------------------------
    def straight(self, converged):
        g, rng = self, self.rng
        kind = rng.choice(["arith", "arith", "mul", "div", "minmax", "logic", "logic", "shift", "bits", "bits",
                           "prmt", "setp", "selp", "cvt", "wide64", "warp" if converged else "arith"])
        if kind == "arith":
            op, t = rng.choice(["add", "sub"]), rng.choice(["u32", "s32"])
            g.emit(f"{op}.{t} {g.r()}, {g.src32()}, {g.src32()};")
        elif kind == "mul":
            form = rng.choice(["mul.lo", "mul.hi", "mul.wide", "mad.lo", "mad.hi", "mad.wide"])
            t = rng.choice(["u32", "s32"])
            if form == "mul.wide":
                g.emit(f"mul.wide.{t} {g.rd()}, {g.r()}, {g.src32()};")
            elif form == "mad.wide":
                g.emit(f"mad.wide.{t} {g.rd()}, {g.r()}, {g.src32()}, {g.rd()};")
            elif form.startswith("mad"):
                g.emit(f"{form}.{t} {g.r()}, {g.r()}, {g.src32()}, {g.src32()};")
            else:
                g.emit(f"{form}.{t} {g.r()}, {g.r()}, {g.src32()};")
        elif kind == "div":
            op, wide = rng.choice(["div", "rem"]), rng.random() < 0.3
            t = rng.choice(["u", "s"]) + ("64" if wide else "32")
            if wide:      # divisor: bit 1 set (never 0), bit 3 clear (never -1)
                g.emit(f"and.b64 %q0, {g.rd()}, -9;")
                g.emit("or.b64 %q0, %q0, 2;")
                g.emit(f"{op}.{t} {g.rd()}, {g.rd()}, %q0;")
            else:
                g.emit(f"and.b32 %t0, {g.r()}, -9;")
                g.emit("or.b32 %t0, %t0, 2;")
                g.emit(f"{op}.{t} {g.r()}, {g.src32()}, %t0;")
        elif kind == "minmax":
            op = rng.choice(["min.u32", "min.s32", "max.u32", "max.s32", "abs.s32", "neg.s32", "min.s64",
                             "max.u64", "abs.s64", "neg.s64"])
            if op.endswith("64"):
                srcs = [g.rd()] if op[:3] in ("abs", "neg") else [g.rd(), g.rd()]
                g.emit(f"{op} {g.rd()}, {', '.join(srcs)};")
            else:
                srcs = [g.r()] if op[:3] in ("abs", "neg") else [g.r(), g.src32()]
                g.emit(f"{op} {g.r()}, {', '.join(srcs)};")
        elif kind == "logic":
            op = rng.choice(["and", "or", "xor", "not"])
            if rng.random() < 0.25:
                srcs = [g.rd()] if op == "not" else [g.rd(), g.rd()]
                g.emit(f"{op}.b64 {g.rd()}, {', '.join(srcs)};")
            else:
                srcs = [g.r()] if op == "not" else [g.r(), g.src32()]
                g.emit(f"{op}.b32 {g.r()}, {', '.join(srcs)};")
        elif kind == "shift":
            op = rng.choice(["shl.b", "shr.b", "shr.u", "shr.s"])
            amount = g.r() if rng.random() < 0.5 else str(rng.choice([0, 1, 5, 16, 31, 32, 40, 63, 64]))
            if rng.random() < 0.3:
                g.emit(f"{op}64 {g.rd()}, {g.rd()}, {amount};")
            else:
                g.emit(f"{op}32 {g.r()}, {g.r()}, {amount};")
        elif kind == "bits":
            op = rng.choice(["bfe.u32", "bfe.s32", "bfi.b32", "popc.b32", "clz.b32", "brev.b32", "popc.b64",
                             "clz.b64", "brev.b64", "bfe.u64", "bfe.s64"])
            if op.startswith("bfe"):
                src = g.rd() if op.endswith("64") else g.r()
                dst = g.rd() if op.endswith("64") else g.r()
                g.emit(f"{op} {dst}, {src}, {g.field()}, {g.field()};")
            elif op == "bfi.b32":
                g.emit(f"bfi.b32 {g.r()}, {g.r()}, {g.r()}, {g.field()}, {g.field()};")
            elif op == "brev.b64":
                g.emit(f"brev.b64 {g.rd()}, {g.rd()};")
            else:
                g.emit(f"{op} {g.r()}, {g.rd() if op.endswith('64') else g.r()};")
        elif kind == "prmt":
            mode = rng.choice(["", "", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"])
            g.emit(f"prmt.b32{mode} {g.r()}, {g.r()}, {g.r()}, {g.src32()};")
        elif kind == "setp":
            t = rng.choice(["u32", "s32", "u64", "s64", "b32"])
            cmp = rng.choice(_CMP_S if t[0] == "s" else _CMP_U if t[0] == "u" else ("eq", "ne"))
            a, b = (g.rd(), g.rd()) if t.endswith("64") else (g.r(), g.src32())
            if rng.random() < 0.3:
                g.emit(f"setp.{cmp}.{rng.choice(['and', 'or', 'xor'])}.{t} {g.p()}, {a}, {b}, {g.p()};")
            else:
                g.emit(f"setp.{cmp}.{t} {g.p()}, {a}, {b};")
        elif kind == "selp":
            if rng.random() < 0.3:
                g.emit(f"selp.b64 {g.rd()}, {g.rd()}, {g.rd()}, {g.p()};")
            else:
                g.emit(f"selp.b32 {g.r()}, {g.src32()}, {g.src32()}, {g.p()};")
        elif kind == "cvt":
            form = rng.choice(["u32.u8", "u32.s8", "s32.s8", "u32.u16", "s32.s16", "u64.u32", "s64.s32",
                               "u64.s32", "u32.u64", "s32.s64", "u64.u16", "s64.s8", "s16.s32.sat", "u8.u32.sat",
                               "u32.s64.sat", "s32.u32.sat"])
            parts = form.split(".")
            dst_t, src_t = parts[0], parts[1]
            sat = ".sat" if len(parts) == 3 else ""
            dst = g.rd() if dst_t.endswith("64") else g.r()
            src = g.rd() if src_t.endswith("64") else g.r()
            g.emit(f"cvt{sat}.{dst_t}.{src_t} {dst}, {src};")
        elif kind == "wide64":
            op = rng.choice(["add.u64", "sub.s64", "mul.lo.u64", "mul.hi.s64", "mul.hi.u64", "mad.lo.s64"])
            srcs = [g.rd(), g.rd()] + ([g.rd()] if op.startswith("mad") else [])
            g.emit(f"{op} {g.rd()}, {', '.join(srcs)};")
        else:
            form = rng.choice(["shfl.idx", "shfl.up", "shfl.down", "shfl.bfly", "vote.all", "vote.any", "vote.uni",
                               "vote.ballot"])
            if form.startswith("shfl"):
                # c: clamp lane in bits 0-4, segment mask in bits 8-12 (widths 32, 8, 4)
                c = rng.choice(["0x0", "0x1c00"] if form == "shfl.up" else ["0x1f", "0x1c1f", "0x0", "0x181f"])
                lane = g.r() if rng.random() < 0.5 else str(rng.randrange(32))
                pred = f"|{g.p()}" if rng.random() < 0.5 else ""
                g.emit(f"{form.replace('shfl', 'shfl.sync')}.b32 {g.r()}{pred}, {g.r()}, {lane}, {c}, 0xffffffff;")
            elif form == "vote.ballot":
                g.emit(f"vote.sync.ballot.b32 {g.r()}, {g.p()}, 0xffffffff;")
            else:
                neg = "!" if rng.random() < 0.3 else ""
                g.emit(f"{form.replace('vote', 'vote.sync')}.pred {g.p()}, {neg}{g.p()}, 0xffffffff;")

    def lane_predicate(self, pred="%p0"):
        """``pred`` set from a lane-dependent value (a bit of the thread index or of its input)."""
        g = self
        if g.rng.random() < 0.5:
            g.emit(f"and.b32 %t1, %t3, {g.rng.choice([1, 2, 3, 4, 8, 16, 24, 31])};")
            g.emit(f"setp.ne.u32 {pred}, %t1, 0;")
        else:
            g.emit(f"setp.{g.rng.choice(_CMP_U)}.u32 {pred}, {g.r()}, {g.r()};")

    def block(self, n, converged):
        for _ in range(n):
            self.straight(converged)

    def body(self, depth=0):
        g, rng = self, self.rng
        converged = True
        for _ in range(rng.randrange(3, 7)):
            shape = rng.choice(["line", "line", "if", "ifelse", "loop", "exit" if depth == 0 else "line"])
            if shape == "line":
                g.block(rng.randrange(2, 8), converged and depth == 0)
            elif shape in ("if", "ifelse"):
                p = g.p()
                g.lane_predicate(p)
                other, end = g.label("else"), g.label("end")
                g.emit(f"@{p} bra {other if shape == 'ifelse' else end};")
                g.block(rng.randrange(1, 6), False)
                if depth < 1 and rng.random() < 0.4:
                    g.body_nested()
                if shape == "ifelse":
                    g.emit(f"bra.uni {end};")
                    g.lines.append(f"{other}:")
                    g.block(rng.randrange(1, 6), False)
                g.lines.append(f"{end}:")
            elif shape == "loop" and depth == 0:
                top, done = g.label("loop"), g.label("done")
                g.emit(f"and.b32 %t2, {g.r()}, 7;")
                g.lines.append(f"{top}:")
                g.emit("setp.eq.u32 %pl, %t2, 0;")
                g.emit(f"@%pl bra {done};")
                g.block(rng.randrange(1, 5), False)
                g.emit("sub.u32 %t2, %t2, 1;")
                g.emit(f"bra.uni {top};")
                g.lines.append(f"{done}:")
            elif shape == "exit":
                g.lane_predicate("%pl")
                g.emit("@%pl bra $L_store;")
                converged = False
            else:
                g.block(rng.randrange(2, 5), False)

    def body_nested(self):
        g = self
        p = g.p()
        g.lane_predicate(p)
        end = g.label("end")
        g.emit(f"@!{p} bra {end};")
        g.block(g.rng.randrange(1, 4), False)
        g.lines.append(f"{end}:")


def program(seed: int, kind: str = "int") -> FuzzProgram:
    """The PTX kernel of ``seed`` (see the module docstring); ``kind="float"``: the float mode's
    (:func:`hwcheck.campaigns.ptx_fuzz_float.float_program`)."""
    if kind == "float":
        made = float_program(seed, KERNEL)
        return FuzzProgram(seed, made.text, made.block, kind, made.pairs)
    if kind != "int":
        raise ValueError(f"hwcheck fuzz: kind {kind!r} is not one of {', '.join(KINDS)}")
    g = _Gen(seed)
    block = g.rng.choice([32, 32, 64])
    head = [".version 8.0", ".target sm_90", ".address_size 64", "",
            f".visible .entry {KERNEL}(.param .u64 inp, .param .u64 out)", "{",
            f"  .reg .b32 %r<{R32}>;", f"  .reg .b64 %rd<{R64}>;", f"  .reg .pred %p<{PREDS}>;",
            "  .reg .pred %pl;", "  .reg .b32 %t<4>;", "  .reg .b64 %q<1>;", "  .reg .b64 %a<4>;",
            "  ld.param.u64 %a0, [inp];", "  ld.param.u64 %a1, [out];",
            "  cvta.to.global.u64 %a0, %a0;", "  cvta.to.global.u64 %a1, %a1;",
            "  mov.u32 %t3, %tid.x;",
            f"  mul.wide.u32 %a2, %t3, {IN_WORDS * 4};", "  add.s64 %a0, %a0, %a2;",
            f"  mul.wide.u32 %a3, %t3, {OUT_WORDS * 4};", "  add.s64 %a1, %a1, %a3;"]
    head += [f"  ld.global.u32 %r{i}, [%a0+{4 * i}];" for i in range(8)]
    head += [f"  ld.global.u64 %rd{i}, [%a0+{32 + 8 * i}];" for i in range(4)]
    head += ["  mov.u32 %r8, %t3;", f"  mov.u32 %r9, {g.rng.randrange(1 << 32)};", "  add.u32 %r10, %r0, %t3;",
             "  xor.b32 %r11, %r1, 0x5a5a5a5a;", "  cvt.u64.u32 %rd4, %t3;",
             f"  mov.b64 %rd5, {g.rng.randrange(1 << 64)};",
             "  setp.ne.u32 %p0, %r2, 0;", "  setp.lt.s32 %p1, %r3, %r4;", "  and.b32 %t0, %t3, 1;",
             "  setp.eq.u32 %p2, %t0, 0;", "  setp.hi.u32 %p3, %r5, 0x80000000;", "  mov.u32 %t2, 0;"]
    g.body()
    tail = ["$L_store:"]
    tail += [f"  st.global.u32 [%a1+{4 * i}], %r{i};" for i in range(R32)]
    tail += [f"  st.global.u64 [%a1+{4 * R32 + 8 * i}], %rd{i};" for i in range(R64)]
    tail += ["  ret;", "}", ""]
    return FuzzProgram(seed, "\n".join(head + g.lines + tail), block)


def _job(prog: FuzzProgram, folder: str):
    from hwcheck.runs.ptx_run import PtxJob
    from warpsim.frontends.args import parse_arg
    from hwcheck.report import write_text_atomic
    path = os.path.join(folder, f"fuzz_{prog.seed}.ptx")
    write_text_atomic(path, prog.text, what="PTX")
    n = prog.block
    specs = dict(parse_arg(a) for a in (f"inp=random:u32:{n * IN_WORDS}", f"out=zeros:u32:{n * prog.out_words}"))
    return PtxJob(path, KERNEL, (1, 1, 1), (n, 1, 1), 0, specs)


@dataclass
class FuzzTotals:
    """What a fuzz campaign (or one chunk of it) counted; ``sim_s``/``gpu_s`` are launch times only."""

    programs: int = 0
    mismatched_programs: int = 0
    errors: int = 0
    trace_records_compared: int = 0
    global_elements_compared: int = 0
    relocated: int = 0
    sim_s: float = 0.0
    gpu_s: float = 0.0
    wall_s: float = 0.0
    first_opcodes: dict = field(default_factory=dict)   # opcode of each failing program's first wrong register -> programs
    errors_by_message: dict = field(default_factory=dict)   # an error's message, numbers as N -> programs
    # float mode: candidate mul + add/sub pairs (FuzzProgram.pairs), those the simulator fused, and who decided
    programs_with_candidates: int = 0
    candidate_pairs: int = 0
    programs_with_fused: int = 0
    fused_pairs: int = 0
    contraction: dict = field(default_factory=dict)     # "ptxas 13.0.88" (compiler and version) -> programs

    def add(self, other: "FuzzTotals"):
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if isinstance(mine, dict):
                for key, n in theirs.items():
                    mine[key] = mine.get(key, 0) + n
            else:
                setattr(self, f.name, mine + theirs)

    def as_dict(self):
        out = {f.name: round(v, 3) if isinstance(v := getattr(self, f.name), float) else v for f in fields(self)}
        for f in fields(self):
            if isinstance(out[f.name], dict):
                out[f.name] = dict(sorted(out[f.name].items(), key=lambda kv: (-kv[1], kv[0])))
        return out

    def count(self, key: str, what: str):
        """One more program under ``what`` in the dict field ``key``."""
        counts = getattr(self, key)
        counts[what] = counts.get(what, 0) + 1

    def contraction_line(self) -> str:
        """Who decided FMA contraction, for the campaign's summary.

        >>> FuzzTotals(programs=3, contraction={"ptxas 13.0.88": 2}).contraction_line()
        'contraction decided by ptxas 13.0.88 (2 of 3 programs)'
        >>> FuzzTotals(programs=3).contraction_line()
        'contraction: no simulator module said who decided it'
        """
        if not self.contraction:
            return "contraction: no simulator module said who decided it"
        return "contraction decided by " + ", ".join(f"{who} ({n} of {self.programs} programs)"
                                                     for who, n in self.as_dict()["contraction"].items())

    def opcode_lines(self) -> list:
        """The per-opcode summary, most programs first: ``bfe.s32: 812 programs``.

        >>> FuzzTotals(first_opcodes={"prmt.b32": 2, "bfe.s32": 5}).opcode_lines()
        ['bfe.s32: 5 programs', 'prmt.b32: 2 programs']
        """
        return [f"{op}: {n} program{'s' * (n != 1)}" for op, n in self.as_dict()["first_opcodes"].items()]


NO_REGISTER = "(no register differs: buffers only)"   # first_opcodes keys of failing programs without a register record
# ... where the GPU's original kernel and its instrumented copy (whose registers all match) store different buffers
# and the simulator's do not: the driver's compiler made the original compute otherwise (docs/ptx.md, "ptxas 13.0
# drops repeated mad.hi")
COMPILED_APART = "(no register differs: the GPU's original kernel differs from its instrumented copy)"
ERROR = "(error)"
_FIRST_KEYS = ("seed", "cta", "warp", "lane", "thread", "step", "register", "instruction", "ptx_line", "ptx", "what",
               "expected", "actual")


def first_record(seed: int, error, run) -> dict:
    """One failing program's line of the report: its seed and the earliest (by dynamic step) mismatching register
    record, with the PTX instruction text and line; or its error, or its first buffer record (opcode
    :data:`COMPILED_APART` where the GPU's original kernel and its instrumented copy store different buffers and
    the simulator's do not, else :data:`NO_REGISTER`)."""
    if error is not None:
        return {"seed": seed, "opcode": ERROR, "error": error}
    if run.first_register is not None:
        first = run.first_register
        return {"opcode": first.get("instruction", NO_REGISTER),
                **{k: first[k] for k in _FIRST_KEYS if k in first}, "seed": seed}
    apart = any(r.get("gpu_bytes", 0) and not r.get("simulator_bytes", 1) for r in run.records)
    line = {"seed": seed, "opcode": COMPILED_APART if apart else NO_REGISTER,
            "buffer": next((r for r in run.records if "buffer" in r), None)}
    if line["buffer"] is None and run.records:      # shared memory, printf or the instrumented copy: keep what it was
        line["record"] = run.records[0]
    return line


CHUNK = 100                            # programs per task of a worker
TIMED_CHUNK = 10                       # with a time limit: a worker's task ends ~20 s after it (0.5 programs/s each)


def _contraction_tools(ptxas: str) -> dict:
    """``{"ptxas": "PATH (RELEASE)", "nvdisasm": "PATH (RELEASE)"}``: the tools that decide the simulator's
    contraction here (for ``.version 8.0`` PTX, as the float programs are), so that two hosts' reports can be told
    apart by them; ``{}`` for ``none``."""
    import subprocess
    from warpsim import toolchain
    if ptxas == "none":
        return {}
    out = {}
    tools = (("ptxas", toolchain.find_ptxas(ptxas, ".version 8.0")), ("nvdisasm", toolchain.find_tool("nvdisasm")))
    for name, path in tools:
        try:
            release = toolchain.tool_release(path) if path is not None else None
        except (OSError, subprocess.TimeoutExpired):
            release = None
        out[name] = "not found" if path is None else f"{path} ({release or '?'})"
    return out


def _contraction(run):
    """``(who decided, fused pairs)`` from the simulator module's ``contraction`` as ``run`` holds it (a dict or
    the object), or None where it has none."""
    c = getattr(run, "contraction", None)
    if c is None:
        return None
    get = c.get if isinstance(c, dict) else lambda key, default=None: getattr(c, key, default)
    pairs = get("pairs", ())
    return f"{get('compiler', '?')} {get('version', '')}".strip(), pairs if isinstance(pairs, int) else len(pairs)


def _error_kind(error: str) -> str:
    """An error's message without its file, line and numbers, so that errors of one kind count together.

    >>> _error_kind("hwcheck fuzz: /tmp/x/fuzz_7.ptx:88: ptxas fused the mul of line 87 into this add")
    'ptxas fused the mul of line N into this add'
    >>> _error_kind("hwcheck fuzz: <gpu>:91: ptxas fused some copies of this sub")
    'ptxas fused some copies of this sub'
    """
    text = re.sub(r"^hwcheck fuzz: ", "", error.splitlines()[0] if error else "")
    return re.sub(r"\d+", "N", re.sub(r"^(\S*\.ptx|<[^>]*>)(:\d+)*: ", "", text))[:160]


def check_range(gpu_ptx, first: int, count: int, arch: str, log=None, keep: int = KEEP, kind: str = "int",
                ptxas: str = "auto"):
    """Check programs ``first..first+count-1`` of ``kind`` on ``gpu_ptx``; returns ``(FuzzTotals, failing programs
    (the first ``keep``, whole), first records (every failing program's, :func:`first_record`), per program (float
    mode: seed, candidate and fused pairs, result; else empty))``; never stops at a mismatch or at an error of one
    program (an error is counted and kept like a mismatch). ``ptxas``: the simulator's contraction, as
    :func:`hwcheck.runs.ptx_run.run_one` takes it (``"none"``: without)."""
    from hwcheck.errors import HwcheckError
    from hwcheck.runs.ptx_run import PtxRun, run_one
    from warpsim.errors import WarpsimError
    totals, failing, firsts, each = FuzzTotals(), [], [], []
    with tempfile.TemporaryDirectory(prefix="hwcheck-fuzz-") as folder, open(os.devnull, "w") as quiet:
        for s in range(first, first + count):
            prog = program(s, kind)
            job = _job(prog, folder)
            run, error = PtxRun(job), None
            try:
                run_one(gpu_ptx, job, seeds=1, first_seed=s, arch=arch, log=quiet, run=run, ptxas=ptxas)
            except HwcheckError as e:
                error = str(e)
            except (WarpsimError, ValueError, TypeError) as e:
                error = f"hwcheck fuzz: {e}"
            except Exception as e:   # a simulator or harness bug: this program's error, the campaign goes on
                error = f"hwcheck fuzz: internal error: {type(e).__name__}: {e}"
            totals.programs += 1
            for r in run.seeds:
                totals.trace_records_compared += r.records
                totals.global_elements_compared += r.global_elements
                totals.relocated += r.relocated
                totals.sim_s += r.sim_s
                totals.gpu_s += r.gpu_s
            bad = run.mismatched > 0 or any(r.instrumented_bad for r in run.seeds)
            totals.mismatched_programs += bad
            totals.errors += error is not None
            if error is not None:
                totals.count("errors_by_message", _error_kind(error))
            decided = _contraction(run)
            if decided is not None:
                totals.count("contraction", decided[0])
            totals.programs_with_candidates += bool(prog.pairs)
            totals.candidate_pairs += len(prog.pairs)
            totals.programs_with_fused += bool(decided and decided[1])
            totals.fused_pairs += decided[1] if decided else 0
            if kind == "float":
                each.append({"seed": s, "candidate_pairs": len(prog.pairs),
                             "fused_pairs": decided[1] if decided else None,
                             "result": "error" if error else "mismatch" if bad else "pass"})
            if bad or error:
                firsts.append(first_record(s, error, run))
                op = firsts[-1]["opcode"]
                totals.first_opcodes[op] = totals.first_opcodes.get(op, 0) + 1
            if (bad or error) and len(failing) < keep:
                failing.append({"seed": s, "kind": kind, "block": prog.block, "error": error,
                                "first_mismatch": firsts[-1], "candidate_pairs": len(prog.pairs),
                                "contraction": getattr(run, "contraction", None), "mismatches": run.records,
                                "ptx": prog.text})
                if log is not None:
                    log.write(f"fuzz: program {s}: {error or f'{run.mismatched} mismatches'}\n")
    return totals, failing, firsts, each


_WORKER_GPU = None


def _warm_simulator(seed, kind, arch):
    """Run program ``seed`` once in the simulator alone, here, before the workers start: its compiled kernels are
    then in Numba's cache on disk, and the workers load them instead of each compiling them at once (15 workers
    compiling together took ~370 s of a 1,000-program chunk on the H100's 16 cores, 145 s warm)."""
    import numpy as np
    from warpsim import ptx
    prog = program(seed, kind)
    n = prog.block
    args = {"inp": np.zeros(n * IN_WORDS, np.uint32), "out": np.zeros(n * prog.out_words, np.uint32)}
    try:
        ptx.load(prog.text, ptxas="none", arch=arch).launch(KERNEL, block=n, args=args, arch=arch, quiet=True)
    except Exception:       # the workers meet (and report) whatever this program does; warming is best effort
        pass


def _worker_range(make_gpu_ptx, first, count, arch, kind, ptxas):
    global _WORKER_GPU
    if _WORKER_GPU is None:
        _WORKER_GPU = make_gpu_ptx()
    return check_range(_WORKER_GPU, first, count, arch, kind=kind, ptxas=ptxas)


def fuzz(gpu_ptx, count: int, *, seed: int = 0, arch: str = DEFAULT_ARCH, report=None, command="", gpu_info=None,
         log=None, workers: int = 1, make_gpu_ptx=None, kind: str = "int", ptxas: str = "auto",
         time_limit: float = None):
    """Generate and check ``count`` programs of ``kind`` (seeds ``seed..seed+count-1``; each program's inputs come
    from its own seed); returns ``(FuzzTotals, exit status)``: 0 no mismatch, 1 a mismatch, 3 an error (a program
    the simulator or the GPU refused, counted under ``errors`` and kept like a mismatch). The report's ``kind``
    is ``ptx-fuzz`` or ``ptx-fuzz-float``; a float campaign's has ``programs`` and ``contraction`` too.
    ``ptxas``: the simulator's contraction (:func:`hwcheck.runs.ptx_run.run_one`; ``"none"``: without).

    With ``workers`` > 1 the programs go in chunks of :data:`CHUNK` to that many processes (``spawn``), each
    with its own ``make_gpu_ptx()`` (a picklable callable, e.g. :func:`hwcheck.runs.ptx_run.open_cupy_ptx`);
    ``gpu_ptx`` is unused.

    ``time_limit`` (seconds from the start): no task starts after it, so the campaign ends a task's length later
    (tasks of :data:`TIMED_CHUNK` programs then) with the programs done so far; tasks start in seed order, so they are
    ``seed..seed+n-1`` still (``totals.programs`` = n, the report's ``stopped`` says so).
    """
    log = sys.stderr if log is None else log
    start = time.perf_counter()
    if kind not in KINDS:
        raise ValueError(f"hwcheck fuzz: kind {kind!r} is not one of {', '.join(KINDS)}")
    totals, failing, firsts, each = FuzzTotals(), [], [], []

    def add(part, bad, first, programs):
        totals.add(part)
        failing.extend(bad[:KEEP - len(failing)])
        firsts.extend(first)
        each.extend(programs)
        log.write(f"fuzz: {totals.programs}/{count} programs, {totals.mismatched_programs} mismatched, "
                  f"{totals.errors} errors, {time.perf_counter() - start:.0f} s\n")
        log.flush()
    size = CHUNK if time_limit is None else min(CHUNK, TIMED_CHUNK)
    chunks = [(s, min(size, seed + count - s)) for s in range(seed, seed + count, size)]
    deadline = None if time_limit is None else start + time_limit
    if workers <= 1:
        for first, n in chunks:
            if deadline is not None and time.perf_counter() >= deadline:
                break
            add(*check_range(gpu_ptx, first, n, arch, log=log, kind=kind, ptxas=ptxas))
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, wait
        _warm_simulator(seed, kind, arch)
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            tasks = [pool.submit(_worker_range, make_gpu_ptx, first, n, arch, kind, ptxas) for first, n in chunks]
            if deadline is not None:
                wait(tasks, timeout=max(0.0, deadline - time.perf_counter()))
                for task in tasks:          # a task not started yet never starts; the running ones finish
                    task.cancel()
            for task in tasks:
                if not task.cancelled():
                    add(*task.result())
    totals.wall_s = time.perf_counter() - start
    stopped = None
    if totals.programs < count:
        done = f"seeds {seed}..{seed + totals.programs - 1}" if totals.programs else "none run"
        stopped = f"the time limit ({time_limit:g} s): {totals.programs} of {count} programs, {done}"
        log.write(f"fuzz: stopped at {stopped}\n")
    status = "error" if totals.errors else "fail" if totals.mismatched_programs else "pass"
    if report is not None:
        data = new_report(command, gpu_info)
        data.update(status=status, kind="ptx-fuzz" if kind == "int" else f"ptx-fuzz-{kind}",
                    settings={"count": count, "first_seed": seed, "simulator_arch": arch, "workers": workers,
                              "programs": kind, "simulator_ptxas": ptxas, "contraction_rules": DECISION,
                              "contraction_tools": _contraction_tools(ptxas),
                              **({} if time_limit is None else {"time_limit_s": time_limit})},
                    totals=totals.as_dict(), failing_programs=failing, first_mismatches=firsts,
                    **({} if stopped is None else {"stopped": stopped}))
        if kind == "float":
            data.update(contraction=[{"decided_by": who, "programs": n}
                                     for who, n in totals.as_dict()["contraction"].items()],
                        programs=each)
        write_json_atomic(report, data)
    return totals, {"pass": 0, "fail": 1, "error": 3}[status]
