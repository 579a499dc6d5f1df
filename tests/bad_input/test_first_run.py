"""Point 13: a first run says that it compiles, and compiles each kernel once."""

import sys

import numpy as np
from numba import njit, types

from warpsim.commands import program_args
from warpsim.isa import arith
from warpsim.isa.mma import warp_mma
from warpsim.machine import Machine
from warpsim.program.reference import gemm_reference


def test_one_line_when_numba_compiles(monkeypatch, capsys):
    monkeypatch.setitem(program_args._ANNOUNCE, "said", False)
    program_args.announce_compiling("debug")
    program_args.announce_compiling("run")          # one listener; the last verb is named

    @njit
    def fresh(x):                                     # never compiled before: Numba compiles it now
        return x + 1

    assert fresh(1) == 2 and fresh(2.5) == 3.5       # two compilations, one line
    err = capsys.readouterr().err
    assert err == "warpsim run: compiling the simulator's kernels, first run only ...\n"


def test_mma_core_has_one_specialisation_for_the_simulator_and_the_reference():
    """warp_mma and mma_tile (the reference) call mma_core with the same argument types: a first run
    that executes an mma and checks it compiles mma_core once, not twice (a Literal[int](8) version)."""
    m = Machine(1, 16, 0)
    m.execute_mma(0, [0, 1, 2, 3], [4, 5, 6, 7], [8, 9], [10, 11, 12, 13])
    gemm_reference(np.zeros((16, 16), np.uint16), np.zeros((8, 16), np.uint16), ab="f16")
    for kernel in (warp_mma, arith.mma_tile):     # typed anew (not loaded from Numba's cache): each asks
        njit(kernel.py_func).compile(kernel.signatures[0])     # mma_core for the signature it calls
    n_counts = {sig[4] for sig in arith.mma_core.signatures}
    assert n_counts == {types.int64}, n_counts


def test_a_long_compile_says_how_far_it_is_and_when_it_is_done():
    """Every interval of one compile, a line with the seconds so far and the function now compiling; the outermost
    end after such a line, the total; a compile shorter than the interval says nothing more."""
    now, lines = [0.0], []
    p = program_args.CompileProgress(lambda: "run", lambda: now[0], lines.append, interval=10)
    p.started("run_cta")
    now[0] = 4.0
    p.tick()
    assert lines == []
    p.started("warp_wgmma_op")
    now[0] = 10.5
    p.tick()
    p.tick()                                          # once an interval, not once a tick
    assert lines == ["warpsim run: still compiling (10 s so far; now warp_wgmma_op)\n"]
    p.ended()
    now[0] = 21.0
    p.tick()
    p.ended()
    assert lines[1:] == ["warpsim run: still compiling (21 s so far; now run_cta)\n", "warpsim run: compiled in 21 s\n"]
    p.started("fresh")                                # a short one later: silent
    now[0] = 25.0
    p.tick()
    p.ended()
    assert len(lines) == 3


def test_a_first_launch_is_one_compile_that_says_how_many_parts_are_done():
    """A first launch's compile (warpsim.ptx.precompile: families in helper processes and here, then run_cta) is one
    session: its lines count from its start, name the parts done and, between this process's compiles, the helpers
    it waits for; the end of one function's compile inside it says nothing, the session's end the total."""
    from warpsim.ptx.precompile import Progress
    now, lines = [0.0], []
    p = program_args.CompileProgress(lambda: "run", lambda: now[0], lines.append, interval=5)
    state = Progress(total=4, helpers=1)
    p.opened(state)
    p.started("warp_integer")
    now[0] = 5.0
    p.tick()
    p.ended()                                          # its own group compiled: not the end
    state.advance()
    now[0] = 10.0
    p.tick()
    state.advance()
    state.helper_done()
    p.started("run_cta")
    now[0] = 15.0
    p.tick()
    p.ended()
    state.advance()
    p.closed()
    assert lines == [
        "warpsim run: still compiling (5 s so far; 0 of 4 parts done; now warp_integer, 1 helper process beside it)\n",
        "warpsim run: still compiling (10 s so far; 1 of 4 parts done; now waiting for 1 helper process)\n",
        "warpsim run: still compiling (15 s so far; 2 of 4 parts done; now run_cta)\n",
        "warpsim run: compiled in 15 s\n"]
