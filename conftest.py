"""Rules for the whole tree.

Names every docstring example may use without importing them (pytest's ``doctest_namespace``): a
doctest of ``warpsim`` or ``hwcheck`` sees its module's own names first; to those this adds ``np``
and every public name of :mod:`warpsim.cute` (the layout algebra, atoms, tensors) that the module
does not define itself and that is not a Python builtin, so a module imports only what its code uses.

Collection: modules that need an optional extra are skipped without it.
"""

import builtins
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import warpsim.cute

# hwcheck.campaigns.cluster imports Ray (the `ray` extra); its tests skip themselves, its doctests need the module.
collect_ignore = [] if importlib.util.find_spec("ray") else ["hwcheck/campaigns/cluster.py"]
# conftest files are plugins, not modules with docstring examples: collecting them as doctest modules
# imports each by its basename, and two folders' ``conftest`` then clash.
collect_ignore += [str(p.relative_to(Path(__file__).parent)) for p in Path(__file__).parent.glob("tests/**/conftest.py")]

DOCTEST_NAMES = {"np": np, **{name: getattr(warpsim.cute, name) for name in warpsim.cute.__all__}}


@pytest.fixture(autouse=True)
def _doctest_names(request, doctest_namespace):
    module_names = getattr(getattr(request.node, "dtest", None), "globs", None)
    if module_names is None:                      # not a doctest
        yield
        return
    added = [name for name in DOCTEST_NAMES if name not in module_names and not hasattr(builtins, name)]
    doctest_namespace.update((name, DOCTEST_NAMES[name]) for name in added)
    yield
    for name in added:
        doctest_namespace.pop(name, None)
