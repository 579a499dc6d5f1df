"""The f32 MUFU models (warpsim.isa.mufu32) against the H200's results, and the facts they rest on.

``mufu32_sample.npz`` holds, for every f32 ``.approx`` form, the H200's results on 16,384 inputs: each of
the 512 signs and exponents with 32 mantissas (0, 1, the largest, the middle ones and random ones),
every special input among them. It is every 8th input of the edge sweep of ``hwcheck.campaigns.mufu32_probe``;
the models were also checked on all 2**32 inputs of each form on the H200
(conformance/h200/h200-mufu32-sweep.json). The directed tests state the special cases as facts.
"""

import os

import numpy as np
import pytest

import warpsim.ptx
from warpsim.isa import mufu32
from warpsim.isa.mufu32 import MUFU32_OPS, build_tables, mufu_batch, mufu_range, mufu_tables

SAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mufu32_sample.npz")
FORMS = [f"{op}.approx{'.ftz' if ftz else ''}.f32" for op, ftz in MUFU32_OPS]


@pytest.fixture(scope="module")
def sample():
    with np.load(SAMPLE) as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize("form", FORMS)
def test_the_models_give_the_h200_results(sample, form):
    x, want = sample["inputs"], sample[form]
    assert x.size == want.size == 16384
    got = mufu_batch(form.split(".")[0], x, ftz=".ftz" in form)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [f"{int(x[i]):08x}: model {int(got[i]):08x}, H200 {int(want[i]):08x}" for i in bad[:5]]


@pytest.mark.parametrize("form", ["ex2.approx.ftz.f32", "lg2.approx.f32"])
def test_range_and_scalar_agree_with_the_batch(sample, form):
    op, ftz = form.split(".")[0], ".ftz" in form
    start = 0x3F7FFF00
    got = mufu_range(op, start, np.empty(512, np.uint32), ftz=ftz)
    np.testing.assert_array_equal(got, mufu_batch(op, np.arange(start, start + 512, dtype=np.uint32), ftz=ftz))
    fn, index = MUFU32_OPS[(op, ftz)]
    t = mufu_tables()[index]
    assert all(fn(np.uint32(start + i), t) == got[i] for i in range(0, 512, 37))


# the special inputs, as the H200 gives them (every MUFU NaN is 0x7FFFFFFF)
@pytest.mark.parametrize("form, x, y", [
    ("ex2.approx.ftz.f32", 0xFF800000, 0x00000000), ("ex2.approx.ftz.f32", 0x7F800000, 0x7F800000),
    ("ex2.approx.ftz.f32", 0x80000001, 0x3F800000), ("ex2.approx.ftz.f32", 0xC3000000, 0x00000000),
    ("ex2.approx.f32", 0xC3000000, 0x00200000), ("ex2.approx.ftz.f32", 0x43000000, 0x7F800000),
    ("ex2.approx.ftz.f32", 0x7FC00000, 0x7FFFFFFF), ("ex2.approx.ftz.f32", 0x3F800000, 0x40000000),
    ("rcp.approx.ftz.f32", 0x80000000, 0xFF800000), ("rcp.approx.ftz.f32", 0x00000001, 0x7F800000),
    ("rcp.approx.f32", 0x00000001, 0x7F800000), ("rcp.approx.ftz.f32", 0xFF800000, 0x80000000),
    ("rsqrt.approx.ftz.f32", 0x80000000, 0xFF800000), ("rsqrt.approx.ftz.f32", 0xBF800000, 0x7FFFFFFF),
    ("rsqrt.approx.f32", 0x00000001, 0x64B504F2), ("sqrt.approx.ftz.f32", 0x80000001, 0x80000000),
    ("sqrt.approx.f32", 0x00000001, 0x1A3504F3), ("lg2.approx.ftz.f32", 0x00800000, 0xC2FBFFFF),
    ("lg2.approx.ftz.f32", 0x80000000, 0xFF800000), ("lg2.approx.f32", 0x00000001, 0xC3150000),
    ("lg2.approx.ftz.f32", 0x3F800000, 0x00000000), ("lg2.approx.ftz.f32", 0xFF800000, 0x7FFFFFFF)])
def test_special_inputs(form, x, y):
    got = mufu_batch(form.split(".")[0], np.array([x], np.uint32), ftz=".ftz" in form)[0]
    assert int(got) == y, f"{form}({x:#010x}) = {int(got):#010x}, the H200 gives {y:#010x}"


def test_lg2_of_two_to_the_minus_126_is_not_exact():
    """The fact behind the lg2 rule for negative sums: 2**-126 gives -125.99999 (one unit toward zero)."""
    assert np.float32(mufu_batch("lg2", np.array([0x00800000], np.uint32), ftz=True).view(np.float32)[0]) > -126


def test_unknown_form_is_refused_by_name():
    with pytest.raises(ValueError, match=r"sin\.approx\.f32: not an f32 MUFU form warpsim models"):
        mufu_batch("sin", np.zeros(1, np.uint32))


def test_missing_table_file_names_the_command(tmp_path):
    with pytest.raises(FileNotFoundError, match="python -m warpsim.isa.mufu32 --from PROBE_DIR"):
        mufu_tables(path=str(tmp_path / "none.npz"))


def test_build_tables_refuses_a_failed_hypothesis(tmp_path):
    np.savez(tmp_path / "rcp.npz", other=np.zeros(4, np.int64))
    with pytest.raises(ValueError, match="has no 'rcp_F0'"):
        build_tables(str(tmp_path))


def test_the_shipped_tables_say_where_they_come_from():
    with np.load(mufu32.DATA) as data:
        assert "H200" in str(data["source"]) and "mufu32_probe" in str(data["source"])
    assert os.path.getsize(mufu32.DATA) < 20e6


PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .f32 %f<12>; .reg .b64 %rd<3>; .reg .b32 %r<2>;
  ld.param.u64 %rd0, [p]; cvta.to.global.u64 %rd0, %rd0;
  mov.u32 %r0, %tid.x; mul.wide.u32 %rd1, %r0, 48; add.s64 %rd0, %rd0, %rd1;
  ld.global.f32 %f0, [%rd0];
  ex2.approx.ftz.f32 %f1, %f0;   ex2.approx.f32 %f2, %f0;
  rcp.approx.ftz.f32 %f3, %f0;   rcp.approx.f32 %f4, %f0;
  rsqrt.approx.ftz.f32 %f5, %f0; rsqrt.approx.f32 %f6, %f0;
  sqrt.approx.ftz.f32 %f7, %f0;  sqrt.approx.f32 %f8, %f0;
  lg2.approx.ftz.f32 %f9, %f0;   lg2.approx.f32 %f10, %f0;
  st.global.v4.f32 [%rd0], {%f1, %f2, %f3, %f4};
  st.global.v4.f32 [%rd0+16], {%f5, %f6, %f7, %f8};
  st.global.v2.f32 [%rd0+32], {%f9, %f10};
  ret;
}
"""


def test_the_ptx_interpreter_runs_them_through_the_same_models(sample):
    order = ["ex2.approx.ftz.f32", "ex2.approx.f32", "rcp.approx.ftz.f32", "rcp.approx.f32",
             "rsqrt.approx.ftz.f32", "rsqrt.approx.f32", "sqrt.approx.ftz.f32", "sqrt.approx.f32",
             "lg2.approx.ftz.f32", "lg2.approx.f32"]
    x = sample["inputs"][::16][:1024]
    buf = np.zeros((x.size, 12), np.uint32)
    buf[:, 0] = x
    out = warpsim.ptx.load(PTX).launch("k", block=(x.size, 1, 1), args={"p": buf}).buffers["p"]
    out = np.asarray(out).view(np.uint32).reshape(x.size, 12)
    for j, form in enumerate(order):
        np.testing.assert_array_equal(out[:, j], sample[form][::16][:1024], err_msg=form)


def test_tanh_has_no_ftz_form_in_ptx():
    from warpsim.errors import UnsupportedType
    text = PTX.replace("ex2.approx.ftz.f32 %f1, %f0;", "tanh.approx.ftz.f32 %f1, %f0;")
    with pytest.raises(UnsupportedType, match=r"tanh\.approx\.ftz\.f32: \.ftz is not a modifier of tanh\.approx\.f32"):
        warpsim.ptx.load(text)


def test_div_approx_gives_zero_for_divisors_above_2_to_the_126_and_full_does_not():
    """PTX: div.approx.f32 gives 0 for 2**126 < |b| < 2**128; div.full.f32 scales such divisors first."""
    from warpsim.isa.mufu32 import div_batch
    a, b = np.array([0x3F800000], np.uint32), np.array([0x7F000000], np.uint32)     # 1 / 2**127
    assert int(div_batch("approx", a, b)[0]) == 0
    assert int(div_batch("full", a, b)[0]) == 0x00400000                             # 2**-127, subnormal
    assert int(div_batch("full", a, b, ftz=True)[0]) == 0                            # flushed by FMUL.FTZ


def test_div_is_the_reciprocal_times_the_dividend():
    from warpsim.isa.mufu32 import div_batch
    rng = np.random.default_rng(3)
    b = (rng.integers(0x3F000000, 0x40800000, 4096)).astype(np.uint32)              # [0.5, 4)
    a = (rng.integers(0x3F000000, 0x40800000, 4096)).astype(np.uint32)
    r = mufu_batch("rcp", b, ftz=True)
    want = (a.view(np.float32) * r.view(np.float32)).view(np.uint32)                 # one IEEE rn product
    np.testing.assert_array_equal(div_batch("approx", a, b, ftz=True), want)
    np.testing.assert_array_equal(div_batch("full", a, b), want)


def _inputs():
    rng = np.random.default_rng(5)
    special = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x00000001, 0x807FFFFF, 0x00400000, 0x3F800000]
    ex2_subnormal = np.linspace(-149.9, -126.1, 200, dtype=np.float32).view(np.uint32)   # ex2: .ftz flushes these
    return np.concatenate([np.array(special, np.uint32), ex2_subnormal, rng.integers(0, 1 << 32, 2000, dtype=np.uint32),
                           rng.integers(0, 1 << 23, 500, dtype=np.uint32) | np.uint32(0x80000000) * (
                               rng.integers(0, 2, 500, dtype=np.uint32))])      # subnormals: .ftz or not


@pytest.mark.parametrize("op, ftz", list(MUFU32_OPS))
def test_every_batched_form_runs_its_own_scalar_model(op, ftz):
    """The batch kernels pick a model by the form's index in MUFU32_OPS (not by a function argument: Numba's cache);
    each index must run that key's model, also where two forms differ only on subnormals."""
    fn, index = MUFU32_OPS[(op, ftz)]
    x, t = _inputs(), mufu_tables()[index]
    want = np.array([fn(v, t) for v in x], np.uint32)
    np.testing.assert_array_equal(mufu_batch(op, x, ftz=ftz), want)


@pytest.mark.parametrize("kind, ftz", list(mufu32.DIV32_OPS))
def test_every_batched_div_form_runs_its_own_scalar_model(kind, ftz):
    fn, a = mufu32.DIV32_OPS[(kind, ftz)], _inputs()
    b = np.roll(a, 7)
    t = mufu_tables(("rcp",))[mufu32.RCP]
    want = np.array([fn(x, y, t) for x, y in zip(a, b)], np.uint32)
    np.testing.assert_array_equal(mufu32.div_batch(kind, a, b, ftz=ftz), want)
