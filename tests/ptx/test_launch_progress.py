"""A long launch says how far it is: after PROGRESS_AFTER seconds, and every PROGRESS_EVERY, one line of CTAs done,
warp instructions and their rate; a short one says nothing; the CLI passes the lines to stderr as ``warpsim run:``."""

import re

import numpy as np

import warpsim.ptx
import warpsim.ptx.launch as launch

LOOP = """.version 8.0
.target sm_80
.address_size 64
.visible .entry spin(.param .u64 out, .param .u32 n)
{
  .reg .pred %p<2>; .reg .b32 %r<8>; .reg .b64 %rd<4>;
  ld.param.u32 %r5, [n];
  mov.u32 %r1, 0; mov.u32 %r2, 1;
LOOP:
  add.u32 %r2, %r2, %r1;
  xor.b32 %r2, %r2, 5;
  add.u32 %r1, %r1, 1;
  setp.lt.u32 %p1, %r1, %r5;
  @%p1 bra LOOP;
  ld.param.u64 %rd1, [out];
  mov.u32 %r3, %ctaid.x;
  mul.wide.u32 %rd2, %r3, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
"""


def test_a_long_launch_reports_its_ctas_and_rate(monkeypatch):
    mod = warpsim.ptx.load(LOOP, filename="spin.ptx", ptxas="none")
    lines = []
    monkeypatch.setattr(launch, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(launch, "PROGRESS_EVERY", 0.0)
    monkeypatch.setattr(launch, "_FIRST_SLICE", 1024)
    res = mod.launch("spin", grid=8, block=32, args={"out": np.zeros(8, np.uint32), "n": 2000}, progress=lines.append)
    assert len(lines) >= 2, lines
    pattern = re.compile(r"^(\d+) of 8 CTAs done, ([\d,]+) warp instructions, \d+\.\d\d M/s, \d+\.\d s$")
    done = [pattern.match(line) for line in lines]
    assert all(done), lines
    ctas = [int(m.group(1)) for m in done]
    steps = [int(m.group(2).replace(",", "")) for m in done]
    assert ctas == sorted(ctas) and steps == sorted(steps) and steps[-1] <= res.stats["warp_instructions"]


def test_a_short_launch_says_nothing():
    mod = warpsim.ptx.load(LOOP, filename="spin.ptx", ptxas="none")
    lines = []
    mod.launch("spin", grid=2, block=32, args={"out": np.zeros(2, np.uint32), "n": 10}, progress=lines.append)
    assert lines == []
