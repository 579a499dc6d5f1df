"""``warpsim.isa.sfu_sincos`` (MUFU.SIN/COS as a fixed-point datapath) and its coefficient derivation.

The H200 sample (``sfu_sincos_sample.npz``, from the ``hwcheck.campaigns.mufu32_probe`` run of 2026-12-01): the edge
sweep's inputs whose ``t = x/(2 pi)`` has fraction bits (every sign, exponents 100..152 and the extremes, 256 mantissas
each) and every 256th of the dense run ``0x3E000000 + i``; ``sin``/``cos`` the H200's results (``.ftz`` and
plain gave the same bits there).
"""

import json
import os
from fractions import Fraction

import numpy as np
import pytest

from warpsim.isa.sfu_sincos import (HARDWARE_PROOF, KEY_BITS, OFFSET_BITS, ONE_BIT, SEGMENTS, SQUARE_DROPPED,
                                    approx_square, coefficients, load_coefficients, mufu_from_keys, sincos_batch,
                                    SINCOS_OPS, sincos_key, sincos_range)
from warpsim.isa.sfu_sincos_derive import (Observations, derive_coefficients, observations_from_inputs,
                                           observations_from_keys, sum_interval)

SAMPLE = os.path.join(os.path.dirname(__file__), "sfu_sincos_sample.npz")


@pytest.fixture(scope="module")
def sample():
    with np.load(SAMPLE) as d:
        return {k: d[k] for k in d.files}


def _first_diff(x, want, got, what):
    bad = np.flatnonzero(want != got)
    lines = [f"{what}(0x{int(x[i]):08x}): H200 0x{int(want[i]):08x}, model 0x{int(got[i]):08x}" for i in bad[:8]]
    return f"{bad.size} of {x.size} differ: " + "; ".join(lines)


@pytest.mark.parametrize("op", ["sin", "cos"])
@pytest.mark.parametrize("ftz", [False, True])
def test_the_model_gives_the_h200_results(sample, op, ftz):
    x, want = sample["inputs"], sample[op]
    got = sincos_batch(op, x, ftz=ftz)
    assert np.array_equal(got, want), _first_diff(x, want, got, f"{op}.approx{'.ftz' if ftz else ''}.f32")


def test_the_shipped_coefficients_are_derived_again_from_the_sample(sample):
    obs = (observations_from_inputs(sample["inputs"], sample["sin"], False)
           + observations_from_inputs(sample["inputs"], sample["cos"], True))
    c, info = derive_coefficients(obs)
    assert np.array_equal(c, coefficients()), np.flatnonzero((c != coefficients()).any(axis=1))
    assert all(s["fit"] == 1 for s in info)      # one triple per segment fits, in the window searched


def test_the_range_api_equals_the_batch_api():
    out = np.empty(4096, np.uint32)
    sincos_range("sin", 0x3F7FF800, out)
    assert np.array_equal(out, sincos_batch("sin", np.arange(0x3F7FF800, 0x3F800800, dtype=np.uint32)))


def test_symmetries_and_specials():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 1 << 31, 20000, dtype=np.uint64).astype(np.uint32)
    x = x[((x >> np.uint32(23)) & np.uint32(0xFF)) != 0xFF]
    for op, flip in (("sin", np.uint32(0x80000000)), ("cos", np.uint32(0))):
        pos, neg = sincos_batch(op, x), sincos_batch(op, x | np.uint32(0x80000000))
        assert np.array_equal(neg, pos ^ flip), op
        assert ((pos & np.uint32(0x7FFFFFFF)) <= np.uint32(0x3F800000)).all(), op
    specials = np.array([0x7F800000, 0xFF800000, 0x7FC00000, 0xFFFFFFFF, 0x7F800001], np.uint32)
    for op in ("sin", "cos"):
        assert (sincos_batch(op, specials) == np.uint32(0x7FFFFFFF)).all()
    assert [hex(int(v)) for v in sincos_batch("sin", np.array([0, 0x80000000, 0x00000001], np.uint32))] == \
        ["0x0", "0x80000000", "0x0"]
    assert (sincos_batch("cos", np.array([0, 0x80000000, 0x4F800000], np.uint32)) == np.uint32(0x3F800000)).all()


def test_the_key_is_the_fraction_of_t_in_25_bits():
    rng = np.random.default_rng(1)
    t = rng.integers(0, 1 << 32, 3000, dtype=np.uint64).astype(np.uint32)
    t = np.concatenate([t, np.array([0, 1, 0x3F000000, 0x3E800000, 0x4B000000, 0x4AFFFFFF, 0x32FFFFFF, 0x33000000],
                                    np.uint32)])
    for v in t:
        if (v >> 23) & 0xFF == 0xFF:
            continue
        mag = abs(Fraction(float(np.uint32(v).view(np.float32))))
        assert sincos_key(v) == int(mag * 2 ** KEY_BITS) % 2 ** KEY_BITS, hex(int(v))


def test_the_squarer_drops_exactly_the_low_partial_products():
    rng = np.random.default_rng(2)
    us = list(rng.integers(0, 1 << OFFSET_BITS, 300)) + [0, 1, 2, 3, (1 << OFFSET_BITS) - 1, 1 << 9, 1 << 10, 0x15555, 0xAAAA]
    for u in map(int, us):
        bits = [(u >> i) & 1 for i in range(OFFSET_BITS)]
        kept = 0                                  # u*u = sum b_i b_j 2**(i+j) over all (i, j): keep weights >= 2**19
        for i in range(OFFSET_BITS):
            if bits[i] and 2 * i >= SQUARE_DROPPED:
                kept += 1 << (2 * i)
            for j in range(i + 1, OFFSET_BITS):
                if bits[i] and bits[j] and i + j + 1 >= SQUARE_DROPPED:
                    kept += 1 << (i + j + 1)
        assert approx_square(u) == kept, u


def _normalise(s):
    """The result magnitude bits a positive sum gives: leading bit to 2**56, 24 bits kept (restated)."""
    if s == 0:
        return 0
    n = s.bit_length() - 1
    shift = max(ONE_BIT - n, 0)
    return ((127 - shift) << 23) | (((s << shift) >> (ONE_BIT - 23)) & 0x7FFFFF)


def test_sum_interval_is_exactly_the_sums_of_a_result():
    mags = np.array([0, 0x3F800000, 0x3F7FFFFF, 0x3F000000, 0x3E000001, 0x34000000, 0x33C90FDB, 0x30000005,
                     0x2C000000, 0x2A7FFC00], np.uint32)       # the last two: sums below 2**33, exact
    lo, hi = sum_interval(mags)
    for m, a, b in zip(mags, lo, hi):
        a, b = int(a), int(b)
        assert a < b and _normalise(a) == m and _normalise(b - 1) == m, hex(int(m))
        assert (a == 0 or _normalise(a - 1) != m) and _normalise(b) != m, hex(int(m))
    # a sum below 2**33 has fewer than 24 significant bits: results with low bits set come from no sum
    lo, hi = sum_interval(np.array([0x28000001, 0x2A7FFFFF], np.uint32))
    assert (lo == hi).all()


def test_the_derivation_recovers_other_coefficients():
    c = coefficients().copy()
    c[3] += (2, -1, 3)
    c[40] += (-5, 2, -1)
    keys = np.arange(0, 1 << KEY_BITS, 97, dtype=np.uint32)     # a sparse sample of every quadrant
    obs = (observations_from_keys(mufu_from_keys(keys, False, c), False, keys)
           + observations_from_keys(mufu_from_keys(keys, True, c), True, keys))
    got, info = derive_coefficients(obs)
    assert np.array_equal(got, c)
    assert len(info) == SEGMENTS


def test_the_derivation_refuses_results_that_break_the_structure(sample):
    x, y = sample["inputs"], sample["sin"].copy()
    i = int(np.flatnonzero((y & np.uint32(0x7FFFFFFF)) > np.uint32(0x3E000000))[0])
    y[i] ^= np.uint32(0x80000000)
    obs = observations_from_inputs(x, y, False)
    assert obs.broken == 1
    with pytest.raises(ValueError, match=rf"1 results break the sin/cos structure .*sin\(0x{int(x[i]):08x}\)"):
        derive_coefficients(obs)


def test_an_offset_with_two_results_is_named():
    r = np.array([(9 << OFFSET_BITS) + 5, (9 << OFFSET_BITS) + 5], np.int64)
    with pytest.raises(ValueError, match=r"segment 9: no sum gives the result\(s\) at offset 0x00005"):
        derive_coefficients(Observations(r, np.array([0x3F000000, 0x3F000001], np.uint32)))


def test_a_segment_without_enough_observations_is_named():
    with pytest.raises(ValueError, match=r"segment 0: 0 distinct offsets \(3 needed\)"):
        derive_coefficients(Observations(np.array([5 << OFFSET_BITS], np.int64), np.array([0x3F000000], np.uint32)))


def test_unknown_forms_are_refused():
    with pytest.raises(ValueError, match=r"tan\.approx\.f32: not a form of warpsim.isa.sfu_sincos"):
        sincos_batch("tan", np.zeros(1, np.uint32))


def test_the_hardware_proof_names_a_committed_report():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert HARDWARE_PROOF and os.path.exists(os.path.join(root, HARDWARE_PROOF))   # tests/ptx checks its content


KEY_SAMPLE = os.path.join(os.path.dirname(__file__), "sfu_sincos_keys_sample.npz")


@pytest.mark.skipif(not os.path.exists(KEY_SAMPLE), reason="no key sample yet: `python -m "
                    "hwcheck.campaigns.sincos_probe --out DIR` on an H200 writes DIR/sincos_keys_sample.npz, to be "
                    "committed as tests/isa/sfu_sincos_keys_sample.npz")
@pytest.mark.parametrize("op", ["sin", "cos"])
def test_the_model_gives_the_gpu_keys_at_every_segment_boundary(op):
    from hwcheck.campaigns.sincos_probe import UNFILLED, sample_keys
    with np.load(KEY_SAMPLE) as d:
        keys, want = d["keys"], d[f"{op}_keys"]
    assert np.array_equal(keys, sample_keys())
    filled = want != np.uint32(UNFILLED)
    got = mufu_from_keys(keys[filled], op == "cos", coefficients())
    bad = np.flatnonzero(got != want[filled])
    assert bad.size == 0, [f"key 0x{int(keys[filled][i]):07x}: GPU 0x{int(want[filled][i]):08x}, model "
                           f"0x{int(got[i]):08x}" for i in bad[:8]]


def test_the_derivation_command_writes_the_shipped_file_again(tmp_path, capsys):
    from warpsim.isa.sfu_sincos_derive import main
    out = tmp_path / "c.json"
    assert main(["--from", SAMPLE, "--write", str(out), "--source", '{"gpu": "H200"}']) == 0
    assert np.array_equal(load_coefficients(str(out)), coefficients())
    text = capsys.readouterr().out
    assert "segment 63:" in text and "sin: the derived model differs from 0 observations" in text
    doc = json.loads(out.read_text())
    assert doc["source"] == {"gpu": "H200"} and doc["derived_from"] == "sfu_sincos_sample.npz"


def test_the_derivation_command_names_a_bad_file(tmp_path, capsys):
    from warpsim.isa.sfu_sincos_derive import main
    bad = tmp_path / "x.npz"
    np.savez(bad, other=np.zeros(3))
    assert main(["--from", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "neither sin_keys/cos_keys nor inputs with sin/cos" in err


@pytest.mark.parametrize("op, ftz", list(SINCOS_OPS))
def test_every_batched_form_runs_its_own_scalar_model(op, ftz):
    """The batch kernel picks a model by the form's index in SINCOS_OPS (see warpsim.isa.mufu32's kernels)."""
    x = np.random.default_rng(6).integers(0, 1 << 32, 2000, dtype=np.uint32)
    c = coefficients()
    want = np.array([SINCOS_OPS[(op, ftz)](v, c) for v in x], np.uint32)
    np.testing.assert_array_equal(sincos_batch(op, x, ftz=ftz), want)
