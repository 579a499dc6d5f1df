"""Numba's cache of warpsim (warpsim.numba_cache): a user cache directory named after the sources, never the package's
own folder; a user's NUMBA_CACHE_DIR wins; a changed source file gives a new directory (so code Numba inlined from it
is never reused stale); stale directories of other sources are pruned when a new one is made."""

import os
import subprocess
import sys
import time
from pathlib import Path

import warpsim.numba_cache as nc

ROOT = Path(__file__).resolve().parents[1]


def _python(code, env):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")} | env
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                          check=True).stdout.split()


def test_compiled_code_goes_to_the_user_cache_named_after_the_sources(tmp_path):
    code = ("import numba, os, warpsim; from warpsim.ptx.alu import mask; mask(7); "
            "d = os.environ['NUMBA_CACHE_DIR']; print(d, numba.core.config.CACHE_DIR, "
            "any(n.endswith('.nbi') for _, _, f in os.walk(d) for n in f))")
    env_dir, config_dir, written = _python(code, {"HOME": str(tmp_path)})
    want = tmp_path / ".cache" / "warpsim" / "numba"
    assert Path(env_dir).parent == want and env_dir == config_dir and written == "True"
    assert Path(env_dir).name.startswith(__import__("warpsim").__version__ + "-")
    xdg = _python("import os, warpsim; print(os.environ['NUMBA_CACHE_DIR'])",
                  {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "xdg")})[0]
    assert Path(xdg).parent == tmp_path / "xdg" / "warpsim" / "numba"
    mine = _python("import os, warpsim, numba; print(os.environ['NUMBA_CACHE_DIR'], numba.core.config.CACHE_DIR)",
                   {"HOME": str(tmp_path), "NUMBA_CACHE_DIR": str(tmp_path / "mine")})
    assert mine == [str(tmp_path / "mine")] * 2


def test_numba_imported_first_is_pointed_there_too(tmp_path):
    env_dir, config_dir = _python("import numba, os; import warpsim; print(os.environ['NUMBA_CACHE_DIR'], "
                                  "numba.core.config.CACHE_DIR)", {"HOME": str(tmp_path)})
    assert env_dir == config_dir and str(tmp_path) in config_dir


def test_a_changed_source_file_gets_a_new_directory_and_stale_ones_go(tmp_path, monkeypatch):
    package = tmp_path / "warpsim"
    package.mkdir()
    (package / "a.py").write_text("x = 1\n")
    monkeypatch.setattr(nc, "_ROOT", package)
    first = nc.cache_dir("1.0", {"XDG_CACHE_HOME": str(tmp_path / "c")})
    assert nc.cache_dir("1.0", {"XDG_CACHE_HOME": str(tmp_path / "c")}) == first
    (package / "a.py").write_text("x = 2\n")                 # another size, another time
    second = nc.cache_dir("1.0", {"XDG_CACHE_HOME": str(tmp_path / "c")})
    assert second != first and second.parent == first.parent
    stale, fresh = first.parent / "0.9-old", first.parent / "0.9-recent"
    for d in (stale, fresh):
        d.mkdir(parents=True)
    old = time.time() - nc.STALE_S - 60
    os.utime(stale, (old, old))
    second.mkdir()
    nc._prune(second)
    assert not stale.exists() and fresh.exists() and second.exists()


def test_an_import_marks_its_directory_used(tmp_path):
    first = _python("import os, warpsim; print(os.environ['NUMBA_CACHE_DIR'])", {"HOME": str(tmp_path)})[0]
    old = time.time() - nc.STALE_S - 60
    os.utime(first, (old, old))
    _python("import warpsim", {"HOME": str(tmp_path)})
    assert time.time() - os.stat(first).st_mtime < nc.STALE_S
