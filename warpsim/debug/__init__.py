"""``warpsim.debug``: tools for looking inside a running program.

So far: the shared-memory bank-conflict model (:mod:`warpsim.debug.banks`) and the shared accesses a
CuTe tiled copy makes (:mod:`warpsim.debug.copy_banks`).
"""

from warpsim.debug.banks import (
    BankConflict, BankPhase, BankReport, BankTotals, StreamBankReport, bank_of, bank_report,
    instr_bank_report, stream_bank_report,
)

__all__ = [
    "BankConflict", "BankPhase", "BankReport", "BankTotals", "StreamBankReport", "bank_of",
    "bank_report", "instr_bank_report", "stream_bank_report",
]
