"""The sanitizer finds each planted hazard of ``kernels/`` with its source lines, and nothing in the correct versions.

The table is :data:`sanitize_suite.CASES`; a ``.cu`` is compiled by nvcc with its defaults (skipped, with the reason,
where nvcc is missing).
"""

import pytest

from sanitize_suite import CASES, KERNELS, marked_lines
from warpsim.frontends.compiled import CompileError
from warpsim.frontends.kernel import open_kernel
from warpsim.sanitize import TOOLS, sanitize_launch


def _open(file, kernel, flags, arch):
    try:
        return open_kernel(KERNELS / file, kernel, arch=arch, nvcc_flags=flags)
    except CompileError as e:
        if "not found" in str(e) or "not installed" in str(e):
            pytest.skip(str(e))
        raise


def _sanitize(case, file, flags, tools=frozenset(TOOLS)):
    k = _open(file, case.kernel, flags, case.arch)
    args = k.core_args(dict(case.args))
    uninit = [k.param_name(n) for n in case.uninit]
    return sanitize_launch(k.module, k.name, case.grid, case.block, args, case.smem, case.arch.replace("_", ""),
                           tools=tools, uninit=uninit, name_params=k.name_params)


@pytest.mark.parametrize("case", CASES, ids=[c.file for c in CASES])
def test_hazard_found_with_its_lines(case):
    report = _sanitize(case, case.file, ())
    marks = marked_lines(KERNELS / case.file)
    kinds = {"RAW", "WAR", "WAW"} if case.kind in ("RAW", "WAR", "WAW") else {case.kind}   # the order decides which
    found = [f for f in report.findings if f.tool == case.tool and f.kind in kinds]
    assert found, report.text()
    want = [f"{case.file}:{marks[m]}" for m in ("A", "B") if m in marks]
    if case.file.endswith(".ptx"):          # no .loc: the PTX lines
        sites = [[s["ptx_line"] for s in f.sites] for f in found]
        want = [marks[m] for m in ("A", "B") if m in marks]
    else:
        sites = [[s["source"] for s in f.sites] for f in found]
    assert any(sorted(set(want)) == sorted(set(s) & set(want)) for s in sites), (want, report.text())
    assert all(f.severity == case.severity for f in found), report.text()
    assert report.summary().startswith("========= SANITIZER SUMMARY")


@pytest.mark.parametrize("case", CASES, ids=[c.file for c in CASES])
def test_fixed_version_is_clean(case):
    file, flags = case.fixed
    report = _sanitize(case, file, flags)
    assert report.findings == [], report.text()
