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


def test_every_committed_trained_model_is_in_the_units_table():
    """Each trained model committed under docs/results/rsgn/models/ has its row in units.json
    (so the table in docs/lava.md covers every model whose weights are kept): run
    `python benchmarks/rsgn_fixed_units.py docs/results/rsgn/models/<grid>/<cell>.npz`."""
    from atomspark.networks.rsgn.model import load_model

    bench = _script("rsgn_fixed_units")
    runs = json.loads((RESULTS / "units.json").read_text())["runs"]
    models = sorted((ROOT / "docs" / "results" / "rsgn" / "models").glob("*/*.npz"))
    # the integer unit has the released sigmoid only (mapping/quantize refuses the other rules)
    models = [p for p in models if load_model(p)[1].threshold_rule == "sigmoid"]
    missing = [bench.run_name(p) for p in models if bench.run_name(p) not in runs]
    assert missing == [], f"evaluate them: python benchmarks/rsgn_fixed_units.py {missing}"
    for path in models:
        row = runs[bench.run_name(path)]
        assert row["samples"] > 0 and row["accuracy_torch_last_epoch"] is not None


def test_the_units_reading_follows_the_results():
    """The generated reading under the table: the goal verdict and the cause (weights or node
    arithmetic) change with the figures."""
    bench = _script("rsgn_fixed_units")
    row = {
        "accuracy": {k: 0.2 for k in ("float", *bench.UNITS, *bench.ABLATIONS)},
        "same_class_as_float": {k: 1.0 for k in ("float", *bench.UNITS, *bench.ABLATIONS)},
    }
    assert "is met" in bench._reading("m", row) and "node arithmetic" in bench._reading("m", row)
    row["same_class_as_float"].update({"rsgn_fixed": 0.8, "rsgn_fixed_split": 0.94})
    row["same_class_as_float"]["split+per-target-w"] = 0.9
    assert "is not met" in bench._reading("m", row)
    row["same_class_as_float"]["weights:unit"] = 0.97
    assert "the weights alone still flip 3.0 %" in bench._reading("m", row)
    del row["same_class_as_float"]["weights:unit"]
    assert bench._reading("m", row) is None  # rows measured before the variant existed
