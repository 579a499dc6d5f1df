"""A launch without clusters makes each CTA a cluster of one: the cluster special registers say so, and
setmaxnreg (a register budget) runs and changes no value; a budget PTX does not allow is refused with its line."""

import numpy as np
import pytest

import warpsim.ptx
from warpsim.errors import PtxSyntaxError

REGS = ["%clusterid.x", "%clusterid.y", "%nclusterid.x", "%cluster_ctaid.x", "%cluster_nctaid.x",
        "%cluster_ctarank", "%cluster_nctarank", "%is_explicit_cluster"]


def _text(budget="setmaxnreg.inc.sync.aligned.u32 240;"):
    reads = "".join(f"  mov.u32 %r{i + 1}, {r};\n  st.global.u32 [%rd1+{4 * i}], %r{i + 1};\n" for i, r in enumerate(REGS))
    return f""".version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out)
{{
  .reg .b32 %r<16>; .reg .b64 %rd<4>;
  {budget}
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r10, %ctaid.y;
  mov.u32 %r11, %nctaid.x;
  mov.u32 %r12, %ctaid.x;
  mad.lo.u32 %r10, %r10, %r11, %r12;
  mul.wide.u32 %rd2, %r10, 32;
  add.s64 %rd1, %rd1, %rd2;
{reads}  ret;
}}
"""


def test_each_cta_is_a_cluster_of_one():
    out = warpsim.ptx.load(_text(), filename="k.ptx").launch("k", grid=(3, 2, 1), block=32,
                                                             args={"out": np.zeros(6 * 8, np.uint32)})
    got = out.buffers["out"].reshape(6, 8)
    for cta in range(6):
        assert list(got[cta]) == [cta % 3, cta // 3, 3, 0, 1, 0, 1, 0]


def test_a_register_budget_ptx_does_not_allow_is_refused_with_its_line():
    with pytest.raises(PtxSyntaxError, match=r"k\.ptx:7:\d+: setmaxnreg\.inc\.sync\.aligned\.u32: expected "
                                             r"setmaxnreg\.\{inc,dec\}\.sync\.aligned\.u32 N with N a multiple of 8"):
        warpsim.ptx.load(_text("setmaxnreg.inc.sync.aligned.u32 250;"), filename="k.ptx").launch(
            "k", block=32, args={"out": np.zeros(8, np.uint32)})
