"""The GPU's time of a kernel in hwcheck's PTX reports, without a GPU.

``CupyPtx.kernel_ms`` runs against a fake CuPy whose driver records each launch and whose CUDA events read a
clock that each launch advances by a set duration: the warm-up launches are not timed, each timed launch is
one event pair, the parameter bytes are the simulator's. ``check_ptx`` keeps the median in the report
(``gpu_kernel_ms``), and ``reported_gpu_time`` finds it again for the flash benchmark's launch.
"""

import ctypes
import json
import os

import numpy as np
import pytest

from hwcheck.runs.ptx_examples import FLASH_BENCH_EXAMPLE, flash_bench_command, ptx_jobs, reported_gpu_time
from hwcheck.runs.ptx_run import (TIMED_LAUNCHES, WARMUP_LAUNCHES, CupyPtx, PtxJob, PtxRun, SimulatorAsGpu, _pack_params, check_ptx, kernel_timing)
from warpsim.frontends.args import parse_arg

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ADD_INDEX = os.path.join(ROOT, "examples", "ptx", "add_index.ptx")


class _DeviceArray:
    def __init__(self, host, ptr):
        self.host = np.array(host, copy=True)
        self.data = type("Memory", (), {"ptr": ptr})()


class FakeDriverCupy:
    """The part of CuPy ``CupyPtx`` uses: device arrays with addresses, the driver's launch, CUDA events."""

    def __init__(self, durations):
        self.durations = list(durations)        # milliseconds each launch takes, in order
        self.clock = 0.0
        self.launches = []                      # (grid, block, smem, parameter bytes)
        self.layout = []                        # the kernel's parameters (decoded.params): what kernelParams points at
        self.next_ptr = 0x7000_0000_0000
        fake = self

        class Event:
            def record(self):
                self.at = fake.clock

            def synchronize(self):
                pass

        class Driver:
            @staticmethod
            def moduleGetFunction(module, name):            # noqa: N802 -- CUDA's names
                return ("function", module, name)

            @staticmethod
            def funcSetAttribute(func, attr, value):        # noqa: N802
                pass

            @staticmethod
            def moduleGetGlobal(module, name):              # noqa: N802
                return 0

            @staticmethod
            def launchKernel(func, gx, gy, gz, bx, by, bz, smem, stream, params, extra):   # noqa: N802
                layout = fake.layout                        # kernelParams: one pointer per parameter
                words = (ctypes.c_void_p * len(layout)).from_address(params)
                raw = bytearray(max(offset + size for _, _, offset, size, _ in layout))
                for word, (_, _, offset, size, _) in zip(words, layout):
                    raw[offset:offset + size] = ctypes.string_at(word, size)
                assert extra == 0
                fake.launches.append(((gx, gy, gz), (bx, by, bz), smem, bytes(raw)))
                fake.clock += fake.durations[len(fake.launches) - 1]

        class Runtime:
            @staticmethod
            def deviceSynchronize():                        # noqa: N802
                pass

        self.cuda = type("Cuda", (), {"driver": Driver, "runtime": Runtime, "Event": Event,
                                      "get_elapsed_time": staticmethod(lambda a, b: b.at - a.at)})

    def zeros(self, n):
        return np.zeros(n)

    def asarray(self, array):
        self.next_ptr += 0x10000
        return _DeviceArray(array, self.next_ptr)


def _gpu(cupy):
    info = type("Info", (), {"name": "Fake GPU", "driver_cuda_version": "13.0"})()
    return type("Gpu", (), {"cupy": cupy, "info": info})()


def _add_index_job():
    specs = dict(parse_arg(a) for a in ("x=random:u32:256", "y=zeros:u32:256", "n=250"))
    return PtxJob(ADD_INDEX, "add_index", (2, 1, 1), (128, 1, 1), 0, specs)


def test_kernel_ms_times_each_launch_after_the_warm_up_with_the_simulators_parameters():
    from warpsim import ptx
    durations = [8.0] * WARMUP_LAUNCHES + [0.5, 0.25, 0.75, 0.375]      # sums exact in binary
    cp = FakeDriverCupy(durations)
    module = ptx.load(open(ADD_INDEX).read())
    decoded = module.decoded("add_index")
    cp.layout = decoded.params
    args = {"x": np.arange(256, dtype=np.uint32), "y": np.zeros(256, np.uint32), "n": 250}
    times = CupyPtx(_gpu(cp)).kernel_ms("module", decoded, "add_index", (2, 1, 1), (128, 1, 1), 0, args, launches=4)
    assert times == [0.5, 0.25, 0.75, 0.375]                     # the warm-up's 8 ms are not among them
    assert len(cp.launches) == WARMUP_LAUNCHES + 4
    assert {(g, b, s) for g, b, s, _ in cp.launches} == {((2, 1, 1), (128, 1, 1), 0)}
    ptrs = iter(range(0x7000_0001_0000, 0x7000_0100_0000, 0x10000))
    want = _pack_params(decoded, args, lambda name, array: next(ptrs), "add_index")
    assert all(raw == want for *_, raw in cp.launches)
    assert kernel_timing(times) == {"gpu_kernel_ms": 0.4375, "gpu_kernel_ms_range": [0.25, 0.75],
                                   "gpu_timed_launches": 4}


def test_kernel_ms_failure_is_one_hwcheck_error():
    from hwcheck.errors import HwcheckError
    from warpsim import ptx
    cp = FakeDriverCupy([])                                       # no duration: the first launch fails
    decoded = ptx.load(open(ADD_INDEX).read()).decoded("add_index")
    cp.layout = decoded.params
    args = {"x": np.zeros(256, np.uint32), "y": np.zeros(256, np.uint32), "n": 1}
    with pytest.raises(HwcheckError, match=r"^hwcheck run: kernel add_index failed on Fake GPU: list index out of "
                                           r"range$"):
        CupyPtx(_gpu(cp)).kernel_ms("m", decoded, "add_index", (2, 1, 1), (128, 1, 1), 0, args)


def test_the_report_keeps_the_median_gpu_time_beside_the_simulators(tmp_path):
    report = tmp_path / "r.json"
    times = [0.02, 0.01, 0.03]
    runs, status, error, code = check_ptx(SimulatorAsGpu(kernel_times=times), [_add_index_job()], seeds=2,
                                          trace=False, report=str(report))
    assert (status, error, code) == ("pass", None, 0)
    data = json.loads(report.read_text())
    run = data["runs"][0]
    assert (run["gpu_kernel_ms"], run["gpu_kernel_ms_range"], run["gpu_timed_launches"]) == (0.02, [0.01, 0.03], 3)
    assert all(s["sim_s"] > 0 for s in run["seeds"])
    assert data["settings"]["timing"] is True
    assert data["settings"]["timed_launches"] == [WARMUP_LAUNCHES, TIMED_LAUNCHES]
    # not timed: no GPU time in the run (a stand-in without times, or timing off)
    for gpu, timing in ((SimulatorAsGpu(), True), (SimulatorAsGpu(kernel_times=times), False)):
        check_ptx(gpu, [_add_index_job()], seeds=1, trace=False, report=str(report), timing=timing)
        assert "gpu_kernel_ms" not in json.loads(report.read_text())["runs"][0]


def test_the_flash_benchmarks_gpu_time_is_found_in_a_report(tmp_path):
    assert reported_gpu_time(folder=str(tmp_path)) is None
    run = PtxRun(ptx_jobs([FLASH_BENCH_EXAMPLE])[0]).as_dict()
    other = dict(run, grid=[4, 2, 1], gpu_kernel_ms=9.0)
    folder = tmp_path / "h200"
    folder.mkdir()
    for name, date, ms in (("a.json", "2026-12-02T10:00:00+00:00", 0.052),
                           ("b.json", "2026-12-01T10:00:00+00:00", 0.07)):
        data = {"kind": "ptx-programs", "date": date, "gpu": {"name": "NVIDIA H200"},
                "runs": [other, dict(run, gpu_kernel_ms=ms, gpu_timed_launches=20)]}
        (folder / name).write_text(json.dumps(data))
    (folder / "broken.json").write_text("{")
    ms, path, gpu, launches = reported_gpu_time(folder=str(tmp_path))
    assert (ms, gpu, launches) == (0.052, "NVIDIA H200", 20) and path.endswith("a.json")   # the newest report
    source, kernel, grid, block, smem, args = FLASH_BENCH_EXAMPLE
    assert (kernel, grid, smem) == ("flash_fwd_f16_d64", "8,2,1", 40960) and "q=random:f16:1x2x512x64" in args
    command = flash_bench_command()
    assert command.startswith("python -m hwcheck run examples/cute_cpp/flash_fwd.cu --kernel flash_fwd_f16_d64 ")
    assert command.endswith("--report conformance/h200/h200-flash-bench.json") and " --arg N=512 " in command


def test_gpu_pending_runs_the_flash_benchmarks_launch_as_flash_bench_command_says():
    text = open(os.path.join(ROOT, "hwcheck", "gpu_pending.sh")).read().replace("\\\n", " ")
    line = next(ln for ln in text.splitlines() if "flash benchmark launch" in ln)
    got = " ".join(line.split('"$py" ', 1)[1].split())
    want = flash_bench_command(report='"$out/h200-flash-bench.json"')
    assert got == want[len("python "):]
