"""The six H200 fuzz programs whose registers all match but whose output buffer does not: ptxas drops repeated
``mad.hi`` (docs/ptx.md, "ptxas 13.0 drops repeated mad.hi").

Each of them (conformance/h200/h200-ptx-fuzz.json, "no register differs: buffers only") has a loop whose body adds
``mad.hi`` of the same two factors to an accumulator on every trip. The driver's ptxas unrolls the loop of the
original kernel by 4 and 2 and keeps too few of the repeated ``IMAD.HI`` (ptxas 13.0 -arch=sm_90 read with
nvdisasm): two in each group of four, or, where the accumulator is selected by a predicate (``selp``), one in each
group of four and of two. The instrumented kernel, with a trace store after each instruction, is not miscompiled:
every register of it matches. Here the simulator runs each program with the ``mad.hi`` executed as often as that
SASS executes it, and gives the H200's words.
"""

import json
import os
import re

import numpy as np
import pytest

from hwcheck.campaigns.ptx_fuzz import IN_WORDS, KERNEL, OUT_WORDS, program
from hwcheck.device.sass import disassemble, find_tool
from warpsim.frontends.args import concrete_args, parse_arg
from warpsim import ptx

REPORT = os.path.join(os.path.dirname(__file__), "..", "..", "conformance", "h200", "h200-ptx-fuzz.json")

# how many of a loop's n trips run its mad.hi in ptxas's SASS (the groups of 4 and 2 of the unrolled loop, then 1s)
TWO_OF_FOUR = "two of four"          # k = n - 2 * (n // 4)
ONE_PER_GROUP = "one per group"      # k = n // 4 + (n // 2) % 2 + n % 2
KEPT = {101424: ONE_PER_GROUP, 105246: TWO_OF_FOUR, 105386: TWO_OF_FOUR, 106635: TWO_OF_FOUR,
        107037: TWO_OF_FOUR, 108384: TWO_OF_FOUR}
_TRIPS = {TWO_OF_FOUR: ["shr.u32 %k0, %t2, 2;", "shl.b32 %k0, %k0, 1;", "sub.u32 %k0, %t2, %k0;"],
          ONE_PER_GROUP: ["shr.u32 %k0, %t2, 2;", "shr.u32 %t1, %t2, 1;", "and.b32 %t1, %t1, 1;",
                          "add.u32 %k0, %k0, %t1;", "and.b32 %t1, %t2, 1;", "add.u32 %k0, %k0, %t1;"]}


def as_ptxas_ran(text: str, kept: str) -> str:
    """``text`` with the ``mad.hi`` of its loop (and a ``selp`` of its result) executed on only ``kept``'s number of
    the loop's trips: a counter ``%k0`` set before the loop guards them."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("and.b32 %t2,")
                 and any("mad.hi" in x for x in lines[i:next(j for j in range(i, len(lines))
                                                              if lines[j].startswith("$L_done"))]))
    out = lines[:start + 1] + [f"  {line}" for line in _TRIPS[kept]]
    acc = None
    for line in lines[start + 1:]:
        body = line.strip()
        if body.startswith("mad.hi") and acc is None:
            acc = re.match(r"mad\.hi\.\w+ (%r\d+),", body).group(1)
            out += ["  setp.ne.u32 %pk, %k0, 0;", f"  @%pk {body}"]
            continue
        if acc is not None and body.startswith("selp") and f", {acc}," in body + ",":
            out.append(f"  @%pk {body}")
            continue
        if acc is not None and body.startswith("sub.u32 %t2"):
            out.append("  @%pk sub.u32 %k0, %k0, 1;")
            acc = ""                                   # the loop's end: nothing else is changed
        out.append(line)
    text = "\n".join(out)
    return text.replace(".reg .b64 %a<4>;", ".reg .b64 %a<4>;\n  .reg .b32 %k<1>;\n  .reg .pred %pk;", 1)


def _run(seed, text):
    n = program(seed).block
    specs = dict(parse_arg(a) for a in (f"inp=random:u32:{n * IN_WORDS}", f"out=zeros:u32:{n * OUT_WORDS}"))
    args = concrete_args(specs, seed)
    return ptx.load(text).launch(KERNEL, block=n, args=dict(args), quiet=True).buffers["out"]


def _h200_words():
    """``{seed: {index: value}}``: the output words the H200 gave where the simulator differed."""
    with open(REPORT) as f:
        report = json.load(f)
    words = {}
    for first in report["first_mismatches"]:
        if "buffer" in first:
            words.setdefault(first["seed"], {})[first["buffer"]["index"]] = int(first["buffer"]["actual"], 16)
    for prog in report["failing_programs"]:
        for m in prog["mismatches"]:
            if prog["seed"] in words and "index" in m:
                words[prog["seed"]][m["index"]] = int(m["actual"], 16)
    return words


def test_the_six_buffer_only_programs_are_the_ones_with_a_mad_hi_loop():
    assert set(_h200_words()) == set(KEPT)


@pytest.mark.parametrize("seed", sorted(KEPT))
def test_the_simulator_gives_the_h200s_words_with_the_mad_hi_run_as_ptxas_runs_it(seed):
    text = program(seed).text
    plain, as_ran = _run(seed, text), _run(seed, as_ptxas_ran(text, KEPT[seed]))
    for index, want in _h200_words()[seed].items():
        assert int(plain[index]) != want
        assert int(as_ran[index]) == want, f"seed {seed} out[{index}]: {int(as_ran[index]):#x}, the H200 {want:#x}"


def test_the_words_it_changes_are_the_ones_the_h200_changed():
    """Seed 101424 is kept whole in the report (every wrong word): the words the dropped mad.hi changes are those."""
    seed = 101424
    text = program(seed).text
    changed = np.flatnonzero(_run(seed, text) != _run(seed, as_ptxas_ran(text, KEPT[seed])))
    assert sorted(changed.tolist()) == sorted(_h200_words()[seed])


CHAIN = """.version 8.0
.target sm_90
.address_size 64
.visible .entry chain(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd0, [out];
  cvta.to.global.u64 %rd0, %rd0;
  ld.global.u32 %r0, [%rd0];
  ld.global.u32 %r1, [%rd0+4];
  ld.global.u32 %r2, [%rd0+8];
  mad.hi.u32 %r0, %r1, %r2, %r0;
  mad.hi.u32 %r0, %r1, %r2, %r0;
  mad.hi.u32 %r0, %r1, %r2, %r0;
  st.global.u32 [%rd0+12], %r0;
  ret;
}
"""
CHAIN_IN = (0x10, 0x9E3779B9, 0x7F4A7C15)      # c, a, b: hi(a * b) = 0x4eab8e1b


def test_the_simulator_runs_every_mad_hi_of_a_chain():
    c, a, b = CHAIN_IN
    out = np.array([c, a, b, 0], np.uint32)
    got = ptx.load(CHAIN).launch("chain", block=1, args={"out": out}, quiet=True).buffers["out"]
    assert int(got[3]) == (c + 3 * (a * b >> 32)) & 0xFFFFFFFF


_MISSING = [t for t in ("ptxas", "nvdisasm") if find_tool(t) is None]


@pytest.mark.skipif(bool(_MISSING) and os.environ.get("CI") != "true",
                    reason=f"needs {' and '.join(_MISSING)} (nvdisasm: pip install nvidia-cuda-nvdisasm)")
def test_ptxas_makes_two_imad_hi_of_the_three():
    sass = disassemble(CHAIN, "sm_90")
    assert sum(s.startswith("IMAD.HI.U32") for s in sass) == 2, sass


@pytest.mark.gpu
def test_the_gpu_drops_a_mad_hi_of_the_chain():
    """On the GPU (the driver's ptxas): three chained ``mad.hi.u32`` of the same factors add ``hi(a * b)`` twice
    (ptxas 13.0: two ``IMAD.HI.U32``); the PTX ISA and the simulator add it three times."""
    from hwcheck.errors import HwcheckError
    from hwcheck.device.gpu import Gpu
    from hwcheck.runs.ptx_run import CupyPtx
    try:
        gpu = CupyPtx(Gpu.open())
    except HwcheckError as e:
        pytest.skip(str(e))
    c, a, b = CHAIN_IN
    args = {"out": np.array([c, a, b, 0], np.uint32)}
    got = gpu.launch(gpu.load(CHAIN), ptx.load(CHAIN).decoded("chain"), "chain", (1, 1, 1), (1, 1, 1), 0, args)
    hi = a * b >> 32
    assert int(got.buffers["out"][3]) == (c + 2 * hi) & 0xFFFFFFFF, (
        f"the GPU gave {int(got.buffers['out'][3]):#x}: ISA (3 mad.hi) {(c + 3 * hi) & 0xFFFFFFFF:#x}, "
        f"ptxas 13.0's SASS (2) {(c + 2 * hi) & 0xFFFFFFFF:#x}")
