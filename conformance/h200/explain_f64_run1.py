"""Check that today's f64 model explains every mismatch of the first f64 campaign on the H200.

``h200-f64-run1.json`` counts, per case, the registers where the model of that run (commit ``e7d6ea2``) differed
from the H200, and names the first two failing warps; it keeps the GPU's value of only 200 registers. If today's
model gives the H200's results, the registers where today's model differs from that run's model are exactly the
run's mismatches: so for every case the two counts, the numbers of failing warps and the first two failing
warps must be equal. This script regenerates each case's inputs from the report's seed
(``hwcheck.campaigns.campaign.chunk_inputs``), keeps the lanes with a NaN operand (or an f32 subnormal, for ``.ftz``:
the only lanes the NaN rules touch), simulates them with both models (the old one read from git) and compares.
Cases whose operands cannot be NaNs (integer sources, ``setp``, ``testp``, ``copysign``) had 0 mismatches
and are untouched by the NaN rules; they are skipped.

Run from the repository root (a git checkout; about 2 minutes on 2 cores)::

    PYTHONPATH=. python conformance/h200/explain_f64_run1.py

It prints one line per case with a mismatch or a disagreement and exits 1 if any case is not explained.
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import hwcheck.campaigns.float_cases as float_cases
from hwcheck.campaigns.campaign import build_cases, chunk_inputs, plan_chunks

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "h200-f64-run1.json")
RUN_COMMIT = "e7d6ea2"          # warpsim at the run: its fp64 and cvt gave the report's "expected" values
_NAN = {"f64": (0x7FFFFFFFFFFFFFFF, 0x7FF0000000000000), "f32": (0x7FFFFFFF, 0x7F800000),
        "f16": (0x7FFF, 0x7C00), "bf16": (0x7FFF, 0x7F80)}


def _old_module(name, path, tmp):
    """The module at ``path`` as of ``RUN_COMMIT``, imported under ``name``."""
    source = subprocess.run(["git", "show", f"{RUN_COMMIT}:{path}"], capture_output=True, text=True, check=True)
    file = os.path.join(tmp, f"{name}.py")
    with open(file, "w") as f:
        f.write(source.stdout)
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _lanes(form, inputs):
    """Which lanes have a NaN operand (or an f32 subnormal one)."""
    mag, inf = _NAN[form.src_type]
    mask = np.zeros(inputs[0].shape[0], bool)
    for x in inputs:
        x = x.astype(np.uint64)
        mask |= (x & np.uint64(mag)) > np.uint64(inf)
        if form.src_type == "f32":
            mask |= ((x >> np.uint64(23)) & np.uint64(0xFF) == 0) & (x & np.uint64(0x7FFFFF) != 0)
    return mask


def _registers(out):
    return np.ascontiguousarray(out).view(np.uint32).reshape(-1, 2) if out.dtype == np.uint64 else \
        out.astype(np.uint32).reshape(-1, 1)


def explain(report, old_fp64, old_cvt) -> int:
    """Print the comparison per case; the number of cases not explained."""
    settings = report["settings"]
    cases = {(c.ptx, c.cls): c for c in build_cases("f64")}
    new_batch, new_convert = float_cases.float64_batch, float_cases.cvt_convert
    unexplained = 0
    for rc in report["cases"]:
        case = cases[(rc["instruction"], rc["class"])]
        form = case.form
        if form.op in ("setp", "testp", "copysign") or form.src_type not in _NAN:
            continue
        _, chunks = plan_chunks(case, settings["count_per_case"], settings["chunk"])
        diff_regs, warps = 0, []
        for chunk in chunks:
            inputs = chunk_inputs(case, chunk, settings["seed"])
            mask = _lanes(form, inputs)
            ops = [x[mask] for x in inputs]
            float_cases.float64_batch, float_cases.cvt_convert = old_fp64.float64_batch, old_cvt.cvt_convert
            try:
                old = _registers(float_cases.simulate_form(form, ops))
            finally:
                float_cases.float64_batch, float_cases.cvt_convert = new_batch, new_convert
            differ = (_registers(float_cases.simulate_form(form, ops)) != old).sum(axis=1)
            diff_regs += int(differ.sum())
            warps += sorted(set((np.nonzero(mask)[0][differ > 0] + chunk.first) // 32))
        first = [w["warp"] for w in rc["failing_inputs"]]
        ok = (diff_regs == rc["mismatched_registers"] and len(warps) == rc["mismatched_warps"]
              and [int(w) for w in warps[:len(first)]] == first)
        unexplained += not ok
        if rc["mismatched_registers"] or not ok:
            print(f"{'explained' if ok else 'NOT EXPLAINED'}: {case.ptx} {case.cls}: the H200 run "
                  f"{rc['mismatched_registers']} registers in {rc['mismatched_warps']} warps; old vs new model "
                  f"{diff_regs} in {len(warps)}")
    return unexplained


def main() -> int:
    with open(REPORT) as f:
        report = json.load(f)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            old_fp64 = _old_module("run1_fp64", "warpsim/isa/fp64.py", tmp)
            old_cvt = _old_module("run1_cvt", "warpsim/isa/cvt.py", tmp)
        except (subprocess.CalledProcessError, FileNotFoundError) as e:
            print(f"explain_f64_run1: cannot read commit {RUN_COMMIT} from git (run it in a checkout): {e}",
                  file=sys.stderr)
            return 2
        bad = explain(report, old_fp64, old_cvt)
    print(f"{bad} case(s) not explained")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
