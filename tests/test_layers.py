"""The layer rule: which package may import which, and no import circle anywhere.

Bottom to top::

    errors                      warpsim.errors, warpsim.files, warpsim.warp: the exception types, atomic
                                file writes and the warp size, importable from anywhere
    cute   isa   toolchain      CuTe in Python; PTX semantics; the CUDA tools on the host (nvcc, ptxas, nvdisasm)
    machine                     CTA state; warpsim.parallel, the CTA-parallel runner (knows no front end)
    ptx                         PTX: parse, decode, interpret, launch (the one execution core)
    program   frontends         the front ends, siblings above the core: the Python CuTe dialect (traced,
                                lowered to PTX); source files to PTX (nvcc, CuTe DSL), the kernel front
                                door, the grid
    draw   debug   hwcheck      pictures; the debugger (may use draw); the GPU check (beside debug)
    explain                     warpsim explain's library
    commands                    every CLI verb (hwcheck.cli too), warpsim.testing (the pytest plugin),
                                warpsim.triton and warpsim.numba (the switches, with the sanitizer on them)
    top                         warpsim.cli, warpsim.__main__, hwcheck.__main__, the ``warpsim`` facade

Three checks, each a function over a source root that the tests run on this repository and on small
planted trees:

- :func:`back_edges`: a module may import its own layer and the layers its layer lists in
  ``MAY_IMPORT``; anything else is a back-edge. Every module must have a layer: a root of
  ``PACKAGES`` names only itself, so each module and package directly under ``warpsim/`` or
  ``hwcheck/`` is named in ``LAYER_OF`` (a new one must be placed), deeper ones inherit.
- :func:`import_circles`: inside a layer too, the module import graph (:func:`import_graph`) has no
  strongly connected component of more than one module.
- :func:`stale_entries`: every entry of ``LAYER_OF`` names a module or package that exists.

Imports are read with ``ast`` (:func:`imports_of`) from every module, function-local ones included,
so a lazy import cannot hide an edge; ``importlib.import_module("a.b")`` with a literal string counts
as ``import a.b``. The one exception: ``from warpsim import __version__`` (the version is a string,
not a layer).

A new package only needs its entry in ``LAYER_OF``: a front-end package between ``ptx`` and
``debug``/``hwcheck`` goes in the layer ``frontends`` (``"warpsim.frontends": "frontends"``), a
subpackage of ``hwcheck`` in ``hwcheck`` (``"hwcheck.device": "hwcheck"``), a command line in
``commands``.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("warpsim", "hwcheck")

# module or package -> layer; the longest named prefix wins; a root (warpsim, hwcheck) covers only itself
LAYER_OF = {
    "warpsim": "top",
    "warpsim.__main__": "top",
    "warpsim.cli": "top",
    "warpsim.errors": "errors",
    "warpsim.files": "errors",
    "warpsim.warp": "errors",
    "warpsim.numba_cache": "errors",
    "warpsim.toolchain": "toolchain",
    "warpsim.cute": "cute",
    "warpsim.isa": "isa",
    "warpsim.machine": "machine",
    "warpsim.parallel": "machine",
    "warpsim.program": "program",
    "warpsim.ptx": "ptx",
    "warpsim.frontends": "frontends",
    "warpsim.cupy": "frontends",                                          # CuPy's RawKernel offline
    # Triton's and Numba's switches, with the sanitizer (and Triton's the debugger) on them, as warpsim.testing
    **dict.fromkeys(("warpsim.triton", "warpsim.numba"), "commands"),
    "warpsim.draw": "draw",
    "warpsim.debug": "debug",
    "warpsim.sanitize": "debug",
    "warpsim.explain": "explain",
    "warpsim.commands": "commands",
    "warpsim.testing": "commands",
    "hwcheck": "hwcheck",
    **dict.fromkeys(("hwcheck.arch", "hwcheck.compare", "hwcheck.errors", "hwcheck.progress", "hwcheck.report",
                     "hwcheck.device", "hwcheck.runs", "hwcheck.campaigns"), "hwcheck"),
    "hwcheck.cli": "commands",
    "hwcheck.__main__": "top",
}

MAY_IMPORT = {
    "errors": set(),
    "cute": {"errors"},
    "isa": {"errors"},
    "toolchain": {"errors"},
    "machine": {"errors", "cute", "isa"},
    "ptx": {"errors", "cute", "isa", "toolchain", "machine"},
    "program": {"errors", "cute", "isa", "toolchain", "machine", "ptx"},
    "frontends": {"errors", "cute", "isa", "toolchain", "machine", "ptx"},
    "draw": {"errors", "cute", "isa", "toolchain", "machine", "program", "ptx"},
    "debug": {"errors", "cute", "isa", "toolchain", "machine", "program", "ptx", "frontends", "draw"},
    "hwcheck": {"errors", "cute", "isa", "toolchain", "machine", "program", "ptx", "frontends"},
    "explain": {"errors", "cute", "isa", "toolchain", "machine", "program", "ptx", "frontends"},
    "commands": {"errors", "cute", "isa", "toolchain", "machine", "program", "ptx", "frontends", "draw", "debug",
                 "hwcheck", "explain"},
    "top": {"errors", "cute", "isa", "toolchain", "machine", "program", "ptx", "frontends", "draw", "debug",
            "hwcheck", "explain", "commands"},
}


def layer_of(module):
    """The layer of a dotted module name: the entry of its longest named prefix, or ``None``.

    A root of ``PACKAGES`` names only itself (its ``__init__``): each module and package directly
    under a root needs an entry of its own; deeper modules and subpackages inherit their nearest.

    ``layer_of("warpsim.cute.atoms.base") == "cute"``, ``layer_of("warpsim.unplaced") is None``,
    ``layer_of("numpy") is None``.
    """
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if n == 1 and len(parts) > 1:
            return None                    # a root's child needs its own entry
        layer = LAYER_OF.get(".".join(parts[:n]))
        if layer is not None:
            return layer
    return None


def module_names(root):
    """``{dotted name: path}`` of every module of ``PACKAGES`` under ``root`` (a package by its ``__init__``)."""
    names = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            names[".".join(parts)] = path
    return names


_IMPORT_CALLS = {"import_module", "__import__"}


def _literal_import(node):
    """The module named by ``importlib.import_module("a.b")`` or ``__import__("a.b")`` with a literal string."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name in _IMPORT_CALLS and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str) and not node.args[0].value.startswith("."):
        return node.args[0].value
    return None


def imports_of(module, path, known):
    """``[(line, imported module)]`` for every import in ``path``, at any depth (function-local too).

    ``from a import b`` names ``a.b`` when that is a module in ``known``, else ``a``; relative imports
    are resolved; ``importlib.import_module("a.b")`` with a literal string counts as ``import a.b``.
    ``from warpsim import __version__`` is left out (the version is a string, not a layer).
    """
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            for alias in node.names:
                if source == "warpsim" and alias.name == "__version__":
                    continue
                sub = f"{source}.{alias.name}"
                found.append((node.lineno, sub if sub in known else source))
        elif isinstance(node, ast.Call):
            target = _literal_import(node)
            if target is not None:
                found.append((node.lineno, target))
    return found


def import_graph(root):
    """``{module: {imported module: first line}}`` over the modules of ``PACKAGES`` under ``root``.

    Only imports of modules under ``root`` are edges; importing ``a.b.c`` is an edge to ``a.b.c``
    alone (not to its parent packages, which Python runs first but which are not what it asked for).
    """
    known = module_names(root)
    graph = {}
    for module, path in known.items():
        edges = graph[module] = {}
        for line, target in imports_of(module, path, known):
            if target in known and target != module:
                edges.setdefault(target, line)
    return graph


def strongly_connected(graph):
    """The strongly connected components of ``graph`` (``{node: iterable of nodes}``), Tarjan's
    algorithm without recursion; each component a sorted list, the components sorted.

    ``strongly_connected({"a": ["b"], "b": ["a", "c"], "c": []}) == [["a", "b"], ["c"]]``
    """
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in graph:
                    continue
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return sorted(components)


def import_circles(root):
    """Every import circle among the modules under ``root``: ``[(modules, edges)]`` with the modules
    of one strongly connected component (more than one module) and its edges as readable lines."""
    graph = import_graph(root)
    circles = []
    for component in strongly_connected(graph):
        if len(component) < 2:
            continue
        members = set(component)
        edges = [f"{module} -> {target} (line {line})" for module in component
                 for target, line in sorted(graph[module].items()) if target in members]
        circles.append((component, edges))
    return circles


def back_edges(root):
    """Every import under ``root`` that breaks the rule, as readable lines (empty: the rule holds).

    A module with no layer is a problem too, so a new module or package must be placed in ``LAYER_OF``.
    """
    known = module_names(root)
    problems = []
    for module, path in known.items():
        layer = layer_of(module)
        if layer is None or layer not in MAY_IMPORT:
            problems.append(f"{module}: no layer (add it to LAYER_OF in tests/test_layers.py)")
            continue
        for line, target in imports_of(module, path, known):
            target_layer = layer_of(target)
            if target_layer is None or target_layer == layer or target_layer in MAY_IMPORT[layer]:
                continue
            where = path.relative_to(root)
            problems.append(f"{where}:{line}: {module} ({layer}) imports {target} ({target_layer})")
    return problems


def stale_entries(root):
    """The entries of ``LAYER_OF`` that name no module or package under ``root``."""
    known = module_names(root)
    return sorted(name for name in LAYER_OF
                  if name not in known and not any(k.startswith(name + ".") for k in known))


def test_every_import_points_down():
    problems = back_edges(ROOT)
    assert not problems, "imports against the layer rule:\n" + "\n".join(problems)


def test_no_import_circle():
    circles = import_circles(ROOT)
    assert not circles, "import circles:\n" + "\n".join(
        f"{' <-> '.join(modules)}:\n    " + "\n    ".join(edges) for modules, edges in circles)


def test_every_entry_names_a_module():
    assert stale_entries(ROOT) == []


def test_the_rule_is_acyclic_and_complete():
    layers = set(MAY_IMPORT)
    assert set(LAYER_OF.values()) <= layers
    for layer, below in MAY_IMPORT.items():
        assert below <= layers and layer not in below
        for other in below:
            assert MAY_IMPORT[other] <= below, f"{layer} may import {other} but not all it imports"
    assert all(len(c) == 1 for c in strongly_connected(MAY_IMPORT)), "the layers import each other"
    assert "isa" not in MAY_IMPORT["cute"] and "cute" not in MAY_IMPORT["isa"]
    assert "program" not in MAY_IMPORT["ptx"], "the dialect lowers to PTX: ptx knows no front end above it"
    assert "frontends" not in MAY_IMPORT["ptx"] and "commands" not in MAY_IMPORT["frontends"]
    assert "program" not in MAY_IMPORT["frontends"] and "frontends" not in MAY_IMPORT["program"]
    assert "debug" not in MAY_IMPORT["draw"] and "commands" not in MAY_IMPORT["hwcheck"]
    assert "program" not in MAY_IMPORT["frontends"] and "frontends" not in MAY_IMPORT["ptx"]


@pytest.mark.parametrize("graph, components", [
    ({}, []),
    ({"a": []}, [["a"]]),
    ({"a": ["b"], "b": ["a", "c"], "c": []}, [["a", "b"], ["c"]]),
    ({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}, [["a", "b", "c"], ["d"]]),
    ({"a": ["b", "x"], "b": ["c"], "c": ["b", "d"], "d": ["e"], "e": ["d", "a"]}, [["a", "b", "c", "d", "e"]]),
    ({"a": ["b"], "b": ["c"], "c": []}, [["a"], ["b"], ["c"]]),
])
def test_strongly_connected(graph, components):
    assert strongly_connected(graph) == components


def _tree(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for package in PACKAGES:
        (root / package).mkdir(exist_ok=True)
        (root / package / "__init__.py").touch()
    return root


CLEAN = {
    "warpsim/errors.py": "",
    "warpsim/cute/__init__.py": "from warpsim.cute.layout import Layout\n",
    "warpsim/cute/layout.py": "from warpsim.errors import WarpsimError\nclass Layout: pass\n",
    "warpsim/isa/__init__.py": "",
    "warpsim/isa/mma.py": "import numpy as np\n",
    "warpsim/machine.py": "from warpsim.isa import mma\n",
    "warpsim/program/__init__.py": "",
    "warpsim/program/run.py": "from warpsim import machine\nfrom . import trace\n",
    "warpsim/program/trace.py": "from ..cute import Layout\n",
    "warpsim/ptx/__init__.py": "from warpsim.machine import *\n",
    "warpsim/draw/__init__.py": "",
    "warpsim/draw/tv.py": "from warpsim import cute\n",
    "warpsim/debug/__init__.py": "",
    "warpsim/debug/views.py": "from warpsim.draw import tv\n",
    "warpsim/commands/__init__.py": "def main():\n    from warpsim.debug import views\n    import hwcheck.runs.run\n",
    "hwcheck/runs/__init__.py": "",
    "hwcheck/runs/run.py": "from warpsim import __version__\nfrom warpsim.program.run import x\n",
}


def test_a_clean_synthetic_tree_passes(tmp_path):
    assert back_edges(_tree(tmp_path, CLEAN)) == []


def test_a_new_package_needs_only_its_entry(tmp_path, monkeypatch):
    planted = {"warpsim/newfront/__init__.py": "", "warpsim/newfront/nvcc.py": "from warpsim.ptx import load\n",
               "warpsim/debug/ptx_views.py": "from warpsim.newfront import nvcc\n",
               "hwcheck/newsub/__init__.py": "", "hwcheck/newsub/gpu.py": "from warpsim.newfront.nvcc import x\n"}
    root = _tree(tmp_path, {**CLEAN, **planted})
    assert {p.split(":")[0] for p in back_edges(root)} == {"warpsim.newfront", "warpsim.newfront.nvcc",
                                                           "hwcheck.newsub", "hwcheck.newsub.gpu"}
    monkeypatch.setitem(LAYER_OF, "warpsim.newfront", "frontends")
    monkeypatch.setitem(LAYER_OF, "hwcheck.newsub", "hwcheck")
    assert back_edges(root) == []
    (root / "warpsim/newfront/nvcc.py").write_text("from warpsim.program import run\n")
    assert back_edges(root) == ["warpsim/newfront/nvcc.py:1: warpsim.newfront.nvcc (frontends) imports "
                                "warpsim.program.run (program)"]


@pytest.mark.parametrize("module, text, edge", [
    ("warpsim/isa/mma.py", "def f():\n    from warpsim.program import run\n",
     "warpsim.isa.mma (isa) imports warpsim.program.run (program)"),
    ("warpsim/cute/layout.py", "import warpsim.isa.mma\n", "warpsim.cute.layout (cute) imports warpsim.isa.mma (isa)"),
    ("warpsim/draw/tv.py", "from warpsim.debug import views\n",
     "warpsim.draw.tv (draw) imports warpsim.debug.views (debug)"),
    ("warpsim/ptx/__init__.py", "from ..program import trace\n", "warpsim.ptx (ptx) imports warpsim.program.trace"),
    ("hwcheck/runs/run.py", "from warpsim.commands import main\n",
     "hwcheck.runs.run (hwcheck) imports warpsim.commands"),
    ("warpsim/machine.py", "import warpsim\n", "warpsim.machine (machine) imports warpsim (top)"),
    ("warpsim/newthing.py", "", "warpsim.newthing: no layer"),
    ("warpsim/newfront/__init__.py", "", "warpsim.newfront: no layer"),
    ("hwcheck/newsub/gpu.py", "", "hwcheck.newsub.gpu: no layer"),
    ("hwcheck/newprobe.py", "", "hwcheck.newprobe: no layer"),
])
def test_a_planted_back_edge_fails(tmp_path, module, text, edge):
    problems = back_edges(_tree(tmp_path, {**CLEAN, module: text}))
    assert any(edge in p for p in problems), problems


def test_cute_imports_only_at_module_level():
    """Inside ``warpsim.cute`` modules import at the top: a lower module that needs a higher one's
    function looks it up through :mod:`warpsim.cute.overloads`, as ``composed.py`` registers them."""
    local = []
    for path in sorted((ROOT / "warpsim" / "cute").rglob("*.py")):
        tree = ast.parse(path.read_text())
        top = {id(node) for node in tree.body}
        local += [f"{path.relative_to(ROOT)}:{node.lineno}" for node in ast.walk(tree)
                  if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top]
    assert not local, "function-local imports in warpsim/cute: " + ", ".join(local)


def test_a_clean_synthetic_tree_has_no_circle(tmp_path):
    assert import_circles(_tree(tmp_path, CLEAN)) == []


@pytest.mark.parametrize("planted, circle", [
    ({"warpsim/draw/svg.py": "from warpsim.draw import tv\n",
      "warpsim/draw/tv.py": "def f():\n    from . import svg\n"},
     ["warpsim.draw.svg", "warpsim.draw.tv"]),
    ({"warpsim/program/a.py": "from .b import x\n", "warpsim/program/b.py": "import warpsim.program.c\n",
      "warpsim/program/c.py": "from warpsim.program.a import y\n"},
     ["warpsim.program.a", "warpsim.program.b", "warpsim.program.c"]),
    ({"warpsim/program/__init__.py": "from warpsim.program.run import run\n",
      "warpsim/program/run.py": "from warpsim.program import Buffer\n"},
     ["warpsim.program", "warpsim.program.run"]),
    ({"hwcheck/runs/run.py": "import importlib\nm = importlib.import_module('hwcheck.report')\n",
      "hwcheck/report.py": "from hwcheck.runs import run\n"},
     ["hwcheck.report", "hwcheck.runs.run"]),
])
def test_a_planted_circle_fails(tmp_path, planted, circle):
    circles = import_circles(_tree(tmp_path, {**CLEAN, **planted}))
    assert [modules for modules, _ in circles] == [circle], circles
    assert all(" -> " in edge and "(line " in edge for edge in circles[0][1])


def test_a_literal_import_module_is_an_edge(tmp_path):
    planted = {"warpsim/isa/mma.py": "import importlib\nimportlib.import_module('warpsim.program.run')\n"}
    problems = back_edges(_tree(tmp_path, {**CLEAN, **planted}))
    assert any("warpsim.isa.mma (isa) imports warpsim.program.run (program)" in p for p in problems), problems


def test_a_stale_entry_is_found(tmp_path):
    assert "warpsim.draw" in stale_entries(_tree(tmp_path, {"warpsim/errors.py": ""}))
    assert "warpsim.errors" not in stale_entries(_tree(tmp_path, {"warpsim/errors.py": ""}))
