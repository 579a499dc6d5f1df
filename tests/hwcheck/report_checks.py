"""Whole-report checks of committed hardware evidence: each returns the list of problems found
(empty when the report is sound), one line each, naming the report, the field and the values.

A report is sound when every count adds up (totals = sums of cases or runs; registers compared =
count x registers per instruction; seeds sum to their run), nothing mismatched anywhere (totals,
per instruction, per case, per run, per seed, no kept records), the GPU is a real one (an NVIDIA
name, arch ``sm_<compute capability>``, memory and driver as a device records them; never the
offline fake), its module keys equal the code generated today, and its date is plausible.
"""

import datetime

from hwcheck.arch import model_arch
from hwcheck.campaigns.campaign import build_cases
from hwcheck.device.gpu import module_key
from hwcheck.device.kernels import module_source
from hwcheck.runs.run import KEYS, keyed_text
from warpsim.program.lower import lower
from warpsim.isa.arith import get_arch, neighbours

REPORT_FORMAT = "hwcheck-report/1"
# The sources of the mma model appeared in November 2025 (arXiv 2511.10909): no report is older.
EARLIEST = datetime.datetime(2025, 11, 1, tzinfo=datetime.timezone.utc)
FAKE_GPU_NAME = "Fake GPU (warpsim)"


def _gpu_problems(where, report, want_cc):
    gpu = report.get("gpu") or {}
    out = []
    name, cc, arch = gpu.get("name"), gpu.get("compute_capability"), gpu.get("arch")
    if not isinstance(name, str) or not name.startswith("NVIDIA ") or name == FAKE_GPU_NAME:
        out.append(f"{where}: gpu.name {name!r} is not a device's name (want 'NVIDIA ...')")
    if cc != want_cc or arch != f"sm_{want_cc}":
        out.append(f"{where}: gpu compute capability {cc!r} / arch {arch!r}, want {want_cc!r} / 'sm_{want_cc}'")
    if not isinstance(gpu.get("memory_bytes"), int) or gpu["memory_bytes"] < 1 << 30:
        out.append(f"{where}: gpu.memory_bytes {gpu.get('memory_bytes')!r} is not a real device's")
    for key in ("driver_version", "runtime_version", "cupy_version"):
        value = gpu.get(key)
        if not isinstance(value, str) or not value[:1].isdigit() or value == "0":
            out.append(f"{where}: gpu.{key} {value!r} is not a version a device run records")
    return out


def _head_problems(where, report, want_cc, now):
    out = []
    if report.get("format") != REPORT_FORMAT or report.get("tool") != "hwcheck":
        out.append(f"{where}: format {report.get('format')!r} / tool {report.get('tool')!r}")
    if report.get("status") != "pass" or report.get("error") is not None:
        out.append(f"{where}: status {report.get('status')!r}, error {report.get('error')!r}")
    try:
        date = datetime.datetime.fromisoformat(report.get("date"))
        if date.tzinfo is None:
            raise ValueError("no time zone")
        if not EARLIEST <= date <= now + datetime.timedelta(days=1):
            out.append(f"{where}: date {report['date']} outside {EARLIEST.date()} .. today")
    except (TypeError, ValueError) as e:
        out.append(f"{where}: date {report.get('date')!r} unreadable ({e})")
    return out + _gpu_problems(where, report, want_cc)


def head_problems(where, report, *, cc="90", now=None):
    """Problems of any report's head: hwcheck's format, a pass without error, a date in range, a real device of
    compute capability ``cc`` (not the fake GPU)."""
    return _head_problems(where, report, cc, now or datetime.datetime.now(datetime.timezone.utc))


def _sum_problems(where, whole, parts, keys, whole_keys=None):
    out = []
    for key, whole_key in zip(keys, whole_keys or keys):
        total = sum(p.get(key, 0) for p in parts)
        if whole.get(whole_key) != total:
            out.append(f"{where}: {whole_key} {whole.get(whole_key)!r} != sum of parts {total}")
    return out


def campaign_problems(report, name, instr, options, count, *, cc="90", now=None):
    """Problems of a campaign report ``name`` that should hold ``build_cases(instr, **options)`` with
    ``count`` instructions per case (cvt: rounded up to whole warps)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    where = f"{name}.json"
    out = _head_problems(where, report, cc, now)
    cases = build_cases(instr, **options)
    settings = report.get("settings", {})
    gpu = report.get("gpu") or {}
    want_key = module_key(module_source([c.kernel for c in cases]), str(gpu.get("arch")), str(gpu.get("cupy_version")))
    if settings.get("module_key") != want_key:
        out.append(f"{where}: settings.module_key {settings.get('module_key')!r} is not today's code ({want_key})")
    arch = model_arch(cc) if instr == "mma" else None
    if settings.get("instr") != instr or settings.get("count_per_case") != count or \
            settings.get("simulator_arch") != arch:
        out.append(f"{where}: settings instr/count_per_case/simulator_arch {settings.get('instr')!r}/"
                   f"{settings.get('count_per_case')!r}/{settings.get('simulator_arch')!r}, "
                   f"want {instr}/{count}/{arch}")
    got = report.get("cases", [])
    want_keys = [(c.ptx, c.label, c.cls) for c in cases]
    got_keys = [(c.get("instruction"), c.get("label"), c.get("class")) for c in got]
    if got_keys != want_keys:
        missing = [k for k in want_keys if k not in got_keys]
        extra = [k for k in got_keys if k not in want_keys]
        out.append(f"{where}: cases differ from today's acceptance set: missing {missing}, extra {extra}")
    n = -(-count // 32) * 32 if instr == "cvt" else count
    for case, row in zip(cases, got):
        at = f"{where}: case {case.label} {case.cls}"
        want_regs = case.warps(n) * 32 * case.regs
        if row.get("count") != n or row.get("registers_compared") != want_regs:
            out.append(f"{at}: count {row.get('count')!r}, registers_compared {row.get('registers_compared')!r}, "
                       f"want {n} and {want_regs} ({case.regs} per lane)")
        if row.get("mismatched_registers") != 0 or row.get("mismatched_warps") != 0 or row.get("records_kept") != 0 \
                or row.get("mismatches") != [] or row.get("failing_inputs") != []:
            out.append(f"{at}: mismatched_registers {row.get('mismatched_registers')!r}, mismatched_warps "
                       f"{row.get('mismatched_warps')!r}, {len(row.get('mismatches') or [])} records kept")
    totals = report.get("totals", {})
    if totals.get("cases_planned") != len(cases) or totals.get("cases_run") != len(cases):
        out.append(f"{where}: totals cases_planned/cases_run {totals.get('cases_planned')!r}/"
                   f"{totals.get('cases_run')!r}, want {len(cases)}")
    out += _sum_problems(f"{where}: totals", totals, got, ["count", "registers_compared", "mismatched_registers"],
                         ["instructions", "registers_compared", "mismatched_registers"])
    if totals.get("mismatched_registers") != 0:
        out.append(f"{where}: totals.mismatched_registers {totals.get('mismatched_registers')!r}")
    groups = {}
    for row in got:
        c, b = groups.get(row.get("instruction"), (0, 0))
        groups[row.get("instruction")] = (c + row.get("count", 0), b + row.get("mismatched_registers", 0))
    listed = {i.get("instruction"): (i.get("count"), i.get("mismatched_registers"))
              for i in report.get("instructions", [])}
    if listed != groups or any(bad for _, bad in listed.values()):
        out.append(f"{where}: instructions {listed} != sums of cases {groups} (or a mismatch)")
    out += _variant_problems(where, report, got, instr, arch)
    return out


def _variant_problems(where, report, got, instr, arch):
    """Evidence classes: per-case variant counts sum to the report's, and every neighbour of the model
    is ruled out (a neighbour the GPU does not rule out means the evidence does not pin the model)."""
    rows = [r for r in got if "variant_mismatched_registers" in r]
    block = report.get("model_variants")
    if not rows and block is None:
        return []
    if instr != "mma" or block is None:
        return [f"{where}: model_variants present without evidence cases, or missing with them"]
    names = list(neighbours(get_arch(arch)))
    out = []
    for row in rows:
        if list(row["variant_mismatched_registers"]) != names:
            out.append(f"{where}: case {row.get('label')} {row.get('class')}: variants "
                       f"{list(row['variant_mismatched_registers'])}, want {names}")
    sums = {k: sum(r["variant_mismatched_registers"].get(k, 0) for r in rows) for k in names}
    if block.get("simulator_arch") != arch or block.get("mismatched_registers") != sums:
        out.append(f"{where}: model_variants {block.get('mismatched_registers')} != sums of cases {sums}")
    ruled_out = [k for k in names if sums[k] > 0]
    if block.get("ruled_out") != ruled_out or block.get("not_ruled_out") != [k for k in names if k not in ruled_out]:
        out.append(f"{where}: model_variants ruled_out {block.get('ruled_out')} disagrees with the counts")
    if ruled_out != names:
        out.append(f"{where}: the GPU does not rule out {[k for k in names if k not in ruled_out]}")
    return out


_LOWERED = {}     # id(trace) -> (trace, its lowered kernel): a program caches its traces, so the same object comes back


def _lowered(trace):
    """``lower`` of a trace, once per trace object: the planted-edit tests check one programs report 16 times,
    and lowering its 32 runs took ~1 s each time."""
    hit = _LOWERED.get(id(trace))
    if hit is None or hit[0] is not trace:
        hit = _LOWERED[id(trace)] = (trace, lower(trace.stream, warps=trace.warps, regs=trace.regs_per_thread,
                                                  smem_bytes=trace.smem_bytes, snapshots=True,
                                                  shared_out=True))
    return hit[1]


def programs_problems(report, expected, seeds, *, cc="90", now=None):
    """Problems of a programs report that should hold ``expected``: ``{(name, params items): (program,
    params)}``, each run for ``seeds`` seeds. A run's module key is checked against today's lowering where the
    report's keys are portable (``settings.module_keys``, :func:`hwcheck.runs.run.keyed_text`); the keys of a
    report made before hashed the device checkout's absolute paths, which no report records: not checked."""
    portable = (report.get("settings") or {}).get("module_keys") == KEYS
    now = now or datetime.datetime.now(datetime.timezone.utc)
    where = "programs.json"
    out = _head_problems(where, report, cc, now)
    gpu = report.get("gpu") or {}
    runs = report.get("runs", [])
    got = {(r.get("name"), tuple(sorted((k, str(v)) for k, v in (r.get("params") or {}).items()))): r for r in runs}
    if sorted(got) != sorted(expected) or len(runs) != len(expected):
        out.append(f"{where}: runs {sorted(got)} differ from today's examples {sorted(expected)}")
    counted = ["registers_compared", "mismatched_registers", "smem_words_compared", "mismatched_smem_words",
               "global_elements_compared", "mismatched_global_elements"]
    for key, (program, params) in expected.items():
        run = got.get(key)
        if run is None:
            continue
        at = f"{where}: run {key}"
        trace = program.trace(params, mode="vector")
        low = _lowered(trace)
        want_key = module_key(keyed_text(low.text), str(gpu.get("arch")), str(gpu.get("cupy_version")))
        if portable and run.get("module_key") != want_key:
            out.append(f"{at}: module_key {run.get('module_key')!r} is not today's code ({want_key})")
        if run.get("instructions") != len(trace.stream) or run.get("snapshot_slots") != low.snap_positions \
                or run.get("threads") != low.threads:
            out.append(f"{at}: instructions/snapshot_slots/threads {run.get('instructions')!r}/"
                       f"{run.get('snapshot_slots')!r}/{run.get('threads')!r}, want {len(trace.stream)}/"
                       f"{low.snap_positions}/{low.threads}")
        rows = run.get("seeds", [])
        if run.get("seeds_run") != seeds or [s.get("seed") for s in rows] != list(range(seeds)):
            out.append(f"{at}: seeds_run {run.get('seeds_run')!r}, seeds {[s.get('seed') for s in rows]}, "
                       f"want 0..{seeds - 1}")
        out += _sum_problems(at, run, rows, counted)
        per_seed = low.snap_positions * low.threads
        for s in rows:
            if s.get("registers_compared") != per_seed or any(s.get(k) != 0 for k in counted if k.startswith("mis")) \
                    or s.get("first_mismatching_instruction") is not None:
                out.append(f"{at} seed {s.get('seed')}: registers_compared {s.get('registers_compared')!r} "
                           f"(want {per_seed} = {low.snap_positions} snapshots x {low.threads} threads) or a mismatch")
        if any(run.get(k) != 0 for k in counted if k.startswith("mis")) or run.get("mismatching_instructions") != [] \
                or run.get("mismatches") != [] or run.get("memory_mismatches") != []:
            out.append(f"{at}: a mismatch or a kept record")
    totals = report.get("totals", {})
    out += _sum_problems(f"{where}: totals", totals, runs, counted + ["seeds_run", "instructions"],
                         counted + ["seeds_run", "instructions_per_seed"])
    if totals.get("runs") != len(runs):
        out.append(f"{where}: totals.runs {totals.get('runs')!r} != {len(runs)} runs")
    if any(totals.get(k) != 0 for k in counted if k.startswith("mis")):
        out.append(f"{where}: totals report mismatches")
    return out
