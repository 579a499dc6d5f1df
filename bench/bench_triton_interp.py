"""warpsim against Triton's own interpreter (``TRITON_INTERPRET=1``) on the same ``@triton.jit`` kernels, side by
side in one run (issue 29, acceptance 2: warpsim at least 2x faster on every one).

The kernels are Triton's tutorials as this project's corpus writes them (``tests/corpus/src/triton``: vector add,
fused softmax, layer norm, the grouped matmul, the fused-attention forward), launched with CPU torch tensors:

- warpsim: ``with warpsim.triton.simulate(arch="sm_80"): kernel[grid](...)``: Triton's compiler, the PTX run bit
  for bit on the simulated GPU, one process (``WARPSIM_JOBS=1``: no other core);
- Triton's interpreter: the same Python function as ``triton.runtime.interpreter.InterpretedFunction`` (what
  ``@triton.jit`` gives under ``TRITON_INTERPRET=1``): block-level numpy, not bit-exact, one thread.

Each is warmed once (Triton's compile, warpsim's load), then timed ``--repeat`` times; the best of each and the ratio
interpreter / warpsim are printed (above 1: warpsim faster). Triton picks its interpreter when it is imported (its
own library's ``@triton.jit`` helpers too), so the interpreter's half runs in a child process of the same command. Both outputs are checked against a numpy
reference, so a wrong launch cannot look fast.

Needs the ``triton`` extra and torch (CPU; not a project dependency), e.g. a venv beside the project's:
``pip install torch==2.13.0``; run ``python bench/bench_triton_interp.py [--repeat N] [--quick]``. Without torch or
Triton it says so and exits 0.
"""

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["WARPSIM_JOBS"] = "1"
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")      # Triton 3.9 warns when it is unset; 1 is its default

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
SOURCES = ROOT / "tests" / "corpus" / "src" / "triton"

from hostinfo import host_line  # noqa: E402


def _module(name):
    """The corpus module ``name`` (its ``@triton.jit`` functions Triton's interpreter's when this process runs with
    ``TRITON_INTERPRET=1``)."""
    spec = importlib.util.spec_from_file_location(f"bench_triton_{name}", SOURCES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def cases(torch, quick):
    import triton

    """``[(name, kernel, grid, args(), kwargs, check(args))]``: each ``args()`` fresh tensors, the same each run."""
    g = torch.Generator().manual_seed(1)
    rand = lambda *shape, dtype=torch.float32: torch.rand(*shape, generator=g, dtype=torch.float32).mul(4).sub(2) \
        .to(dtype)                                                          # noqa: E731

    n = 1 << (12 if quick else 16)
    x, y = rand(n), rand(n)
    add = ("vector add", _module("vector_add").add_kernel, (n // 1024,),
           lambda: (x, y, torch.empty_like(x), n), {"BLOCK_SIZE": 1024},
           lambda a: np.allclose(a[2].numpy(), (x + y).numpy()))

    rows, cols = (16, 256) if quick else (256, 512)
    s_in = rand(rows, cols)
    ref = torch.softmax(s_in, 1).numpy()
    softmax = ("softmax", _module("softmax").softmax_kernel, (min(rows, 32),),
               lambda: (torch.empty_like(s_in), s_in, cols, cols, rows, cols),
               {"BLOCK_SIZE": triton.next_power_of_2(cols), "num_stages": 2, "num_warps": 4},
               lambda a: np.allclose(a[0].numpy(), ref, rtol=1e-4, atol=1e-6))

    ln_rows, ln_cols = (8, 256) if quick else (128, 1024)
    ln_x, w, b = rand(ln_rows, ln_cols), rand(ln_cols), rand(ln_cols)
    ln_ref = torch.nn.functional.layer_norm(ln_x, (ln_cols,), w, b, 1e-5).numpy()
    layer_norm = ("layer norm", _module("layer_norm")._layer_norm_fwd_fused, (ln_rows,),
                  lambda: (ln_x, torch.empty_like(ln_x), w, b, torch.empty(ln_rows), torch.empty(ln_rows), ln_cols,
                           ln_cols, 1e-5),
                  {"BLOCK_SIZE": 256, "num_warps": 4},
                  lambda a: np.allclose(a[1].numpy(), ln_ref, rtol=1e-3, atol=1e-4))

    m = 64 if quick else 256
    a16, b16 = rand(m, m, dtype=torch.float16), rand(m, m, dtype=torch.float16)
    mm_ref = a16.float().numpy() @ b16.float().numpy()
    matmul = ("matmul f16", _module("matmul").matmul_kernel, ((m // 64) ** 2,),
              lambda: (a16, b16, torch.empty(m, m, dtype=torch.float16), m, m, m, m, 1, m, 1, m, 1),
              {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8, "num_warps": 4},
              lambda a: np.allclose(a[2].float().numpy(), mm_ref, rtol=1e-2, atol=1e-1))

    Z, H, N, D = (1, 1, 64, 64) if quick else (1, 2, 256, 64)
    q, k, v = (rand(Z, H, N, D, dtype=torch.float16) for _ in range(3))
    st = (H * N * D, N * D, D, 1)
    sm = 0.125
    p = torch.softmax((q.float() @ k.float().transpose(-1, -2)) * sm, -1)
    at_ref = (p @ v.float()).numpy()
    attention = ("attention fwd", _module("attention")._attn_fwd, (N // 64, Z * H),
                 lambda: (q, k, v, sm, torch.empty_like(q), *st, *st, *st, *st, H, N),
                 {"BLOCK_M": 64, "BLOCK_N": 32, "HEAD_DIM": D, "num_warps": 4},
                 lambda a: np.allclose(a[4].float().numpy(), at_ref, rtol=1e-2, atol=1e-2))
    return [add, softmax, layer_norm, matmul, attention]


def best_times(torch, quick, repeat, interpreter):
    """``[(name, grid, best seconds, right)]`` of every case, on warpsim or (``interpreter``) Triton's interpreter."""
    import warpsim.triton as wt

    out = []
    for name, kernel, grid, make, kwargs, check in cases(torch, quick):
        def run():
            a = make()
            if interpreter:
                kernel[grid](*a, **kwargs)
            else:
                with wt.simulate(arch="sm_80", quiet=True):
                    kernel[grid](*a, **kwargs)
            return a

        ok = bool(check(run()))                     # warm (Triton's compile, warpsim's load), and right
        best = float("inf")
        for _ in range(repeat):
            t = time.perf_counter()
            run()
            best = min(best, time.perf_counter() - t)
        out.append((name, grid, best, ok))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="small launches, one repeat")
    p.add_argument("--interpreter", action="store_true", help=argparse.SUPPRESS)   # the child's half
    args = p.parse_args(argv)
    try:
        import torch
        import triton
    except ImportError as exc:
        print(f"bench_triton_interp: skipped ({exc.name} is not installed: this benchmark needs triton and CPU torch)")
        return 0
    torch.set_num_threads(1)
    repeat = 1 if args.quick else args.repeat
    if args.interpreter:
        print(json.dumps(best_times(torch, args.quick, repeat, True)))
        return 0
    print(host_line())
    print(f"triton {triton.__version__}, torch {torch.__version__}; warpsim sm_80, one process; best of {repeat}")
    # Triton's interpreter is chosen when triton is imported (TRITON_INTERPRET=1, its library too): a child process
    child = subprocess.run([sys.executable, __file__, "--interpreter", "--repeat", str(repeat)]
                           + (["--quick"] if args.quick else []), env={**os.environ, "TRITON_INTERPRET": "1"},
                           capture_output=True, text=True, check=False)
    if child.returncode != 0:
        print(child.stdout + child.stderr)
        return 1
    interp = json.loads(child.stdout.strip().splitlines()[-1])
    ours = best_times(torch, args.quick, repeat, False)
    worst, failed = float("inf"), False
    for (name, grid, mine, ok), (_, _, theirs, their_ok) in zip(ours, interp):
        ratio = theirs / mine
        worst = min(worst, ratio)
        failed |= not (ok and their_ok)
        print(f"  {name:14s} grid {str(tuple(grid)):10s} warpsim {mine * 1e3:9.1f} ms   Triton's interpreter "
              f"{theirs * 1e3:9.1f} ms   {ratio:5.2f}x{'' if ok and their_ok else '   WRONG RESULT'}")
    print(f"slowest ratio: {worst:.2f}x (goal: at least 2x on every kernel)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
