"""Names every docstring example may use without importing them (pytest's ``doctest_namespace``)."""

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace):
    doctest_namespace["np"] = np
