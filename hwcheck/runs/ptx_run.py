"""``hwcheck run k.cu|k.ptx|k_dsl.py``: the very same PTX on the GPU and on the simulator, buffers and registers.

For one kernel (compiled as ``warpsim run`` compiles it, for the GPU's arch) and each seed:

1. make the arguments: ``--arg NAME=random:DTYPE:SHAPE[:BOUND]`` is random per seed
   (``numpy.random.default_rng(seed)``, one draw per such argument in the order given: f16/bf16/f32/f64 finite
   values in ``[-1, 1)``, or ``[-BOUND, BOUND)``; integer
   types uniform bits), the other forms as ``warpsim run`` takes them (``zeros:DTYPE:SHAPE``, ``FILE.npy``,
   a number). A CuTe DSL tensor struct takes its extra fields after ``;``: ``a=random:f16:64x64;s32:64;s32:64``;
2. run the original PTX on the simulator (``arch`` from the GPU) and, through the driver
   (``cuModuleLoadData`` of ptxas's cubin of it, see 6; ``cuLaunchKernel`` with the parameter bytes packed as the
   simulator packs them), on the GPU; compare every global buffer bit for bit;
3. device printf lines are compared as multisets (the GPU's text is read from file descriptor 1);
4. with ``timing`` (``hwcheck run`` and the acceptance sets), time the original kernel on the GPU: CUDA events
   around each of ``TIMED_LAUNCHES`` launches of the first seed's arguments after ``WARMUP_LAUNCHES`` untimed
   ones; the report keeps their median as the run's ``gpu_kernel_ms`` (with ``gpu_kernel_ms_range``, the
   fastest and the slowest), beside ``sim_s``, the simulator's seconds;
5. with the register trace (default), run the instrumented copy (:mod:`hwcheck.device.instrument`) on both, check
   that its buffers equal the original's on each, and compare the two trace buffers record by record
   (:mod:`hwcheck.runs.trace_compare`), registers written inside called ``.func`` bodies included. Where ptxas fuses
   the copy's ``mul``/``add`` pairs otherwise than the original's (a traced product has one more reader, so it is
   fused less), the copy's buffers are compared with the GPU's copy instead (``contraction`` in the report);
6. the GPU runs a cubin assembled by the ptxas that :mod:`warpsim.ptx.contraction` uses (``CupyPtx.cubin``; the
   driver's JIT only where no ptxas is found), and the simulator decides which ``mul``/``add`` pairs are fused
   against that very cubin's code, for the original and the instrumented copy each;
7. compare each CTA's final shared memory, word by word: the GPU's as the instrumented kernel captured it
   (:mod:`hwcheck.device.shared_capture`), the simulator's as its original run left it (the simulator's own capture
   by the instrumented kernel must equal that too); only the bytes the kernel wrote (a second simulator run,
   whose shared memory starts as 0xFF instead of 0, tells which).

Exit status as ``hwcheck run``'s: 0 pass, 1 mismatch, 2 usage error, 3 error. The report (JSON, written
atomically) holds counts per seed and the first mismatch records.
"""

from __future__ import annotations

import ctypes
import os
import sys
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

from hwcheck.arch import ptx_target
from hwcheck.errors import HwcheckError
from hwcheck.report import new_report, write_json_atomic
from hwcheck.runs.trace_compare import Regions, compare_buffers, compare_traces
from warpsim.errors import SimulatorFault, WarpsimError
from warpsim.frontends.args import concrete_args
from warpsim.isa.arith import DEFAULT_ARCH

__all__ = ["PtxJob", "CupyPtx", "open_cupy_ptx", "SimulatorAsGpu", "validate", "run_one",
           "check_ptx", "RECORDS", "WARMUP_LAUNCHES", "TIMED_LAUNCHES", "kernel_timing",
           "PTX_DIR_ENV", "ptx_file", "export_ptx", "exported_ptx", "open_job_kernel"]

RECORDS = 20
WARMUP_LAUNCHES = 3      # untimed launches before the timed ones (module load, caches, clocks)
TIMED_LAUNCHES = 20      # launches timed one by one with CUDA events; the report keeps their median
def _pack_params(decoded, args, pointer, kernel="kernel", tensor_map=None):
    """The kernel's parameter block as the simulator lays it out; ``pointer(name, array)`` gives an
    array's device address (``name`` as the simulator names the buffer); ``tensor_map(map, address, what)`` the bytes
    of a ``CUtensorMap`` parameter (default: the driver's, :func:`hwcheck.device.tensormap.encode_tiled`)."""
    from warpsim.ptx.launch import _pack_scalar
    from warpsim.ptx.memory import round_up
    from warpsim.ptx.syntax import type_bytes
    from warpsim.isa.tma import TensorMap
    data = bytearray(max(decoded.param_bytes, 1))
    for name, ptype, offset, size, is_struct in decoded.params:
        value = args[name]
        if isinstance(value, TensorMap):                 # the driver's CUtensorMap over the tensor's device copy
            if tensor_map is None:
                from hwcheck.device.tensormap import encode_tiled as tensor_map
            raw = tensor_map(value, pointer(name, value.array), f"{kernel}: parameter {name}")
        elif is_struct:
            arrays = sum(isinstance(v, np.ndarray) for _, v in value)
            raw, k = bytearray(), 0
            for ftype, v in value:
                fsize = type_bytes(ftype)
                raw.extend(bytes(round_up(len(raw), fsize) - len(raw)))
                if isinstance(v, np.ndarray):
                    raw.extend(pointer(name if arrays == 1 else f"{name}.{k}", v).to_bytes(8, "little"))
                    k += 1
                else:
                    raw.extend(_pack_scalar(kernel, name, ftype, v))
        elif isinstance(value, np.ndarray):
            raw = pointer(name, value).to_bytes(8, "little")
        else:
            raw = _pack_scalar(kernel, name, ptype, value)
        data[offset:offset + len(raw)] = raw
    return bytes(data)


def _kernel_params(params, layout):
    """``(block, pointers)`` for ``cuLaunchKernel``'s ``kernelParams``: the packed parameter bytes in a 64-byte aligned
    host buffer and, per parameter of ``layout`` (``decoded.params``), a pointer to its bytes there. Not
    ``CU_LAUNCH_PARAM_BUFFER_POINTER``: given one block that way, the driver faults every TMA kernel (a
    ``__grid_constant__ CUtensorMap`` parameter) with "an illegal instruction was encountered" on an H100
    (``hwcheck.device.tma_check``; conformance/h100/hopper-tma-third-run/), while ``kernelParams`` runs them."""
    raw = ctypes.create_string_buffer(len(params) + 64)
    base = (ctypes.addressof(raw) + 63) // 64 * 64
    ctypes.memmove(base, params, len(params))
    pointers = (ctypes.c_void_p * max(len(layout), 1))(*[base + offset for _, _, offset, _, _ in layout])
    return raw, pointers


@dataclass
class GpuLaunch:
    """What a launch leaves: ``buffers`` (name -> array, as the simulator names them), ``regions``
    (name -> ``(base address, bytes)``) and the device ``printf`` text (None where it was not captured)."""

    buffers: dict
    regions: dict
    printf: str | None = None


class _CapturedStdout:
    """File descriptor 1 redirected into a temporary file (device printf reaches the process's C stdout when
    the kernel is synchronised); ``text`` after the block, None where redirection failed."""

    def __enter__(self):
        import os
        import tempfile
        self.text, self.saved = None, None
        try:
            sys.stdout.flush()
            self.file = tempfile.TemporaryFile()
            self.saved = os.dup(1)
            os.dup2(self.file.fileno(), 1)
        except OSError:
            self.saved = None
        return self

    def __exit__(self, *exc):
        import os
        if self.saved is None:
            return False
        try:
            ctypes.CDLL(None).fflush(None)          # the C library's stdout buffer, where printf text waits
        except (OSError, AttributeError):
            pass
        os.dup2(self.saved, 1)
        os.close(self.saved)
        self.file.seek(0)
        self.text = self.file.read().decode("utf-8", "replace")
        self.file.close()
        return False


class CupyPtx:
    """PTX text on a CUDA GPU through CuPy's driver bindings (module load from text, raw parameter bytes)."""

    def __init__(self, gpu, ptxas="auto"):
        self.gpu = gpu
        self.cupy = gpu.cupy
        self.cupy.zeros(1)                      # the context exists before the driver calls
        self.ptxas = None if ptxas == "none" else ptxas          # "auto": per module, by its PTX .version
        self._tmp = None
        self._cubins = {}

    def cubin(self, text: str):
        """The cubin file this GPU runs for ``text`` (ptxas, as ``warpsim.ptx.contraction`` compiles it, for the
        GPU's arch), or None where no ptxas was found and the driver's JIT assembles the PTX."""
        from warpsim.toolchain import compile_cubin, find_ptxas
        if self.ptxas is None or (self.ptxas == "auto" and find_ptxas("auto", text) is None):
            return None
        if text not in self._cubins:
            import tempfile
            from pathlib import Path
            from warpsim.ptx.syntax import parse_module
            if self._tmp is None:
                self._tmp = tempfile.TemporaryDirectory(prefix="hwcheck-cubin-")
            path = Path(self._tmp.name) / f"m{len(self._cubins)}.cubin"
            compile_cubin(text, parse_module(text), self.gpu.info.arch, find_ptxas(self.ptxas, text), path)
            self._cubins[text] = str(path)
        return self._cubins[text]

    def load(self, text: str):
        drv = self.cupy.cuda.driver
        cubin = self.cubin(text)
        try:
            if cubin is not None:
                with open(cubin, "rb") as f:
                    return drv.moduleLoadData(f.read())
            return drv.moduleLoadData(text.encode() + b"\0")
        except Exception as e:
            import re
            version = re.search(r"^\s*\.version\s+(\S+)", text, re.MULTILINE)
            raise HwcheckError(f"hwcheck run: the GPU driver (CUDA {self.gpu.info.driver_cuda_version}) refused the "
                               f"PTX (.version {version.group(1) if version else '?'}): "
                               f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None

    def _prepare(self, module, decoded, kernel, smem, args):
        """``(launch(grid, block), device arrays, regions)``: the arguments copied to the device, the parameter
        bytes packed, and a function that launches the kernel once on the null stream (not synchronised)."""
        cp, drv = self.cupy, self.cupy.cuda.driver
        device, regions = {}, {}

        def pointer(name, array):
            d = cp.asarray(np.ascontiguousarray(array))
            device[name] = (d, array)
            regions[name] = (int(d.data.ptr), int(array.nbytes))
            return int(d.data.ptr)
        params = _pack_params(decoded, args, pointer, kernel)
        for name, _off, nbytes, _init in decoded.globals_:
            regions[f".global {name}"] = (int(drv.moduleGetGlobal(module, name)), nbytes)
        func = drv.moduleGetFunction(module, kernel)
        if smem > 48 * 1024:
            drv.funcSetAttribute(func, 8, int(smem))     # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        block_, pointers = _kernel_params(params, decoded.params)

        def launch(grid, block):
            keep = (block_, pointers)                    # noqa: F841 -- the bytes the driver reads
            drv.launchKernel(func, *grid, *block, int(smem), 0, ctypes.addressof(pointers), 0)
        return launch, device, regions

    def _failed(self, kernel, e):
        return HwcheckError(f"hwcheck run: kernel {kernel} failed on {self.gpu.info.name}: "
                            f"{str(e).splitlines()[0] if str(e) else type(e).__name__}")

    def launch(self, module, decoded, kernel, grid, block, smem, args) -> GpuLaunch:
        cp = self.cupy
        try:
            run, device, regions = self._prepare(module, decoded, kernel, smem, args)
            cp.cuda.runtime.deviceSynchronize()
            with _CapturedStdout() as captured:
                run(grid, block)
                cp.cuda.runtime.deviceSynchronize()
        except Exception as e:
            raise self._failed(kernel, e) from None
        out = {name: cp.asnumpy(d).view(host.dtype).reshape(host.shape) for name, (d, host) in device.items()}
        return GpuLaunch(out, regions, captured.text)

    def kernel_ms(self, module, decoded, kernel, grid, block, smem, args, warmup=WARMUP_LAUNCHES,
                  launches=TIMED_LAUNCHES) -> list:
        """The GPU time in milliseconds of each of ``launches`` launches of the kernel on its own device copy of
        ``args`` (a CUDA event recorded before and after each launch on the null stream, the launch waited
        for), after ``warmup`` launches not timed. Device printf output, if any, is discarded."""
        cp = self.cupy
        times = []
        try:
            run, _device, _regions = self._prepare(module, decoded, kernel, smem, args)
            cp.cuda.runtime.deviceSynchronize()
            with _CapturedStdout():
                for _ in range(warmup):
                    run(grid, block)
                cp.cuda.runtime.deviceSynchronize()
                for _ in range(launches):
                    start, end = cp.cuda.Event(), cp.cuda.Event()
                    start.record()
                    run(grid, block)
                    end.record()
                    end.synchronize()
                    times.append(float(cp.cuda.get_elapsed_time(start, end)))
        except Exception as e:
            raise self._failed(kernel, e) from None
        return times


def open_cupy_ptx(ptxas: str = "auto"):
    """A :class:`CupyPtx` on the default GPU (what each ``--workers`` process opens; ``ptxas``:
    the one that assembles the GPU's code)."""
    from hwcheck.device.gpu import Gpu
    return CupyPtx(Gpu.open(), ptxas)


class SimulatorAsGpu:
    """A stand-in for :class:`CupyPtx` that runs the simulator (for offline tests: it agrees by
    construction unless ``corrupt(kind, buffers)`` changes the result; ``kind`` is ``"original"`` or
    ``"instrumented"``; ``shared_fill``: the byte its shared memory starts as, like a GPU's leftovers)."""

    def __init__(self, arch=DEFAULT_ARCH, corrupt=None, shared_fill=0, kernel_times=None):
        self.arch, self.corrupt, self.shared_fill = arch, corrupt, shared_fill
        self.kernel_times = kernel_times       # what kernel_ms reports (milliseconds), or None: no timing

    def load(self, text):
        from warpsim import ptx
        return ptx.load(text, filename="<gpu>")

    def launch(self, module, decoded, kernel, grid, block, smem, args) -> GpuLaunch:
        res = module.launch(kernel, grid=grid, block=block, args=args, smem=smem, arch=self.arch, quiet=True,
                            shared_fill=self.shared_fill)
        if self.corrupt is not None:
            self.corrupt("instrumented" if any(n.startswith("__warpsim") for n in res.buffers) else "original",
                         res.buffers)
        return GpuLaunch(res.buffers, _sim_regions(res), "".join(text for _, _, text in res.printf))

    def kernel_ms(self, module, decoded, kernel, grid, block, smem, args, warmup=WARMUP_LAUNCHES,
                  launches=TIMED_LAUNCHES):
        """``kernel_times`` as given (the simulator has no GPU time to stand in with); None without them."""
        return None if self.kernel_times is None else list(self.kernel_times)


def kernel_timing(times) -> dict:
    """The report's GPU time of a run from the timed launches' milliseconds: the median and the range.

    >>> kernel_timing([0.5, 0.25, 0.75, 0.3])
    {'gpu_kernel_ms': 0.4, 'gpu_kernel_ms_range': [0.25, 0.75], 'gpu_timed_launches': 4}
    """
    return {"gpu_kernel_ms": round(float(np.median(times)), 6),
            "gpu_kernel_ms_range": [round(float(min(times)), 6), round(float(max(times)), 6)],
            "gpu_timed_launches": len(times)}


def _sim_regions(result):
    """name -> ``(generic address, bytes)`` of every global buffer and ``.global`` variable of a simulator run."""
    from warpsim.ptx.memory import GLOBAL_BASE
    return {name: (GLOBAL_BASE + base, size) for name, (base, size) in result.machine.buffers.items()}


@dataclass
class PtxJob:
    """One kernel to check: its source file, kernel name, launch (``grid``, ``block``: 3-tuples; ``smem``:
    dynamic shared bytes) and argument specs (name -> what :func:`warpsim.frontends.args.parse_arg` gives)."""

    source: str
    kernel: str
    grid: tuple
    block: tuple
    smem: int
    specs: dict

    @property
    def label(self):
        return f"{self.source} {self.kernel}"


@dataclass
class PtxSeed:
    """One seed of one job: elements, trace records and printf lines compared, and how many differ."""

    seed: int
    global_elements: int = 0
    global_bad: int = 0
    instrumented_bad: int = 0
    records: int = 0
    records_bad: int = 0
    relocated: int = 0
    unchecked: int = 0
    compared_to_step: int | None = None
    truncated_threads: int = 0
    printf_lines: int | None = None
    printf_bad: int = 0
    shared_words: int = 0
    shared_bad: int = 0
    sim_s: float = 0.0
    gpu_s: float = 0.0

    @property
    def mismatched(self):
        return self.global_bad + self.instrumented_bad + self.records_bad + self.printf_bad + self.shared_bad

    def as_dict(self):
        return {"seed": self.seed, "global_elements_compared": self.global_elements,
                "mismatched_global_elements": self.global_bad,
                "instrumented_vs_original_mismatches": self.instrumented_bad,
                "trace_records_compared": self.records, "mismatched_trace_records": self.records_bad,
                "relocated_address_records": self.relocated, "unchecked_records": self.unchecked,
                "threads_with_full_trace_buffer": self.truncated_threads,
                "compared_up_to_step": self.compared_to_step,
                "printf_lines_compared": self.printf_lines, "mismatched_printf_lines": self.printf_bad,
                "shared_words_compared": self.shared_words, "mismatched_shared_words": self.shared_bad,
                "sim_s": round(self.sim_s, 4), "gpu_s": round(self.gpu_s, 4)}

    def line(self, label):
        full = (f"; trace full in {self.truncated_threads} threads, compared up to step {self.compared_to_step}"
                if self.truncated_threads else "")
        if self.printf_lines is not None:
            full += f"; printf {self.printf_lines} lines, {self.printf_bad} differ"
        return (f"{label} seed {self.seed}: global {self.global_elements} elements, {self.global_bad} differ; "
                f"trace {self.records} records ({self.relocated} relocated addresses), {self.records_bad} differ; "
                f"shared {self.shared_words} words, {self.shared_bad} differ; "
                f"instrumented vs original {self.instrumented_bad} differ{full}")


@dataclass
class PtxRun:
    """One job's seeds and its first mismatch records (dicts, as the report holds them)."""

    job: PtxJob
    entry: str = ""
    arch: str = ""
    sites: int = 0
    seeds: list = field(default_factory=list)
    records: list = field(default_factory=list)
    wall_s: float = 0.0
    first_register: dict | None = None   # the first seed's earliest mismatching register record, with its PTX text
    timing: dict | None = None           # kernel_timing() of the original kernel on the GPU, where it was timed
    contraction: dict | None = None      # who decided FMA contraction, and the GPU code it was checked against
    error: str | None = None             # what stopped this job (a GPU fault, a compile error), if anything did

    @property
    def mismatched(self):
        return sum(s.mismatched for s in self.seeds)

    def as_dict(self):
        j = self.job
        return {"source": j.source, "kernel": j.kernel, "entry": self.entry, "grid": list(j.grid),
                "block": list(j.block), "smem": j.smem,
                "args": {k: repr(v) if not isinstance(v, np.ndarray) else f"array {v.dtype} {v.shape}"
                         for k, v in j.specs.items()},
                "simulator_arch": self.arch, "trace_sites": self.sites, "seeds_run": len(self.seeds),
                "mismatched": self.mismatched, "wall_s": round(self.wall_s, 3), **(self.timing or {}),
                "contraction": self.contraction, **({"error": self.error} if self.error else {}),
                "seeds": [s.as_dict() for s in self.seeds], "first_mismatching_register": self.first_register,
                "mismatches": self.records}


def _fused_texts(module) -> list:
    """What ptxas made of a loaded module otherwise than its text says, by instruction text: the fused pairs as
    ``(add text, mul text)`` and the lines of each NaN fold (``warpsim.ptx.contraction``), sorted: comparable across
    the original and the instrumented copy, whose line numbers differ."""
    lines, c = module.text.splitlines(), module.contraction
    out = [("fused", lines[p.add_line - 1].strip(), lines[p.mul_line - 1].strip()) for p in c.pairs]
    for kind in ("sign_selects", "saturated_ones", "ftz_dropped", "double_negations", "negated_differences",
                 "kept_differences", "known_predicates"):
        out += [(kind, lines[line - 1].strip(), "") for line in getattr(c, kind)]
    out += [("sign_operands", lines[line - 1].strip(), str(pos)) for line, pos in c.sign_operands]
    out += [("folded_constants", lines[line - 1].strip(), f"{value:#x}") for line, value in c.folded_constants]
    out += [("unit_products", lines[line - 1].strip(), str(pos)) for line, pos in c.unit_products]
    out += [("dropped_abs", lines[line - 1].strip(), str(kept)) for line, kept in c.dropped_abs]
    out += [("ftz_folds", lines[line - 1].strip(), f"{value:#x}") for line, value in c.ftz_folds]
    return sorted(out)


def _compare_printf(want: str, got: str) -> dict:
    """The device printf lines of both machines as multisets (the GPU's warps print in no fixed order).

    >>> _compare_printf("a\\nb\\n", "b\\na\\n")["mismatched"], _compare_printf("a\\n", "c\\n")["only_gpu"]
    (0, ['c'])
    """
    from collections import Counter
    w, g = Counter(want.splitlines()), Counter(got.splitlines())
    only_sim, only_gpu = sorted((w - g).elements()), sorted((g - w).elements())
    return {"what": "device printf output differs", "lines": sum(w.values()),
            "mismatched": len(only_sim) + len(only_gpu), "only_simulator": only_sim[:5], "only_gpu": only_gpu[:5]}


def _buffers_equal(a: dict, b: dict, skip=()) -> int:
    bad = 0
    for name, x in a.items():
        if name in skip:
            continue
        y = b[name]
        bad += int(np.count_nonzero(np.ascontiguousarray(x).view(np.uint8) != np.ascontiguousarray(y).view(np.uint8)))
    return bad


def _first_apart(sim, sim1, gpu, gpu1, skip=()) -> dict | None:
    """Where an original run and its instrumented copy first differ, the simulator's pair (``sim``, ``sim1``) before
    the GPU's: ``{"buffer", "word", "simulator": [original, instrumented], "gpu": [original, instrumented]}``, the
    32-bit word holding the first differing byte, as hex; None where neither pair differs.

    >>> a, b = {"out": np.array([1, 2, 3], np.uint32)}, {"out": np.array([1, 2, 7], np.uint32)}
    >>> _first_apart(a, b, a, a)
    {'buffer': 'out', 'word': 2, 'simulator': ['0x00000003', '0x00000007'], 'gpu': ['0x00000003', '0x00000003']}
    """
    for x, y in ((sim, sim1), (gpu, gpu1)):
        for name in x:
            if name in skip:
                continue
            bx, by = (np.ascontiguousarray(v[name]).view(np.uint8).reshape(-1) for v in (x, y))
            apart = np.flatnonzero(bx != by)
            if apart.size:
                word = int(apart[0]) // 4

                def hexes(a, b):
                    return [f"0x{int.from_bytes(v[name].tobytes()[4 * word:4 * word + 4], 'little'):08x}"
                            for v in (a, b)]
                return {"buffer": name, "word": word, "simulator": hexes(sim, sim1), "gpu": hexes(gpu, gpu1)}
    return None


def _ptx_line(text: str, line) -> str | None:
    """Line ``line`` (1-based) of ``text``, stripped; None where there is none.

    >>> _ptx_line("a;\\n  bfe.s32 %r1, %r2, 3, 4;\\n", 2)
    'bfe.s32 %r1, %r2, 3, 4;'
    """
    lines = text.splitlines()
    return lines[line - 1].strip() if isinstance(line, int) and 1 <= line <= len(lines) else None


PTX_DIR_ENV = "HWCHECK_PTX_DIR"


def ptx_file(folder, source, arch: str, k: int) -> str:
    """Where :func:`export_ptx` puts module ``k`` of ``source`` for ``arch`` (``sm_90``): ``folder/NAME.sm_90.k.ptx``,
    ``NAME`` the file name with its extension (``flash_fwd.cu`` and the DSL's ``flash_fwd.py`` stay apart).

    >>> ptx_file("d", "examples/cute_cpp/gemm_smem.cu", "sm_90", 0)
    'd/gemm_smem.cu.sm_90.0.ptx'
    """
    import os
    return os.path.join(folder, f"{os.path.basename(source)}.{arch}.{k}.ptx")


def export_ptx(sources, folder, arch: str = "sm_90") -> list:
    """Compile each source (``.cu``/CuTe DSL; a ``.ptx`` is left out) for ``arch`` and write its PTX modules
    (atomically) where :func:`open_job_kernel` finds them; returns the paths written."""
    import os
    from hwcheck.report import write_text_atomic
    from warpsim.frontends.compiled import normalize_arch
    from warpsim.frontends.source import compile_source
    arch, written = normalize_arch(arch), []
    names = {}
    for source in dict.fromkeys(sources):
        other = names.setdefault(os.path.basename(source), source)
        if other != source:
            raise ValueError(f"hwcheck ptx export: {source} and {other} have the same file name; their PTX would "
                             f"overwrite each other in {folder}")
        if source.endswith(".ptx"):
            continue
        for k, text in enumerate(compile_source(source, arch).modules):
            written.append(ptx_file(folder, source, arch, k))
            write_text_atomic(written[-1], text, what="PTX")
    return [os.fspath(p) for p in written]


def exported_ptx(source, target: str):
    """The ``warpsim.ptx.compile.Compiled`` of ``source`` for ``target`` (``sm_90``) read from ``$HWCHECK_PTX_DIR``
    (:func:`export_ptx`, made on a machine with the compilers), or None where that folder is unset or lacks it
    (and for a ``.ptx`` source, which needs no compiling)."""
    import os
    from pathlib import Path
    from warpsim.frontends.compiled import Compiled
    from warpsim.frontends.source import source_kind
    source, folder = os.fspath(source), os.environ.get(PTX_DIR_ENV)
    if not folder or source.endswith(".ptx") or not os.path.exists(ptx_file(folder, source, target, 0)):
        return None
    texts, k = [], 0
    while os.path.exists(ptx_file(folder, source, target, k)):
        texts.append(Path(ptx_file(folder, source, target, k)).read_text(encoding="utf-8"))
        k += 1
    return Compiled(tuple(texts), Path(source), source_kind(source), target)


def open_job_kernel(job: PtxJob, arch: str, ptxas: str = "auto"):
    """``warpsim.ptx.front.open_kernel`` for ``job`` compiled for the model ``arch`` (``sm90`` -> ``sm_90``); where
    ``$HWCHECK_PTX_DIR`` holds the source's PTX (:func:`exported_ptx`), that PTX is used and nothing is compiled.
    ``ptxas``: who decides the module's FMA contraction (``"none"``: nobody, for a caller that loads its own)."""
    from warpsim.frontends.kernel import open_kernel
    target = ptx_target(arch)
    return open_kernel(job.source, job.kernel, arch=target, compiled=exported_ptx(job.source, target), ptxas=ptxas)


def validate(job: PtxJob, arch: str = DEFAULT_ARCH, seed: int = 0):
    """Compile and open ``job``'s kernel and build its arguments for ``seed``, so that a bad source, kernel name
    or argument is an error (``ValueError``, ``TypeError`` or ``WarpsimError``, one line) before any GPU work."""
    kernel = open_job_kernel(job, arch)
    args = kernel.core_args(concrete_args(job.specs, seed))
    decoded = kernel.module.decoded(kernel.name)
    _pack_params(decoded, kernel.module._arguments(kernel.name, decoded, args), lambda name, array: 0, kernel.name,
                 lambda tmap, address, what: bytes(len(tmap.check(what).encode(0))))
    return kernel


def run_one(gpu_ptx, job: PtxJob, *, seeds, first_seed, arch, trace=True, capacity=4096, window=(0, 0xFFFFFFFF),
            log=None, run=None, timing=False, ptxas="auto") -> PtxRun:
    """Check ``job`` for ``seeds`` seeds; returns its :class:`PtxRun` (``HwcheckError`` stops it). ``timing``:
    then time the original kernel on the GPU with the first seed's arguments (``PtxRun.timing``). ``ptxas``:
    the simulator's contraction (``warpsim.ptx.load``); ``"none"`` runs it without, beside the GPU's real code,
    to show what contraction changes. Otherwise the decision is checked against the cubin the GPU runs."""
    from hwcheck.device.instrument import TRACE_PARAM, instrument
    from hwcheck.device.shared_capture import SHARED_PARAM, compare_captures, expected_capture, written_mask
    from warpsim import ptx
    log = sys.stderr if log is None else log
    run = PtxRun(job) if run is None else run
    start = time.perf_counter()
    kernel = open_job_kernel(job, arch, ptxas="none")   # its text; sim0 below is decided against the GPU's cubin
    run.entry, run.arch = kernel.name, arch
    text, name = kernel.module.text, kernel.name
    gpu0 = gpu_ptx.load(text)
    cubin_of = getattr(gpu_ptx, "cubin", lambda text: None)   # the SASS the GPU runs, where hwcheck compiled it
    target = ptx_target(arch)
    if ptxas == "none":
        cubin_of = lambda text: None                     # noqa: E731 - the simulator decides nothing
    sim0 = ptx.load(text, filename=kernel.module.filename, arch=target, ptxas=ptxas, cubin=cubin_of(text))
    d0 = sim0.decoded(name)
    decided = sim0.contraction.as_dict()
    for key in ("cubin", "path"):              # files of this machine (a temporary cubin, ptxas): names only
        if decided.get(key):
            decided[key] = os.path.basename(decided[key])
    run.contraction = {**decided, "pairs": len(sim0.contraction.pairs),
                       "gpu_code": "cubin from this ptxas" if cubin_of(text) else "PTX (the driver's JIT)"}
    if trace:
        ins = instrument(text, name, capacity=capacity, window=window, filename=kernel.module.filename)
        run.sites = len(ins.sites)
        gpu1 = gpu_ptx.load(ins.text)
        sim1 = ptx.load(ins.text, filename=kernel.module.filename, arch=target, ptxas=ptxas,
                        cubin=cubin_of(ins.text))
        d1 = sim1.decoded(name)
        run.contraction["instrumented_pairs"] = len(sim1.contraction.pairs)
        # the trace stores give products more readers, so ptxas may fuse the copy less than the original
        same_fusion = _fused_texts(sim0) == _fused_texts(sim1)
        run.contraction["instrumented_fused_alike"] = same_fusion
    threads = int(np.prod(job.grid)) * int(np.prod(job.block))
    for seed in range(first_seed, first_seed + seeds):
        result = PtxSeed(seed)
        args = kernel.core_args(concrete_args(job.specs, seed))
        t = time.perf_counter()
        try:
            want = sim0.launch(name, grid=job.grid, block=job.block, args=args, smem=job.smem, arch=arch, quiet=True,
                               keep_shared=trace)
        except SimulatorFault as e:
            raise HwcheckError(f"hwcheck run: {job.label} seed {seed}: the simulator faulted, so the kernel was "
                               f"not launched: {e}") from None
        result.sim_s += time.perf_counter() - t
        t = time.perf_counter()
        got = gpu_ptx.launch(gpu0, d0, name, job.grid, job.block, job.smem, args)
        result.gpu_s += time.perf_counter() - t
        # buffers keep at most half the records, so a register record (the first wrong instruction) has room
        cmp = compare_buffers(want.buffers, got.buffers, limit=max(0, RECORDS // 2 - len(run.records)))
        result.global_elements, result.global_bad = cmp.compared, cmp.mismatched
        run.records.extend({"seed": seed, **r} for r in cmp.records)
        if got.printf is not None:
            printed = _compare_printf("".join(text for _, _, text in want.printf), got.printf)
            result.printf_lines, result.printf_bad = printed["lines"], printed["mismatched"]
            if printed["mismatched"]:
                run.records.append({"seed": seed, **printed})
        if trace:
            ctas, per_cta = int(np.prod(job.grid)), int(np.prod(job.block))
            targs = dict(args, **{TRACE_PARAM: np.zeros(ins.buffer_bytes(threads) // 4, np.uint32),
                                  SHARED_PARAM: np.zeros(ins.capture.buffer_bytes(ctas, job.smem) // 4, np.uint32)})
            t = time.perf_counter()
            want1 = sim1.launch(name, grid=job.grid, block=job.block, args=targs, smem=job.smem, arch=arch,
                                quiet=True)
            result.sim_s += time.perf_counter() - t
            t = time.perf_counter()
            got1 = gpu_ptx.launch(gpu1, d1, name, job.grid, job.block, job.smem, targs)
            result.gpu_s += time.perf_counter() - t
            added = (TRACE_PARAM, SHARED_PARAM)
            on_sim = _buffers_equal(want.buffers, want1.buffers, skip=added)
            on_gpu = _buffers_equal(got.buffers, got1.buffers, skip=added)
            result.instrumented_bad = on_sim + on_gpu
            if not same_fusion:      # ptxas fused the copy otherwise: each must equal its own GPU code instead
                result.instrumented_bad = _buffers_equal(want1.buffers, got1.buffers, skip=added)
            if result.instrumented_bad:     # gpu_bytes alone: the GPU's compiler made the two kernels compute apart
                run.records.append({"seed": seed, "what": "the instrumented kernel's buffers differ from the "
                                                          "original's", "bytes": result.instrumented_bad,
                                    "simulator_bytes": on_sim, "gpu_bytes": on_gpu,
                                    "first": _first_apart(want.buffers, want1.buffers, got.buffers, got1.buffers,
                                                          skip=added)})
            tc = compare_traces(ins, want1.buffers[TRACE_PARAM], got1.buffers[TRACE_PARAM],
                                Regions(_sim_regions(want1), got1.regions, job.smem), job.block, job.grid,
                                limit=RECORDS - len(run.records))
            result.records, result.records_bad, result.relocated = tc.compared, tc.mismatched, tc.relocated
            result.unchecked, result.truncated_threads = tc.unchecked, tc.full_threads
            result.compared_to_step = tc.compared_to_step
            run.records.extend({"seed": seed, **r} for r in tc.records)
            if tc.first is not None and run.first_register is None:
                run.first_register = {"seed": seed, **tc.first, "ptx": _ptx_line(text, tc.first.get("ptx_line"))}
            finals, mask = _in_cta_order(want.shared), None
            expected = expected_capture(ins.capture, d0.shared, finals, job.smem, per_cta)
            if ins.capture.regions:                 # which bytes the kernel writes: a run from other bytes
                t = time.perf_counter()
                other = sim0.launch(name, grid=job.grid, block=job.block, args=args, smem=job.smem, arch=arch,
                                    quiet=True, keep_shared=True, shared_fill=0xFF)
                result.sim_s += time.perf_counter() - t
                mask = written_mask(ins.capture, d0.shared, finals, _in_cta_order(other.shared), job.smem)
            for what, captured in (("the simulator's capture of its own final shared memory differs (an "
                                    "instrumentation error)", want1.buffers[SHARED_PARAM]),
                                   ("final shared memory differs", got1.buffers[SHARED_PARAM])):
                sc = compare_captures(ins.capture, expected, captured, job.smem, job.grid, mask,
                                      limit=max(0, RECORDS - len(run.records)), what=what)
                result.shared_words = sc.compared
                result.shared_bad += sc.mismatched
                run.records.extend({"seed": seed, **r} for r in sc.records)
        run.records.sort(key=lambda r: "step" not in r)    # register records first: they name the instruction
        run.seeds.append(result)
        log.write(result.line(job.label) + "\n")
        log.flush()
    if timing:
        times = gpu_ptx.kernel_ms(gpu0, d0, name, job.grid, job.block, job.smem,
                                  kernel.core_args(concrete_args(job.specs, first_seed)))
        if times:
            run.timing = kernel_timing(times)
            log.write(f"{job.label}: GPU {run.timing['gpu_kernel_ms']:.4f} ms per launch (median of {len(times)})\n")
    run.wall_s = time.perf_counter() - start
    return run


def _in_cta_order(shared):
    """Each CTA's final shared window (``LaunchResult.shared``: in the order the CTAs finished, which in a cluster
    launch need not be theirs) in linear CTA order, as the GPU's capture lays them out."""
    return [w for _, w in sorted(shared, key=lambda cw: (cw[0][2], cw[0][1], cw[0][0]))]


_WORKER_PTX = None


def _worker_job(make_gpu_ptx, job, options):
    """One job in a worker process (its own GPU context, opened once): ``(PtxRun, error or None)``."""
    global _WORKER_PTX
    if _WORKER_PTX is None:
        _WORKER_PTX = make_gpu_ptx()
    run = PtxRun(job)
    try:
        with open(os.devnull, "w") as quiet:
            run_one(_WORKER_PTX, job, run=run, log=quiet, **options)
    except HwcheckError as e:
        run.error = str(e)
    except (WarpsimError, ValueError, TypeError) as e:
        run.error = f"hwcheck run: {e}"
    return run, run.error


def check_ptx(gpu_ptx, jobs, *, seeds, first_seed=0, arch=DEFAULT_ARCH, trace=True, capacity=4096,
              window=(0, 0xFFFFFFFF), report=None, command="", gpu_info=None, log=None, workers=1,
              make_gpu_ptx=None, timing=True, ptxas="auto"):
    """Run :func:`run_one` for each job (``timing``: each kernel's GPU time too); write the report; return
    ``(runs, status, error, exit status)``.

    ``workers`` > 1: the jobs run in that many processes (``spawn``), each with its own ``make_gpu_ptx()``
    (a picklable callable, e.g. :func:`open_cupy_ptx`); the report lists them in ``jobs``'
    order, as one process would."""
    runs, error, settings = [], None, {"seeds": seeds, "first_seed": first_seed, "simulator_arch": arch,
                                       "trace": trace, "trace_capacity": capacity, "trace_window": list(window),
                                       "workers": workers, "timing": timing, "simulator_ptxas": ptxas,
                                       "timed_launches": [WARMUP_LAUNCHES, TIMED_LAUNCHES] if timing else None}
    options = dict(seeds=seeds, first_seed=first_seed, arch=arch, trace=trace, capacity=capacity, window=window,
                   timing=timing, ptxas=ptxas)
    try:
        if workers > 1:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor
            jobs = list(jobs)
            with ProcessPoolExecutor(min(workers, len(jobs)),
                                     mp_context=multiprocessing.get_context("spawn")) as pool:
                for run, job_error in pool.map(_worker_job, [make_gpu_ptx] * len(jobs), jobs,
                                               [options] * len(jobs)):
                    runs.append(run)
                    if log is not None:
                        log.write(f"{run.job.kernel}: {len(run.seeds)} seeds, {run.mismatched} mismatches\n")
                    if job_error and error is None:
                        error = job_error
            jobs = []
        for job in jobs:
            run = PtxRun(job)
            runs.append(run)
            run_one(gpu_ptx, job, log=log, run=run, **options)
    except HwcheckError as e:
        error = str(e)
    except (WarpsimError, ValueError, TypeError) as e:
        error = f"hwcheck run: {e}"
    except Exception as e:   # a bug: keep what finished, and the traceback, in the report
        error = f"hwcheck: internal error: {type(e).__name__}: {e}"
        settings["traceback"] = traceback.format_exc()
    if error and runs and runs[-1].error is None and not runs[-1].seeds:
        runs[-1].error = error                   # the job it stopped in (one process: the rest did not run)
    status = "error" if error else ("fail" if any(r.mismatched for r in runs) else "pass")
    if report is not None:
        data = new_report(command, gpu_info)
        data.update(status=status, error=error, settings=settings, kind="ptx-programs",
                    totals={"runs": len(runs), "seeds": sum(len(r.seeds) for r in runs),
                            "mismatched": sum(r.mismatched for r in runs),
                            "trace_records_compared": sum(s.records for r in runs for s in r.seeds),
                            "shared_words_compared": sum(s.shared_words for r in runs for s in r.seeds),
                            "global_elements_compared": sum(s.global_elements for r in runs for s in r.seeds)},
                    runs=[r.as_dict() for r in runs])
        try:
            write_json_atomic(report, data)
        except HwcheckError as e:
            error, status = (f"{error}; {e}" if error else str(e)), "error"
    return runs, status, error, {"pass": 0, "fail": 1, "error": 3}[status]
