"""Shared pytest options (long campaigns run only with --slow), the background compiles of a broad session
(prewarm.py) and the local Ray cluster fixture."""

import os
from pathlib import Path

import pytest

import prewarm

_TESTS = os.path.dirname(os.path.abspath(__file__))
BROAD = 6          # a session with tests from this many folders of tests/ compiles the CUDA examples in the background


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", default=False,
                     help="also run long campaigns marked slow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="long campaign: run with --slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def pytest_collection_finish(session):
    folders = {Path(str(item.fspath)).relative_to(_TESTS).parts[0] for item in session.items
               if str(item.fspath).startswith(_TESTS + os.sep)}
    if len(folders) >= BROAD:
        prewarm.start()


def pytest_sessionfinish(session):
    prewarm.stop()


@pytest.fixture(scope="session")
def ray_cluster():
    """A local two-CPU Ray cluster for the whole session (skipped without Ray); its workers import this
    checkout and the tests' helpers (``PYTHONPATH``), as the driver does."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'warpsim[ray]')")
    old = os.environ.get("PYTHONPATH")
    paths = [os.path.dirname(_TESTS), _TESTS, os.path.join(_TESTS, "hwcheck")]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths + ([old] if old else []))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        yield ray
    finally:
        ray.shutdown()
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old
