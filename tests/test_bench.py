"""Every benchmark's quick mode runs, and the figures it prints agree with each other (no timing asserts).

A benchmark that is never run rots; these run each ``bench/*.py --quick`` in a new process (as a
user would, from the repository root) and read its output back.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NUMBER = r"(-?[\d,]*\.?\d+)"


def run_quick(script, *more):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, f"bench/{script}", "--quick", *more], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert re.match(r"host: .+, \d+ cpus, flags .+, python .+, numpy .+", lines[0]), lines[0]
    return out.stdout


def num(text):
    return float(text.replace(",", ""))


def test_bench_mma_quick():
    text = run_quick("bench_mma.py")
    rates = {}
    for name, rate, secs, count in re.findall(rf"  warpsim (\S+ sm\d\d): {NUMBER} mma/s \({NUMBER} s for (\d+)\)", text):
        assert int(count) == 2000 and num(rate) > 0
        rates[name] = num(rate)
    assert len(rates) == 6
    table = [num(r) for r in re.findall(r"^\| warpsim [^|]+ \| ([\d,]+) \|", text, re.M)]
    assert sorted(table) == sorted(rates.values())   # the table repeats the printed rates
    breakdowns = re.findall(r"per mma \((sm\d\d)\): kernel (\S+) us; instrumented run (\S+) us = (.*) us", text)
    assert [b[0] for b in breakdowns] == ["sm90", "sm80"]
    for _arch, kernel, whole, stages in breakdowns:
        parts = [num(p.rsplit(" ", 1)[1]) for p in stages.split("; ")]
        assert len(parts) == 7 and min(parts) >= 0 and float(kernel) > 0
        assert abs(sum(parts) - float(whole)) <= 0.005 * len(parts) + 0.005   # printed to 0.01 us


def test_bench_cta_quick():
    text = run_quick("bench_cta.py")
    best = {key: float(v) for key, v in re.findall(r"^(trace|encode|execute)(?: \([^)]*\))?:\s+(\S+) ms", text, re.M)}
    assert set(best) == {"trace", "encode", "execute"}
    total = float(re.search(r"trace \+ encode \+ execute \(best\):\s+(\S+) ms", text)[1])
    assert abs(total - sum(best.values())) <= 0.002
    bounds = [float(v) for v in re.findall(r"^lower bound, \d+ (?:mma batched, 1 thread|ldmatrix batched|ld/st as numpy gather):\s+(\S+) ms", text, re.M)]
    assert len(bounds) == 3
    lower = float(re.search(r"lower bound total: (\S+) ms \(1 thread\)", text)[1])
    assert abs(lower - sum(bounds)) <= 0.003
    assert re.search(r"cold start .*: best \d+\.\d\d s", text)


def test_bench_debug_quick():
    text = run_quick("bench_debug.py")
    blocks = re.findall(r"3 debugger steps.*\n.*Session.step\(\)\s+mean\s+(\S+) ms.*\n.*text\(\)\s+mean\s+(\S+) ms.*\n"
                        r".*step \+ view\s+mean\s+(\S+) ms", text)
    assert len(blocks) == 2
    for step, view, both in blocks:
        assert abs(float(step) + float(view) - float(both)) <= 0.002
    assert re.search(r"target: 50 ms per step including the view: (under|OVER)", text)


@pytest.mark.slow            # starts its own Ray cluster (16 s on CI's two cores); tests/hwcheck/test_hw_ray.py covers Ray
def test_bench_ray_quick():
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'warpsim[ray]')")
    text = run_quick("bench_ray.py")
    rates = {w: num(r) for w, r in re.findall(rf"Ray, (\d) workers? *: {NUMBER} instr/s", text)}
    assert set(rates) == {"1", "2"} and min(rates.values()) > 0
    ratio = num(re.search(rf"ratio 2 workers / 1 worker: {NUMBER}x", text)[1])
    # the ratio of the printed rates, which are whole numbers: each is off by up to 0.5 instr/s
    expected = rates["2"] / rates["1"]
    slack = 0.006 + expected * (0.5 / rates["1"] + 0.5 / rates["2"])
    assert abs(ratio - expected) <= slack, text
    assert re.search(rf"per-task overhead \(chunks of 32, 1 worker\): {NUMBER} ms per chunk", text)
    assert re.search(r"projection, 64 nodes x 64 cores .*\n.*\n.*\n  -> [\d,]+ instr/s: 10\^9 instructions in", text)


def test_bench_ptx_quick():
    text = run_quick("bench_ptx.py")
    rates = {name: num(rate) for name, rate in re.findall(rf"^  (ptx integer|ptx memory|stream executor)[^:]*: {NUMBER} warp instr/s",
                                                         text, re.M)}
    assert set(rates) == {"ptx integer", "ptx memory", "stream executor"} and min(rates.values()) > 0
    ratios = re.search(rf"ratio ptx / stream on the memory mix: {NUMBER}x; ptx integer / stream: {NUMBER}x", text)
    assert abs(num(ratios[1]) - rates["ptx memory"] / rates["stream executor"]) <= 0.006   # printed to 0.01
    assert abs(num(ratios[2]) - rates["ptx integer"] / rates["stream executor"]) <= 0.006
    fl = re.search(rf"^  ptx float [^:]*: {NUMBER} warp instr/s", text, re.M)
    assert fl and num(fl[1]) > 0, text
    ratio = re.search(rf"ratio ptx float / ptx integer: {NUMBER}x", text)
    assert ratio and abs(num(ratio[1]) - num(fl[1]) / rates["ptx integer"]) <= 0.006, text
    # the lower bounds ran (bench_ptx exits 1 when a straight loop's bits are not the kernel's) and are above the
    # interpreter: they pay the arithmetic alone
    for kind, ptx_rate in (("integer", rates["ptx integer"]), ("float", num(fl[1]))):
        lb = re.search(rf"^  lower bound, {kind} loop as straight code: {NUMBER} warp instr/s \(median {NUMBER}\); "
                       rf"ptx / lower bound {NUMBER}x$", text, re.M)
        assert lb and num(lb[1]) > ptx_rate and abs(num(lb[3]) - ptx_rate / num(lb[1])) <= 0.0006, text


def test_bench_ptx_debug_quick():
    from warpsim.toolchain import find_nvcc
    if find_nvcc() is None and os.environ.get("CI") != "true":
        pytest.skip("nvcc not found on PATH or under CUDA_HOME (the bench compiles examples/cute_cpp/gemm_smem.cu)")
    text = run_quick("bench_ptx_debug.py")
    means = {}
    for name in ("PTX debugger", "PTX debugger, %f0..%f63", "Python-program debugger"):
        block = text.split(f"\n{name}: 3 steps\n", 1)[1]
        step, view, both = (num(x) for x in re.findall(rf"mean +{NUMBER} ms", block)[:3])
        assert abs(step + view - both) <= 0.002, block
        means[name] = both
    for label, name in (("default view", "PTX debugger"), ("%f0..%f63 view", "PTX debugger, %f0..%f63")):
        ratio = num(re.search(rf"ratio PTX step \+ {re.escape(label)} / Python step \+ view \(means\): {NUMBER}x",
                              text)[1])
        assert abs(ratio - means[name] / means["Python-program debugger"]) <= 0.01 + 0.01 * ratio, text
    assert re.search(r"target: 50 ms per step including the view: (under|OVER)", text)


@pytest.mark.skipif(__import__("shutil").which("nvcc") is None and os.environ.get("CI") != "true",
                    reason="nvcc not found on PATH (bench_flash compiles examples/cute_cpp/flash_fwd.cu)")
def test_bench_flash_quick():
    text = run_quick("bench_flash.py", "--profile")
    one = re.search(rf"^one CTA \(64 rows x 128 keys\): +{NUMBER} ms", text, re.M)
    whole = re.search(rf"^B=1 H=2 N=128 forward \(4 CTAs\): +{NUMBER} s", text, re.M)
    base = re.search(rf"^baseline: numpy float64 attention of B=1 H=2: {NUMBER} ms; simulator / numpy: {NUMBER}x", text,
                     re.M)
    steps = re.search(rf"^warp instructions per CTA: {NUMBER}; {NUMBER} M per second", text, re.M)
    assert one and whole and base and steps, text
    assert num(steps[1]) > 1000 and num(one[1]) > 0
    assert abs(num(base[2]) - num(whole[1]) / (num(base[1]) / 1e3)) <= 0.5 + 0.01 * num(base[2])   # printed rounded
    cpu = re.search(rf"^CPU time of this process: one CTA {NUMBER} ms \(median {NUMBER}\); B=1 H=2 {NUMBER} s", text,
                    re.M)
    assert cpu and num(cpu[1]) > 0, text
    assert re.search(r"^GPU time of the B=1 H=2 N=512 launch: not for --quick", text, re.M), text
    rows = re.findall(rf"^  (\S+) +{NUMBER} +{NUMBER}% +{NUMBER} +{NUMBER}$", text, re.M)
    forms = {r[0] for r in rows}
    assert {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "ex2.approx.ftz.f32", "fma.rn.f32"} <= forms
    assert sum(int(num(r[1])) for r in rows) == num(steps[1])  # every warp instruction of the CTA, once
    assert abs(sum(num(r[2]) for r in rows) - 100) <= 0.01 * len(rows) + 0.01


def test_bench_jobs_quick():
    text = run_quick("bench_jobs.py", "--jobs", "2")
    rows = re.findall(rf"^jobs (\d+): +{NUMBER} s \(median {NUMBER}\), {NUMBER} warp instructions, {NUMBER} M/s, "
                      rf"{NUMBER}x jobs 1, O\+LSE sha1 ([0-9a-f]{{12}})$", text, re.M)
    assert [r[0] for r in rows] == ["1", "2"], text
    assert len({r[3] for r in rows}) == 1 and num(rows[0][3]) > 10000     # the same work ...
    assert len({r[6] for r in rows}) == 1 and "the same bits for every jobs" in text   # ... and the same bits
    assert float(rows[0][5]) == 1.0


def test_bench_triton_interp_quick():
    """warpsim against Triton's interpreter: both give right results on the five kernels (torch needed; not in CI)."""
    pytest.importorskip("triton", reason="the triton extra is not installed")
    pytest.importorskip("torch", reason="bench_triton_interp needs CPU torch (pip install torch==2.13.0)")
    text = run_quick("bench_triton_interp.py")
    rows = re.findall(rf"^  (.+?) +grid .+ warpsim +{NUMBER} ms +Triton's interpreter +{NUMBER} ms +{NUMBER}x(.*)$",
                      text, re.M)
    assert [r[0] for r in rows] == ["vector add", "softmax", "layer norm", "matmul f16", "attention fwd"], text
    assert all(r[4] == "" for r in rows), text                       # no WRONG RESULT


def test_bench_contraction_quick():
    import shutil
    if shutil.which("nvcc") is None:
        pytest.skip("bench_contraction compiles its kernel with nvcc")
    from warpsim.toolchain import find_tool
    if find_tool("ptxas") is None or find_tool("nvdisasm") is None:
        pytest.skip("bench_contraction needs ptxas and nvdisasm")
    text = run_quick("bench_contraction.py")
    pairs = int(re.search(r"^pairs fused: (\d+)$", text, re.M).group(1))
    assert pairs > 0
    assert re.search(r"tool processes started: 0$", text, re.M)
    for what in ("load none", "load cold", "load warm", "decide alone, cold"):
        assert re.search(rf"^{what}: best {NUMBER} s, median {NUMBER} s", text, re.M), what


def test_bench_pyfronts_quick():
    pytest.importorskip("triton", reason="Triton is not installed (pip install 'warpsim[triton]')")
    text = run_quick("bench_pyfronts.py")
    ratios = [num(r) for r in re.findall(rf"switch {NUMBER} ms, direct {NUMBER} ms, ratio {NUMBER}", text)
              for r in r[2:]]
    assert ratios and all(r > 0 for r in ratios)
    assert re.search(rf"^worst ratio {NUMBER}$", text, re.M)


def test_bench_sanitize_quick():
    from warpsim.toolchain import find_nvcc
    if find_nvcc() is None and os.environ.get("CI") != "true":
        pytest.skip("nvcc not found on PATH or under CUDA_HOME (the bench compiles its kernels)")
    text = run_quick("bench_sanitize.py")
    rows = re.findall(rf"^  (.+): (\d+) warp instructions; plain {NUMBER} ms, sanitized {NUMBER} ms, ratio {NUMBER}x",
                      text, re.M)
    assert len(rows) == 3, text
    ratios = []
    for _title, steps, plain, sanitized, ratio in rows:
        assert int(steps) > 0 and num(plain) > 0
        # the ratio of the unrounded times; the printed ones are rounded to 0.01 ms
        assert abs(num(ratio) - num(sanitized) / num(plain)) <= 0.01 + 0.01 * num(ratio), text
        ratios.append(num(ratio))
    worst = re.search(rf"^worst ratio: {NUMBER}x \(bound 3x: (within|OVER)\)", text, re.M)
    assert worst and abs(num(worst[1]) - max(ratios)) <= 0.005, text


def test_bench_compile_quick():
    text = run_quick("bench_compile.py")
    sides = re.findall(r"  (numba's typing \(baseline\)|warpsim's typing): (\S+) s, (\d+) specialisations of (\d+) "
                       r"functions", text)
    assert [s[0] for s in sides] == ["numba's typing (baseline)", "warpsim's typing"]
    (_, base_s, base_n, base_f), (_, ours_s, ours_n, ours_f) = sides
    assert base_f == ours_f and int(ours_n) == int(ours_f) < int(base_n)   # one per function, fewer than Numba's
    ratio = re.search(r"ratio warpsim / baseline: (\S+)x time, (\S+)x specialisations", text)
    assert abs(float(ratio.group(2)) - int(ours_n) / int(base_n)) < 0.006


def test_bench_hopper_quick():
    pytest.importorskip("triton", reason="bench_hopper simulates Triton's matmul (pip install triton)")
    text = run_quick("bench_hopper.py")
    best = re.search(rf"sm_90 \(wgmma: (\d+) warp instructions of (\d+)\): +{NUMBER} ms", text)
    base = re.search(rf"sm_80 \(mma\.sync: (\d+) of (\d+)\): +{NUMBER} ms", text)
    assert best and base and int(best[1]) > 0 and int(base[1]) > 0, text
    ratio = re.search(rf"ratio wgmma tile / mma\.sync tile \(best\): {NUMBER}x", text)
    assert ratio and abs(num(ratio[1]) - num(best[3]) / num(base[3])) <= 0.006 + 0.006 * num(ratio[1]), text
    assert re.search(r"target: < 50 ms warm for the wgmma tile: (under|OVER)", text)


def test_bench_numba_sim_quick():
    pytest.importorskip("numba.cuda", reason="bench_numba_sim runs Numba CUDA kernels (pip install numba-cuda)")
    text = run_quick("bench_numba_sim.py")
    rows = re.findall(rf"^  (\w+) +grid .+? warpsim +{NUMBER} ms +Numba's simulator +{NUMBER} ms +{NUMBER}x +"
                      r"same bits: (yes|no)$", text, re.M)
    assert [r[0] for r in rows] == ["saxpy", "block_sum", "matrix_add_2d", "softmax_rows"], text
    for name, ours, theirs, ratio, same in rows:
        # the times are printed to 0.01 ms: the ratio of the printed times may be off by that rounding
        slack = num(ratio) * (0.005 / num(ours) + 0.005 / num(theirs)) + 0.05
        assert num(ours) > 0 and abs(num(ratio) - num(theirs) / num(ours)) <= slack, text
    # the sums and the 2-D add are the same float32 additions in the same order on both sides
    assert dict((r[0], r[4]) for r in rows)["block_sum"] == "yes" and rows[2][4] == "yes", text
    assert re.search(rf"^slowest ratio: {NUMBER}x$", text, re.M), text
