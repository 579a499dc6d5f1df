"""The CuTe C++ flash-attention forward (``examples/cute_cpp/flash_fwd.cu``) on warpsim, against float64.

Runs one variant through warpsim's PTX launch API (:func:`warpsim.frontends.kernel.open_kernel`) for given B, H, N,
d and returns O and LSE; :func:`reference` computes both in float64 numpy from the same f16/bf16 inputs, and
:func:`check` compares them within the recipe's tolerances (O: 4e-3 for f16, 2e-2 for bf16, max abs; LSE:
1e-3). These are sanity checks; bit-exactness is hwcheck's job on an H200 (README, "Flash attention
forward in CuTe C++").

    python examples/flash_fwd_check.py --dtype bf16 --d 64 --N 80 --causal [--B 1] [--H 1] [--seed 0]
        [--fast-math] [--arch sm_90]

prints the errors and exits 0 when both are within tolerance, 1 when one is not, 2 for a bad option or a
simulator error (one line).

The kernels' interface (every implementation of the recipe has it): q, k, v, o are ``[B, H, N, d]``
row-major in the input type (here ``uint16`` bit patterns of f16 or bf16); lse is f32 ``[B, H, N]``;
scalars N, scale_log2 = ``f32(1/sqrt(d)) * f32(log2 e)`` and softmax_scale = ``f32(1/sqrt(d))``;
grid ``(ceil(N/64), H, B)``, 128 threads, ``5 * 64 * d * 2`` bytes of dynamic shared memory.

>>> kernel_name("bf16", 128, True), smem_bytes(64), [float(s) for s in scales(64)], grid(2, 2, 80)
('flash_fwd_bf16_d128_causal', 40960, [0.1803368777036667, 0.125], (2, 2, 2))
>>> to_float(np.array([0x3C00, 0xBF80], np.uint16), "f16").tolist(), to_float([0xBF80], "bf16").tolist()
([1.0, -1.875], [-1.0])
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {False: ROOT / "examples/cute_cpp/flash_fwd.cu", True: ROOT / "examples/cute_cpp/flash_fwd_fast_math.cu"}
DTYPES = ("f16", "bf16")
HEAD_DIMS = (64, 128)
BLOCK_M = 64                                     # Q rows per CTA
THREADS = 128
O_TOLERANCE = {"f16": 4e-3, "bf16": 2e-2}        # max abs error of O against float64
LSE_TOLERANCE = 1e-3
LOG2E = 1.4426950408889634

__all__ = ["SOURCES", "O_TOLERANCE", "LSE_TOLERANCE", "kernel_name", "smem_bytes", "scales", "grid",
           "random_inputs", "to_float", "run_flash_fwd", "reference", "check", "main"]


def kernel_name(dtype, d, causal):
    """The kernel of one variant: ``flash_fwd_<f16|bf16>_d<64|128>[_causal]``."""
    if dtype not in DTYPES or d not in HEAD_DIMS:
        raise ValueError(f"flash_fwd: no variant for dtype {dtype!r}, d {d!r} (dtype: f16, bf16; d: 64, 128)")
    return f"flash_fwd_{dtype}_d{d}{'_causal' if causal else ''}"


def smem_bytes(d):
    """Dynamic shared memory of a launch: the Q tile and two K and two V tiles of 64 x d 16-bit values."""
    return 5 * BLOCK_M * d * 2


def scales(d):
    """``(scale_log2, softmax_scale)`` as the kernels take them: f32, rounded as the recipe says."""
    softmax_scale = np.float32(1.0 / np.sqrt(d))
    return softmax_scale * np.float32(LOG2E), softmax_scale


def grid(B, H, N):
    """The launch grid ``(ceil(N/64), H, B)``."""
    return (-(-N // BLOCK_M), H, B)


def random_inputs(B, H, N, d, dtype, seed=0):
    """``(q, k, v)``: ``[B, H, N, d]`` uint16 bit patterns of ``dtype`` drawn uniform in [-1, 1] (as hwcheck's
    ``random:`` arguments), each value exactly representable."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(3):
        values = rng.uniform(-1.0, 1.0, (B, H, N, d))
        if dtype == "f16":
            out.append(values.astype(np.float16).view(np.uint16))
        else:
            out.append((values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16))
    return tuple(out)


def to_float(bits, dtype):
    """float64 values of uint16 bit patterns of ``dtype`` (f16 or bf16)."""
    bits = np.asarray(bits, np.uint16)
    if dtype == "f16":
        return bits.view(np.float16).astype(np.float64)
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def run_flash_fwd(q, k, v, *, dtype, causal, fast_math=False, arch="sm_90"):
    """O (``[B, H, N, d]`` uint16 bit patterns of ``dtype``) and LSE (f32 ``[B, H, N]``) of the C++ kernel
    run on the simulator, for ``[B, H, N, d]`` uint16 inputs; ``fast_math`` picks the --use_fast_math build."""
    from warpsim.frontends.kernel import open_kernel
    q, k, v = (np.ascontiguousarray(a, dtype=np.uint16) for a in (q, k, v))
    if q.ndim != 4 or k.shape != q.shape or v.shape != q.shape:
        raise ValueError(f"flash_fwd: q, k, v must be [B, H, N, d] of one shape, got {q.shape}, {k.shape}, {v.shape}")
    B, H, N, d = q.shape
    kernel = open_kernel(SOURCES[bool(fast_math)], kernel_name(dtype, d, causal), arch=arch)
    scale_log2, softmax_scale = scales(d)
    args = {"q": q, "k": k, "v": v, "o": np.zeros_like(q), "lse": np.zeros((B, H, N), np.float32), "N": N,
            "scale_log2": float(scale_log2), "softmax_scale": float(softmax_scale)}
    result = kernel.launch(grid=grid(B, H, N), block=THREADS, args=args, smem=smem_bytes(d))
    buffers = kernel.buffers(result)
    return buffers["o"], buffers["lse"]


def reference(q, k, v, *, dtype, causal):
    """float64 attention of the same inputs: ``(O [B, H, N, d], LSE [B, H, N])``, LSE the natural log of the
    row sums of ``exp(softmax_scale * q k^T)`` (masked columns left out)."""
    qf, kf, vf = (to_float(a, dtype) for a in (q, k, v))
    n, d = qf.shape[2], qf.shape[3]
    s = np.einsum("bhid,bhjd->bhij", qf, kf) / np.sqrt(d)
    if causal:
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    p = np.exp(s - m)
    total = p.sum(axis=-1, keepdims=True)
    return np.einsum("bhij,bhjd->bhid", p / total, vf), (m + np.log(total))[..., 0]


def check(dtype, d, causal, *, B=1, H=1, N=64, seed=0, fast_math=False, arch="sm_90"):
    """Run one case and compare it with :func:`reference`: a dict with the max abs errors ``o_error``,
    ``lse_error``, their tolerances and ``ok``."""
    q, k, v = random_inputs(B, H, N, d, dtype, seed)
    o, lse = run_flash_fwd(q, k, v, dtype=dtype, causal=causal, fast_math=fast_math, arch=arch)
    want_o, want_lse = reference(q, k, v, dtype=dtype, causal=causal)
    o_error = float(np.max(np.abs(to_float(o, dtype) - want_o)))
    lse_error = float(np.max(np.abs(lse.astype(np.float64) - want_lse)))
    ok = bool(o_error <= O_TOLERANCE[dtype] and lse_error <= LSE_TOLERANCE)      # NaN is not ok
    return {"o_error": o_error, "o_tolerance": O_TOLERANCE[dtype], "lse_error": lse_error,
            "lse_tolerance": LSE_TOLERANCE, "ok": ok}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python examples/flash_fwd_check.py",
                                     description="Run the CuTe C++ flash-attention forward on warpsim and "
                                                 "compare O and LSE with float64 numpy.")
    parser.add_argument("--dtype", choices=DTYPES, default="f16")
    parser.add_argument("--d", type=int, choices=HEAD_DIMS, default=64, help="head dimension")
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--B", type=int, default=1)
    parser.add_argument("--H", type=int, default=1)
    parser.add_argument("--N", type=int, default=64, help="sequence length (any N >= 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fast-math", action="store_true", help="the --use_fast_math build")
    parser.add_argument("--arch", default="sm_90", help="sm_80 or sm_90 (default sm_90)")
    args = parser.parse_args(argv)
    if min(args.B, args.H, args.N) < 1:
        sys.stderr.write("flash_fwd_check: --B, --H and --N must be at least 1\n")
        return 2
    from warpsim.errors import WarpsimError
    try:
        got = check(args.dtype, args.d, args.causal, B=args.B, H=args.H, N=args.N, seed=args.seed,
                    fast_math=args.fast_math, arch=args.arch)
    except (WarpsimError, ValueError) as e:
        sys.stderr.write(f"flash_fwd_check: {e}\n")
        return 2
    name = kernel_name(args.dtype, args.d, args.causal) + (" (fast math)" if args.fast_math else "")
    sys.stdout.write(f"{name} B={args.B} H={args.H} N={args.N} seed {args.seed}: "
                     f"O max abs error {got['o_error']:.3g} (tolerance {got['o_tolerance']:g}), "
                     f"LSE {got['lse_error']:.3g} (tolerance {got['lse_tolerance']:g}): "
                     f"{'ok' if got['ok'] else 'OVER TOLERANCE'}\n")
    return 0 if got["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
