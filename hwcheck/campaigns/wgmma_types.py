"""wgmma's input types beyond f16/bf16 on the GPU: tf32, e4m3/e5m2 and s8/u8 (``examples/hopper/wgmma_types.cu``).

Each kernel runs one ``wgmma.mma_async.m64n16k{8,32}`` per CTA on inputs of five classes, drawn here, deterministically,
from a seed (the same bytes on any machine: :func:`inputs` hashes them into the record):

- ``uniform``: every byte and accumulator bit uniform (NaN, infinities, subnormals as they come);
- ``finite``: the same with the NaN/infinity codes of the input type moved to the largest finite one;
- ``narrow``: exponents within a few steps of 1.0, an eighth of the elements zero and a sixteenth subnormal (for
  tf32 also a thirty-second far out, 2**+-60), accumulators of the products' size: alignment and truncation show;
- ``cancel``: ``narrow`` whose second half of k repeats the first with B negated, a few elements changed: sums near
  zero, where the bits kept below the largest term decide the result;
- ``sparse``: A ``finite`` with seven elements in eight zero, B ``finite``, accumulators tiny (f32 below 2**-97, f16
  below 2**-12, subnormals among them): rows whose products are all zero, where the exponent a zero input takes in
  the alignment (``DotModel.zero_exp``) decides how many of the accumulator's bits are kept.

:func:`collect` runs them on the GPU and returns the accumulators (``y``) per kernel; the campaign compares them
with warpsim's model once the model exists, and saves them for fitting where it does not.
"""

from __future__ import annotations

import hashlib
import os

import numpy as np
from numba import njit

from warpsim.isa.dot_add import DOT_CD, DOT_TYPES, dot_add, int_dot_add, model_for

__all__ = ["KERNELS", "CLASSES", "X_BYTES", "regs_per_thread", "inputs", "collect", "operands", "expected", "compare",
           "load", "plan", "check_chunk", "summarise", "stream", "neighbours", "input_types"]

# kernel -> (a type, b type, accumulator type)
KERNELS = {"tf32_f32": ("tf32", "tf32", "f32"), "e4m3_f32": ("e4m3", "e4m3", "f32"),
           "e5m2_f32": ("e5m2", "e5m2", "f32"), "e4m3_e5m2_f32": ("e4m3", "e5m2", "f32"),
           "e4m3_f16": ("e4m3", "e4m3", "f16"), "e5m2_f16": ("e5m2", "e5m2", "f16"),
           "s8_s32": ("s8", "s8", "s32"), "u8_s8_s32": ("u8", "s8", "s32"), "s8_s32_satfinite": ("s8", "s8", "s32"),
           "tf32_f32_rs": ("tf32", "tf32", "f32"), "e4m3_f32_rs": ("e4m3", "e4m3", "f32"),
           "s8_s32_rs": ("s8", "s8", "s32")}       # _rs: A from registers (the same A)
CLASSES = ("uniform", "finite", "narrow", "cancel", "sparse")    # appended classes keep the others' inputs
X_BYTES = 4096            # shared bytes a CTA copies from x: A (64 x 32 bytes) at 0, B (16 x 32 bytes) at 2048
N = 16
MISMATCHES_KEPT = 20000


def regs_per_thread(kernel):
    """Accumulator registers of one thread: N/2 for f32 and s32, N/4 for f16."""
    return N // 4 if KERNELS[kernel][2] == "f16" else N // 2


def _operand_offsets(rows, base):
    """Byte offsets in a CTA's shared window of each element byte ``(row, kbyte)`` of an operand of ``rows`` x 32 bytes
    (K-major, no swizzle, LBO 128, SBO 256): ``int64[rows, 32]``."""
    r = np.arange(rows)[:, None]
    kb = np.arange(32)[None, :]
    return base + (r // 8) * 256 + (r % 8) * 16 + (kb // 16) * 128 + kb % 16


A_OFFSETS = _operand_offsets(64, 0)
B_OFFSETS = _operand_offsets(N, 2048)


def _fp8_fields(t):
    return (4, 3, 7) if t == "e4m3" else (5, 2, 15)


def _narrow_bytes(rng, t, shape):
    """Elements of type ``t`` (bytes) near 1.0, some zero and subnormal."""
    e_bits, f_bits, bias = _fp8_fields(t)
    sign = rng.integers(0, 2, shape, dtype=np.uint8)
    exp = (bias + rng.integers(-2, 3, shape)).astype(np.uint8)
    frac = rng.integers(0, 1 << f_bits, shape, dtype=np.uint8)
    pick = rng.integers(0, 16, shape)
    exp[pick < 2] = 0
    frac[pick < 2] = 0                                   # zero
    exp[pick == 2] = 0                                   # subnormal (or zero)
    return (sign << 7) | (exp << f_bits) | frac


def _narrow_words(rng, shape):
    """f32 words near 1.0 for tf32 (random low 13 bits, which tf32 ignores), some zero, subnormal or far out."""
    sign = rng.integers(0, 2, shape, dtype=np.uint32)
    exp = (127 + rng.integers(-3, 4, shape)).astype(np.uint32)
    frac = rng.integers(0, 1 << 23, shape, dtype=np.uint32)
    pick = rng.integers(0, 32, shape)
    exp[pick < 4] = 0
    frac[pick < 4] = 0
    exp[(pick >= 4) & (pick < 6)] = 0
    exp[pick == 6] = 127 + 60
    exp[pick == 7] = 127 - 60
    return (sign << 31) | (exp << 23) | frac


def _narrow_float(rng, count, cls, exp_bits, frac_bits, span):
    """Float bit patterns near 1.0 (exponents within ``span`` steps; ``finite``: the whole finite range), an eighth
    zero and a sixteenth subnormal."""
    bias = (1 << (exp_bits - 1)) - 1
    span = bias if cls == "finite" else span
    sign = rng.integers(0, 2, count, dtype=np.uint64)
    exp = (bias + rng.integers(-span, span + 1, count)).astype(np.uint64)
    frac = rng.integers(0, 1 << frac_bits, count, dtype=np.uint64)
    pick = rng.integers(0, 16, count)
    exp[pick < 3] = 0
    frac[pick < 2] = 0
    return (sign << (exp_bits + frac_bits)) | (exp << frac_bits) | frac


def _accumulators(rng, cls, acc, count):
    if cls == "sparse" and acc != "s32":                      # tiny: exponent fields 0..30 (f32), 0..2 (f16)
        if acc == "f16":
            half = lambda: (rng.integers(0, 2, count, dtype=np.uint64) << 15) | (          # noqa: E731
                rng.integers(0, 3, count, dtype=np.uint64) << 10) | rng.integers(0, 1 << 10, count, dtype=np.uint64)
            return (half() | (half() << 16)).astype(np.uint32)
        return ((rng.integers(0, 2, count, dtype=np.uint64) << 31) | (rng.integers(0, 31, count, dtype=np.uint64) << 23)
                | rng.integers(0, 1 << 23, count, dtype=np.uint64)).astype(np.uint32)
    if cls == "uniform":
        return rng.integers(0, 1 << 32, count, dtype=np.uint64).astype(np.uint32)
    if acc == "s32":
        v = rng.integers(-(1 << 20), 1 << 20, count, dtype=np.int64)
        edge = rng.integers(0, 8, count) == 0                 # near the ends of s32: wrap-around and saturation
        v[edge] = np.int64(0x7FFFFFFF) - rng.integers(0, 1 << 16, int(edge.sum()))
        v[edge & (rng.integers(0, 2, count) == 1)] *= -1
        return (v & 0xFFFFFFFF).astype(np.uint32)
    if acc == "f16":
        lo = _narrow_float(rng, count, cls, 5, 10, 3)
        return (lo | (_narrow_float(rng, count, cls, 5, 10, 3) << 16)).astype(np.uint32)
    return _narrow_float(rng, count, cls, 8, 23, 4).astype(np.uint32)


def _finite_bytes(x, t):
    if t == "e4m3":
        x[(x & 0x7F) == 0x7F] -= 1                          # NaN -> 448
    elif t == "e5m2":
        x[(x & 0x7C) == 0x7C] = (x[(x & 0x7C) == 0x7C] & 0x80) | 0x7B    # inf/NaN -> 57344
    return x


def _operand(rng, cls, t, rows, ctas):
    """``uint8[ctas, rows, 32]``: the operand's bytes, row-major over k."""
    shape = (ctas, rows, 32)
    if t == "tf32":
        if cls in ("uniform", "finite"):
            w = rng.integers(0, 1 << 32, shape[:2] + (8,), dtype=np.uint64).astype(np.uint32)
            if cls == "finite":
                w[(w & 0x7F800000) == 0x7F800000] &= ~np.uint32(0x00800000)
        else:
            w = _narrow_words(rng, shape[:2] + (8,))
        return np.ascontiguousarray(w).view(np.uint8).reshape(shape)
    if cls == "uniform" or t in ("s8", "u8"):
        x = rng.integers(0, 256, shape, dtype=np.uint8)
        if t in ("s8", "u8") and cls in ("narrow", "cancel"):
            ends = rng.integers(0, 4, shape) == 0
            x[ends] = np.where(rng.integers(0, 2, int(ends.sum())) == 1, 0x7F, 0x80).astype(np.uint8)
        return x
    if cls == "finite":
        return _finite_bytes(rng.integers(0, 256, shape, dtype=np.uint8), t)
    return _narrow_bytes(rng, t, shape)


def inputs(kernel, cls, ctas, seed, part=None):
    """``(x, c, digest)`` for ``ctas`` CTAs of class ``cls``: ``x`` uint8[ctas * X_BYTES] (A and B in place, the rest
    zero), ``c`` uint32[ctas * 128 * R], ``digest`` the sha256 of both (the same on every machine). ``part``: the
    chunk of a streamed campaign (:func:`stream`), drawn from its own generator."""
    at, bt, acc = KERNELS[kernel]
    key = [seed, list(KERNELS).index(kernel), CLASSES.index(cls)]
    rng = np.random.default_rng(key if part is None else key + [part])
    a = _operand(rng, "finite" if cls == "sparse" else cls, at, 64, ctas)
    b = _operand(rng, "finite" if cls == "sparse" else cls, bt, N, ctas)
    if cls == "sparse":                                 # seven A elements in eight zero
        width = 4 if at == "tf32" else 1
        keep = rng.integers(0, 8, (ctas, 64, 32 // width)) == 0
        a[~np.repeat(keep, width, axis=2)] = 0
    if cls == "cancel":                                 # second half of k: the first, with B negated
        a[:, :, 16:] = a[:, :, :16]
        if bt == "tf32":
            b[:, :, 16:] = b[:, :, :16]
            b[:, :, 19::4] ^= 0x80
        elif bt in ("e4m3", "e5m2"):
            b[:, :, 16:] = b[:, :, :16] ^ 0x80
        else:
            b[:, :, 16:] = (-(b[:, :, :16].astype(np.int16))).astype(np.uint8)
        change = rng.integers(0, 64, a.shape) == 0       # a few bytes of A differ
        a[change] = rng.integers(0, 256, int(change.sum()), dtype=np.uint8)
    x = np.zeros((ctas, X_BYTES), np.uint8)
    x[:, A_OFFSETS] = a
    x[:, B_OFFSETS] = b
    c = _accumulators(rng, cls, acc, ctas * 128 * regs_per_thread(kernel))
    digest = hashlib.sha256(x.tobytes() + c.tobytes()).hexdigest()
    return x.reshape(-1), c, digest


def operands(kernel, x):
    """``(a, b)``: the element bits each CTA's wgmma reads from ``x``: ``int64[ctas, 64, K]`` and ``int64[ctas, 16, K]``
    (K 8 for tf32, else 32), row-major over k."""
    at, bt, _ = KERNELS[kernel]
    x = x.reshape(-1, X_BYTES)

    def elements(offsets, t):
        raw = np.ascontiguousarray(x[:, offsets])
        return (raw.view(np.uint32) if t == "tf32" else raw).astype(np.int64)
    return elements(A_OFFSETS, at), elements(B_OFFSETS, bt)


@njit(cache=True)
def _expected(a, b, c, ta, tb, cd, satfinite, frac_bits, out_frac, zero_exp, min_quantum, rows, cols, per_reg, y):
    ctas, _, k = a.shape
    for cta in range(ctas):
        zero_c = cta % 8 == 7
        for t in range(128):
            for i in range(rows.shape[1]):
                m, n = 16 * (t // 32) + rows[t % 32, i], cols[t % 32, i]
                r = (cta * 128 + t) * (rows.shape[1] // per_reg) + i // per_reg
                cv = np.int64(0) if zero_c else (np.int64(c[r]) >> (16 * (i % per_reg))) & (
                    0xFFFFFFFF if per_reg == 1 else 0xFFFF)
                if cd == 2:
                    v = int_dot_add(a[cta, m], b[cta, n], k, ta, tb, cv, satfinite)
                else:
                    v = dot_add(a[cta, m], b[cta, n], k, ta, tb, cv, cd, frac_bits, out_frac, zero_exp, min_quantum)
                if per_reg == 1:
                    y[r] = np.uint32(v & 0xFFFFFFFF)
                else:
                    y[r] |= np.uint32((v & 0xFFFF) << (16 * (i % per_reg)))


def expected(kernel, x, c, model=None):
    """What warpsim's model (:mod:`warpsim.isa.dot_add`; ``model`` a :class:`~warpsim.isa.dot_add.DotModel` to try
    instead) gives for ``y`` on inputs ``x``, ``c`` (as :func:`inputs` draws them)."""
    from warpsim.isa.fragments import wgmma_d_map
    at, bt, acc = KERNELS[kernel]
    a, b = operands(kernel, x)
    dmap = wgmma_d_map(N, "f32")
    rows = np.ascontiguousarray(dmap.row[:, :, 0]).astype(np.int64)
    cols = np.ascontiguousarray(dmap.col[:, :, 0]).astype(np.int64)
    model = model or (None if acc == "s32" else model_for(at))
    params = (0, 0, 0, 0) if model is None else (model.frac_bits, model.out_frac, model.zero_exp, model.min_quantum)
    y = np.zeros(c.size, np.uint32)
    _expected(a, b, c, DOT_TYPES[at], DOT_TYPES[bt], DOT_CD[acc], kernel.endswith("satfinite"), *params, rows, cols,
              2 if acc == "f16" else 1, y)
    return y


def collect(kernels, ctas, seed, module_path, stream=None):
    """Run each kernel of ``kernels`` on the GPU (CuPy; the PTX or cubin at ``module_path``) on ``ctas`` CTAs of each
    class; ``{kernel: {"y": uint32[classes, ctas * 128 * R], "digests": [...]}}``."""
    import cupy as cp
    module = cp.RawModule(path=module_path)
    out = {}
    for kernel in kernels:
        fn = module.get_function(kernel)
        ys, digests = [], []
        for cls in CLASSES:
            x, c, digest = inputs(kernel, cls, ctas, seed)
            xd, cd = cp.asarray(x), cp.asarray(c)
            yd = cp.zeros(c.size, cp.uint32)
            fn((ctas,), (128,), (xd, cd, yd))
            cp.cuda.runtime.deviceSynchronize()
            ys.append(cp.asnumpy(yd))
            digests.append(digest)
            if stream is not None:
                stream.write(f"{kernel} {cls}: {ctas} CTAs\n")
        out[kernel] = {"y": np.stack(ys), "digests": digests}
    return out


def compare(data, model=None, mismatches=None):
    """``{kernel: {class: [outputs, mismatched, first mismatches]}}``: the GPU's accumulators in ``data`` (what
    :func:`collect` returns, or :func:`load` reads) against warpsim's model on the same inputs (regenerated from the
    seed; a digest that differs is an error: the inputs would not be the GPU's). ``mismatches``: a dict that gets,
    per ``"kernel.class"``, every differing index and the GPU's bits there (``int64[n, 2]``): with the model's own
    outputs that is the GPU's whole run, for fitting where the model is wrong."""
    out = {}
    for kernel, v in data.items():
        rows = {}
        for ci, cls in enumerate(CLASSES[:len(v["digests"])]):        # a run saved before a class was added
            x, c, digest = inputs(kernel, cls, v["ctas"], v["seed"])
            if digest != v["digests"][ci]:
                raise ValueError(f"wgmma_types: {kernel} {cls}: the inputs' digest differs from the GPU run's "
                                 f"({digest[:12]} here, {v['digests'][ci][:12]} there)")
            want = expected(kernel, x, c, model)
            bad = np.flatnonzero(want != v["y"][ci])
            if mismatches is not None:
                mismatches[f"{kernel}.{cls}"] = np.stack([bad, v["y"][ci][bad].astype(np.int64)], axis=1)
            rows[cls] = [int(want.size), int(bad.size),
                         [[int(i), f"{int(want[i]):#010x}", f"{int(v['y'][ci][i]):#010x}"] for i in bad[:5]]]
        out[kernel] = rows
    return out


def input_types(kernel):
    """The input types a kernel's instructions count for (A's and B's, once each)."""
    at, bt, _ = KERNELS[kernel]
    return (at,) if at == bt else (at, bt)


def neighbours(t):
    """The models next to input type ``t``'s (:func:`~warpsim.isa.dot_add.model_for`), each one parameter moved: the
    fraction bits kept one more or fewer, the f32 result's fraction bits one more or fewer, a zero at MMA-Sim's
    exponent -126. A streamed campaign counts, on a sample of its chunks, the words each would get wrong: a
    neighbour the GPU rules out has a nonzero count. (tf32's floor ``min_quantum`` moves some 10 words in 10^9: a
    sample cannot tell its neighbours; the whole campaign replayed offline does, conformance/h100/
    wgmma-types-stream-seed1/.)"""
    from dataclasses import replace
    m = model_for(t)
    return {"frac_bits-1": replace(m, frac_bits=m.frac_bits - 1), "frac_bits+1": replace(m, frac_bits=m.frac_bits + 1),
            "out_frac-1": replace(m, out_frac=m.out_frac - 1), "out_frac+1": replace(m, out_frac=m.out_frac + 1),
            "zero_exp=-126": replace(m, zero_exp=-126)}


def plan(per_type, chunk, kernels=None):
    """The chunks of a streamed campaign of at least ``per_type`` instructions (one per CTA) for every input type:
    ``[(kernel, class, part, ctas)]``. A type's instructions are shared among the kernels that read it; a kernel reads
    chunks of at most ``chunk`` CTAs (at least one chunk of every class), the classes in turn (chunk ``j`` has class
    ``j % 5``).

    >>> tasks = plan(40, 4, ["s8_s32", "u8_s8_s32"])
    >>> [(k, c, j, n) for k, c, j, n in tasks][:3], len(tasks)
    ([('s8_s32', 'uniform', 0, 4), ('s8_s32', 'finite', 1, 4), ('s8_s32', 'narrow', 2, 4)], 15)
    """
    kernels = list(kernels or KERNELS)
    readers = {}
    for k in kernels:
        for t in input_types(k):
            readers[t] = readers.get(t, 0) + 1
    tasks = []
    for k in kernels:
        ctas = max(-(-per_type // readers[t]) for t in input_types(k))
        size = min(chunk, -(-ctas // len(CLASSES)))       # at least one chunk of every class
        for j in range(-(-ctas // size)):
            tasks.append((k, CLASSES[j % len(CLASSES)], j, min(size, ctas - j * size)))
    return tasks


def sampled(part):
    """Whether chunk ``part`` also runs the model's neighbours (every class, one round of five in four)."""
    return (part // len(CLASSES)) % 4 == 0


def check_chunk(task, seed, run_gpu, kept=8):
    """One chunk of a streamed campaign: its inputs, the GPU's accumulators (``run_gpu(kernel, x, c)``: uint32 like
    ``c``), warpsim's model; ``{"task", "outputs", "mismatched", "first": [[part, index, model, gpu]],
    "neighbours": {name: mismatched} (sampled chunks of float kernels)}``."""
    kernel, cls, part, ctas = task
    x, c, _ = inputs(kernel, cls, ctas, seed, part)
    y = run_gpu(kernel, x, c)
    want = expected(kernel, x, c)
    bad = np.flatnonzero(want != y)
    out = {"task": list(task), "outputs": int(want.size), "mismatched": int(bad.size),
           "first": [[part, int(i), f"{int(want[i]):#010x}", f"{int(y[i]):#010x}"] for i in bad[:kept]],
           "neighbours": {}}
    at = KERNELS[kernel][0]
    if KERNELS[kernel][2] != "s32" and sampled(part):
        for name, m in neighbours(at).items():
            out["neighbours"][name] = int(np.count_nonzero(expected(kernel, x, c, m) != y))
    return out


_GPU = {}


def _worker_start(module_path):
    """A pool worker's CUDA context and module (each worker its own; the parent never touches CUDA); ``None``: no
    GPU, the model stands in for it (``--simulate-only``: checks the plumbing, not the hardware)."""
    if module_path is not None:
        import cupy as cp
        _GPU["module"] = cp.RawModule(path=module_path)


def run_on_gpu(kernel, x, c):
    """``y`` of ``kernel`` on the GPU for inputs ``x``, ``c`` (the worker's module)."""
    import cupy as cp
    fn = _GPU["module"].get_function(kernel)
    xd, cd = cp.asarray(x), cp.asarray(c)
    yd = cp.zeros(c.size, cp.uint32)
    fn((x.size // X_BYTES,), (128,), (xd, cd, yd))
    return cp.asnumpy(yd)


def _gpu_chunk(args):
    return check_chunk(args[0], args[1], run_on_gpu if _GPU else expected)


def summarise(results, per_type, seed):
    """The streamed campaign's totals from its chunks' results: per kernel and class, per input type, the neighbours'
    counts per type."""
    kernels, types, near = {}, {}, {}
    for r in results:
        kernel, cls, _, ctas = r["task"]
        row = kernels.setdefault(kernel, {}).setdefault(cls, {"instructions": 0, "outputs": 0, "mismatched": 0,
                                                               "first": []})
        row["instructions"] += ctas
        row["outputs"] += r["outputs"]
        row["mismatched"] += r["mismatched"]
        row["first"] = (row["first"] + r["first"])[:8]
        for t in input_types(kernel):
            tt = types.setdefault(t, {"instructions": 0, "outputs": 0, "mismatched": 0})
            tt["instructions"] += ctas
            tt["outputs"] += r["outputs"]
            tt["mismatched"] += r["mismatched"]
        at = KERNELS[kernel][0]
        for name, n in r["neighbours"].items():
            cell = near.setdefault(at, {}).setdefault(name, {"outputs": 0, "mismatched": 0})
            cell["outputs"] += r["outputs"]
            cell["mismatched"] += n
    return {"per_type": per_type, "seed": seed, "instructions": sum(r["task"][3] for r in results),
            "outputs": sum(r["outputs"] for r in results), "mismatched": sum(r["mismatched"] for r in results),
            "types": types, "neighbours": near, "kernels": kernels}


def stream(per_type, seed, module_path, workers, chunk=4096, out=None, kernels=None):
    """The streamed campaign on the GPU: :func:`plan`'s chunks over ``workers`` processes (each with its CUDA context;
    inputs, GPU run, model and comparison in the worker), progress on ``out``; :func:`summarise`'s dict.
    ``module_path`` None: the model in place of the GPU (no CUDA)."""
    import multiprocessing
    import time
    tasks = plan(per_type, chunk, kernels)
    for k in {t[0] for t in tasks}:                   # Numba's code compiled once, here, before the workers load it
        x, c, _ = inputs(k, "narrow", 1, seed, 0)
        expected(k, x, c)
    start, results, done, stopped = time.time(), [], 0, False
    with multiprocessing.get_context("spawn").Pool(workers, _worker_start, (module_path,)) as pool:
        try:
            for r in pool.imap_unordered(_gpu_chunk, [(t, seed) for t in tasks]):
                results.append(r)
                done += r["task"][3]
                if out is not None and (len(results) % 20 == 0 or len(results) == len(tasks)):
                    out.write(f"wgmma: {len(results)}/{len(tasks)} chunks, {done:,} instructions, "
                              f"{sum(x['mismatched'] for x in results):,} words differ, {time.time() - start:.0f} s\n")
                    out.flush()
        except Stopped:                                # SIGTERM (a time limit): report the chunks that are done
            stopped = True
            pool.terminate()
    result = summarise(results, per_type, seed)
    result["complete"] = not stopped and len(results) == len(tasks)
    return result


class Stopped(Exception):
    """Raised in the parent by SIGTERM while a streamed campaign runs: the chunks done so far are still reported."""


def _stop(signum, frame):
    raise Stopped()


def load(paths):
    """The runs saved by ``--out`` files: ``{kernel: {"y", "digests", "ctas", "seed"}}``."""
    data = {}
    for path in paths:
        with np.load(path) as z:
            for kernel in KERNELS:
                if f"{kernel}.y" in z:
                    data[kernel] = {"y": z[f"{kernel}.y"], "digests": [str(d) for d in z[f"{kernel}.digests"]],
                                    "ctas": int(z["ctas"]), "seed": int(z["seed"])}
    return data


def main(argv=None, command=None):
    """``python -m hwcheck.campaigns.wgmma_types --module FILE --out FILE.npz [--ctas N] [--seed S]``: collect on the
    GPU; ``--compare FILE.npz ... [--report FILE.json]``: compare saved runs with warpsim's model."""
    import argparse
    import json
    import sys
    p = argparse.ArgumentParser(prog="python -m hwcheck.campaigns.wgmma_types")
    p.add_argument("--module", help="the PTX (or cubin) of examples/hopper/wgmma_types.cu for sm_90a")
    p.add_argument("--out", help="the .npz to write the GPU's accumulators to")
    p.add_argument("--ctas", type=int, default=768)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--kernels", default=",".join(KERNELS))
    p.add_argument("--compare", nargs="+", metavar="NPZ", help="saved runs to compare with warpsim's model")
    p.add_argument("--report", help="with --compare: the JSON report to write")
    p.add_argument("--mismatches", help="with --compare: an .npz of every differing index and the GPU's bits")
    p.add_argument("--per-type", type=int, metavar="N", help="stream: at least N instructions per input type, compared "
                   "in the workers as they run (with --module and --report; no .npz)")
    p.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 1), help="with --per-type: processes")
    p.add_argument("--chunk", type=int, default=4096, help="with --per-type: CTAs per chunk")
    p.add_argument("--simulate-only", action="store_true",
                   help="with --per-type: no GPU, the model in its place (checks the plumbing, not the hardware)")
    a = p.parse_args(argv)
    if a.per_type is not None:
        return _stream_main(a, argv, command)
    if a.compare:
        every = {} if a.mismatches else None
        try:
            result = compare(load(a.compare), mismatches=every)
        except (OSError, ValueError, KeyError) as e:       # a missing or foreign file, inputs of another seed
            sys.stderr.write(f"wgmma_types --compare: {e}\n")
            return 2
        if a.mismatches:                           # at most MISMATCHES_KEPT of each kernel and class
            np.savez_compressed(a.mismatches, **{k: v[:MISMATCHES_KEPT] for k, v in every.items()})
        total = sum(r[0] for rows in result.values() for r in rows.values())
        bad = sum(r[1] for rows in result.values() for r in rows.values())
        for kernel, rows in result.items():
            sys.stdout.write(f"{kernel}: " + ", ".join(f"{c} {r[1]}/{r[0]}" for c, r in rows.items()) + "\n")
        sys.stdout.write(f"wgmma types: {total} outputs, {bad} differ from warpsim's model\n")
        if a.report:
            with open(a.report, "w") as f:
                json.dump({"outputs": total, "mismatched": bad, "kernels": result}, f, indent=1)
        return 1 if bad else 0
    if not a.module or not a.out:
        p.error("--module and --out are needed to collect (or --compare to compare)")
    data = collect(a.kernels.split(","), a.ctas, a.seed, a.module, sys.stdout)
    flat = {}
    for k, v in data.items():
        flat[f"{k}.y"] = v["y"]
        flat[f"{k}.digests"] = np.array(v["digests"])
    np.savez_compressed(a.out, seed=a.seed, ctas=a.ctas, **flat)
    return 0


def _stream_main(a, argv, command):
    import sys
    from hwcheck.report import command_line, new_report, write_json_atomic
    kernels = a.kernels.split(",")
    unknown = [k for k in kernels if k not in KERNELS]
    problem = ("--per-type needs --module (or --simulate-only) and --report"
               if not (a.module or a.simulate_only) or not a.report else
               "--per-type, --workers and --chunk must be positive" if min(a.per_type, a.workers, a.chunk) < 1 else
               f"--module: no such file: {a.module}" if a.module and not os.path.isfile(a.module) else
               f"--kernels: unknown {', '.join(unknown)} (known: {', '.join(KERNELS)})" if unknown else None)
    if problem:
        sys.stderr.write(f"wgmma_types {problem}\n")
        return 2
    import signal
    signal.signal(signal.SIGTERM, _stop)
    result = stream(a.per_type, a.seed, None if a.simulate_only else a.module, a.workers, a.chunk, sys.stdout, kernels)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if command is None:
        command = "python -m hwcheck.campaigns.wgmma_types " + command_line(argv)[len("hwcheck "):]
    report = new_report(command,
                        None if a.simulate_only else _gpu_info())
    report["simulate_only"] = a.simulate_only
    status = "fail" if result["mismatched"] else "pass" if result["complete"] else "partial"
    report.update(kind="wgmma-types-stream", status=status, **result)
    write_json_atomic(a.report, report)
    for t, v in result["types"].items():
        sys.stdout.write(f"{t}: {v['instructions']:,} instructions, {v['outputs']:,} words, {v['mismatched']:,} differ\n")
    for t, rows in result["neighbours"].items():
        sys.stdout.write(f"{t} neighbours: " + ", ".join(f"{n} {v['mismatched']:,}/{v['outputs']:,}"
                                                          for n, v in rows.items()) + "\n")
    sys.stdout.write(f"wgmma types: {result['instructions']:,} instructions, {result['outputs']:,} words, "
                     f"{result['mismatched']:,} differ from warpsim's model"
                     f"{'' if result['complete'] else ' (stopped before the end)'}; report {a.report}\n")
    return 0 if status == "pass" else 1


def _gpu_info():
    """The GPU's name, compute capability and driver (CuPy), or None; the parent touches CUDA only here, after the
    workers are done."""
    try:
        import cupy as cp
        props = cp.cuda.runtime.getDeviceProperties(0)
        return {"name": props["name"].decode(), "cc": f"{props['major']}.{props['minor']}",
                "driver": cp.cuda.runtime.driverGetVersion()}
    except Exception:                                   # noqa: BLE001 -- a report without the GPU's name still stands
        return None


if __name__ == "__main__":
    raise SystemExit(main())
