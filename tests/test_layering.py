"""The import contract: dependencies point one way, sim -> networks -> mapping -> scenarios.

Every module of a layer may import only its own layer and the layers below it; atomspark.sim.core
(errors, argument checks, atomic writes) imports nothing from atomspark; no two modules import each
other, directly or round a longer circle, inside a layer either. Imports inside functions count
too, so a lazy import cannot hide an upward dependency or a circle.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 (the Lava environment)
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["sim", "networks", "mapping", "scenarios"]


def atomspark_imports(path: Path) -> set[str]:
    """Every atomspark.<layer> a module imports (top level or inside functions)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "atomspark" and len(parts) > 1:
                found.add(".".join(parts[:3]) if parts[1] == "sim" else parts[1])
    return found


def violations(layer: str) -> list[str]:
    allowed = set(LAYERS[: LAYERS.index(layer) + 1])
    bad = []
    for path in sorted((ROOT / layer).rglob("*.py")):
        for target in atomspark_imports(path):
            top = target.split(".")[1] if target.startswith("atomspark.") else target
            if top not in allowed:
                bad.append(f"{path.relative_to(ROOT)} imports atomspark.{top}")
    return bad


@pytest.mark.parametrize("layer", LAYERS[:-1])
def test_layer_imports_only_itself_and_lower_layers(layer):
    assert violations(layer) == []


def test_the_checker_sees_an_upward_import(tmp_path):
    mod = tmp_path / "m.py"
    mod.write_text("def f():\n    from atomspark.scenarios.bench import x\n")
    assert atomspark_imports(mod) == {"scenarios"}


def test_core_module_imports_nothing_from_atomspark():
    assert atomspark_imports(ROOT / "sim" / "core.py") == set()


def module_name(path: Path) -> str:
    """atomspark.<layer>.<...> of a source file (a package's __init__ is the package)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["atomspark", *parts])


def module_imports(path: Path, known: set[str]) -> set[str]:
    """The atomspark modules `path` imports (top level or inside functions), among `known`;
    `from pkg import name` counts as importing pkg.name when that is a module, else pkg."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            subs = {f"{node.module}.{a.name}" for a in node.names} & known
            found.update(subs or {node.module})
    return found & known


def import_graph(roots: list[Path]) -> dict[str, set[str]]:
    paths = {module_name(p): p for root in roots for p in sorted(root.rglob("*.py"))}
    known = set(paths)
    return {name: module_imports(path, known) - {name} for name, path in paths.items()}


def find_circle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle of `graph` (module -> modules it imports) as a path, or []."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_no_import_circle_anywhere():
    circle = find_circle(import_graph([ROOT / layer for layer in LAYERS]))
    assert circle == [], " -> ".join(circle)


def test_the_circle_finder_sees_a_circle_inside_a_layer(tmp_path):
    pkg = tmp_path / "sim"
    pkg.mkdir()
    (pkg / "a.py").write_text("def f():\n    from atomspark.sim import b\n")
    (pkg / "b.py").write_text("from atomspark.sim.a import f\n")
    (pkg / "c.py").write_text("import numpy\n")
    paths = {f"atomspark.sim.{p.stem}": p for p in pkg.glob("*.py")}
    graph = {n: module_imports(p, set(paths)) - {n} for n, p in paths.items()}
    assert find_circle(graph) == ["atomspark.sim.a", "atomspark.sim.b", "atomspark.sim.a"]
    graph["atomspark.sim.b"] = set()
    assert find_circle(graph) == []


def test_every_package_folder_is_installed():
    """pyproject lists packages by hand (the folders map onto atomspark.*): none may be missing."""
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    folders = {
        module_name(init.parent / "__init__.py")
        for layer in LAYERS
        for init in (ROOT / layer).rglob("*.py")
    }
    assert folders - listed == set()


MAX_FUNCTION_LINES = 90


def test_no_function_is_longer_than_a_screen_and_a_half():
    """Long functions are split around small state objects (docs/architecture.md)."""
    long = []
    for root in [*LAYERS, "benchmarks"]:
        for path in sorted((ROOT / root).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = node.end_lineno - node.lineno + 1
                    if lines > MAX_FUNCTION_LINES:
                        long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines})")
    assert long == []
