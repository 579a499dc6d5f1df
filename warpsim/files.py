"""Files written whole or not at all (a temporary file beside the target, then a rename), and the file inputs and
outputs every ``warpsim run`` shares: ``.npy`` arrays read with one-line errors, ``--dump`` names, ``--out`` folders.

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

import numpy as np

from warpsim.errors import WarpsimError

__all__ = ["write_atomic", "WriteError", "load_npy", "dump_names", "make_out_dir"]


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


def load_npy(what, path, objects_hint="give raw bits as uint16/uint32"):
    """The array of the ``.npy`` file ``path``; ``ValueError`` starting with ``what`` for a directory, an empty
    or truncated file, a file that is no ``.npy`` (an ``.npz``, text), or one of Python objects (``objects_hint``
    ends that message)."""
    if os.path.isdir(path):
        raise ValueError(f"{what}: is a directory, not a .npy file")
    try:
        with open(path, "rb") as f:
            head = f.read(6)
            f.seek(0)
            if head != b"\x93NUMPY":
                kind = "an empty file" if not head else "not a .npy file (no NumPy header)"
                raise ValueError(f"{what}: {kind}; save arrays with numpy.save")
            array = np.load(f, allow_pickle=False)
    except OSError as e:
        raise ValueError(f"{what}: cannot read: {e.strerror or e}") from None
    except ValueError as e:
        if str(e).startswith(what):
            raise
        if "allow_pickle" in str(e):
            raise ValueError(f"{what}: holds Python objects (a pickled array), not numbers; "
                             f"{objects_hint}") from None
        raise ValueError(f"{what}: not a readable .npy array ({e})") from None
    if not isinstance(array, np.ndarray):
        raise ValueError(f"{what}: holds {type(array).__name__}, not one array (.npz?)")
    return array


def dump_names(text, kind="per-thread tensor", example="acc,tSrQ"):
    """The names of ``--dump TEXT`` (``warpsim run`` of a program or of a kernel), in order; ``ValueError`` for
    none (``--dump ,``) or a name given twice. ``kind``, ``example``: what the names are, for the message."""
    wanted = [n.strip() for n in text.split(",") if n.strip()]
    if not wanted:
        raise ValueError(f"--dump {text!r}: expected {kind} names, e.g. --dump {example}")
    twice = [n for i, n in enumerate(wanted) if n in wanted[:i]]
    if twice:
        raise ValueError(f"--dump: {twice[0]!r} is named twice")
    return wanted


def make_out_dir(out, check_only=False):
    """Make ``--out DIR`` (and its parents); ``ValueError`` naming ``--out`` where it cannot be made (a file of
    that name, no permission). ``check_only``: only refuse an existing non-directory (before a long run)."""
    if check_only:
        if os.path.exists(out) and not os.path.isdir(out):
            raise ValueError(f"--out {out}: cannot make the directory: a file of that name exists")
        return
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise ValueError(f"--out {out}: cannot make the directory: {e.strerror or e}") from None
