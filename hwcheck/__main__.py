"""``python -m hwcheck``: the same as the ``hwcheck`` command."""

import sys

from hwcheck.cli import main

sys.exit(main())
