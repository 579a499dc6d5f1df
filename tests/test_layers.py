"""The layer rule: which package may import which, checked on every module's imports.

Bottom to top::

    errors                      warpsim.errors, warpsim.files: the exception types and atomic file
                                writes, importable from anywhere
    cute   isa   toolchain      CuTe in Python; PTX semantics; the CUDA tools on the host (nvcc, ptxas, nvdisasm)
    machine                     CTA state; warpsim.parallel, the CTA-parallel runner (knows no front end)
    ptx                         PTX: parse, decode, interpret, launch (the one execution core)
    program   frontends         the front ends, siblings above the core: the Python CuTe dialect (traced,
                                lowered to PTX); source files to PTX (nvcc, CuTe DSL), the kernel front
                                door, the grid
    draw   debug   hwcheck      pictures; the debugger (may use draw); the GPU check (beside debug)
    explain                     warpsim explain's library
    commands                    every CLI verb (hwcheck.cli too), and warpsim.testing (the pytest plugin)
    top                         warpsim.cli, warpsim.__main__, the ``warpsim`` package facade

A module may import its own layer and the layers its layer lists in ``MAY_IMPORT``; anything else
is a back-edge. Imports are read with ``ast`` from every module, function-local ones included, so a
lazy import cannot hide an edge. Packages that do not exist yet (``ptx``, ``commands``) already
have their place. The one exception: ``from warpsim import __version__`` (the version is a
string, not a layer).
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("warpsim", "hwcheck")

# module name (or package prefix) -> layer; the longest matching prefix wins
LAYER_OF = {
    "warpsim": "top",
    "warpsim.__main__": "top",
    "warpsim.cli": "top",
    "warpsim.errors": "errors",
    "warpsim.files": "errors",
    "warpsim.toolchain": "toolchain",
    "warpsim.parallel": "machine",
    "warpsim.testing": "commands",
    "hwcheck.cli": "commands",
    "hwcheck.__main__": "top",
    "warpsim.cute": "cute",
    "warpsim.isa": "isa",
    "warpsim.machine": "machine",
    "warpsim.program": "program",
    "warpsim.ptx": "ptx",
    "warpsim.frontends": "frontends",
    "warpsim.draw": "draw",
    "warpsim.debug": "debug",
    "hwcheck": "hwcheck",
    "warpsim.explain": "explain",
    "warpsim.commands": "commands",
    # CLI verbs not yet moved into warpsim/commands: they belong to that layer wherever they sit
    "warpsim.debug.command": "commands",
    "warpsim.draw.command": "commands",
}

MAY_IMPORT = {
    "errors": set(),
    "cute": {"errors"},
    "isa": {"errors"},
    "toolchain": {"errors"},
    "machine": {"errors", "cute", "isa"},
    "ptx": {"errors", "cute", "isa", "toolchain", "machine"},
    "program": {"errors", "cute", "isa", "machine", "ptx"},
    "frontends": {"errors", "cute", "isa", "toolchain", "machine", "ptx"},
    "draw": {"errors", "cute", "isa", "toolchain", "machine", "program", "ptx"},
    "debug": {"errors", "cute", "isa", "toolchain", "machine", "program", "ptx", "frontends", "draw"},
    "hwcheck": {"errors", "cute", "isa", "toolchain", "machine", "program", "ptx", "frontends"},
    "explain": {"errors", "cute", "isa", "toolchain", "machine", "program", "ptx"},
    "commands": {"errors", "cute", "isa", "toolchain", "machine", "program", "ptx", "frontends", "draw", "debug",
                 "hwcheck", "explain"},
    "top": {"errors", "cute", "isa", "toolchain", "machine", "program", "ptx", "frontends", "draw", "debug",
            "hwcheck", "explain", "commands"},
}


def layer_of(module):
    """The layer of a dotted module name, or ``None`` outside ``PACKAGES``."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if n == 1 and parts[0] == "warpsim" and len(parts) > 1:
            return None                    # a module of warpsim's own needs its own entry
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


def imports_of(module, path, known):
    """``[(line, imported module)]`` for every import statement in ``path``, at any depth.

    ``from a import b`` names ``a.b`` when that is a module, else ``a``; relative imports are resolved.
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
    return found


def back_edges(root):
    """Every import under ``root`` that breaks the rule, as readable lines (empty: the rule holds)."""
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


def test_every_import_points_down():
    problems = back_edges(ROOT)
    assert not problems, "imports against the layer rule:\n" + "\n".join(problems)


def test_the_rule_is_acyclic_and_complete():
    layers = set(MAY_IMPORT)
    assert set(LAYER_OF.values()) <= layers
    for layer, below in MAY_IMPORT.items():
        assert below <= layers and layer not in below
        for other in below:
            assert layer not in MAY_IMPORT[other], f"{layer} and {other} may import each other"
    assert "isa" not in MAY_IMPORT["cute"] and "cute" not in MAY_IMPORT["isa"]
    assert "program" not in MAY_IMPORT["ptx"], "the dialect lowers to PTX: ptx knows no front end above it"
    assert "frontends" not in MAY_IMPORT["ptx"] and "commands" not in MAY_IMPORT["frontends"]
    assert "program" not in MAY_IMPORT["frontends"] and "frontends" not in MAY_IMPORT["program"]
    assert "debug" not in MAY_IMPORT["draw"] and "commands" not in MAY_IMPORT["hwcheck"]


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
    "warpsim/commands/__init__.py": "def main():\n    from warpsim.debug import views\n    import hwcheck.run\n",
    "hwcheck/run.py": "from warpsim import __version__\nfrom warpsim.program.run import x\n",
}


def test_a_clean_synthetic_tree_passes(tmp_path):
    assert back_edges(_tree(tmp_path, CLEAN)) == []


@pytest.mark.parametrize("module, text, edge", [
    ("warpsim/isa/mma.py", "def f():\n    from warpsim.program import run\n",
     "warpsim.isa.mma (isa) imports warpsim.program.run (program)"),
    ("warpsim/cute/layout.py", "import warpsim.isa.mma\n", "warpsim.cute.layout (cute) imports warpsim.isa.mma (isa)"),
    ("warpsim/draw/tv.py", "from warpsim.debug import views\n",
     "warpsim.draw.tv (draw) imports warpsim.debug.views (debug)"),
    ("warpsim/ptx/__init__.py", "from ..program import trace\n", "warpsim.ptx (ptx) imports warpsim.program.trace"),
    ("hwcheck/run.py", "from warpsim.commands import main\n", "hwcheck.run (hwcheck) imports warpsim.commands"),
    ("warpsim/machine.py", "import warpsim\n", "warpsim.machine (machine) imports warpsim (top)"),
    ("warpsim/newthing.py", "", "warpsim.newthing: no layer"),
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
