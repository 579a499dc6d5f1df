"""``launch(profile=True)``: host cycles and warp instructions per PTX instruction form, and nothing else changes."""

import numpy as np

from ptx_helpers import load, store_r

# a loop of float work, a guarded branch, cp.async and its wait: forms that take different paths
BODY = """
  mov.u32 %r4, sm;
  shl.b32 %r5, %r1, 4;
  add.u32 %r6, %r4, %r5;
  add.s64 %rd2, %rd11, %rd0;
  add.s64 %rd2, %rd2, %rd0;
  add.s64 %rd2, %rd2, %rd0;
  add.s64 %rd2, %rd2, %rd0;
  cp.async.cg.shared.global [%r6], [%rd2], 16;
  cp.async.commit_group;
  cp.async.wait_group 0;
  ld.shared.u32 %r8, [%r6];
  mov.b32 %r9, 0;
  cvt.rn.f32.u32 %r10, %r8;
LOOP:
  fma.rn.f32 %r10, %r10, 0f3F000000, 0f3F800000;
  ex2.approx.ftz.f32 %r11, %r10;
  max.f32 %r10, %r10, %r11;
  add.u32 %r9, %r9, 1;
  setp.lt.u32 %p1, %r9, 5;
  @%p1 bra LOOP;
""" + store_r("%r10")


def _launch(profile):
    mod = load(BODY, params=("out", "src"), decls=".shared .align 16 .b8 sm[1024];")
    args = {"out": np.zeros(64, np.uint32), "src": np.arange(64 * 16, dtype=np.uint8)}
    return mod.launch("k", block=64, args=args, profile=profile)


def test_profile_counts_every_warp_instruction_and_changes_no_result():
    plain, profiled = _launch(False), _launch(True)
    assert "host_cycles" not in plain.stats
    assert profiled.buffers["out"].tolist() == plain.buffers["out"].tolist()
    assert profiled.stats["warp_instructions"] == plain.stats["warp_instructions"]
    forms = profiled.stats["host_cycles"]
    assert sum(n for n, _ in forms.values()) == plain.stats["warp_instructions"]
    assert forms["fma.rn.f32"][0] == forms["ex2.approx.ftz.f32"][0] == forms["max.f32"][0] == 2 * 5   # 2 warps
    assert forms["bra"][0] == 2 * 5 and forms["cp.async.cg.shared.global"][0] == 2
    assert all(c > 0 for _, c in forms.values())
    cycles = [c for _, c in forms.values()]
    assert cycles == sorted(cycles, reverse=True)                # most first
