"""The host binary32 path (warpsim.isa.hostfloat) gives the integer model's bits (warpsim.isa.fparith).

``fma.rn``, ``add.rn`` and ``mul.rn`` on f32 run through the host CPU's IEEE binary32 operations in
the batched API. This checks them against the integer model on every pair of a set of special and
edge values (zeros, subnormals, the normal/subnormal boundary, near-overflow, infinities, NaNs of
several payloads) and on random bits biased to the exponent edges, with every .ftz/.sat combination.
"""

import itertools

import numpy as np
import pytest

from warpsim.isa.fparith import f32_add, f32_fma, f32_mul
from warpsim.isa.fpbatch import float_arith
from warpsim.isa.hostfloat import host_f32_add, host_f32_fma, host_f32_mul

EDGES = [0x00000000, 0x00000001, 0x00000003, 0x003FFFFF, 0x00400000, 0x007FFFFF, 0x00800000, 0x00800001,
         0x33800000, 0x3F000000, 0x3F7FFFFF, 0x3F800000, 0x3F800001, 0x3FFFFFFF, 0x40000000, 0x5F800000,
         0x7F000000, 0x7F7FFFFF, 0x7F800000, 0x7F800001, 0x7FC00000, 0x7FFFFFFF, 0x1F800000, 0x20000000]
EDGES += [x | 0x80000000 for x in EDGES]


def _random_bits(n, seed):
    rng = np.random.default_rng(seed)
    exp = np.where(rng.random(n) < 0.5, rng.integers(0, 256, n),
                   rng.choice(np.array([0, 1, 2, 63, 64, 126, 127, 190, 191, 253, 254, 255]), n))
    frac = rng.integers(0, 1 << 23, n)
    frac = np.where(rng.random(n) < 0.2, frac & 0x7F0000, frac)
    return ((rng.integers(0, 2, n) << 31) | (exp << 23) | frac).astype(np.uint32)


@pytest.mark.parametrize("ftz, sat", list(itertools.product([False, True], repeat=2)))
def test_host_path_equals_integer_model_on_edges(ftz, sat):
    for a, b in itertools.product(EDGES, repeat=2):
        assert host_f32_add(a, b, ftz, sat) == f32_add(a, b, 0, ftz, sat), f"add {a:#x} {b:#x}"
        assert host_f32_mul(a, b, ftz, sat) == f32_mul(a, b, 0, ftz, sat), f"mul {a:#x} {b:#x}"
    for a, b, c in itertools.product(EDGES[::3], EDGES[1::3], EDGES[::2]):
        assert host_f32_fma(a, b, c, ftz, sat) == f32_fma(a, b, c, 0, ftz, sat), f"fma {a:#x} {b:#x} {c:#x}"


@pytest.mark.parametrize("ftz, sat", list(itertools.product([False, True], repeat=2)))
def test_host_path_equals_integer_model_on_random_bits(ftz, sat):
    a, b, c = _random_bits(20000, 1), _random_bits(20000, 2), _random_bits(20000, 3)
    with np.errstate(all="ignore"):   # input making only: products of any bits
        c[::4] = (-(a[::4].view(np.float32) * b[::4].view(np.float32))).view(np.uint32)   # near cancellation
    for op, args in (("fma", (a, b, c)), ("add", (a, b)), ("sub", (a, b)), ("mul", (a, b))):
        host = float_arith(op, *args, ftz=ftz, sat=sat)
        model = float_arith(op, *args, rnd="rz", ftz=ftz, sat=sat)   # touch the integer path too
        assert host.shape == model.shape
        want = np.array([{"fma": lambda *x: f32_fma(*x, 0, ftz, sat), "mul": lambda *x: f32_mul(*x, 0, ftz, sat),
                          "add": lambda *x: f32_add(*x, 0, ftz, sat),
                          "sub": lambda x, y: f32_add(x, y ^ 0x80000000, 0, ftz, sat)}[op](*map(int, t))
                         for t in zip(*args)], np.uint32)
        bad = np.flatnonzero(host != want)
        assert bad.size == 0, (f"{op}.rn ftz={ftz} sat={sat}: {bad.size} differ, first inputs "
                               f"{[hex(int(x[bad[0]])) for x in args]}: host {int(host[bad[0]]):#x}, "
                               f"model {int(want[bad[0]]):#x}")


def test_no_fast_math_flags_in_the_compiled_loops():
    """The host path's IR carries no flag that would let LLVM contract or re-associate (fast, contract,
    reassoc); the fma is the explicit llvm.fma intrinsic."""
    from numba import njit

    from warpsim.isa.fpbatch import _host_range
    fresh = njit(cache=False)(_host_range.py_func)      # cached code cannot be inspected
    a = np.zeros(4, np.uint32)
    fresh(3, a, a, a, a.copy(), False, False, 0, 4)
    ir = fresh.inspect_llvm(fresh.signatures[0])
    ops = [line for line in ir.splitlines() if " fadd " in line or " fmul " in line or "llvm.fma.f32(" in line]
    assert any("llvm.fma.f32(" in line for line in ops) and any(" fadd " in line for line in ops)
    for line in ops:
        for flag in (" fast ", " contract ", " reassoc ", " afn "):
            assert flag not in line, line
