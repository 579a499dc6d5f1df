"""The ``warpsim`` command line lives in :mod:`warpsim.commands`; this name stays for installs made before."""

from warpsim.commands import main

__all__ = ["main"]
