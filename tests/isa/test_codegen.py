"""The mma kernel's machine code on an AVX-512 target: contiguous vector loads, no gathers.

With AVX-512 LLVM may turn a loop's loads into gathers, and it does so when an index may be
negative (numba then adds the array's length to it, lane by lane). Gathers are slow on AMD's Zen 4
and Zen 5: the kernel ran at under half its speed there. ``warpsim.isa.arith`` indexes its inner
loops from 0 through row views; this test compiles ``mma_core`` for an AVX-512 CPU (in a
subprocess, compiled, never run, so any x86-64 host can check it) and reads its assembly.
"""

import os
import platform
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    from numba import types
    from warpsim.isa import arith
    table = types.Array(types.int32, 1, "C")
    sig = (table,) * 4 + (types.int64,) * 7
    arith.mma_core.compile(sig)
    asm = arith.mma_core.inspect_asm(sig)
    print(asm.count("gather"), asm.count("scatter"), asm.count("vpsravd"))
""")


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64 code generation only")
def test_mma_core_has_no_gathers_on_avx512(tmp_path):
    env = dict(os.environ, NUMBA_CPU_NAME="skylake-avx512",
               NUMBA_CPU_FEATURES="+avx512f,+avx512bw,+avx512vl,+avx512dq",
               NUMBA_CACHE_DIR=str(tmp_path))   # never mix this target's code into the project's cache
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    gathers, scatters, shifts = map(int, out.stdout.split())
    assert shifts > 0          # the column sums' variable shifts are vectorised ...
    assert (gathers, scatters) == (0, 0)   # ... over contiguous loads and stores
