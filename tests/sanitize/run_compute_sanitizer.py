"""Run NVIDIA's compute-sanitizer on the sanitizer's kernels, on a GPU, for the table of docs/guides/sanitizer.md.

For each case of :data:`sanitize_suite.CASES` (a ``.cu``; the hand-written ``.ptx`` ones are left out), it writes a
host program (``#include`` the kernel, allocate and fill its buffers as the case does, launch it once, synchronize),
builds it twice with nvcc (as written, and ``-DFIXED``) and runs ``compute-sanitizer --tool TOOL`` on each, the tool
being the case's (``racecheck`` for races, ``synccheck``, ``initcheck``). It prints one markdown row per case:

    | kernel | warpsim finds | compute-sanitizer tool | errors, hazard | errors, correct |

Usage, on a machine with a GPU and the CUDA toolkit (nothing here runs in CI)::

    python tests/sanitize/run_compute_sanitizer.py [--arch sm_90] [--out DIR] [--only NAME,...]

``--out DIR`` keeps the programs and each compute-sanitizer log there (default: a temporary folder).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sanitize_suite import CASES, KERNELS   # noqa: E402

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
    m = re.search(r"ERROR SUMMARY: (\d+) error", log)
    return int(m.group(1)) if m else None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--out", default=None)
    parser.add_argument("--only", default=None)
    args = parser.parse_args(argv)
    for tool in ("nvcc", "compute-sanitizer"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} not found on PATH")
    out = Path(args.out or tempfile.mkdtemp(prefix="warpsim-cs-"))
    out.mkdir(parents=True, exist_ok=True)
    wanted = set(args.only.split(",")) if args.only else None
    print("| kernel | warpsim finds | compute-sanitizer tool | errors, hazard | errors, correct |")
    print("| --- | --- | --- | --- | --- |")
    for case in CASES:
        stem = Path(case.file).stem
        if case.file.endswith(".ptx") or (wanted and stem not in wanted):
            continue
        src = out / f"{stem}_host.cu"
        src.write_text(host_program(case))
        counts = []
        for variant, flags in (("hazard", []), ("fixed", ["-DFIXED"])):
            exe = out / f"{stem}_{variant}"
            subprocess.run(["nvcc", f"-arch={args.arch}", "-lineinfo", *flags, "-o", str(exe), str(src)], check=True)
            run = subprocess.run(["compute-sanitizer", "--tool", case.cs_tool, str(exe)], capture_output=True,
                                 text=True)
            (out / f"{stem}_{variant}.{case.cs_tool}.log").write_text(run.stdout + run.stderr)
            counts.append(errors_of(run.stdout + run.stderr))
        print(f"| {case.file} | {case.tool}: {case.kind} | {case.cs_tool} | {counts[0]} | {counts[1]} |")
    print(f"\nprograms and logs: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
