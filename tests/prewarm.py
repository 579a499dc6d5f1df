"""Compile the CUDA sources that many tests compile, in a low-priority background process, while a broad session runs.

A fresh clone's suite spends minutes in ``nvcc`` (the CuTe examples take 5-27 s each, per arch) inside the test
process, one compile at a time, while the second core of a two-core machine waits. :func:`start` (called by
``tests/conftest.py`` once a session has collected tests from many folders, as CI's whole-suite run does) compiles
:data:`SOURCES` for both arches into warpsim's PTX cache in a child process at ``nice 10``; the test process
finds them cached, or, where it asks for one the child is compiling, waits on that compile's lock
(:func:`warpsim.toolchain.cache_lock`) instead of compiling it again. Nothing is asserted here: a source that
fails to compile fails in the test that compiles it. :func:`stop` ends the child if the session ends first.
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

_child = None


def start():
    """Start compiling :data:`SOURCES` in the background (once per session); returns at once."""
    global _child
    if _child is None:
        _child = subprocess.Popen([sys.executable, __file__], cwd=ROOT, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop():
    """End the background compiles if they still run (those finished stay cached)."""
    global _child
    if _child is not None and _child.poll() is None:
        _child.terminate()
        _child.wait()
    _child = None


def _main():
    import os
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
