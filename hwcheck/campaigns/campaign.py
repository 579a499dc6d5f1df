"""Raw-instruction conformance campaigns: the same generated inputs on the simulator and on the GPU.

A campaign is a list of cases (:mod:`hwcheck.campaigns.cases`), each run for ``count`` instructions in chunks
of at most ``chunk`` (memory stays bounded). For each chunk: make inputs, simulate them (warpsim's
batched ISA API, parallel over all cores), run them on the GPU, compare every destination register
bit for bit (:mod:`hwcheck.compare`). Every mismatch is counted; a few are kept as records, with the
inputs of the first failing warps of each case.

Inputs are reproducible: chunk ``k`` of a case is ``case.inputs(n, np.random.default_rng([seed,
case_id(case), k]))`` with ``n = min(chunk, count - k * chunk)``.

For an evidence class (``warpsim.isa.inputs.EVIDENCE_CLASSES``) the simulator also runs every
neighbour of the model (``warpsim.isa.arith.neighbours``: each parameter moved by one, or the other
block size) on the same inputs, and counts the registers where that variant disagrees with the GPU:
a variant with a non-zero count is ruled out by the hardware (:func:`variant_totals`).

>>> cases = build_cases("mma", shapes=["m16n8k8"], types=["bf16.f32"], classes=["ties", "special"])
>>> [(c.label, c.cls) for c in cases]
[('m16n8k8 bf16.f32', 'ties'), ('m16n8k8 bf16.f32', 'special')]
>>> [c.label for c in build_cases("ldmatrix", variants=["x1", "x4.trans"])]
['x1', 'x4.trans']
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass, field, replace

import numpy as np

from hwcheck.campaigns.cases import LDMATRIX_CLASS, CvtCase, LdmatrixCase, MmaCase
from hwcheck.compare import compare_registers
from hwcheck.errors import HwcheckError
from hwcheck.campaigns.float_cases import F64_FORMS, FLOAT_CLASSES, FLOAT_FORMS, F64Case, FloatCase
from hwcheck.campaigns.int_cases import INT_CLASSES, IntCase, IntRunner, select_forms
from hwcheck.device.kernels import module_source
from warpsim.isa.arith import DEFAULT_ARCH, get_arch, neighbours
from warpsim.isa.inputs import CVT_CLASSES, EVIDENCE_CLASSES, MMA_CLASSES
from warpsim.isa.mma import TYPE_COMBOS

__all__ = ["INSTRS", "SHAPES", "MMA_TYPES", "CVT_TYPES", "VARIANTS", "CLASSES", "CHUNK", "CASE_RECORDS",
           "CASE_INPUTS", "build_cases", "make_runner", "case_id", "CaseResult", "GpuRunner", "warm_up", "Chunk",
           "ChunkResult", "plan_chunks", "chunk_inputs", "compare_chunk", "run_chunk", "add_chunk", "run_case",
           "run_campaign", "group_totals", "summary_table", "first_mismatches", "campaign_status", "variant_totals",
           "variant_lines"]

INSTRS = ("mma", "ldmatrix", "cvt", "float", "f64", "int")
SHAPES = ("m16n8k16", "m16n8k8")
MMA_TYPES = tuple(f"{ab}.{cd}" for ab, cd in TYPE_COMBOS)   # f16.f32, bf16.f32, f16.f16
CVT_TYPES = ("f16", "bf16")
VARIANTS = ("x1", "x2", "x4", "x1.trans", "x2.trans", "x4.trans")
CLASSES = {"mma": MMA_CLASSES + tuple(EVIDENCE_CLASSES), "ldmatrix": (LDMATRIX_CLASS,), "cvt": CVT_CLASSES,
           "float": FLOAT_CLASSES, "f64": FLOAT_CLASSES, "int": INT_CLASSES}
PER_THREAD = ("cvt", "float", "f64", "int")   # one instruction per thread: counts are whole warps of 32
CHUNK = 1 << 16          # instructions per chunk
CASE_RECORDS = 20        # mismatch records kept per case
CASE_INPUTS = 2          # failing warps per case whose inputs are kept


def build_cases(instr: str, *, shapes=SHAPES, types=None, variants=None, classes=None, forms=None) -> list:
    """The cases of a campaign, in a fixed order: shape, then type (or variant, or form), then class.

    ``variants``: ldmatrix's variants, or the float forms (``hwcheck.campaigns.float_cases.FLOAT_FORMS``, PTX text
    such as ``fma.rz.ftz.f32``) of ``instr == "float"`` (``F64_FORMS`` of ``instr == "f64"``); default all.
    ``forms``: glob patterns picking the integer forms (``hwcheck.campaigns.int_cases.INT_FORMS``, e.g. ``bfe.*``) of ``instr == "int"``; default all.

    Raises ``ValueError`` naming the option and the allowed values for anything unknown.
    """
    if instr not in INSTRS:
        raise ValueError(f"--instr: {instr!r} is not one of {', '.join(INSTRS)}")
    classes = list(CLASSES[instr] if classes is None else classes)
    _check("--classes", classes, CLASSES[instr])
    if instr == "mma":
        types = list(MMA_TYPES if types is None else types)
        _check("--shapes", shapes, SHAPES)
        _check("--types", types, MMA_TYPES)
        return [MmaCase(shape, *t.split("."), cls) for shape in shapes for t in types for cls in classes]
    if instr == "cvt":
        types = list(CVT_TYPES if types is None else types)
        _check("--types", types, CVT_TYPES)
        return [CvtCase(to, cls) for to in types for cls in classes]
    if instr == "int":
        return [IntCase(name, cls) for name in select_forms(forms) for cls in classes]
    if instr in ("float", "f64"):
        known, case, listed = ((FLOAT_FORMS, FloatCase, "FLOAT_FORMS") if instr == "float" else
                               (F64_FORMS, F64Case, "F64_FORMS"))
        forms = list(known if variants is None else variants)
        for form in forms:
            if form not in known:
                raise ValueError(f"--variants: {form!r} is not a form of the {instr} campaign (PTX text such as "
                                 f"fma.rz.ftz.f32 or cvt.rni.s32.f64; the list: "
                                 f"hwcheck.campaigns.float_cases.{listed})")
        _check("--variants", forms, known)
        return [case(form, cls) for form in forms for cls in classes]
    variants = list(VARIANTS if variants is None else variants)
    _check("--variants", variants, VARIANTS)
    return [LdmatrixCase(int(v[1]), v.endswith(".trans")) for v in variants]


def _check(option, values, allowed) -> None:
    if not values:
        raise ValueError(f"{option}: no values given")
    for value in values:
        if value not in allowed:
            raise ValueError(f"{option}: {value!r} is not one of {', '.join(allowed)}")
    if len(set(values)) != len(values):
        raise ValueError(f"{option}: values repeat: {', '.join(values)}")


def case_id(case) -> int:
    """A stable integer naming a case (its PTX and input class), for seeding its inputs.

    >>> case_id(MmaCase("m16n8k16", "f16", "f32", "ties")) == case_id(MmaCase("m16n8k16", "f16", "f32", "ties"))
    True
    >>> case_id(MmaCase("m16n8k16", "f16", "f32", "ties")) != case_id(MmaCase("m16n8k8", "f16", "f32", "ties"))
    True
    """
    return zlib.crc32(f"{case.ptx} {case.cls}".encode())


@dataclass
class CaseResult:
    """One row of the summary: counts, times and kept records of one case."""

    case: object
    count: int
    compared: int = 0                   # registers compared
    mismatched: int = 0                 # registers that differ
    bad_warps: int = 0                  # warps (instructions; cvt: groups of 32) with a mismatch
    gen_s: float = 0.0
    sim_s: float = 0.0
    gpu_s: float = 0.0
    wall_s: float = 0.0
    records: list = field(default_factory=list)
    failing_inputs: list = field(default_factory=list)
    variants: dict | None = None        # evidence classes: model variant -> registers disagreeing with the GPU

    def as_dict(self) -> dict:
        c = self.case
        return {"instr": c.instr, "instruction": c.ptx, "label": c.label, "class": c.cls,
                "count": self.count, "registers_compared": self.compared,
                "mismatched_registers": self.mismatched, "mismatched_warps": self.bad_warps,
                "gen_s": round(self.gen_s, 3), "sim_s": round(self.sim_s, 3), "gpu_s": round(self.gpu_s, 3),
                "wall_s": round(self.wall_s, 3), "records_kept": len(self.records),
                "mismatches": [r.as_dict() for r in self.records], "failing_inputs": self.failing_inputs,
                **({} if self.variants is None else {"variant_mismatched_registers": dict(self.variants)})}


def make_runner(gpu, cases):
    """The GPU runner of ``cases``: :class:`IntRunner` (raw PTX) for int cases, else :class:`GpuRunner`."""
    return IntRunner(gpu, cases) if cases and cases[0].instr == "int" else GpuRunner(gpu, cases)


class GpuRunner:
    """Runs cases on a :class:`hwcheck.device.gpu.Gpu`, with one module compiled for all their kernels."""

    def __init__(self, gpu, cases):
        self.gpu = gpu
        self.module = gpu.module(module_source([c.kernel for c in cases]))

    def run(self, case, inputs) -> np.ndarray:
        try:
            return case.run(self.gpu, self.module, inputs)
        except HwcheckError:
            raise
        except Exception as e:   # CuPy: out of memory, a CUDA error outside a launch
            raise HwcheckError(f"hwcheck: {case.ptx} on the GPU failed: {type(e).__name__}: {e}") from None


def _timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def warm_up(cases, arch: str = DEFAULT_ARCH) -> float:
    """Simulate one warp of each case so that Numba's compile (minutes on a cold cache, then cached on
    disk) is not charged to the first case's times; returns the seconds spent."""
    start = time.perf_counter()
    for case in cases:
        case.simulate(case.inputs(32 if case.instr in PER_THREAD else 1, np.random.default_rng(0)), arch)
    return time.perf_counter() - start


@dataclass(frozen=True)
class Chunk:
    """Chunk ``index`` of a case: ``n`` instructions starting at instruction ``first``."""

    index: int
    first: int
    n: int


@dataclass
class ChunkResult:
    """What one chunk came to: counts, the first :data:`CASE_RECORDS` records, the inputs of its first
    :data:`CASE_INPUTS` failing warps, and its times. Small: this is what a cluster worker sends back."""

    chunk: Chunk
    compared: int
    mismatched: int
    bad_warps: int
    records: list
    failing_inputs: list
    variants: dict = field(default_factory=dict)   # evidence classes: model variant -> disagreeing registers
    gen_s: float = 0.0
    sim_s: float = 0.0
    gpu_s: float = 0.0


def plan_chunks(case, count: int, chunk: int = CHUNK) -> tuple:
    """``(n_total, chunks)``: the chunks of ``count`` instructions of ``case``, at most ``chunk`` each.

    Pre-conditions: ``count >= 1``, ``chunk >= 32``; cvt counts and chunks are rounded up to a
    multiple of 32.

    >>> n, chunks = plan_chunks(MmaCase("m16n8k8", "f16", "f32", "ties"), 100, 40)
    >>> n, [(c.index, c.first, c.n) for c in chunks]
    (100, [(0, 0, 40), (1, 40, 40), (2, 80, 20)])
    """
    if count < 1 or chunk < 32:
        raise ValueError(f"run_case: count must be >= 1 and chunk >= 32, got {count} and {chunk}")
    whole = 32 if case.instr in PER_THREAD else 1
    n_total = -(-count // whole) * whole
    step = -(-chunk // whole) * whole
    return n_total, [Chunk(k, first, min(step, n_total - first)) for k, first in enumerate(range(0, n_total, step))]


def chunk_inputs(case, chunk: Chunk, seed: int):
    """The inputs of ``chunk`` of ``case``: the documented seed formula (module docstring); an int case's
    directed class takes its rows ``chunk.first ..`` of the fixed operand table."""
    rng = np.random.default_rng([seed, case_id(case), chunk.index])
    if case.instr == "int":
        return case.inputs(chunk.n, rng, first=chunk.first)
    return case.inputs(chunk.n, rng)


def compare_chunk(case, chunk: Chunk, inputs, want, got, *, gen_s=0.0, sim_s=0.0, gpu_s=0.0) -> ChunkResult:
    """Compare the simulator's registers ``want`` with the GPU's ``got`` for ``chunk`` of ``case``."""
    first_warp = case.warps(chunk.first)
    cmp = compare_registers(want, got, instruction=case.ptx, kind=case.kind, first_warp=first_warp,
                            limit=CASE_RECORDS)
    records = list(cmp.records)
    if case.instr == "int":   # each record names its operands
        records = [replace(r, operands=case.operands(inputs, (r.warp - first_warp) * 32 + r.lane)) for r in records]
    failing = [{"warp": int(warp), "chunk": chunk.index, **case.warp_inputs(inputs, int(warp) - first_warp)}
               for warp in cmp.warps[:CASE_INPUTS]]
    return ChunkResult(chunk, cmp.compared, cmp.mismatched, len(cmp.warps), records, failing,
                       gen_s=gen_s, sim_s=sim_s, gpu_s=gpu_s)


def run_chunk(case, runner, chunk: Chunk, *, seed: int = 0, arch: str = DEFAULT_ARCH, variants=None) -> ChunkResult:
    """Generate, simulate, run on ``runner`` and compare one chunk of ``case``; for each of ``variants``
    (``{name: ArchModel}``, the model's neighbours on an evidence class) also count the registers where
    that variant disagrees with the GPU, bit pattern against bit pattern as ``compare_registers`` does."""
    inputs, t_gen = _timed(chunk_inputs, case, chunk, seed)
    want, t_sim = _timed(case.simulate, inputs, arch)
    got, t_gpu = _timed(runner.run, case, inputs)
    part = compare_chunk(case, chunk, inputs, want, got, gen_s=t_gen, sim_s=t_sim, gpu_s=t_gpu)
    part.variants = {name: int(np.count_nonzero(case.simulate(inputs, model) != got))
                     for name, model in (variants or {}).items()}
    return part


def add_chunk(result: CaseResult, part: ChunkResult, record_limit: int = CASE_RECORDS) -> None:
    """Fold ``part`` into ``result``; chunks must be added in chunk order for the kept records and
    inputs to be the first ones (every mismatch is counted whatever the order)."""
    result.compared += part.compared
    result.mismatched += part.mismatched
    result.bad_warps += part.bad_warps
    if part.variants:
        result.variants = result.variants or {}
        for name, bad in part.variants.items():
            result.variants[name] = result.variants.get(name, 0) + bad
    limit = max(0, min(CASE_RECORDS, record_limit) - len(result.records))
    result.records.extend(part.records[:limit])
    result.failing_inputs.extend(part.failing_inputs[:max(0, CASE_INPUTS - len(result.failing_inputs))])
    result.gen_s += part.gen_s
    result.sim_s += part.sim_s
    result.gpu_s += part.gpu_s


def run_case(case, runner, *, count: int, seed: int = 0, chunk: int = CHUNK, arch: str = DEFAULT_ARCH,
             progress=None, record_limit: int = CASE_RECORDS) -> CaseResult:
    """Run ``count`` instructions of ``case`` on ``runner`` and on the simulator (model ``arch``).

    ``runner.run(case, inputs)`` gives the GPU's registers. Pre-conditions: ``count >= 1``,
    ``chunk >= 32``; cvt and float counts and chunks are rounded up to a multiple of 32. At most
    ``min(record_limit, CASE_RECORDS)`` mismatch records are kept; every mismatch is counted. An int case's
    directed class runs its own fixed number of operand tuples (``case.planned``), whatever ``count``.
    """
    if case.instr == "int":
        count = case.planned(count)
    n_total, chunks = plan_chunks(case, count, chunk)
    result = CaseResult(case, n_total)
    variants = neighbours(get_arch(arch)) if case.cls in EVIDENCE_CLASSES else {}
    if variants:
        result.variants = dict.fromkeys(variants, 0)
    if progress is not None:
        progress.start(f"{case.instr} {case.label} {case.cls}", n_total)
    start = time.perf_counter()
    for part in chunks:
        add_chunk(result, run_chunk(case, runner, part, seed=seed, arch=arch, variants=variants), record_limit)
        if progress is not None:
            progress.advance(part.n)
    result.wall_s = time.perf_counter() - start
    if progress is not None:
        progress.finish(f"{result.mismatched} mismatching registers, {result.wall_s:.1f} s")
    return result


def run_campaign(cases, runner, *, count: int, seed: int = 0, chunk: int = CHUNK, arch: str = DEFAULT_ARCH,
                 progress=None, total_records: int = 200, results=None) -> list:
    """:func:`run_case` for each case, keeping at most ``total_records`` records in all.

    Results are appended to ``results`` (a new list by default) as each case ends, so a caller
    that catches an error still holds the finished cases.
    """
    results = [] if results is None else results
    for case in cases:
        kept = sum(len(r.records) for r in results)
        results.append(run_case(case, runner, count=count, seed=seed, chunk=chunk, arch=arch,
                                progress=progress, record_limit=max(0, total_records - kept)))
    return results


def group_totals(results) -> list:
    """Per PTX instruction, in order of appearance: ``(ptx, count, mismatched registers, wall s)``."""
    groups: dict = {}
    for r in results:
        count, bad, wall = groups.get(r.case.ptx, (0, 0, 0.0))
        groups[r.case.ptx] = (count + r.count, bad + r.mismatched, wall + r.wall_s)
    return [(ptx, *totals) for ptx, totals in groups.items()]


def first_mismatches(results, limit: int = 5) -> list:
    """The first ``limit`` kept mismatch records of all cases, as text lines (for the terminal)."""
    lines = [f"{r.case.cls}: {m}" for r in results for m in r.records]
    return lines[:limit]


def campaign_status(results) -> str:
    """``"pass"`` when nothing mismatched, else ``"fail"``."""
    return "fail" if any(r.mismatched for r in results) else "pass"


def variant_totals(results) -> dict:
    """``{variant: registers disagreeing with the GPU}`` summed over the evidence cases (in the order of
    :func:`warpsim.isa.arith.neighbours`); empty when no evidence class ran."""
    totals: dict = {}
    for r in results:
        for name, bad in (r.variants or {}).items():
            totals[name] = totals.get(name, 0) + bad
    return totals


def variant_lines(results) -> list:
    """One line per model variant: its disagreements with the GPU and whether that rules it out.

    >>> r = CaseResult(MmaCase("m16n8k16", "f16", "f16", "floor"), 10, variants={"ez_f16=-20": 7, "ez_f32=-132": 0})
    >>> for line in variant_lines([r]): print(line)
    model variant ez_f16=-20: 7 registers disagree with the GPU (ruled out)
    model variant ez_f32=-132: 0 registers disagree with the GPU (not ruled out by these cases)
    """
    return [f"model variant {name}: {bad} registers disagree with the GPU "
            f"({'ruled out' if bad else 'not ruled out by these cases'})"
            for name, bad in variant_totals(results).items()]


def summary_table(results) -> str:
    """The end-of-campaign table: one row per case, then one per instruction with its totals.

    >>> r = CaseResult(MmaCase("m16n8k8", "f16", "f16", "ties"), 1000, gen_s=0.5, wall_s=0.7)
    >>> print(summary_table([r]))  # doctest: +NORMALIZE_WHITESPACE
    instruction       class   count  mismatches  bad instrs  gen s  sim s  gpu s  wall s
    mma m16n8k8 f16.f16  ties    1000           0           0    0.5    0.0    0.0     0.7
    mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16: 1000 instructions, 0 mismatching registers, 0.7 s
    """
    rows = [("instruction", "class", "count", "mismatches", "bad instrs", "gen s", "sim s", "gpu s", "wall s")]
    for r in results:
        c = r.case
        rows.append((f"{c.instr} {c.label}", c.cls, str(r.count), str(r.mismatched), str(r.bad_warps),
                     f"{r.gen_s:.1f}", f"{r.sim_s:.1f}", f"{r.gpu_s:.1f}", f"{r.wall_s:.1f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in rows]
    for ptx, count, bad, wall in group_totals(results):
        unit = "conversions" if ptx.startswith("cvt") else "instructions"
        lines.append(f"{ptx}: {count} {unit}, {bad} mismatching registers, {wall:.1f} s")
    lines += variant_lines(results)
    return "\n".join(line.rstrip() for line in lines)
