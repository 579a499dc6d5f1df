"""Lowering: a warp instruction stream becomes one CUDA C++ kernel with inline PTX.

The kernel needs no headers. Each thread's registers are scalar ``unsigned`` variables ``r0 .. r{R-1}``
(indexed only by constants, so they live in real registers), zero at entry as in the simulator. Shared
memory is zeroed at entry. Per-lane addresses come from an address table in global memory; register
snapshots go to a snapshot buffer. Kernel signature::

    warpsim_kernel(unsigned char* gmem, const long long* addr, unsigned* snap, unsigned char* smem_out)

The stream is cut into phases at ``bar.sync``. In a phase where every warp runs the same instructions
(same kinds, registers and attributes; only addresses differ) the code is emitted once; otherwise each
warp gets its own ``case`` of a ``switch (warp)``. The barrier itself is emitted once, outside any branch.

Element-wise arithmetic (``Op.ALU``: ``fma.rn.f32`` ...; ``Op.SHFL``) is one inline-PTX statement each;
``Op.MOVL`` reads its per-lane value from the address table; a predicated ``ld``/``st`` runs under
``if (addr[p * NT + tid])``, its predicates a row of the same table.

Tables are indexed by *code position*: address slot ``p`` of thread ``t`` is ``addr[p * NT + t]`` and
snapshot slot ``s`` of thread ``t`` is ``snap[s * NT + t]``. :class:`Lowered` maps stream positions to
slots, so that :mod:`hwcheck.compare` can line the GPU's snapshots up with the simulator's.

>>> from warpsim.program.instr import Instr, Op
>>> import numpy as np
>>> s = [Instr(Op.MOV, w, dst=(0,), imm=7) for w in range(2)]
>>> low = lower(s, warps=2, regs=1, smem_bytes=0)
>>> low.snap_slots[:, 0].tolist(), low.snap_positions
([0, 0], 1)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from warpsim.isa.alu32 import alu_sources
from warpsim.isa.fragments import MMA_REGS
from warpsim.program.instr import Instr, Op

__all__ = ["Lowered", "lower", "KERNEL_NAME"]

KERNEL_NAME = "warpsim_kernel"
_MAX_DST = 4


@dataclass(frozen=True)
class Lowered:
    """A lowered stream: CUDA source plus the tables the launch needs.

    ``addr_table``: int64[addr_positions * threads]; ``snap_slots``: int64[len(stream), 4], the snapshot
    slot of each destination register of each stream instruction (-1 where none).
    """

    source: str
    threads: int
    smem_bytes: int
    addr_table: np.ndarray
    snap_slots: np.ndarray
    snap_positions: int


def _phases(stream, warps):
    """Split each warp's instructions at BAR; every warp must reach the same number of barriers."""
    per_warp = [[[]] for _ in range(warps)]
    for index, instr in enumerate(stream):
        if not 0 <= instr.warp < warps:
            raise ValueError(f"lower: instruction {index} ({instr.ptx}) names warp {instr.warp}, "
                             f"but the CTA has {warps} warps")
        if instr.op == Op.BAR:
            per_warp[instr.warp].append([])
        else:
            per_warp[instr.warp][-1].append(index)
    counts = {len(p) - 1 for p in per_warp}
    if len(counts) != 1:
        raise ValueError(f"lower: warps reach different numbers of bar.sync: "
                         f"{[len(p) - 1 for p in per_warp]}")
    return [[per_warp[w][k] for w in range(warps)] for k in range(counts.pop() + 1)]


class _Emitter:
    def __init__(self, stream, threads):
        self.stream = stream
        self.threads = threads
        self.lines: list[str] = []
        self.addr_rows: list[dict[int, np.ndarray]] = []  # per address position: warp -> int64[32]
        self.snap_slots = np.full((len(stream), _MAX_DST), -1, dtype=np.int64)
        self.snap_positions = 0

    def emit_group(self, indices_by_warp, indent):
        """Emit one instruction shared by the given warps (indices_by_warp: warp -> stream index)."""
        first = self.stream[next(iter(indices_by_warp.values()))]
        addr_expr = self._table_row(indices_by_warp, "addr")
        body = _instr_code(first, addr_expr)
        pred_expr = self._table_row(indices_by_warp, "pred")
        if pred_expr is not None:
            body = [f"if ({pred_expr}) {{"] + ["  " + line for line in body] + ["}"]
        pad = " " * indent
        self.lines.append(f"{pad}// {first.ptx}")
        self.lines.extend(pad + line for line in body)
        for j, reg in enumerate(first.dst):
            slot = self.snap_positions
            self.snap_positions += 1
            self.lines.append(f"{pad}snap[{slot}ull * NT + tid] = r{reg};")
            for i in indices_by_warp.values():
                self.snap_slots[i, j] = slot

    def _table_row(self, indices_by_warp, field):
        """The expression reading this instruction's per-lane ``field`` (addresses, predicates) from its
        new row of the table, or None."""
        if getattr(self.stream[next(iter(indices_by_warp.values()))], field) is None:
            return None
        pos = len(self.addr_rows)
        self.addr_rows.append({w: getattr(self.stream[i], field) for w, i in indices_by_warp.items()})
        return f"addr[{pos}ull * NT + tid]"

    def table(self):
        table = np.zeros(max(1, len(self.addr_rows)) * self.threads, dtype=np.int64)
        for pos, row in enumerate(self.addr_rows):
            for warp, addrs in row.items():
                start = pos * self.threads + warp * 32
                table[start:start + 32] = np.asarray(addrs, dtype=np.int64)
        return table


def lower(stream: list[Instr], *, warps: int, regs: int, smem_bytes: int) -> Lowered:
    """Lower ``stream`` for a CTA of ``warps`` warps with ``regs`` registers per thread.

    Pre-conditions: every register index < ``regs``; every warp executes the same number of ``BAR``.
    Post-condition: the kernel, launched with one block of ``32 * warps`` threads and ``smem_bytes`` of
    dynamic shared memory, executes ``stream`` and writes each destination register after each
    instruction to its snapshot slot.
    """
    threads = 32 * warps
    for index, instr in enumerate(stream):
        for reg in instr.dst + instr.src:
            if not 0 <= reg < regs:
                raise ValueError(f"lower: instruction {index} ({instr.ptx}) uses register r{reg}, "
                                 f"outside the {regs} registers of a thread")
        if len(instr.dst) > _MAX_DST:
            raise ValueError(f"lower: instruction {index} ({instr.ptx}) writes {len(instr.dst)} registers")
    emitter = _Emitter(stream, threads)
    for phase_number, phase in enumerate(_phases(stream, warps)):
        if phase_number:
            emitter.lines.append("  asm volatile(\"bar.sync 0;\" ::: \"memory\");")
        lengths = {len(p) for p in phase}
        uniform = len(lengths) == 1 and all(
            len({stream[phase[w][k]].key() for w in range(warps)}) == 1
            for k in range(lengths.copy().pop()))
        if uniform:
            for k in range(len(phase[0])):
                emitter.emit_group({w: phase[w][k] for w in range(warps)}, indent=2)
        else:
            emitter.lines.append("  switch (warp) {")
            for w in range(warps):
                emitter.lines.append(f"  case {w}: {{")
                for index in phase[w]:
                    emitter.emit_group({w: index}, indent=4)
                emitter.lines.append("    break; }")
            emitter.lines.append("  }")
    source = _KERNEL.format(
        name=KERNEL_NAME, threads=threads, smem_bytes=smem_bytes,
        registers=", ".join(f"r{i} = 0u" for i in range(max(regs, 1))),
        body="\n".join(emitter.lines))
    return Lowered(source=source, threads=threads, smem_bytes=smem_bytes, addr_table=emitter.table(),
                   snap_slots=emitter.snap_slots, snap_positions=emitter.snap_positions)


def _regs(names, kind="r"):
    return [f"\"{kind}\"({n})" for n in names]


def _instr_code(instr: Instr, addr: str | None) -> list[str]:
    """CUDA statements for one instruction (addresses from the expression ``addr``)."""
    op = instr.op
    if op == Op.MOV:
        return [f"r{reg} = {instr.imm & 0xFFFFFFFF:#x}u;" for reg in instr.dst]
    if op in (Op.LD, Op.ST):
        return _memory_code(instr, addr)
    if op == Op.LDMATRIX:
        outs = ", ".join(f"%{i}" for i in range(instr.num))
        cons = ", ".join(_regs([f"r{r}" for r in instr.dst], "=r"))
        return [f"asm volatile(\"{instr.ptx} {{{outs}}}, [%{instr.num}];\" : {cons} "
                f": \"r\"(sbase + (unsigned){addr}) : \"memory\");"]
    if op == Op.MMA:
        return _mma_code(instr)
    if op == Op.CVT:
        (d,), (a, b) = instr.dst, instr.src
        return [f"asm volatile(\"{instr.ptx} %0, %1, %2;\" : \"=r\"(r{d}) "
                f": \"f\"(__uint_as_float(r{a})), \"f\"(__uint_as_float(r{b})));"]
    if op == Op.ALU:
        return _alu_code(instr)
    if op == Op.SHFL:
        (d,), (a,) = instr.dst, instr.src
        return [f"asm volatile(\"{instr.ptx} %0, %1, {instr.imm}, 0x1f, 0xffffffff;\" : \"=r\"(r{d}) : \"r\"(r{a}));"]
    if op == Op.MOVL:
        (d,) = instr.dst
        return [f"r{d} = (unsigned){addr};"]
    raise ValueError(f"lower: cannot lower {instr.ptx}")


def _alu_code(instr: Instr) -> list[str]:
    """One per-lane instruction: f32 operands through ``"f"`` (the register's bits as a float), b32/s32
    ones through ``"r"``; ``set`` writes an s32 mask."""
    form, (d,) = instr.form, instr.dst
    if len(instr.src) != alu_sources(form):
        raise ValueError(f"lower: {form} needs {alu_sources(form)} source registers, got {len(instr.src)}")
    operands = ", ".join(f"%{i}" for i in range(len(instr.src) + 1))
    text = f"{form} {operands};"
    if form.endswith(".f32") and not form.startswith("set."):
        ins = ", ".join(f"\"f\"(__uint_as_float(r{r}))" for r in instr.src)
        return ["{ float d0;",
                f"  asm volatile(\"{text}\" : \"=f\"(d0) : {ins});",
                f"  r{d} = __float_as_uint(d0); }}"]
    if form.startswith("set."):
        ins = ", ".join(f"\"f\"(__uint_as_float(r{r}))" for r in instr.src)
    else:
        ins = ", ".join(_regs([f"r{r}" for r in instr.src]))
    return [f"asm volatile(\"{text}\" : \"=r\"(r{d}) : {ins});"]


def _memory_code(instr: Instr, addr: str) -> list[str]:
    shared = instr.space == "shared"
    if instr.space not in ("shared", "global"):
        raise ValueError(f"lower: {instr.ptx}: unknown state space {instr.space!r}")
    pointer = f"\"r\"(sbase + (unsigned){addr})" if shared else f"\"l\"(gmem + {addr})"
    load = instr.op == Op.LD
    if instr.bits == 16:
        (reg,) = instr.dst if load else instr.src
        keep, shift = ("0xFFFF0000u", "") if instr.half == 0 else ("0x0000FFFFu", " << 16")
        if load:
            return ["{ unsigned short h;",
                    f"  asm volatile(\"{instr.ptx} %0, [%1];\" : \"=h\"(h) : {pointer} : \"memory\");",
                    f"  r{reg} = (r{reg} & {keep}) | ((unsigned)h{shift}); }}"]
        value = f"(unsigned short)(r{reg}{' >> 16' if instr.half else ''})"
        return [f"asm volatile(\"{instr.ptx} [%0], %1;\" :: {pointer}, \"h\"({value}) : \"memory\");"]
    regs = instr.dst if load else instr.src
    n = len(regs)
    first = 0 if load else 1
    vec = f"%{first}" if n == 1 else "{" + ", ".join(f"%{first + i}" for i in range(n)) + "}"
    names = [f"r{r}" for r in regs]
    if load:
        cons = ", ".join(_regs(names, "=r"))
        return [f"asm volatile(\"{instr.ptx} {vec}, [%{n}];\" : {cons} : {pointer} : \"memory\");"]
    cons = ", ".join(_regs(names))
    return [f"asm volatile(\"{instr.ptx} [%0], {vec};\" :: {pointer}, {cons} : \"memory\");"]


def _mma_code(instr: Instr) -> list[str]:
    na, nb, nc = MMA_REGS[(instr.shape, instr.cd)]
    a, b, c = instr.src[:na], instr.src[na:na + nb], instr.src[na + nb:]
    if len(c) != nc or len(instr.dst) != nc:
        raise ValueError(f"lower: {instr.ptx} needs {na}+{nb}+{nc} source and {nc} destination registers")
    groups, n = [], 0
    for count in (nc, na, nb, nc):
        groups.append("{" + ", ".join(f"%{n + i}" for i in range(count)) + "}")
        n += count
    text = f"{instr.ptx} {', '.join(groups)};"
    if instr.cd == "f32":
        temps = [f"d{i}" for i in range(nc)]
        outs = ", ".join(_regs(temps, "=f"))
        ins = ", ".join(_regs([f"r{r}" for r in a + b]) +
                        [f"\"f\"(__uint_as_float(r{r}))" for r in c])
        lines = ["{ float " + ", ".join(temps) + ";",
                 f"  asm volatile(\"{text}\" : {outs} : {ins});"]
        lines += [f"  r{d} = __float_as_uint({t});" for d, t in zip(instr.dst, temps)]
        lines[-1] += " }"
        return lines
    outs = ", ".join(_regs([f"r{r}" for r in instr.dst], "=r"))
    ins = ", ".join(_regs([f"r{r}" for r in a + b + c]))
    return [f"asm volatile(\"{text}\" : {outs} : {ins});"]


_KERNEL = r"""// Generated by hwcheck.lower from a warpsim instruction stream.
#define NT {threads}
#define SMEM_BYTES {smem_bytes}
extern "C" __global__ void __launch_bounds__(NT, 1)
{name}(unsigned char* gmem, const long long* addr, unsigned* snap, unsigned char* smem_out)
{{
  extern __shared__ __align__(128) unsigned char smem[];
  const unsigned tid = threadIdx.x;
  const unsigned warp = tid >> 5;
  const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem);
  (void)warp; (void)sbase; (void)gmem; (void)addr;
  unsigned {registers};
  for (unsigned i = tid; i < SMEM_BYTES; i += NT) smem[i] = 0;
  __syncthreads();
{body}
  __syncthreads();
  for (unsigned i = tid; i < SMEM_BYTES; i += NT) smem_out[i] = smem[i];
}}
"""
