"""examples/flash_fwd.py, the recipe's FlashAttention-2 forward as a warpsim program (issue 15): O and LSE
of the simulated CTA against float64 attention on the same inputs, within the recipe's tolerances (the
bit-exact proof is ``hwcheck run`` on an H200), and the recipe's instructions in its stream."""

import os
from collections import Counter

import numpy as np
import pytest

from warpsim.program import load_program, run_program

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAM = load_program(os.path.join(ROOT, "examples", "flash_fwd.py"))
O_TOLERANCE = {"f16": 4e-3, "bf16": 2e-2}
LSE_TOLERANCE = 1e-3
CASES = [("f16", 64, "no", 128), ("bf16", 128, "yes", 100), ("f16", 128, "yes", 128), ("bf16", 64, "no", 100),
         ("f16", 64, "no", 512)]


def values(bits, dtype):
    """Raw bits of a buffer as float64."""
    bits = np.asarray(bits)
    if dtype == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    if dtype == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def attention(q, k, v, causal):
    """float64 attention of (n, d) arrays, softmax scale 1/sqrt(d): O (n, d) and LSE (n,), natural log."""
    n, d = q.shape
    s = q @ k.T / np.sqrt(d)
    if causal:
        s = np.where(np.arange(n)[None, :] > np.arange(n)[:, None], -np.inf, s)
    m = s.max(axis=1, keepdims=True)
    p = np.exp(s - m)
    l = p.sum(axis=1, keepdims=True)
    return p @ v / l, (m + np.log(l))[:, 0]


@pytest.mark.parametrize("dtype, d, causal, n", CASES, ids=["-".join(map(str, c)) for c in CASES])
def test_o_and_lse_match_float64_attention(dtype, d, causal, n):
    params = {"dtype": dtype, "d": d, "causal": causal, "n": n}
    r = run_program(PROGRAM, params, seed=11)
    q, k, v = (values(r.inputs[name], dtype) for name in "qkv")
    want_o, want_lse = attention(q, k, v, causal == "yes")
    row0 = (n + 63) // 64 * 64 - 64                   # the program is the CTA of the last 64-row block
    o, lse = values(r.outputs["o"], dtype), values(r.outputs["lse"], "f32")
    o_err = np.abs(o[row0:] - want_o[row0:]).max()
    lse_err = np.abs(lse[row0:] - want_lse[row0:]).max()
    assert o_err < O_TOLERANCE[dtype], f"{params}: max |O - O_float64| = {o_err:.3g}"
    assert lse_err < LSE_TOLERANCE, f"{params}: max |LSE - LSE_float64| = {lse_err:.3g}"
    assert not np.asarray(r.outputs["o"])[:row0].any() and not np.asarray(r.outputs["lse"])[:row0].any(), \
        "rows of other CTAs were written"


def test_the_stream_holds_the_recipes_instructions():
    """d=64, causal, n=100: one Q block (rows 64..99) over K/V tiles 0 and 1, the second masked."""
    t = PROGRAM.trace({"dtype": "bf16", "d": 64, "causal": "yes", "n": 100})
    counts = Counter(i.ptx for i in t.stream)
    tiles, warps, rows = 2, 4, 2                      # each thread holds rows g and g + 8 of its warp's 16
    elements = 32                                     # S elements per thread per tile: 16 x 64 / 32 lanes
    assert counts["mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"] == warps * tiles * (32 + 32)
    # p = ex2(fma(s, scale_log2, -m*scale_log2)) per element, alpha = ex2(...) per row; LSE's lg2 per row
    assert counts["ex2.approx.ftz.f32"] == warps * tiles * (elements + rows)
    assert counts["fma.rn.f32"] == warps * tiles * elements
    assert counts["lg2.approx.ftz.f32"] == warps * rows
    # the row max (per tile) and the final row sum: shfl.sync.bfly 2 then 1 per row
    assert counts["shfl.sync.bfly.b32"] == warps * (tiles + 1) * rows * 2
    assert counts["cvt.rn.bf16x2.f32"] == warps * (tiles * elements // 2 + 32 // 2)
    assert counts["ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"] > 0
    assert counts["div.rn.f32"] == warps * rows
    # the mask: one slct per S element of the masked tile (column >= 100 or column > row), none on tile 0
    assert counts["slct.b32.s32"] == warps * (elements + rows * (tiles + 2))   # + m_use per tile, inv and LSE


@pytest.mark.parametrize("dtype, d, causal, n", [("f16", 64, "yes", 100), ("bf16", 128, "no", 128)])
def test_o_and_lse_are_the_references_bits(dtype, d, causal, n):
    """The program's reference applies the recipe's arithmetic to whole arrays with the ISA's batched models
    (no fragments, layouts or instructions): every bit of O and LSE agrees."""
    params = {"dtype": dtype, "d": d, "causal": causal, "n": n}
    r = run_program(PROGRAM, params, seed=4)
    want = PROGRAM.reference(r.params, r.inputs, r.arch)
    for name in ("o", "lse"):
        got = np.asarray(r.outputs[name])
        bad = np.argwhere(got != want[name].astype(got.dtype))
        assert not bad.size, f"{params} {name}{list(bad[0])}: {int(got[tuple(bad[0])]):#x} != " \
                             f"{int(want[name][tuple(bad[0])]):#x} ({len(bad)} differ)"
