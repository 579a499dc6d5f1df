"""Files written whole or not at all: a temporary file beside the target, then a rename.

A full disk, a file-size limit or an error while producing the content leaves the old file (or none)
and no temporary file; the error names the file.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
>>> write_atomic(path, lambda f: f.write(b"whole"))
>>> open(path, "rb").read()
b'whole'
>>> def broken(f):
...     f.write(b"half")
...     raise OSError(28, "No space left on device")
>>> write_atomic(path, broken)
Traceback (most recent call last):
...
warpsim.files.WriteError: cannot write ...a.txt: No space left on device
>>> open(path, "rb").read(), sorted(os.listdir(os.path.dirname(path)))
(b'whole', ['a.txt'])
"""

import io
import os
import tempfile

from warpsim.errors import WarpsimError

__all__ = ["write_atomic", "WriteError"]


class WriteError(WarpsimError, OSError):
    """A file could not be written; the message names it. The old file, if any, is unchanged."""


def write_atomic(path, write, *, durable=False, makedirs=False):
    """Call ``write(f)`` on a binary buffer, write that to a temporary file beside ``path``, rename it to ``path``.

    An ``OSError`` (disk full, ``ulimit -f``, permissions, a missing directory) becomes a
    :class:`WriteError` naming ``path`` (its ``reason`` attribute: the OS's words alone); any other
    exception of ``write`` propagates. Either way the temporary file is removed and ``path`` keeps its
    old content. ``durable``: the file and the rename reach the disk (``fsync``) before this returns;
    ``makedirs``: missing parent folders are made.
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    tmp = None
    try:
        content = io.BytesIO()              # produced first: the file gets whole writes and the OS's errors
        write(content)
        if makedirs:
            os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
        with os.fdopen(fd, "wb") as f:
            f.write(content.getbuffer())
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())           # as open() would have made it, not mkstemp's 0600
        os.replace(tmp, path)
        tmp = None
        if durable:
            _fsync_directory(directory)
    except OSError as e:
        error = WriteError(f"cannot write {path}: {e.strerror or e}")
        error.reason = str(e.strerror or e)
        raise error from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _fsync_directory(directory):
    """Make a rename durable where the platform allows it (a no-op elsewhere)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
