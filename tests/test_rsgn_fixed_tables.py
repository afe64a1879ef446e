"""The fixed-point RSGN tables in docs/lava.md are what their committed JSON renders (a changed
result or a hand-edited table fails here); their generators run without torch."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results" / "rsgn_fixed"


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _section(doc: str, begin: str, end: str) -> str:
    return doc[doc.index(begin) + len(begin) : doc.index(end)]


@pytest.mark.parametrize(
    ("script", "results"),
    [("rsgn_fixed_accuracy", "accuracy.json"), ("rsgn_fixed_units", "units.json")],
)
def test_doc_table_is_generated_from_its_results(script, results):
    bench = _script(script)
    data = json.loads((RESULTS / results).read_text())
    doc = (ROOT / "docs" / "lava.md").read_text(encoding="utf-8")
    assert _section(doc, bench.BEGIN, bench.END) == "\n" + bench.table(data)


def test_a_changed_result_changes_the_units_table():
    bench = _script("rsgn_fixed_units")
    data = json.loads((RESULTS / "units.json").read_text())
    name, row = next(iter(data["runs"].items()))
    before = bench.table(data)
    row["same_class_as_float"]["rsgn_fixed_split"] -= 0.25
    assert bench.table(data) != before
