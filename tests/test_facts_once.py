"""Facts stated once: the warp size and the fault codes each have one home, and every other module imports them.

- the warp size: ``WARP_SIZE`` in :mod:`warpsim.warp` (no module binds ``WARP_SIZE``, ``LANES`` or
  ``WARP_LANES`` to a number of its own);
- the fault codes: one number space, every ``FAULT_*`` code in :mod:`warpsim.isa.faults`, no two equal.

The modules are read with ``ast``: an assignment at module level of one of these names anywhere else
is a second statement of the fact.
"""

import ast
from pathlib import Path

from warpsim.isa import faults
from warpsim.warp import WARP_SIZE

ROOT = Path(__file__).resolve().parents[1]
HOMES = {"WARP_SIZE": "warpsim/warp.py", "FAULT_": "warpsim/isa/faults.py"}
WARP_NAMES = {"WARP_SIZE", "LANES", "WARP_LANES"}


def restatements(root):
    """``["path:line NAME"]`` for every module-level binding of a warp-size or fault-code name outside its home."""
    found = []
    for package in ("warpsim", "hwcheck"):
        for path in sorted((root / package).rglob("*.py")):
            where = path.relative_to(root).as_posix()
            for node in ast.parse(path.read_text()).body:
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, ast.AnnAssign) else []
                names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
                for name in names:
                    home = HOMES["WARP_SIZE"] if name in WARP_NAMES else \
                        HOMES["FAULT_"] if name.startswith("FAULT_") else None
                    if home is not None and where != home:
                        found.append(f"{where}:{node.lineno} {name}")
    return found


def test_each_fact_has_one_home():
    assert restatements(ROOT) == []


def test_a_planted_restatement_is_found(tmp_path):
    for name, text in {"warpsim/warp.py": "WARP_SIZE = 32\n", "warpsim/isa/faults.py": "FAULT_TRAP = 23\n",
                       "warpsim/ptx/codes.py": "FAULT_NEW = 30\nLANES = 32\n"}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "hwcheck").mkdir()
    assert restatements(tmp_path) == ["warpsim/ptx/codes.py:1 FAULT_NEW", "warpsim/ptx/codes.py:2 LANES"]


def test_the_fault_codes_are_one_number_space():
    codes = {name: getattr(faults, name) for name in faults.__all__ if name.startswith("FAULT_")}
    assert len(set(codes.values())) == len(codes), codes
    assert codes["FAULT_NONE"] == 0 and codes["FAULT_BAD_OPERAND"] == 5      # the numbers reports rely on
    assert codes["FAULT_RACE"] == 20 and codes["FAULT_SPACE"] == 29
    assert WARP_SIZE == 32
