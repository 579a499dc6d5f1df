"""cvt_inputs: each class has its character, checked with numpy's float16 conversion (correctly
rounded, nearest-even) and with the bf16 layout (the upper half of an f32)."""

import numpy as np
import pytest

from warpsim.isa.inputs import CVT_CLASSES, cvt_inputs

N = 20_000


def _fields(x):
    return (x >> 23) & 0xFF


def _is_nan(x):
    return (_fields(x) == 0xFF) & ((x & 0x7FFFFF) != 0)


@pytest.mark.parametrize("to", ["f16", "bf16"])
@pytest.mark.parametrize("cls", CVT_CLASSES)
def test_deterministic_and_shaped(cls, to):
    a, b = cvt_inputs(cls, 100, to=to, rng=np.random.default_rng(5))
    a2, b2 = cvt_inputs(cls, 100, to=to, rng=np.random.default_rng(5))
    assert a.dtype == b.dtype == np.uint32 and a.shape == b.shape == (100,)
    assert (a == a2).all() and (b == b2).all() and not (a == b).all()


def test_f16_ties_sit_exactly_between_two_f16_values():
    a, _ = cvt_inputs("ties", N, to="f16", rng=np.random.default_rng(1))
    x = a.view(np.float32)
    up = np.nextafter(x, np.float32(np.inf) * np.sign(x)).astype(np.float16)
    down = np.nextafter(x, np.float32(0)).astype(np.float16)
    tie = up != down                     # neighbours round apart: x is a rounding boundary
    assert tie.mean() > 0.7, tie.mean()
    assert np.isfinite(x).all()
    assert (np.abs(x[tie]) < 2.0 ** -14).any() and (np.abs(x[tie]) > 1.0).any()   # subnormal and normal ties


def test_bf16_ties_have_exactly_half_an_ulp_below_the_kept_bits():
    a, b = cvt_inputs("ties", N, to="bf16", rng=np.random.default_rng(2))
    for x in (a, b):
        assert ((x & 0xFFFF) == 0x8000).mean() > 0.7
        assert (_fields(x) < 0xFF).all()
        assert (_fields(x) == 0).any(), "bf16 subnormal ties come from f32 subnormals"


@pytest.mark.parametrize("to, lo, hi", [("f16", 101, 113), ("bf16", 0, 1)])
def test_subnormal_class_stays_in_the_subnormal_range(to, lo, hi):
    a, _ = cvt_inputs("subnormal", N, to=to, rng=np.random.default_rng(3))
    f = _fields(a)
    assert (((f >= lo) & (f <= hi)) | (f == 0)).all()
    assert (f == 0).mean() > 0.2


@pytest.mark.parametrize("to", ["f16", "bf16"])
def test_special_class_holds_nans_infinities_zeros_and_edges(to):
    a, b = cvt_inputs("special", N, to=to, rng=np.random.default_rng(4))
    x = np.concatenate([a, b])
    mag = x & 0x7FFFFFFF
    assert _is_nan(x).mean() > 0.1
    assert len(np.unique(x[_is_nan(x)])) > 100, "NaN payloads vary"
    assert (x[_is_nan(x)] >> 31).any() and not (x[_is_nan(x)] >> 31).all(), "NaNs of both signs"
    assert (mag == 0x7F800000).any() and (x == 0x80000000).any() and (x == 0).any()
    edge = 0x477FF000 if to == "f16" else 0x7F7F8000          # the overflow midpoint
    assert (mag == edge).any()


def test_range_class_spans_the_destination_exponents():
    a, _ = cvt_inputs("range", N, to="f16", rng=np.random.default_rng(6))
    v = np.abs(a.view(np.float32))
    assert v.min() < 2.0 ** -24 and v.max() > 65520 and np.isfinite(v).all()


def test_random_bits_cover_everything():
    a, b = cvt_inputs("random-bits", N, to="f16", rng=np.random.default_rng(7))
    assert len(np.unique(a)) > 0.99 * N and _is_nan(a).any() and (_fields(b) == 0).any()


def test_bad_arguments():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="cls"):
        cvt_inputs("ordinary", 1, rng=rng)
    with pytest.raises(ValueError, match="to"):
        cvt_inputs("ties", 1, to="f32", rng=rng)
    with pytest.raises(TypeError, match="rng"):
        cvt_inputs("ties", 1, rng=1)
