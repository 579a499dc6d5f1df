"""The PTX instructions the interpreter executes: one table, from opcode name to an integer code.

Each entry of :data:`OPCODES` is ``name -> Op`` code; the decoder (:mod:`warpsim.ptx.decode`)
turns an instruction into a row of integers whose ``OP`` column is that code, and the interpreter
(:mod:`warpsim.ptx.interp`) dispatches on it. A new instruction is one ``Op`` member, one entry
here, and its family's decoding and ``@njit`` execution (:mod:`warpsim.ptx.families`: a new family is one
module there, one entry in its ``FAMILIES`` and one branch in its switch). Float arithmetic (``add.f32``, ``fma``, ``ex2``, ...) plugs in the same way: the
decoder sends every float-typed instruction to :mod:`warpsim.ptx.families.floats.decode`; the names that exist only
for floats are in :data:`FLOAT_OPS`.

>>> OPCODES["mad"] == Op.MAD, "bra" in supported_names()
(True, True)
"""

import enum

__all__ = ["Op", "OPCODES", "FLOAT_OPS", "FLOAT_FIRST", "TYPES", "TK_B", "TK_U", "TK_S", "TK_F", "TK_PRED", "TK_BF",
           "TK_F16X2", "TK_BF16X2", "CMP", "BOOL", "NOT_YET", "not_supported_yet", "supported_names", "type_of"]


class Op(enum.IntEnum):
    NOP = 0
    # integer and bit arithmetic: d = f(a, b, c) per thread
    ADD = 1; SUB = 2; MUL = 3; MAD = 4; DIV = 5; REM = 6; MIN = 7; MAX = 8; ABS = 9; NEG = 10
    AND = 11; OR = 12; XOR = 13; NOT = 14; SHL = 15; SHR = 16; BFE = 17; BFI = 18; PRMT = 19
    POPC = 20; CLZ = 21; BREV = 22; CNOT = 23; SAD = 24; SHF = 25; LOP3 = 26; BFIND = 27
    ADDC = 28; SUBC = 29; MADC = 30     # with the carry flag: after every carry-free one
    SETP = 31; SELP = 32; SLCT = 33; MOV = 34; CVT = 35; CVTA = 36; SET = 37
    # clusters (sm_90): mapa per thread, barrier.cluster per warp
    MAPA = 38; BAR_CLUSTER = 39
    # memory
    LD = 40; ST = 41; ATOM = 42; RED = 43; CP_ASYNC = 44; CP_COMMIT = 45; CP_WAIT = 46; CP_WAIT_ALL = 47
    # warp-collective
    SHFL = 50; VOTE = 51; MATCH = 52; BAR = 53; LDMATRIX = 54; STMATRIX = 55; MMA = 56; ACTIVEMASK = 57
    REDUX = 58; WGMMA = 59
    # asynchronous barriers, thread by thread
    MBARRIER = 48; CP_BULK = 49
    # control
    BRA = 60; CALL = 61; RET = 62; EXIT = 63; TRAP = 64; PRINTF = 65; FENCE = 66
    # float, per thread, through warpsim.isa (warpsim.ptx.families.floats), from FLOAT_FIRST on: arithmetic, min/max
    # and sign; setp; set; testp; cvt with a float type
    FARITH = 100; FSETP = 101; FSET = 102; FTESTP = 103; FCVT = 104


OPCODES = {
    "add": Op.ADD, "sub": Op.SUB, "mul": Op.MUL, "mad": Op.MAD, "div": Op.DIV, "rem": Op.REM,
    "min": Op.MIN, "max": Op.MAX, "abs": Op.ABS, "neg": Op.NEG, "and": Op.AND, "or": Op.OR,
    "xor": Op.XOR, "not": Op.NOT, "cnot": Op.CNOT, "shl": Op.SHL, "shr": Op.SHR, "bfe": Op.BFE,
    "bfi": Op.BFI, "prmt": Op.PRMT, "popc": Op.POPC, "clz": Op.CLZ, "brev": Op.BREV, "sad": Op.SAD, "shf": Op.SHF, "lop3": Op.LOP3, "bfind": Op.BFIND,
    "addc": Op.ADDC, "subc": Op.SUBC, "madc": Op.MADC,
    "setp": Op.SETP, "set": Op.SET, "selp": Op.SELP, "slct": Op.SLCT, "mov": Op.MOV, "cvt": Op.CVT,
    "cvta": Op.CVTA, "ld": Op.LD, "ldu": Op.LD, "st": Op.ST, "atom": Op.ATOM, "red": Op.RED,
    "cp": Op.CP_ASYNC, "shfl": Op.SHFL, "vote": Op.VOTE, "match": Op.MATCH, "bar": Op.BAR,
    "barrier": Op.BAR, "ldmatrix": Op.LDMATRIX, "stmatrix": Op.STMATRIX, "mma": Op.MMA, "wgmma": Op.WGMMA, "mbarrier": Op.MBARRIER,
    "activemask": Op.ACTIVEMASK, "mapa": Op.MAPA, "getctarank": Op.MAPA, "elect": Op.VOTE, "redux": Op.REDUX, "bra": Op.BRA, "call": Op.CALL, "ret": Op.RET, "exit": Op.EXIT,
    "trap": Op.TRAP, "membar": Op.FENCE, "fence": Op.FENCE, "nanosleep": Op.FENCE,
    "prefetch": Op.FENCE, "prefetchu": Op.FENCE, "setmaxnreg": Op.FENCE, "griddepcontrol": Op.FENCE, "pmevent": Op.FENCE,
}

# Float-typed instructions: name -> Op code (warpsim.ptx.families.floats); add, sub, mul, mad, min, max, abs, neg, setp, set
# and cvt of a float type become these codes too (warpsim.ptx.families.floats.decode)
FLOAT_FIRST = Op.FARITH
FLOAT_OPS = {"fma": Op.FARITH, "sqrt": Op.FARITH, "rcp": Op.FARITH, "copysign": Op.FARITH, "testp": Op.FTESTP,
             "ex2": Op.FARITH, "tanh": Op.FARITH}   # ex2/tanh: the 16-bit .approx forms only

# Instruction families warpsim does not run yet, by the dotted prefix of their name -> what they are. The parser and
# the decoder look here first, so such an instruction is refused by name (not by the operand syntax it happens to
# use: TMA's ``[%rd1, {%r1, %r2}]``) wherever it stands; the longest matching prefix names it.
NOT_YET = {
    "tensormap": "Hopper TMA descriptors",
}


def not_supported_yet(name):
    """Why the instruction ``name`` (opcode and modifiers, dotted) is refused, or None: one phrase naming the
    family of :data:`NOT_YET` it belongs to.

    >>> not_supported_yet("tensormap.replace.tile.global_address.global.b1024.b64")
    '`tensormap` is not supported yet (Hopper TMA descriptors; see docs/ptx.md, "Not supported yet")'
    >>> not_supported_yet("cp.async.ca.shared.global") is None
    True
    """
    if name.split(".", 1)[0] not in _NOT_YET_HEADS:
        return None                                      # the common case: no refused family starts so
    for prefix in _NOT_YET_LONGEST_FIRST:
        if name == prefix or name.startswith(prefix + "."):
            return f'`{prefix}` is not supported yet ({NOT_YET[prefix]}; see docs/ptx.md, "Not supported yet")'
    return None


_NOT_YET_LONGEST_FIRST = tuple(sorted(NOT_YET, key=len, reverse=True))
_NOT_YET_HEADS = frozenset(prefix.split(".", 1)[0] for prefix in NOT_YET)


# type name -> (kind, bits)
TK_B, TK_U, TK_S, TK_F, TK_PRED, TK_BF, TK_F16X2, TK_BF16X2 = range(8)
TYPES = {
    "b8": (TK_B, 8), "b16": (TK_B, 16), "b32": (TK_B, 32), "b64": (TK_B, 64), "b128": (TK_B, 128),
    "u8": (TK_U, 8), "u16": (TK_U, 16), "u32": (TK_U, 32), "u64": (TK_U, 64),
    "s8": (TK_S, 8), "s16": (TK_S, 16), "s32": (TK_S, 32), "s64": (TK_S, 64),
    "f16": (TK_F, 16), "f32": (TK_F, 32), "f64": (TK_F, 64), "bf16": (TK_BF, 16),
    "f16x2": (TK_F16X2, 32), "bf16x2": (TK_BF16X2, 32), "pred": (TK_PRED, 1),
}

# setp comparisons (integer ones; the float-only ones are left to the float instructions)
CMP = {"eq": 0, "ne": 1, "lt": 2, "le": 3, "gt": 4, "ge": 5, "lo": 6, "ls": 7, "hi": 8, "hs": 9}
BOOL = {"and": 1, "or": 2, "xor": 3}


def type_of(mods):
    """The type modifiers among ``mods``, in order: ``type_of(("wide", "s32")) == ["s32"]``."""
    return [m for m in mods if m in TYPES]


def supported_names():
    """The instruction names the interpreter executes, sorted (for error messages)."""
    names = set(OPCODES) - {"cp"} | {"cp.async", "cp.async.commit_group", "cp.async.wait_group",
                                     "cp.async.wait_all", "cp.async.bulk", "cp.async.bulk.tensor",
                                     "cp.async.bulk.commit_group", "cp.async.bulk.wait_group"}
    return sorted(names | set(FLOAT_OPS))
