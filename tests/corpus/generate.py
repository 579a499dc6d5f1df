"""Regenerate the corpus's PTX: ``python tests/corpus/generate.py [FILE.ptx ...]``.

Every :data:`manifest.CORPUS` file (or those named) is compiled from its source under ``src/`` by its tool, as
that tool's users compile (no GPU is needed):

- ``nvcc``: ``nvcc -ptx -arch=sm_XX FILE.cu`` with nvcc's default flags, the CuTe headers of the
  ``nvidia-cutlass`` wheel on the include path for a CuTe file, plus the file's variant flags
  (``--use_fast_math``, ``-G``, ``-lineinfo``);
- ``cute-dsl``: ``cute.compile`` of the file's ``WARPSIM`` entry, as ``warpsim run k_dsl.py`` compiles it
  (:func:`warpsim.frontends.cute_dsl.compile_dsl`: ``CUTE_DSL_ARCH``, line info on);
- ``triton``: ``triton.compile(ASTSource(fn, signature, constexprs), target=GPUTarget("cuda", 80|90, 32))`` with
  Triton's default options (``num_warps=4``; ``num_stages`` where the manifest says);
- ``numba-cuda``: ``numba.cuda.compile_ptx(fn, signature, cc=(8, 0))``.

Sources are compiled from a copy under :data:`STAGE` (a fixed folder), and every ``.file`` path is made
relative, so the PTX names no folder of the machine that made it (the debug sections of ``-G`` and of Triton
keep the compile directory, which is then :data:`STAGE`'s). Each written file ends with one line,
``// warpsim corpus: TOOL VERSION; arch ...; source ...; options``, which :meth:`manifest.CorpusFile.made_by`
reads. A tool that is not installed is skipped, with a line saying so; the exit status is 1 when a build failed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE), str(ROOT)]

from manifest import CORPUS, PTX_DIR, by_name  # noqa: E402
from warpsim.frontends.compiled import relative_file_lines  # noqa: E402
from warpsim.frontends.nvcc import cute_include_dir  # noqa: E402
from warpsim.toolchain import find_nvcc  # noqa: E402

STAGE = Path(tempfile.gettempdir()) / "warpsim-corpus"
# Triton 3.9 warns when this is unset and keeps fusion on; say so explicitly (its default, and nvcc's -fmad=true)
TRITON_FP_FUSION = "1"


def _version(package):
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _nvcc_release(nvcc):
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    found = re.search(r"V(\d+\.\d+\.\d+)", out)
    return found.group(1) if found else "unknown"


def _nvvm_release(ptx):
    """The CUDA release of the NVVM that wrote a PTX text (its header), e.g. ``13.0.88``."""
    found = re.search(r"^// Cuda compilation tools, release [\d.]+, V([\d.]+)", ptx, re.MULTILINE)
    return found.group(1) if found else None


def available(tool):
    """None when ``tool`` can run here, else why not (one phrase)."""
    if tool == "nvcc":
        return None if find_nvcc() else "nvcc not found on PATH or under CUDA_HOME"
    if tool == "cute-dsl":
        return None if importlib.util.find_spec("cutlass") else "nvidia-cutlass-dsl not installed"
    if tool == "triton":
        return None if importlib.util.find_spec("triton") else "triton not installed (pip install triton)"
    if tool == "numba-cuda":
        return None if importlib.util.find_spec("numba_cuda") else "numba-cuda not installed (pip install numba-cuda)"
    return f"unknown tool {tool}"


def _stage(entry):
    """A copy of the entry's source folder under STAGE; the path of the source there."""
    folder = Path(entry.source_path).parent
    target = STAGE / "src" / folder.name
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(folder, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target / Path(entry.source).name


# ------------------------------------------------------------------------------------------------ builders

def build_nvcc(entry):
    nvcc = find_nvcc()
    source = _stage(entry)
    flags = list(entry.build.get("flags", []))
    includes = []
    if entry.build.get("cute"):
        include = cute_include_dir()
        if include is None:
            raise RuntimeError("the CuTe headers (nvidia-cutlass wheel) are not installed")
        includes = [str(include)]
    with tempfile.TemporaryDirectory(prefix="warpsim-corpus-") as tmp:
        out = Path(tmp) / "out.ptx"
        cmd = [nvcc, "-ptx", f"-arch={entry.arch}", *[f"-I{d}" for d in includes], *flags, source.name, "-o", str(out)]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=source.parent)
        if done.returncode != 0:
            raise RuntimeError(f"nvcc failed: {(done.stderr or done.stdout).strip()[:2000]}")
        ptx = out.read_text(encoding="utf-8")
    ptx = relative_file_lines(ptx, [source.parent, *includes])
    shown = " ".join(["nvcc -ptx", f"-arch={entry.arch}", *(["-I<cute>"] if includes else []), *flags])
    return ptx, f"nvcc {_nvcc_release(nvcc)}; arch {entry.arch}; source {entry.source}; {shown}"


def build_dsl(entry):
    from warpsim.frontends.cute_dsl import compile_dsl
    source = _stage(entry)
    modules = compile_dsl(source, entry.arch, cache=False)
    if len(modules) != 1:
        raise RuntimeError(f"{entry.source}: {len(modules)} PTX modules, expected one")
    ptx = modules[0]
    return ptx, (f"nvidia-cutlass-dsl {_version('nvidia-cutlass-dsl')} (NVVM {_nvvm_release(ptx)}); arch {entry.arch}; "
                 f"source {entry.source}; cute.compile of WARPSIM, CUTE_DSL_ARCH={entry.arch} CUTE_DSL_LINEINFO=1")


def _load_module(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def build_triton(entry):
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", TRITON_FP_FUSION)
    source = _stage(entry)
    b = entry.build
    with tempfile.TemporaryDirectory(prefix="warpsim-corpus-triton-") as cache:
        os.environ["TRITON_CACHE_DIR"] = cache          # compiled here, not an earlier build from another folder
        import triton
        from triton.backends.compiler import GPUTarget
        fn = getattr(_load_module(source), b["kernel"])
        capability = int(entry.arch.removeprefix("sm_"))
        compiled = triton.compile(triton.compiler.ASTSource(fn=fn, signature=b["signature"],
                                                            constexprs=b["constexprs"]),
                                  target=GPUTarget("cuda", capability, 32), options=dict(b.get("options", {})))
    meta = compiled.metadata
    if meta.global_scratch_size or meta.profile_scratch_size:
        raise RuntimeError(f"{b['kernel']}: needs scratch memory ({meta.global_scratch_size}, "
                           f"{meta.profile_scratch_size} bytes); the manifest passes null scratch pointers")
    ptx = relative_file_lines(compiled.asm["ptx"], [source.parent, Path(triton.__file__).parent.parent])
    options = " ".join(f"{k}={v}" for k, v in {**b["constexprs"], **b.get("options", {})}.items())
    return ptx, (f"triton {triton.__version__}; arch {entry.arch}; source {entry.source}; triton.compile {b['kernel']} "
                 f"{options} num_warps={meta.num_warps} shared={meta.shared}")


def build_numba(entry):
    from numba import cuda
    source = _stage(entry)
    b = entry.build
    fn = getattr(_load_module(source), b["kernel"])
    cc = tuple(int(c) for c in entry.arch.removeprefix("sm_"))
    ptx, _ = cuda.compile_ptx(fn, b["signature"], cc=cc)
    return ptx, (f"numba-cuda {_version('numba-cuda')} (numba {_version('numba')}, NVVM {_nvvm_release(ptx)}); "
                 f"arch {entry.arch}; source {entry.source}; compile_ptx {b['kernel']} {b['signature']} cc={cc}")


BUILDERS = {"nvcc": build_nvcc, "cute-dsl": build_dsl, "triton": build_triton, "numba-cuda": build_numba}
IN_CHILD = ("triton", "numba-cuda")      # a fresh process each: Numba numbers its entries by compile order


def build(entry):
    """``(ptx text, made-by line)`` of one corpus file; Triton and Numba builds run in a child process."""
    if entry.tool not in IN_CHILD:
        return BUILDERS[entry.tool](entry)
    with tempfile.TemporaryDirectory(prefix="warpsim-corpus-") as tmp:
        out = Path(tmp) / "out.ptx"
        done = subprocess.run([sys.executable, __file__, "--child", entry.ptx, str(out)], capture_output=True,
                              text=True)
        if done.returncode != 0:
            lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
            raise RuntimeError(lines[-1] if lines else f"exit status {done.returncode}")
        text = out.read_text(encoding="utf-8")
    ptx, _, line = text.rpartition("\n// made by: ")
    return ptx, line.strip()


def write(entry, ptx, made_by):
    os.makedirs(PTX_DIR, exist_ok=True)
    text = ptx.rstrip("\n") + f"\n// warpsim corpus: {made_by}\n"
    tmp = entry.path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, entry.path)
    return len(text.encode("utf-8"))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python tests/corpus/generate.py", description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="corpus files to make (default: all)")
    parser.add_argument("--child", nargs=2, metavar=("FILE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:                                       # one build in this (fresh) process
        entry = by_name(args.child[0])
        ptx, made_by = BUILDERS[entry.tool](entry)
        Path(args.child[1]).write_text(ptx.rstrip("\n") + f"\n// made by: {made_by}\n", encoding="utf-8")
        return 0
    entries = [by_name(f) for f in args.files] if args.files else list(CORPUS)
    made = failed = 0
    for entry in entries:
        missing = available(entry.tool)
        if missing:
            print(f"{entry.ptx}: skipped ({missing})")
            continue
        try:
            ptx, made_by = build(entry)
        except Exception as e:    # noqa: BLE001 -- one line per failed build, the others go on
            print(f"{entry.ptx}: FAILED: {type(e).__name__}: {e}")
            failed += 1
            continue
        size = write(entry, ptx, made_by)
        made += 1
        print(f"{entry.ptx}: {size / 1024:.1f} KB by {made_by}")
    shutil.rmtree(STAGE, ignore_errors=True)
    print(f"{made} of {len(entries)} made, {failed} failed, {len(entries) - made - failed} skipped; PTX in {PTX_DIR}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
