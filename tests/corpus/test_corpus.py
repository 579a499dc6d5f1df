"""The corpus of real compilers' PTX (``tests/corpus/manifest.py``, issue 26 item 2): every file loads with
``warpsim.ptx.load`` and every launch's outputs equal the reference -- integers bit for bit, floats within the
launch's stated tolerance of the float64 reference (the bit-exact check against the GPU is hwcheck's:
``hwcheck acceptance --only corpus``).

Files warpsim does not run yet are expected failures (strict: the test fails once they run, and their entry
in ``manifest.KNOWN_FAILURES``, which also keeps them out of hwcheck's set, must go), each naming the
construct and its line. The harness itself is checked apart from warpsim: every file exists with its
generator's line, names each launch's kernel exactly once and has as many parameters as the launch gives.

Regenerate the PTX with ``python tests/corpus/generate.py`` (tools that are missing are skipped).
"""

import os
import re
from functools import lru_cache

import numpy as np
import pytest

import warpsim.errors
from manifest import CORPUS, KNOWN_FAILURES, TOOLS, In, Tolerance, expected, known_failure, concrete_args, parameters
from warpsim import ptx
from warpsim.frontends.kernel import entry_params, find_entry

MAX_BYTES = 300 * 1024
SEED = 0


def _launch_cases():
    cases = []
    for entry in CORPUS:
        known = known_failure(entry)
        marks = [pytest.mark.xfail(reason=known.reason, strict=True, raises=getattr(warpsim.errors, known.error))
                 ] if known else []
        cases += [pytest.param(entry, launch, id=f"{entry.ptx}-{launch.kernel}", marks=marks)
                  for launch in entry.launches]
    return cases


@lru_cache(maxsize=None)
def _module(path):
    return ptx.load(path)


def _text(entry):
    with open(entry.path, encoding="utf-8") as f:
        return f.read()


def _compare(name, got, want, tolerance):
    """A one-line failure message, or None when ``got`` matches ``want`` (see :mod:`manifest`)."""
    want = np.asarray(want)
    if got.shape != want.shape:
        return f"{name}: shape {got.shape}, reference {want.shape}"
    if tolerance is None:
        want = want.astype(got.dtype)
        bad = got.view(np.uint8).reshape(got.shape + (-1,)) != want.view(np.uint8).reshape(want.shape + (-1,))
        bad = bad.any(axis=-1)
        limit = "bit for bit"
    else:
        bound = tolerance.atol + tolerance.rtol * np.abs(want)
        bad = ~(np.abs(got.astype(np.float64) - want) <= bound)
        limit = f"within atol {tolerance.atol:g} + rtol {tolerance.rtol:g} * |ref|"
    if not bad.any():
        return None
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    return (f"{name}: {int(bad.sum())} of {bad.size} elements not {limit}; first at {first}: got {got[first]!r}, "
            f"reference {want[first]!r}")


@pytest.mark.parametrize("entry, launch", _launch_cases())
def test_launch_matches_reference(entry, launch):
    module = _module(entry.path)
    kernel = find_entry(module.kernels, launch.kernel)
    params = module.params(kernel)
    args, values = concrete_args(launch, SEED)
    want = expected(launch, values)
    # a CuTe DSL tensor of static layout is an 8-byte struct holding its pointer
    args = [[("u64", a)] if isinstance(a, np.ndarray) and "[" in ptype else a for a, (_, ptype) in zip(args, params)]
    result = module.launch(kernel, grid=launch.grid, block=launch.block, args=args, smem=launch.smem, quiet=True)
    where = {spec.name: i for i, (kind, spec) in enumerate(parameters(launch)) if kind == "array"}
    problems = [_compare(name, result.buffers[params[where[name]][0]], want[name], launch.tolerance)
                for name in launch.outputs]
    problems = [p for p in problems if p]
    assert not problems, f"{entry.ptx} {launch.kernel} seed {SEED}:\n" + "\n".join(problems)


# ------------------------------------------------------------------------------------------------ the harness

@pytest.mark.parametrize("entry", CORPUS, ids=lambda e: e.ptx)
def test_file_is_the_generators_and_fits(entry):
    assert os.path.isfile(entry.path), f"{entry.ptx}: missing; run python tests/corpus/generate.py"
    assert os.path.isfile(entry.source_path), f"{entry.source}: missing"
    assert os.path.getsize(entry.path) <= MAX_BYTES
    made_by = entry.made_by()
    assert made_by and made_by.split()[0] == {"cute-dsl": "nvidia-cutlass-dsl"}.get(entry.tool, entry.tool)
    assert f"arch {entry.arch};" in made_by and f"source {entry.source};" in made_by
    assert re.search(rf"^\.target {entry.arch}a?(, debug)?$", _text(entry), re.MULTILINE)    # sm_90a, -G
    # no machine's folders: every .file path relative, no installed package's folder named
    assert not re.search(r'^\s*\.file\s+\d+\s+"/', _text(entry), re.MULTILINE)
    assert "site-packages" not in _text(entry)


@pytest.mark.parametrize("entry", CORPUS, ids=lambda e: e.ptx)
def test_each_launch_names_one_entry_with_its_parameters(entry):
    """Checked on the text (not warpsim.ptx.load), so it holds for the files warpsim fails too."""
    entries = entry_params(_text(entry))
    for launch in entry.launches:
        name = find_entry(entries, launch.kernel)
        assert len(entries[name]) == len(parameters(launch)), f"{entry.ptx} {name}: parameter count"
        if entry.tool == "triton":      # Triton 3.x: two trailing scratch pointers, null when the kernel needs none
            assert [p.ptx_type for p in entries[name][-2:]] == ["u64", "u64"]
            assert f"shared={launch.smem}" in entry.made_by()             # dynamic shared bytes, as Triton launches


def test_the_corpus_covers_every_tool_and_both_archs():
    assert {e.tool for e in CORPUS} == set(TOOLS)
    assert {e.arch for e in CORPUS} == {"sm_80", "sm_90"}
    assert 15 <= len(CORPUS) <= 30
    assert set(KNOWN_FAILURES) <= {e.ptx for e in CORPUS}
    assert all(isinstance(launch.tolerance, (Tolerance, type(None))) for e in CORPUS for launch in e.launches)


def test_inputs_are_seeded_and_in_range():
    for entry in CORPUS:
        for launch in entry.launches:
            _, first = concrete_args(launch, 3)
            _, again = concrete_args(launch, 3)
            for spec in launch.arrays:
                value = first[spec.name]
                assert np.array_equal(value, again[spec.name])
                if not isinstance(spec, In):
                    assert not value.any(), f"{entry.ptx} {spec.name}: an output starts at zero"
                elif value.dtype.kind == "f":
                    assert np.abs(value.astype(np.float64)).max() <= 2 and value.std() > 0.5


def test_compare_names_what_differs():
    got = np.array([1.0, 2.0], np.float32)
    assert _compare("y", got, [1.0, 2.0], None) is None
    assert "1 of 2 elements not bit for bit" in _compare("y", got, [1.0, np.nextafter(np.float32(2), 3)], None)
    assert _compare("y", got, [1.0, 2.0 + 1e-7], Tolerance(1e-6, 0)) is None
    assert "first at (1,)" in _compare("y", got, [1.0, 2.1], Tolerance(1e-6, 1e-6))
    assert _compare("y", np.array([np.nan], np.float32), [1.0], Tolerance(1, 1)) is not None
