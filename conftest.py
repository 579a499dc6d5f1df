"""Collection rules for the whole tree: modules that need an optional extra are skipped without it."""

import importlib.util

# hwcheck.cluster imports Ray (the `ray` extra); its tests skip themselves, its doctests need the module.
collect_ignore = [] if importlib.util.find_spec("ray") else ["hwcheck/cluster.py"]
