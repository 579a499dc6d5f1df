"""The 16-bit MUFU models (warpsim.isa.mufu16) against the H200's results, and what the tables show.

``mufu16_sample.npz`` is 2,000 (input, GPU result) pairs per form, drawn by ``mufu16_sample.py`` from
the exhaustive H200 collection (every special input included); the shipped tables must give each
result exactly, through the scalar models and the batched API. The structural checks would catch a
table shifted, truncated or taken from the wrong form.
"""

import os

import numpy as np
import pytest

from warpsim.isa import mufu16
from warpsim.isa.fpops import FLOAT_OPS
from warpsim.isa.mufu16 import (MUFU16_FORMS, X2_FORMS, check_collection, float_mufu16, load_tables, main,
                                mufu16_table, tables_from_collection)

SAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mufu16_sample.npz")
PATTERNS = np.arange(65536, dtype=np.uint32)


def _parse(form):
    parts = form.split(".")
    return parts[0], parts[-1], "ftz" in parts


@pytest.fixture(scope="module")
def sample():
    with np.load(SAMPLE) as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize("form", [f for s in MUFU16_FORMS for f in (s, X2_FORMS[s])])
def test_the_tables_give_the_h200_results(sample, form):
    x, want = sample[f"{form}:inputs"], sample[f"{form}:results"]
    assert x.size == want.size == 2000
    op, t, ftz = _parse(form)
    np.testing.assert_array_equal(float_mufu16(op, x, type=t, ftz=ftz), want)
    entry = FLOAT_OPS[(op, t)]
    assert entry.implied == (("approx", "ftz") if ftz else ("approx",))
    assert [int(entry.function(int(v))) for v in x[::50]] == want[::50].tolist()


def test_the_sample_holds_every_special(sample):
    for form in MUFU16_FORMS:
        inf = 0x7C00 if form.endswith(".f16") else 0x7F80
        x = set(sample[f"{form}:inputs"].tolist())
        assert {0, 0x8000, 1, 0x8001, inf, inf | 0x8000, inf + 1, 0x7FFF, 0xFFFF} <= x, form


def test_x2_is_the_scalar_table_on_each_half():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 1 << 32, 5000, dtype=np.uint64).astype(np.uint32)
    for form in MUFU16_FORMS:
        op, t, ftz = _parse(form)
        packed = float_mufu16(op, a, type=t + "x2", ftz=ftz)
        np.testing.assert_array_equal(packed >> 16, float_mufu16(op, a >> 16, type=t, ftz=ftz))
        np.testing.assert_array_equal(packed & 0xFFFF, float_mufu16(op, a & 0xFFFF, type=t, ftz=ftz))
        scalar, pair = FLOAT_OPS[(op, t)].function, FLOAT_OPS[(op, t + "x2")].function
        for v in a[:200].tolist():
            assert pair(v) == (scalar(v >> 16) << 16) | scalar(v & 0xFFFF)


def _values(bits, fmt):
    bits = np.asarray(bits, np.uint32)
    if fmt == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    return (bits << np.uint32(16)).view(np.float32).astype(np.float64)


def _ordered_finite(fmt):
    """Every finite pattern from the most negative to the largest, in increasing value (-0 before +0)."""
    inf = 0x7C00 if fmt == "f16" else 0x7F80
    return np.concatenate([np.arange(0x8000 | (inf - 1), 0x7FFF, -1), np.arange(0, inf)]).astype(np.uint32)


@pytest.mark.parametrize("fmt,ftz", [("f16", False), ("bf16", True)])
def test_ex2_specials_and_shape(fmt, ftz):
    t = mufu16_table("ex2", fmt, ftz).astype(np.uint32)
    one, inf = (0x3C00, 0x7C00) if fmt == "f16" else (0x3F80, 0x7F80)
    assert t[0] == t[0x8000] == one                        # 2**±0 = 1
    assert t[inf] == inf and t[inf | 0x8000] == 0          # 2**inf = inf, 2**-inf = +0
    nan = (PATTERNS & 0x7FFF) > inf
    assert set(t[nan].tolist()) == {0x7FFF}                # every NaN, any sign or payload: canonical
    assert not (t & 0x8000).any()                          # never negative, never -0
    x = _ordered_finite(fmt)
    assert np.all(np.diff(t[x].astype(np.int64)) >= 0)     # monotone non-decreasing (results are >= +0)
    y = _values(t[x], fmt)
    for k in range(-24, 16) if fmt == "f16" else range(-126, 128):   # 2**k exactly at every integer k
        bits = np.float64(k).astype(np.float16).view(np.uint16) if fmt == "f16" else \
            np.float32(k).view(np.uint32) >> 16
        assert _values(t[int(bits)], fmt) == 2.0 ** k, k
    finite = np.isfinite(y) & (y >= (2.0 ** -14 if fmt == "f16" else 2.0 ** -126))
    with np.errstate(over="ignore"):
        exact = np.exp2(_values(x, fmt))[finite]
    ulp = 2.0 ** (np.floor(np.log2(exact)) - (10 if fmt == "f16" else 7))
    assert np.max(np.abs(y[finite] - exact) / ulp) < 1.0   # within one unit of the last place


def test_bf16_ex2_flushes_subnormals_and_f16_keeps_them():
    bf = mufu16_table("ex2", "bf16", True).astype(np.uint32)
    sub_in = np.concatenate([np.arange(1, 0x80), np.arange(0x8001, 0x8080)])
    assert set(bf[sub_in].tolist()) == {0x3F80}            # .ftz: a subnormal input is a zero: 2**0 = 1
    assert not ((bf > 0) & (bf < 0x80)).any()              # .ftz: no subnormal result
    f16 = mufu16_table("ex2", "f16").astype(np.uint32)
    assert ((f16 > 0) & (f16 < 0x400)).sum() > 0           # f16 results go subnormal below 2**-14
    assert f16[0x8001:0x8400].min() == 0x3BFF              # a negative subnormal input can give 1 - ulp


@pytest.mark.parametrize("fmt", ["f16", "bf16"])
def test_tanh_specials_and_shape(fmt):
    t = mufu16_table("tanh", fmt).astype(np.uint32)
    one, inf = (0x3C00, 0x7C00) if fmt == "f16" else (0x3F80, 0x7F80)
    assert t[0] == 0 and t[0x8000] == 0x8000               # the sign of a zero kept
    assert t[inf] == one and t[inf | 0x8000] == one | 0x8000
    nan = (PATTERNS & 0x7FFF) > inf
    assert set(t[nan].tolist()) == {0x7FFF}
    np.testing.assert_array_equal(t[(PATTERNS ^ 0x8000)[~nan]], t[~nan] ^ 0x8000)   # odd, bit for bit
    y = _values(t[_ordered_finite(fmt)], fmt)
    assert np.all(np.abs(y) <= 1.0) and np.all(np.diff(y) >= 0)
    sub = PATTERNS[(PATTERNS & 0x7FFF) < (0x400 if fmt == "f16" else 0x80)]
    np.testing.assert_array_equal(t[sub], sub)             # tanh(x) = x for subnormals, kept


def test_the_forms_ptx_lacks_are_refused():
    with pytest.raises(ValueError, match=r"ex2\.approx\.bf16: PTX defines ex2\.approx\.bf16 only with \.ftz"):
        float_mufu16("ex2", np.zeros(1, np.uint32), type="bf16")
    with pytest.raises(ValueError, match=r"tanh\.approx\.ftz\.f16x2: .* only without \.ftz"):
        float_mufu16("tanh", np.zeros(1, np.uint32), type="f16x2", ftz=True)
    with pytest.raises(ValueError, match=r"lg2\.approx\.f16: not a 16-bit MUFU form"):
        float_mufu16("lg2", np.zeros(1, np.uint32), type="f16")
    with pytest.raises(TypeError, match=r"ex2\.approx\.f16: a must be an integer array"):
        float_mufu16("ex2", np.zeros(1, np.float32), type="f16")


def _collection(tables):
    """A collection as ``hwcheck collect`` writes it, made from ``tables``."""
    x2_inputs = (PATTERNS << 16) | (PATTERNS ^ 0x8000)
    data = {}
    for form, table in tables.items():
        t = table.astype(np.uint32)
        data[f"{form}:inputs"], data[f"{form}:results"] = PATTERNS.copy(), t
        data[f"{X2_FORMS[form]}:inputs"] = x2_inputs
        data[f"{X2_FORMS[form]}:results"] = (t << 16) | t[PATTERNS ^ 0x8000]
    return data


def test_regenerating_gives_the_shipped_file(tmp_path, capsys):
    source, out = tmp_path / "collect.npz", tmp_path / "tables.npz"
    np.savez(source, **_collection(load_tables()))
    assert main(["--from", str(source), "--out", str(out)]) == 0
    assert out.read_bytes() == open(mufu16.DATA_PATH, "rb").read()
    assert "4 tables of 65536" in capsys.readouterr().out


def test_a_collection_whose_halves_disagree_is_refused(tmp_path, capsys):
    data = _collection(load_tables())
    data["tanh.approx.bf16x2:results"][0x3F80] ^= 1                       # the lower half of 0x3F80
    with pytest.raises(ValueError, match=r"tanh\.approx\.bf16x2: lower half of input 0xbf80 gave 0xbf43, "
                                         r"tanh\.approx\.bf16 gave 0xbf42 \(1 halves disagree\)"):
        tables_from_collection(data, "c.npz")
    source, out = tmp_path / "collect.npz", tmp_path / "tables.npz"
    np.savez(source, **data)
    assert main(["--from", str(source), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "lower half of input 0xbf80" in err and not out.exists()
    del data["ex2.approx.f16:inputs"]
    with pytest.raises(ValueError, match=r"no ex2\.approx\.f16:inputs \(collect with --variants"):
        tables_from_collection(data, "c.npz")
    assert main(["--from", str(tmp_path / "missing.npz")]) == 2
    assert "missing.npz" in capsys.readouterr().err


def test_check_compares_a_collection_with_the_tables(tmp_path, capsys):
    data = _collection(load_tables())
    assert all(v == [] for v in check_collection(data).values()) and len(check_collection(data)) == 8
    data["ex2.approx.f16:results"][0x4000] ^= 2                            # 2**2 = 0x4400 -> 0x4402
    data["tanh.approx.f16x2:results"][0x0001] ^= 1 << 16                   # the upper half of 0x0001
    bad = check_collection(data)
    assert bad["ex2.approx.f16"] == [(0x4000, 0x4402, 0x4400)] and bad["ex2.approx.f16x2"] == []
    assert bad["tanh.approx.f16x2"] == [(0x0001, 0x0000, 0x0001)]
    source = tmp_path / "collect.npz"
    np.savez(source, **data)
    assert main(["--check", str(source)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "ex2.approx.f16: 1 mismatches of 65536 (0x4000: GPU 0x4402, table 0x4400)"
    assert out[1] == "ex2.approx.f16x2: 0 mismatches of 131072" and len(out) == 8
    np.save(tmp_path / "x.npy", np.zeros(3))
    assert main(["--check", str(tmp_path / "x.npy")]) == 2
    assert capsys.readouterr().err == f"mufu16: {tmp_path / 'x.npy'}: not an .npz file of hwcheck collect\n"
