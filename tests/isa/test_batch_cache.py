"""The batched SFU kernels load from Numba's disk cache in a second process and add to it there.

They are compiled with ``cache=True`` and take a form's index, never its model function: a cached kernel with a
function in its signature (a Numba Dispatcher type) is rebuilt from the cache index in the next process with a
function nothing keeps alive: every process then compiled the kernel again and added an overload to the index,
until saving the index failed with "underlying object has vanished" (it did, in CI, for
``examples/flash_fwd.py`` under ``warpsim run``). Each step runs in a fresh process on one cache folder; each
kernel must end with one overload (one ``.nbc`` file), whatever the processes asked of it.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

STEPS = [
    "print(mufu_batch('ex2', x, ftz=True)[0], sincos_batch('sin', x)[0], div_batch('full', x, x)[0])",
    "print(mufu_batch('rcp', x)[0], mufu_batch('lg2', x, ftz=True)[0], sincos_batch('cos', x, ftz=True)[0])",
    "print(mufu_batch('tanh', x)[0], div_batch('approx', x, x, ftz=True)[0], mufu_range('sqrt', 4, x.copy())[0])",
    "print(model_results('lg2', x, lg2_coefficients())[0], recip_model('rsqrt', recip_tables()[1])[0])",
]
PRELUDE = ("import numpy as np\n"
           "from warpsim.isa.mufu32 import mufu_batch, mufu_range, div_batch\n"
           "from warpsim.isa.sfu_sincos import sincos_batch\n"
           "from warpsim.isa.sfu_exp import lg2_coefficients\n"
           "from warpsim.isa.sfu_exp_derive import model_results\n"
           "from warpsim.isa.mufu_recip import recip_tables\n"
           "from warpsim.isa.mufu_recip_derive import model_results as recip_model\n"
           "x = np.array([0x3F800000, 0x40490FDB], np.uint32)\n")


def test_the_kernels_reload_and_grow_their_cache_across_processes(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    for step in STEPS + STEPS[:2]:           # compile, then load what an earlier process cached
        done = subprocess.run([sys.executable, "-c", PRELUDE + step], env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{step}:\n{done.stderr[-2000:]}"
    for kernel in ("mufu32._batch-", "mufu32._batch2-", "sfu_sincos._batch-", "sfu_exp_derive._apply-",
                   "mufu_recip_derive._all-"):
        compiled = sorted(p.name for p in (tmp_path / "cache").rglob(f"{kernel}*.nbc"))
        assert len(compiled) == 1, f"{kernel}: {len(compiled)} overloads cached: {compiled}"
