"""``hwcheck sweep``: every input of the f32 MUFU forms, on the GPU and through warpsim's model, compared.

The 16-bit forms :data:`HALF_FORMS` (``warpsim.isa.mufu16``) run every pattern (x2 forms: each pattern in the
upper half and its sign-flipped twin in the lower, ``hwcheck.campaigns.mufu.collect``'s sweep). The binary forms :data:`DIV_FORMS` (``div.approx``, ``div.full``, with and without ``.ftz``) cannot be swept;
they get ``count`` (default :data:`DIV_COUNT`) random pairs per form from :func:`div_pairs`: random bits,
divisors near 2**126 and 2**-126, subnormal and special divisors, quotients near 1.

For each form (``ex2 rcp rsqrt sqrt lg2 .approx{.ftz}.f32``, ``tanh.approx.f32``; :data:`SWEEP_FORMS`) the GPU computes the
results of ``count`` consecutive input patterns from ``start`` (default: all 2**32) in chunks of
``2**chunk_bits``; each chunk comes to the host and ``warpsim.isa.mufu32.mufu_range`` computes the same
inputs on the host's CPUs (Numba, parallel); every differing input is counted and the first
:data:`KEEP` are kept with both results. A progress line per chunk goes to ``log``; the JSON report
(``hwcheck.report``, written atomically) holds per form the inputs compared, the mismatches and the
first failing inputs.

:data:`SINCOS_FORMS` (``sin``/``cos.approx{.ftz}.f32``: ``warpsim.isa.sfu_sincos``, proven on the H200 by
``hwcheck.campaigns.sincos_probe``; not swept unless named) run like the f32 forms above, against ``sincos_range``.

:data:`F64_FORMS` (``rcp.approx.ftz.f64``: ``warpsim.isa.mufu_recip``, proven on the H200 by this sweep,
``conformance/h200/h200-rcp-f64-sweep.json``; not swept unless named) run ``count`` consecutive *high words*
from ``start``, each with its own low word (:data:`LOW_WORD`); a result differs where its high word is not the model's or its low word is not 0.

>>> parse_forms(["ex2.approx.ftz.f32", "lg2.approx.f32", "rcp.approx.ftz.f64"])
[('ex2', True), ('lg2', False), ('rcp.approx.ftz.f64', True)]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from hwcheck.report import new_report, write_json_atomic

__all__ = ["SWEEP_FORMS", "F64_FORMS", "SINCOS_FORMS", "LOW_WORD", "KEEP", "parse_forms", "sweep", "sweep_source",
           "range_kernel", "mismatch_records", "low_words"]

SWEEP_FORMS = tuple(f"{op}.approx{ftz}.f32" for op in ("ex2", "rcp", "rsqrt", "sqrt", "lg2") for ftz in (".ftz", "")
                    ) + ("tanh.approx.f32",)
DIV_FORMS = ("div.approx.f32", "div.approx.ftz.f32", "div.full.f32", "div.full.ftz.f32")   # binary: random pairs
DIV_COUNT = 1 << 26
HALF_FORMS = ("ex2.approx.f16", "ex2.approx.f16x2", "ex2.approx.ftz.bf16", "ex2.approx.ftz.bf16x2", "tanh.approx.f16",
              "tanh.approx.f16x2", "tanh.approx.bf16", "tanh.approx.bf16x2")   # every 16-bit pattern (x2: both halves)
F64_FORMS = ("rcp.approx.ftz.f64",)     # every high word (0 mismatches on the H200, 2026-12-01)
SINCOS_FORMS = tuple(f"{op}.approx{ftz}.f32" for op in ("sin", "cos") for ftz in ("", ".ftz"))   # proven: sincos_probe
LOW_WORD = "(high word * 0x9E3779B9 + 0x7F4A7C15) mod 2**32"
KEEP = 16

_RCP64_KERNEL = r"""
extern "C" __global__ void sweep_rcp64(unsigned* hi, unsigned* lo, unsigned long long start, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)(start + i);
    double x = __hiloint2double((int)h, (int)(h * 0x9E3779B9u + 0x7F4A7C15u)), y;   // LOW_WORD
    asm volatile("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
    hi[i] = (unsigned)__double2hiint(y);
    lo[i] = (unsigned)__double2loint(y);
  }
}
"""


def low_words(high: np.ndarray) -> np.ndarray:
    """The low word the f64 sweep pairs with each high word (:data:`LOW_WORD`), as its kernel computes it.

    >>> [hex(int(v)) for v in low_words(np.array([0, 1], np.uint32))]
    ['0x7f4a7c15', '0x1d81f5ce']
    """
    return (high.astype(np.uint64) * np.uint64(0x9E3779B9) + np.uint64(0x7F4A7C15)).astype(np.uint32)

_DIV_KERNEL = r"""
extern "C" __global__ void sweep_%(name)s(unsigned* out, const unsigned* a, const unsigned* b,
                                        unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    float y;
    asm volatile("%(form)s %%0, %%1, %%2;" : "=f"(y) : "f"(__uint_as_float(a[i])), "f"(__uint_as_float(b[i])));
    out[i] = __float_as_uint(y);
  }
}
"""

_SPECIALS = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x00000001, 0x807FFFFF, 0x00800000,
                      0x7F7FFFFF, 0x7E800000, 0x7E800001, 0x3F800000, 0xBF800000], np.uint32)


def div_pairs(seed: int, n: int):
    """``n`` (a, b) pairs of bits for the div forms, reproducible from ``seed``.

    >>> a, b = div_pairs(0, 1000); a.dtype, a.shape == b.shape == (1000,)
    (dtype('uint32'), True)
    """
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    kind = rng.integers(0, 10, n)
    sign = rng.integers(0, 2, n, dtype=np.uint64).astype(np.uint32) << np.uint32(31)
    mant = rng.integers(0, 1 << 23, n, dtype=np.uint64).astype(np.uint32)
    huge = sign | (rng.integers(252, 255, n, dtype=np.uint64).astype(np.uint32) << np.uint32(23)) | mant
    tiny = sign | (rng.integers(0, 3, n, dtype=np.uint64).astype(np.uint32) << np.uint32(23)) | mant
    near = (a & np.uint32(0x80000000)) | ((a & np.uint32(0x7FFFFFFF)) + rng.integers(-4, 5, n).astype(np.uint32))
    b = np.where(kind < 2, huge, np.where(kind < 4, tiny, np.where(kind == 4, _SPECIALS[mant % _SPECIALS.size],
                                                                   np.where(kind == 5, near, b))))
    a = np.where(kind == 6, _SPECIALS[mant % _SPECIALS.size], a)
    return a.astype(np.uint32), b.astype(np.uint32)


_KERNEL = r"""
extern "C" __global__ void %(kernel)s(unsigned* out, unsigned long long start, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    float y;
    asm volatile("%(form)s %%0, %%1;" : "=f"(y) : "f"(__uint_as_float((unsigned)(start + i))));
    out[i] = __float_as_uint(y);
  }
}
"""


def range_kernel(kernel: str, form: str) -> str:
    """The CUDA source of kernel ``kernel(out, start, n)``: ``out[i]`` = the f32 ``form`` (one source operand) of
    the input bits ``start + i`` (mod 2**32), for ``i < n``.

    >>> "void sweep_ex2_1(unsigned* out" in range_kernel("sweep_ex2_1", "ex2.approx.ftz.f32")
    True
    """
    return _KERNEL % {"kernel": kernel, "form": form}


def parse_forms(texts) -> list:
    """``(op, ftz)`` of each form named (``op`` ``div.approx``/``div.full`` for the div forms); ``ValueError``
    naming one that is neither in :data:`SWEEP_FORMS` nor in :data:`DIV_FORMS`."""
    out = []
    known = SWEEP_FORMS + DIV_FORMS + HALF_FORMS + F64_FORMS + SINCOS_FORMS
    for text in texts:
        if text not in known:
            raise ValueError(f"--forms: {text!r} is not one of the swept forms: {', '.join(known)}")
        if text in F64_FORMS:
            out.append((text, True))
            continue
        parts = text.split(".")
        out.append((text if text in HALF_FORMS else ".".join(parts[:2]) if parts[0] == "div" else parts[0],
                    ".ftz" in text))
    return out


def _text(op, ftz):
    return f"{op}{'' if op.startswith('div') else '.approx'}{'.ftz' if ftz else ''}.f32"


def _name(op, ftz):
    return f"{op.replace('.', '_')}_{int(ftz)}"


def sweep_source(forms) -> str:
    """The CUDA source of the GPU half: one kernel per form, the PTX instruction in inline assembly."""
    return "".join(_DIV_KERNEL % {"name": _name(op, ftz), "form": _text(op, ftz)} if op.startswith("div")
                   else range_kernel(f"sweep_{_name(op, ftz)}", _text(op, ftz))
                   for op, ftz in forms if op not in HALF_FORMS + F64_FORMS) + \
        (_RCP64_KERNEL if any(op in F64_FORMS for op, _ in forms) else "")


def _sweep_rcp64(gpu, module, start, count, chunk, log, t0) -> dict:
    """``rcp.approx.ftz.f64`` over ``count`` high words from ``start``: the GPU against ``rcp64h_range``."""
    from warpsim.isa.mufu_recip import rcp64h_range
    cp = gpu.cupy
    kernel = module.raw.get_function("sweep_rcp64")
    dev_hi, dev_lo = cp.empty(chunk, dtype=cp.uint32), cp.empty(chunk, dtype=cp.uint32)
    hi, lo, model = np.empty(chunk, np.uint32), np.empty(chunk, np.uint32), np.empty(chunk, np.uint32)
    bad, first, done = 0, [], 0
    while done < count:
        n = min(chunk, count - done)
        s = (start + done) & 0xFFFFFFFF
        kernel((1024 * 132,), (256,), (dev_hi, dev_lo, np.uint64(s), np.uint64(n)))
        dev_hi[:n].get(out=hi[:n])
        dev_lo[:n].get(out=lo[:n])
        rcp64h_range(s, model[:n])
        diff = np.flatnonzero((hi[:n] != model[:n]) | (lo[:n] != 0))
        bad += diff.size
        for i in diff[:KEEP - len(first)]:
            h = (s + int(i)) & 0xFFFFFFFF
            first.append({"input": f"0x{h:08x}{int(low_words(np.array([h], np.uint32))[0]):08x}",
                          "gpu": f"0x{int(hi[i]):08x}{int(lo[i]):08x}", "model": f"0x{int(model[i]):08x}00000000"})
        done += n
        log.write(f"sweep rcp.approx.ftz.f64: {done}/{count} high words, {bad} mismatches, "
                  f"{time.perf_counter() - t0:.0f} s\n")
        log.flush()
    return {"inputs": done, "start": f"0x{start:08x}", "high_words": True, "low_word": LOW_WORD, "mismatches": bad,
            "first_mismatches": first}


def mismatch_records(inputs, gpu, model) -> list:
    """The report's records of differing results: one ``{"input", "gpu", "model"}`` of 32-bit hex words per
    position of the three equally long arrays.

    >>> mismatch_records(np.array([1]), np.array([0x3F800000]), np.array([0x3F800001]))
    [{'input': '0x00000001', 'gpu': '0x3f800000', 'model': '0x3f800001'}]
    """
    return [{"input": f"0x{int(a):08x}", "gpu": f"0x{int(g):08x}", "model": f"0x{int(m):08x}"}
            for a, g, m in zip(inputs, gpu, model)]


def _sweep_half(gpu, text) -> dict:
    """One 16-bit form over every pattern: the GPU (``hwcheck.campaigns.mufu.collect``) against ``float_mufu16``."""
    from hwcheck.campaigns.mufu import collect, mufu_forms
    from warpsim.isa.mufu16 import float_mufu16
    form = mufu_forms([text])[0]
    x, y = collect(gpu, [form])[text]
    op, t = text.split(".")[0], text.split(".")[-1]
    model = float_mufu16(op, x, type=t, ftz=".ftz" in text)
    diff = np.flatnonzero(model != y)
    halves = 2 if t.endswith("x2") else 1
    idx = diff[:KEEP]
    first = mismatch_records(x[idx], y[idx], model[idx])
    return {"inputs": int(x.size) * halves, "mismatches": int(diff.size), "first_mismatches": first}


def sweep(gpu, forms, *, start: int = 0, count: int = 1 << 32, chunk_bits: int = 28, report=None, command="",
          log=None) -> int:
    """Compare ``forms`` (``(op, ftz)`` pairs) on ``count`` inputs from ``start``; returns 0 when every result
    matched, 1 otherwise; writes the report when ``report`` names a file."""
    from warpsim.isa.mufu32 import div_batch, mufu_range
    from warpsim.isa.sfu_sincos import sincos_range
    log = sys.stderr if log is None else log
    chunk = min(1 << chunk_bits, count)
    if any(op not in HALF_FORMS for op, _ in forms):         # the 32-bit forms: CuPy kernels of their own
        cp = gpu.cupy
        module = gpu.module(sweep_source(forms))
        dev = cp.empty(chunk, dtype=cp.uint32)
        host, model = np.empty(chunk, np.uint32), np.empty(chunk, np.uint32)
    results, t0 = {}, time.perf_counter()
    for op, ftz in forms:
        if op in F64_FORMS:
            results[op] = _sweep_rcp64(gpu, module, start, count, chunk, log, t0)
            continue
        if op in HALF_FORMS:
            results[op] = _sweep_half(gpu, op)
            log.write(f"sweep {op}: {results[op]['inputs']} halves, {results[op]['mismatches']} mismatches, "
                      f"{time.perf_counter() - t0:.0f} s\n")
            continue
        text = _text(op, ftz)
        kernel = module.raw.get_function(f"sweep_{_name(op, ftz)}")
        bad, first, done = 0, [], 0
        if op.startswith("div"):
            total = min(count, DIV_COUNT) if count == 1 << 32 else count
            while done < total:
                n = min(chunk, total - done)
                a, b = div_pairs(done // chunk, n)
                kernel((1024 * 132,), (256,), (dev, cp.asarray(a), cp.asarray(b), np.uint64(n)))
                dev[:n].get(out=host[:n])
                model[:n] = div_batch(op.split(".")[1], a, b, ftz=ftz)
                diff = np.flatnonzero(host[:n] != model[:n])
                bad += diff.size
                for i in diff[:KEEP - len(first)]:
                    first.append({"input": f"a=0x{int(a[i]):08x} b=0x{int(b[i]):08x}", "gpu": f"0x{int(host[i]):08x}",
                                  "model": f"0x{int(model[i]):08x}"})
                done += n
                log.write(f"sweep {text}: {done}/{total} random pairs, {bad} mismatches, "
                          f"{time.perf_counter() - t0:.0f} s\n")
                log.flush()
            results[text] = {"inputs": done, "random_pairs": True, "mismatches": bad, "first_mismatches": first}
            continue
        while done < count:
            n = min(chunk, count - done)
            s = (start + done) & 0xFFFFFFFF
            kernel((1024 * 132,), (256,), (dev, np.uint64(s), np.uint64(n)))
            dev[:n].get(out=host[:n])
            (sincos_range if op in ("sin", "cos") else mufu_range)(op, s, model[:n], ftz=ftz)
            diff = np.flatnonzero(host[:n] != model[:n])
            bad += diff.size
            idx = diff[:KEEP - len(first)]
            first += mismatch_records((s + idx) & 0xFFFFFFFF, host[idx], model[idx])
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
