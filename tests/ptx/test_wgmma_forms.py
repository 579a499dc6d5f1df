"""wgmma in the PTX core: the forms it refuses at load (with the line), the faults it stops with (naming the
instruction, the warp and the descriptor), and the async-proxy fence it accepts."""

import numpy as np
import pytest

import warpsim.ptx
from warpsim.errors import PtxSyntaxError, SimulatorFault, UnsupportedType
from warpsim.isa.wgmma import make_descriptor

D8 = "{%f1, %f2, %f3, %f4}"        # m64n8 f32: 4 accumulators a thread


def _module(body, target="sm_90a"):
    return f""".version 8.0
.target {target}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 da, .param .u64 db)
{{
  .reg .b32 %r<8>; .reg .f32 %f<8>; .reg .b64 %rd<8>; .reg .pred %p<4>;
  .shared .align 1024 .b8 s[4096];
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [da];
  ld.param.u64 %rd3, [db];
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, %r1;
{body}
  cvta.to.global.u64 %rd4, %rd1;
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd6, %rd4, %rd5;
  st.global.f32 [%rd6], %f1;
  ret;
}}
"""


def _run(body, da=0, db=0, target="sm_90a", block=128):
    m = warpsim.ptx.load(_module(body, target), filename="k.ptx")
    return m.launch("k", block=block, args={"out": np.zeros(block, np.float32), "da": da, "db": db})


MMA = f"""  fence.proxy.async.shared::cta;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {D8}, %rd2, %rd3, %p1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
"""


def test_a_wgmma_on_zeros_gives_zeros_and_the_async_fences_are_accepted():
    r = _run(MMA, make_descriptor(1024, 16, 128), make_descriptor(1024, 16, 128))
    assert not r.buffers["out"].any() and r.stats["by_opcode"]["wgmma"] == 4 * 4


def test_wgmma_needs_sm_90a():
    with pytest.raises(PtxSyntaxError, match=r"^k\.ptx:14:3: wgmma\.fence\.sync\.aligned needs \.target sm_90a "
                                             r"\(ptxas refuses wgmma for sm_90\)"):
        _run(MMA, target="sm_90")


@pytest.mark.parametrize("line,message,error", [
    ("wgmma.mma_async.sync.aligned.m64n8k16.f32.tf32.tf32 {%f1, %f2, %f3, %f4}, %rd2, %rd3, %p1, 1, 1;",
     r"k\.ptx:\d+:\d+: .*tf32.*: wgmma form not modelled .*m64nNk8 \.f32\.tf32\.tf32", UnsupportedType),
    ("wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3.satfinite {%f1, %f2, %f3, %f4}, %rd2, %rd3, %p1, 1, 1;",
     r"wgmma form not modelled", UnsupportedType),
    ("wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%r1, %r2, %r3, %r4}, %rd2, %rd3, %p1, 1, 1;",
     r"k\.ptx:\d+:\d+: wgmma takes 4 operands, got 6 at 'wgmma\.mma_async\.sync\.aligned\.m64n8k32\.s32\.s8\.s8'",
     PtxSyntaxError),
    ("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2}, %rd2, %rd3, %p1, 1, 1, 0, 0;",
     r"k\.ptx:\d+:\d+: .*: D takes 4 registers in braces", PtxSyntaxError),
    ("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd2, %rd3, %p1, 2, 1, 0, 0;",
     r"imm-scale-a/b must be 1 or -1 and imm-trans 0 or 1, got 2, 1, 0, 0", PtxSyntaxError),
    ("wgmma.mma_async.sync.aligned.m64n12k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd2, %rd3, %p1, 1, 1, 0, 0;",
     r"wgmma form not modelled \(warpsim models m64nNk16, N = 8, 16, \.\.\., 256", UnsupportedType),
])
def test_forms_warpsim_does_not_model_or_ptx_does_not_have_are_refused_at_load_with_the_line(line, message, error):
    with pytest.raises(error, match=message):
        _run("  " + line + "\n")


def test_a_descriptor_past_shared_memory_faults_naming_the_address():
    with pytest.raises(SimulatorFault, match=r"wgmma\.mma_async.* \(k\.ptx:15\): CTA \(0, 0, 0\) thread \(0, 0, 0\) "
                                             r"\(warp 0 lane 0\): address 0x43f0 \+ 2 bytes is outside shared memory"):
        _run(MMA, make_descriptor(1024, 16, 0x3FF0), make_descriptor(1024, 16, 128))


def test_a_swizzled_descriptor_with_a_base_offset_is_not_guessed():
    bits = make_descriptor(1024, 16, 1024, "128B", base_offset=3)
    with pytest.raises(SimulatorFault, match=r"matrix descriptor 0x[0-9a-f]{16} has base offset 3 with a swizzled "
                                             r"layout \(not modelled"):
        _run(MMA, bits, make_descriptor(1024, 16, 128))


def test_a_diverged_warp_at_wgmma_faults():
    body = MMA.replace("  wgmma.mma_async", "  setp.lt.u32 %p2, %r1, 16;\n  @%p2 wgmma.mma_async")
    with pytest.raises(SimulatorFault, match=r"@%p2 wgmma\.mma_async.*\(k\.ptx:16\): CTA \(0, 0, 0\) warp 0: lanes "
                                             r"0,1,.*,15 execute it but lanes 0-31 must arrive together"):
        _run(body, make_descriptor(1024, 16, 128), make_descriptor(1024, 16, 128))


def test_reading_an_accumulator_before_its_wait_group_stops_naming_the_register_and_line():
    early = MMA.replace("  wgmma.commit_group", "  mov.f32 %f5, %f2;\n  wgmma.commit_group")
    with pytest.raises(SimulatorFault, match=r"^mov\.f32 %f5, %f2 \(k\.ptx:16\): CTA \(0, 0, 0\) thread \(0, 0, 0\) "
                                             r"\(warp 0 lane 0\): touches %f2, which a wgmma\.mma_async owns until a "
                                             r"wgmma\.wait_group covers it"):
        _run(early, make_descriptor(1024, 16, 128), make_descriptor(1024, 16, 128))


def test_wait_group_releases_all_but_the_newest_groups():
    two = f"""  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {D8}, %rd2, %rd3, %p1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {{%f5, %f6, %f7, %f4}}, %rd2, %rd3, %p1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 1;
  mov.f32 %f1, %f2;
"""
    with pytest.raises(SimulatorFault, match=r"touches %f4"):       # %f4 is in the second group too: in flight
        _run(two + "  mov.f32 %f1, %f4;\n", make_descriptor(1024, 16, 128), make_descriptor(1024, 16, 128))
    r = _run(two + "  wgmma.wait_group.sync.aligned 0;\n  mov.f32 %f1, %f4;\n", make_descriptor(1024, 16, 128),
             make_descriptor(1024, 16, 128))
    assert not r.buffers["out"].any()


def test_lanes_giving_different_descriptors_are_not_guessed():
    body = MMA.replace("  wgmma.fence", "  cvt.u64.u32 %rd7, %r1;\n  shl.b64 %rd7, %rd7, 4;\n  add.s64 %rd3, %rd3, %rd7;\n"
                                         "  wgmma.fence")
    with pytest.raises(SimulatorFault, match=r"wgmma\.mma_async.*\(warp 0 lane 1\): gives matrix descriptor "
                                             r"0x[0-9a-f]{16} \(or scale-d\) other than lane 0's \(not modelled"):
        _run(body, make_descriptor(1024, 16, 128), make_descriptor(1024, 16, 128))
