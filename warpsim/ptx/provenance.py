"""Type provenance of a PTX kernel: which float type each register's bits were produced as, checked
where they are consumed.

PTX registers are untyped bits (``.b32``): a ``cvt.rn.f16x2.f32`` result fed to an ``mma ... .bf16``
is accepted by the assembler and silently computes with the wrong numbers. This module finds such
mismatches statically, without running the kernel:

1. **Producers** give a register its element type: float arithmetic and ``cvt`` their destination
   type (``cvt.rn.bf16x2.f32`` -> ``bf16x2``, ``cvt.rn.f16.f32`` -> ``f16``), ``mma`` its D type per
   register (``.f32`` -> ``f32``, ``.f16`` -> ``f16x2``), a typed load (``ld.param.f32``), a load of a
   variable declared with a float type (``.param .f32 scale``, ``.global .f32 table[16]``) and a float
   ``mov`` of an immediate their type. Anything else (integer and bit operations, ``ldmatrix``, untyped
   loads of global memory) produces an *unknown* type, which matches every consumer.
2. **Copies carry the type**: ``mov`` of a register, ``shfl.sync`` (the same register of another lane),
   ``selp``, packing ``mov.b32 %r, {%h0, %h1}`` (two ``f16`` halves make an ``f16x2``; halves of
   different kinds are unknown), unpacking ``mov.b32 {%h0, %h1}, %r`` (an ``f16x2`` gives two ``f16``),
   and a store followed by a load of the same ``.local`` or ``.shared`` address expression (the same
   base register definition plus the same constant offset, ``[%rd4+16]``). A store that may alias,
   a call, and for shared memory any barrier or asynchronous copy (other threads may have written the
   bytes) forget what memory held.
3. **Reaching definitions** over the kernel's control-flow graph (labels, ``bra``, ``ret``/``exit``)
   join the paths (a register written before a loop and inside it has both producers); a guarded
   instruction (``@%p``) adds its definition without removing the earlier ones.
4. **Consumers** state what they read: ``mma`` its A and B registers as the A/B type packed in 32
   bits (``bf16x2`` for ``.bf16``) and C as the accumulator type; float arithmetic, ``setp``,
   ``testp``, ``cvt`` and typed stores their operand type. A producer whose element type differs
   (``tf32`` reads ``f32`` bits by definition, so those agree) is a :class:`Finding`.

Not followed: ``.func`` bodies (a call's results are unknown), memory other than ``.local`` and
``.shared`` (global and generic loads are unknown unless typed), and addresses computed in
different ways that happen to be equal.

>>> from warpsim.ptx.syntax import parse_module
>>> m = parse_module('''.version 8.0
... .target sm_80
... .address_size 64
... .entry k()
... {
...   .reg .f32 %f<3>; .reg .b32 %r<9>;
...   mov.f32 %f1, 0f3F800000;
...   cvt.rn.f16x2.f32 %r1, %f1, %f1;
...   mov.b32 %r2, %r1;
...   mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1, %f1, %f1, %f1},
...       {%r2, %r2, %r2, %r2}, {%r3, %r3}, {%f1, %f1, %f1, %f1};
...   ret;
... }''', "k.ptx")
>>> [(f.producer.ptx_line, f.produced, f.consumer.ptx_line, f.expected) for f in check_kernel(m, "k")]
[(8, 'f16x2', 10, 'bf16x2')]
"""

from __future__ import annotations

from dataclasses import dataclass

from warpsim.ptx.reaching import ControlFlow, bits
from warpsim.ptx.syntax import Operand

__all__ = ["Site", "Finding", "ElementType", "check_kernel", "check_module", "FLOAT_ELEMENTS"]

# element kinds of float data (the PTX ISA, "Fundamental types" and "Alternate floating point data formats")
# -> bits per element
FLOAT_ELEMENTS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "tf32": 32, "e4m3": 8, "e5m2": 8, "e2m1": 4,
                  "e3m2": 6, "e2m3": 6, "ue8m0": 8}
_INT_TYPES = {"b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "pred",
              "u4", "s4", "b1"}
# an element type a consumer accepts besides its own: tf32 operands are f32 bits read with a shorter significand
_ACCEPTS = {"tf32": {"f32"}}
_FLOAT_ARITH = {"add", "sub", "mul", "fma", "mad", "min", "max", "neg", "abs", "div", "rcp", "sqrt", "rsqrt",
                "ex2", "lg2", "sin", "cos", "tanh", "copysign"}
_NO_DESTINATION = {"st", "red", "bar", "barrier", "bra", "ret", "exit", "trap", "cp", "membar", "fence", "prefetch",
                   "prefetchu", "nanosleep", "call", "stmatrix", "pmevent", "griddepcontrol", "brkpt"}
# instructions after which another thread's shared-memory writes may be visible
_SHARED_SYNC = {"bar", "barrier", "membar", "fence", "cp", "mbarrier", "wgmma"}
_TRACKED_SPACES = ("local", "shared")


@dataclass(frozen=True)
class ElementType:
    """``count`` elements of kind ``elem`` in one register: ``ElementType("f16", 2)`` is ``f16x2``.

    str(ElementType("bf16", 2)) == "bf16x2"; str(ElementType("f32", 1)) == "f32"
    """

    elem: str
    count: int = 1

    def __str__(self):
        return self.elem if self.count == 1 else f"{self.elem}x{self.count}"


def parse_type(name):
    """The :class:`ElementType` of a PTX type name, or None for an integer/bit type.

    parse_type("bf16x2") == ElementType("bf16", 2); parse_type("e4m3x2") == ElementType("e4m3", 2);
    parse_type("u32") is None
    """
    if name in FLOAT_ELEMENTS:
        return ElementType(name)
    head, sep, count = name.rpartition("x")
    if sep and head in FLOAT_ELEMENTS and count.isdigit():
        return ElementType(head, int(count))
    return None


def _type_mods(mods):
    """The type modifiers of an instruction, in order: ``cvt.rn.f16x2.f32`` -> ``["f16x2", "f32"]``."""
    return [m for m in mods if m in _INT_TYPES or parse_type(m) is not None]


@dataclass(frozen=True)
class Site:
    """An instruction of the kernel: its PTX line, its name with modifiers, and its ``.loc`` source line (``"k.cu:31"``
    or ``""``)."""

    ptx_line: int
    text: str
    source: str = ""

    def __str__(self):
        at = f"{self.source} / " if self.source else ""
        return f"{at}PTX line {self.ptx_line} ({self.text})"


@dataclass(frozen=True)
class Finding:
    """A consumer reading, as ``expected``, a register that ``producer`` produced as ``produced``.
    ``operand``: the register and its role (``"A register %r13"``); ``packed``: the ``mov`` that packed the
    producer's halves into the register, if any."""

    consumer: Site
    operand: str
    expected: str
    producer: Site
    produced: str
    packed: Site | None = None

    def __str__(self):
        via = f", packed by PTX line {self.packed.ptx_line}" if self.packed else ""
        return (f"{self.consumer} reads {self.operand} as {self.expected}, but {self.producer} produced it as "
                f"{self.produced}{via}")


@dataclass(frozen=True)
class _Origin:
    """Where a value's type comes from: producer instruction index, its type, the packing mov (or -1)."""

    producer: int
    type: ElementType
    packed: int = -1


@dataclass
class _Def:
    """One definition: instruction ``at`` writes ``name`` (a register, or a memory key); ``how`` says how its
    type is found: ``("typed", ElementType)``, ``("copy", [operand names], split)``, ``("pack", [names])``,
    ``("load", key)``, ``("unknown",)``."""

    at: int
    name: object
    how: tuple


def check_module(module):
    """``{kernel: [Finding, ...]}`` for every ``.entry`` of a parsed :class:`~warpsim.ptx.syntax.Module`."""
    return {name: check_kernel(module, name) for name, f in module.functions.items() if f.entry}


def check_kernel(module, kernel):
    """The type-provenance :class:`Finding` list of ``kernel`` in a parsed module, one per (producer,
    consumer) instruction pair, in consumer order. ``ValueError`` for an unknown kernel."""
    f = module.functions.get(kernel)
    if f is None or f.declared_only:
        names = ", ".join(n for n, g in module.functions.items() if g.entry) or "none"
        raise ValueError(f"provenance: no kernel {kernel!r}; the module has: {names}")
    return _Analysis(module, f).findings()


class _Analysis:
    def __init__(self, module, function):
        self.module = module
        self.flow = ControlFlow(function)
        self.instrs = self.flow.instrs
        self.variables = {v.name: v for v in module.variables + function.params + function.locals}

    # definitions ----------------------------------------------------------------------------------------
    def _register_defs(self):
        self.defs = []
        self.reg_defs = [[] for _ in self.instrs]
        for i, ins in enumerate(self.instrs):
            for name, how in self._writes(ins):
                self.reg_defs[i].append(len(self.defs))
                self.defs.append(_Def(i, name, how))
        self.mask_of_name = {}
        for d, definition in enumerate(self.defs):
            self.mask_of_name[definition.name] = self.mask_of_name.get(definition.name, 0) | (1 << d)

    def _reg_kill(self, i):
        if self.instrs[i].guard is not None:
            return 0
        mask = 0
        for d in self.reg_defs[i]:
            mask |= self.mask_of_name[self.defs[d].name]
        return mask

    def _writes(self, ins):
        """``[(register, how), ...]`` that ``ins`` writes (see :class:`_Def`)."""
        op, ops = ins.opcode, ins.operands
        if op in _NO_DESTINATION or not ops:
            return []
        types = _type_mods(ins.mods)
        dst, srcs = ops[0], ops[1:]
        produced = parse_type(types[0]) if types else None
        if op == "mma":
            d_type = parse_type(types[0]) if types else None
            return [(r.name, ("typed", _register_type(d_type)) if d_type else ("unknown",)) for r in _regs(dst)]
        if op == "mov" and dst.kind == "vec":
            src = srcs[0] if srcs else None
            names = [r.name for r in dst.items if r.kind == "reg"]
            if src is not None and src.kind == "reg":
                return [(n, ("copy", [src.name], len(dst.items))) for n in names]
            return [(n, ("unknown",)) for n in names]
        if op in ("ld", "ldu") and dst.kind == "vec":
            return [(r.name, self._load_how(ins, k, produced)) for k, r in enumerate(dst.items) if r.kind == "reg"]
        if dst.kind == "vec":                                   # ldmatrix, and any other vector destination
            return [(r.name, ("unknown",)) for r in _regs(dst)]
        writes = []
        if dst.pair is not None and dst.pair.kind == "reg":
            writes.append((dst.pair.name, ("unknown",)))
        if dst.kind != "reg":
            return writes
        if op in ("ld", "ldu"):
            how = self._load_how(ins, 0, produced)
        elif op == "mov":
            src = srcs[0] if srcs else None
            if src is not None and src.kind == "reg":
                how = ("copy", [src.name], 1)
            elif src is not None and src.kind == "vec":
                how = ("pack", [r.name if r.kind == "reg" else None for r in src.items])
            elif produced is not None and src is not None and src.kind in ("imm", "fimm"):
                how = ("typed", produced)
            else:
                how = ("unknown",)
        elif op == "shfl":
            how = ("copy", [srcs[0].name], 1) if srcs and srcs[0].kind == "reg" else ("unknown",)
        elif op == "selp":
            how = ("copy", [s.name for s in srcs[:2] if s.kind == "reg"], 1)
            if produced is not None and any(s.kind != "reg" for s in srcs[:2]):
                how = ("typed", produced)
        elif op == "cvt" or (op in _FLOAT_ARITH and produced is not None):
            how = ("typed", produced) if produced is not None else ("unknown",)
        else:
            how = ("unknown",)
        writes.append((dst.name, how))
        return writes

    def _load_how(self, ins, k, produced):
        if produced is not None:
            return ("typed", produced)
        return ("load", (ins, k))        # resolved against the memory definitions

    # memory ---------------------------------------------------------------------------------------------
    def _space(self, ins):
        spaces = [m.split("::")[0] for m in ins.mods if m.split("::")[0] in ("shared", "local", "global", "param",
                                                                            "const")]
        return spaces[0] if spaces else "generic"

    def _address(self, i, operand, reaching):
        """``(root, offset)`` of an address operand at instruction ``i``: ``root`` a symbol name or a register
        definition id, following ``mov`` and ``add`` of a constant; None when the base has several
        definitions or none."""
        if operand is None or operand.kind != "addr":
            return None
        base, offset = operand.base, operand.value
        if base is None:
            return None
        if base.kind == "sym":
            return (("sym", base.name), offset + base.value)
        ids = bits(reaching & self.mask_of_name.get(base.name, 0)) if base.kind == "reg" else []
        if len(ids) != 1:
            return None
        root = ids[0]
        for _ in range(16):
            d = self.defs[root]
            ins = self.instrs[d.at]
            ops = ins.operands
            if ins.guard is not None or len(ops) < 2:
                break
            if ins.opcode == "mov" and ops[1].kind == "sym":
                return (("sym", ops[1].name), offset + ops[1].value)
            step = 0 if ins.opcode == "mov" and len(ops) == 2 else \
                ops[2].value if ins.opcode == "add" and len(ops) == 3 and ops[2].kind == "imm" else None
            if step is None or ops[1].kind != "reg":
                break
            ids = self._reaching_defs(d.at, ops[1].name)
            if len(ids) != 1:
                break
            root, offset = ids[0], offset + step
        return (("def", root), offset)

    def _memory_defs(self):
        """Stores to tracked spaces as definitions of ``(space, root, offset, bytes)`` keys; loads resolved."""
        self.mem_defs = []
        self.mem_at = [[] for _ in self.instrs]
        self.mem_kill_rule = [None] * len(self.instrs)
        for i, ins in enumerate(self.instrs):
            space = self._space(ins) if ins.opcode in ("st", "ld", "ldu", "atom", "red", "stmatrix") else None
            if ins.opcode in _SHARED_SYNC:
                self.mem_kill_rule[i] = ("spaces", ("shared",))
            if ins.opcode == "call":
                self.mem_kill_rule[i] = ("spaces", _TRACKED_SPACES)
            if ins.opcode in ("atom", "red", "stmatrix") or (ins.opcode == "st" and space not in _TRACKED_SPACES):
                if space in _TRACKED_SPACES:
                    self.mem_kill_rule[i] = ("spaces", (space,))
                elif space == "generic":
                    self.mem_kill_rule[i] = ("spaces", _TRACKED_SPACES)
                continue
            if ins.opcode != "st":
                continue
            address = self._address(i, ins.operands[0], self.reaching_regs[i])
            if address is None:
                self.mem_kill_rule[i] = ("spaces", (space,))
                continue
            width = _element_bytes(ins)
            values = ins.operands[1]
            items = values.items if values.kind == "vec" else [values]
            keys = []
            for k, item in enumerate(items):
                key = (space, address[0], address[1] + k * width, width)
                keys.append(key)
                self.mem_at[i].append(len(self.mem_defs))
                source = [item.name] if item.kind == "reg" else []
                self.mem_defs.append(_Def(i, key, ("copy", source, 1) if source else ("unknown",)))
            self.mem_kill_rule[i] = ("keys", space, address[0], keys)
        self.mem_masks = {}
        for d, definition in enumerate(self.mem_defs):
            self.mem_masks.setdefault(definition.name[0], 0)
            self.mem_masks[definition.name[0]] |= 1 << d
        self.mem_kill_cache = {}

    def _mem_kill(self, i):
        rule = self.mem_kill_rule[i]
        if rule is None:
            return 0
        if i in self.mem_kill_cache:
            return self.mem_kill_cache[i]
        if rule[0] == "spaces":
            mask = 0
            for space in rule[1]:
                mask |= self.mem_masks.get(space, 0)
        else:
            _, space, root, keys = rule
            mask = 0
            for d in bits(self.mem_masks.get(space, 0)):
                _, other_root, offset, width = self.mem_defs[d].name
                if other_root != root or any(offset < o + w and o < offset + width for _, _, o, w in keys):
                    mask |= 1 << d
        self.mem_kill_cache[i] = mask
        return mask

    # types ----------------------------------------------------------------------------------------------
    def _origins(self):
        """``origins[d]``: the set of :class:`_Origin` of register definition ``d``, to a fixed point."""
        n = len(self.defs)
        self.origins = [frozenset() for _ in range(n)]
        inputs = [[] for _ in range(n)]      # definitions whose origins feed definition d
        users = [[] for _ in range(n)]
        for d, definition in enumerate(self.defs):
            how = definition.how
            if how[0] == "load" and self._declared(definition.at, *how[1]) is not None:
                how = ("typed", self._declared(definition.at, *how[1]))
            if how[0] == "typed":
                self.origins[d] = frozenset({_Origin(definition.at, how[1])})
                continue
            if how[0] == "copy":
                inputs[d] = [self._reaching_defs(definition.at, name) for name in how[1]]
            elif how[0] == "pack":
                inputs[d] = [self._reaching_defs(definition.at, name) if name else [] for name in how[1]]
            elif how[0] == "load":
                ins, k = how[1]
                inputs[d] = [self._load_sources(definition.at, ins, k)]
            for group in inputs[d]:
                for s in group:
                    users[s].append(d)
        work = [d for d in range(n) if self.origins[d]]
        while work:
            s = work.pop()
            for d in users[s]:
                new = self._combine(d, inputs[d])
                if new != self.origins[d]:
                    self.origins[d] = new
                    work.append(d)

    def _combine(self, d, inputs):
        how = self.defs[d].how
        if how[0] == "pack":
            return _pack([frozenset().union(*(self.origins[s] for s in group)) for group in inputs],
                         self.defs[d].at)
        found = frozenset().union(*(self.origins[s] for group in inputs for s in group))
        if how[0] == "copy" and how[2] > 1:
            found = frozenset(_Origin(o.producer, ElementType(o.type.elem, o.type.count // how[2]), o.packed)
                              for o in found if o.type.count % how[2] == 0)
        return found

    def _reaching_defs(self, i, name):
        return bits(self.reaching_regs[i] & self.mask_of_name.get(name, 0))

    def _declared(self, i, ins, k):
        """The element type of a load from a variable declared with a float type (``.param .f32 scale``,
        ``.global .f32 table[16]``), as many elements as the load's element holds; else None."""
        address = self._address(i, ins.operands[1], self.reaching_regs[i])
        variable = self.variables.get(address[0][1]) if address is not None and address[0][0] == "sym" else None
        declared = parse_type(variable.type) if variable is not None else None
        if declared is None:
            return None
        load_bits, elem_bits = 8 * _element_bytes(ins), FLOAT_ELEMENTS[declared.elem] * declared.count
        if load_bits % elem_bits:
            return None
        return ElementType(declared.elem, declared.count * load_bits // elem_bits)

    def _load_sources(self, i, ins, k):
        """Register definitions whose values a tracked load reads (element ``k``), else ``[]``."""
        space = self._space(ins)
        if space not in _TRACKED_SPACES:
            return []
        address = self._address(i, ins.operands[1], self.reaching_regs[i])
        if address is None:
            return []
        width = _element_bytes(ins)
        key = (space, address[0], address[1] + k * width, width)
        stores = [d for d in bits(self.reaching_mem[i]) if self.mem_defs[d].name == key]
        sources = []
        for d in stores:
            store = self.mem_defs[d]
            for name in (store.how[1] if store.how[0] == "copy" else []):
                sources.extend(self._reaching_defs(store.at, name))
        return sources

    # checks ---------------------------------------------------------------------------------------------
    def _reads(self, ins):
        """``[(operand Operand, role, expected ElementType), ...]`` that ``ins`` reads as a float type."""
        op, ops = ins.opcode, ins.operands
        types = _type_mods(ins.mods)
        if op == "mma" and len(types) == 4 and len(ops) == 4:
            _, a, b, c = (parse_type(t) for t in types)
            out = []
            for operand, role, t in ((ops[1], "A", a), (ops[2], "B", b), (ops[3], "C", c)):
                if t is not None:
                    out += [(r, role, _register_type(t)) for r in _regs(operand)]
            return out
        if op == "cvt" and types:
            source = parse_type(types[-1])
            return [(s, "source", source) for s in ops[1:] if s.kind == "reg"] if source else []
        if op in _FLOAT_ARITH or op in ("setp", "testp"):
            t = parse_type(types[-1]) if types else None
            if t is None:
                return []
            srcs = ops[1:3] if op == "setp" else ops[1:]
            return [(s, "operand", t) for s in srcs if s.kind == "reg"]
        if op == "st" and types and parse_type(types[-1]) is not None and len(ops) == 2:
            return [(r, "stored value", parse_type(types[-1])) for r in _regs(ops[1])]
        if op == "selp" and types and parse_type(types[0]) is not None:
            return [(s, "operand", parse_type(types[0])) for s in ops[1:3] if s.kind == "reg"]
        return []

    def findings(self):
        self._register_defs()
        self.reaching_regs = self.flow.reaching(self.reg_defs, self._reg_kill)
        self._memory_defs()
        self.reaching_mem = self.flow.reaching(self.mem_at, self._mem_kill)
        self._origins()
        found, seen = [], set()
        for i, ins in enumerate(self.instrs):
            for operand, role, expected in self._reads(ins):
                accepted = {expected.elem} | _ACCEPTS.get(expected.elem, set())
                for d in self._reaching_defs(i, operand.name):
                    for origin in sorted(self.origins[d], key=lambda o: (o.producer, o.packed)):
                        if origin.type.elem in accepted or (i, origin.producer) in seen:
                            continue
                        seen.add((i, origin.producer))
                        found.append(Finding(self.site(i), f"{role} register {operand.name}", str(expected),
                                             self.site(origin.producer), str(origin.type),
                                             self.site(origin.packed) if origin.packed >= 0 else None))
        return found

    def site(self, i):
        ins = self.instrs[i]
        line = ins.token.line
        text = ".".join((ins.opcode,) + ins.mods)
        source = ""
        if ins.loc is not None and ins.loc.line > 0:
            path = self.module.files.get(ins.loc.file, f"file{ins.loc.file}")
            source = f"{path.replace(chr(92), '/').rsplit('/', 1)[-1]}:{ins.loc.line}"
        return Site(line, text, source)


def _regs(operand):
    """The register operands of an operand or a vector of them."""
    items = operand.items if operand.kind == "vec" else [operand]
    return [r for r in items if isinstance(r, Operand) and r.kind == "reg"]


def _register_type(t):
    """What one 32-bit (or 64-bit) fragment register of element type ``t`` holds: ``bf16`` -> ``bf16x2``."""
    bits = FLOAT_ELEMENTS.get(t.elem, 32) * t.count
    return ElementType(t.elem, t.count * 32 // bits) if bits < 32 else t


def _element_bytes(ins):
    """Bytes of one element a ``ld``/``st`` moves (its type's size)."""
    types = _type_mods(ins.mods)
    t = types[-1] if types else "b32"
    parsed = parse_type(t)
    if parsed is not None:
        return max(1, FLOAT_ELEMENTS[parsed.elem] * parsed.count // 8)
    return max(1, int("".join(c for c in t if c.isdigit()) or 32) // 8)


def _pack(items, at):
    """Origins of a register packed from ``items`` (each a set of origins): known only when every item has one and
    the same known type (``mov.b32 %f, {0, %h}``, bf16 bits widened to f32, is not a pair); the first
    item's producer names it."""
    types = {o.type for group in items for o in group}
    if len(types) != 1 or not all(items):
        return frozenset()
    one = types.pop()
    first = min(items[0], key=lambda o: o.producer)
    return frozenset({_Origin(first.producer, ElementType(one.elem, one.count * len(items)), at)})
