"""docs/energy_validation.md's PilotNet SDNN subsection is the rendering of the committed results,
its prose claims follow from them, and the cited measurement is self-consistent."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from atomspark.scenarios.runs.loihi2_validation_sdnn import (
    CHECKABLE,
    LAYER_NAMES,
    MEASURED,
    VIDEOS,
    render,
    surrogate_video,
)

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results" / "loihi2_validation" / "pilotnet_sdnn.json"


def _results() -> dict:
    return json.loads(RESULTS.read_text())


def _doc() -> str:
    return (ROOT / "docs" / "energy_validation.md").read_text(encoding="utf-8")


def test_doc_tables_are_the_committed_results():
    res = _results()
    block = _doc().split("<!-- loihi2-sdnn:begin -->\n")[1].split("<!-- loihi2-sdnn:end")[0]
    assert block == render(res), (
        "docs/energy_validation.md SDNN subsection is stale: rerun `python -m "
        "atomspark.scenarios.runs.loihi2_validation_sdnn --render " + str(RESULTS) + "`"
    )
    assert res["measured"] == MEASURED and res["checkable"] == CHECKABLE
    assert list(res["predicted"]) == list(VIDEOS)


def test_measured_figures_are_self_consistent():
    m = MEASURED
    assert m["total_power_w"] / m["inferences_per_s"] == pytest.approx(
        m["energy_per_inference_j"], rel=5e-4
    )  # the printed throughput has 4 digits
    assert m["dynamic_power_w"] / m["inferences_per_s"] == pytest.approx(
        m["dynamic_energy_per_inference_j"], rel=5e-4
    )
    assert m["static_power_w"] + m["dynamic_power_w"] == pytest.approx(m["total_power_w"])
    assert sum(m["cores_per_layer"].values()) == m["cores"]
    assert list(m["cores_per_layer"]) == LAYER_NAMES


def test_prose_claims_follow_from_the_results():
    """Each claim of the subsection's list, checked on the committed numbers."""
    res, m = _results(), MEASURED
    t_meas = 1.0 / m["inferences_per_s"]
    for p in res["predicted"].values():
        assert 0.5 <= p["static_power_without_encoder_w"] / m["static_power_w"] <= 2.0
        assert 0.5 <= p["cores_without_encoder"] / m["cores"] <= 2.0
        assert p["time_per_step_s"] < t_meas
        assert 0 < p["dynamic_power_at_measured_rate_w"] < abs(m["dynamic_power_w"])
        assert p["dynamic_energy_per_inference_j"] < 0.1 * p["energy_per_frame_at_measured_step_j"]
    cores = [p["cores_without_encoder"] for p in res["predicted"].values()]
    assert len(set(cores)) == 1  # "the placement does not depend on the input"
    shift, smooth, still = (res["predicted"][v] for v in VIDEOS)
    assert shift["synops_per_inference"] > smooth["synops_per_inference"]
    assert smooth["synops_per_inference"] > still["synops_per_inference"]
    assert "bit-exact against lava-dl" in _doc() and "nothing was\nfitted on it" in _doc()


def test_surrogate_videos():
    shape = (12, 5, 3)
    shift, smooth, still = (surrogate_video(shape, v, 4) for v in VIDEOS)
    assert shift.shape == (4, 180) and shift.min() >= -64 and shift.max() <= 64
    assert np.array_equal(still[0], still[3]) and not np.array_equal(shift[0], shift[1])
    assert np.abs(np.diff(smooth, axis=0)).mean() < np.abs(np.diff(shift, axis=0)).mean()
