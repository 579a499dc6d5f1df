"""A session's compiles in low-priority background processes, on the core a single-threaded test process leaves idle.

A fresh clone's suite spends minutes in compilers: ``nvcc`` of the CuTe examples (5-27 s each, per arch) inside
the tests that first need them, and the CuTe oracle's C++ (some 6 minutes of one core). :func:`start` (called by
``tests/conftest.py`` once a session has collected tests from many folders, as CI's whole-suite run does)
compiles :data:`SOURCES` for both arches into warpsim's PTX cache; :func:`start_oracle` (called by
``tests/oracle/conftest.py`` once a test that needs the oracle is collected) builds the oracle. Each runs in a
child process at ``nice 10``. The test process finds the results cached, or, where it asks for one a child is
compiling, waits on that compile's lock (:func:`warpsim.toolchain.cache_lock`, the oracle's per-object locks)
instead of compiling it again. Nothing is asserted here: what fails to compile fails in the test that needs it.
:func:`stop` ends the children if the session ends first.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the order the suite first needs them in (tests/debug and tests/docs run the flash examples early)
SOURCES = [*sorted((ROOT / "examples" / "cute_cpp").glob("*.cu")),
           *sorted((ROOT / "tests" / "provenance").glob("*.cu")),
           *sorted((ROOT / "examples" / "cute_cpp" / "as_compiled").glob("*.cu")),
           *sorted((ROOT / "tests" / "corpus" / "src" / "cuda").glob("*.cu"))]
ARCHS = ("sm_90", "sm_80")

_children = {}


def _spawn(name, args):
    if name not in _children:
        _children[name] = subprocess.Popen([sys.executable, *args], cwd=ROOT, stdin=subprocess.DEVNULL,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def start():
    """Start compiling :data:`SOURCES` in the background (once per session); returns at once."""
    _spawn("sources", [__file__])


def start_oracle(folder):
    """Start building the CuTe oracle (``oracle_harness.build`` in ``folder``, one compile at a time) in the
    background, once per session; returns at once."""
    _spawn("oracle", ["-c", "import os, sys; os.nice(10); sys.path.insert(0, sys.argv[1]); import oracle_harness; "
                            "oracle_harness.build(jobs=1)", str(folder)])


def stop():
    """End the background compiles that still run (what they finished stays cached; their locks are released)."""
    for child in _children.values():
        if child.poll() is None:
            child.terminate()
            child.wait()
    _children.clear()


_TINY = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry tiny(.param .u64 out)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    st.global.u32 [%rd1], %r1;
    ret;
}
"""


def numba_core():
    """Compile the PTX interpreter's core into Numba's cache (``python tests/prewarm.py --numba``): what the first
    test that launches a kernel would otherwise compile (some two minutes of one core on CI's machine). CI runs it
    while pip installs the extras."""
    sys.path.insert(0, str(ROOT))
    import numpy as np
    from warpsim import ptx
    ptx.load(_TINY).launch("tiny", grid=1, block=32, args={"out": np.zeros(1, np.uint32)})


def _main():
    import os
    if sys.argv[1:] == ["--numba"]:
        return numba_core()
    os.nice(10)
    sys.path.insert(0, str(ROOT))
    from warpsim.frontends.source import compile_source
    from warpsim.frontends.compiled import CompileError
    for path in SOURCES:
        for arch in ARCHS:
            try:
                compile_source(path, arch)
            except CompileError:
                pass


if __name__ == "__main__":
    _main()
