"""``warpsim draw`` through the command line (subprocess), checked against the layouts and the bank model."""

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import warpsim.cute as cute
from warpsim.draw import mma_tv_grid

ROOT = Path(__file__).resolve().parent.parent.parent
NS = "{http://www.w3.org/2000/svg}"


def run(*args):
    return subprocess.run([sys.executable, "-m", "warpsim", "draw", *args], capture_output=True, text=True, cwd=ROOT)


def cells(svg_text):
    root = ET.fromstring(svg_text)
    return [g for g in root.iter(f"{NS}g") if g.get("class") == "cell"]


def test_draw_mma_operand_to_file(tmp_path):
    out = tmp_path / "a.svg"
    proc = run("mma", "--atom", "SM80_16x8x16_F32F16F16F32_TN", "--thr", "4,1,1", "--tile", "64,16,16",
               "--operand", "A", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    grid = mma_tv_grid(cute.make_tiled_mma(cute.SM80_16x8x16_F32F16F16F32_TN(), cute.make_layout((4, 1, 1)),
                                           (64, 16, 16)), "A")
    got = cells(out.read_text())
    assert len(got) == 64 * 16
    for g in got:
        m, k = int(g.get("data-m")), int(g.get("data-k"))
        t, v = grid.owners(m, k)[0]
        assert [x.text for x in g.findall(f"{NS}text")] == [f"T{t}", f"V{v}"]


def test_draw_mma_of_the_config_to_stdout():
    proc = run("mma", "--config", "seed", "--highlight", "33")
    assert proc.returncode == 0, proc.stderr
    got = cells(proc.stdout)
    assert len(got) == 64 * 16 + 16 * 16 + 64 * 16
    assert {g.get("data-panel") for g in got} == {"A", "B", "C"}


def test_draw_copy_of_a_config_file(tmp_path):
    proc = run("copy", "--config", "examples/explain_config.py", "--fragment", "B", "--side", "S")
    assert proc.returncode == 0, proc.stderr
    assert len(cells(proc.stdout)) == 32 * 16              # make_tiled_copy_B of a 32x32x16 tile: N x K


def test_draw_copy_png(tmp_path):
    pytest.importorskip("PIL", reason="Pillow is not installed (pip install 'warpsim[draw]')")
    png = tmp_path / "k.png"
    proc = run("copy", "--config", "seed", "--fragment", "K", "-o", str(png))
    assert proc.returncode == 0, proc.stderr
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_draw_banks_reports_the_seed_with_and_without_swizzle(tmp_path):
    out = tmp_path / "b.svg"
    proc = run("banks", "--config", "seed", "--fragment", "K", "--call", "2", "--phase", "3", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    # 4 warps x 16 ldmatrix.x4 (copy view (8,1),4,4) = 64 accesses of 4 phases
    assert "K: SM75_U32x4_LDSM_N" in proc.stdout and "64 accesses, 256 phases, 256 wavefronts, 0 extra" in proc.stdout
    assert "phase 3 (lanes 24-31): conflict-free" in proc.stdout
    marked = [g for g in cells(out.read_text()) if g.get("data-lanes")]
    assert sorted({int(g.get("data-lanes")) for g in marked}) == list(range(24, 32)) and len(marked) == 8 * 8
    proc = run("banks", "--config", "seed", "--fragment", "K", "--no-swizzle", "--rows", "0:16", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    # every phase: 8 rows 128 bytes apart in the same 4 banks: 8-way, 7 extra; 256 phases
    assert "256 phases, 2048 wavefronts, 1792 extra (worst 8-way)" in proc.stdout
    got = cells(out.read_text())
    assert len(got) == 16 * 64 and sum(g.get("data-conflict") == "1" for g in got) == 8 * 8


@pytest.mark.parametrize("args,message", [
    (("banks", "--fragment", "X"), "no fragment 'X'"),
    (("banks", "--call", "99"), "--call 99"),
    (("banks", "--phase", "4"), "--phase 4"),
    (("mma", "--atom", "SM80_16x8x16_F32F16F16F32_TN", "--thr", "4,1"), "--thr: expected 3 values"),
    (("copy", "-o", "x.pdf"), ".svg or .png"),
    (("copy", "--config", "missing.py"), "does not exist"),
])
def test_draw_errors_are_one_line(args, message):
    proc = run(*args)
    assert proc.returncode == 2 and proc.stderr.startswith("warpsim draw: error:") and message in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1


def test_draw_regs_of_a_program_at_a_source_line(tmp_path):
    from warpsim.debug.session import Session
    from warpsim.debug.views import register_names
    from warpsim.program.lower import KERNEL
    from warpsim.program.program import load_program
    from warpsim.program.run import prepare
    example = ROOT / "examples" / "gemm_smem.py"
    line = next(k for k, text in enumerate(example.read_text().splitlines(), 1) if text.strip().startswith("gemm("))
    out = tmp_path / "tSrK.svg"
    proc = run("regs", str(example), "--param", "dtype=bf16", "--line", str(line), "--warp", "0", "--regs", "tSrK",
               "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    session = Session.program(load_program(str(example)), {"dtype": "bf16"})
    session.run_to(line)
    regs = [int(n[2:]) for n in register_names(session, ["tSrK"], 0)]   # warp 0 reaches the line first
    want = session.traced.words(0, regs)
    got = {(int(g.get("data-lane")), int(g.get("data-reg"))): int(g.get("data-bits"), 16) for g in cells(out.read_text())}
    assert len(got) == 32 * len(regs) and any(want.reshape(-1))
    assert all(got[lane, k] == want[lane, k] for lane in range(32) for k in range(len(regs)))
    assert proc.stdout.startswith(f"warp 0, CTA (0, 0, 0), hex, after #{session.position - 1} ldmatrix")
    bad = run("regs", str(example), "--line", "3")
    assert bad.returncode == 2 and "--line 3: no instruction of warpsim_program comes from line 3" in bad.stderr
    bad = run("regs", str(example), "--at", "9999")
    trace, machine, _, _ = prepare(load_program(str(example)))           # the lowered kernel's own length
    ran = trace.kernel.launch(KERNEL, block=trace.lowered.threads, smem=trace.lowered.smem_bytes, quiet=True,
                              args={"gmem": machine.gmem, "table": trace.lowered.table})
    steps = ran.stats["warp_instructions"]
    assert 0 < steps < 9999
    assert bad.returncode == 2 and f"--at 9999: the program's kernel ends after {steps} warp instructions, got 9999" \
        in bad.stderr
