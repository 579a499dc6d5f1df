"""hwcheck's subpackages import downward only, in the order ``hwcheck/__init__.py`` states; no module circles.

Imports are read with ``ast``, function-local ones included, so a lazy import cannot hide an edge.
"""

import ast
from pathlib import Path

HWCHECK = Path(__file__).resolve().parents[2] / "hwcheck"

# module name (or package prefix) -> level, bottom (0) to top; the longest matching prefix wins
LEVEL = {"hwcheck": 0, "hwcheck.device": 1, "hwcheck.runs": 2, "hwcheck.campaigns": 3, "hwcheck.cli": 4,
         "hwcheck.__main__": 5}


def level(module):
    parts = module.split(".")
    return next(LEVEL[".".join(parts[:n])] for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in LEVEL)


def hwcheck_imports():
    """``{module: {imported hwcheck module}}`` for every module of hwcheck."""
    names = {".".join(p.relative_to(HWCHECK.parent).with_suffix("").parts).removesuffix(".__init__"): p
             for p in HWCHECK.rglob("*.py")}
    edges = {}
    for module, path in names.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                found |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in names else node.module
                          for a in node.names}
        edges[module] = {m for m in found if m in names and m != module}
    return edges


def test_imports_point_down():
    edges = hwcheck_imports()
    up = [f"{m} ({level(m)}) imports {t} ({level(t)})" for m, ts in edges.items() for t in ts if level(t) > level(m)]
    assert not up, "\n".join(up)


def test_no_module_circles():
    edges, done, path = hwcheck_imports(), set(), []

    def visit(module):
        assert module not in path, "import circle: " + " -> ".join(path[path.index(module):] + [module])
        if module not in done:
            path.append(module)
            for target in sorted(edges[module]):
                visit(target)
            path.pop()
            done.add(module)

    for module in sorted(edges):
        visit(module)
