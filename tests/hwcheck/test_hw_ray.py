"""Campaigns on a local Ray cluster (``ray.init(num_cpus=2)``): the same results as one process, every
chunk counted once when an actor dies, a partial report after Ctrl-C, and no Ray without ``--ray``."""

import io
import json
import os
import subprocess
import sys

import pytest

from fake_gpu import fake_runner, flip_every_seventh, no_gpu_runner

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'warpsim[ray]')")

from hwcheck.campaigns.campaign import GpuRunner, build_cases, run_campaign   # noqa: E402
from hwcheck.progress import Progress   # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def cluster(ray_cluster):
    """The session's local two-CPU cluster (tests/conftest.py)."""
    return ray_cluster


def _quiet():
    return Progress(io.StringIO(), tty=False)


def _rows(results):
    """What must be bit-identical between runs: every field but the times."""
    times = ("gen_s", "sim_s", "gpu_s", "wall_s")
    return [{k: v for k, v in r.as_dict().items() if k not in times} for r in results]


CASES = dict(instr="mma", shapes=["m16n8k8"], types=["f16.f16"], classes=["ordinary", "ties"])
COUNT, CHUNK = 400, 40          # 10 chunks per case, 20 in all


def _single_process():
    from fake_gpu import FakeGpu
    cases = build_cases(**CASES)
    return run_campaign(cases, GpuRunner(FakeGpu(corrupt=flip_every_seventh), cases), count=COUNT, chunk=CHUNK,
                        seed=3, progress=_quiet())


def test_a_campaign_on_ray_equals_the_single_process_run(cluster):
    from hwcheck.campaigns.cluster import run_campaign_ray
    run = run_campaign_ray(build_cases(**CASES), count=COUNT, chunk=CHUNK, seed=3, runner=fake_runner,
                           progress=_quiet())
    expected = _single_process()
    assert run.complete and run.chunks_done == run.chunks_planned == 20 and not run.reruns
    assert sum(r.mismatched for r in expected) > 0, "the fake GPU must disagree somewhere"
    assert _rows(run.results) == _rows(expected)


class _KillAfter(Progress):
    """Progress that, after ``after`` chunks came back, plays a fault: kills a simulator actor, or
    presses Ctrl-C."""

    def __init__(self, after, fault, kind="simulator"):
        super().__init__(io.StringIO(), tty=False)
        self.after, self.fault, self.kind, self.seen = after, fault, kind, 0

    def advance(self, count):
        super().advance(count)
        self.seen += 1
        if self.seen == self.after:
            if self.fault == "kill":
                name = next(n for n in ray.util.list_named_actors() if f"-{self.kind}-" in n)
                ray.kill(ray.get_actor(name), no_restart=True)
            else:
                raise KeyboardInterrupt


@pytest.mark.parametrize("kind", ["simulator", "checker"])
def test_a_killed_actor_s_chunks_run_elsewhere_and_every_chunk_counts_once(cluster, tmp_path, kind):
    from hwcheck.campaigns.cluster import run_one_ray
    report = tmp_path / "r.json"
    outcome = run_one_ray(build_cases(**CASES), count=COUNT, chunk=CHUNK, seed=3, runner=fake_runner,
                          progress=_KillAfter(3, "kill", kind), report=str(report))
    data = json.loads(report.read_text())
    c = data["cluster"]
    assert c["complete"] and c["chunks_done"] == c["chunks_planned"] == 20 and c["duplicates_dropped"] == 0
    assert c["chunks_rerun"] >= 1 and all(f"-{kind}-" in r["reason"] for r in c["reruns"]), c["reruns"]
    assert outcome.status == data["status"] == "fail"      # the fake GPU's flips, nothing else
    assert _rows(outcome.results) == _rows(_single_process())
    assert data["totals"]["instructions"] == 2 * COUNT


def test_ctrl_c_writes_a_partial_report(cluster, tmp_path):
    from hwcheck.campaigns.cluster import run_one_ray
    report = tmp_path / "r.json"
    outcome = run_one_ray(build_cases(**CASES), count=COUNT, chunk=CHUNK, seed=3, runner=fake_runner,
                          progress=_KillAfter(4, "interrupt"), report=str(report))
    data = json.loads(report.read_text())
    assert outcome.exit_status == 130 and data["status"] == "partial"
    c = data["cluster"]
    assert c["partial"] and not c["complete"] and 4 <= c["chunks_done"] < 20
    assert data["totals"]["instructions"] == CHUNK * c["chunks_done"]
    assert not [n for n in ray.util.list_named_actors() if n.startswith("hwcheck-")], "actors left running"


def test_a_checker_that_cannot_open_its_gpu_stops_the_run_with_one_line(cluster, tmp_path):
    from hwcheck.campaigns.cluster import run_one_ray
    report = tmp_path / "r.json"
    outcome = run_one_ray(build_cases("cvt"), count=64, runner=no_gpu_runner, progress=_quiet(), report=str(report))
    assert outcome.exit_status == 3 and outcome.error == "hwcheck: CuPy cannot open a CUDA device (fake)"
    assert json.loads(report.read_text())["status"] == "error"
    assert not [n for n in ray.util.list_named_actors() if n.startswith("hwcheck-")], "actors left running"


def test_simulate_only_from_the_command_line(cluster, tmp_path, capsys):
    from hwcheck.cli.main import main
    report = tmp_path / "r.json"
    status = main(["campaign", "--instr", "cvt", "--types", "bf16", "--classes", "special", "--count", "256",
                   "--chunk", "64", "--ray", "--simulate-only", "--workers", "2", "--report", str(report)])
    assert status == 0, capsys.readouterr()
    data = json.loads(report.read_text())
    assert data["status"] == "pass" and data["cluster"]["complete"] and data["cluster"]["chunks_done"] == 4
    assert data["settings"]["runner"] == "simulator" and data["totals"]["registers_compared"] == 256


def test_a_gpu_campaign_on_a_cluster_without_gpus_says_what_to_do(cluster, capsys):
    if ray.cluster_resources().get("GPU"):
        pytest.skip("the local Ray cluster has a GPU")
    from hwcheck.cli.main import main
    status = main(["campaign", "--instr", "cvt", "--count", "32", "--ray"])
    err = capsys.readouterr().err
    assert status == 3 and "the cluster has no GPU" in err and "--simulate-only" in err


def test_without_ray_flags_ray_is_not_imported():
    code = ("import sys; from hwcheck.cli.main import main\n"
            "print(main(['campaign', '--instr', 'cvt', '--count', '32', '--workers', '2']), 'ray' in sys.modules)\n"
            "print(main(['campaign', '--instr', 'cvt', '--count', '32']), 'ray' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": ROOT}, timeout=120)
    assert out.stdout.split() == ["2", "False", "2", "False"], out.stderr   # 2: no GPU here, or a usage error
    assert "--workers and --simulate-only apply with --ray only" in out.stderr


@pytest.mark.gpu
@pytest.mark.parametrize("instr, count", [("mma", 2048), ("cvt", 65536)])
def test_a_gpu_campaign_on_ray_matches_the_gpu_and_the_single_process_run(cluster, instr, count):
    if not ray.cluster_resources().get("GPU"):
        pytest.skip("the local Ray cluster has no GPU")
    from hwcheck.campaigns.acceptance import run_one
    from hwcheck.campaigns.cluster import run_one_ray
    from hwcheck.device.gpu import Gpu
    options = {"shapes": ["m16n8k16"], "types": ["bf16.f32"]} if instr == "mma" else {"types": ["f16"]}
    cases = build_cases(instr, **options)
    outcome = run_one_ray(cases, count=count, chunk=count // 4, runner="gpu", progress=_quiet())
    assert outcome.status == "pass" and "complete" in outcome.table, outcome.table
    single = run_one(Gpu.open(), cases, count=count, chunk=count // 4, progress=_quiet())
    assert _rows(outcome.results) == _rows(single.results)
