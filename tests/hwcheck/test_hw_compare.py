"""Bit comparison and mismatch records: order, offsets, caps, and decoded values checked against numpy."""

import numpy as np
import pytest

from hwcheck.compare import RECORD_LIMIT, Mismatch, compare_registers, decode_register

PTX = "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"


def test_records_name_warp_lane_register_in_order_and_count_everything():
    rng = np.random.default_rng(1)
    exp = rng.integers(0, 2**32, (6, 32, 2), dtype=np.uint64).astype(np.uint32)
    act = exp.copy()
    flips = [(4, 31, 1), (0, 3, 0), (4, 0, 0), (0, 3, 1)]
    for w, l, r in flips:
        act[w, l, r] ^= 0x00010000
    c = compare_registers(exp, act, instruction=PTX, kind="f16x2", registers=["d0", "d1"], first_warp=100,
                          limit=3, line="prog.py:12: gemm(...)")
    assert (c.compared, c.mismatched) == (6 * 32 * 2, 4)
    assert c.warps.tolist() == [100, 104]
    assert [(m.warp, m.lane, m.register) for m in c.records] == [(100, 3, "d0"), (100, 3, "d1"), (104, 0, "d0")]
    m = c.records[0]
    assert (m.expected, m.actual) == (int(exp[0, 3, 0]), int(act[0, 3, 0]))
    assert m.line == "prog.py:12: gemm(...)" and "(prog.py:12: gemm(...))" in str(m)


def test_limit_zero_still_counts_and_equal_arrays_match():
    exp = np.zeros((3, 32, 4), np.uint32)
    act = exp + 1
    c = compare_registers(exp, act, instruction=PTX, kind="b32", limit=0)
    assert c.mismatched == 3 * 32 * 4 and c.records == () and len(c.warps) == 3
    same = compare_registers(exp, exp.copy(), instruction=PTX, kind="b32")
    assert same.mismatched == 0 and same.records == () and same.warps.size == 0
    assert RECORD_LIMIT >= 10


def test_leading_axes_flatten_into_warps():
    exp = np.zeros((2, 3, 32, 1), np.uint32)
    act = exp.copy()
    act[1, 2, 9, 0] = 5
    (m,) = compare_registers(exp, act, instruction="cvt.rn.f16x2.f32", kind="f16x2").records
    assert (m.warp, m.lane, m.register) == (5, 9, "d0")


@pytest.mark.parametrize("bits", [0x3C00, 0x8001, 0x7BFF, 0x0400, 0xFC00, 0x7E00, 0x8000, 0x3555])
def test_f16_halves_decode_as_numpy_reads_them(bits):
    value = np.array([bits], np.uint16).view(np.float16)[0]
    text = decode_register(bits | (0x3C00 << 16), "f16x2")
    lo = text[len("[lo "):text.index(",")]
    assert text.endswith(", hi 1]")
    if np.isnan(value):
        assert lo == "nan"
    else:
        assert np.float16(float(lo)) == value and str(np.float16(float(lo))) == str(value)


@pytest.mark.parametrize("bits", [0x3F800000, 0x00000001, 0x7F7FFFFF, 0x80000000, 0xFF800000, 0x3DCCCCCD])
def test_f32_decodes_to_a_string_that_reads_back_to_the_same_bits(bits):
    text = decode_register(bits, "f32")
    assert np.array([float(text)], np.float32).view(np.uint32)[0] == bits, text


def test_bf16_and_raw_kinds():
    assert decode_register(0x3F80C000, "bf16x2") == "[lo -2, hi 1]"
    assert decode_register(0x12345678, "b16x2") == "[lo 0x5678, hi 0x1234]"
    assert decode_register(0x12345678, "b32") == "0x12345678"
    with pytest.raises(ValueError, match="kind"):
        decode_register(0, "f64")


def test_record_json_has_hex_and_decoded_values():
    m = Mismatch(PTX, 3, 17, "d1", 0x3C003C00, 0x3C003C01, "f16x2")
    d = m.as_dict()
    assert d["expected"] == "0x3c003c00" and d["actual"] == "0x3c003c01"
    assert d["expected_value"] == "[lo 1, hi 1]" and d["actual_value"] == "[lo 1.001, hi 1]"
    assert (d["warp"], d["lane"], d["register"], d["line"]) == (3, 17, "d1", None)
    assert str(m) == (f"{PTX}: warp 3 lane 17 d1: expected 0x3c003c00 ([lo 1, hi 1]), "
                      f"got 0x3c003c01 ([lo 1.001, hi 1])")


def test_bad_arguments():
    good = np.zeros((1, 32, 2), np.uint32)
    with pytest.raises(TypeError, match="expected must be a numpy array of uint32"):
        compare_registers(good.astype(np.int64), good, instruction=PTX, kind="b32")
    with pytest.raises(ValueError, match="one shape"):
        compare_registers(good, np.zeros((1, 32, 4), np.uint32), instruction=PTX, kind="b32")
    with pytest.raises(ValueError, match="one shape"):
        compare_registers(np.zeros((4, 2), np.uint32), np.zeros((4, 2), np.uint32), instruction=PTX, kind="b32")
    with pytest.raises(ValueError, match="3 register names for 2 registers"):
        compare_registers(good, good, instruction=PTX, kind="b32", registers=["a", "b", "c"])
    with pytest.raises(ValueError, match="kind"):
        compare_registers(good, good, instruction=PTX, kind="f8")
