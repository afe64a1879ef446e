"""The calibrated Loihi 2 preset (loihi2-pilotnet): derived by its command from the committed
validation results (no hand-typed factor), exact on the run it was fitted on, checked on the run
it was not fitted on, and its bands (not a blanket x0.5 / x2) used by the chip-vs-GPU ranges."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from atomspark.mapping.chip_bands import bias_note, chip_bands, op_energy_band
from atomspark.mapping.chip_gpu_ratios import Assumptions, compare_workload, format_results
from atomspark.mapping.energy import EnergyBreakdown
from atomspark.mapping.hardware import DATA_DIR, DEFAULT_CHIP, hardware_from_dict, load_hardware
from atomspark.scenarios.runs.loihi2_calibrate import (
    PRESET,
    RESULTS,
    VALIDATION,
    fit,
    preset,
    render,
)
from atomspark.sim.core import AtomsparkError

ROOT = Path(__file__).resolve().parents[1]
STALE = "stale: rerun `python -m atomspark.scenarios.runs.loihi2_calibrate`"


def _committed():
    return json.loads(RESULTS.read_text()), json.loads((DATA_DIR / f"{PRESET}.json").read_text())


def test_preset_and_results_are_what_the_command_derives_from_the_validation():
    base = json.loads((DATA_DIR / "loihi2.json").read_text())
    cal, committed_preset = _committed()
    assert cal == fit(json.loads(VALIDATION.read_text()), 128), STALE
    assert committed_preset == preset(base, cal), STALE
    doc = (ROOT / "docs" / "energy_validation.md").read_text(encoding="utf-8")
    block = doc.split("<!-- loihi2-calibration:begin -->\n")[1].split("<!-- loihi2-calib")[0]
    assert block == render(cal), STALE
    assert DEFAULT_CHIP == PRESET  # every pricing verb uses the calibrated chip by default


def test_the_fit_is_exact_on_the_measured_run():
    cal, _ = _committed()
    for name, (measured, base, calibrated) in cal["fit"].items():
        assert calibrated == pytest.approx(measured, rel=1e-12), name
        assert base != pytest.approx(measured, rel=0.05), name  # the fit moved something
    hw = load_hardware(PRESET)
    assert hw.static_power_per_core_w * hw.limits.cores_per_chip == pytest.approx(
        cal["measured_static_per_chip_w"]["PilotNet LIF (fitted)"]
    )


def test_held_out_static_and_the_static_band_lies_within_the_measured_per_chip_power():
    cal, _ = _committed()
    ((measured, predicted),) = cal["held_out"].values()
    assert 0.5 < predicted / measured < 1.0  # predicts below the held-out run: favours the chip
    hw = load_hardware(PRESET)
    chip_w = hw.static_power_per_core_w * hw.limits.cores_per_chip
    lo, hi = hw.calibration["bands"]["chip_static_power"]
    measured_w = cal["measured_static_per_chip_w"].values()
    # the band spans exactly the measured per-chip static power, never outside it
    assert chip_w * lo == pytest.approx(min(measured_w))
    assert chip_w * hi == pytest.approx(max(measured_w))
    assert "favours the chip" in cal["bias"]


def test_calibrated_preset_scales_a_prediction_by_the_fitted_factors():
    """The model is linear in each factor: on a network it was not fitted on, dynamic energy and
    time per step move by exactly the fitted factors and whole-chip static power is the measured
    per-chip figure."""
    pytest.importorskip("h5py")
    from atomspark.networks.netx_file import read_netx
    from atomspark.networks.netx_graph import netx_graph
    from atomspark.scenarios.runs.netx_predict import predict, sample_inputs

    net = read_netx(ROOT / "tests" / "data" / "netx" / "mnist.net")
    ng = netx_graph(net)
    steps, cal = 8, _committed()[0]
    x = sample_inputs(net, ng, "rate:0.3:1", 2, steps)
    base = predict(ng, x, steps, load_hardware("loihi2")).to_dict()
    tuned = predict(ng, x, steps, load_hardware(PRESET)).to_dict()
    f = cal["factors"]
    assert tuned["dynamic_energy_per_inference_j"] == pytest.approx(
        base["dynamic_energy_per_inference_j"] * f["op_energy"]
    )
    assert tuned["time_per_step_s"] == pytest.approx(base["time_per_step_s"] * f["op_time"])


def _breakdown(synops: float, updates: float) -> EnergyBreakdown:
    return EnergyBreakdown(synops, updates, 0.0, 0.0, 0.0, 1e-6)


def test_op_energy_band_follows_the_workloads_mix():
    hw = load_hardware(PRESET)
    a, e = hw.calibration["op_attribution"], hw.calibration["op_energy"]
    lo, hi = op_energy_band(hw, _breakdown(1.0, 0.0))  # synaptic operations only
    assert (lo, hi) == pytest.approx((1 / e, a["synaptic_ops"] / e))
    lo, hi = op_energy_band(hw, _breakdown(0.0, 1.0))  # neuron updates only
    assert (lo, hi) == pytest.approx((1 / e, a["updates"] / e))
    assert "favours the chip" in bias_note(hw, _breakdown(0.0, 1.0)).split("per-op")[1]
    assert "against the chip" in bias_note(hw, _breakdown(1.0, 0.0)).split("per-op")[1]
    assert chip_bands(load_hardware("loihi2"), _breakdown(1.0, 1.0)) == {}
    assert "not calibrated" in bias_note(load_hardware("loihi2"), _breakdown(1.0, 1.0))


def test_ranges_use_the_calibrated_bands_and_state_the_bias():
    from test_chip_gpu_ratios import _chip, _variants

    hw = load_hardware(PRESET)
    gpu = load_hardware("h100")
    mix = _breakdown(3.0, 1.0)
    bands, bias = chip_bands(hw, mix), bias_note(hw, mix)
    plain = compare_workload("w", _chip(), _variants(), gpu, Assumptions())
    row = _chip().__class__(**{**_chip().__dict__, "bands": bands, "bias": bias})
    fitted = compare_workload("w", row, _variants(), gpu, Assumptions())
    for key in ("batch_1", "throughput"):
        bars = {b["assumption"]: b for b in fitted[key]["tornado"]}
        assert set(bars["chip_static_power"]["ratios"]) == {
            f"x{v:g}" for v in bands["chip_static_power"]
        }
        blanket = {b["assumption"]: b for b in plain[key]["tornado"]}
        assert set(blanket["chip_static_power"]["ratios"]) == {"x1", "x0.5", "x2"}
        assert fitted[key]["ratio_min"] <= fitted[key]["ratio"] <= fitted[key]["ratio_max"]
    assert fitted["bias"] == bias and fitted["chip"]["bias"] == bias
    lines = [ln for ln in format_results({"w": fitted}) if "GPU/chip at" in ln]
    assert len(lines) == 2 and all(f"remaining bias: {bias}" in ln for ln in lines)


def test_a_broken_calibration_section_is_refused_in_one_line():
    data = json.loads((DATA_DIR / f"{PRESET}.json").read_text())
    data["calibration"]["bands"]["chip_static_power"] = [1.5, 2.0]  # excludes the fitted value
    with pytest.raises(AtomsparkError, match="low <= 1 <= high"):
        hardware_from_dict(data, origin="mine.json")
    data["calibration"] = {"bands": {}}
    with pytest.raises(AtomsparkError, match="bias"):
        hardware_from_dict(data, origin="mine.json")
    assert np.isfinite(load_hardware(PRESET).static_power_per_core_w)
