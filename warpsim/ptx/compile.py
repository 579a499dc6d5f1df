"""Source files to PTX, without a GPU: CUDA C++ through ``nvcc``, CuTe DSL through ``nvidia-cutlass-dsl``.

``compile_source(path, arch="sm_80")`` returns a :class:`Compiled`: the PTX text (one module per
text) and the file it came from. The kind of a file is told by :func:`source_kind`:

- ``.ptx``: read as is;
- ``.cu`` (and ``.cuh``/``.cpp`` given explicitly): ``nvcc -ptx -lineinfo -std=c++17 -arch=sm_XX``
  with the CuTe/CUTLASS headers of the ``nvidia-cutlass`` wheel on the include path, plus the
  flags the file asks for itself (:func:`source_nvcc_flags`: ``// warpsim: nvcc-flags --use_fast_math``
  lines), then the caller's extra flags. ``nvcc`` is found on ``PATH``, else under ``$CUDA_HOME/bin``;
- ``.py`` that assigns a module-level ``WARPSIM`` (the CuTe DSL convention below): compiled by the
  DSL in a subprocess with ``CUTE_DSL_ARCH=sm_XX CUTE_DSL_KEEP=ptx CUTE_DSL_DUMP_DIR=<tmp>
  CUTE_DSL_LINEINFO=1``. A ``.py`` without ``WARPSIM`` is a warpsim Python program
  (``program = warpsim.Program(...)``), which this module does not handle.

The CuTe DSL convention. A DSL file names what to compile in a module-level dict (or a list of
dicts, one PTX module each)::

    WARPSIM = dict(jit=copy_host,                                   # a @cute.jit function
                   args=lambda: (make_fake_compact_tensor(cutlass.Float32, (1024,)),
                                 make_fake_compact_tensor(cutlass.Float32, (1024,))))

``jit`` is the ``@cute.jit`` host function that launches the kernel, ``args`` a function returning
the arguments ``cute.compile(jit, *args)`` is called with (fake tensors from
``cutlass.cute.runtime.make_fake_tensor`` / ``make_fake_compact_tensor``, and Python or cutlass
scalars). The file must not compile or launch anything when imported.

Line info: every ``.file`` path is made relative (to the source's folder, else to an include
folder, else its base name), so the PTX names no folder of the machine that made it.

Results are cached by a hash of everything that decides the output (the source and the local
headers it includes, the flags, the compiler's version) in ``$WARPSIM_CACHE`` or
``~/.cache/warpsim-ptx``. Every failure is a :class:`CompileError` whose message is one line
(nvcc's own error lines are kept, joined with `` | ``).

Examples::

    source_kind("k.cu") == "cuda"
    source_kind("k.ptx") == "ptx"
    relative_file_lines('\\t.file\\t1 "/a/b/k.cu"\\n', ["/a/b"]) == '\\t.file\\t1 "k.cu"\\n'
    source_nvcc_flags("// warpsim: nvcc-flags --use_fast_math -DX=1\\n") == ("--use_fast_math", "-DX=1")
"""

from __future__ import annotations

import hashlib
import importlib.util
from importlib import metadata
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from warpsim.errors import WarpsimError
from warpsim.ptx.syntax import read_ptx
from warpsim.toolchain import cache_read, cache_write, find_nvcc

__all__ = ["CompileError", "Compiled", "ARCHS", "normalize_arch", "source_kind", "is_dsl_source",
           "compile_source", "compile_cuda", "compile_dsl", "cute_include_dir", "relative_file_lines", "source_nvcc_flags", "cuda_source_text"]

ARCHS = ("sm_80", "sm_90")           # the compile targets; sm_90 code runs on the sm90 arithmetic model
CUDA_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx")
NVCC_BASE_FLAGS = ("-ptx", "-lineinfo", "-std=c++17")
DSL_ASSIGNMENT = re.compile(r"^WARPSIM\s*(:[^=]*)?=", re.MULTILINE)
LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
NVCC_FLAGS_LINE = re.compile(r"^[ \t]*//[ \t]*warpsim:[ \t]*nvcc-flags[ \t]+(.*?)[ \t]*$", re.MULTILINE)
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


def is_dsl_source(path):
    """Whether a ``.py`` file follows the CuTe DSL convention: it assigns a module-level ``WARPSIM``."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return DSL_ASSIGNMENT.search(text) is not None


def source_kind(path):
    """``"ptx"``, ``"cuda"``, ``"dsl"`` or ``"program"`` (a warpsim Python program) by suffix and content."""
    suffix = Path(path).suffix.lower()
    if suffix == ".ptx":
        return "ptx"
    if suffix in CUDA_SUFFIXES:
        return "cuda"
    if suffix == ".py":
        return "dsl" if is_dsl_source(path) else "program"
    raise ValueError(f"{path}: not a .cu, .ptx or CuTe DSL .py file")


def compile_source(path, arch="sm_80", nvcc_flags=(), cache=True):
    """Compile ``path`` (``.ptx``, ``.cu``, CuTe DSL ``.py``) to PTX for ``arch``; see the module doc."""
    path = Path(path)
    arch = normalize_arch(arch)
    if not path.is_file():
        raise CompileError(f"{path}: no such file")
    kind = source_kind(path)
    if kind == "ptx":
        return Compiled((read_ptx(path, path.name),), path, kind, arch)
    if kind == "cuda":
        return Compiled((compile_cuda(path, arch, nvcc_flags, cache),), path, kind, arch)
    if kind == "dsl":
        return Compiled(tuple(compile_dsl(path, arch, cache)), path, kind, arch)
    raise CompileError(f"{path}: a warpsim Python program, not a CuTe DSL file "
                       "(a DSL file assigns a module-level WARPSIM; see warpsim.ptx.compile)")


# ---------------------------------------------------------------------------------------------- nvcc

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
    own = source_nvcc_flags(path.read_text(encoding="utf-8", errors="replace"))
    flags = [*NVCC_BASE_FLAGS, f"-arch={arch}", *[f"-I{d}" for d in includes], *own, *nvcc_flags]
    key = _hash("cuda", _nvcc_version(nvcc), _package_version("nvidia-cutlass"), " ".join(flags),
                _source_with_local_headers(path))
    cached = _cache_get(key) if cache else None
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
        _cache_put(key, ptx)
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


# ---------------------------------------------------------------------------------------------- CuTe DSL

def compile_dsl(path, arch="sm_80", cache=True):
    """The PTX modules of a CuTe DSL file (one per ``WARPSIM`` entry), compiled in a subprocess."""
    path = Path(path).resolve()
    arch = normalize_arch(arch)
    if importlib.util.find_spec("cutlass") is None or importlib.util.find_spec("cutlass.cute") is None:
        raise CompileError(f"{path.name}: CuTe DSL is not installed (pip install 'warpsim[dsl]', "
                           "which brings nvidia-cutlass-dsl)")
    key = _hash("dsl", _package_version("nvidia-cutlass-dsl"), arch, path.read_text(encoding="utf-8", errors="replace"))
    cached = _cache_get(key) if cache else None
    if cached is not None:
        return cached.split(_MODULE_SEPARATOR)
    with tempfile.TemporaryDirectory(prefix="warpsim-dsl-") as tmp:
        env = dict(os.environ, CUTE_DSL_ARCH=arch, CUTE_DSL_KEEP="ptx", CUTE_DSL_DUMP_DIR=tmp,
                   CUTE_DSL_LINEINFO="1")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_PACKAGE_ROOT), env.get("PYTHONPATH")]))
        try:
            done = subprocess.run([sys.executable, "-m", "warpsim.ptx.compile", str(path)], capture_output=True,
                                  text=True, env=env, cwd=path.parent)
        except OSError as e:
            raise CompileError(f"{path.name}: cannot run the CuTe DSL: {e}") from None
        if done.returncode != 0:
            raise CompileError(f"{path.name}: CuTe DSL compile failed: {_dsl_error(done.stderr)}")
        # one sub-folder per WARPSIM entry, in order (see _dsl_main)
        modules = []
        for entry in sorted(Path(tmp).iterdir(), key=lambda p: int(p.name)):
            texts = sorted(entry.glob("*.ptx"))
            if not texts:
                raise CompileError(f"{path.name}: WARPSIM entry {entry.name}: the CuTe DSL wrote no PTX")
            modules += [relative_file_lines(t.read_text(encoding="utf-8"), [path.parent]) for t in texts]
    if cache:
        _cache_put(key, _MODULE_SEPARATOR.join(modules))
    return modules


_PACKAGE_ROOT = Path(__file__).resolve().parents[2]      # the folder that holds warpsim/, for the subprocess
_MODULE_SEPARATOR = "\n// ---- warpsim: next module ----\n"


def _package_version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def _dsl_error(stderr):
    """The last meaningful line of the DSL subprocess's output (our own one-line message, or Python's)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    ours = [line for line in lines if line.startswith("warpsim-dsl: ")]
    if ours:
        return ours[-1].removeprefix("warpsim-dsl: ")
    return lines[-1] if lines else "no message"


def _dsl_entries(module, name):
    spec = getattr(module, "WARPSIM", None)
    entries = spec if isinstance(spec, (list, tuple)) else [spec]
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or "jit" not in entry or "args" not in entry:
            raise ValueError(f"{name}: WARPSIM entry {i} must be dict(jit=<@cute.jit function>, "
                             "args=<function returning the compile arguments>)")
    return entries


def _dsl_main(path):
    """In the subprocess: import the DSL file, ``cute.compile`` each WARPSIM entry into its own dump folder."""
    import runpy

    import cutlass.cute as cute
    dump = Path(os.environ["CUTE_DSL_DUMP_DIR"])
    sys.path.insert(0, str(Path(path).parent))
    namespace = runpy.run_path(path, run_name="warpsim_dsl")
    module = type("DSLFile", (), namespace)
    for i, entry in enumerate(_dsl_entries(module, Path(path).name)):
        args = entry["args"]() if callable(entry["args"]) else entry["args"]
        cute.compile(entry["jit"], *args)
        folder = dump / str(i)            # the DSL reads its dump folder once: sort each entry's files out
        folder.mkdir()
        for written in dump.glob("*.ptx"):
            written.rename(folder / written.name)


# ---------------------------------------------------------------------------------------------- cache

def _hash(*parts):
    digest = hashlib.sha256()
    for part in parts:
        digest.update(str(part).encode("utf-8", errors="replace"))
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def _cache_get(key):
    return cache_read(f"{key}.ptx")


def _cache_put(key, text):
    cache_write(f"{key}.ptx", text)


if __name__ == "__main__":
    try:
        _dsl_main(sys.argv[1])
    except Exception as e:         # noqa: BLE001 -- the parent prints this as its one-line error
        sys.stderr.write(f"warpsim-dsl: {type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}\n")
        sys.exit(1)
