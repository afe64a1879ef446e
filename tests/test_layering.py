"""The import contract: dependencies point one way, sim -> networks -> mapping -> scenarios.

Every module of a layer may import only its own layer and the layers below it; atomspark.sim.core
(errors, argument checks, atomic writes) imports nothing from atomspark. Imports inside functions
count too, so a lazy import cannot hide an upward dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["sim", "networks", "mapping", "scenarios"]
OLD_PATHS = {  # moved modules still importable from where they were
    "atomspark.scenarios.datasets": ["hierarchical_sequences", "sparse_dictionary_data"],
    "atomspark.sim.validation": ["AtomsparkError", "require_int", "as_finite_array"],
    "atomspark.networks.model_io": ["atomic_write_text", "atomic_write_bytes", "save_arrays"],
}


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
    mod.write_text("def f():\n    from atomspark.scenarios.datasets import x\n")
    assert atomspark_imports(mod) == {"scenarios"}


def test_core_module_imports_nothing_from_atomspark():
    assert atomspark_imports(ROOT / "sim" / "core.py") == set()


@pytest.mark.parametrize("module", sorted(OLD_PATHS))
def test_old_import_paths_still_work(module):
    import importlib

    mod = importlib.import_module(module)
    for name in OLD_PATHS[module]:
        assert callable(getattr(mod, name)), f"{module}.{name}"
