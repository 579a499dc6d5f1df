"""CuTe's two-argument ``copy(src, dst)`` against nvcc-compiled CuTe: the widths of the loads and stores.

Each case is one thread's row of 8 halves copied global -> shared -> registers -> global with
``copy(src, dst)``, written in CuTe C++ (compiled by nvcc to PTX for sm_90, no GPU needed) and as
a warpsim program. CuTe's choice is seen in the PTX: a vectorised copy is one 128-bit access; an
element-wise copy of global memory is eight 16-bit ones. nvcc may merge element-wise *shared*
accesses itself (it knows the shared array's alignment), so shared memory is compared only where
CuTe vectorised: the 128-bit access must be there. The PTX is cached in the oracle's cache.
"""

import hashlib
import re
import subprocess
from collections import Counter

import numpy as np
import pytest

import oracle_harness
from warpsim.cute import DInt, _, local_partition, make_layout, make_smem_ptr, make_tensor
from warpsim.program import Program, copy, syncthreads
from warpsim.program.run import run_program

pytestmark = pytest.mark.skipif(oracle_harness.skip_reason() is not None,
                                reason=oracle_harness.skip_reason() or "")

# case -> (CuTe smem layout, CuTe register layout, warpsim smem layout, warpsim register layout)
CASES = {
    "contiguous": ("Layout<Shape<_32,_8>, Stride<_8,_1>>{}", "Layout<_8>{}", ((32, 8), (8, 1)), (8, 1)),
    "strided": ("Layout<Shape<_32,_8>, Stride<_16,_2>>{}", "Layout<_8>{}", ((32, 8), (16, 2)), (8, 1)),
    "regs_2x4_contiguous": ("Layout<Shape<_32,_8>, Stride<_8,_1>>{}", "Layout<Shape<_2,_4>, Stride<_1,_2>>{}",
                            ((32, 8), (8, 1)), ((2, 4), (1, 2))),
    "regs_2x4_permuted": ("Layout<Shape<_32,_8>, Stride<_8,_1>>{}", "Layout<Shape<_2,_4>, Stride<_4,_1>>{}",
                          ((32, 8), (8, 1)), ((2, 4), (4, 1))),
    "dynamic_stride": ("make_layout(make_shape(_32{}, _8{}), make_stride(_8{}, int(1)))", "Layout<_8>{}",
                       ((32, 8), (8, DInt(1))), (8, 1)),
}

SOURCE = """#include <cute/tensor.hpp>
using namespace cute;
template <class SmemLayout, class RegLayout>
__device__ void rows(half_t const* x, half_t* y, SmemLayout sl, RegLayout rl) {
  __shared__ alignas(128) half_t smem[512];
  auto s = make_tensor(make_smem_ptr(smem), sl);
  auto gx = make_tensor(make_gmem_ptr(x), Layout<Shape<_32,_8>, Stride<_8,_1>>{});
  auto gy = make_tensor(make_gmem_ptr(y), Layout<Shape<_32,_8>, Stride<_8,_1>>{});
  auto r = make_tensor<half_t>(rl);
  int t = threadIdx.x;
  copy(gx(t,_), s(t,_));
  __syncthreads();
  copy(s(t,_), r);
  copy(r, gy(t,_));
}
""" + "".join(f'extern "C" __global__ void {name}(half_t const* x, half_t* y) {{ rows(x, y, {smem}, {regs}); }}\n'
              for name, (smem, regs, _s, _r) in CASES.items())

_BITS = {"u16": 16, "b16": 16, "u32": 32, "b32": 32, "u64": 64, "b64": 64}


def access(kind, space, suffix):
    """``(kind, space, bits)`` of an access: ``suffix`` like ``v2.u64``, ``v4.b32`` or ``u16``."""
    parts = suffix.split(".")
    lanes = int(parts[0][1:]) if parts[0].startswith("v") else 1
    return kind, space, lanes * _BITS[parts[-1]]


@pytest.fixture(scope="module")
def ptx_accesses():
    """``{kernel: Counter of (ld|st, global|shared, bits)}`` of the nvcc-compiled CuTe kernels."""
    include = oracle_harness.cute_include_dir()
    flags = ["-ptx", "-arch=sm_90", "-std=c++17", "-w", "-I", str(include)]
    version = subprocess.run([oracle_harness.nvcc_path(), "--version"], capture_output=True, text=True).stdout
    key = hashlib.sha256("\n".join([SOURCE, version, str(include), " ".join(flags)]).encode()).hexdigest()[:16]
    cache = oracle_harness.cache_dir() / "auto_copy"
    cache.mkdir(parents=True, exist_ok=True)
    ptx = cache / f"{key}.ptx"
    if not ptx.is_file():
        source = cache / f"{key}.cu"
        source.write_text(SOURCE)
        tmp = cache / f"{key}.ptx.tmp"
        subprocess.run([oracle_harness.nvcc_path(), *flags, str(source), "-o", str(tmp)], check=True,
                       capture_output=True, timeout=600)
        tmp.replace(ptx)
    out, kernel = {}, None
    for line in ptx.read_text().splitlines():
        entry = re.match(r"\.visible \.entry (\w+)\(", line)
        if entry:
            kernel = out.setdefault(entry.group(1), Counter())
        m = re.match(r"\s+(ld|st)\.(global|shared)\.([\w.]+)\s", line)
        if m and kernel is not None:
            kernel[access(*m.groups())] += 1
    return out


def warpsim_accesses(smem_layout, reg_layout):
    def kernel(tid, *, x, y):
        s = make_tensor(make_smem_ptr(0, "f16"), make_layout(*smem_layout))
        r = make_tensor("f16", make_layout(*reg_layout))
        row = lambda t: local_partition(t, make_layout((32, 1)), tid)[0, _]   # noqa: E731
        copy(row(x), row(s))
        syncthreads()
        copy(row(s), r)
        copy(r, row(y))
    program = Program(kernel, threads=32, inputs={"x": ((32, 8), "f16")}, outputs={"y": ((32, 8), "f16")},
                      smem_bytes=1024)
    x = np.arange(256, dtype=np.uint16).reshape(32, 8) * 3
    result = run_program(program, inputs={"x": x})
    assert (result.outputs["y"] == x).all()
    counts = Counter()
    for name, n in result.stats.instructions.items():
        m = re.fullmatch(r"(ld|st)\.(global|shared)\.([\w.]+)", name)
        if m:
            counts[access(*m.groups())] += n
    return counts


@pytest.mark.parametrize("case", list(CASES))
def test_copy_src_dst_picks_cute_widths(case, ptx_accesses):
    ours = warpsim_accesses(*CASES[case][2:])
    theirs = ptx_accesses[case]
    glob = lambda c: Counter({k: n for k, n in c.items() if k[1] == "global"})   # noqa: E731
    assert glob(ours) == glob(theirs)
    for kind, space, bits in ours:
        if space == "shared" and bits == 128:
            assert theirs[(kind, space, 128)] >= 1, (kind, space, dict(theirs))
