"""MUFU.RCP, MUFU.RSQ, MUFU.SQRT as a datapath (warpsim.isa.mufu_recip; its coefficients solved by
warpsim.isa.mufu_recip_derive) against the H200's results.

``mufu_recip_sample.npz`` (drawn by ``mufu_recip_sample.py`` from the H200 key tables): each function's
results at the first and last two keys of every segment and at 2,048 random keys. The ``--slow`` test
compares every key with the key tables themselves while ``warpsim/isa/data/mufu32_sm90.npz`` still holds
them. Specials and exponents: ``test_mufu32.py`` (16,384 H200 results per form, every exponent).
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from warpsim.isa import mufu_recip
from warpsim.isa.mufu32 import DATA as KEY_TABLES, key_tables, mufu_batch
from warpsim.isa.mufu_recip import DATAPATHS, RECIP_NAMES, recip_tables, square_truncated
from warpsim.isa.mufu_recip_derive import derive, key_results, model_results, reference_inputs

SAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mufu_recip_sample.npz")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def sample():
    with np.load(SAMPLE) as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize("name", RECIP_NAMES)
def test_the_datapath_gives_the_h200_results(sample, name):
    x, want = sample[f"{name}:inputs"], sample[f"{name}:results"]
    dp = DATAPATHS[name]
    assert x.size > 4 * dp.segments                       # every segment's ends, and random keys
    got = mufu_batch(name, x, ftz=True)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [f"{int(x[i]):08x}: model {int(got[i]):08x}, H200 {int(want[i]):08x}" for i in bad[:5]]


def _reference_square(x):
    """The kept columns of the folded partial-product array, summed bit by bit."""
    bits = [(x >> i) & 1 for i in range(18)]
    total = 0
    for i in range(18):
        for j in range(i, 18):
            col = 2 * i if i == j else i + j + 1
            if bits[i] and bits[j] and col >= 19:
                total += 1 << col
    return total


@pytest.mark.parametrize("x", [0, 1, 3, 0x3FF, 0x400, 0xFFFF, 0x1FFFF, 0x10000, 0x2AAAA, 0x15555]
                         + list(np.random.default_rng(5).integers(0, 1 << 17, 40)))
def test_square_keeps_the_columns_from_19(x):
    x = int(x)
    got = square_truncated(x)
    assert got == _reference_square(x)
    assert x * x - 10 * (1 << 19) < got <= x * x           # 9 rows and the diagonal, each dropping < 2**19


def test_derivation_recovers_the_shipped_coefficients():
    """From the model's own results, ``derive`` finds the same bias and coefficients (the shipped ones were
    derived from the H200's results, which the model equals)."""
    t = recip_tables()[0]
    bias, c = derive("rcp", model_results("rcp", t))
    assert bias == int(t[0]) | int(t[1]) << 32
    np.testing.assert_array_equal(c.ravel(), t[2:].astype(np.int64))


def test_derivation_refuses_results_the_datapath_cannot_give():
    results = model_results("rcp", recip_tables()[0]).copy()
    results[(5 << 16) + 777] ^= 0x40                        # one result 64 units off, in segment 5
    with pytest.raises(ValueError, match=r"rcp: segment 5: no \(c1, c2\)"):
        derive("rcp", results)


def test_a_file_for_another_datapath_is_refused(tmp_path):
    with open(mufu_recip.DATA) as f:
        data = json.load(f)
    data["sqrt"]["datapath"]["lead"] = 57
    path = tmp_path / "other.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="sqrt: coefficients for another datapath"):
        recip_tables(str(path))


def test_missing_file_names_the_command(tmp_path):
    with pytest.raises(FileNotFoundError, match="python -m warpsim.isa.mufu_recip_derive --derive-from"):
        recip_tables(str(tmp_path / "none.json"))


def test_cli_error_is_one_line_and_exit_2(tmp_path):
    r = subprocess.run([sys.executable, "-m", "warpsim.isa.mufu_recip_derive",
                        "--derive-from", str(tmp_path / "none.npz"), "--out", str(tmp_path / "out.json")],
                       capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "none.npz" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out.json").exists()


def test_the_coefficient_file_says_how_it_was_obtained():
    with open(mufu_recip.DATA) as f:
        source = json.load(f)["source"]
    assert source["command"].startswith("python -m warpsim.isa.mufu_recip_derive --derive-from")
    assert "H200" in source["probe"]["gpu"]


def _has_key_tables():
    try:
        key_tables(RECIP_NAMES, KEY_TABLES)
    except (OSError, KeyError):
        return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize("name", RECIP_NAMES)
def test_every_key_equals_the_h200_key_table(name):
    if not _has_key_tables():
        pytest.skip(f"{KEY_TABLES} no longer holds the {name} key table; the proof is the H200 sweep "
                    f"(docs/numerics.md)")
    table = key_tables((name,), KEY_TABLES)[0]
    want = key_results(name, table)
    got = model_results(name, recip_tables()[RECIP_NAMES.index(name)])
    bad = np.flatnonzero(got != want)
    x = reference_inputs(name)
    assert bad.size == 0, [f"{int(x[i]):08x}: model {int(got[i]):08x}, H200 {int(want[i]):08x}" for i in bad[:5]]


# ---- rcp.approx.ftz.f64 (proven on the H200 at every high word: conformance/h200/h200-rcp-f64-sweep.json) ----

@pytest.mark.parametrize("x, y", [
    (0x3FF0000000000000, 0x3FF0000000000000), (0x4000000000000000, 0x3FE0000000000000),
    (0x4008000000000000, 0x3FD5555500000000),              # 1/3: RCP's mantissa cut to 20 bits
    (0xBFF0000000000000, 0xBFF0000000000000), (0x7FD0000000000000, 0x0010000000000000),   # 1/2**1022 = 2**-1022
    (0x7FD0000100000000, 0x0000000000000000),              # below 2**-1022: flushed
    (0x0000000000000000, 0x7FF0000000000000), (0x8000000FFFFFFFFF, 0xFFF0000000000000),   # 0, subnormal: +-inf
    (0xFFF0000000000000, 0x8000000000000000), (0x7FF8000000000000, 0x7FFFFFFF00000000),
    (0x0010000000000000, 0x7FD0000000000000)])
def test_rcp_f64_model(x, y):
    t = recip_tables()[0]
    got = int(mufu_recip.f64_rcp_approx_ftz(np.uint64(x), t))
    assert got == y, f"rcp.approx.ftz.f64({x:#018x}) = {got:#018x}, want {y:#018x}"
    assert int(mufu_recip.f64_rcp_approx_ftz(np.uint64(x ^ 0xFFFFFFFF), t)) == y     # the low word is never read


def test_rcp_f64_is_the_f32_datapath_on_the_high_word():
    f = np.random.default_rng(9).integers(0, 1 << 20, 4096, dtype=np.uint64).astype(np.uint32)
    hi = mufu_recip.rcp64h_range(0x3FF00000, np.empty(1 << 20, np.uint32))[f]
    rcp32 = mufu_batch("rcp", np.uint32(0x3F800000) | (f << np.uint32(3)), ftz=True)
    # 1/x in (0.5, 1]: f32 exponent 126 -> f64 1022; the top 20 of RCP's 23 mantissa bits
    want = (((rcp32 >> np.uint32(23)) - np.uint32(126) + np.uint32(1022)) << np.uint32(20)) | \
        ((rcp32 & np.uint32(0x7FFFFF)) >> np.uint32(3))
    np.testing.assert_array_equal(hi, want)


def test_the_ptx_interpreter_runs_rcp_f64_on_f64_registers():
    from warpsim.ptx import load
    src = (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p) {\n"
           "  .reg .f64 %fd<3>; .reg .b64 %rd<2>;\n  ld.param.u64 %rd1, [p]; cvta.to.global.u64 %rd1, %rd1;\n"
           "  mov.f64 %fd1, 0d4008000000000000;\n  rcp.approx.ftz.f64 %fd2, %fd1;\n  st.global.f64 [%rd1], %fd2;\n"
           "  ret;\n}\n")
    out = load(src).launch("k", block=1, args={"p": np.zeros(1, np.uint64)}).buffers["p"]
    assert int(np.asarray(out).view(np.uint64)[0]) == 0x3FD5555500000000          # 1/3, as the model above


@pytest.mark.slow
def test_the_shipped_file_is_what_the_command_writes(tmp_path):
    if not _has_key_tables():
        pytest.skip(f"{KEY_TABLES} no longer holds the key tables; derive from a probe folder on a GPU")
    out = tmp_path / "c.json"
    r = subprocess.run([sys.executable, "-m", "warpsim.isa.mufu_recip_derive", "--derive-from", KEY_TABLES,
                        "--out", str(out)],
                       capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})
    assert r.returncode == 0, r.stderr
    with open(mufu_recip.DATA) as f:
        assert json.loads(out.read_text()) == json.load(f)


def test_cli_names_a_table_the_file_lacks(tmp_path):
    path = tmp_path / "keys.npz"
    np.savez(path, ex2=np.zeros(4, np.int32))
    r = subprocess.run([sys.executable, "-m", "warpsim.isa.mufu_recip_derive", "--derive-from", str(path),
                        "--out", str(tmp_path / "out.json")], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": ROOT})
    assert r.returncode == 2
    assert r.stderr == f"python -m warpsim.isa.mufu_recip_derive: {path} has no 'rcp' table\n"
