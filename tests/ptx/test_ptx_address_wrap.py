"""A 32-bit base register plus an offset wraps modulo 2**32, as the GPU's 32-bit address arithmetic does.

LLVM folds constants out of shared addresses: ``(1 - stage) * 8192 + x`` becomes ``%r = base + x - stage * 8192``
(below the shared window, as a 32-bit value: a large unsigned number) and ``[%r+16384]`` (the CuTe DSL flash
kernel's K/V stages). The access is ``base + x + 8192``, not 4 GiB past it.
"""

import numpy as np
import pytest

from warpsim.errors import SimulatorFault
from tests.ptx.ptx_helpers import load, store_r

BODY = """
  mov.u32 %r4, dyn;
  shl.b32 %r5, %r1, 2;
  add.u32 %r6, %r4, %r5;                 // dyn + 4 * lane
  st.shared.u32 [%r6], %r1;
  bar.sync 0;
  sub.u32 %r7, %r6, 8192;                // below the window: wraps as a 32-bit value
  ld.shared.u32 %r8, [%r7+8192];         // dyn + 4 * lane again
  ld.shared.u32 %r9, [%r7+8196];         // the next lane's word (lane 31: the word past the last)
  shl.b32 %r9, %r9, 8;
  add.u32 %r10, %r8, %r9;
""" + store_r("%r10")
EXTRA = ".extern .shared .align 16 .b8 dyn[];\n"


def test_a_32_bit_base_below_the_window_plus_offset_is_the_wrapped_address():
    got = load(BODY, extra=EXTRA).launch("k", block=32, smem=256, args={"out": np.zeros(32, np.uint32)}).buffers["out"]
    lane = np.arange(32)
    assert got.tolist() == (lane + (np.where(lane < 31, lane + 1, 0) << 8)).tolist()


def test_a_wrapped_address_outside_the_window_still_faults():
    body = BODY.replace("[%r7+8192]", "[%r7+4096]")
    with pytest.raises(SimulatorFault, match="outside shared memory"):
        load(body, extra=EXTRA).launch("k", block=32, smem=256, args={"out": np.zeros(32, np.uint32)})
