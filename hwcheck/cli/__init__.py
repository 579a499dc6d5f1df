"""The ``hwcheck`` command: :mod:`~hwcheck.cli.main` (every verb), :mod:`~hwcheck.cli.ptx` (``hwcheck run`` of PTX)."""
