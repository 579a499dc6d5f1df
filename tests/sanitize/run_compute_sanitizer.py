"""Run NVIDIA's compute-sanitizer on the sanitizer's kernels, on a GPU, for the table of docs/guides/sanitizer.md.

For each case of :data:`sanitize_suite.CASES` (a ``.cu``; the hand-written ``.ptx`` ones are left out), it writes a
host program (``#include`` the kernel, allocate and fill its buffers as the case does, launch it once, synchronize),
builds it twice with nvcc (as written, and ``-DFIXED``) and runs ``compute-sanitizer --tool TOOL`` on each, the tool
being the case's (``racecheck`` for races, ``synccheck``, ``initcheck``). It prints one markdown row per case:

    | kernel | warpsim finds (lines) | compute-sanitizer tool | hazard: found (lines) | correct: found |

The lines are those of the kernel file: warpsim's are the ``// A``/``// B`` marks its test checks; compute-sanitizer's
are every ``kernel.cu:LINE`` its log names. A run that does not end within ``--timeout`` seconds (a barrier
deadlock hangs a GPU) is killed and counted as ``hang``. The builds run in parallel (``--jobs``).

Usage, on a machine with a GPU and the CUDA toolkit (nothing here runs in CI)::

    python tests/sanitize/run_compute_sanitizer.py [--arch sm_90] [--out DIR] [--only NAME,...] [--report FILE]

``--out DIR`` keeps the programs and each compute-sanitizer log there (default: a temporary folder);
``--report FILE`` writes the rows as JSON, with the tools' versions; ``--from-logs DIR`` rebuilds the table and the
rows from the logs of a run (no GPU). "found" is the log's ``ERROR SUMMARY`` count, or for racecheck the hazards of
its ``RACECHECK SUMMARY`` (errors and warnings).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from concurrent.futures import ThreadPoolExecutor   # noqa: E402

from sanitize_suite import CASES, KERNELS, marked_lines   # noqa: E402

C_TYPES = {np.dtype(np.float32): "float", np.dtype(np.int32): "int", np.dtype(np.uint16): "unsigned short",
           np.dtype(np.uint32): "unsigned"}


def host_program(case):
    """The ``.cu`` text of a host program that launches ``case`` once."""
    lines = [f'#include "{(KERNELS / case.file).as_posix()}"', "#include <cstdio>", "", "int main()", "{"]
    params = []
    for name, value in case.args.items():
        if isinstance(value, np.ndarray):
            ctype = C_TYPES[value.dtype]
            init = ", ".join(repr(v) if ctype != "float" else f"{float(v)!r}f" for v in value.ravel().tolist())
            lines.append(f"    static {ctype} h_{name}[{value.size}] = {{{init}}};")
            lines.append(f"    {ctype} *d_{name};")
            lines.append(f"    cudaMalloc(&d_{name}, sizeof(h_{name}));")
            if name not in case.uninit:
                lines.append(f"    cudaMemcpy(d_{name}, h_{name}, sizeof(h_{name}), cudaMemcpyHostToDevice);")
            params.append(f"d_{name}")
        else:
            params.append(repr(value))
    grid, block = ", ".join(map(str, case.grid)), ", ".join(map(str, case.block))
    lines.append(f"    {case.kernel}<<<dim3({grid}), dim3({block}), {case.smem}>>>({', '.join(params)});")
    lines.append("    cudaError_t e = cudaDeviceSynchronize();")
    lines.append('    printf("launch: %s\\n", cudaGetErrorString(e));')
    lines.append("    return 0;")
    lines.append("}")
    return "\n".join(lines) + "\n"


def errors_of(log):
    """What a compute-sanitizer log found: its ``ERROR SUMMARY: N errors`` (synccheck, initcheck), or the hazards of
    racecheck's ``RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)``; ``"hang"`` for a run killed for
    taking too long; None when the log has no summary."""
    if "(killed after" in log:
        return "hang"
    m = re.search(r"ERROR SUMMARY: (\d+) error", log)
    if m:
        return int(m.group(1))
    m = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed", log)
    return int(m.group(1)) if m else None


def severities_of(log):
    """``(errors, warnings)`` of racecheck's summary, else None."""
    m = re.search(r"RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) errors?, (\d+) warnings?\)", log)
    return (int(m.group(1)), int(m.group(2))) if m else None


def lines_of(log, file):
    """The lines of ``file`` that a compute-sanitizer log names (``.../file:LINE``), sorted."""
    return sorted({int(n) for n in re.findall(re.escape(file) + r":(\d+)", log)})


def _build(arch, src, exe, flags):
    done = subprocess.run(["nvcc", f"-arch={arch}", "-lineinfo", *flags, "-o", str(exe), str(src)],
                          capture_output=True, text=True)
    return None if done.returncode == 0 else (done.stderr or done.stdout).strip().splitlines()[-1:]


def _sanitize(case, exe, timeout):
    """``(errors or "hang" or None, log)`` of one compute-sanitizer run; a hang is killed with its whole process
    group (the program under the tool too, so that it does not hold the GPU)."""
    proc = subprocess.Popen(["compute-sanitizer", "--tool", case.cs_tool, str(exe)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        log, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        log, _ = proc.communicate()
        return "hang", (log or "") + f"\n(killed after {timeout:g} s)\n"
    return errors_of(log), log


def _version(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.findall(r"[Vv](?:ersion )?(\d+\.\d+(?:\.\d+)?)", out)
    return m[-1] if m else out.strip().splitlines()[-1:]


def _table(cases, logs):
    """The rows of ``cases`` read from their logs in ``logs``, printed as the markdown table."""
    rows = []
    print("| kernel | warpsim finds (lines) | compute-sanitizer tool | hazard: found (lines) | correct: found |")
    print("| --- | --- | --- | --- | --- |")
    for case in cases:
        stem = Path(case.file).stem
        row = {"kernel": case.file, "warpsim": f"{case.tool}: {case.kind}",
               "warpsim_lines": sorted(marked_lines(KERNELS / case.file).values()), "tool": case.cs_tool}
        for variant in ("hazard", "fixed"):
            log = (logs / f"{stem}_{variant}.{case.cs_tool}.log").read_text()
            row[f"{variant}_errors"] = errors_of(log)
            row[f"{variant}_lines"] = lines_of(log, case.file)
            row[f"{variant}_severities"] = severities_of(log)
        rows.append(row)

        def found(variant):
            n, sev = row[f"{variant}_errors"], row[f"{variant}_severities"]
            return f"{n}" + (f" ({sev[0]} errors, {sev[1]} warnings)" if sev and n else "")
        print(f"| {case.file} | {row['warpsim']} ({', '.join(map(str, row['warpsim_lines']))}) | {case.cs_tool} | "
              f"{found('hazard')} (lines {', '.join(map(str, row['hazard_lines'])) or '-'}) | {found('fixed')} |")
    return rows


def _from_logs(logs, report):
    cases = [c for c in CASES if not c.file.endswith(".ptx")]
    rows = _table(cases, logs)
    if report:
        data = json.loads(Path(report).read_text()) if Path(report).is_file() else {}
        data["rows"] = rows
        Path(report).write_text(json.dumps(data, indent=1) + "\n")
    return 0


def _gpu():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=60).stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--out", default=None)
    parser.add_argument("--only", default=None)
    parser.add_argument("--report", default=None, help="write the rows as JSON to this file")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before a run counts as a hang")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 4, help="parallel builds and runs")
    parser.add_argument("--from-logs", metavar="DIR", default=None,
                        help="no GPU: rebuild the table (and --report, keeping its tool versions) from the logs a run "
                             "left in DIR")
    args = parser.parse_args(argv)
    if args.from_logs:
        return _from_logs(Path(args.from_logs), args.report)
    for tool in ("nvcc", "compute-sanitizer"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} not found on PATH")
    out = Path(args.out or tempfile.mkdtemp(prefix="warpsim-cs-"))
    out.mkdir(parents=True, exist_ok=True)
    wanted = set(args.only.split(",")) if args.only else None
    cases = [c for c in CASES if not c.file.endswith(".ptx") and not (wanted and Path(c.file).stem not in wanted)]
    jobs = []
    for case in cases:
        stem = Path(case.file).stem
        src = out / f"{stem}_host.cu"
        src.write_text(host_program(case))
        for variant, flags in (("hazard", []), ("fixed", ["-DFIXED"])):
            jobs.append((case, variant, src, out / f"{stem}_{variant}", flags))
    with ThreadPoolExecutor(args.jobs) as pool:
        built = list(pool.map(lambda j: _build(args.arch, j[2], j[3], j[4]), jobs))
        ran = list(pool.map(lambda jb: ("build failed", "\n".join(jb[1])) if jb[1] else
                            _sanitize(jb[0][0], jb[0][3], args.timeout), zip(jobs, built)))
    for k, case in enumerate(cases):
        for v, variant in enumerate(("hazard", "fixed")):
            (out / f"{Path(case.file).stem}_{variant}.{case.cs_tool}.log").write_text(ran[2 * k + v][1])
    rows = _table(cases, out)
    print(f"\nprograms and logs: {out}")
    if args.report:
        report = {"check": "tests/sanitize/run_compute_sanitizer.py", "argv": sys.argv[1:],
                  "nvcc": _version(["nvcc", "--version"]),
                  "compute_sanitizer": _version(["compute-sanitizer", "--version"]),
                  "gpu": _gpu(), "rows": rows}
        Path(args.report).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
