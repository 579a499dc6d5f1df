"""``hwcheck fuzz --float`` offline: float programs are repeatable, load in warpsim and assemble, their candidate
pairs are what they say, a short campaign runs end to end with the simulator standing in for the GPU, and ptxas
really fuses unmodified mul + add pairs of most of them (ptxas + nvdisasm, no GPU)."""

import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from hwcheck.cli.main import main
from hwcheck.campaigns.ptx_fuzz import IN_WORDS, KERNEL, fuzz, program
from hwcheck.campaigns.ptx_fuzz_float import F32, H2, OUT_WORDS, sass_fusions
from hwcheck.runs.ptx_run import SimulatorAsGpu
from hwcheck.device.sass import find_tool
from warpsim import ptx

IN_CI = os.environ.get("CI") == "true"
SEEDS = range(20)


def _need(*tools):
    missing = [t for t in tools if find_tool(t) is None]
    if missing:
        if IN_CI:
            pytest.fail(f"{', '.join(missing)} not found (required in CI)")
        pytest.skip(f"{', '.join(missing)} not found (CUDA toolkit, or pip install nvidia-cuda-nvdisasm)")


def _float(seed):
    return program(seed, kind="float")


def test_float_programs_are_repeatable_and_varied():
    texts = [_float(s).text for s in range(40)]
    assert _float(7).text == texts[7] and len(set(texts)) == 40 and _float(7).text != program(7).text
    joined = "\n".join(texts)
    for op in ("mul.f32 ", "add.f32 ", "sub.f32 ", "mul.f16x2 ", "add.f16x2 ", "sub.f16x2 ", "fma.rn.f32 ",
               "fma.rn.f16x2 ", "mul.rn.", "add.rn.", "neg.f32 ", "abs.f32 ", "neg.f16x2 ", ".ftz.", ".sat.",
               "0f3FC00000", "@%p", "@!%p", "setp.", "selp.f32", "cvt.rn.f16x2.f32", "$L_loop", "$L_else",
               "bra $L_store", "0x7f800000", "0x7fffffff"):
        assert op in joined, op
    assert re.search(r"@!?%p\d (add|sub)\.(\w+\.)*f(32|16x2) ", joined)        # a predicated add
    for s in range(40):
        p = _float(s)
        assert p.kind == "float" and p.block in (32, 64)
        assert f".entry {KERNEL}(.param .u64 inp, .param .u64 out)" in p.text
        stores = re.findall(r"st\.global\.(?:f32|b32) \[%a1\+(\d+)\], %([fh])(\d+);", p.text)
        assert OUT_WORDS == F32 + H2 and sorted(int(o) for o, _, _ in stores) == [4 * i for i in range(OUT_WORDS)]


def test_candidate_pairs_are_an_unmodified_mul_and_an_add_reading_it():
    shapes = {"x*y+z": 0, "z-x*y": 0, "shared": 0}
    for s in range(40):
        p = _float(s)
        lines = p.text.splitlines()
        assert p.pairs, f"seed {s} has no candidate pair"
        for mul, add in p.pairs:
            m = re.match(r"\s*mul(\.ftz)?\.(f32|f16x2) (%\w+), ", lines[mul - 1])
            a = re.match(r"\s*(@!?%p\d )?(add|sub)(\.ftz)?(\.sat)?\.(f32|f16x2) %\w+, (%?\w+), (%?\w+);",
                         lines[add - 1])
            assert m and a and m[2] == a[5] and m[3] in (a[6], a[7]), (s, lines[mul - 1], lines[add - 1])
            between = lines[mul:add - 1]
            assert not any(x.endswith(":") or re.match(rf"\s*(@\S+ )?\S+ {m[3]}[,|]", x) for x in between)
            shapes["x*y+z"] += a[2] == "add" and a[6] == m[3]
            shapes["z-x*y"] += a[2] == "sub" and a[7] == m[3]
        muls = [mul for mul, _ in p.pairs]
        shapes["shared"] += len(muls) != len(set(muls))
    assert all(shapes.values()), shapes


@pytest.mark.parametrize("seed", SEEDS)
def test_float_programs_load_and_run_in_warpsim(seed):
    """Parse and decode (``ptxas="none"``: contraction, which may refuse a program, is tested by the campaign)."""
    p = _float(seed)
    n = p.block
    rng = np.random.default_rng(seed)
    args = {"inp": rng.integers(0, 1 << 32, n * IN_WORDS, dtype=np.uint64).astype(np.uint32),
            "out": np.zeros(n * OUT_WORDS, np.uint32)}
    out = ptx.load(p.text, ptxas="none").launch(KERNEL, block=n, args=args, quiet=True).buffers["out"]
    assert out.reshape(n, OUT_WORDS).any(axis=0).sum() >= OUT_WORDS // 2


def test_inputs_reach_the_specials():
    """Over a few programs the loaded inputs hold NaN, +-inf, +-0 and subnormals, in f32 and in f16 halves."""
    seen = set()
    for seed in range(12):
        p = _float(seed)
        n = p.block
        head, tail = p.text.split("  mov.u32 %t2, 0;\n")[0], p.text.split("$L_store:")[1]
        text = f"{head}$L_store:{tail}"                  # no body: every register as the program loaded it
        rng = np.random.default_rng(seed)
        args = {"inp": rng.integers(0, 1 << 32, n * IN_WORDS, dtype=np.uint64).astype(np.uint32),
                "out": np.zeros(n * OUT_WORDS, np.uint32)}
        out = ptx.load(text, ptxas="none").launch(KERNEL, block=n, args=args, quiet=True).buffers["out"]
        out = out.reshape(n, OUT_WORDS)
        f = out[:, :F32].view(np.float32).ravel()
        h = out[:, F32:].view(np.float16).ravel()
        for name, v in (("f32", f), ("f16", h)):
            tiny = np.finfo(v.dtype).tiny
            seen |= {(name, "nan")} if np.isnan(v).any() else set()
            seen |= {(name, "inf")} if np.isinf(v).any() else set()
            seen |= {(name, "zero")} if (v == 0).any() else set()
            seen |= {(name, "subnormal")} if ((v != 0) & (np.abs(v) < tiny)).any() else set()
    assert seen == {(t, k) for t in ("f32", "f16") for k in ("nan", "inf", "zero", "subnormal")}, seen


@pytest.mark.parametrize("seed", SEEDS)
def test_float_programs_assemble(seed, tmp_path):
    if shutil.which("ptxas") is None:
        if IN_CI:
            pytest.fail("ptxas not found (required in CI)")
        pytest.skip("ptxas (CUDA toolkit) not found on PATH")
    from hwcheck.device.instrument import instrument
    p = _float(seed)
    for name, text in (("k", p.text), ("ins", instrument(p.text, KERNEL, capacity=256).text)):
        path = tmp_path / f"{name}.ptx"
        path.write_text(text)
        done = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", os.devnull], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[:2000]


def test_ptxas_fuses_unmodified_pairs_in_most_programs(capsys):
    """The point of the mode: ptxas makes FFMA/HFMA2 on the lines of unmodified adds of most programs."""
    _need("ptxas", "nvdisasm")
    found = [sass_fusions(_float(s).text) for s in SEEDS]
    fused = sum(f["adds"] > 0 for f in found)
    with capsys.disabled():
        print(f"\nptxas fused unmodified mul+add pairs in {fused} of {len(found)} float programs "
              f"({sum(f['ffma'] > 0 for f in found)} with FFMA, {sum(f['hfma2'] > 0 for f in found)} with HFMA2; "
              f"{sum(f['adds'] for f in found)} add lines)")
    assert fused >= len(found) // 2


def test_sass_fusions_counts_only_adds_fused_with_a_mul(tmp_path):
    _need("ptxas", "nvdisasm")
    head = _float(0).text.split("$L_store:")[0]
    head = head[:head.index("  mov.u32 %t2, 0;")]
    tail = "$L_store:" + _float(0).text.split("$L_store:")[1]

    def kernel(body):
        return head + "".join(f"  {line}\n" for line in body) + tail
    # %f9 and %f10 are immediates: keep them out so that nothing folds
    assert sass_fusions(kernel(["mul.f32 %f1, %f2, %f3;", "add.f32 %f1, %f1, %f4;"]))["ffma"] == 1
    assert sass_fusions(kernel(["mul.rn.f32 %f1, %f2, %f3;", "add.f32 %f1, %f1, %f4;"]))["adds"] == 0
    assert sass_fusions(kernel(["fma.rn.f32 %f1, %f2, %f3, %f4;"]))["adds"] == 0
    assert sass_fusions(kernel(["sub.f16x2 %h1, %h1, %h2;"]))["adds"] == 0                   # HFMA2 x, 1, 1, -y
    assert sass_fusions(kernel(["mul.f16x2 %h1, %h2, %h3;", "add.f16x2 %h1, %h1, %h0;"]))["hfma2"] == 1


def _stand_in(monkeypatch, gpu_ptx):
    import hwcheck.device.gpu
    import hwcheck.runs.ptx_run
    from fake_gpu import INFO

    class Opened:
        info = INFO
    monkeypatch.setattr(hwcheck.device.gpu.Gpu, "open", classmethod(lambda cls, device=0: Opened()))
    monkeypatch.setattr(hwcheck.runs.ptx_run, "CupyPtx", lambda gpu, ptxas="auto": gpu_ptx)


class _Unfused(SimulatorAsGpu):
    """The simulator without contraction standing in for the GPU (what ``--ptxas none`` gives the simulator side)."""

    def load(self, text):
        return ptx.load(text, filename="<gpu>", ptxas="none")


def test_a_short_float_campaign_runs_end_to_end(monkeypatch, capsys, tmp_path):
    """The whole command on 20 programs, both sides without contraction: every register compared, nothing differs,
    and the report counts each program's candidate pairs."""
    _stand_in(monkeypatch, _Unfused())
    report = tmp_path / "fuzz.json"
    assert main(["fuzz", "--float", "--count", "20", "--seed", "500", "--ptxas", "none", "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert "fuzz: 20 float programs, 0 mismatched, 0 errors" in out
    assert "contraction decided by none (20 of 20 programs)" in out
    data = json.loads(report.read_text())
    assert data["status"] == "pass" and data["kind"] == "ptx-fuzz-float" and data["settings"]["programs"] == "float"
    assert data["contraction"] == [{"decided_by": "none", "programs": 20}]
    assert [p["seed"] for p in data["programs"]] == list(range(500, 520))
    for p in data["programs"]:
        assert p["candidate_pairs"] == len(program(p["seed"], kind="float").pairs) > 0
        assert p["fused_pairs"] == 0 and p["result"] == "pass"
    t = data["totals"]
    assert t["programs_with_candidates"] == 20 and t["candidate_pairs"] == sum(p["candidate_pairs"]
                                                                                for p in data["programs"])
    assert t["trace_records_compared"] > 20 * 32 * 10 and t["global_elements_compared"] >= 20 * 32 * OUT_WORDS


def test_with_contraction_each_program_agrees_or_is_refused(tmp_path):
    """The simulator (and its stand-in GPU) deciding contraction with ptxas: no program differs; a program whose
    fusions the simulator cannot resolve is an error naming ptxas (``warpsim.ptx.ContractionError``); the
    campaign names the ptxas release that decided."""
    _need("ptxas", "nvdisasm")
    from warpsim.toolchain import find_ptxas, ptxas_version
    report = tmp_path / "fuzz.json"
    summary, code = fuzz(SimulatorAsGpu(), 8, seed=0, report=str(report), log=open(os.devnull, "w"), kind="float")
    assert summary.mismatched_programs == 0 and code in (0, 3)
    assert all("ptxas" in what for what in summary.errors_by_message)
    data = json.loads(report.read_text())
    decided = [p for p in data["programs"] if p["fused_pairs"] is not None]
    if decided:
        assert data["contraction"] == [{"decided_by": f"ptxas {ptxas_version(find_ptxas())}",
                                        "programs": len(decided)}]
    assert len(decided) + summary.errors == 8
    tools = data["settings"]["contraction_tools"]      # which tools decided, for telling two hosts' reports apart
    assert tools["ptxas"].endswith(f"({ptxas_version(find_ptxas())})") and tools["nvdisasm"].endswith(")")
    assert data["host"]["cpu"] and data["host"]["llvm_cpu"]


def test_tie_shaped_inputs_multiply_to_exact_ties():
    """The "tie" shapes: the exact product of two f32 (1 + m 2^-12), or of f16 (1 + m 2^-5) and (1 + m 2^-6), m odd,
    lies exactly half an ulp past a representable value, so one rounding and two differ there."""
    joined = "\n".join(_float(s).text for s in range(40))
    assert "and.b32 %t0, %t0, 0x80007800;" in joined and "0x80e080e0" in joined and "0x80708070" in joined
    for kind, dtype, (ea, eb), top in (("f32", np.float32, (12, 12), 16), ("f16", np.float16, (5, 6), 8)):
        for m1 in range(1, top, 2):
            for m2 in range(1, top, 2):
                exact = (1 + m1 / 2 ** ea) * (1 + m2 / 2 ** eb)             # exact in float64
                lo = dtype(exact)
                lo = lo if float(lo) <= exact else np.nextafter(lo, dtype(0))
                hi = np.nextafter(lo, dtype(np.inf))
                assert exact - float(lo) == float(hi) - exact, (kind, m1, m2)
