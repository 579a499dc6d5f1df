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


def diagonal(program):
    """The combinations that take every param's choices in turn, all at once: together they take each choice of
    each param (flash_fwd: (f16, 64, no, 128), (bf16, 128, yes, 100), (f16, 64, no, 512))."""
    specs = program.params
    most = max(map(len, specs.values()), default=1)
    return [{name: spec[i % len(spec)] for name, spec in specs.items()} for i in range(most)]


def _cases():
    """:func:`choices` of every example; for a sampled sweep (flash_fwd: 7 of 24, ~85 s on 2 busy cores) by default
    only its :func:`diagonal` combinations instead (~30 s), the sample too with --slow."""
    out = []
    for path in EXAMPLES:
        program = load_program(path)
        every = choices(program)
        sampled = len(every) < np.prod([len(spec) for spec in program.params.values()])
        if sampled:
            every = diagonal(program) + [c for c in every if c not in diagonal(program)]
        for params in every:
            slow = sampled and params not in diagonal(program)
            out.append(pytest.param(path, params, id=f"{path.stem}-{'-'.join(map(str, params.values()))}",
                                    marks=pytest.mark.slow if slow else ()))
    return out


@pytest.mark.parametrize("path,params", _cases())
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
