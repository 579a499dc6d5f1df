"""The first launch's parallel compile (warpsim.ptx.precompile): the split of the families over processes, the
argument types it compiles them for (they must be the ones run_cta passes, or the helpers' work is wasted), and a
helper process writing into the cache the launch reads."""

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import warpsim.ptx as wp
import warpsim.ptx.launch as launch_module
from warpsim.ptx import precompile
from warpsim.ptx.interp import run_cta, uses_hopper

ROOT = Path(__file__).resolve().parents[2]
ADD_INDEX = ROOT / "examples" / "ptx" / "add_index.ptx"


@pytest.mark.parametrize("jobs", [1, 2, 3, 4, 8])
def test_partition_places_every_group_once(jobs):
    shares = precompile.partition(precompile.GROUPS, jobs, head=precompile.RUN_CTA_SECONDS)
    assert len(shares) == jobs
    names = [g for share in shares for g in share]
    assert sorted(names) == sorted(g for g, _ in precompile.GROUPS)
    weight = dict(precompile.GROUPS)
    loads = [sum(weight[g] for g in share) + (precompile.RUN_CTA_SECONDS if k == 0 else 0)
             for k, share in enumerate(shares)]
    if jobs == 2:                           # the longest-first rule keeps two CPUs within the largest group's weight
        assert max(loads) - min(loads) <= max(weight.values())
        assert max(loads) < 0.6 * (sum(weight.values()) + precompile.RUN_CTA_SECONDS)


def test_jobs_follow_the_launch_default(monkeypatch):
    monkeypatch.setenv("WARPSIM_JOBS", "1")
    assert precompile.jobs_wanted() == 1
    monkeypatch.setenv("WARPSIM_JOBS", "64")
    assert precompile.jobs_wanted() == precompile.MAX_JOBS


class _Recorder:
    """Stands for run_cta in the launch module: records the arguments of each call and runs the real one."""

    def __init__(self):
        self.calls = []

    def __call__(self, *args):
        self.calls.append(args)
        return run_cta(*args)


# a kernel with an mbarrier: run_cta's hopper variant (examples/ptx/add_index.ptx: the other)
MBARRIER = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .pred %p<4>;
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mov.u32 %r3, bar;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra INIT_DONE;
  mbarrier.init.shared::cta.b64 [%r3], 32;
INIT_DONE:
  bar.sync 0;
  mbarrier.arrive.shared::cta.b64 %rd4, [%r3];
  mov.u32 %r2, 0;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r3], %r2;
  @!%p3 bra WAIT;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}
"""


def _launch_args(monkeypatch, hopper):
    """The arguments a launch passes run_cta, the launch's first-call hook seeing them too (and doing nothing):
    examples/ptx/add_index.ptx (``hopper=False``) or the mbarrier kernel above."""
    recorder, hooked = _Recorder(), []
    monkeypatch.setattr(launch_module, "run_cta", recorder)
    monkeypatch.setattr(launch_module, "_FIRST_CALLS", set())          # as in a new process: the hook runs
    monkeypatch.setattr(launch_module, "compile_families", lambda fn, args, jobs=None: hooked.append(args))
    if hopper:
        module = wp.load(MBARRIER, arch="sm_90", ptxas="none")
        result = module.launch("k", grid=1, block=32, args={"out": np.zeros(32, np.uint32)})
        assert (result.buffers["out"] == np.arange(32)).all()
    else:
        module = wp.load(str(ADD_INDEX), arch="sm_90", ptxas="none")
        x = np.arange(256, dtype=np.int32)
        result = module.launch("add_index", grid=2, block=128, args={"x": x, "y": np.zeros_like(x), "n": 256})
        assert (result.buffers["y"] == 2 * x).all()
    assert hooked and all(a is b for a, b in zip(hooked[0], recorder.calls[0], strict=True))
    assert (recorder.calls[0][-1] is None) == (not hopper)            # the variant uses_hopper chose
    return recorder.calls[0]


@pytest.mark.parametrize("hopper", [False, True])
def test_family_signatures_are_the_ones_run_cta_compiled(monkeypatch, hopper):
    """Each family's argument types, as precompile derives them, are the only ones in the cache: the launch in
    this test compiled or loaded run_cta, and run_cta's own typing put its callees there (a table that drifted from
    run_cta's calls would leave its types missing, or a second signature beside them). The variant without sm_90's
    families lists none of them."""
    args = _launch_args(monkeypatch, hopper)
    assert not precompile.is_cold(run_cta, args)
    calls = precompile.family_calls(args)
    assert set(precompile.HOPPER_GROUPS) <= set(calls) if hopper else not set(precompile.HOPPER_GROUPS) & set(calls)
    for group, entries in calls.items():
        for fn, sig in entries:
            index = fn._cache._cache_file._load_index()
            assert precompile.is_cached(fn, sig), f"{group}: {fn.py_func.__name__} {sig} not in the cache"
            assert len(index) == 1, f"{group}: {fn.py_func.__name__} has {len(index)} signatures cached"


def test_a_helper_compiles_into_the_cache_it_is_given(tmp_path):
    """A helper process (the same code compile_families starts) compiles a function for the given types into the
    cache directory of its environment."""
    from numba import types
    entries = [("faults", [("warpsim.isa.faults", "set_fault", (types.Array(types.int64, 1, "C"), types.int64,
                                                                 types.int64, types.int64, types.int64))])]
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", precompile._helper_source()], input=pickle.dumps(entries), env=env,
                          check=True, timeout=300, capture_output=True)
    assert list(tmp_path.rglob("faults.set_fault-*.nbi")), sorted(p.name for p in tmp_path.rglob("*"))
    assert done.stdout.decode().splitlines() == [f"{precompile.DONE} faults"]     # what the launch counts


def test_uses_hopper():
    plain = wp.load(str(ADD_INDEX), arch="sm_90", ptxas="none").decoded("add_index")
    assert not uses_hopper(plain.code, 1) and uses_hopper(plain.code, 2)          # a cluster of two CTAs
    assert uses_hopper(wp.load(MBARRIER, arch="sm_90", ptxas="none").decoded("k").code, 1)


def test_warm_cache_starts_no_helper(monkeypatch):
    args = _launch_args(monkeypatch, False)
    assert precompile.compile_families(run_cta, args, jobs=4) == 0


def test_a_cache_it_cannot_read_starts_no_helper():
    """Where Numba's cache cannot be read as precompile reads it, the launch compiles in its own process, as before:
    no helpers compiling what may be cached already."""
    class Unreadable:
        overloads = {}
    assert precompile.is_cached(Unreadable(), ()) is None and precompile.is_cold(Unreadable(), ()) is False
    assert precompile.compile_families(Unreadable(), (), jobs=4) == 0
