"""``hwcheck sweep``: every input of the f32 MUFU forms, on the GPU and through warpsim's model, compared.

For each form (``ex2 rcp rsqrt sqrt lg2 .approx{.ftz}.f32``; :data:`SWEEP_FORMS`) the GPU computes the
results of ``count`` consecutive input patterns from ``start`` (default: all 2**32) in chunks of
``2**chunk_bits``; each chunk comes to the host and ``warpsim.isa.mufu32.mufu_range`` computes the same
inputs on the host's CPUs (Numba, parallel); every differing input is counted and the first
:data:`KEEP` are kept with both results. A progress line per chunk goes to ``log``; the JSON report
(``hwcheck.report``, written atomically) holds per form the inputs compared, the mismatches and the
first failing inputs.

>>> parse_forms(["ex2.approx.ftz.f32", "lg2.approx.f32"])
[('ex2', True), ('lg2', False)]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from hwcheck.report import new_report, write_json_atomic

__all__ = ["SWEEP_FORMS", "KEEP", "parse_forms", "sweep", "sweep_source"]

SWEEP_FORMS = tuple(f"{op}.approx{ftz}.f32" for op in ("ex2", "rcp", "rsqrt", "sqrt", "lg2") for ftz in (".ftz", ""))
KEEP = 16

_KERNEL = r"""
extern "C" __global__ void sweep_%(name)s(unsigned* out, unsigned long long start, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    float y;
    asm volatile("%(form)s %%0, %%1;" : "=f"(y) : "f"(__uint_as_float((unsigned)(start + i))));
    out[i] = __float_as_uint(y);
  }
}
"""


def parse_forms(texts) -> list:
    """``(op, ftz)`` of each form named; ``ValueError`` naming one that is not in :data:`SWEEP_FORMS`."""
    out = []
    for text in texts:
        if text not in SWEEP_FORMS:
            raise ValueError(f"--forms: {text!r} is not one of the swept forms: {', '.join(SWEEP_FORMS)}")
        out.append((text.split(".")[0], ".ftz" in text))
    return out


def sweep_source(forms) -> str:
    """The CUDA source of the GPU half: one kernel per form, the PTX instruction in inline assembly."""
    return "".join(_KERNEL % {"name": f"{op}_{int(ftz)}", "form": f"{op}.approx{'.ftz' if ftz else ''}.f32"}
                   for op, ftz in forms)


def sweep(gpu, forms, *, start: int = 0, count: int = 1 << 32, chunk_bits: int = 28, report=None, command="",
          log=None) -> int:
    """Compare ``forms`` (``(op, ftz)`` pairs) on ``count`` inputs from ``start``; returns 0 when every result
    matched, 1 otherwise; writes the report when ``report`` names a file."""
    from warpsim.isa.mufu32 import mufu_range
    log = sys.stderr if log is None else log
    cp = gpu.cupy
    module = gpu.module(sweep_source(forms))
    chunk = min(1 << chunk_bits, count)
    dev = cp.empty(chunk, dtype=cp.uint32)
    host, model = np.empty(chunk, np.uint32), np.empty(chunk, np.uint32)
    results, t0 = {}, time.perf_counter()
    for op, ftz in forms:
        text = f"{op}.approx{'.ftz' if ftz else ''}.f32"
        kernel = module.raw.get_function(f"sweep_{op}_{int(ftz)}")
        bad, first, done = 0, [], 0
        while done < count:
            n = min(chunk, count - done)
            s = (start + done) & 0xFFFFFFFF
            kernel((1024 * 132,), (256,), (dev, np.uint64(s), np.uint64(n)))
            dev[:n].get(out=host[:n])
            mufu_range(op, s, model[:n], ftz=ftz)
            diff = np.flatnonzero(host[:n] != model[:n])
            bad += diff.size
            for i in diff[:KEEP - len(first)]:
                first.append({"input": f"0x{(s + int(i)) & 0xFFFFFFFF:08x}", "gpu": f"0x{int(host[i]):08x}",
                              "model": f"0x{int(model[i]):08x}"})
            done += n
            log.write(f"sweep {text}: {done}/{count} inputs, {bad} mismatches, "
                      f"{time.perf_counter() - t0:.0f} s\n")
            log.flush()
        results[text] = {"inputs": done, "start": f"0x{start:08x}", "mismatches": bad, "first_mismatches": first}
    status = "fail" if any(r["mismatches"] for r in results.values()) else "pass"
    if report is not None:
        data = new_report(command, gpu.info.as_dict())
        data.update(status=status, kind="mufu32-sweep", settings={"start": start, "count": count,
                                                                  "chunk_bits": chunk_bits},
                    forms=results, wall_s=round(time.perf_counter() - t0, 1))
        write_json_atomic(report, data)
    return 0 if status == "pass" else 1
