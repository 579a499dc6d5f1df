"""Bank reports of an instruction stream: the bank model (:mod:`warpsim.isa.banks`) over every shared access.

The model itself, one warp's access at a time, lives in the ISA layer; this module applies it to
the instructions of a traced program (``LDMATRIX``, and ``LD``/``ST`` to shared) and sums the result.
The model's names are re-exported here for existing callers.

>>> i = Instr(Op.LD, 0, dst=(0, 1), addr=np.arange(32, dtype=np.int64) * 8, space="shared", bits=64)
>>> stream_bank_report([i, Instr(Op.BAR, 0)]).totals.accesses
1
"""

from dataclasses import dataclass

from warpsim.isa.banks import (BANK_BYTES, NUM_BANKS, BankConflict, BankPhase, BankReport,
                               BankTotals, bank_of, bank_report, phase_lanes)
from warpsim.program.instr import Instr, Op

__all__ = [
    "NUM_BANKS", "BANK_BYTES", "bank_of", "phase_lanes",
    "BankConflict", "BankPhase", "BankReport", "BankTotals", "StreamBankReport",
    "bank_report", "instr_bank_report", "stream_bank_report",
]


def instr_bank_report(instr):
    """The :class:`BankReport` of a stream instruction, or ``None`` if it does not access shared memory.

    >>> i = Instr(Op.LD, 0, dst=(0, 1), addr=np.arange(32, dtype=np.int64) * 8, space="shared", bits=64)
    >>> instr_bank_report(i).instruction, instr_bank_report(Instr(Op.BAR, 0)) is None
    ('ld.shared.v2.b32', True)
    """
    if not isinstance(instr, Instr):
        raise TypeError(f"instr_bank_report: expected an Instr, got {instr!r}")
    if instr.op == Op.LDMATRIX:
        return bank_report("ldmatrix", instr.addr, num=instr.num, trans=instr.trans)
    if instr.op in (Op.LD, Op.ST) and instr.space == "shared":
        return bank_report("ld" if instr.op == Op.LD else "st", instr.addr, bits=instr.bits)
    return None


@dataclass(frozen=True)
class StreamBankReport:
    """Bank reports of every shared access of an instruction stream: ``entries[i] = (index, instr, report)``."""

    entries: tuple

    @property
    def totals(self):
        """:class:`BankTotals` over the whole stream."""
        return BankTotals.of(r for _i, _instr, r in self.entries)

    def by_instruction(self):
        """``{ptx name: BankTotals}``, in order of first appearance."""
        groups = {}
        for _i, _instr, r in self.entries:
            groups.setdefault(r.instruction, []).append(r)
        return {name: BankTotals.of(rs) for name, rs in groups.items()}

    def text(self, detail=False):
        """The totals, per instruction kind, then (``detail``) every access with a conflict."""
        lines = [f"shared-memory bank model: {self.totals}"]
        lines += [f"  {name}: {t}" for name, t in self.by_instruction().items()]
        if detail:
            for i, instr, r in self.entries:
                if not r.conflict_free:
                    lines.append(f"#{i} w{instr.warp}" + (f" {instr.line}" if instr.line else "") + ":")
                    lines.append(r.text().rstrip("\n"))
        return "\n".join(lines) + "\n"


def stream_bank_report(instrs):
    """The :class:`StreamBankReport` of an instruction stream (``LDMATRIX``, and ``LD``/``ST`` to shared)."""
    entries = []
    for i, instr in enumerate(instrs):
        r = instr_bank_report(instr)
        if r is not None:
            entries.append((i, instr, r))
    return StreamBankReport(tuple(entries))
