"""``python -m warpsim``: the command line (see :mod:`warpsim.cli`)."""

import sys

from warpsim.cli import main

sys.exit(main())
