"""``warpsim.debug``: looking inside a kernel as it runs, whatever the front end.

- :class:`Session` (:mod:`warpsim.debug.session`): a kernel on the PTX core stepped forwards and
  backwards, with breakpoints and watches; a ``.cu``/``.ptx``/CuTe DSL kernel (``Session.open``) or a
  traced Python program as its lowered kernel (``Session.program``), whose metadata
  (:mod:`warpsim.debug.traced`) the views layer on top;
- the views of :mod:`warpsim.debug.views` (registers, lanes, warps, memory, fragments, who/from, shared
  tiles, banks), the data flow behind who/from (:mod:`warpsim.debug.dataflow`), register tensors' MMA and
  copy views (:mod:`warpsim.debug.tensors`), the one command language (:mod:`warpsim.debug.repl`,
  ``warpsim debug``);
- bank reports of an instruction stream (:mod:`warpsim.debug.banks`, over the ISA's bank model
  :mod:`warpsim.isa.banks`, whose names it re-exports) and the shared accesses a CuTe tiled copy
  makes, warp by warp (:mod:`warpsim.debug.copy_banks`).

The session and the views load the program and PTX machinery on first use.
"""

from warpsim.debug.banks import (
    BankConflict, BankPhase, BankReport, BankTotals, StreamBankReport, bank_of, bank_report,
    instr_bank_report, stream_bank_report,
)

__all__ = [
    "BankConflict", "BankPhase", "BankReport", "BankTotals", "StreamBankReport", "bank_of",
    "bank_report", "instr_bank_report", "stream_bank_report",
    "Session", "Stop", "Breakpoint", "Traced", "DataFlow", "Repl",
    "register_view", "frag_view", "who_view", "from_view", "smem_view", "smem_banks", "banks_view",
]

_LAZY = {"Session": "session", "Stop": "session", "Breakpoint": "session", "Traced": "traced",
         "DataFlow": "dataflow", "Repl": "repl", "register_view": "views", "frag_view": "views",
         "who_view": "views", "from_view": "views", "smem_view": "views", "smem_banks": "views",
         "banks_view": "views"}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'warpsim.debug' has no attribute {name!r}")
    import importlib
    return getattr(importlib.import_module(f"warpsim.debug.{module}"), name)
