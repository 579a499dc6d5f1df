"""``python -m warpsim``: the command line (see :mod:`warpsim.commands`)."""

import sys

from warpsim.commands import main

sys.exit(main())
