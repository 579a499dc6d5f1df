"""Tracing a warp at once (lane vectors) and thread by thread give the same instruction stream.

The per-thread mode runs each of the 128 threads alone with a plain ``int`` thread id, through
CuTe's one-thread path (dynamic thread index, per-thread swizzle decay), and zips the 32 lane
streams of a warp; the vector mode runs each warp once. Every field of every instruction must agree:
kind, registers, attributes, source line, and each lane's address.
"""

from pathlib import Path

import numpy as np
import pytest

from warpsim.program import load_program
from warpsim.program.trace import trace_program

EXAMPLES = sorted(p for p in (Path(__file__).resolve().parents[2] / "examples").glob("*.py")
                  if "warpsim.Program(" in p.read_text())


MAX_COMBOS = 8       # thread mode traces each thread alone: beyond this, a sample of the combinations


def choices(program):
    """Every combination of the params' choices; for programs with more than ``MAX_COMBOS``, the defaults,
    each one-param change from them, and the last combination (every param at its last choice)."""
    combos = [{}]
    for name, spec in program.params.items():
        combos = [dict(c, **{name: v}) for c in combos for v in spec]
    if len(combos) <= MAX_COMBOS:
        return combos
    first = combos[0]
    return [c for c in combos if sum(c[k] != first[k] for k in c) <= 1] + [combos[-1]]


CASES = [(path, params) for path in EXAMPLES for params in choices(load_program(path))]


@pytest.mark.parametrize("path,params", CASES, ids=[f"{p.stem}-{'-'.join(map(str, c.values()))}" for p, c in CASES])
def test_vector_and_thread_traces_agree(path, params):
    program = load_program(path)
    params = program.resolve_params(params)
    vector = trace_program(program, params, mode="vector")
    thread = trace_program(program, params, mode="thread")
    assert len(vector.stream) == len(thread.stream) > 0
    assert vector.regs_per_thread == thread.regs_per_thread
    fields = ("op", "warp", "dst", "src", "space", "bits", "half", "num", "trans", "shape", "ab", "cd", "imm", "form",
              "line")
    for k, (v, t) in enumerate(zip(vector.stream, thread.stream)):
        for f in fields:
            assert getattr(v, f) == getattr(t, f), f"instruction {k} ({v.ptx}): {f} {getattr(v, f)!r} != {getattr(t, f)!r}"
        assert (v.addr is None) == (t.addr is None), f"instruction {k}: addresses present in one mode only"
        assert (v.pred is None) == (t.pred is None), f"instruction {k}: predicates present in one mode only"
        if v.pred is not None:
            assert np.array_equal(v.pred, t.pred), f"instruction {k} ({v.ptx}, warp {v.warp}, {v.line}): predicates"
        if v.addr is not None and not np.array_equal(v.addr, t.addr):
            lane = int(np.flatnonzero(v.addr != t.addr)[0])
            pytest.fail(f"instruction {k} ({v.ptx}, warp {v.warp}, {v.line}): lane {lane} address "
                        f"{int(v.addr[lane]):#x} (vector) != {int(t.addr[lane]):#x} (thread)")
    assert {n: (i.dtype, i.slots, i.bases) for n, i in vector.tensors.items()} == \
           {n: (i.dtype, i.slots, i.bases) for n, i in thread.tensors.items()}


def test_examples_are_found():
    assert any(p.name == "gemm_smem.py" for p in EXAMPLES)
