"""Session fixture: CuTe's own pictures (``cute_pictures.cpp``), compiled once with nvcc and cached."""

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "oracle"))
import oracle_harness  # noqa: E402  (paths, cache folder and toolchain fingerprint of the CuTe oracle)

SOURCE = HERE / "cute_pictures.cpp"


def _build():
    """Compile ``cute_pictures.cpp`` (or reuse the cached binary); return its path."""
    text = SOURCE.read_text()
    key = hashlib.sha256((oracle_harness._toolchain_fingerprint() + "\0" + text).encode()).hexdigest()[:24]
    binary = oracle_harness.cache_dir() / "bin" / f"cute_pictures_{key}"
    if not binary.exists():
        binary.parent.mkdir(parents=True, exist_ok=True)
        tmp = binary.with_suffix(f".tmp{os.getpid()}")
        cmd = [oracle_harness.nvcc_path(), *oracle_harness.NVCC_FLAGS, f"-I{oracle_harness.cute_include_dir()}",
               str(SOURCE), "-o", str(tmp)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"compiling {SOURCE.name} failed:\n{proc.stderr[-4000:]}")
        os.replace(tmp, binary)
    return binary


@pytest.fixture(scope="session")
def cute_pictures():
    """``{name: (kind, text)}``: what CuTe's ``print_svg`` / ``print_latex`` printed for each configuration."""
    reason = oracle_harness.skip_reason()
    if reason:
        pytest.skip(reason)
    out = subprocess.run([str(_build())], capture_output=True, text=True, check=True).stdout
    pictures, name, kind, lines = {}, None, None, []
    for line in out.splitlines():
        if line.startswith("#### "):
            if name:
                pictures[name] = (kind, "\n".join(lines))
            kind, name = line[5:].split()
            lines = []
        else:
            lines.append(line)
    if name:
        pictures[name] = (kind, "\n".join(lines))
    return pictures
