"""The CUDA tools warpsim runs on the host, no GPU needed: where ``nvcc``, ``ptxas`` and ``nvdisasm`` are, ptxas
called as the user's build calls it, the machine code of a cubin, and the disk cache of what the tools made.

A tool is found beside the ``nvcc`` on ``PATH`` (or under ``$CUDA_HOME/bin``), on ``PATH``, or in the
``nvidia-cuda-*`` wheels of this Python (:func:`find_tool`); the ptxas for a PTX text is the first that
assembles its ``.version`` (:func:`find_ptxas`). A tool that cannot run or fails raises
:class:`~warpsim.errors.ContractionError` (one line): the PTX front ends compile with these tools, and
:mod:`warpsim.ptx.contraction` asks ptxas which ``mul`` + ``add`` pairs become one FMA.

>>> isa_of_release("13.0.88"), isa_of_release("12.8.93")
((9, 0), (8, 7))
>>> ptxas_flags(("sm_90",)), ptxas_arch(("sm_90a",), "sm_90")
(('-O3', '--fmad=true'), 'sm_90a')
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import fcntl
except ImportError:                      # not POSIX: the cache is used unlocked
    fcntl = None

from warpsim.errors import ContractionError

__all__ = ["find_nvcc", "find_tool", "ptxas_candidates", "isa_of_release", "find_ptxas", "ptxas_version", "file_key",
           "run_tool", "ptxas_flags", "ptxas_arch", "compile_cubin", "spawn_ptxas", "wait_ptxas", "code_sections",
           "cache_read", "cache_write"]


# ------------------------------------------------------------------------------------------------ finding

def find_nvcc():
    """The ``nvcc`` executable on ``PATH`` or under ``$CUDA_HOME/bin``, or None."""
    found = shutil.which("nvcc")
    if found:
        return found
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home and (Path(home) / "bin" / "nvcc").is_file():
        return str(Path(home) / "bin" / "nvcc")
    return None


def find_tool(name):
    """``ptxas``/``nvdisasm``/``cuobjdump``: beside the ``nvcc`` on ``PATH`` (or ``$CUDA_HOME/bin``), on ``PATH``,
    or in the ``nvidia-cuda-*`` wheels' ``bin`` folders of this Python; None when none has it."""
    nvcc = find_nvcc()
    candidates = [Path(os.path.realpath(nvcc)).parent / name] if nvcc else []
    found = shutil.which(name)
    if found:
        candidates.append(Path(found))
    for site in sys.path:
        for sub in ("cu13", "cu12", "cuda_nvcc", "cuda_nvdisasm", "cuda_cuobjdump"):
            candidates.append(Path(site) / "nvidia" / sub / "bin" / name)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    return None


def ptxas_candidates():
    """Every ptxas ``auto`` may take, in order: beside the nvcc on ``PATH``, on ``PATH``, the ``nvidia-cuda-nvcc``
    wheel's, then Triton's own (``triton/backends/nvidia/bin``: what Triton assembles its kernels with)."""
    found = [find_tool("ptxas")]
    for site in sys.path:
        for sub in ("nvidia/cu13/bin/ptxas", "nvidia/cuda_nvcc/bin/ptxas", "triton/backends/nvidia/bin/ptxas",
                    "triton/backends/nvidia/bin/ptxas-blackwell"):
            found.append(str(Path(site) / sub))
    out = []
    for c in found:
        if c and c not in out and os.path.isfile(c) and os.access(c, os.X_OK):
            out.append(c)
    return out


def isa_of_release(release):
    """The newest PTX ISA a ptxas release assembles: ``(9, 0)`` for ``"13.0.88"`` (CUDA 13.m: 9.m, 12.m: 8.m up
    to 12.5, then 12.6: 8.5, 12.8: 8.7, 12.9: 8.8; 11.m: 7.m)."""
    major, minor = (int(x) for x in release.split(".")[:2])
    if major == 12:
        return (8, {6: 5, 7: 6, 8: 7, 9: 8}.get(minor, minor))
    return (major - 4, minor)


def find_ptxas(choice="auto", text=""):
    """The ptxas a ``--ptxas`` choice names: ``auto`` = the first of :func:`ptxas_candidates` that assembles the
    ``.version`` of ``text`` (None when there is none); a path = that file (``ContractionError`` if it is not an
    executable)."""
    if choice in (None, "auto"):
        m = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", text, re.MULTILINE)
        need = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
        for c in ptxas_candidates():
            if isa_of_release(ptxas_version(c)) >= need:
                return c
        return None
    path = Path(choice)
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise ContractionError(f"--ptxas {choice}: not an executable file (give a ptxas path, auto or none)")
    return str(path)


_VERSIONS = {}


def ptxas_version(ptxas) -> str:
    """``"13.0.88"``: the release of a ptxas (``ptxas --version``'s ``V13.0.88``), remembered per file state."""
    try:
        release = tool_release(ptxas)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ContractionError(f"--ptxas {ptxas}: cannot run it ({e})") from None
    if release is None:
        raise ContractionError(f"--ptxas {ptxas}: not a ptxas (its --version names no release)")
    return release


def tool_release(path):
    """``"13.5.37"``: the release a CUDA tool's ``--version`` names (``V13.5.37``; ptxas, nvdisasm, nvcc), or None
    where it names none; remembered per file state. ``OSError``/``TimeoutExpired`` where it cannot run."""
    key = file_key(path)
    if key not in _VERSIONS:
        out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60).stdout
        m = re.search(r"\bV(\d+\.\d+\.\d+)", out)
        if m is None:
            return None
        _VERSIONS[key] = m.group(1)
    return _VERSIONS[key]


def file_key(path):
    """``"realpath:size:mtime_ns"`` of a file: a tool's identity in cache keys."""
    st = os.stat(path)
    return f"{os.path.realpath(path)}:{st.st_size}:{st.st_mtime_ns}"


# ------------------------------------------------------------------------------------------------ running

def run_tool(cmd, what):
    """The stdout of ``cmd``; ``ContractionError`` starting with ``what`` when it cannot run or fails."""
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ContractionError(f"{what}: cannot run {Path(cmd[0]).name} ({e})") from None
    if done.returncode != 0:
        message = " ".join((done.stderr or done.stdout).split())[:400]
        raise ContractionError(f"{what}: {Path(cmd[0]).name} failed (exit {done.returncode}): {message}")
    return done.stdout


def ptxas_flags(target):
    """The ptxas flags the user's build passes for PTX of ``.target`` ``target`` (a tuple, ``("sm_90", "debug")``):
    ptxas's defaults (``-O3 --fmad=true``), or for a ``debug`` target (nvcc ``-G``) the ones nvcc adds."""
    if "debug" in target:
        return ("-g", "--dont-merge-basicblocks", "--return-at-end")
    return ("-O3", "--fmad=true")


def ptxas_arch(target, arch):
    """The ``-arch`` for PTX of ``.target`` ``target`` on a GPU of ``arch`` (``sm_90``): arch-specific PTX
    (``sm_90a``) keeps its own."""
    arch = arch if str(arch).startswith("sm_") else "sm_" + str(arch).removeprefix("sm")
    first = target[0] if target else ""
    return first if re.fullmatch(r"sm_\d+[af]", first) else arch


def compile_cubin(text, module, arch, ptxas, out, filename="<ptx>"):
    """Assemble PTX ``text`` (parsed: ``module``) for a GPU of ``arch`` into the cubin file ``out`` the way
    :func:`warpsim.ptx.contraction.decide` compiles it (same ptxas, same flags): the code a GPU check runs."""
    run_tool([ptxas, f"-arch={ptxas_arch(module.target, arch)}", *ptxas_flags(module.target), _write(out, text),
              "-o", str(out)],
             f"{filename}: ptxas")
    return out


def _write(out, text):
    src = Path(str(out) + ".ptx")
    src.write_text(text, encoding="utf-8")
    return str(src)


def spawn_ptxas(ptxas, text, arch, flags, stem):
    """Start ptxas on ``text`` (written to ``stem.ptx``) into ``stem.cubin``; :func:`wait_ptxas` waits for it."""
    src, out = stem.with_suffix(".ptx"), stem.with_suffix(".cubin")
    src.write_text(text, encoding="utf-8")
    cmd = [ptxas, f"-arch={arch}", *flags, str(src), "-o", str(out)]
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        raise ContractionError(f"cannot run {Path(ptxas).name} ({e})") from None
    proc.out = str(out)
    return proc


def wait_ptxas(proc, what):
    """Wait for a :func:`spawn_ptxas`; ``ContractionError`` starting with ``what`` when it failed."""
    stdout, stderr = proc.communicate()
    if proc.returncode != 0:
        message = " ".join((stderr or stdout).split())[:400]
        raise ContractionError(f"{what}: ptxas failed (exit {proc.returncode}): {message}")


# ------------------------------------------------------------------------------------------------ reading

def code_sections(cubin):
    """``{name: bytes}`` of the ``.text.*`` sections of an ELF cubin: the machine code, without the line tables and
    other notes, so two builds of the same code compare equal. ``ContractionError`` for a file that is no ELF."""
    data = Path(cubin).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ContractionError(f"--cubin {cubin}: not a 64-bit ELF cubin (compile with ptxas or nvcc -cubin)")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + k * shentsize) for k in range(shnum)]
    names_at = headers[shstrndx][4]

    def name(offset):
        end = data.index(b"\0", names_at + offset)
        return data[names_at + offset:end].decode("ascii", "replace")

    return {name(h[0]): data[h[4]:h[4] + h[5]] for h in headers if name(h[0]).startswith(".text.")}


# ------------------------------------------------------------------------------------------------ cache

def _cache_dir():
    return Path(os.environ.get("WARPSIM_CACHE") or Path.home() / ".cache" / "warpsim-ptx")


def cache_read(name):
    """The text of the cache file ``name`` (``$WARPSIM_CACHE`` or ``~/.cache/warpsim-ptx``), or None."""
    try:
        return (_cache_dir() / name).read_text(encoding="utf-8")
    except OSError:
        return None


@contextlib.contextmanager
def cache_lock(name):
    """Hold the cache's lock ``name`` (``<cache>/<name>.lock``) while the block runs: another process that takes
    the same lock waits, so that two runs compiling one source at once compile it once (the second finds the
    first's result in the cache). Where the lock cannot be made or taken (no ``fcntl``, a read-only cache, a file
    system without locks) the block runs unlocked."""
    folder = _cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle = open(folder / f"{name}.lock", "a")
    except OSError:
        handle = None
    if handle is None or fcntl is None:
        yield
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)      # released when the file closes, or its process ends
        except OSError:                             # a file system without locks (some network mounts): unlocked
            pass
        yield


def cache_write(name, text):
    """Write the cache file ``name`` atomically (temp file + rename); a cache that cannot be written is skipped."""
    folder = _cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, folder / name)
    except OSError:
        pass
