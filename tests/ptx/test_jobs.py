"""A launch's CTAs over several processes (``jobs``, :mod:`warpsim.ptx.jobs`): the sequential launch's bits whatever
``jobs`` is — buffers, printf lines and their order, counts, a fault's message, the step limit — and a fan-out that
really happened (or really fell back to the sequence where CTAs depend on each other)."""

import multiprocessing

import numpy as np
import pytest

from warpsim.errors import SimulatorFault
from warpsim.ptx import jobs as jobs_mod
from warpsim.ptx import launch as launch_mod
from warpsim.ptx import load

# Each thread runs 300 steps of an LCG from its global index and stores the result in out[i]; thread 0 of each CTA
# prints its CTA. mode 1: CTA c > 0 stores out[i - ntid] + 1 instead (it reads CTA c-1's output); mode 2: each
# thread adds the old value of an atomic counter; mode 3: CTA 5 stores to a bad address.
PTX = """
.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b32 func_retval0) vprintf (.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.global .align 1 .b8 fmt[8] = {99, 116, 97, 61, 37, 100, 10, 0};

.visible .entry work(.param .u64 out, .param .u64 counter, .param .u32 mode)
{
  .reg .b32 %r<20>; .reg .b64 %rd<20>; .reg .pred %p<4>;
  .local .align 8 .b8 buf[8];
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [counter];
  ld.param.u32 %r10, [mode];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  mul.wide.u32 %rd3, %r4, 4;
  add.s64 %rd4, %rd1, %rd3;
  mov.u32 %r5, %r4;
  mov.u32 %r6, 0;
LOOP:
  mad.lo.s32 %r5, %r5, 1664525, 1013904223;
  add.s32 %r6, %r6, 1;
  setp.lt.u32 %p1, %r6, 300;
  @%p1 bra LOOP;
  setp.ne.u32 %p2, %r10, 1;
  @%p2 bra NOCHAIN;
  setp.eq.u32 %p3, %r2, 0;
  @%p3 bra NOCHAIN;
  mul.wide.u32 %rd5, %r3, 4;
  sub.s64 %rd6, %rd4, %rd5;
  ld.global.u32 %r7, [%rd6];
  add.s32 %r5, %r7, 1;
NOCHAIN:
  setp.ne.u32 %p2, %r10, 2;
  @%p2 bra NOATOM;
  atom.global.add.u32 %r8, [%rd2], 1;
  add.s32 %r5, %r5, %r8;
NOATOM:
  setp.ne.u32 %p2, %r10, 3;
  @%p2 bra NOFAULT;
  setp.ne.u32 %p3, %r2, 5;
  @%p3 bra NOFAULT;
  mov.u64 %rd4, 8;
NOFAULT:
  st.global.u32 [%rd4], %r5;
  setp.ne.u32 %p2, %r1, 0;
  @%p2 bra DONE;
  mov.u64 %rd7, buf;
  st.local.u32 [%rd7], %r2;
  cvta.local.u64 %rd8, %rd7;
  mov.u64 %rd9, fmt;
  cvta.global.u64 %rd9, %rd9;
  {
  .param .b64 param0;
  .param .b64 param1;
  .param .b32 retval0;
  st.param.b64 [param0], %rd9;
  st.param.b64 [param1], %rd8;
  call.uni (retval0), vprintf, (param0, param1);
  }
DONE:
  ret;
}
"""

GRID, BLOCK = 8, 64


@pytest.fixture
def eager(monkeypatch):
    """Fan out after the first slice of a few hundred warp instructions (inside CTA 0), not after a second."""
    monkeypatch.setattr(jobs_mod, "FAN_OUT_AFTER", 0.0)
    monkeypatch.setattr(launch_mod, "_FIRST_SLICE", 256)


def _args(mode):
    return {"out": np.zeros(GRID * BLOCK, np.uint32), "counter": np.zeros(1, np.uint32), "mode": mode}


def _run(mode, jobs, **launch):
    run = load(PTX).start("work", grid=GRID, block=BLOCK, args=_args(mode), **launch)
    return run, run.run(jobs=jobs)


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="this platform cannot fork")
class TestJobs:
    @pytest.mark.parametrize("jobs", [2, 3, 8])
    def test_independent_ctas_fan_out_and_equal_the_sequence(self, eager, jobs, capsys):
        _, one = _run(0, 1)
        printed_one = capsys.readouterr().out
        run, many = _run(0, jobs)
        fan = run._fan                              # the fan-out at the end of CTA 0, the 7 CTAs left in spans
        assert fan.jobs == min(jobs, GRID - 1) and fan.sequential_from is None
        assert fan.spans[0][0] == 1 and fan.spans[-1][1] == GRID and len(fan.spans) == GRID - 1
        for name in ("out", "counter"):
            assert np.array_equal(one.buffers[name], many.buffers[name])
        assert one.printf == many.printf and [line for *_, line in many.printf] == [f"cta={c}\n" for c in range(GRID)]
        assert capsys.readouterr().out == printed_one
        assert one.stats == many.stats
        assert np.array_equal(one.machine.regs, many.machine.regs)

    @pytest.mark.parametrize("mode", [1, 2])
    def test_ctas_that_depend_on_each_other_run_in_sequence(self, eager, mode):
        _, one = _run(mode, 1, quiet=True)
        run, many = _run(mode, 3, quiet=True)
        assert run._fan.sequential_from == 1        # the second span read what the first wrote
        assert np.array_equal(one.buffers["out"], many.buffers["out"])
        assert np.array_equal(one.buffers["counter"], many.buffers["counter"])
        if mode == 2:
            assert int(many.buffers["counter"][0]) == GRID * BLOCK

    def test_a_fault_in_a_forked_span_is_the_sequential_fault(self, eager):
        with pytest.raises(SimulatorFault) as one:
            _run(3, 1, quiet=True)
        with pytest.raises(SimulatorFault) as many:
            _run(3, 3, quiet=True)
        assert str(one.value) == str(many.value) and "CTA (5, 0, 0) thread (0, 0, 0)" in str(many.value)

    def test_the_step_limit_is_the_launch_s(self, eager):
        _, whole = _run(0, 1, quiet=True)
        limit = whole.stats["warp_instructions"] - 50
        with pytest.raises(SimulatorFault) as one:
            _run(0, 1, quiet=True, max_steps=limit)
        with pytest.raises(SimulatorFault) as many:
            _run(0, 4, quiet=True, max_steps=limit)
        assert str(one.value) == str(many.value)

    def test_a_short_launch_never_forks(self):
        run, _ = _run(0, 4, quiet=True)             # FAN_OUT_AFTER as shipped: far longer than this launch
        assert run._fan is None


def test_jobs_is_checked():
    with pytest.raises(ValueError, match="jobs must be an int from 1 to 1024"):
        load(PTX).launch("work", grid=GRID, block=BLOCK, args=_args(0), jobs=0)
    assert jobs_mod.default_jobs() >= 1


def test_what_cannot_fan_out_says_why():
    run = load(PTX).start("work", grid=GRID, block=BLOCK, args=_args(0))
    assert jobs_mod.why_sequential(run) is None
    run.enable_shadow()
    assert jobs_mod.why_sequential(run) == "the sanitizer is on"


def _warpsim(argv, capsys):
    from warpsim.cli import main
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="this platform cannot fork")
def test_warpsim_run_jobs_gives_the_sequential_bits_and_progress(eager, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(launch_mod, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(launch_mod, "PROGRESS_EVERY", 0.0)
    ptx = tmp_path / "work.ptx"
    ptx.write_text(PTX)
    common = [str(ptx), "--kernel", "work", "--grid", str(GRID), "--block", str(BLOCK), "--arg", "out=zeros:u32:512",
              "--arg", "counter=zeros:u32:1", "--arg", "mode=0", "--dump", "out"]
    status, one_out, _ = _warpsim(["run", *common, "--out", str(tmp_path / "one"), "--jobs", "1"], capsys)
    assert status == 0
    status, many_out, err = _warpsim(["run", *common, "--out", str(tmp_path / "many"), "--jobs", "3"], capsys)
    assert status == 0 and many_out.replace("many", "one") == one_out
    assert np.array_equal(np.load(tmp_path / "one" / "out.npy"), np.load(tmp_path / "many" / "out.npy"))
    assert "CTAs done (3 processes)" in err


def test_warpsim_run_jobs_0_is_one_line(tmp_path, capsys):
    ptx = tmp_path / "work.ptx"
    ptx.write_text(PTX)
    status, _out, err = _warpsim(["run", str(ptx), "--kernel", "work", "--jobs", "0"], capsys)
    assert status == 2 and err.strip() == "warpsim run: error: --jobs must be an int from 1 to 1024 (processes), got 0"
