"""``warpsim sanitize`` and ``warpsim run --sanitize``: the report, ``--json``, ``--uninit``, the exit status (0 clean,
1 found, 2 usage); the pytest plugin's sanitized kernel."""

import json

import numpy as np
import pytest

from sanitize_suite import KERNELS
from warpsim.commands import main
from warpsim.frontends.compiled import CompileError
from warpsim.frontends.kernel import open_kernel
from warpsim.testing import SanitizedKernel
from warpsim.sanitize import parse_tools

TRANSPOSE = ["--kernel", "transpose_race", "--block", "32,8", "--arg", "in=zeros:f32:1024", "--arg",
             "out=zeros:f32:1024", "--arch", "sm_80"]


@pytest.fixture(autouse=True)
def _nvcc():
    from warpsim.toolchain import find_nvcc
    if find_nvcc() is None:
        pytest.skip("nvcc not found on PATH or under CUDA_HOME (the tests compile tests/sanitize/kernels/*.cu)")


def test_race_found_exit_1_and_json(tmp_path, capsys):
    out = tmp_path / "report.json"
    assert main(["sanitize", str(KERNELS / "transpose_race.cu"), *TRANSPOSE, "--json", str(out)]) == 1
    text = capsys.readouterr().out
    assert "========= Error: Race reported between Write access and Read access (RAW hazard, shared memory)" in text
    assert "at Write access transpose_race.cu:9 " in text and "and Read access transpose_race.cu:14 " in text
    assert text.rstrip().endswith("========= SANITIZER SUMMARY (race, sync, init, mem): 2 errors, 0 warnings")
    data = json.loads(out.read_text())
    assert data["errors"] == 2 and {f["kind"] for f in data["findings"]} == {"RAW", "WAR"}
    assert data["findings"][0]["sites"][0]["source"] == "transpose_race.cu:9"


def test_clean_exit_0_through_run(capsys):
    argv = ["run", str(KERNELS / "transpose_race.cu"), *TRANSPOSE, "--nvcc-flags=-DFIXED", "--sanitize=race,sync"]
    assert main(argv) == 0
    assert capsys.readouterr().out.rstrip().endswith("SANITIZER SUMMARY (race, sync): 0 errors, 0 warnings")


def test_usage_errors_exit_2(capsys):
    assert main(["sanitize", str(KERNELS / "transpose_race.cu"), *TRANSPOSE, "--tool", "racecheck"]) == 2
    assert "unknown tool racecheck" in capsys.readouterr().err
    assert main(["sanitize", str(KERNELS / "transpose_race.cu"), *TRANSPOSE, "--uninit", "nope"]) == 2
    assert "no parameter 'nope'" in capsys.readouterr().err


def test_uninit_output_buffer(capsys):
    argv = ["sanitize", str(KERNELS / "output_read_before_write.cu"), "--kernel", "output_read_before_write",
            "--block", "64", "--arg", "in=zeros:f32:64", "--arg", "out=zeros:f32:64", "--tool", "init"]
    assert main(argv) == 0                                  # without --uninit the host's bytes count as written
    capsys.readouterr()
    assert main(argv + ["--uninit", "out"]) == 1
    text = capsys.readouterr().out
    assert "Uninitialized global memory read" in text and "buffer out (" in text and "bytes [0, 256)" in text


def test_plugin_kernel_fails_on_findings():
    try:
        k = open_kernel(KERNELS / "transpose_race.cu", "transpose_race", arch="sm_80")
        fixed = open_kernel(KERNELS / "transpose_race.cu", "transpose_race", arch="sm_80", nvcc_flags=("-DFIXED",))
    except CompileError as e:
        pytest.skip(str(e))
    x = np.arange(1024, dtype=np.float32)
    args = {"in": x, "out": np.zeros(1024, np.float32)}
    with pytest.raises(AssertionError, match="Race reported between"):
        SanitizedKernel(k, parse_tools("race")).launch(block=(32, 8), args=args)
    result = SanitizedKernel(fixed, parse_tools("all")).launch(block=(32, 8), args=args)
    assert np.array_equal(fixed.buffers(result)["out"].reshape(32, 32), x.reshape(32, 32).T)


def test_other_warp_schedules_change_the_transpose_without_its_barrier(capsys):
    """``--schedules 2`` on the transpose: the missing ``__syncthreads()`` makes ``out`` depend on the order the warps
    take turns in; the fixed kernel gives the same bytes in every order."""
    random_in = [a.replace("in=zeros:f32:1024", "in=random:f32:1024") for a in TRANSPOSE]
    assert main(["sanitize", str(KERNELS / "transpose_race.cu"), *random_in, "--tool", "race", "--schedules", "2"]) == 1
    assert "Results depend on the warp schedule" in capsys.readouterr().out
    assert main(["sanitize", str(KERNELS / "transpose_race.cu"), *random_in, "--nvcc-flags=-DFIXED", "--schedules",
                 "2"]) == 0
