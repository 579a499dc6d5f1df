"""Where Numba keeps warpsim's compiled code: a user cache directory named after the sources it was compiled from.

Numba caches each ``@njit(cache=True)`` function beside its source (``__pycache__``) and checks only that function's
own file: code it inlined from another module stays in the cache after that module changed, so an upgraded or edited
warpsim could run yesterday's arithmetic with no error. warpsim therefore points Numba (``NUMBA_CACHE_DIR``) at
``$XDG_CACHE_HOME/warpsim/numba/<version>-<fingerprint>`` (``~/.cache`` without ``XDG_CACHE_HOME``), the fingerprint
a hash of the path, size and modification time of every Python file of ``warpsim/`` (and ``hwcheck/`` beside it):
any change to them compiles into a fresh directory, the same sources always find their code, and the installed
package's own folder is never written. Directories of other sources not used for a day (each import of warpsim
touches its own) are removed when a new one is made. A ``NUMBA_CACHE_DIR`` set by the user is left as it is.

>>> d = cache_dir("0.1.0", {})
>>> d.parent.name == "numba" and d.name.startswith("0.1.0-")
True
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
from pathlib import Path

__all__ = ["cache_dir", "use_user_cache", "STALE_S"]

STALE_S = 24 * 3600            # a cache directory of other sources unused this long is removed
_ROOT = Path(__file__).resolve().parent


def _fingerprint() -> str:
    h = hashlib.sha256()
    for package in (_ROOT, _ROOT.parent / "hwcheck"):
        if not package.is_dir():
            continue
        for folder, dirs, files in os.walk(package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    st = os.stat(os.path.join(folder, name))
                    h.update(f"{os.path.relpath(os.path.join(folder, name), package.parent)}:{st.st_size}:"
                             f"{st.st_mtime_ns};".encode())
    return h.hexdigest()[:16]


def cache_dir(version: str, environ=os.environ) -> Path:
    """The directory Numba's cache of warpsim ``version``'s sources lives in (see the module docstring)."""
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "warpsim" / "numba" / f"{version}-{_fingerprint()}"


def use_user_cache(version: str) -> None:
    """Point Numba at :func:`cache_dir` of ``version`` unless ``NUMBA_CACHE_DIR`` is set; prune stale siblings once when the
    directory is new. Before any ``@njit`` of warpsim is defined (``warpsim/__init__.py`` calls it first); works
    when Numba was imported before warpsim too."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    target = cache_dir(version)
    if not target.is_dir():
        try:
            target.mkdir(parents=True, exist_ok=True)
        except OSError:
            return                                   # no writable home: Numba's own choice stands
        _prune(target)
    else:
        try:
            os.utime(target)                         # in use: what _prune measures "unused for a day" by
        except OSError:
            pass
    os.environ["NUMBA_CACHE_DIR"] = str(target)
    config = sys.modules.get("numba.core.config")
    if config is not None:                           # Numba read its environment already
        config.CACHE_DIR = str(target)


def _prune(keep: Path) -> None:
    now = time.time()
    for other in keep.parent.iterdir():
        try:
            if other != keep and other.is_dir() and now - other.stat().st_mtime > STALE_S:
                shutil.rmtree(other, ignore_errors=True)
        except OSError:
            pass
