"""The PTX examples of the acceptance set: every CuTe C++, CuTe DSL and directed PTX kernel of ``examples/``, with
the launch and the arguments hwcheck runs it with (``random:`` arguments are new per seed).

:func:`run_ptx_examples` checks each on a GPU (``hwcheck acceptance --only ptx``, or as part of ``all``) into
``NAME-ptx-programs.json``; the offline tests run the same list with the simulator standing in for the GPU.

:data:`FLASH_EXAMPLES` are the CuTe C++ flash-attention forward's kernels (``examples/cute_cpp/flash_fwd.cu``
and its ``--use_fast_math`` build ``flash_fwd_fast_math.cu``): every variant of both builds, one launch each,
the launches together covering B 1..2, H 1..2 and N up to 512 with and without a tail. They are bigger than
the others (seconds of simulation per seed, thousands of trace records per thread: :data:`FLASH_TRACE_CAPACITY`),
so they are a set of their own: ``hwcheck acceptance --only flash`` into ``NAME-flash-programs.json``, or
one ``hwcheck run`` each (:func:`example_commands`). :data:`FLASH_DSL_EXAMPLES` are the CuTe DSL version's eight
variants at the same launches as the C++ plain build's (``--only flash-dsl``, ``NAME-flash-dsl-programs.json``);
:data:`PTX_EXAMPLES` holds them at small sizes.

:data:`CORPUS_EXAMPLES` are the launches of the corpus of real compilers' PTX (``tests/corpus``: nvcc, CuTe DSL,
Triton and Numba output for kernels of ours, read from its manifest), the files the simulator does not run yet
left out: ``hwcheck acceptance --only corpus --seeds 10`` into ``NAME-corpus-programs.json``. Triton's sm_90 files
are PTX ISA 9.4, which a CUDA 13.0 driver's JIT refuses: the GPU runs them as cubins of a ptxas that takes 9.4
(Triton's own, or a CUDA 13.4 toolkit's; :func:`warpsim.ptx.contraction.find_ptxas`), so the device needs one.

>>> len(PTX_EXAMPLES) >= 15, all(e[0].startswith("examples/") for e in PTX_EXAMPLES)
(True, True)
>>> len(FLASH_EXAMPLES), FLASH_EXAMPLES[0][1:5]
(16, ('flash_fwd_f16_d64', '2,2,2', 128, 40960))
>>> [(e[1], e[2]) for e in FLASH_DSL_EXAMPLES[:2]]
[('flash_fwd_f16_d64', '2,2,2'), ('flash_fwd_f16_d64_causal', '8,1,1')]
"""

from __future__ import annotations

import os
import re
from itertools import product

import numpy as np

from hwcheck.report import REPO_ROOT as ROOT

__all__ = ["PTX_EXAMPLES", "FLASH_EXAMPLES", "FLASH_DSL_EXAMPLES", "AS_COMPILED_EXAMPLES", "HOPPER_EXAMPLES",
           "HOPPER_TMA_EXAMPLES", "FLASH_BENCH_EXAMPLE",
           "FLASH_BENCH_REPORT", "FLASH_TRACE_CAPACITY", "ROOT", "ptx_jobs", "example_commands", "flash_bench_command",
           "reported_gpu_time", "run_ptx_examples", "CORPUS_EXAMPLES"]

_U32 = ["x=random:u32:128", "y=zeros:u32:128"]


def _gemm_smem():
    out = []
    for dtype in ("f16", "bf16"):
        for product, second, result in (("qk", "k", "s"), ("pv", "v", "o")):
            for layout in ("swizzle", "plain"):
                out.append(("examples/cute_cpp/gemm_smem.cu", f"gemm_smem_{dtype}_{product}_{layout}", 1, 128, 0,
                            [f"q=random:{dtype}:64x64", f"{second}=random:{dtype}:64x64", f"{result}=zeros:f32:64x64"]))
    return out


# (B, H, N) of the flash launches, taken in turn by the variants (f16/bf16 x d 64/128 x causal or not) of the
# plain build and, shifted by half, of the fast-math one: each variant meets two shapes, and every B, H, a
# multiple of 64 and a tail up to N = 512
_FLASH_SHAPES = ((2, 2, 80), (1, 1, 512), (1, 2, 130), (2, 1, 200), (2, 1, 128), (2, 2, 256), (1, 1, 320), (1, 2, 100))
FLASH_TRACE_CAPACITY = 16384     # trace records per thread: a CTA of N = 512 writes registers ~10^4 times a thread


def _flash_launch(source, dtype, d, causal, B, H, N):
    """One launch of a CuTe C++ flash kernel (``examples/cute_cpp/SOURCE``) with the recipe's arguments."""
    softmax_scale = np.float32(1.0 / np.sqrt(d))
    scale_log2 = softmax_scale * np.float32(1.4426950408889634)     # both rounded to f32, as the recipe says
    shape = f"{B}x{H}x{N}x{d}"
    return (f"examples/cute_cpp/{source}", f"flash_fwd_{dtype}_d{d}{'_causal' if causal else ''}",
            f"{-(-N // 64)},{H},{B}", 128, 5 * 64 * d * 2,
            [f"q=random:{dtype}:{shape}", f"k=random:{dtype}:{shape}", f"v=random:{dtype}:{shape}",
             f"o=zeros:{dtype}:{shape}", f"lse=zeros:f32:{B}x{H}x{N}", f"N={N}",
             f"scale_log2={float(scale_log2)!r}", f"softmax_scale={float(softmax_scale)!r}"])


def _flash():
    variants = list(product(("f16", "bf16"), (64, 128), (False, True)))
    out = []
    for build, source in enumerate(("flash_fwd.cu", "flash_fwd_fast_math.cu")):
        for i, (dtype, d, causal) in enumerate(variants):
            B, H, N = _FLASH_SHAPES[(i + build * len(variants) // 2) % len(_FLASH_SHAPES)]
            out.append(_flash_launch(source, dtype, d, causal, B, H, N))
    return tuple(out)


_DSL_SMALL = ((1, 2, 80), (1, 1, 200), (2, 1, 64), (1, 1, 128), (2, 1, 128), (2, 2, 80), (1, 1, 80), (1, 2, 80))


def _flash_dsl(shapes=_DSL_SMALL):
    """The eight variants of ``examples/cute_dsl/flash_fwd.py`` (T x d x causal), variant ``i`` at ``(B, H, N) =
    shapes[i]``; the scales as the recipe computes them, written exactly. By default one small size each of
    B=1..2, H=1..2, N=64..200 (tails included; a few CTA-tiles each, as the simulator runs every seed too);
    :data:`FLASH_DSL_EXAMPLES` takes the C++ plain build's shapes, up to N = 512."""
    sizes = iter(shapes)
    out = []
    for dtype in ("f16", "bf16"):
        for d in (64, 128):
            softmax_scale = np.float32(1 / np.sqrt(d))
            scale_log2 = softmax_scale * np.float32(1.4426950408889634)
            smem = (64 + 4 * 64) * d * 2               # Q and two stages of K and V: flash_fwd.smem_bytes(d)
            for causal in (False, True):
                batches, heads, n = next(sizes)
                shape = f"{batches}x{heads}x{n}x{d}"
                out.append(("examples/cute_dsl/flash_fwd.py", f"flash_fwd_{dtype}_d{d}" + ("_causal" if causal else ""),
                            f"{(n + 63) // 64},{heads},{batches}", 128, smem,
                            [f"q=random:{dtype}:{shape}", f"k=random:{dtype}:{shape}", f"v=random:{dtype}:{shape}",
                             f"o=zeros:u16:{shape}", f"lse=zeros:f32:{batches}x{heads}x{n}", f"N={n}",
                             f"scale_log2={float(scale_log2)!r}", f"softmax_scale={float(softmax_scale)!r}"]))
    return out


# (source, kernel, grid, block, dynamic smem bytes, --arg values)
PTX_EXAMPLES = (
    ("examples/ptx/add_index.ptx", "add_index", 2, 128, 0, ["x=random:u32:256", "y=zeros:u32:256", "n=250"]),
    ("examples/ptx/warp_pairs.ptx", "warp_pairs", 2, 64, 0, _U32),
    ("examples/ptx/func_smem.ptx", "func_smem", 2, 64, 0, _U32),
    ("examples/ptx/directed.cu", "diverge", 2, 64, 0, _U32),
    ("examples/ptx/directed.cu", "warp_ops", 2, 64, 0, _U32),
    ("examples/ptx/directed.cu", "atomics", 2, 64, 0, ["x=random:u32:128", "counts=zeros:u32:2", "y=zeros:u32:128"]),
    ("examples/ptx/directed.cu", "cp_async", 2, 64, 0, ["x=random:u32:512", "y=zeros:u32:512"]),
    ("examples/ptx/directed.cu", "say", 2, 64, 0, _U32),
    ("examples/ptx/directed.cu", "calls", 2, 64, 0, _U32),
    ("examples/ptx/directed.cu", "sfu", 2, 64, 0, _U32),
    *_gemm_smem(),
    ("examples/cute_cpp/gemm_k8_warps2x2.cu", "gemm_k8_warps2x2", 1, 128, 0,
     ["a=random:f16:32x32", "b=random:f16:32x32", "c=zeros:f32:32x32", "K=32"]),
    ("examples/cute_cpp/gemm_f16acc_warps1x2.cu", "gemm_f16acc_warps1x2", 1, 64, 0,
     ["a=random:f16:16x64", "b=random:f16:32x64", "c=zeros:u16:16x32", "K=64"]),
    ("examples/cute_dsl/copy_dsl.py", "copy_kernel", 8, 128, 0, ["src=random:f32:1024", "dst=zeros:f32:1024"]),
    ("examples/cute_dsl/mma_ldmatrix_dsl.py", "mma_kernel", 1, 32, 768,
     ["a=random:f16:16x16", "b=random:f16:8x16", "c=zeros:f32:16x8"]),
    ("examples/cute_dsl/tile_cp_async_dsl.py", "tile_kernel", 1, 128, 8192,
     ["a=random:f16:64x64;s32:64;s32:64", "b=random:f16:64x64;s32:64;s32:64", "c=zeros:f32:64x64"]),
    *_flash_dsl(),
)

FLASH_EXAMPLES = _flash()
# the CuTe DSL kernels at the launches of the C++ plain build (B 1..2, H 1..2, N 80..512 with tails): variant for
# variant the same shapes as FLASH_EXAMPLES[:8], so the two implementations meet on the same launches
FLASH_DSL_EXAMPLES = tuple(_flash_dsl(_FLASH_SHAPES))


def _as_compiled():
    """The kernels of ``examples/cute_cpp/as_compiled/`` (nvcc's default flags, FMA contraction left to the
    compilers): the flash forward causal and not at N 128, 300 and 1024 (B, H 1..2), the others at 2-3 sizes;
    float inputs uniform in [-2, 2) (``random:DTYPE:SHAPE:2``)."""
    src = "examples/cute_cpp/as_compiled/"
    flash = [_flash_launch("as_compiled/flash_attn_fwd.cu", "f16", 64, causal, B, H, N)
             for causal, shapes in ((False, ((2, 2, 128), (1, 2, 300), (1, 1, 1024))),
                                    (True, ((2, 1, 128), (2, 2, 300), (1, 1, 1024)))) for B, H, N in shapes]
    gemm = [(src + "gemm_alpha_beta.cu", f"gemm_tn_{t}", f"{M // 64},{N // 64}", 128, 0,
             [f"a=random:f16:{M}x{K}", f"b=random:f16:{N}x{K}", f"c=random:{t}:{M}x{N}", f"M={M}", f"N={N}",
              f"K={K}", f"alpha={alpha}", f"beta={beta}"])
            for t, M, N, K, alpha, beta in (("f32", 64, 64, 32, 1.5, -0.75), ("f32", 128, 192, 96, 0.5, 1.0),
                                            ("f32", 256, 128, 256, 1.0, 0.0), ("f16", 64, 128, 64, 1.5, -0.75),
                                            ("f16", 192, 64, 128, 0.25, 2.0))]
    softmax = [(src + "softmax.cu", "softmax_rows", -(-rows // 4), 128, 0,
                [f"x=random:f32:{rows}x{cols}", f"y=zeros:f32:{rows}x{cols}", f"rows={rows}", f"cols={cols}"])
               for rows, cols in ((5, 100), (8, 1024), (33, 1000))]
    layer_norm = [(src + "layer_norm.cu", "layer_norm_fwd", rows, 128, 0,
                   [f"x=random:f16:{rows}x{cols}", f"gamma=random:f16:{cols}", f"beta=random:f16:{cols}",
                    f"y=zeros:f16:{rows}x{cols}", f"mean=zeros:f32:{rows}", f"rstd=zeros:f32:{rows}",
                    f"rows={rows}", f"cols={cols}", "eps=1e-05"])
                  for rows, cols in ((3, 100), (4, 768), (8, 4096))]
    rms_norm = [(src + "rms_norm.cu", "rms_norm_fwd", -(-rows // 4), 128, 0,
                 [f"x=random:f32:{rows}x{cols}", f"weight=random:f32:{cols}", f"y=zeros:f32:{rows}x{cols}",
                  f"rows={rows}", f"cols={cols}", "eps=1e-06"])
                for rows, cols in ((3, 100), (8, 512), (13, 2048))]
    wide = lambda arg: arg + ":2" if re.match(r"\w+=random:(f16|bf16|f32|f64):", arg) else arg   # noqa: E731
    return tuple((*e[:5], [wide(a) for a in e[5]]) for e in flash + gemm + softmax + layer_norm + rms_norm)


# the kernels written as users write them, built with nvcc's defaults (``--only as-compiled``), run with
# FLASH_TRACE_CAPACITY: a thread of the flash kernel at N = 1024 writes ~12,300 registers
AS_COMPILED_EXAMPLES = _as_compiled()


def _hopper():
    """The wgmma probes of ``examples/hopper/wgmma_probe.cu`` (``-arch=sm_90a``): each of its ten CuTe GMMA atoms on
    96 CTAs (every pair of descriptor layouts, three start offsets, scale-d true and false; ``x`` the shared
    memory's 16-bit values, ``c`` the accumulators' initial bits, ``y`` their final bits, R registers a thread)."""
    kernels = (("ss_f32_f16_n64_k_k", 32), ("ss_f32_f16_n64_k_mn", 32), ("ss_f32_f16_n64_mn_k", 32),
               ("ss_f32_f16_n64_mn_mn", 32), ("ss_f32_f16_n256_k_mn", 128), ("ss_f32_f16_n24_mn_k", 12),
               ("ss_f32_bf16_n64_k_mn", 32), ("ss_f16_f16_n64_k_k", 16), ("ss_f32_f16_n16_neg", 8),
               ("rs_f32_f16_n32_k_mn", 16))
    out = []
    for name, regs in kernels:
        words = 96 * 128 * regs
        c = f"c=random:f16:{2 * words}" if name.startswith("ss_f16") else f"c=random:f32:{words}"
        x = "x=random:bf16:24576" if "bf16" in name else "x=random:f16:24576"
        out.append(("examples/hopper/wgmma_probe.cu", name, 96, 128, 0, [x, c, f"y=zeros:u32:{words}"]))
    return tuple(out)


def _hopper_tma():
    """The TMA kernels of ``examples/hopper/`` (``-arch=sm_90a``): ``tma_copy.cu``'s box loads in every swizzle mode
    (partial boxes that the TMA fills with zeros; the shared bytes as they lie) and its box stores (clipped to the
    tensor), and ``tma_gemm.cu``'s TMA + mbarrier + wgmma GEMM at five sizes (one tile; several; partial tiles),
    C written from registers or by a TMA store, and its warp-specialised four-stage version (setmaxnreg, elect.sync);
    ``tma_multicast.cu``: clusters of two CTAs sharing a tile by TMA multicast, distributed shared memory, a remote
    mbarrier arrive and ``barrier.cluster``; ``cluster_histogram.cu``: cooperative_groups' distributed shared memory
    (``map_shared_rank`` + ``atomicAdd``, ``query_shared_rank``); the bulk reductions (``tma_copy.cu``'s
    ``tile_reduce_add``, ``bulk_reduce.cu``: ``cp.reduce.async.bulk`` on every bit pattern, into global memory and
    into the peer CTA); and ``examples/cute_dsl/wgmma_gemm_dsl.py``, a CuTe DSL GEMM tile on
    the warpgroup MMA."""
    out = []
    for box, swizzle, dtype, shape in (((64, 32), "64B", "f16", (96, 128)), ((16, 16), "32B", "f16", (40, 56)),
                                       ((64, 64), "128B", "f16", (100, 200)), ((32, 24), "none", "f32", (70, 100)),
                                       ((64, 32), "128B", "f32", (100, 64))):
        grid = (-(-shape[1] // box[1]), -(-shape[0] // box[0]))
        nbytes = box[0] * box[1] * (2 if dtype == "f16" else 4)
        words = grid[0] * grid[1] * nbytes // 4
        spec = f"map=tensormap:{box[0]}x{box[1]}:{swizzle}:random:{dtype}:{shape[0]}x{shape[1]}"
        out.append(("examples/hopper/tma_copy.cu", "tile_load", f"{grid[0]},{grid[1]}", 128, nbytes,
                    [spec, f"out=zeros:u32:{words}", f"box0={box[1]}", f"box1={box[0]}", f"bytes={nbytes}"]))
        if swizzle in ("128B", "none") and dtype == "f16" or swizzle == "none":
            spec = spec.replace(":random:", ":zeros:")
            out.append(("examples/hopper/tma_copy.cu", "tile_store", f"{grid[0]},{grid[1]}", 128, nbytes,
                        [spec, f"in=random:u32:{words}", f"box0={box[1]}", f"box1={box[0]}", f"bytes={nbytes}"]))
    for kernel, M, N, K in (("gemm_tn", 64, 64, 64), ("gemm_tn", 128, 192, 256), ("gemm_tn", 100, 148, 200),
                            ("gemm_tn_tma_store", 128, 192, 256), ("gemm_tn_tma_store", 100, 148, 200),
                            ("gemm_tn_ws", 100, 148, 456)):
        maps = [f"tma_a=tensormap:64x64:128B:random:f16:{M}x{K}", f"tma_b=tensormap:64x64:128B:random:f16:{N}x{K}"]
        maps += ([f"tma_c=tensormap:64x64:none:zeros:f32:{M}x{N}"] if kernel == "gemm_tn_tma_store"
                 else [f"c=zeros:f32:{M}x{N}"])
        out.append(("examples/hopper/tma_gemm.cu", kernel, f"{-(-N // 64)},{-(-M // 64)}", 256,
                    66560 if kernel == "gemm_tn_ws" else 50176, maps + [f"M={M}", f"N={N}", f"K={K}"]))
    for (rows, cols), (box_rows, box_cols) in (((64, 40), (16, 32)), ((48, 20), (8, 16))):
        ctas = rows // box_rows                          # clusters of two: each CTA loads half of its cluster's tile
        nbytes = 2 * box_rows * box_cols * 4
        out.append(("examples/hopper/tma_multicast.cu", "tile_multicast", str(ctas), 128, nbytes,
                    [f"map=tensormap:{box_rows}x{box_cols}:none:random:f32:{rows}x{cols}",
                     f"out=zeros:u32:{ctas * nbytes // 4}", f"peer=zeros:u32:{ctas}", f"arrivals=zeros:u32:{ctas // 2}",
                     f"box_rows={box_rows}", f"bytes={nbytes}"]))
    for shape, box, swizzle in (((40, 56), (16, 32), "none"), ((100, 64), (64, 32), "128B")):   # TMA reduce-add
        grid = (-(-shape[1] // box[1]), -(-shape[0] // box[0]))
        nbytes = box[0] * box[1] * 4
        out.append(("examples/hopper/tma_copy.cu", "tile_reduce_add", f"{grid[0]},{grid[1]}", 128, nbytes,
                    [f"map=tensormap:{box[0]}x{box[1]}:{swizzle}:random:f32:{shape[0]}x{shape[1]}",
                     f"in=random:u32:{grid[0] * grid[1] * nbytes // 4}", f"box0={box[1]}", f"box1={box[0]}",
                     f"bytes={nbytes}"]))
    for kernel, bits in (("reduce_add_f32", 32), ("reduce_add_f64", 64), ("reduce_add_f16", 16),
                         ("reduce_add_u32", 32), ("reduce_min_s32", 32), ("reduce_max_u64", 64),
                         ("reduce_inc_u32", 32), ("reduce_xor_b64", 64), ("reduce_add_peer", 32)):
        n = 256                                          # every bit pattern: NaNs, infinities, subnormals among them
        out.append(("examples/hopper/bulk_reduce.cu", kernel, "4", 64, (2 if kernel.endswith("peer") else 1) * n * bits // 8,
                    [f"out=random:u{bits}:{4 * n}", f"in=random:u{bits}:{4 * n}", f"n={n}"]))
    for ctas, n, nbins in ((4, 3000, 256), (8, 10000, 1024)):   # cooperative_groups: map_shared_rank + atomicAdd
        out.append(("examples/hopper/cluster_histogram.cu", "cluster_histogram", str(ctas), 128, 2 * nbins,
                    [f"input=random:i32:{n}", f"bins=zeros:i32:{ctas // 2}x{nbins}", f"ranks=zeros:u32:{2 * ctas}",
                     f"n={n}", f"nbins={nbins}"]))
    for depth in (64, 192):                              # CuTe DSL's warpgroup MMA: one k-tile, three
        out.append(("examples/cute_dsl/wgmma_gemm_dsl.py", "wgmma_kernel", 1, 128, 16384,
                    [f"a=random:f16:64x{depth};s32:{depth};s32:{depth}",
                     f"b=random:f16:64x{depth};s32:{depth};s32:{depth}", "c=zeros:f32:64x64"]))
    return tuple(out)


# Hopper's wgmma through CuTe's SM90 GMMA atoms, directed at the descriptor's layouts (``--only hopper``)
HOPPER_EXAMPLES = _hopper()
# the TMA, its mbarriers and the GEMMs built on them (``--only hopper-tma``)
HOPPER_TMA_EXAMPLES = _hopper_tma()
# the launch bench/bench_flash.py simulates (f16, d = 64, not causal, B = 1, H = 2, N = 512), whose GPU time the
# benchmark prints beside the simulator's once a committed report has it (its command: FLASH_BENCH_COMMAND)
FLASH_BENCH_EXAMPLE = _flash_launch("flash_fwd.cu", "f16", 64, False, 1, 2, 512)


# the corpus of real compilers' PTX (tests/corpus/manifest.py; ``--only corpus``), read from its manifest; the
# default trace capacity (4096 records a thread) holds every register write of its kernels (the most: ~3,400)
CORPUS_MANIFEST = os.path.join(ROOT, "tests", "corpus", "manifest.py")


def _corpus(manifest_path=CORPUS_MANIFEST):
    """Every launch of every corpus file (``tests/corpus``) that the simulator runs here (``KNOWN_FAILURES`` left
    out), as :data:`PTX_EXAMPLES` tuples: parameters by position, ``random:`` for the inputs (new per seed, hwcheck's
    ranges), ``zeros:`` for the outputs, the scalars as given; () where the manifest is absent (an installed
    package)."""
    import importlib.util
    import sys
    if not os.path.exists(manifest_path):
        return ()
    folder = os.path.dirname(manifest_path)
    sys.path.insert(0, folder)                   # the manifest imports its references module
    try:
        spec = importlib.util.spec_from_file_location("warpsim_corpus_manifest", manifest_path)
        manifest = sys.modules[spec.name] = importlib.util.module_from_spec(spec)     # for its dataclasses
        spec.loader.exec_module(manifest)
    finally:
        sys.path.remove(folder)
    out = []
    for entry in manifest.CORPUS:
        if manifest.known_failure(entry):
            continue
        for launch in entry.launches:
            args = []
            for i, (kind, spec) in enumerate(manifest.parameters(launch)):
                if kind == "scalar":
                    args.append(f"{i}={spec!r}")
                else:
                    shape = "x".join(map(str, spec.shape))
                    args.append(f"{i}={'random' if isinstance(spec, manifest.In) else 'zeros'}:{spec.dtype}:{shape}")
            out.append((os.path.relpath(entry.path, ROOT), launch.kernel, ",".join(map(str, launch.grid)),
                        ",".join(map(str, launch.block)), launch.smem, args))
    return tuple(out)


CORPUS_EXAMPLES = _corpus()


def ptx_jobs(examples=None, root=ROOT):
    """:class:`hwcheck.runs.ptx_run.PtxJob` of each example (default :data:`PTX_EXAMPLES`; paths made absolute
    under ``root``)."""
    from hwcheck.runs.ptx_run import PtxJob
    from warpsim.frontends.args import parse_arg
    from warpsim.frontends.kernel import parse_dim3
    examples = PTX_EXAMPLES if examples is None else examples
    return [PtxJob(os.path.join(root, src), kernel, parse_dim3(grid), parse_dim3(block), smem,
                   dict(parse_arg(a) for a in args)) for src, kernel, grid, block, smem, args in examples]


def _command(example, seeds, seed, capacity=None):
    from hwcheck.report import command_line
    src, kernel, grid, block, smem, args = example
    argv = ["run", src, "--kernel", kernel, "--grid", str(grid), "--block", str(block), "--smem", str(smem)]
    for a in args:
        argv += ["--arg", a]
    more = ["--trace-capacity", str(capacity)] if capacity else []
    return command_line(argv + ["--seeds", str(seeds), "--seed", str(seed), *more])


def example_commands(examples=FLASH_EXAMPLES, seeds=10, seed=0, capacity=FLASH_TRACE_CAPACITY):
    """The ``hwcheck run`` command line of each example (as its report records it), e.g. to run the flash
    kernels one at a time."""
    return [_command(e, seeds, seed, capacity) for e in examples]


FLASH_BENCH_REPORT = "conformance/h200/h200-flash-bench.json"


def flash_bench_command(report=FLASH_BENCH_REPORT):
    """The command (from the repository root, on a machine with the GPU) that checks :data:`FLASH_BENCH_EXAMPLE`
    bit for bit for 2 seeds and times it (``gpu_kernel_ms``) into ``report``.

    >>> flash_bench_command().split(" --")[:3]
    ['python -m hwcheck run examples/cute_cpp/flash_fwd.cu', 'kernel flash_fwd_f16_d64', 'grid 8,2,1']
    """
    return (f"python -m hwcheck {_command(FLASH_BENCH_EXAMPLE, 2, 0, FLASH_TRACE_CAPACITY)[len('hwcheck '):]} "
            f"--report {report}")


def reported_gpu_time(example=FLASH_BENCH_EXAMPLE, folder=os.path.join(ROOT, "conformance")):
    """``(milliseconds, report path under ROOT, GPU name, timed launches)``: the GPU time (``gpu_kernel_ms``) of
    ``example`` in the newest hwcheck PTX report under ``folder`` that ran it (the same source file, kernel,
    launch and ``--arg`` specs) and timed it; None where none did."""
    import glob
    import json
    from hwcheck.runs.ptx_run import PtxRun
    want = PtxRun(ptx_jobs([example])[0]).as_dict()
    found = None
    for path in sorted(glob.glob(os.path.join(folder, "**", "*.json"), recursive=True)):
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or data.get("kind") != "ptx-programs":
            continue
        for run in data.get("runs") or []:
            if (isinstance(run, dict) and str(run.get("source", "")).endswith(example[0])
                    and all(run.get(k) == want[k] for k in ("kernel", "grid", "block", "smem", "args"))
                    and isinstance(run.get("gpu_kernel_ms"), (int, float))
                    and (found is None or str(data.get("date", "")) > found[0])):
                found = (str(data.get("date", "")), float(run["gpu_kernel_ms"]), os.path.relpath(path, ROOT),
                         (data.get("gpu") or {}).get("name", "a GPU"), run.get("gpu_timed_launches"))
    return None if found is None else found[1:]


def run_ptx_examples(gpu, *, report, seeds=20, seed=0, log=None, examples=None, workers=1, capacity=4096,
                     ptxas="auto", trace=True):
    """Every example of ``examples`` (default :data:`PTX_EXAMPLES`) on ``gpu`` (a :class:`hwcheck.device.gpu.Gpu`),
    ``seeds`` seeds each, register trace on (``capacity`` records per thread; ``trace=False``: buffers only), in
    ``workers`` processes, the simulator's contraction decided by ``ptxas`` (``"none"``: without, beside the GPU's
    real code); returns ``(runs, status, error, exit status)`` of :func:`hwcheck.runs.ptx_run.check_ptx`."""
    from hwcheck.arch import model_arch
    from hwcheck.runs.ptx_run import CupyPtx, check_ptx, open_cupy_ptx
    examples = PTX_EXAMPLES if examples is None else examples
    more = (" --ptxas " + ptxas if ptxas != "auto" else "") + ("" if trace else " --no-trace")
    command = " ; ".join(_command(e, seeds, seed, capacity if capacity != 4096 else None) + more for e in examples)
    return check_ptx(CupyPtx(gpu), ptx_jobs(examples), seeds=seeds, first_seed=seed,
                     arch=model_arch(gpu.info.compute_capability), capacity=capacity, trace=trace,
                     report=report, command=command, gpu_info=gpu.info.as_dict(), log=log, workers=workers,
                     make_gpu_ptx=open_cupy_ptx, ptxas=ptxas)


def main(argv=None) -> int:
    """``python -m hwcheck.runs.ptx_examples --export DIR [--arch sm_90]``: write the examples' PTX into DIR, for a GPU
    machine without nvcc, the CuTe headers or the CuTe DSL (run there with ``HWCHECK_PTX_DIR=DIR``)."""
    import argparse
    import sys
    from hwcheck.runs.ptx_run import export_ptx
    parser = argparse.ArgumentParser(prog="python -m hwcheck.runs.ptx_examples")
    parser.add_argument("--export", required=True, metavar="DIR")
    parser.add_argument("--arch", default="sm_90")
    args = parser.parse_args(argv)
    try:
        examples = (*PTX_EXAMPLES, *FLASH_EXAMPLES, *AS_COMPILED_EXAMPLES, *HOPPER_EXAMPLES,
                    *HOPPER_TMA_EXAMPLES)
        paths = export_ptx([os.path.join(ROOT, e[0]) for e in examples], args.export, args.arch)
    except Exception as e:   # CompileError, HwcheckError, a bad --arch: one line
        sys.stderr.write(f"hwcheck ptx export: {e}\n")
        return 2
    sys.stdout.write(f"wrote {len(paths)} PTX files to {args.export}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
