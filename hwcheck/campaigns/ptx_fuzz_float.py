"""``hwcheck fuzz --float``: random valid float PTX programs made for testing ptxas's FMA contraction.

PTX lets the code generator fuse a ``mul`` and an ``add``/``sub`` that carry no rounding modifier
(``mul.f32 %f3, %f1, %f2; add.f32 %f4, %f3, %f5;``) into one FFMA (HFMA2 for ``f16x2``), which rounds once where
the PTX text rounds twice; ``fma.rn``, ``mul.rn`` and ``add.rn`` are never fused. Whether ptxas fuses a pair is
its decision, so the simulator can only be bit-exact if it asks ptxas (``warpsim.ptx.contraction``). These
programs put that decision to the test against the GPU, register by register (:mod:`hwcheck.campaigns.ptx_fuzz`
runs them).

:func:`float_program` makes one kernel from a seed (``random.Random(seed)``; the same seed, the same text), with
the integer mode's structure (one CTA of 32 or 64 threads, ``fuzz(.param .u64 inp, .param .u64 out)``):

- each thread loads :data:`IN_WORDS` words of ``inp`` (random per run seed): 8 into ``%f0..%f7`` (``f32``),
  4 into ``%h0..%h3`` (``f16x2`` in ``.b32`` registers) and 4 integer "lane words" ``%r0..%r3`` (predicates and
  trip counts). A float word is shaped by the program: raw bits (NaN, inf and subnormals now and then), a
  fixed exponent (moderate, near the subnormal range, or near overflow), "tie" values ``±2^e(1 + m 2^-12)``
  with odd ``m``, whose products ``(1 + m1 2^-12)(1 + m2 2^-12)`` end exactly half an ulp past a
  representable value (for ``f16x2`` the two factors' shapes ``1 + m 2^-5`` and ``1 + m 2^-6``), or
  subnormals; and some lanes (chosen by a lane word) take a special instead: ``±0``, ``±inf``, NaN,
  the smallest subnormal or normal, the largest subnormal. ``%f8..%f11``, ``%h4``, ``%h5`` start from the
  thread index, immediates and ``cvt.rn.f16x2.f32``;
- a body of straight-line stretches of ``f32`` and ``f16x2`` arithmetic: unmodified ``mul``/``add``/``sub``
  (some ``.ftz``, some ``.sat``) in the shapes ptxas fuses (``x*y + z``, ``z + x*y``, ``x*y - z``,
  ``z - x*y``, one ``mul`` feeding two adds, an add of two ``mul`` results, ``p + p``, a ``mul`` whose operand
  is redefined before its add, a ``neg``/``abs`` between them), mixed with ``fma``, ``mul.rn``, ``add.rn`` and
  ``sub.rn`` (any rounding for ``f32``), ``neg``, ``abs``, ``setp`` (ordered and unordered) / ``selp``,
  immediates (``0f3FC00000``) and predicated instructions (``@%p0 add.f32``); and branching blocks: if/else
  on lane-dependent predicates, loops whose trip count (0..7) depends on the lane with accumulators
  (``acc = acc + a*b``, ``fma.rn``), and an early exit of some lanes;
- every ``%f`` and ``%h`` register is stored to ``out`` at the end (:data:`OUT_WORDS` words per thread).

**Candidate pairs** (:attr:`FloatProgram.pairs`, PTX line numbers ``(mul, add)``): an unpredicated ``mul`` with
no rounding modifier and no ``.sat`` whose result an ``add``/``sub`` with no rounding modifier reads in the
same straight-line stretch (no label between, the register not written again). ptxas may fuse more (across
a branch) or fewer (a ``mul`` result used elsewhere stays an FMUL, and often so does its add).

:func:`sass_fusions` says, from ptxas and ``nvdisasm -g`` alone, how many FFMA/HFMA2 of a program come from
unmodified PTX ``add``/``sub`` lines (fused pairs), independently of ``warpsim.ptx.contraction``.

>>> float_program(3) == float_program(3) and float_program(3) != float_program(4)
True
>>> "mul.f32 " in float_program(0).text and ".entry fuzz(" in float_program(0).text
True
"""

from __future__ import annotations

import random
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FloatProgram", "float_program", "sass_fusions", "F32", "H2", "IN_WORDS", "OUT_WORDS"]

F32, H2, PREDS, LANE = 12, 6, 4, 4     # %f0..%f11, %h0..%h5 (f16x2), %p0..%p3, lane words %r0..%r3
F32_IN, H2_IN = 8, 4                   # loaded from inp; the rest start from the thread index and immediates
IN_WORDS = F32_IN + H2_IN + LANE       # per thread: 8 f32, 4 f16x2, 4 lane words
OUT_WORDS = F32 + H2                   # per thread: every %f, then every %h

_CMP = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
_ROUND_F32 = (".rn", ".rn", ".rz", ".rm", ".rp")
_IMM = (0x3FC00000, 0xBF400000, 0x40000000, 0x3F000000, 0xC0400000, 0x00000000, 0x80000000, 0x7F800000,
        0xFF800000, 0x7FFFFFFF, 0x00800000, 0x00000001, 0x3F800800, 0x3F801800)
_SPECIAL32 = (0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FFFFFFF, 0x7FC00000, 0x00000001, 0x807FFFFF,
              0x00800000, 0x80000001)
_SPECIAL16 = (0x0000, 0x8000, 0x7C00, 0xFC00, 0x7FFF, 0x7E00, 0x0001, 0x83FF, 0x0400, 0x3C00)
_UNMODIFIED_ADD = re.compile(r"^\s*(?:@!?%\w+\s+)?(?:add|sub)(?:\.ftz)?(?:\.sat)?\.(?:f32|f16x2)\s")


@dataclass(frozen=True)
class FloatProgram:
    """One generated float kernel: PTX ``text``, threads per CTA (``block``) and its candidate ``pairs``
    (``(mul line, add line)``, 1-based lines of ``text``)."""

    text: str
    block: int
    pairs: tuple


class _Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.lines, self.labels = [], 0
        self.muls = {}                 # register -> line of its live unmodified mul (this straight stretch)
        self.pairs = []

    # operands -----------------------------------------------------------------------------------------------
    def reg(self, t):
        return f"%f{self.rng.randrange(F32)}" if t == "f32" else f"%h{self.rng.randrange(H2)}"

    def imm(self):
        rng = self.rng
        if rng.random() < 0.25:         # a random normal value of moderate size
            bits = rng.randrange(2) << 31 | rng.randrange(118, 137) << 23 | rng.randrange(1 << 23)
        else:
            bits = rng.choice(_IMM)
        return f"0f{bits:08X}"

    def src(self, t):
        return self.imm() if t == "f32" and self.rng.random() < 0.2 else self.reg(t)

    def p(self):
        return f"%p{self.rng.randrange(PREDS)}"

    def guard(self, chance=0.12):
        if self.rng.random() >= chance:
            return ""
        return f"@{'!' if self.rng.random() < 0.3 else ''}{self.p()} "

    def flags(self, sat=True):
        rng = self.rng
        return (".ftz" if rng.random() < 0.2 else "") + (".sat" if sat and rng.random() < 0.1 else "")

    # emission ---------------------------------------------------------------------------------------------
    def raw(self, line):
        self.lines.append("  " + line)

    def label_line(self, name):
        self.lines.append(f"{name}:")
        self.muls.clear()              # a join: no pair is counted across it

    def label(self, stem):
        self.labels += 1
        return f"$L_{stem}{self.labels}"

    def op(self, opcode, dst, srcs, guard=""):
        """Emit ``guard opcode dst, srcs`` and keep the candidate pairs: ``opcode`` like ``mul.ftz.f32``."""
        here = len(self.lines) + 1
        parts = opcode.split(".")
        unrounded = not any(p in ("rn", "rz", "rm", "rp") for p in parts[1:])
        if parts[0] in ("add", "sub") and unrounded:
            for s in dict.fromkeys(srcs):
                if s in self.muls:
                    self.pairs.append((self.muls[s], here))
        self.raw(f"{guard}{opcode} {dst}, {', '.join(srcs)};")
        if parts[0] == "mul" and unrounded and "sat" not in parts and not guard:
            self.muls[dst] = here
        else:
            self.muls.pop(dst, None)

    def arith(self, t, name, rounded=False, sat=True):
        """``name`` (mul/add/sub/fma) of type ``t``, unmodified or with a rounding mode (``fma`` always has one)."""
        rnd = (self.rng.choice(_ROUND_F32) if t == "f32" else ".rn") if rounded or name == "fma" else ""
        return f"{name}{rnd}{self.flags(sat)}.{t}"

    def regs(self, t):
        return [f"%f{i}" for i in range(F32)] if t == "f32" else [f"%h{i}" for i in range(H2)]

    def dead(self, t, m):
        """A destination for the reader of the product ``m``: often ``m`` itself (``x = x*y + z``), so that the
        product has no other reader (every register is stored at the end) and ptxas is free to fuse."""
        return m if self.rng.random() < 0.4 else self.reg(t)

    def mul(self, t, a=None, dst=None, rounded=False):
        """Emit a ``mul`` of type ``t`` and return its destination: mostly a register that is not one of its
        operands (a ``mul`` that overwrites its own operand comes from ``single`` statements too)."""
        a, b = a or self.reg(t), self.src(t)
        if dst is None:
            dst = self.reg(t)
            while dst in (a, b) and self.rng.random() < 0.85:
                dst = self.reg(t)
        self.op(self.arith(t, "mul", rounded=rounded), dst, [a, b])
        return dst

    # statements ---------------------------------------------------------------------------------------------
    def straight(self):
        g, rng = self, self.rng
        t = "f32" if rng.random() < 0.7 else "f16x2"
        kind = rng.choices(["mad", "shared", "two_muls", "double", "redefine", "neg_between", "rounded",
                            "single", "setp", "selp", "cvt"], [6, 2, 2, 1, 2, 1, 3, 4, 1, 1, 0.5])[0]
        if kind == "mad":                               # x*y + z, z + x*y, x*y - z, z - x*y
            m = g.mul(t)
            name, order = rng.choice(["add", "sub"]), rng.random() < 0.5
            c = g.src(t)
            g.op(g.arith(t, name), g.dead(t, m), [m, c] if order else [c, m], g.guard())
        elif kind == "shared":                          # one mul feeding two adds
            m = g.mul(t)
            for k in range(2):
                d = g.dead(t, m) if k else g.reg(t)
                g.op(g.arith(t, rng.choice(["add", "sub"])), d, [m, g.src(t)] if rng.random() < 0.5 else
                     [g.src(t), m])
                if d == m:
                    break
        elif kind == "two_muls":                        # an add of two mul results
            m1 = g.mul(t)
            m2 = g.mul(t, dst=rng.choice([r for r in g.regs(t) if r != m1]))
            g.op(g.arith(t, rng.choice(["add", "add", "sub"])), g.reg(t), [m1, m2], g.guard())
        elif kind == "double":                          # p + p
            m = g.mul(t)
            g.op(g.arith(t, "add"), g.dead(t, m), [m, m])
        elif kind == "redefine":                        # a mul whose operand is written before the add
            m, a = rng.sample(g.regs(t), 2)
            g.mul(t, a=a, dst=m)
            how = rng.choice(["add", "neg", "mov" if t == "f32" else "abs"])
            if how == "add":
                g.op(g.arith(t, "add", rounded=rng.random() < 0.5), a, [a, g.src(t)])
            elif how == "mov":
                g.op("mov.f32", a, [g.imm()])
            else:
                g.op(f"{how}{g.flags(False)}.{t}", a, [g.reg(t)])
            g.op(g.arith(t, rng.choice(["add", "sub"])), g.dead(t, m), [m, g.src(t)] if rng.random() < 0.5 else
                 [g.src(t), m])
        elif kind == "neg_between":                     # mul, neg/abs of it, add
            m = g.mul(t)
            n = g.dead(t, m)
            g.op(f"{rng.choice(['neg', 'abs'])}{g.flags(False)}.{t}", n, [m])
            g.op(g.arith(t, "add"), g.dead(t, n), [n, g.src(t)])
        elif kind == "rounded":                         # never fused: fma, or a rounded mul or add
            form = rng.choice(["fma", "fma", "mul.rn", "add.rn"])
            if form == "fma":
                g.op(g.arith(t, "fma"), g.reg(t), [g.reg(t), g.src(t), g.src(t)], g.guard())
            else:
                m = g.mul(t, rounded=form == "mul.rn")
                g.op(g.arith(t, rng.choice(["add", "sub"]), rounded=form == "add.rn"), g.reg(t), [m, g.src(t)])
        elif kind == "single":                          # one instruction: pairs across statements come from these
            name = rng.choice(["mul", "mul", "add", "sub", "neg", "abs"])
            if name in ("neg", "abs"):
                g.op(f"{name}{g.flags(False)}.{t}", g.reg(t), [g.reg(t)], g.guard())
            else:
                g.op(g.arith(t, name, rounded=rng.random() < 0.25), g.reg(t), [g.reg(t), g.src(t)], g.guard())
        elif kind == "setp":
            ftz = ".ftz" if rng.random() < 0.2 else ""
            if t == "f32":
                g.raw(f"setp.{rng.choice(_CMP)}{ftz}.f32 {g.p()}, {g.reg(t)}, {g.src(t)};")
            else:
                p, q = rng.sample([f"%p{i}" for i in range(PREDS)], 2)
                g.raw(f"setp.{rng.choice(_CMP)}{ftz}.f16x2 {p}|{q}, {g.reg(t)}, {g.reg(t)};")
        elif kind == "selp":
            g.op("selp.f32" if t == "f32" else "selp.b32", g.reg(t), [g.src(t), g.src(t), g.p()])
        else:
            g.op("cvt.rn.f16x2.f32", g.reg("f16x2"), [g.reg("f32"), g.reg("f32")])

    def lane_predicate(self, pred):
        """``pred`` set from a lane-dependent value (a bit of the thread index, a lane word or a float input)."""
        g, rng = self, self.rng
        form = rng.random()
        if form < 0.35:
            g.raw(f"and.b32 %t1, %t3, {rng.choice([1, 2, 3, 4, 8, 16, 24, 31])};")
            g.raw(f"setp.ne.u32 {pred}, %t1, 0;")
        elif form < 0.6:
            g.raw(f"setp.lo.u32 {pred}, %r{rng.randrange(LANE)}, %r{rng.randrange(LANE)};")
        else:
            g.raw(f"setp.{rng.choice(_CMP)}.f32 {pred}, {g.reg('f32')}, {g.src('f32')};")

    def block(self, n):
        for _ in range(n):
            self.straight()

    def accumulate(self):
        """A loop statement: ``acc = acc + a*b`` (unmodified, fusible) or ``fma.rn`` into the accumulator."""
        g, rng = self, self.rng
        t = "f32" if rng.random() < 0.7 else "f16x2"
        acc = g.reg(t)
        if rng.random() < 0.25:
            g.op(g.arith(t, "fma"), acc, [g.reg(t), g.src(t), acc])
            return
        m = g.mul(t, dst=rng.choice([r for r in g.regs(t) if r != acc]))
        g.op(g.arith(t, rng.choice(["add", "add", "sub"])), acc, [acc, m] if rng.random() < 0.5 else [m, acc])

    def body(self, depth=0):
        g, rng = self, self.rng
        for _ in range(rng.randrange(3, 7)):
            shape = rng.choice(["line", "line", "if", "ifelse", "loop", "exit" if depth == 0 else "line"])
            if shape == "line":
                g.block(rng.randrange(2, 8))
            elif shape in ("if", "ifelse"):
                p = g.p()
                g.lane_predicate(p)
                other, end = g.label("else"), g.label("end")
                g.raw(f"@{p} bra {other if shape == 'ifelse' else end};")
                g.block(rng.randrange(1, 6))
                if depth < 1 and rng.random() < 0.4:
                    g.body_nested()
                if shape == "ifelse":
                    g.raw(f"bra.uni {end};")
                    g.label_line(other)
                    g.block(rng.randrange(1, 6))
                g.label_line(end)
            elif shape == "loop" and depth == 0:
                top, done = g.label("loop"), g.label("done")
                g.raw(f"and.b32 %t2, %r{rng.randrange(LANE)}, 7;")
                g.label_line(top)
                g.raw("setp.eq.u32 %pl, %t2, 0;")
                g.raw(f"@%pl bra {done};")
                for _ in range(rng.randrange(1, 3)):
                    g.accumulate()
                g.block(rng.randrange(0, 3))
                g.raw("sub.u32 %t2, %t2, 1;")
                g.raw(f"bra.uni {top};")
                g.label_line(done)
            elif shape == "exit":
                g.lane_predicate("%pl")
                g.raw("@%pl bra $L_store;")
            else:
                g.block(rng.randrange(2, 5))

    def body_nested(self):
        g = self
        p = g.p()
        g.lane_predicate(p)
        end = g.label("end")
        g.raw(f"@!{p} bra {end};")
        g.block(g.rng.randrange(1, 4))
        g.label_line(end)

    # inputs -----------------------------------------------------------------------------------------------
    def shaped(self, dst, offset, half):
        """Load the word at ``[%a0+offset]`` into ``dst`` in a shape of the program's choice (module docstring);
        ``half``: the word is an ``f16x2`` pair."""
        g, rng = self, self.rng
        g.raw(f"ld.global.u32 %t0, [%a0+{offset}];")
        shape = rng.choices(["raw", "scaled", "tie", "subnormal"], [3, 4, 2, 1])[0]
        if half:
            def both(v):
                return v << 16 | v
            if shape == "scaled":
                lo, hi = (rng.choice([rng.randrange(12, 19)] * 4 + [rng.randrange(1, 4), rng.randrange(27, 31)])
                          for _ in range(2))
                mask, bits = 0x83FF83FF, hi << 26 | lo << 10
            elif shape == "tie":        # 1 + m 2^-5 or 1 + m 2^-6, m odd < 8: a product of the two is a tie
                e = rng.randrange(14, 17)
                mask, bits = (both(0x80E0), both(e << 10 | 0x20)) if rng.random() < 0.5 else \
                    (both(0x8070), both(e << 10 | 0x10))
            else:
                mask, bits = (0x83FF83FF, 0) if shape == "subnormal" else (None, None)
        else:
            if shape == "scaled":
                e = rng.choice([rng.randrange(118, 137)] * 4 + [rng.randrange(1, 12), rng.randrange(236, 255)])
                mask, bits = 0x807FFFFF, e << 23
            elif shape == "tie":        # ±2^e (1 + m 2^-12), m odd < 16
                mask, bits = 0x80007800, rng.randrange(125, 130) << 23 | 0x800
            else:
                mask, bits = (0x807FFFFF, 0) if shape == "subnormal" else (None, None)
        if mask is not None:
            g.raw(f"and.b32 %t0, %t0, {mask:#010x};")
            if bits:
                g.raw(f"or.b32 %t0, %t0, {bits:#010x};")
        if rng.random() < 0.35:         # some lanes (by a lane word) take a special value instead
            special = (rng.choice(_SPECIAL16) << 16 | rng.choice(_SPECIAL16)) if half else rng.choice(_SPECIAL32)
            g.raw(f"and.b32 %t1, %r{rng.randrange(LANE)}, {rng.choice([3, 7, 0x30, 0x700])};")
            g.raw("setp.eq.u32 %pl, %t1, 0;")
            g.raw(f"selp.b32 %t0, {special:#010x}, %t0, %pl;")
        g.raw(f"mov.b32 {dst}, %t0;")


def float_program(seed: int, kernel: str = "fuzz") -> FloatProgram:
    """The float PTX kernel of ``seed`` named ``kernel`` (see the module docstring)."""
    g = _Gen(seed)
    block = g.rng.choice([32, 32, 64])
    g.lines += [".version 8.0", ".target sm_90", ".address_size 64", "",
                f".visible .entry {kernel}(.param .u64 inp, .param .u64 out)", "{",
                f"  .reg .f32 %f<{F32}>;", f"  .reg .b32 %h<{H2}>;", f"  .reg .pred %p<{PREDS}>;",
                "  .reg .pred %pl;", f"  .reg .b32 %r<{LANE}>;", "  .reg .b32 %t<4>;", "  .reg .b64 %a<4>;",
                "  ld.param.u64 %a0, [inp];", "  ld.param.u64 %a1, [out];",
                "  cvta.to.global.u64 %a0, %a0;", "  cvta.to.global.u64 %a1, %a1;",
                "  mov.u32 %t3, %tid.x;",
                f"  mul.wide.u32 %a2, %t3, {IN_WORDS * 4};", "  add.s64 %a0, %a0, %a2;",
                f"  mul.wide.u32 %a3, %t3, {OUT_WORDS * 4};", "  add.s64 %a1, %a1, %a3;"]
    g.lines += [f"  ld.global.u32 %r{i}, [%a0+{4 * (F32_IN + H2_IN + i)}];" for i in range(LANE)]
    for i in range(F32_IN):
        g.shaped(f"%f{i}", 4 * i, half=False)
    for i in range(H2_IN):
        g.shaped(f"%h{i}", 4 * (F32_IN + i), half=True)
    g.raw("cvt.rn.f32.u32 %f8, %t3;")
    g.raw(f"mov.f32 %f9, {g.imm()};")
    g.raw(f"mov.f32 %f10, {g.imm()};")
    g.raw("cvt.rn.f32.s32 %f11, %r0;")
    g.raw(f"mov.b32 %h4, {g.rng.choice([0x3C00, 0x3E00, 0xB800, 0x4200]) << 16 | 0x3C01:#010x};")
    g.raw("cvt.rn.f16x2.f32 %h5, %f1, %f2;")
    g.raw("setp.ne.u32 %p0, %r1, 0;")
    g.raw("setp.lt.f32 %p1, %f0, %f1;")
    g.raw("and.b32 %t0, %t3, 1;")
    g.raw("setp.eq.u32 %p2, %t0, 0;")
    g.raw("setp.gtu.f32 %p3, %f2, %f3;")
    g.raw("mov.u32 %t2, 0;")
    g.body()
    g.label_line("$L_store")
    g.lines += [f"  st.global.f32 [%a1+{4 * i}], %f{i};" for i in range(F32)]
    g.lines += [f"  st.global.b32 [%a1+{4 * (F32 + i)}], %h{i};" for i in range(H2)]
    g.lines += ["  ret;", "}", ""]
    return FloatProgram("\n".join(g.lines), block, tuple(g.pairs))


def sass_fusions(text: str, arch: str = "sm_90") -> dict:
    """What ptxas fused in ``text`` (assembled for ``arch``): ``{"ffma": n, "hfma2": n, "adds": n}``, the FFMA and
    HFMA2 instructions whose PTX line is an unmodified ``add``/``sub`` (not an HFMA2 that multiplies by the
    immediate ``1, 1``, ptxas's own form of a lone ``f16x2`` add, nor one of ``-RZ, RZ``, a constant), and how
    many such PTX lines there are (a loop that ptxas unrolls has several FFMA of one line). ptxas puts a plain
    ``mul.f16x2`` on the FMA unit too (``HFMA2.MMA d, a, b, -RZ``, on the ``mul``'s line): not counted.

    The copy with a ``.loc`` of its own line before every instruction and the SASS's lines are
    :mod:`warpsim.ptx.contraction`'s (``annotate``, ``sass_lines``); the count here reads the SASS alone, without
    that module's resolution of pairs, so the two can be held against each other.
    Needs ``ptxas`` and ``nvdisasm`` (:func:`hwcheck.device.sass.find_tool`); raises
    ``hwcheck.device.sass.SassError``."""
    from hwcheck.device.sass import SassError, find_tool
    from warpsim.ptx.contraction import annotate, sass_lines
    ptxas, nvdisasm = find_tool("ptxas"), find_tool("nvdisasm")
    if ptxas is None or nvdisasm is None:
        raise SassError(f"sass_fusions: needs ptxas and nvdisasm (found ptxas={ptxas}, nvdisasm={nvdisasm})")
    lines = text.split("\n")
    with tempfile.TemporaryDirectory(prefix="hwcheck-fuzz-sass-") as tmp:
        src, cubin = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
        src.write_text(annotate(text))
        for cmd in ([ptxas, f"-arch={arch}", "-lineinfo", str(src), "-o", str(cubin)],
                    [nvdisasm, "-g", "-c", str(cubin)]):
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                raise SassError(f"{Path(cmd[0]).name} for {arch} failed (exit {done.returncode}): "
                                f"{' '.join((done.stderr or done.stdout).split())[:400]}")
    found, adds = {"FFMA": 0, "HFMA2": 0}, set()
    for sass, line in sass_lines(done.stdout):
        m = re.match(r"(?:@!?U?P\w+\s+)?(FFMA|HFMA2)\S*\s+(.*)$", sass)
        if m is None:
            continue
        ops = m[2].split(", ")                              # d, a, b (an f16x2 immediate b: two words), c
        lone_add, constant = ops[2:4] == ["1", "1"], all(f.lstrip("-") == "RZ" for f in ops[1:3])
        if line and _UNMODIFIED_ADD.match(lines[line - 1]) and not lone_add and not constant:
            found[m[1]] += 1
            adds.add(line)
    return {"ffma": found["FFMA"], "hfma2": found["HFMA2"], "adds": len(adds)}
