"""CUDA C++ to PTX through ``nvcc``, with the CuTe/CUTLASS headers of the ``nvidia-cutlass`` wheel.

``.cu`` (and ``.cuh``/``.cpp`` given explicitly): ``nvcc -ptx -lineinfo -std=c++17 -arch=sm_XX``
with the CuTe/CUTLASS headers on the include path, plus the flags the file asks for itself
(:func:`source_nvcc_flags`: ``// warpsim: nvcc-flags --use_fast_math`` lines), then the caller's
extra flags. ``nvcc`` is found on ``PATH``, else under ``$CUDA_HOME/bin``
(:func:`warpsim.toolchain.find_nvcc`). Failures are one line, nvcc's own error lines joined with `` | ``.

Examples::

    source_nvcc_flags("// warpsim: nvcc-flags --use_fast_math -DX=1\\n") == ("--use_fast_math", "-DX=1")
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import subprocess
import tempfile
from pathlib import Path

from warpsim.frontends.compiled import (CompileError, cache_key, cache_ptx, cached_ptx, normalize_arch, package_version,
                                        relative_file_lines)
from warpsim.toolchain import cache_lock, find_nvcc

__all__ = ["CUDA_SUFFIXES", "compile_cuda", "cute_include_dir", "source_nvcc_flags", "cuda_source_text"]

CUDA_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx")
NVCC_BASE_FLAGS = ("-ptx", "-lineinfo", "-std=c++17")
CUTE_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](?:cute|cutlass)/', re.MULTILINE)
LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
NVCC_FLAGS_LINE = re.compile(r"^[ \t]*//[ \t]*warpsim:[ \t]*nvcc-flags[ \t]+(.*?)[ \t]*$", re.MULTILINE)


def cute_include_dir():
    """The CuTe/CUTLASS include folder of the installed ``nvidia-cutlass`` wheel, or None."""
    spec = importlib.util.find_spec("cutlass_library")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "source" / "include"
    return path if (path / "cute").is_dir() else None


def source_nvcc_flags(text):
    """The nvcc flags a CUDA source asks for: the words after ``// warpsim: nvcc-flags`` on each such line of
    ``text`` (its own text only, not its includes'), in order; ``()`` when there is none. A file that needs a
    compile option of its own (``--use_fast_math``) carries it this way, and every tool that compiles it
    (``warpsim run``, ``hwcheck run``, the acceptance set) compiles it the same.

    source_nvcc_flags("#include <x.h>\\n") == ()
    """
    return tuple(word for line in NVCC_FLAGS_LINE.findall(text) for word in line.split())


_ARCH_FLAG = re.compile(r"^(?:-arch|--gpu-architecture)=(sm_\d+)([af]?)$")


def _arch_flag(arch, flags, path):
    """``-arch=<arch>``, or nothing where ``flags`` name the arch-specific variant of it themselves
    (``-arch=sm_90a``, which Hopper's ``wgmma``, TMA and ``setmaxnreg`` need: a file asks for it with
    ``// warpsim: nvcc-flags -arch=sm_90a``); ``CompileError`` for an arch flag of another GPU."""
    for flag in flags:
        m = _ARCH_FLAG.match(flag)
        if m is None:
            continue
        if m.group(1) != arch:
            raise CompileError(f"{Path(path).name}: nvcc flag {flag} is for another GPU than --arch {arch} "
                               f"(the arch-specific variant {arch}a is allowed)")
        return ""
    return f"-arch={arch}"


def cuda_source_text(path):
    """The text of a CUDA source followed by the texts of the ``#include "..."`` files found beside it
    (recursively): where its ``__global__`` functions are, for a file that includes another."""
    return _source_with_local_headers(Path(path).resolve())


def compile_cuda(path, arch="sm_80", nvcc_flags=(), cache=True):
    """``nvcc -ptx -lineinfo`` of one CUDA C++ file: the PTX text, ``.file`` paths relative. The flags are
    the base ones, the file's own (:func:`source_nvcc_flags`), then ``nvcc_flags``."""
    path = Path(path).resolve()
    arch = normalize_arch(arch)
    nvcc = find_nvcc()
    if nvcc is None:
        raise CompileError(f"{path.name}: nvcc not found on PATH or under CUDA_HOME "
                           "(install the CUDA toolkit, or pass a .ptx file)")
    include = cute_include_dir()
    includes = [str(include)] if include else []
    text = path.read_text(encoding="utf-8", errors="replace")
    if include is None and CUTE_INCLUDE.search(_source_with_local_headers(path)):
        raise CompileError(f"{path.name}: includes CuTe/CUTLASS headers, which are not installed "
                           "(pip install 'warpsim[cute]': the nvidia-cutlass wheel)")
    own = source_nvcc_flags(text)
    flags = [*NVCC_BASE_FLAGS, _arch_flag(arch, [*own, *nvcc_flags], path), *[f"-I{d}" for d in includes], *own,
             *nvcc_flags]
    flags = [f for f in flags if f]
    key = cache_key("cuda", _nvcc_version(nvcc), package_version("nvidia-cutlass"), " ".join(flags),
                _source_with_local_headers(path))
    with cache_lock(key) if cache else contextlib.nullcontext():   # one compile of a source at a time
        cached = cached_ptx(key) if cache else None
        if cached is not None:
            return cached
        with tempfile.TemporaryDirectory(prefix="warpsim-nvcc-") as tmp:
            out = Path(tmp) / "out.ptx"
            try:
                done = subprocess.run([nvcc, *flags, str(path), "-o", str(out)], capture_output=True, text=True,
                                      cwd=path.parent)
            except OSError as e:
                raise CompileError(f"{path.name}: cannot run nvcc: {e}") from None
            if done.returncode != 0 or not out.is_file():
                raise CompileError(f"{path.name}: nvcc failed: {_error_lines(done.stderr + done.stdout, path)}")
            ptx = relative_file_lines(out.read_text(encoding="utf-8"), [path.parent, *includes])
        if cache:
            cache_ptx(key, ptx)
    return ptx


def _nvcc_version(nvcc):
    try:
        return subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    except OSError as e:
        raise CompileError(f"cannot run nvcc ({nvcc}): {e}") from None


def _source_with_local_headers(path, seen=None):
    """The text of ``path`` and of the ``#include "..."`` files found beside it, recursively."""
    seen = set() if seen is None else seen
    if path in seen or not path.is_file():
        return ""
    seen.add(path)
    text = path.read_text(encoding="utf-8", errors="replace")
    parts = [str(path.name), text]
    for name in LOCAL_INCLUDE.findall(text):
        parts.append(_source_with_local_headers((path.parent / name).resolve(), seen))
    return "\n".join(parts)


def _error_lines(output, path, limit=6):
    """nvcc's diagnostic lines, the source folder removed, joined into one line."""
    folder = str(path.parent) + os.sep
    lines = [_shorten(line.strip().replace(folder, "")) for line in output.splitlines()]
    errors = [line for line in lines if "error" in line.lower()] or [line for line in lines if line]
    more = f" | ... ({len(errors) - limit} more)" if len(errors) > limit else ""
    return " | ".join(errors[:limit]) + more if errors else "no message"


def _shorten(line, width=240):
    """A diagnostic cut to ``width`` characters (C++ template types run to pages)."""
    return line if len(line) <= width else line[:width - 5] + " ..."
