"""Registers whose value is known when the kernel is compiled: the constants ptxas folds instructions with.

The driver's ptxas folds some instructions whose operands it knows at compile time differently from the
sequence it runs otherwise (``bfe.s32`` with a known position >= 32 and a known length >= 1 becomes all ones:
docs/ptx.md, "Integer forms: what the H200 runs"). To model that, the decoder asks which registers hold a known
constant before each instruction: :func:`known_constants` is a forward dataflow over one function's control flow
(:class:`warpsim.ptx.reaching.ControlFlow`) with the lattice "register -> one value, or unknown":

- ``mov.TYPE %r, IMM`` without a guard makes ``%r`` that constant (its low ``TYPE`` bits); ``mov.TYPE %r, %s``
  copies what is known of ``%s``; ``add/sub/and/or/xor`` of known values (integer types, no modifier) and an integer
  ``cvt`` (no ``.sat``) of a known value are known;
- any other write to a register (the first operand of every instruction but ``st``, ``red``, branches,
  barriers and the like; both halves of ``p|q``; the elements of a vector; a guarded ``mov``) makes it unknown;
- where paths join (a label, the instruction after a guarded or unconditional branch's fall-through), a register
  stays known only with the same value on every incoming path.

ptxas knows more (it folds every arithmetic on constants); this is a part of what it knows, and a register reported
known here is known to ptxas too.

ptxas learns these constants in two stages, and its ``bfe.s32`` folding depends on which: :func:`segment_constants`
are the ones it knows early, from the same *segment* of straight-line code (the same rules, but every register
unknown again after a label, a branch, and the instructions it expands early: integer ``div``/``rem``, 64-bit
``bfe``/``bfi``/``brev``/``bfind``, ``shfl``, ``vote``, ``redux``, ``activemask``, ``bar``, ``membar``, ``fence``, and
the f32/f64 ``div``, ``rcp``, ``sqrt``, ``rsqrt``, ``lg2``, ``ex2`` without ``.ftz`` (not ``div.full``)).
>>> from warpsim.ptx.syntax import parse_module
>>> m = parse_module(".version 8.0\\n.target sm_90\\n.address_size 64\\n.entry k()\\n{ .reg .b32 %r<4>;\\n"
...                  "mov.u32 %r1, 40; mov.u32 %r2, %r1; add.u32 %r1, %r1, 1; ld.u32 %r2, [%r3]; ret; }")
>>> [known_constants(m.functions["k"])[i] for i in (3, 4)] == [{"%r1": 41, "%r2": 40}, {"%r1": 41}]
True
>>> m = parse_module(".version 8.0\\n.target sm_90\\n.address_size 64\\n.entry k()\\n{ .reg .b32 %r<4>;\\n"
...                  "mov.u32 %r1, 40; div.u32 %r2, %r3, 3; mov.u32 %r0, 7; ret; }")
>>> segment_constants(m.functions["k"])[1:] == [{"%r1": 40}, {}, {"%r0": 7}]
True
"""

from __future__ import annotations

from warpsim.ptx.reaching import ControlFlow
from warpsim.ptx.syntax import Instruction, Label

__all__ = ["known_constants", "segment_constants"]

_NO_WRITE = frozenset({"st", "red", "bra", "ret", "exit", "trap", "bar", "barrier", "membar", "fence", "nanosleep",
                       "prefetch", "prefetchu", "griddepcontrol", "pmevent", "cp"})
_BITS = {"8": 0xFF, "16": 0xFFFF, "32": 0xFFFFFFFF, "64": 0xFFFFFFFFFFFFFFFF}
_INT_TYPES = {f"{k}{b}" for k in "bus" for b in (8, 16, 32, 64)}
# instructions after which ptxas's early folding knows no register (ptxas 13.0 -arch=sm_90 read with nvdisasm:
# mov.u32 %r9, C; <instruction>; bfe.s32 %r0, %r9, 255, 64 is all ones after these, the ISA's 0 after the others)
_SEGMENT_END = frozenset({"bra", "ret", "exit", "trap", "rem", "shfl", "vote", "redux", "activemask", "bar",
                          "barrier", "membar", "fence"})
_SEGMENT_END_64 = frozenset({"bfe", "bfi", "brev", "bfind"})   # their 64-bit forms
_SEGMENT_END_FLOAT = frozenset({"div", "rcp", "sqrt", "rsqrt", "lg2", "ex2"})   # f32/f64 without .ftz (not div.full)


def _written(ins: Instruction) -> list:
    """The register names ``ins`` may write."""
    if ins.opcode in _NO_WRITE or not ins.operands:
        return []
    out = []

    def add(op):
        if op is None:
            return
        if op.kind in ("reg", "sym"):
            out.append(op.name)
        elif op.kind in ("vec", "list"):
            for item in op.items:
                add(item)
    first = ins.operands[0]     # call (ret), f, (args): the return list
    add(first)
    add(first.pair)
    return out


_FOLD = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "and": lambda a, b: a & b,
         "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b}


def _value(ins: Instruction, known: dict):
    """The constant ``ins`` writes to its first operand, or None (module docstring)."""
    ops = ins.operands
    if ins.guard is not None or len(ops) < 2 or ops[0].kind != "reg" or ops[0].pair is not None:
        return None
    mask = next((_BITS[m[1:]] for m in ins.mods if m[1:] in _BITS and m[0] in "bus"), None)
    srcs = [o.value if o.kind == "imm" else known.get(o.name) if o.kind == "reg" else None for o in ops[1:]]
    if mask is None or any(v is None for v in srcs):
        return None
    if ins.opcode == "mov" and len(srcs) == 1:
        return srcs[0] & mask
    if ins.opcode in _FOLD and len(srcs) == 2 and set(ins.mods) <= {"u32", "s32", "b32", "u64", "s64", "b64"}:
        return _FOLD[ins.opcode](srcs[0], srcs[1]) & mask
    if ins.opcode == "cvt" and len(srcs) == 1 and len(ins.mods) == 2 and set(ins.mods) <= _INT_TYPES:
        dst, src = ins.mods            # the source's bits, extended by its signedness, cut to the destination's
        v = srcs[0] & _BITS[src[1:]]
        if src[0] == "s" and v >> (int(src[1:]) - 1):
            v -= 1 << int(src[1:])
        return v & mask if int(dst[1:]) >= 32 else None   # narrower: the register's extension (decoder) not modelled
    return None


def _transfer(ins: Instruction, known: dict) -> dict:
    known = dict(known)
    writes = _written(ins)
    value = _value(ins, known)
    for name in writes:
        known.pop(name, None)
    if value is not None:
        known[ins.operands[0].name] = value
    return known


def _meet(a: dict | None, b: dict) -> dict:
    if a is None:
        return dict(b)
    return {k: v for k, v in a.items() if b.get(k) == v}


def known_constants(function) -> list:
    """For each instruction of ``function`` (a parsed :class:`~warpsim.ptx.syntax.Function`; in order, labels
    skipped): ``{register name: value}`` of the registers holding a constant known at compile time when the
    instruction starts (module docstring). The control flow is :class:`warpsim.ptx.reaching.ControlFlow`'s."""
    flow = ControlFlow(function)
    ins, succ = flow.instrs, flow.succ
    entry: list = [None] * len(ins)
    if ins:
        entry[0] = {}
    work = [0] if ins else []
    while work:
        i = work.pop()
        out = _transfer(ins[i], entry[i])
        for j in succ[i]:
            met = _meet(entry[j], out)
            if met != entry[j]:
                entry[j] = met
                work.append(j)
    return [e if e is not None else {} for e in entry]


def _ends_segment(ins: Instruction) -> bool:
    op, mods = ins.opcode, ins.mods
    if op in _SEGMENT_END or (op in _SEGMENT_END_64 and any(m[1:] == "64" for m in mods)):
        return True
    if op == "div" and not any(m in ("f32", "f64") for m in mods):
        return True                                  # integer div, as rem
    return (op in _SEGMENT_END_FLOAT and any(m in ("f32", "f64") for m in mods) and "ftz" not in mods
            and "full" not in mods)


def segment_constants(function) -> list:
    """For each instruction of ``function`` (as :func:`known_constants`): ``{register name: value}`` of the registers
    known from its own segment of straight-line code, what ptxas's early folding knows (module docstring); a subset of
    :func:`known_constants`'s."""
    out, known = [], {}
    for item in function.body:
        if isinstance(item, Label):
            known = {}
            continue
        out.append(known)
        known = {} if _ends_segment(item) else _transfer(item, known)
    return out
