"""Executes a kernel made by ``hwcheck.device.lower`` from its CUDA SOURCE, statement by statement, on numpy.

This is the fake GPU's half of ``hwcheck run``: it reads only the generated text (the ``#define``s, the
register declaration, the ``switch (warp)`` cases, ``bar.sync``, every ``asm volatile`` statement with
its operand constraints, the snapshot stores and the 16-bit merges) and gives each statement the
meaning CUDA and PTX give it. It never looks at the instruction stream, so agreeing with warpsim's
executor on a lowered program tests the lowering (address-table positions, snapshot slots, operand
order, register halves, per-warp cases) as well as the plumbing around a launch.

Warps run one after another within each barrier phase (a schedule a GPU may choose; programs whose
warps share data only across barriers give the same result under any schedule). Shared memory is
zeroed at entry and copied to ``smem_out`` at exit, as the kernel's prologue and epilogue say.
Memory accesses are checked as a GPU checks them (alignment to the access size, bounds); a violation
raises ``AssertionError`` naming the statement. ``ldmatrix`` is implemented here from the PTX ISA's
description of the fragment (section "Warp-level matrix load instruction: ldmatrix"); ``mma`` and
``cvt`` use warpsim's batched ISA functions, whose bits part A checked against an H200.

A statement the emulator does not know is an ``AssertionError`` quoting it, so a change to the
lowering cannot pass unnoticed.
"""

import re

import numpy as np

from warpsim.isa import cvt_pack, mma_m16n8k8, mma_m16n8k16
from warpsim.isa.fpbatch import float_arith, float_minmax, float_setp, float_sign
from warpsim.isa.mufu32 import MUFU32_OPS, TABLE_NAMES, mufu_tables

__all__ = ["LoweredKernel", "parse_kernel", "emulate_kernel"]

SIGNATURE = ("warpsim_kernel(unsigned char* gmem, const long long* addr, unsigned* snap, "
             "unsigned char* smem_out)")
_BAR = 'asm volatile("bar.sync 0;" ::: "memory");'
_ZERO = "for (unsigned i = tid; i < SMEM_BYTES; i += NT) smem[i] = 0;"
_COPY_OUT = "for (unsigned i = tid; i < SMEM_BYTES; i += NT) smem_out[i] = smem[i];"
_OPERAND = re.compile(r'"(=?[rhlf])"\(((?:[^()]|\([^()]*\))*)\)')
_PRED = re.compile(r"if \(addr\[(\d+)ull \* NT \+ tid\]\) \{")
_MMA = re.compile(r"mma\.sync\.aligned\.(m16n8k16|m16n8k8)\.row\.col\.(f32|f16)\.(f16|bf16)\.(f16|bf16)\.(f32|f16)")
_LANES = np.arange(32)


class LoweredKernel:
    """The parsed kernel: ``threads``, ``smem_bytes``, ``registers`` and ``phases`` (lists of items;
    an item is a statement line, or ``{warp: [lines]}`` for a ``switch (warp)``)."""

    def __init__(self, threads, smem_bytes, registers, phases):
        self.threads, self.smem_bytes, self.registers, self.phases = threads, smem_bytes, registers, phases


def _define(source, name):
    m = re.search(rf"^#define {name} (\d+)$", source, re.M)
    assert m, f"emulator: no #define {name}"
    return int(m.group(1))


def parse_kernel(source: str) -> LoweredKernel:
    threads = _define(source, "NT")
    smem_bytes = _define(source, "SMEM_BYTES")
    assert SIGNATURE in source, "emulator: unexpected kernel signature"
    lines = [line.strip() for line in source.splitlines()]
    decl = [line for line in lines if line.startswith("unsigned r0 = 0u")]
    assert len(decl) == 1, "emulator: no register declaration"
    names = [part.strip() for part in decl[0][len("unsigned "):].rstrip(";").split(",")]
    for i, part in enumerate(names):
        assert part == f"r{i} = 0u", f"emulator: register declaration {part!r} at position {i}"
    syncs = [i for i, line in enumerate(lines) if line == "__syncthreads();"]
    assert len(syncs) == 2, f"emulator: expected 2 __syncthreads(), found {len(syncs)}"
    assert lines[syncs[0] - 1] == _ZERO and lines[syncs[1] + 1] == _COPY_OUT, "emulator: prologue/epilogue"
    phases, current, switch, case, guarded = [[]], None, None, None, None
    for line in lines[syncs[0] + 1:syncs[1]]:
        if not line or line.startswith("//"):
            continue
        if guarded is not None:                       # inside `if (addr[p]) { ... }`: a predicated statement
            if line == "}":
                (current if case is not None else phases[-1]).append(guarded)
                guarded = None
            else:
                guarded[1].append(line)
            continue
        if m := _PRED.fullmatch(line):
            guarded = (int(m.group(1)), [])
        elif line == _BAR:
            assert switch is None, "emulator: bar.sync inside a switch"
            phases.append([])
        elif line == "switch (warp) {":
            assert switch is None, "emulator: nested switch"
            switch = {}
            phases[-1].append(switch)
        elif re.fullmatch(r"case \d+: \{", line):
            assert switch is not None and case is None, f"emulator: stray {line!r}"
            case = int(line.split()[1].rstrip(":"))
            assert case not in switch, f"emulator: case {case} twice"
            current = switch[case] = []
        elif line == "break; }":
            assert case is not None, "emulator: stray break"
            case, current = None, None
        elif line == "}":
            assert switch is not None and case is None, "emulator: stray }"
            switch = None
        else:
            (current if case is not None else phases[-1]).append(line)
    assert switch is None and guarded is None, "emulator: unterminated switch or if"
    return LoweredKernel(threads, smem_bytes, len(names), phases)


def _split_operands(text):
    """``{%0, %1}, [%4]`` -> ``[("vec", [0, 1]), ("addr", [4])]``."""
    out, depth, token = [], 0, ""
    for ch in text + ",":
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == "," and depth == 0:
            token = token.strip()
            kind = {"{": "vec", "[": "addr"}.get(token[0], "scalar")
            out.append((kind, [int(n) for n in re.findall(r"%(\d+)", token)]))
            token = ""
        else:
            token += ch
    return out


class _Warp:
    """One warp's state while it runs: registers ``uint32[R, 32]`` and the statement temporaries."""

    def __init__(self, kernel, warp, mem):
        self.warp, self.mem, self.kernel = warp, mem, kernel
        self.regs = np.zeros((kernel.registers, 32), np.uint32)
        self.temps = {}
        self.mask = np.ones(32, bool)         # the lanes a predicated statement runs in

    def table(self, pos):
        threads = self.kernel.threads
        start = pos * threads + 32 * self.warp
        table = self.mem["addr"]
        assert start + 32 <= table.size, f"emulator: address table position {pos} beyond the table"
        return table[start:start + 32].astype(np.int64)

    def value(self, constraint, expr, line):
        """An input operand: per-lane uint32 values, or ``(space, int64[32])`` for an address."""
        if m := re.fullmatch(r"r(\d+)", expr):
            assert constraint == "r", line
            return self.regs[int(m.group(1))].copy()
        if m := re.fullmatch(r"__uint_as_float\(r(\d+)\)", expr):
            assert constraint == "f", line
            return self.regs[int(m.group(1))].copy()
        if m := re.fullmatch(r"sbase \+ \(unsigned\)addr\[(\d+)ull \* NT \+ tid\]", expr):
            assert constraint == "r", line
            return ("shared", self.table(int(m.group(1))))
        if m := re.fullmatch(r"gmem \+ addr\[(\d+)ull \* NT \+ tid\]", expr):
            assert constraint == "l", line
            return ("global", self.table(int(m.group(1))))
        if m := re.fullmatch(r"\(unsigned short\)\(r(\d+)( >> 16)?\)", expr):
            assert constraint == "h", line
            return (self.regs[int(m.group(1))] >> np.uint32(16 if m.group(2) else 0)) & np.uint32(0xFFFF)
        raise AssertionError(f"emulator: unknown operand {constraint}({expr}) in: {line}")

    def assign(self, constraint, expr, value, line):
        value = np.asarray(value, dtype=np.uint32)
        if m := re.fullmatch(r"r(\d+)", expr):
            assert constraint == "=r", line
            reg = int(m.group(1))
            self.regs[reg] = np.where(self.mask, value, self.regs[reg])
        elif re.fullmatch(r"d\d+", expr):
            assert constraint == "=f", line
            self.temps[expr] = value
        elif expr == "h":
            assert constraint == "=h", line
            self.temps["h"] = value & np.uint32(0xFFFF)
        else:
            raise AssertionError(f"emulator: unknown output {constraint}({expr}) in: {line}")

    # -- memory --------------------------------------------------------------------------------
    def _bytes(self, space, addrs, size, line):
        mem = self.mem["smem"] if space == "shared" else self.mem["gmem"]
        for lane, a in enumerate(addrs):
            if not self.mask[lane]:
                continue
            assert a % size == 0, f"emulator: lane {lane} address {a:#x} not {size}-byte aligned: {line}"
            assert 0 <= a and a + size <= mem.size, \
                f"emulator: lane {lane} address {a:#x} + {size} outside {space} [0, {mem.size:#x}): {line}"
        return mem

    def load(self, space, addrs, size, line):
        mem = self._bytes(space, addrs, size, line)
        rows = np.stack([mem[a:a + size] if on else np.zeros(size, np.uint8)   # [32, size] bytes
                         for a, on in zip(addrs, self.mask)])
        if size == 2:
            return [rows.view("<u2")[:, 0].astype(np.uint32)]
        return list(rows.view("<u4").T.astype(np.uint32))                 # one array per register

    def store(self, space, addrs, values, size, line):
        mem = self._bytes(space, addrs, size, line)
        if size == 2:
            data = values[0].astype("<u2").reshape(32, 1).view(np.uint8)
        else:
            data = np.stack(values, axis=1).astype("<u4").view(np.uint8)  # [32, size]
        for lane, a in enumerate(addrs):
            if self.mask[lane]:
                mem[a:a + size] = data[lane]

    def ldmatrix(self, addrs, num, trans):
        """PTX ldmatrix .m8n8 .b16: matrix m's rows come from lanes 8m..8m+7 (16 bytes each); without
        .trans lane l gets row l//4, elements 2(l%4), 2(l%4)+1; with .trans it gets column l//4,
        rows 2(l%4) and 2(l%4)+1 (the lower half holds the first)."""
        smem = self.mem["smem"]
        for lane in range(8 * num):
            a = int(addrs[lane])
            assert a % 16 == 0 and 0 <= a and a + 16 <= smem.size, f"emulator: ldmatrix row {lane} at {a:#x}"
        out = []
        for m in range(num):
            rows = [int(a) for a in addrs[8 * m:8 * m + 8]]
            half = lambda r, c: int(smem[rows[r] + 2 * c]) | int(smem[rows[r] + 2 * c + 1]) << 8
            reg = np.zeros(32, np.uint32)
            for lane in range(32):
                g, t = lane // 4, lane % 4
                lo, hi = ((half(2 * t, g), half(2 * t + 1, g)) if trans else (half(g, 2 * t), half(g, 2 * t + 1)))
                reg[lane] = lo | hi << 16
            out.append(reg)
        return out

    # -- statements ----------------------------------------------------------------------------
    def run(self, line):
        if isinstance(line, tuple):                   # (table position, statements): run where it is not 0
            pos, body = line
            self.mask = self.table(pos) != 0
            try:
                for statement in body:
                    self.run(statement)
            finally:
                self.mask = np.ones(32, bool)
            return
        if line.startswith("{ "):
            line = line[2:]
        if line.endswith(" }"):
            line = line[:-2]
        if re.fullmatch(r"(unsigned short h|float d\d+(, d\d+)*);", line):
            return
        if m := re.fullmatch(r"r(\d+) = (0x[0-9a-f]+)u;", line):
            self.regs[int(m.group(1))] = np.uint32(int(m.group(2), 16))
            return
        if m := re.fullmatch(r"snap\[(\d+)ull \* NT \+ tid\] = r(\d+);", line):
            start = int(m.group(1)) * self.kernel.threads + 32 * self.warp
            snap = self.mem["snap"]
            assert start + 32 <= snap.size, f"emulator: snapshot slot {m.group(1)} beyond the buffer"
            snap[start:start + 32] = self.regs[int(m.group(2))]
            return
        if m := re.fullmatch(r"r(\d+) = \(unsigned\)addr\[(\d+)ull \* NT \+ tid\];", line):
            self.regs[int(m.group(1))] = (self.table(int(m.group(2))) & 0xFFFFFFFF).astype(np.uint32)
            return
        if m := re.fullmatch(r"r(\d+) = __float_as_uint\((d\d+)\);", line):
            self.regs[int(m.group(1))] = self.temps[m.group(2)]
            return
        if m := re.fullmatch(r"r(\d+) = \(r(\d+) & (0x[0-9A-Fa-f]+)u\) \| \(\(unsigned\)h( << 16)?\);", line):
            assert m.group(1) == m.group(2), line
            reg, keep = int(m.group(1)), np.uint32(int(m.group(3), 16))
            self.regs[reg] = (self.regs[reg] & keep) | (self.temps["h"] << np.uint32(16 if m.group(4) else 0))
            return
        if m := re.fullmatch(r'asm volatile\("([^"]*)"(.*)\);', line):
            self.asm(m.group(1), m.group(2), line)
            return
        raise AssertionError(f"emulator: unknown statement: {line}")

    def asm(self, text, rest, line):
        sections = rest.split(":")
        assert sections[0].strip() == "" and len(sections) in (3, 4), line
        outs = _OPERAND.findall(sections[1])
        ins = _OPERAND.findall(sections[2])
        assert all(c.startswith("=") for c, _ in outs) and not any(c.startswith("=") for c, _ in ins), line
        if len(sections) == 4:
            assert sections[3].strip() == '"memory"', line
        operands = [("out", c, e) for c, e in outs] + [("in", c, e) for c, e in ins]
        op, _, rest_text = text.partition(" ")
        assert rest_text.endswith(";"), line
        groups = _split_operands(rest_text[:-1])
        for _kind, numbers in groups:
            assert all(0 <= n < len(operands) for n in numbers), f"emulator: operand out of range: {line}"
        used = sorted(n for _k, ns in groups for n in ns)
        assert used == list(range(len(operands))), f"emulator: operands used {used} of {len(operands)}: {line}"

        def read(numbers):
            vals = []
            for n in numbers:
                role, c, e = operands[n]
                assert role == "in", f"emulator: %{n} read but it is an output: {line}"
                vals.append(self.value(c, e, line))
            return vals

        def write(numbers, values):
            assert len(numbers) == len(values), line
            for n, v in zip(numbers, values):
                role, c, e = operands[n]
                assert role == "out", f"emulator: %{n} written but it is an input: {line}"
                self.assign(c, e, v, line)

        parts = op.split(".")
        if parts[0] in ("ld", "st"):
            space = parts[1]
            assert space in ("shared", "global"), line
            nvec = int(parts[2][1:]) if parts[2].startswith("v") else 1
            bits = int(parts[-1][1:])
            size = nvec * bits // 8
            if parts[0] == "ld":
                (dk, dst), (ak, addr) = groups
                assert dk in ("vec", "scalar") and ak == "addr" and len(addr) == 1 and len(dst) == nvec, line
                (where,) = read(addr)
                assert where[0] == space, f"emulator: {space} access through a {where[0]} address: {line}"
                write(dst, self.load(space, where[1], size, line))
            else:
                (ak, addr), (sk, src) = groups
                assert ak == "addr" and len(addr) == 1 and len(src) == nvec, line
                (where,) = read(addr)
                assert where[0] == space, f"emulator: {space} access through a {where[0]} address: {line}"
                self.store(space, where[1], read(src), size, line)
        elif op.startswith("ldmatrix.sync.aligned.m8n8."):
            m = re.fullmatch(r"ldmatrix\.sync\.aligned\.m8n8\.x([124])(\.trans)?\.shared\.b16", op)
            assert m, line
            num = int(m.group(1))
            (dk, dst), (ak, addr) = groups
            assert len(dst) == num and ak == "addr", line
            (where,) = read(addr)
            assert where[0] == "shared", line
            write(dst, self.ldmatrix(where[1], num, bool(m.group(2))))
        elif op.startswith("mma."):
            m = _MMA.fullmatch(op)
            assert m and m.group(3) == m.group(4) and m.group(2) == m.group(5), line
            shape, cd, ab = m.group(1), m.group(2), m.group(3)
            (_, d), (_, a), (_, b), (_, c) = groups
            fn = mma_m16n8k16 if shape == "m16n8k16" else mma_m16n8k8
            stack = lambda vals: np.stack(vals, axis=1).astype(np.uint32)    # [32, n]
            result = fn(stack(read(a)), stack(read(b)), stack(read(c)), ab=ab, cd=cd, arch="sm90", parallel=False)
            write(d, list(result.T))
        elif op.startswith("cvt."):
            m = re.fullmatch(r"cvt\.rn\.(f16|bf16)x2\.f32", op)
            assert m and len(groups) == 3, line
            (_, d), (_, a), (_, b) = groups
            (va,), (vb,) = read(a), read(b)
            write(d, [cvt_pack(va.astype(np.uint32), vb.astype(np.uint32), to=m.group(1))])
        elif op == "shfl.sync.bfly.b32":
            (_, d), (_, a), (_, offset), (_, clamp), (_, lanes) = groups
            m = re.search(r"%1, (\d+), 0x1f, 0xffffffff;$", text)
            assert m and not offset and not clamp and not lanes, line
            (va,) = read(a)
            write(d, [va[_LANES ^ int(m.group(1))]])
        elif op in _F32_FORMS or op.startswith("set.") or op == "slct.b32.s32" or op == "mov.b32":
            (_, d), *sources = groups
            values = [read(numbers)[0].astype(np.uint32) for _, numbers in sources]
            write(d, [_per_lane(op, values)])
        else:
            raise AssertionError(f"emulator: unknown instruction {op}: {line}")


_F32_FORMS = ("add.rn.f32", "sub.rn.f32", "mul.rn.f32", "fma.rn.f32", "div.rn.f32", "max.f32", "neg.f32",
              "ex2.approx.ftz.f32", "lg2.approx.ftz.f32")


def _per_lane(op, values):
    """One element-wise instruction of the lowering on uint32[32] operands, by warpsim's batched float
    API (its bits checked against an H200 in the float campaign), the MUFU forms by warpsim.isa.mufu32."""
    if op == "mov.b32":
        return values[0]
    if op == "slct.b32.s32":
        a, b, c = values
        return np.where(c.view(np.int32) >= 0, a, b)
    if op.startswith("set."):
        m = re.fullmatch(r"set\.(\w+)\.s32\.f32", op)
        assert m, op
        return np.where(float_setp(m.group(1), *values), np.uint32(0xFFFFFFFF), np.uint32(0))
    if op == "max.f32":
        return float_minmax("max", *values)
    if op == "neg.f32":
        return float_sign("neg", values[0])
    name, *_ = op.split(".")
    if name in ("ex2", "lg2"):
        fn, index = MUFU32_OPS[(name, True)]
        table = mufu_tables((TABLE_NAMES[index],))[index]
        return np.array([fn(x, table) for x in values[0]], np.uint32)
    return float_arith(name, *values, rnd="rn", parallel=False)


def emulate_kernel(source, grid, block, args, shared_mem):
    """Check a launch of a lowered kernel and run it: ``args = (gmem uint8, addr int64, snap uint32,
    smem_out)``, numpy arrays updated in place as the GPU updates device memory."""
    kernel = parse_kernel(source)
    gmem, addr, snap, smem_out = args
    assert grid == 1, f"emulator: a lowered kernel runs as one CTA, launched with grid {grid}"
    assert block == kernel.threads, f"emulator: block {block} != NT {kernel.threads}"
    assert shared_mem >= kernel.smem_bytes, f"emulator: {shared_mem} bytes of dynamic shared memory < {kernel.smem_bytes}"
    assert gmem.dtype == np.uint8 and addr.dtype == np.int64 and snap.dtype == np.uint32, \
        f"emulator: argument types {gmem.dtype}, {addr.dtype}, {snap.dtype}"
    assert smem_out.nbytes >= kernel.smem_bytes, "emulator: smem_out too small"
    mem = {"gmem": gmem.reshape(-1), "addr": addr.reshape(-1), "snap": snap.reshape(-1),
           "smem": np.zeros(shared_mem, np.uint8)}
    warps = [_Warp(kernel, w, mem) for w in range(kernel.threads // 32)]
    for phase in kernel.phases:
        for warp in warps:
            for item in phase:
                lines = item.get(warp.warp, []) if isinstance(item, dict) else [item]
                for line in lines:
                    warp.run(line)
    smem_out.reshape(-1).view(np.uint8)[:kernel.smem_bytes] = mem["smem"][:kernel.smem_bytes]
