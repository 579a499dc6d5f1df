"""The sanitizer's kernels (``kernels/``): each plants one hazard, marked ``// A`` (and ``// B``) on the source lines
the finding must name; its correct version (``-DFIXED``, or a ``*_fixed.ptx`` beside a ``.ptx``) must report nothing.

:data:`CASES` is the one table: the pytest suite (``test_sanitize_kernels.py``) and the device runner
(``run_compute_sanitizer.py``) read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

KERNELS = Path(__file__).resolve().parent / "kernels"

__all__ = ["Case", "CASES", "KERNELS", "marked_lines"]


@dataclass(frozen=True)
class Case:
    """One planted hazard: the file and kernel, the launch, the tool that finds it, the finding's ``kind``, and
    ``racecheck``: the compute-sanitizer tool that would look for it on a GPU."""

    file: str
    kernel: str
    block: tuple
    args: dict
    tool: str
    kind: str
    grid: tuple = (1, 1, 1)
    smem: int = 0
    uninit: tuple = ()
    cs_tool: str = "racecheck"
    severity: str = "error"
    arch: str = "sm_80"
    extra: dict = field(default_factory=dict)

    @property
    def fixed(self):
        """``(file, nvcc flags)`` of the correct version."""
        if self.file.endswith(".ptx"):
            return self.file.replace(".ptx", "_fixed.ptx"), ()
        return self.file, ("-DFIXED",)


def _f32(n):
    return np.arange(n, dtype=np.float32)


def _i32(n):
    return np.arange(n, dtype=np.int32)


CASES = [
    Case("transpose_race.cu", "transpose_race", (32, 8, 1), {"in": _f32(1024), "out": np.zeros(1024, np.float32)},
         "race", "RAW"),
    Case("reduce_missing_barrier.cu", "reduce_missing_barrier", (128, 1, 1), {"in": _f32(128), "out": _f32(1)},
         "race", "RAW", smem=512),
    Case("warp_reduce_nosyncwarp.cu", "warp_reduce_nosyncwarp", (32, 1, 1),
         {"in": _i32(64), "out": np.zeros(1, np.int32)}, "race", "WAR"),
    Case("producer_consumer_flag.cu", "producer_consumer_flag", (64, 1, 1),
         {"data": np.zeros(1, np.int32), "flag": np.zeros(1, np.int32), "out": np.zeros(1, np.int32)}, "race", "RAW"),
    Case("cp_async_before_wait.cu", "cp_async_before_wait", (64, 1, 1), {"in": _f32(64), "out": _f32(64)},
         "race", "cp.async"),
    Case("divergent_syncthreads_warp.cu", "divergent_syncthreads_warp", (64, 1, 1), {"in": _f32(64), "out": _f32(64)},
         "sync", "divergent", cs_tool="synccheck"),
    Case("divergent_syncthreads_warps.cu", "divergent_syncthreads_warps", (128, 1, 1),
         {"in": _f32(128), "out": _f32(128)}, "sync", "divergent-barrier", cs_tool="synccheck"),
    Case("shfl_mask_omits_lane.cu", "shfl_mask_omits_lane", (32, 1, 1), {"in": _i32(32), "out": _i32(32)},
         "sync", "member-mask", cs_tool="synccheck"),
    Case("shfl_mask_inactive.cu", "shfl_mask_inactive", (32, 1, 1), {"in": _i32(32), "out": _i32(32)},
         "sync", "divergent", cs_tool="synccheck"),
    Case("syncwarp_mask.cu", "syncwarp_mask", (32, 1, 1), {"in": _i32(32), "out": _i32(32)},
         "sync", "member-mask", cs_tool="synccheck"),
    Case("uninit_shared.cu", "uninit_shared", (64, 1, 1), {"in": _f32(64), "out": _f32(64)},
         "init", "uninit-memory", cs_tool="initcheck"),
    Case("waw_two_warps.cu", "waw_two_warps", (64, 1, 1), {"out": _i32(64)}, "race", "WAW"),
    Case("waw_same_instruction.cu", "waw_same_instruction", (32, 1, 1), {"out": _i32(32)}, "race", "WAW",
         severity="warning"),
    Case("global_sum_ctas.cu", "global_sum_ctas", (32, 1, 1), {"in": _i32(4), "out": np.zeros(1, np.int32)},
         "race", "RAW", grid=(4, 1, 1)),
    Case("histogram_shared.cu", "histogram_shared", (64, 1, 1), {"in": _i32(64), "out": _i32(8)}, "race", "RAW"),
    Case("output_read_before_write.cu", "output_read_before_write", (64, 1, 1),
         {"in": _f32(64), "out": np.zeros(64, np.float32)}, "init", "uninit-memory", uninit=("out",),
         cs_tool="initcheck"),
    Case("loop_missing_second_sync.cu", "loop_missing_second_sync", (64, 1, 1),
         {"in": _f32(192), "out": _f32(64), "tiles": 3}, "race", "WAR"),
    Case("named_barrier_deadlock.cu", "named_barrier_deadlock", (64, 1, 1), {"in": _i32(32), "out": _i32(32)},
         "sync", "deadlock", cs_tool="synccheck"),
    Case("ldmatrix_race.cu", "ldmatrix_race", (64, 1, 1),
         {"in": np.arange(64, dtype=np.uint16), "out": np.zeros(32, np.uint32)}, "race", "RAW"),
    Case("atomic_vs_plain.cu", "atomic_vs_plain", (64, 1, 1), {"out": np.zeros(1, np.int32)}, "race", "WAR"),
    Case("barrier_after_exit.cu", "barrier_after_exit", (64, 1, 1), {"in": _f32(64), "out": _f32(64), "n": 32},
         "sync", "barrier-after-exit", cs_tool="synccheck"),
    Case("race_shared.ptx", "race_shared", (64, 1, 1), {"out": _i32(64)}, "race", "RAW"),
    Case("uninit_register.ptx", "uninit_register", (32, 1, 1), {"out": _i32(32)}, "init", "uninit-register",
         cs_tool="initcheck"),
]


def marked_lines(path):
    """``{"A": line, "B": line}`` of the ``// A`` / ``// B`` markers of a kernel file (1-based)."""
    out = {}
    for k, line in enumerate(Path(path).read_text().splitlines(), 1):
        stripped = line.rstrip()
        for mark in ("A", "B"):
            if stripped.endswith(f"// {mark}"):
                out[mark] = k
    return out
