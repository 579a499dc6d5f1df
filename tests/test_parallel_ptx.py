"""A PTX kernel's grid through warpsim.frontends.grid: CTAs as Ray tasks equal the sequential launch; a kernel
whose CTAs read earlier CTAs' output is refused; ``warpsim run K.ptx --grid N --ray``."""

import numpy as np
import pytest

from warpsim.frontends.grid import launch_grid
from warpsim.parallel import GridDependenceError
from warpsim.ptx import load

HEAD = """
.version 8.0
.target sm_80
.address_size 64
"""

# out[i] = 3 * in[i] + ctaid, i = ctaid * ntid + tid
SCALE = HEAD + """
.visible .entry scale(.param .u64 src, .param .u64 dst)
{
  .reg .b32 %r<8>; .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [dst];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  mul.wide.u32 %rd3, %r4, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u32 %r5, [%rd4];
  mul.lo.s32 %r6, %r5, 3;
  add.s32 %r6, %r6, %r2;
  add.s64 %rd5, %rd2, %rd3;
  st.global.u32 [%rd5], %r6;
  ret;
}
"""

# out[i] = out[i - ntid] + 1 for CTAs after the first: each CTA reads the previous CTA's output
CHAIN = HEAD + """
.visible .entry chain(.param .u64 dst)
{
  .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .pred %p<2>;
  ld.param.u64 %rd1, [dst];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  mul.wide.u32 %rd3, %r4, 4;
  add.s64 %rd4, %rd1, %rd3;
  setp.eq.u32 %p1, %r2, 0;
  @%p1 bra DONE;
  mul.wide.u32 %rd5, %r3, 4;
  sub.s64 %rd6, %rd4, %rd5;
  ld.global.u32 %r5, [%rd6];
  add.s32 %r5, %r5, 1;
  st.global.u32 [%rd4], %r5;
DONE:
  ret;
}
"""


def test_a_16_cta_ptx_grid_on_ray_equals_the_sequential_launch(ray_cluster):
    src = np.arange(16 * 64, dtype=np.uint32) * 7
    dst = np.zeros_like(src)
    launched = load(SCALE).launch("scale", grid=16, block=64, args={"src": src, "dst": dst}).buffers["dst"]
    run, buffers = launch_grid(SCALE, "scale", 16, 64, {"src": src, "dst": dst}, ray=True, ctas_per_task=2)
    assert run.mode == "ray" and np.array_equal(buffers["dst"], launched)
    assert np.array_equal(launched, src * 3 + np.repeat(np.arange(16, dtype=np.uint32), 64))
    assert np.array_equal(launch_grid(SCALE, "scale", 16, 64, {"src": src, "dst": dst})[1]["dst"], launched)


def test_a_ptx_grid_whose_ctas_chain_is_refused(ray_cluster):
    dst = np.zeros(4 * 32, np.uint32)
    with pytest.raises(GridDependenceError, match=r"CTA 2 writes global byte 0x100 differently .*--no-ray"):
        launch_grid(CHAIN, "chain", 4, 32, {"dst": dst}, ray=True)
    _run, buffers = launch_grid(CHAIN, "chain", 4, 32, {"dst": dst})          # in sequence: the way out
    assert buffers["dst"].tolist() == [0] * 32 + [1] * 32 + [2] * 32 + [3] * 32


def _warpsim(argv, capsys):
    from warpsim.cli import main
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


def test_warpsim_run_grid_with_ray_equals_no_ray(ray_cluster, tmp_path, capsys):
    ptx = tmp_path / "scale.ptx"
    ptx.write_text(SCALE)
    np.save(tmp_path / "src.npy", np.arange(16 * 64, dtype=np.uint32))
    common = [str(ptx), "--kernel", "scale", "--grid", "16", "--block", "64", "--arg", f"src={tmp_path}/src.npy",
              "--arg", "dst=zeros:u32:1024", "--dump", "dst"]
    assert _warpsim(["run", *common, "--out", str(tmp_path / "ray"), "--ray"], capsys)[0] == 0
    assert _warpsim(["run", *common, "--out", str(tmp_path / "seq"), "--no-ray"], capsys)[0] == 0
    assert np.array_equal(np.load(tmp_path / "ray" / "dst.npy"), np.load(tmp_path / "seq" / "dst.npy"))
    chain = tmp_path / "chain.ptx"
    chain.write_text(CHAIN)
    status, _out, err = _warpsim(["run", str(chain), "--kernel", "chain", "--grid", "4", "--block", "32",
                                  "--arg", "dst=zeros:u32:128", "--ray"], capsys)
    assert status == 2 and err.startswith("warpsim run: error: CTA 2 writes global byte 0x100 differently")
    assert err.rstrip().endswith("(--no-ray)") and len(err.strip().splitlines()) == 1
