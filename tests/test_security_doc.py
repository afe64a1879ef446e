"""docs/security.md's generated blocks are what benchmarks/security_table.py renders from the
committed results in docs/results/security/, and those results were measured as the doc says."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results" / "security"


def _table():
    spec = importlib.util.spec_from_file_location(
        "security_table", ROOT / "benchmarks" / "security_table.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generated_blocks_equal_the_rendered_results():
    table = _table()
    doc = (ROOT / "docs" / "security.md").read_text()
    for name, block in table.render_blocks(RESULTS).items():
        begin, end = table.markers(name)
        assert doc[doc.index(begin) : doc.index(end) + len(end)] == block, (
            "run: python benchmarks/security_table.py --write"
        )


def test_depth_results_cover_the_asked_depths_with_load_and_five_cuba_pairs():
    deep = json.loads((RESULTS / "deep_import.json").read_text())
    depths = {c["depth"] for c in deep["cases"]}
    assert {5, 20, 40, 80} <= depths
    grouped = [c for c in deep["cases"] if c["loop"] == "grouped"]
    assert all("compile_s" in c and "load_1min" in c for c in grouped)
    assert max(c["compile_s"] for c in grouped) < 3 * min(c["compile_s"] for c in grouped)
    pairs = json.loads((RESULTS / "cuba_pairs.json").read_text())
    assert len(pairs["pairs"]) >= 5 and all("load_1min" in p for p in pairs["pairs"])
    for side in ("before", "after"):
        s = pairs["summary"][side]
        assert s["min_s"] <= s["median_s"]


def test_every_probe_class_passes_when_its_results_are_committed():
    path = RESULTS / "probes.json"
    if not path.is_file():
        return
    for c in json.loads(path.read_text())["classes"]:
        assert c["failed"] == 0 and c["passed"] > 0, c["class"]
