"""docs/performance.md's headline block is what benchmarks/perf_table.py renders from the
committed results, and those results were measured with the reviewer's method."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results" / "performance"


def _perf_table():
    spec = importlib.util.spec_from_file_location(
        "perf_table", ROOT / "benchmarks" / "perf_table.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_headline_block_equals_the_rendered_results():
    pt = _perf_table()
    doc = (ROOT / "docs" / "performance.md").read_text()
    block = doc[doc.index(pt.BEGIN) : doc.index(pt.END) + len(pt.END)]
    assert block == pt.render(RESULTS), "run: python benchmarks/perf_table.py --write"


def test_results_are_full_runs_with_interleaved_rounds_and_recorded_load():
    cuba = json.loads((RESULTS / "cuba.json").read_text())
    assert not cuba["quick"]
    if (RESULTS / "vn_batch.json").is_file():
        vn = json.loads((RESULTS / "vn_batch.json").read_text())
        assert not vn["quick"] and vn["rounds"] >= 5 and len(vn["load_before"]) == 3
    for size in cuba["sizes"].values():
        assert size["rounds"] >= 5 and size["load_before"] and size["load_after"]
        sims = [r["simulator"] for r in size["rows"]]
        assert any("Brian2" in s and "cpp_standalone" in s for s in sims) or size["missing_peers"]
        for r in size["rows"]:
            if "engine" in r["simulator"] or "Brian2" in r["simulator"]:
                assert len(r["cpu_s"]) == size["rounds"]
                assert r["cpu_min_s"] <= r["cpu_median_s"]


def test_no_unmeasured_speed_claim_survives():
    doc = (ROOT / "docs" / "performance.md").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "1.45x" not in doc and "1.45×" not in readme and "104–183" not in readme
