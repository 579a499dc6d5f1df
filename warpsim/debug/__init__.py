"""``warpsim.debug``: looking inside a program as it runs.

The shared-memory bank-conflict model (:mod:`warpsim.debug.banks`: per access, per instruction
stream) and the shared accesses a CuTe tiled copy makes, warp by warp
(:mod:`warpsim.debug.copy_banks`).
"""

from warpsim.debug.banks import (
    BankConflict, BankPhase, BankReport, BankTotals, StreamBankReport, bank_of, bank_report,
    instr_bank_report, stream_bank_report,
)

__all__ = [
    "BankConflict", "BankPhase", "BankReport", "BankTotals", "StreamBankReport", "bank_of",
    "bank_report", "instr_bank_report", "stream_bank_report",
]
