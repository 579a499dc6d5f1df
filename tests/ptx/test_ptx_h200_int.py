"""Integer instructions where the H200 departs from a plain reading of the PTX ISA text, as the interpreter
models them (the evidence: ``hwcheck campaign --instr int`` on the H200, conformance/h200/h200-int-forms-run1.json).
"""

import numpy as np
import pytest

import warpsim.ptx

HEAD = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<8>; .reg .b64 %rd<8>;
  ld.param.u64 %rd0, [p]; cvta.to.global.u64 %rd0, %rd0;
"""


def run(body, words):
    mod = warpsim.ptx.load(HEAD + body + "  ret;\n}\n")
    out = mod.launch("k", block=(1, 1, 1), args={"p": np.zeros(words, np.uint32)}).buffers["p"]
    return [int(v) for v in np.asarray(out).view(np.uint32)]


@pytest.mark.parametrize("op", ["rem.u32", "rem.s32", "div.u32", "div.s32"])
def test_32_bit_division_by_zero_gives_all_ones(op):
    assert run(f"  mov.u32 %r1, 7; mov.u32 %r2, 0; {op} %r3, %r1, %r2; st.global.u32 [%rd0], %r3;\n", 1) == [
        0xFFFFFFFF]


@pytest.mark.parametrize("op", ["rem.u64", "rem.s64"])
def test_64_bit_remainder_by_zero_gives_all_ones(op):
    body = f"  mov.u64 %rd1, 7; mov.u64 %rd2, 0; {op} %rd3, %rd1, %rd2; st.global.u64 [%rd0], %rd3;\n"
    assert run(body, 2) == [0xFFFFFFFF, 0xFFFFFFFF]


@pytest.mark.parametrize("pos, length, want", [(0, 256, 1), (256, 1, 0), (0, 0x80000000, 1), (0, 1, 1),
                                               (63, 1, 0)])
def test_bfe_u64_takes_position_and_length_whole(pos, length, want):
    body = (f"  mov.u64 %rd1, 1; mov.u32 %r1, {pos}; mov.u32 %r2, {length};\n"
            "  bfe.u64 %rd3, %rd1, %r1, %r2; st.global.u64 [%rd0], %rd3;\n")
    assert run(body, 2) == [want, 0]


def test_bfe_u32_still_takes_them_mod_256():
    body = ("  mov.u32 %r0, 1; mov.u32 %r1, 0; mov.u32 %r2, 257;\n"
            "  bfe.u32 %r3, %r0, %r1, %r2; st.global.u32 [%rd0], %r3;\n")
    assert run(body, 1) == [1]


@pytest.mark.parametrize("pos, length, want", [(0, 256, 0), (256, 1, 1)])
def test_bfi_b64_takes_position_and_length_whole(pos, length, want):
    body = (f"  mov.u64 %rd1, 0; mov.u64 %rd2, 1; mov.u32 %r1, {pos}; mov.u32 %r2, {length};\n"
            "  bfi.b64 %rd3, %rd1, %rd2, %r1, %r2; st.global.u64 [%rd0], %rd3;\n")
    assert run(body, 2) == [want, 0]
