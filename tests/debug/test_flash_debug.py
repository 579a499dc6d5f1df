"""The debugger on the CuTe C++ flash-attention forward (issue 15, acceptance 4), through a real pseudo-terminal.

Break on the C++ line of the second quad shuffle of the online softmax's row max, step over it, and the four
lanes of quad 0 (thread rows of Q row 0) hold the same f32 bits: the row's maximum of S = Q K^T, which is
checked against numpy (float64 from the same f16 inputs; the kernel's S is an f32 mma accumulation, so the
check is to 1e-5 relative), and the next quad (row 1) holds that row's maximum.
"""

import os
import re
import sys

import numpy as np
import pytest

from debug_helpers import ROOT
from test_debug_repl import Terminal
from test_ptx_debug import environment, line_of, need_nvcc

sys.path.insert(0, str(ROOT / "examples"))
import flash_fwd_check as flash  # noqa: E402

FLASH_CU = ROOT / "examples" / "cute_cpp" / "flash_fwd.cu"
SHUFFLE_1 = "m_new = fmaxf(m_new, __shfl_xor_sync(0xffffffffu, m_new, 1));"


@need_nvcc
def test_row_max_of_the_flash_kernel_through_a_pseudo_terminal(tmp_path):
    q, k, v = flash.random_inputs(1, 1, 64, 64, "f16", seed=5)
    for name, a in (("q", q), ("k", k), ("v", v)):
        np.save(tmp_path / f"{name}.npy", a)
    scale_log2, softmax_scale = flash.scales(64)
    line = line_of(FLASH_CU, SHUFFLE_1)
    args = ["--kernel", "flash_fwd_f16_d64", "--grid", "1", "--block", "128", "--smem", str(flash.smem_bytes(64)),
            "--arch", "sm_90", *[f"--arg={n}={tmp_path / (n + '.npy')}" for n in "qkv"],
            "--arg=o=zeros:f16:1x1x64x64", "--arg=lse=zeros:f32:1x1x64", "--arg=N=64",
            f"--arg=scale_log2={float(scale_log2)!r}", f"--arg=softmax_scale={float(softmax_scale)!r}"]
    term = Terminal([sys.executable, "-m", "warpsim", "debug", str(FLASH_CU), *args], environment(tmp_path))
    try:
        banner = term.read_prompt(timeout=600)
        assert "kernel flash_fwd_f16_d64" in banner
        assert f"Breakpoint 1: line flash_fwd.cu:{line}" in term.command(f"break flash_fwd.cu:{line}")
        os.write(term.master, b"cont\n")
        stop = term.read_prompt(timeout=900).split("\n", 1)[1]
        assert f"Breakpoint 1, line flash_fwd.cu:{line}: w0" in stop, stop
        written = None
        for _ in range(12):                          # over the line's shuffle, to its max.f32
            out = term.command("stepi")
            found = re.search(r"executed #\d+ w0 lanes [0-9,-]+: max\.f32 (%f\d+),", out)
            if found:
                written = found.group(1)
                break
        assert written, out
        regs = term.command(f"regs {written} lanes 0-7 hex")
        cells = {int(n): int(c.lstrip("*"), 16) for n, c in re.findall(r"^ +(\d+) (\*?0x[0-9a-f]+)", regs, re.M)}
        assert sorted(cells) == list(range(8)), regs
        quad0, quad1 = [cells[i] for i in range(4)], [cells[i] for i in range(4, 8)]
        assert len(set(quad0)) == 1 and len(set(quad1)) == 1, regs   # each quad agrees bit for bit
        s = flash.to_float(q, "f16")[0, 0] @ flash.to_float(k, "f16")[0, 0].T     # float64 S
        got = np.array([quad0[0], quad1[0]], np.uint32).view(np.float32).astype(np.float64)
        np.testing.assert_allclose(got, s[:2].max(axis=1), rtol=1e-5)
        assert term.command("frobnicate").startswith("error: unknown command")
    finally:
        status = term.close()
    assert status == 0
