"""The bad-input suite's fixture: ``workdir`` (see :func:`bad_input_helpers.workdir`)."""

import pytest

import bad_input_helpers

workdir = pytest.fixture(bad_input_helpers.workdir)
