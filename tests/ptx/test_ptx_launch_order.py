"""``warp_order``: the warps of a CTA take turns in another legal order (the sanitizer's schedule check runs them so);
a race-free kernel gives the same bytes, and only a permutation is taken."""

import numpy as np
import pytest

from warpsim import ptx

KERNEL = """.version 8.0 .target sm_80 .address_size 64
.visible .entry k(.param .u64 out) {
  .reg .b32 %r<6>; .reg .b64 %rd<4>; .shared .align 4 .b32 s[128];
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, s;
  add.u32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r1;
  bar.sync 0;
  xor.b32 %r5, %r2, 256;
  add.u32 %r4, %r3, %r5;
  ld.shared.u32 %r5, [%r4];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r5;
  ret;
}
"""


def test_a_race_free_kernel_gives_the_same_bytes_in_every_order():
    m = ptx.load(KERNEL, ptxas="none")
    want = m.launch("k", block=128, args={"out": np.zeros(128, np.uint32)}, quiet=True).buffers["out"]
    np.testing.assert_array_equal(want, np.arange(128) ^ 64)
    for order in ([3, 2, 1, 0], [1, 3, 0, 2]):
        got = m.launch("k", block=128, args={"out": np.zeros(128, np.uint32)}, quiet=True, warp_order=order)
        np.testing.assert_array_equal(got.buffers["out"], want)


@pytest.mark.parametrize("order", [[0, 1, 2], [0, 0, 1, 2], [0, 1, 2, 4]])
def test_only_a_permutation_of_the_warps(order):
    m = ptx.load(KERNEL, ptxas="none")
    with pytest.raises(ValueError, match="is not a permutation of the 4 warps"):
        m.launch("k", block=128, args={"out": np.zeros(128, np.uint32)}, warp_order=order)


# warp 1 stores an offset to shared memory and warp 0 loads through it, no barrier between: in the simulator's order
# warp 0 reads 0 (in bounds); with warp 1 first it reads 1 << 20 and faults
FAULTS_IN_ONE_ORDER = """.version 8.0 .target sm_80 .address_size 64
.visible .entry k(.param .u64 out) {
  .reg .pred %p<2>; .reg .b32 %r<6>; .reg .b64 %rd<4>; .shared .align 4 .b32 s[1];
  ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd1, %rd1; mov.u32 %r1, %tid.x; mov.u32 %r2, s;
  setp.lt.u32 %p1, %r1, 32;
  @!%p1 st.shared.u32 [%r2], 1048576;
  @%p1 ld.shared.u32 %r3, [%r2];
  @%p1 cvt.u64.u32 %rd2, %r3;
  @%p1 add.s64 %rd3, %rd1, %rd2;
  @%p1 st.global.u32 [%rd3], %r1;
  ret;
}
"""


def test_an_order_that_faults_is_a_schedule_finding():
    from warpsim.sanitize import sanitize_launch
    m = ptx.load(FAULTS_IN_ONE_ORDER, ptxas="none")
    report = sanitize_launch(m, "k", block=(64, 1, 1), args={"out": np.zeros(4, np.uint32)}, tools={"mem"},
                             schedules=1)
    (finding,) = report.findings
    assert (finding.tool, finding.kind) == ("race", "schedule")
    assert finding.detail[0].startswith("the launch stops when the warps take turns as [1, 0]: ")
