"""CuTe DSL to PTX through ``nvidia-cutlass-dsl``, in a subprocess.

A ``.py`` file that assigns a module-level ``WARPSIM`` is compiled by the DSL in a subprocess
(``python -m warpsim.frontends.cute_dsl FILE``) with ``CUTE_DSL_ARCH=sm_XX CUTE_DSL_KEEP=ptx
CUTE_DSL_DUMP_DIR=<tmp> CUTE_DSL_LINEINFO=1``. A ``.py`` without ``WARPSIM`` is a warpsim Python program
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
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from warpsim.frontends.compiled import (CompileError, cache_key, cache_ptx, cached_ptx, normalize_arch, package_version,
                                        relative_file_lines)
from warpsim.toolchain import cache_lock

__all__ = ["compile_dsl", "is_dsl_source"]

DSL_ASSIGNMENT = re.compile(r"^WARPSIM\s*(:[^=]*)?=", re.MULTILINE)


# a file's line "# warpsim: arch sm_90a" compiles it for the arch-specific target when warpsim's arch is sm_90, as
# "// warpsim: nvcc-flags -arch=sm_90a" does for a .cu (Hopper's wgmma, TMA and setmaxnreg exist only there)
ARCH_SPECIFIC = re.compile(r"^#\s*warpsim:\s*arch\s+(sm_\d+a)\s*$", re.MULTILINE)


def is_dsl_source(path):
    """Whether a ``.py`` file follows the CuTe DSL convention: it assigns a module-level ``WARPSIM``."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return DSL_ASSIGNMENT.search(text) is not None


def compile_dsl(path, arch="sm_80", cache=True):
    """The PTX modules of a CuTe DSL file (one per ``WARPSIM`` entry), compiled in a subprocess."""
    path = Path(path).resolve()
    arch = normalize_arch(arch)
    if importlib.util.find_spec("cutlass") is None or importlib.util.find_spec("cutlass.cute") is None:
        raise CompileError(f"{path.name}: CuTe DSL is not installed (pip install 'warpsim[dsl]', "
                           "which brings nvidia-cutlass-dsl)")
    text = path.read_text(encoding="utf-8", errors="replace")
    special = ARCH_SPECIFIC.search(text)                 # "# warpsim: arch sm_90a": wgmma, TMA need the a-target
    if special:
        if special.group(1).removesuffix("a") != arch:
            raise CompileError(f"{path.name}: compiles only for --arch {special.group(1).removesuffix('a')} (its line "
                               f"'# warpsim: arch {special.group(1)}'), not {arch}")
        arch = special.group(1)
    key = cache_key("dsl", package_version("nvidia-cutlass-dsl"), arch, text)
    with cache_lock(key) if cache else contextlib.nullcontext():   # one compile of a source at a time
        cached = cached_ptx(key) if cache else None
        if cached is not None:
            return cached.split(_MODULE_SEPARATOR)
        with tempfile.TemporaryDirectory(prefix="warpsim-dsl-") as tmp:
            env = dict(os.environ, CUTE_DSL_ARCH=arch, CUTE_DSL_KEEP="ptx", CUTE_DSL_DUMP_DIR=tmp,
                       CUTE_DSL_LINEINFO="1")
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_PACKAGE_ROOT), env.get("PYTHONPATH")]))
            try:
                done = subprocess.run([sys.executable, "-m", "warpsim.frontends.cute_dsl", str(path)],
                                      capture_output=True, text=True, env=env, cwd=path.parent)
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
            cache_ptx(key, _MODULE_SEPARATOR.join(modules))
    return modules


_PACKAGE_ROOT = Path(__file__).resolve().parents[2]      # the folder that holds warpsim/, for the subprocess
_MODULE_SEPARATOR = "\n// ---- warpsim: next module ----\n"


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


if __name__ == "__main__":
    try:
        _dsl_main(sys.argv[1])
    except Exception as e:         # noqa: BLE001 -- the parent prints this as its one-line error
        sys.stderr.write(f"warpsim-dsl: {type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}\n")
        sys.exit(1)
