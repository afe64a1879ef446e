"""The split readout table in docs/lava.md is what docs/results/rsgn_split/readout.json renders
(a changed result or a hand-edited table fails here), every model the benchmark names is in it,
and what it records holds: the bundle fits, the readout's reference equals its engine-side
integer counterpart on every sample without an overflow, and the stream on Lava matched."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results" / "rsgn_split" / "readout.json"


def _script():
    path = ROOT / "benchmarks" / "rsgn_split_readout.py"
    spec = importlib.util.spec_from_file_location("rsgn_split_readout", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_doc_table_is_generated_from_its_results():
    bench = _script()
    data = json.loads(RESULTS.read_text())
    doc = (ROOT / "docs" / "lava.md").read_text(encoding="utf-8")
    section = doc[doc.index(bench.BEGIN) + len(bench.BEGIN) : doc.index(bench.END)]
    assert section == "\n" + bench.table(data)
    assert set(data["models"]) == set(bench.MODELS)
    for row in data["models"].values():
        assert row["fits"] and row["overflows"] == 0
        assert row["reference_equals_engine_counterpart"] == 1.0
        assert row["lava"]["identical_scores"] and row["lava"]["runs"] == 1
        enc = row["fixed_encoder"]  # the integer encoder's reference, measured on every model
        assert enc["overflows"] == 0 and 0.0 <= enc["chip_vs_float_decisions"] <= 1.0


def test_a_changed_result_changes_the_table():
    bench = _script()
    data = json.loads(RESULTS.read_text())
    before = bench.table(data)
    next(iter(data["models"].values()))["chip_vs_float_decisions"] -= 0.25
    assert bench.table(data) != before
