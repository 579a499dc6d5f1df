"""``python -m hwcheck``: the same as the ``hwcheck`` command."""

import sys

from hwcheck.cli.main import main

sys.exit(main())
