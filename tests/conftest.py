"""Shared pytest options: long campaigns run only with --slow."""

import pytest


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
