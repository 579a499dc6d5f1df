"""What every front end makes: PTX text for an arch, the errors it raises, and the cache it keeps.

A front end (:mod:`~warpsim.frontends.nvcc`, :mod:`~warpsim.frontends.cute_dsl`) returns PTX texts, one module
each, for one of :data:`ARCHS`; :func:`~warpsim.frontends.source.compile_source` wraps them in a :class:`Compiled`.

Line info: every ``.file`` path is made relative (to the source's folder, else to an include
folder, else its base name), so the PTX names no folder of the machine that made it.

Results are cached by a hash of everything that decides the output (the source and the local
headers it includes, the flags, the compiler's version) in ``$WARPSIM_CACHE`` or
``~/.cache/warpsim-ptx``. Every failure is a :class:`CompileError` whose message is one line.

Examples::

    relative_file_lines('\\t.file\\t1 "/a/b/k.cu"\\n', ["/a/b"]) == '\\t.file\\t1 "k.cu"\\n'
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from warpsim.errors import WarpsimError
from warpsim.toolchain import cache_read, cache_write

__all__ = ["CompileError", "Compiled", "ARCHS", "normalize_arch", "relative_file_lines", "cache_key", "cached_ptx",
           "cache_ptx", "package_version"]

ARCHS = ("sm_80", "sm_90")           # the compile targets; sm_90 code runs on the sm90 arithmetic model
FILE_LINE = re.compile(r'^(\s*\.file\s+\d+\s+")([^"]*)(".*)$', re.MULTILINE)


class CompileError(WarpsimError):
    """A source could not be compiled to PTX (missing compiler, compile errors); the message is one line."""


@dataclass(frozen=True)
class Compiled:
    """PTX made from one source: ``modules`` (one PTX text each), ``source`` (the file), ``kind``."""

    modules: tuple
    source: Path
    kind: str
    arch: str

    @property
    def ptx(self):
        """The PTX text of a single-module source (``ValueError`` when there are several)."""
        if len(self.modules) != 1:
            raise ValueError(f"{self.source.name}: {len(self.modules)} PTX modules; pick one of .modules")
        return self.modules[0]


def normalize_arch(arch):
    """``"sm_80"`` for any of ``sm_80``, ``sm80``, ``80``; ``ValueError`` for another.

    normalize_arch("sm90") == "sm_90"
    """
    digits = str(arch).lower().removeprefix("sm").lstrip("_")
    name = f"sm_{digits}"
    if name not in ARCHS:
        raise ValueError(f"--arch {arch}: choose one of {', '.join(ARCHS)}")
    return name


def relative_file_lines(ptx, folders):
    """``ptx`` with each ``.file`` path made relative to the first of ``folders`` that holds it,
    else reduced to its base name; relative paths are kept."""
    roots = [os.path.abspath(str(f)) for f in folders]

    def relative(match):
        name = match.group(2)
        if os.path.isabs(name):
            for root in roots:
                if name.startswith(root.rstrip(os.sep) + os.sep):
                    name = os.path.relpath(name, root)
                    break
            else:
                name = os.path.basename(name)
        return match.group(1) + name + match.group(3)

    return FILE_LINE.sub(relative, ptx)


def package_version(name):
    """The installed version of the distribution ``name`` (part of cache keys), or ``"not installed"``."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def cache_key(*parts):
    """A 32-hex-digit key of everything that decides a compile's output."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(str(part).encode("utf-8", errors="replace"))
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def cached_ptx(key):
    """The PTX cached under ``key``, or None."""
    return cache_read(f"{key}.ptx")


def cache_ptx(key, text):
    """Cache the PTX ``text`` under ``key``."""
    cache_write(f"{key}.ptx", text)
