"""Shared fixtures of hwcheck's tests: NVRTC availability and a fake GPU that runs the simulator."""

import pytest

from hwcheck.errors import HwcheckError
from hwcheck.device.nvrtc import nvrtc_version


def nvrtc_missing():
    """None where NVRTC loads, else the reason (for skip markers)."""
    try:
        nvrtc_version()
    except HwcheckError as e:
        return str(e)
    return None


@pytest.fixture(scope="session")
def nvrtc():
    reason = nvrtc_missing()
    if reason:
        pytest.skip(f"NVRTC unavailable: {reason}")
