"""The float campaign's input classes hold what their names say (warpsim.isa.fpinputs)."""

from fractions import Fraction

import numpy as np
import pytest

from tests.isa.float_reference import BF16, F16, F32, is_subnormal, to_bits, value
from warpsim.isa.fpinputs import FLOAT_CLASSES, float_operands

FMT = {"f32": F32, "f16": F16, "bf16": BF16}


def _is_midpoint(x, fmt):
    """Whether the exact value ``x`` lies halfway between two neighbours of ``fmt``."""
    if x == 0:
        return False
    lo, hi = value(to_bits(x, False, fmt, "rz"), fmt), value(to_bits(x, False, fmt, "rp" if x > 0 else "rm"), fmt)
    return not isinstance(lo, str) and not isinstance(hi, str) and lo != hi and (lo + hi) / 2 == x


@pytest.mark.parametrize("t, op", [("f32", "add"), ("f32", "sub"), ("f32", "fma"), ("f32", "mul"),
                                   ("f16", "add"), ("bf16", "fma"), ("f16", "mul")])
def test_ties_class_makes_midpoints(t, op):
    n = 400
    kinds = (t,) * (3 if op == "fma" else 2)
    ops = float_operands("ties", n, kinds, op=op, rng=np.random.default_rng(1))
    fmt = FMT[t]
    ties = 0
    for row in zip(*(x.tolist() for x in ops)):
        v = [value(x, fmt) for x in row]
        if any(isinstance(x, str) for x in v):
            continue
        exact = {"add": lambda: v[0] + v[1], "sub": lambda: v[0] - v[1], "mul": lambda: v[0] * v[1],
                 "fma": lambda: v[0] * v[1] + v[2]}[op]()
        ties += _is_midpoint(exact, fmt)
    assert ties > n * (0.25 if op == "mul" else 0.5), f"{op}.{t}: {ties} ties of {n}"


@pytest.mark.parametrize("dst", ["f16", "bf16", "s32"])
def test_cvt_ties_are_midpoints_of_the_destination(dst):
    (x,) = float_operands("ties", 400, ("f32",), op="cvt", dst=dst, rng=np.random.default_rng(2))
    if dst == "s32":
        frac = [value(v, F32) % 1 for v in x.tolist()]
        assert sum(f == Fraction(1, 2) for f in frac) > 200
    else:
        assert sum(_is_midpoint(value(v, F32), FMT[dst]) for v in x.tolist()) > 200


def test_subnormal_and_specials_classes():
    rng = np.random.default_rng(3)
    a, b = float_operands("subnormal", 1000, ("f32", "f32"), op="add", rng=rng)
    assert np.mean([is_subnormal(v, F32) for v in a.tolist()]) > 0.4
    (s,) = float_operands("specials", 1000, ("f16x2",), op="abs", rng=rng)
    halves = np.concatenate([s >> 16, s & 0xFFFF])
    exp = (halves >> 10) & 0x1F
    assert (exp == 0x1F).sum() > 100 and ((halves & 0x7FFF) == 0).sum() > 20
    for cls in FLOAT_CLASSES:
        (i,) = float_operands(cls, 64, ("s64",), op="cvt", rng=rng)
        assert i.dtype == np.uint64 and i.shape == (64,)


def test_bad_arguments():
    with pytest.raises(ValueError, match="cls"):
        float_operands("ordinary", 4, ("f32",), op="add", rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="kind"):
        float_operands("ties", 4, ("f128",), op="add", rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="Generator"):
        float_operands("ties", 4, ("f32",), op="add", rng=0)


def test_f64_operands_are_uint64_and_cover_each_class():
    rng = np.random.default_rng(4)
    for cls in FLOAT_CLASSES:
        for op in ("add", "fma", "mul", "div"):
            ops = float_operands(cls, 256, ("f64",) * (3 if op == "fma" else 2), op=op, rng=rng)
            assert all(x.dtype == np.uint64 and x.shape == (256,) for x in ops)
    (s,) = float_operands("subnormal", 256, ("f64",), op="add", rng=rng)
    assert (((s >> np.uint64(52)) & np.uint64(0x7FF)) == 0).sum() > 100
    (t,) = float_operands("ties", 256, ("f64",), op="cvt", dst="f32", rng=rng)
    assert ((t & np.uint64((1 << 29) - 1)) == np.uint64(1 << 28)).sum() > 100     # f32 midpoints
