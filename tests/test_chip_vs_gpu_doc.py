"""docs/chip_vs_gpu.md is what the committed results render: no figure in it is typed by hand."""

from __future__ import annotations

import json

from atomspark.scenarios.compare.chip_vs_gpu_doc import DOC, RESULTS, render
from atomspark.scenarios.compare.map_doc import load_map


def test_chip_vs_gpu_doc_matches_the_committed_results():
    demo = json.loads((RESULTS / "demo.json").read_text())
    history = json.loads((RESULTS / "history.json").read_text())
    assert DOC.read_text() == render(demo, history, load_map()), (
        "docs/chip_vs_gpu.md is stale: run `python -m atomspark.scenarios.compare.chip_vs_gpu_doc`"
    )


def test_every_demo_workload_is_in_the_doc_with_its_range_and_sources():
    demo = json.loads((RESULTS / "demo.json").read_text())
    text = DOC.read_text()
    assert set(demo["chip_vs_gpu"]) == {
        "VN settle",
        "VN send-on-delta",
        "RSGN published",
        "RSGN sparse",
    }
    for name, r in demo["chip_vs_gpu"].items():
        assert f"### {name}" in text
        assert r["fits"] is False or r["ratio_min"] <= r["ratio"] <= r["ratio_max"]
    for rows in demo["sources"].values():
        for meta in rows.values():
            assert str(meta["source"]).replace("|", "/") in text


def test_headlines_hold_only_what_a_chip_can_do_and_best_practice():
    demo = json.loads((RESULTS / "demo.json").read_text())
    text = DOC.read_text()
    assert "### How not to run it" in text
    for r in demo["chip_vs_gpu"].values():
        if not r["fits"]:
            continue
        assert r["chip"]["stop_rule"] in ("held-out budget", "fixed steps")
        assert r["headline"]["launch_model"] == "graph"
        eager = [w for w in r["how_not_to_run_it"] if w["what"].startswith("eager")]
        assert eager and eager[0]["batch_1"] > r["batch_1"]["ratio"]  # a strawman, kept apart
        for key in ("batch_1", "throughput"):
            q = r[key]
            assert q["time_ratio_min"] <= q["time_ratio"] <= q["time_ratio_max"]
        bound = r.get("oracle_lower_bound")
        if bound:  # the oracle stop is cheaper for the chip: a bound, never the headline
            assert bound["batch_1"] >= r["batch_1"]["ratio"] * (1 - 1e-9)
            assert "not a headline" in text


def test_the_doc_leads_with_the_map_and_its_sentences_are_the_results():
    chip_map = load_map()
    assert chip_map is not None, "docs/results/chip_vs_gpu/map/map.json: run `atomspark map`"
    text = DOC.read_text()
    assert text.index("## The map: where the chip wins") < text.index("## Method")
    assert "](results/chip_vs_gpu/map/map.png)" in text
    for sentence in chip_map["sentences"].values():
        assert f"- {sentence}" in text
    # each sentence's numbers are those of the points on its curve
    from atomspark.scenarios.compare.chip_gpu_map import curves, family_sentence_on_map
    from atomspark.scenarios.compare.map_points import map_families

    for family in map_families():
        series = chip_map["families"][family.name]["sentence_series"]
        by_series = curves(chip_map["points"], family.name)
        expected = family_sentence_on_map(family, by_series, series)
        assert chip_map["sentences"][family.name] == expected


def test_the_doc_says_why_the_step_time_has_no_band_with_the_rows_figures():
    from atomspark.scenarios.compare.step_time_doc import moved_ratio, static_share

    demo = json.loads((RESULTS / "demo.json").read_text())
    text = DOC.read_text()
    assert "The chip's step time has no band" in text and "host" in text
    for name, r in demo["chip_vs_gpu"].items():
        share = static_share(r["chip"])
        assert share is None or 0.0 < share < 1.0
        if share is not None:
            ratio = r["batch_1"]["ratio"]
            assert moved_ratio(ratio, share, 1.0) == ratio
            # a slower chip step costs the chip more static energy: the ratio falls
            assert moved_ratio(ratio, share, 2.0) < ratio < moved_ratio(ratio, share, 0.5)
            assert f"{name} {share:.0%} static" in text
