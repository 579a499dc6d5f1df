"""hwcheck's Hopper sets without a GPU: the wgmma probes (``hwcheck.runs.ptx_examples.HOPPER_EXAMPLES``, ``hwcheck
acceptance --only hopper``) and the TMA kernels (``HOPPER_TMA_EXAMPLES``, ``--only hopper-tma``: TMA copies in every
swizzle mode, the TMA + mbarrier + wgmma GEMMs). Their arguments fit each kernel, jobs pass with the simulator
standing in for the GPU, and the H100's committed reports (``conformance/h100/h100-80gb-hbm3-hopper-programs.json``,
``...-hopper-tma-programs.json``) are whole and sound."""

import glob
import json
import os

import pytest

from hwcheck.runs.ptx_examples import HOPPER_EXAMPLES, HOPPER_TMA_EXAMPLES, ROOT, ptx_jobs
from hwcheck.runs.ptx_run import SimulatorAsGpu, check_ptx

REPORTS = {"hopper": os.path.join(ROOT, "conformance", "*", "*-hopper-programs.json"),
           "hopper-tma": os.path.join(ROOT, "conformance", "*", "*-hopper-tma-programs.json")}
SETS = {"hopper": HOPPER_EXAMPLES, "hopper-tma": HOPPER_TMA_EXAMPLES}
SEEDS = 10


def _gpu_command(only):
    return (f"PYTHONPATH=$PWD HWCHECK_PTX_DIR=ptx-export python -m hwcheck acceptance --out OUT --only {only} "
            f"--seeds {SEEDS} --workers 13 (PTX exported with python -m hwcheck.runs.ptx_examples --export ptx-export)")


def _nvcc():
    from warpsim.toolchain import find_nvcc
    if find_nvcc() is None and os.environ.get("CI") != "true":
        pytest.skip("nvcc not found on PATH or under CUDA_HOME (examples/hopper/wgmma_probe.cu is CUDA C++)")


def test_the_set_is_every_probe_kernel_with_buffers_of_its_size():
    with open(os.path.join(ROOT, "examples", "hopper", "wgmma_probe.cu"), encoding="utf-8") as f:
        text = f.read()
    kernels = [line.split("void ")[1].split("(")[0] for line in text.splitlines() if "__global__ void" in line]
    probes = [e for e in HOPPER_EXAMPLES if e[0].endswith("wgmma_probe.cu")]
    assert [e[1] for e in probes] == kernels and len(kernels) == 10
    for _source, kernel, grid, block, _smem, args in probes:
        sizes = {a.split("=")[0]: int(a.rsplit(":", 1)[1]) for a in args}
        acc = int(kernel.split("_n")[1].split("_")[0]) // (2 if "_f32_" in kernel else 4)
        assert (grid, block, sizes["x"]) == (96, 128, 24576)
        assert sizes["y"] == 96 * 128 * acc and sizes["c"] == sizes["y"] * (2 if kernel.startswith("ss_f16") else 1)


def test_a_job_passes_with_the_simulator_as_gpu():
    _nvcc()
    jobs = ptx_jobs([e for e in HOPPER_EXAMPLES if e[1] == "rs_f32_f16_n32_k_mn"])
    runs, status, error, code = check_ptx(SimulatorAsGpu(), jobs, seeds=1, timing=False)
    assert (status, error, code) == ("pass", None, 0)
    assert runs[0].seeds[0].records > 0 and runs[0].seeds[0].global_elements == 2 * 96 * 128 * 16 + 24576


def test_the_tma_set_is_every_tma_kernel_with_buffers_of_its_launch():
    """Each TMA copy's ``bytes`` is its box's and ``out``/``in`` hold a box per CTA; the GEMMs' grids cover C in 64 x 64
    tiles, and their dynamic shared memory holds the stages (2 x 16 KB, or 4 for the warp-specialised one)."""
    kernels = {(os.path.basename(e[0]), e[1]) for e in HOPPER_TMA_EXAMPLES}
    assert kernels == {("tma_copy.cu", "tile_load"), ("tma_copy.cu", "tile_store"), ("tma_gemm.cu", "gemm_tn"),
                       ("tma_gemm.cu", "gemm_tn_tma_store"), ("tma_gemm.cu", "gemm_tn_ws"),
                       ("tma_multicast.cu", "tile_multicast"), ("wgmma_gemm_dsl.py", "wgmma_kernel"),
                       ("cluster_histogram.cu", "cluster_histogram"), ("tma_copy.cu", "tile_reduce_add")} | {
                       ("bulk_reduce.cu", k) for k in ("reduce_add_f32", "reduce_add_f64", "reduce_add_f16",
                                                       "reduce_add_u32", "reduce_min_s32", "reduce_max_u64",
                                                       "reduce_inc_u32", "reduce_xor_b64", "reduce_add_peer")}
    swizzles = set()
    for source, kernel, grid, block, smem, args in HOPPER_TMA_EXAMPLES:
        spec = {a.split("=")[0]: a.split("=", 1)[1] for a in args}
        if source.endswith("wgmma_gemm_dsl.py"):         # one 64 x 64 tile; K a multiple of 64, A and B (64, K)
            depth = int(spec["a"].split(";")[1].split(":")[1])
            assert (grid, block, smem, depth % 64) == (1, 128, 16384, 0) and f"64x{depth}" in spec["b"]
            continue
        if source.endswith("tma_multicast.cu"):          # clusters of two, each CTA half of its cluster's rows
            _, box, _, _, _, shape = spec["map"].split(":")
            box_rows, box_cols = (int(v) for v in box.split("x"))
            ctas = int(grid)
            assert ctas % 2 == 0 and ctas * box_rows == int(shape.split("x")[0]) and box_rows == int(spec["box_rows"])
            assert smem == int(spec["bytes"]) == 2 * box_rows * box_cols * 4
            assert int(spec["out"].rsplit(":", 1)[1]) == ctas * smem // 4
            continue
        if source.endswith("cluster_histogram.cu"):      # clusters of two, each CTA half of the bins
            ctas, nbins = int(grid), int(spec["nbins"])
            assert ctas % 2 == 0 and smem == 4 * nbins // 2 and spec["bins"] == f"zeros:i32:{ctas // 2}x{nbins}"
            assert int(spec["input"].rsplit(":", 1)[1]) == int(spec["n"]) and spec["ranks"] == f"zeros:u32:{2 * ctas}"
            continue
        if source.endswith("bulk_reduce.cu"):            # a slice of n elements a CTA (two for the peer's)
            bits, n = int(spec["out"].split(":")[1][1:]), int(spec["n"])
            assert spec["in"] == spec["out"] == f"random:u{bits}:{int(grid) * n}" and block == 64
            assert smem == (2 if kernel.endswith("peer") else 1) * n * bits // 8 and n * bits // 8 % 16 == 0
            continue
        gx, gy = (int(v) for v in grid.split(","))
        if source.endswith("tma_copy.cu") and kernel == "tile_reduce_add":
            _, box, _, _, dtype, shape = spec["map"].split(":")
            rows, cols = (int(v) for v in box.split("x"))
            assert dtype == "f32" and smem == int(spec["bytes"]) == rows * cols * 4
            assert (gx, gy) == tuple(-(-int(n) // b) for n, b in zip(shape.split("x")[::-1], (cols, rows)))
            assert int(spec["in"].rsplit(":", 1)[1]) == gx * gy * smem // 4
            continue
        if source.endswith("tma_copy.cu"):
            _, box, swizzle, _, dtype, shape = spec["map"].split(":")
            rows, cols = (int(v) for v in box.split("x"))
            swizzles.add(swizzle)
            nbytes = rows * cols * (2 if dtype == "f16" else 4)
            assert (int(spec["bytes"]), smem, int(spec["box0"]), int(spec["box1"])) == (nbytes, nbytes, cols, rows)
            assert int(spec["out" if kernel == "tile_load" else "in"].rsplit(":", 1)[1]) == gx * gy * nbytes // 4
            assert (gx, gy) == tuple(-(-int(n) // b) for n, b in zip(shape.split("x")[::-1], (cols, rows)))
        else:
            M, N = int(spec["M"]), int(spec["N"])
            assert (gx, gy, block) == (-(-N // 64), -(-M // 64), 256)
            assert smem >= (4 if kernel == "gemm_tn_ws" else 2) * 2 * 64 * 64 * 2
    assert swizzles == {"none", "32B", "64B", "128B"}


@pytest.mark.parametrize("kernel", ["tile_load", "gemm_tn_ws", "tile_multicast", "cluster_histogram", "tile_reduce_add",
                                    "reduce_add_f32", "reduce_add_peer"])
def test_a_tma_job_passes_with_the_simulator_as_gpu(kernel):
    _nvcc()
    jobs = ptx_jobs([[e for e in HOPPER_TMA_EXAMPLES if e[1] == kernel][-1]])
    runs, status, error, code = check_ptx(SimulatorAsGpu(shared_fill=0xA5), jobs, seeds=1, timing=False)
    assert (status, error, code) == ("pass", None, 0)
    assert runs[0].seeds[0].records > 0 and runs[0].seeds[0].global_elements > 0


@pytest.mark.parametrize("only", sorted(REPORTS))
def test_committed_hopper_report_is_whole_and_sound(only):
    from test_committed_ptx_report import ptx_report_problems
    reports = sorted(glob.glob(REPORTS[only]))
    assert reports, f"run {_gpu_command(only)} on an H100 or H200 and commit the report"
    for path in reports:
        with open(path) as f:
            report = json.load(f)
        problems = ptx_report_problems(report, SETS[only], seeds=SEEDS, gpus=("H100", "H200"))
        assert not problems, "\n".join(problems)


def test_a_generic_address_into_another_ctas_shared_memory_is_relocated():
    """The fifth H100 run: ``mapa.u64`` gave 0x7fa601000410 where the simulator gives 2**40 + 0x1000410 (rank 1,
    offset 0x410 above each machine's shared window): the same place, so relocated; one byte further is not."""
    import numpy as np
    from hwcheck.runs.trace_compare import CLUSTER_WINDOW, _relocated
    sim_win, gpu_win = np.uint64(1 << 40), np.uint64(0x7FA600000000)
    pairs = [(np.full(1, sim_win), np.full(1, gpu_win), CLUSTER_WINDOW)]
    vs = np.array([(1 << 40) + 0x1000410, (1 << 40) + 0x1000410], np.uint64)
    vg = np.array([0x7FA601000410, 0x7FA601000411], np.uint64)
    ok = _relocated(vs, vg, np.array([True, True]), pairs, np.zeros(2, np.int64))
    assert ok.tolist() == [True, False]
