"""Compare registers bit for bit and describe each mismatch so a person can act on it.

Registers are ``uint32`` arrays ``[warps, 32, regs]`` (``[..., 32, regs]``: leading axes are
flattened into warps). Every mismatching register is counted; at most ``limit`` are kept as
:class:`Mismatch` records, in (warp, lane, register) order. A record names the warp, the lane, the
register, the PTX instruction, the source line when there is one, and the expected (simulator) and
actual (GPU) bits, in hex and decoded by the register's kind:

- ``"f32"``: one f32;
- ``"f16x2"``, ``"bf16x2"``: two halves, the low half (bits 0..15) first, as PTX packs pairs;
- ``"b16x2"``: two raw 16-bit halves (ldmatrix moves bits, not numbers);
- ``"b32"``: raw bits.

>>> decode_register(0x3FC00000, "f32")
'1.5'
>>> decode_register(0xC0003C00, "f16x2")
'[lo 1, hi -2]'
>>> decode_register(0x7FFF0000, "bf16x2")
'[lo 0, hi nan]'
>>> exp = np.zeros((2, 32, 4), np.uint32); act = exp.copy(); act[1, 5, 2] = 0x3F800000
>>> c = compare_registers(exp, act, instruction="mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
...                       kind="f32")
>>> c.compared, c.mismatched
(256, 1)
>>> print(c.records[0])
mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32: warp 1 lane 5 d2: expected 0x00000000 (0), got 0x3f800000 (1)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from warpsim.isa.floats import bf16_bits_to_float, f16_bits_to_float, f32_bits_to_float

__all__ = ["KINDS", "RECORD_LIMIT", "decode_register", "Mismatch", "Comparison", "compare_registers"]

KINDS = ("f32", "f16x2", "bf16x2", "b16x2", "b32")
RECORD_LIMIT = 100   # records kept per report by default; every mismatch is still counted


def _number(value: float, digits: int) -> str:
    """Shortest-enough decimal: ``digits`` significant digits tell every value of the format apart."""
    return format(value, f".{digits}g")


def decode_register(bits: int, kind: str) -> str:
    """The value held by a 32-bit register of ``kind`` (see the module docstring), as text.

    >>> decode_register(0x00010001, "b16x2"), decode_register(0xFF800000, "f32")
    ('[lo 0x0001, hi 0x0001]', '-inf')
    """
    bits = int(bits) & 0xFFFFFFFF
    lo, hi = bits & 0xFFFF, bits >> 16
    if kind == "f32":
        return _number(f32_bits_to_float(bits), 9)
    if kind == "f16x2":
        return f"[lo {_number(f16_bits_to_float(lo), 5)}, hi {_number(f16_bits_to_float(hi), 5)}]"
    if kind == "bf16x2":
        return f"[lo {_number(bf16_bits_to_float(lo), 4)}, hi {_number(bf16_bits_to_float(hi), 4)}]"
    if kind == "b16x2":
        return f"[lo {lo:#06x}, hi {hi:#06x}]"
    if kind == "b32":
        return f"{bits:#010x}"
    raise ValueError(f"decode_register: kind must be one of {KINDS}, got {kind!r}")


@dataclass(frozen=True)
class Mismatch:
    """One register whose GPU bits differ from the simulator's."""

    instruction: str
    warp: int
    lane: int
    register: str
    expected: int
    actual: int
    kind: str
    line: str | None = None
    index: int | None = None        # a program's: the instruction's position in its stream
    tensor: str | None = None       # a program's: the register tensor slots the register holds
    operands: str | None = None     # an instruction form's: the operands of the lane, ``a=0x... b=0x...``

    def as_dict(self) -> dict:
        """The JSON record: bits in hex and decoded (``index`` and ``tensor`` for a program's register)."""
        record = {"instruction": self.instruction}
        if self.index is not None:
            record.update(index=self.index, tensor=self.tensor)
        record.update({
            "warp": self.warp, "lane": self.lane,
            "register": self.register, "line": self.line, "kind": self.kind,
            "expected": f"{self.expected:#010x}", "actual": f"{self.actual:#010x}",
            "expected_value": decode_register(self.expected, self.kind),
            "actual_value": decode_register(self.actual, self.kind),
        })
        if self.operands is not None:
            record["operands"] = self.operands
        return record

    def __str__(self) -> str:
        where = f" ({self.line})" if self.line else ""
        what = f"instruction {self.index} {self.instruction}" if self.index is not None else self.instruction
        register = f"{self.register} ({self.tensor})" if self.tensor else self.register
        if self.operands is not None:
            register += f" [{self.operands}]"
        return (f"{what}{where}: warp {self.warp} lane {self.lane} {register}: "
                f"expected {self.expected:#010x} ({decode_register(self.expected, self.kind)}), "
                f"got {self.actual:#010x} ({decode_register(self.actual, self.kind)})")


@dataclass(frozen=True)
class Comparison:
    """The outcome of one comparison: registers compared, registers that differ, kept records, and
    the (flattened, ``first_warp``-based) index of every warp with at least one mismatch."""

    compared: int
    mismatched: int
    records: tuple
    warps: np.ndarray


def compare_registers(expected, actual, *, instruction: str, kind: str, registers=None, line=None,
                      first_warp: int = 0, limit: int = RECORD_LIMIT) -> Comparison:
    """Compare ``expected`` (simulator) with ``actual`` (GPU) register by register.

    ``registers``: a name per register column (default ``d0, d1, ...``); ``first_warp`` is added to
    the warp index of every record (the position of this batch in a longer campaign).
    Raises ``TypeError``/``ValueError`` for arrays that are not uint32 of one shape ``[..., 32, regs]``.
    """
    for name, x in (("expected", expected), ("actual", actual)):
        if not isinstance(x, np.ndarray) or x.dtype != np.uint32:
            raise TypeError(f"compare_registers: {name} must be a numpy array of uint32, got "
                            f"{getattr(x, 'dtype', type(x).__name__)}")
    if expected.shape != actual.shape or expected.ndim < 2 or expected.shape[-2] != 32:
        raise ValueError(f"compare_registers: expected {expected.shape} and actual {actual.shape} must "
                         f"have one shape (..., 32, regs)")
    if kind not in KINDS:
        raise ValueError(f"compare_registers: kind must be one of {KINDS}, got {kind!r}")
    regs = expected.shape[-1]
    names = [f"d{i}" for i in range(regs)] if registers is None else list(registers)
    if len(names) != regs:
        raise ValueError(f"compare_registers: {len(names)} register names for {regs} registers")
    exp = expected.reshape(-1, 32, regs)
    act = actual.reshape(-1, 32, regs)
    bad = exp != act
    flat = np.flatnonzero(bad)
    records = []
    for index in flat[:max(0, limit)]:
        warp, rest = divmod(int(index), 32 * regs)
        lane, reg = divmod(rest, regs)
        records.append(Mismatch(instruction, first_warp + warp, lane, names[reg],
                                int(exp[warp, lane, reg]), int(act[warp, lane, reg]), kind, line))
    warps = first_warp + np.flatnonzero(bad.any(axis=(1, 2)))
    return Comparison(int(exp.size), int(flat.size), tuple(records), warps)
