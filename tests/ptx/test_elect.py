"""elect.sync: the lowest lane of the member mask is elected; every member learns its lane, the leader alone a
true predicate; a member that does not arrive is a divergence error."""

import numpy as np
import pytest

import warpsim.ptx
from warpsim.errors import SimulatorFault

TEXT = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 mask)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .pred %p<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u32 %r2, [mask];
  mov.u32 %r1, %laneid;
  shr.u32 %r3, %r2, %r1;
  and.b32 %r3, %r3, 1;
  setp.eq.u32 %p2, %r3, 0;
  mov.u32 %r5, 999;
  @%p2 bra DONE;
  elect.sync %r4|%p1, %r2;
  selp.u32 %r5, 1000, 0, %p1;
  add.u32 %r5, %r5, %r4;
DONE:
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r5;
  ret;
}
"""


def _run(mask):
    m = warpsim.ptx.load(TEXT, filename="k.ptx")
    return m.launch("k", block=32, args={"out": np.zeros(32, np.uint32), "mask": mask}).buffers["out"]


def test_the_lowest_member_is_elected():
    out = _run(0xFFFF0F00)
    want = [999] * 32
    for lane in range(32):
        if (0xFFFF0F00 >> lane) & 1:
            want[lane] = 8 + (1000 if lane == 8 else 0)
    assert list(out) == want


def test_a_member_that_cannot_arrive_is_named():
    text = TEXT.replace("  @%p2 bra DONE;\n", "  @%p2 bra DONE;\n  mov.u32 %r2, 0xFFFFFFFF;\n")
    m = warpsim.ptx.load(text, filename="k.ptx")
    with pytest.raises(SimulatorFault, match=r"elect\.sync %r4\|%p1, %r2 \(k\.ptx:\d+\)"):
        m.launch("k", block=32, args={"out": np.zeros(32, np.uint32), "mask": 0xFF})
