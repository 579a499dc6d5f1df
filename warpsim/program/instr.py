"""The warp instruction stream: a program's one representation.

A traced program is a list of :class:`Instr`, each one warp-level instruction: it executes for all 32
lanes of one warp at once. The simulator executes the list, hwcheck lowers the same list to inline PTX,
and the debugger steps through it. Lowering is direct:

- registers are per-thread 32-bit slots with fixed indices, the same for every lane of the warp
  (``dst`` and ``src`` name them);
- addresses are per-lane byte addresses (``addr``: ``int64[32]``), already swizzled: shared-memory
  addresses are offsets into the CTA's shared memory, global addresses offsets into the global buffer.

Operand order follows PTX:

================  ==========================================  =====================================
``op``            ``dst``                                     ``src``
================  ==========================================  =====================================
``MOV``           the registers set to ``imm``                --
``LD``            ``bits // 32`` registers (one for 16 bits)  --
``ST``            --                                          ``bits // 32`` registers (one for 16)
``LDMATRIX``      ``num`` registers                           --
``MMA``           D registers                                 A, then B, then C registers
``CVT``           one register                                ``a``, ``b``: ``a`` lands in bits 16..31
``BAR``           --                                          --
``ALU``           one register                                ``alu_sources(form)`` registers
``SHFL``          one register                                one register; ``imm``: the lane offset
``MOVL``          one register, set to ``addr[lane]``         --
================  ==========================================  =====================================

``ALU`` is one per-lane 32-bit instruction of element-wise arithmetic, ``form`` its PTX name
(``fma.rn.f32``, ``slct.b32.s32``: :mod:`warpsim.isa.alu32`); ``SHFL`` is
``shfl.sync.bfly.b32 d, a, imm, 0x1f, 0xffffffff``; ``MOVL`` puts a value per lane, known when the
program is traced (a mask), into a register: ``addr`` holds the values (the lowering reads them
from its table, as it reads addresses). ``LD``/``ST`` may carry ``pred`` (``int64[32]``): lanes where
it is 0 neither access memory nor change registers (PTX ``@p ld``/``@p st``).

A 16-bit ``LD``/``ST`` moves one half of its register: ``half`` 0 is bits 0..15, 1 is bits 16..31.
``line`` is the program's source line that issued the instruction, ``call`` the operation call
(``copy``, ``gemm``, ...) it belongs to, counted from 0 in each warp's trace (warps running the same
code number their calls alike; the debugger stops at the start of a call).

>>> i = Instr(Op.LDMATRIX, warp=0, dst=(0, 1, 2, 3), addr=np.zeros(32, np.int64), num=4)
>>> i.ptx
'ldmatrix.sync.aligned.m8n8.x4.shared.b16'
>>> Instr(Op.MMA, 0, dst=(4, 5, 6, 7), src=tuple(range(8, 18)), shape="m16n8k16", ab="bf16", cd="f32").ptx
'mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32'
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass, field
from operator import attrgetter

import numpy as np

from warpsim.isa.alu32 import SHFL_BFLY
from warpsim.isa.cvt import cvt_name
from warpsim.isa.fragments import MMA_REGS     # re-exported: registers per lane of each mma operand
from warpsim.isa.ldmatrix import ldmatrix_name
from warpsim.isa.memory import memory_name
from warpsim.isa.mma import mma_name

__all__ = ["Op", "SourceLine", "Instr", "MMA_REGS", "KIND_FIELDS", "writes_registers"]


class Op(enum.IntEnum):
    """Instruction kinds of the stream (the integer codes the njit executor dispatches on)."""

    MOV = 0
    LD = 1
    ST = 2
    LDMATRIX = 3
    MMA = 4
    CVT = 5
    BAR = 6
    ALU = 7
    SHFL = 8
    MOVL = 9



# The fields an instruction's PTX name depends on: equal kinds, equal ``Instr.ptx``.
KIND_FIELDS = ("op", "space", "bits", "num", "trans", "shape", "ab", "cd", "form")
_KIND = attrgetter(*KIND_FIELDS)
_KEY = attrgetter(*KIND_FIELDS, "dst", "src", "half", "imm")


@dataclass(frozen=True)
class SourceLine:
    """Where an instruction was issued: a line of the program's source file."""

    file: str
    line: int
    text: str = ""

    def __str__(self) -> str:
        return f"{os.path.basename(self.file)}:{self.line}: {self.text.strip()}"


@dataclass(frozen=True, eq=False)
class Instr:
    """One warp-level instruction; see the module docstring for operand order."""

    op: Op
    warp: int
    dst: tuple = ()
    src: tuple = ()
    addr: np.ndarray | None = field(default=None, repr=False)
    space: str = ""
    bits: int = 0
    half: int = -1
    num: int = 0
    trans: bool = False
    shape: str = ""
    ab: str = ""
    cd: str = ""
    imm: int = 0
    form: str = ""
    pred: np.ndarray | None = field(default=None, repr=False)
    line: SourceLine | None = None
    call: int = -1

    def kind(self) -> tuple:
        """The instruction's kind: the values of ``KIND_FIELDS`` (what its PTX name depends on)."""
        return _KIND(self)

    def key(self) -> tuple:
        """What the instruction does, whoever issues it: every field but ``warp``, the addresses' values,
        the predicates' values, ``line`` and ``call`` (whether it has addresses or a predicate counts).
        Warps or lanes that agree on an instruction issue equal keys.

        >>> a = Instr(Op.MOV, 0, dst=(1,), imm=5)
        >>> a.key() == Instr(Op.MOV, 3, dst=(1,), imm=5, call=2).key() != Instr(Op.MOV, 0, dst=(2,), imm=5).key()
        True
        """
        return _KEY(self) + (self.addr is None, self.pred is None)

    @property
    def ptx(self) -> str:
        """The PTX instruction name (without operands), as the ISA layer builds it; ``ValueError`` for
        attributes no PTX instruction has."""
        op = self.op
        if op == Op.MOV:
            return "mov.b32"
        if op in (Op.LD, Op.ST):
            return memory_name("ld" if op == Op.LD else "st", self.space, self.bits // 8)
        if op == Op.LDMATRIX:
            return ldmatrix_name(self.num, self.trans)
        if op == Op.MMA:
            return mma_name(self.shape, self.ab, self.cd)
        if op == Op.CVT:
            return cvt_name(self.ab)
        if op == Op.BAR:
            return "bar.sync"
        if op == Op.ALU:
            return self.form
        if op == Op.SHFL:
            return SHFL_BFLY
        if op == Op.MOVL:
            return "mov.b32"
        raise ValueError(f"Instr.ptx: unknown op {op!r}")

    def __str__(self) -> str:
        regs = ", ".join(f"r{r}" for r in self.dst + self.src)
        where = f"  ; {self.line}" if self.line else ""
        return f"w{self.warp}: {self.ptx} {regs}{where}"


def writes_registers(instr: Instr) -> bool:
    """True where ``instr`` writes registers (the ones hwcheck snapshots).

    >>> writes_registers(Instr(Op.BAR, 0)), writes_registers(Instr(Op.MOV, 0, dst=(3,)))
    (False, True)
    """
    return bool(instr.dst)
