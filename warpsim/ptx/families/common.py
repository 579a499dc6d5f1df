"""What the decoders of every instruction family share: names, the module's target, one-type and count checks.

:class:`FamilyDecoder` is the base of each family's decoder mixin (``warpsim.ptx.families.<family>``): its methods
read the instruction's type and state space and check its operand count; the decoder proper
(:class:`warpsim.ptx.decode._Decoder`) supplies ``emit``, ``operand``, ``address`` and ``error``.
"""

from warpsim.errors import UnsupportedType
from warpsim.ptx.opcodes import FLOAT_OPS, TK_BF, TK_BF16X2, TK_F, TK_F16X2, TYPES, supported_names
from warpsim.ptx.memory import SP_GENERIC
from warpsim.ptx.rows import SPACE_CODES

__all__ = ["FamilyDecoder", "name_of", "target_sm", "scalar_operand"]


def name_of(ins):
    """The instruction's dotted name: ``ld.global.v2.u32``."""
    return ".".join((ins.opcode,) + tuple(ins.mods))


def target_sm(module) -> int:
    """The compute capability a module's ``.target`` names, 0 without one: ``sm_90a`` -> 90, ``sm_100`` -> 100."""
    for name in module.target:
        digits = name[3:].rstrip("abf") if name.startswith("sm_") else ""
        if digits.isdigit():
            return int(digits)
    return 0


def scalar_operand(op):
    """``op``, or the one register of a one-element brace vector ``{%r}``: ``ld``, ``st`` and ``mov`` take it for the
    scalar (ptxas does; Triton writes its masked loads and stores so: ``@%p1 st.global.b32 [ %rd9 + 0 ], { %r39 };``).
    ptxas refuses it for every other instruction."""
    return op.items[0] if op.kind == "vec" and len(op.items) == 1 else op


class FamilyDecoder:
    """The checks every family's ``do_<op>`` methods use (see the module docstring)."""

    def one_type(self, ins, types, allow_float=False):
        if not types:
            raise self.error(ins.token, f"{ins.opcode}: missing a type (.u32, .s64, .b16, ...)")
        t = types[-1]
        if not allow_float and ins.opcode not in FLOAT_OPS and TYPES[t][0] in (TK_F, TK_BF, TK_F16X2, TK_BF16X2):
            raise self.error(ins.token, f"float instruction {ins.opcode}.{'.'.join(ins.mods)} is not "
                                        f"supported yet (integer and bit types only; supported: "
                                        f"{', '.join(supported_names())})", UnsupportedType)
        return t

    def count(self, ins, ops, *ns):
        if len(ops) not in ns:
            raise self.error(ins.token, f"{ins.opcode} takes {' or '.join(map(str, ns))} operands, "
                                        f"got {len(ops)}")

    def space_of(self, ins, mods):
        for m in mods:
            base = m.split("::")[0]
            if base in SPACE_CODES:
                return SPACE_CODES[base]
        return SP_GENERIC
