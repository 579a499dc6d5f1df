"""Session fixtures for the real-CuTe oracle: compile once (cached), run once."""

import pytest

import oracle_harness
import prewarm


class Oracle:
    """The compiled oracle: ``static`` maps case id -> CuTe's record; ``dynamic`` answers queries."""

    def __init__(self, binary):
        self.binary = binary
        self._static = None
        self._dynamic = None

    @property
    def static(self):
        if self._static is None:
            self._static = oracle_harness.run_static(self.binary)
        return self._static

    @property
    def dynamic(self):
        if self._dynamic is None:
            self._dynamic = oracle_harness.DynamicOracle(self.binary)
        return self._dynamic

    def close(self):
        if self._dynamic is not None:
            self._dynamic.close()


def pytest_collection_finish(session):
    """When a collected test needs the oracle, start compiling it in the background (tests/prewarm.py)."""
    if any("cute_oracle" in getattr(item, "fixturenames", ()) for item in session.items) and \
            oracle_harness.skip_reason() is None:
        prewarm.start_oracle(oracle_harness.HERE)


@pytest.fixture(scope="session")
def cute_oracle():
    reason = oracle_harness.skip_reason()
    if reason:
        pytest.skip(reason)
    oracle = Oracle(oracle_harness.build())
    yield oracle
    oracle.close()
