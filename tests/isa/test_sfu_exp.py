"""MUFU.EX2 and MUFU.LG2 as a quadratic per segment (warpsim.isa.sfu_exp; its coefficients solved by
warpsim.isa.sfu_exp_derive) against the H200's results.

``sfu_exp_sample.npz`` (drawn by ``sfu_exp_sample.py`` from the probe run the coefficients were solved from)
holds the H200's results at every segment edge and at 2,000 random keys per function. The coefficients
were checked at every key of that run when they were derived (and the model against the lookup tables
it replaced, on all 2**32 inputs: docs/numerics.md); ``--slow`` with ``WARPSIM_MUFU32_PROBE=PROBE_DIR``
derives them again from a probe folder and checks every key.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from warpsim.isa import sfu_exp
from warpsim.isa.sfu_exp import (OFFSET_BITS, SQUARER_DROPPED_COLUMNS, ex2_coefficients, lg2_coefficients, mufu_ex2,
                                 mufu_lg2, truncated_square)
from warpsim.isa.sfu_exp_derive import derive, model_mismatches, model_results, probe_keys, solve

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "sfu_exp_sample.npz")
COEFFS = {"ex2": ex2_coefficients, "lg2": lg2_coefficients}


@pytest.fixture(scope="module")
def sample():
    with np.load(SAMPLE) as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize("name", ["ex2", "lg2"])
def test_the_model_gives_the_h200_results_at_segment_edges_and_random_keys(sample, name):
    x, want = sample[f"{name}:inputs"], sample[f"{name}:results"]
    assert x.size >= 2000 + 64 * 6
    bad = model_mismatches(name, x, want, COEFFS[name]())
    fn = mufu_ex2 if name == "ex2" else mufu_lg2
    assert bad.size == 0, [f"{int(x[i]):08x}: model {int(fn(x[i], COEFFS[name]())):08x}, H200 {int(want[i]):08x}"
                           for i in bad[:5]]


def _square_by_columns(u):
    """Sum of the partial products of ``u * u`` (``u_i u_j 2**(i+j)`` over all ``i, j``) whose column is 19 or
    more, the doubled ``i < j`` terms landing one column up: the squarer restated bit by bit."""
    bits = [(u >> i) & 1 for i in range(OFFSET_BITS)]
    total = 0
    for i in range(OFFSET_BITS):
        if bits[i] and 2 * i >= SQUARER_DROPPED_COLUMNS:
            total += 1 << (2 * i)
        for j in range(i + 1, OFFSET_BITS):
            if bits[i] and bits[j] and i + j + 1 >= SQUARER_DROPPED_COLUMNS:
                total += 1 << (i + j + 1)
    return total


def test_the_truncated_square_keeps_exactly_the_columns_from_19_up():
    rng = np.random.default_rng(3)
    us = [0, 1, 3, 1 << 9, (1 << 10) - 1, 1 << 16, (1 << 17) - 1] + [int(v) for v in rng.integers(0, 1 << 17, 300)]
    for u in us:
        assert truncated_square(u) == _square_by_columns(u), u
        assert 0 <= u * u - truncated_square(u) < 1 << 23


def test_ex2_of_a_negative_input_is_the_mirror_of_its_ones_complement():
    """The fact behind one polynomial for both signs: ``2**-f`` uses the argument ``2**23 - 1 - f``."""
    t = ex2_coefficients()
    for f in (1, 2, 0x1FFFF, 0x20000, 0x400000, 0x7FFFFF):
        pos = mufu_ex2(np.uint32(np.float32(((1 << 23) - 1 - f) * 2.0 ** -23).view(np.uint32)), t)
        neg = mufu_ex2(np.uint32(np.float32(-f * 2.0 ** -23).view(np.uint32) ), t)
        assert neg & 0x7FFFFF == pos & 0x7FFFFF and (neg >> 23) == (pos >> 23) - 1, hex(f)


@pytest.mark.parametrize("x, y", [(0x3F800000, 0x00000000), (0x3F000000, 0xBF7FFFFE), (0x40000000, 0x3F800000),
                                  (0x00800000, 0xC2FBFFFF), (0x7F7FFFFF, 0x42FFFFFF), (0x00000001, 0xFF800000),
                                  (0x7F800000, 0x7F800000), (0xBF800000, 0x7FFFFFFF)])
def test_lg2_edges(x, y):
    got = int(mufu_lg2(np.uint32(x), lg2_coefficients()))
    assert got == y, f"MUFU.LG2({x:#010x}) = {got:#010x}, the H200 gives {y:#010x}"


def test_the_shipped_coefficients_say_where_they_come_from():
    with open(sfu_exp.DATA) as f:
        doc = json.load(f)
    assert "H200" in doc["source"]["gpu"] and "python -m warpsim.isa.sfu_exp_derive --from" in doc["derived_by"]
    for name in ("ex2", "lg2"):
        assert all(len(doc[name][c]) == 64 for c in ("c0", "c1", "c2"))


def test_a_probe_folder_without_the_key_table_is_refused_by_name(tmp_path):
    np.savez(tmp_path / "ex2.npz", other=np.zeros(4, np.int64))
    with pytest.raises(ValueError, match="has no 'ex2_signmag_F23'"):
        probe_keys(str(tmp_path))


def test_the_command_reports_a_bad_probe_folder_in_one_line(tmp_path):
    np.savez(tmp_path / "ex2.npz", other=np.zeros(4, np.int64))
    out = tmp_path / "c.json"
    r = subprocess.run([sys.executable, "-m", "warpsim.isa.sfu_exp_derive", "--from", str(tmp_path),
                        "--out", str(out)],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(HERE))))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "ex2_signmag_F23" in r.stderr, r.stderr
    assert not out.exists()


@pytest.mark.slow
def test_the_coefficients_derived_again_from_a_probe_run_are_the_shipped_ones():
    probe = os.environ.get("WARPSIM_MUFU32_PROBE")
    if not probe:
        pytest.skip("set WARPSIM_MUFU32_PROBE to a `python -m hwcheck.campaigns.mufu32_probe` output folder")
    derived = derive(probe_keys(probe))           # refuses unless every probe input gives the H200's result
    with open(sfu_exp.DATA) as f:
        shipped = json.load(f)
    for name in ("ex2", "lg2"):
        assert derived[name] == shipped[name], name


def _whole_domain(name):
    """Every argument once: EX2 ``x = f * 2**-23``; LG2 the mantissas of [0.5, 1) and [1, 2)."""
    f = np.arange(1 << 23, dtype=np.uint32)
    if name == "ex2":
        return (f.astype(np.float32) * np.float32(2.0 ** -23)).view(np.uint32)
    return np.concatenate([f | np.uint32(126 << 23), f | np.uint32(127 << 23)])


@pytest.mark.parametrize("name", ["ex2", pytest.param("lg2", marks=pytest.mark.slow)])
def test_the_solver_gives_back_the_shipped_coefficients_from_their_own_results(name):
    """The derivation, offline: the model's results (the H200's, at every key) pin the coefficients down."""
    x = _whole_domain(name)
    solved = solve(name, x, model_results(name, x, COEFFS[name]()))
    with open(sfu_exp.DATA) as f:
        assert solved == json.load(f)[name]


def test_the_solver_refuses_results_no_quadratic_gives():
    x = _whole_domain("ex2")
    y = model_results("ex2", x, ex2_coefficients())
    y[(5 << 17) + 1000] ^= np.uint32(1 << 12)          # one result of segment 5, far off
    with pytest.raises(ValueError, match="ex2: segment 5: "):
        solve("ex2", x, y)
