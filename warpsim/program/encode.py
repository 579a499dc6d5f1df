"""An instruction stream as flat integer arrays: what the ``@njit`` executor reads.

``code``: ``int64[n, NCOLS]``, one row per instruction of the stream (same positions), columns:

============  ===============================================================================
``OP``        ``Op`` code; ``WARP``: the warp
``NDST``      number of destination registers, then ``DST .. DST+3`` (unused: -1)
``NSRC``      number of source registers, then ``SRC .. SRC+9`` (mma: A, then B, then C)
``SPACE``     ld/st: 0 shared, 1 global; ``SIZE``: ld/st bytes per lane (2, 4, 8, 16)
``HALF``      16-bit ld/st: the register half (0: bits 0..15, 1: bits 16..31)
``VARIANT``   ldmatrix: ``ldmatrix_variant(num, trans)``
``SHAPE``     mma: shape code; ``AB``: mma input type code, or cvt target code; ``CD``: mma accumulator
``IMM``       mov: the value; shfl: the lane offset; ``ADDR``: row of ``addrs`` holding the lane addresses
              (mov per lane: the values; -1: none)
``FORM``      alu: the form's index in ``ALU_FORMS``; ``PRED``: ld/st: row of ``addrs`` holding the lane
              predicates (-1: none)
============  ===============================================================================

``addrs``: ``int64[rows, 32]``, per-lane byte addresses. Codes are the ISA's (``warpsim.isa``).

>>> import numpy as np
>>> from warpsim.program.instr import Instr, Op
>>> e = encode([Instr(Op.LDMATRIX, 1, dst=(4, 5), addr=np.arange(32) * 16, num=2, trans=True)])
>>> int(e.code[0, OP]), int(e.code[0, WARP]), e.code[0, DST:DST + 3].tolist(), int(e.code[0, VARIANT])
(3, 1, [4, 5, -1], 3)
>>> e.addrs.shape
(1, 32)
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter

import numpy as np

from warpsim.isa.alu32 import ALU_FORMS, alu_sources
from warpsim.isa.arith import AB_TYPES, CD_TYPES
from warpsim.isa.cvt import CVT_TYPES
from warpsim.isa.fragments import MMA_REGS
from warpsim.isa.ldmatrix import ldmatrix_variant
from warpsim.isa.mma import SHAPES
from warpsim.program.instr import KIND_FIELDS, Op

__all__ = ["Encoded", "encode", "OP", "WARP", "NDST", "DST", "NSRC", "SRC", "SPACE", "SIZE", "HALF",
           "VARIANT", "SHAPE", "AB", "CD", "IMM", "ADDR", "FORM", "PRED", "NCOLS", "MAX_DST", "MAX_SRC", "SPACES"]

MAX_DST = 4
MAX_SRC = 10
OP, WARP, NDST, DST = 0, 1, 2, 3
NSRC = DST + MAX_DST
SRC = NSRC + 1
SPACE = SRC + MAX_SRC
SIZE, VARIANT, SHAPE, AB, CD, HALF, IMM, ADDR = range(SPACE + 1, SPACE + 9)
FORM, PRED = ADDR + 1, ADDR + 2
NCOLS = PRED + 1
SPACES = {"shared": 0, "global": 1}


@dataclass(frozen=True)
class Encoded:
    """``code`` (``int64[n, NCOLS]``) and ``addrs`` (``int64[rows, 32]``); see the module docstring.
    ``forms``: the ALU forms the stream uses (the executor loads the MUFU tables they need)."""

    code: np.ndarray
    addrs: np.ndarray
    forms: frozenset = frozenset()

    def __len__(self):
        return int(self.code.shape[0])


_PAD_DST = [(-1,) * (MAX_DST - n) for n in range(MAX_DST + 1)]
_PAD_SRC = [(-1,) * (MAX_SRC - n) for n in range(MAX_SRC + 1)]
_SIZES = {16: 2, 32: 4, 64: 8, 128: 16}


def _bad(index, instr, why):
    try:
        name = instr.ptx
    except ValueError:                     # attributes no PTX instruction has: name the kind
        name = instr.op.name.lower()
    return ValueError(f"encode: instruction {index} ({name}): {why}")


def _attributes(index, instr):
    """``(SPACE, SIZE, VARIANT, SHAPE, AB, CD, FORM)`` of one instruction."""
    op = instr.op
    if op == Op.ALU:
        if instr.form not in ALU_FORMS:
            raise _bad(index, instr, f"unknown form (forms: {', '.join(ALU_FORMS)})")
        if len(instr.src) != alu_sources(instr.form) or len(instr.dst) != 1:
            raise _bad(index, instr, f"{len(instr.dst)} destination and {len(instr.src)} source registers "
                                     f"(expected 1 and {alu_sources(instr.form)})")
        return 0, 0, 0, 0, 0, 0, ALU_FORMS.index(instr.form)
    if op in (Op.SHFL, Op.MOVL) and len(instr.dst) != 1:
        raise _bad(index, instr, f"{len(instr.dst)} destination registers (expected 1)")
    if op == Op.LD or op == Op.ST:
        if instr.space not in SPACES:
            raise _bad(index, instr, f"unknown state space {instr.space!r}")
        if instr.bits not in _SIZES:
            raise _bad(index, instr, f"an access of {instr.bits} bits (16, 32, 64 or 128)")
        if instr.pred is not None and instr.bits == 16:
            raise _bad(index, instr, "a predicate on a 16-bit access (predicated accesses move 32 bits or more)")
        return SPACES[instr.space], _SIZES[instr.bits], 0, 0, 0, 0, 0
    if op == Op.LDMATRIX:
        return 0, 0, ldmatrix_variant(instr.num, instr.trans), 0, 0, 0, 0
    if op == Op.MMA:
        if (instr.shape, instr.cd) not in MMA_REGS or instr.ab not in AB_TYPES:
            raise _bad(index, instr, f"unknown mma {instr.shape}.{instr.ab}.{instr.cd}")
        return 0, 0, 0, SHAPES[instr.shape], AB_TYPES[instr.ab], CD_TYPES[instr.cd], 0
    if op == Op.CVT:
        if instr.ab not in CVT_TYPES:
            raise _bad(index, instr, f"cvt to {instr.ab!r} (expected f16 or bf16)")
        return 0, 0, 0, 0, CVT_TYPES[instr.ab], 0, 0
    return 0, 0, 0, 0, 0, 0, 0


_ATTRIBUTE_KEY = attrgetter(*KIND_FIELDS, "half", "imm")
_HALF = len(KIND_FIELDS)
_REGISTER_KEY = attrgetter("dst", "src")


def _distinct(keys):
    """``(index, distinct)``: ``keys[i] == distinct[index[i]]``."""
    first = {}
    index = [first.setdefault(key, len(first)) for key in keys]
    return np.array(index, np.int64), list(first)


def encode(stream):
    """The executor's arrays for ``stream`` (a list of :class:`~warpsim.program.instr.Instr`).

    Raises ``ValueError`` naming the instruction for an operand the executor cannot take.
    """
    n = len(stream)
    code = np.zeros((n, NCOLS), np.int64)
    if n == 0:
        return Encoded(code, np.zeros((0, 32), np.int64))
    for index, instr in enumerate(stream):
        if len(instr.dst) > MAX_DST or len(instr.src) > MAX_SRC:
            raise _bad(index, instr, f"{len(instr.dst)} destination and {len(instr.src)} source registers "
                                     f"(at most {MAX_DST} and {MAX_SRC})")
    # distinct attribute and register rows are built once, then gathered (warps repeat each other)
    keys = list(map(_ATTRIBUTE_KEY, stream))
    attr_index, attr_rows = _distinct(keys)
    for k, key in enumerate(attr_rows):
        index = keys.index(key)
        attr_rows[k] = (int(key[0]),) + _attributes(index, stream[index]) + (key[_HALF], key[_HALF + 1] & 0xFFFFFFFF)
    reg_keys = list(map(_REGISTER_KEY, stream))
    reg_index, reg_rows = _distinct(reg_keys)
    reg_rows = [(len(d),) + d + _PAD_DST[len(d)] + (len(s),) + s + _PAD_SRC[len(s)] for d, s in reg_rows]
    addrs = [i.addr for i in stream if i.addr is not None]
    preds = [i.pred for i in stream if i.pred is not None]
    for k, i in enumerate(stream):
        for what, a in (("addresses", i.addr), ("predicates", i.pred)):
            if a is not None and a.shape != (32,):
                raise _bad(k, i, f"{what} of shape {a.shape}, expected one per lane (32,)")
    attr = np.array(attr_rows, np.int64)[attr_index]
    code[:, OP] = attr[:, 0]
    code[:, SPACE:CD + 1] = attr[:, 1:7]
    code[:, FORM] = attr[:, 7]
    code[:, HALF:IMM + 1] = attr[:, 8:]
    code[:, WARP] = [i.warp for i in stream]
    code[:, NDST:SPACE] = np.array(reg_rows, np.int64)[reg_index]
    has_addr = np.array([i.addr is not None for i in stream])
    code[:, ADDR] = -1
    code[has_addr, ADDR] = np.arange(len(addrs))
    has_pred = np.array([i.pred is not None for i in stream])
    code[:, PRED] = -1
    code[has_pred, PRED] = len(addrs) + np.arange(len(preds))
    table = np.array(addrs + preds, dtype=np.int64).reshape(len(addrs) + len(preds), 32)
    return Encoded(code, table, frozenset(i.form for i in stream if i.op == Op.ALU))
