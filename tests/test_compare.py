"""GPU-vs-neuromorphic comparison: torch and the event engine agree on tiny trained models, costs
are consistent, and bad data sets or devices are refused with a clear error."""

import json
from pathlib import Path

import numpy as np
import pytest
from atomspark.mapping import hardware as hardware_module
from atomspark.mapping.hardware import load_hardware
from atomspark.mapping.quantize import quantize_rsgn_graph
from atomspark.networks.rsgn_compile import NODE_POPULATION, compile_rsgn_tokens
from atomspark.sim.engine import Engine

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from atomspark.networks import rsgn  # noqa: E402
from atomspark.networks.datasets import (  # noqa: E402
    hierarchical_sequences,
    sparse_dictionary_data,
)
from atomspark.networks.torch_path.training import train  # noqa: E402
from atomspark.scenarios.cli.main import main  # noqa: E402
from atomspark.scenarios.compare.chip_vs_gpu import compare  # noqa: E402
from atomspark.sim.core import AtomsparkError  # noqa: E402

VN_CFG = {
    "task": "vn-dictionary",
    "dtype": "float64",
    "epochs": 3,
    "batch_size": 16,
    "data": {"n": 60, "dim": 6, "n_atoms": 5},
    "model": {"layer_sizes": [[6, 4]], "lam": 0.1},
}
RSGN_CFG = {
    "task": "rsgn-sequence",
    "dtype": "float64",
    "epochs": 2,
    "batch_size": 16,
    "data": {"n": 60, "length": 12, "dim": 4, "n_classes": 3},
    "model": {"n_nodes": 16, "d_hidden": 8, "affinity_rank": 4, "n_steps": 2},
}
# float64 on both sides: the engine's Jacobi ISTA after a fixed step budget vs torch's converged
# FISTA (1e-10); RSGN's engine does the same arithmetic in another order.
VN_CODE_TOL = 1e-6
RSGN_SCORE_TOL = 1e-9


@pytest.fixture(scope="module")
def vn_model(tmp_path_factory):
    return train(VN_CFG, tmp_path_factory.mktemp("vn"), progress=False).model_path


@pytest.fixture(scope="module")
def rsgn_model(tmp_path_factory):
    return train(RSGN_CFG, tmp_path_factory.mktemp("rsgn"), progress=False).model_path


def _check_costs(entry):
    nm = entry["costs"]["neuromorphic"]
    parts = {k: v for k, v in nm["breakdown"].items() if k != "total"}
    assert all(v >= 0 for v in parts.values())
    hw = load_hardware(nm["hardware"])
    # static energy is power x time: the whole chip (every core of every chip in use) is held
    assert nm["static_scope"] == "device"
    held = hw.limits.cores_per_chip * nm["chips_used"]
    assert parts["static"] == pytest.approx(
        hw.static_power_per_core_w * held * nm["time_per_sample_s"], rel=1e-12
    )
    # synaptic energy prices whole synaptic operations (a count per run of all samples)
    ops = parts["synaptic_ops"] / hw.energy.synop * nm["n_samples"]
    assert ops > 0 and ops == pytest.approx(round(ops), abs=1e-6)
    assert entry["energy_per_sample_j"] == nm["energy_per_sample_j"] > 0
    assert entry["latency_per_sample_s"] > 0
    assert len(entry["per_sample_energy_j"]) > 0 and min(entry["per_sample_energy_j"]) > 0


def test_vn_engine_agrees_with_torch(vn_model, tmp_path):
    x = sparse_dictionary_data(n=4, dim=6, n_atoms=5, active=2, seed=7).signals
    report = compare(vn_model, x, tmp_path, device="cpu", steps=1500)
    t, f, q = (report["backends"][k] for k in ("torch", "engine_float", "engine_fixed"))
    agree = f["agreement_vs_torch"]
    assert agree["max_abs_error"] < VN_CODE_TOL * max(agree["max_abs_code"], 1.0)
    assert agree["decision_agreement"] == 1.0
    # reconstruction error recomputed here from the torch codes' definition
    assert f["reconstruction_error"] == pytest.approx(t["reconstruction_error"], abs=1e-6)
    assert 0.0 < t["reconstruction_error"] < 1.0
    assert 0.0 < t["active_fraction"] <= 1.0
    # fixed point: 8-bit weight mantissas, codes in 2^-12 units, no overflow at this size
    assert q["wraps"] == 0 and q["clips"] == 0
    assert q["agreement_vs_torch"]["max_abs_error"] < 0.25 * agree["max_abs_code"]
    assert q["agreement_vs_engine_float"]["max_abs_error"] < 0.25 * agree["max_abs_code"]
    for entry in (f, q):
        _check_costs(entry)
    assert t["energy_per_sample_j"] > 0 and "model" in t["energy_source"]
    on_disk = json.loads((tmp_path / "comparison.json").read_text())
    assert on_disk["backends"]["engine_float"]["agreement_vs_torch"] == agree
    for png in ("accuracy_vs_energy.png", "energy_per_sample.png", "tornado.png"):
        assert (tmp_path / png).stat().st_size > 0
    # the chip side of the ratio stops at a budget chosen on the other samples: fewer steps than
    # the run's budget, so less energy than the budget's run (same placement, same static scope);
    # the oracle stop is reported beside it as a lower bound on the chip's energy, not headline
    ratios = report["chip_vs_gpu"]
    assert ratios["chip_backend"] == "engine_fixed" and "held-out" in ratios["chip_steps"]
    assert ratios["chip"]["stop_rule"] == "held-out budget"
    assert ratios["chip"]["steps_per_sample"] < 1500
    bound = ratios["oracle_lower_bound"]
    assert bound["steps_per_sample"] <= ratios["chip"]["steps_per_sample"]
    assert bound["batch_1"] >= ratios["batch_1"]["ratio"]
    assert ratios["chip"]["energy_uJ"] < q["energy_per_sample_j"] * 1e6
    assert ratios["ratio_min"] <= ratios["ratio"] <= ratios["ratio_max"]
    _check_standard_form(report["standard_form"], vn_model, x, ratios)


def _check_standard_form(entry, model_path, x, ratios):
    """The standard form (SigmaDelta + Sparse) is priced beside the custom form: two compartments
    per signed atom, its cost from its own engine events; the headline stays on the custom form
    (the one `export --to lava` writes by default)."""
    from atomspark.mapping.vn_standard import vn_standard_graph
    from atomspark.networks.vn_compile import compile_vn_model
    from atomspark.scenarios.compare.chip_vs_gpu import load_trained_model
    from atomspark.scenarios.compare.vn_standard_side import CUSTOM_FORM, STANDARD_FORM

    assert entry["headline_prices"] == CUSTOM_FORM
    custom, std = entry["forms"][CUSTOM_FORM], entry["forms"][STANDARD_FORM]
    _, model = load_trained_model(model_path)
    atoms = sum(ly.S.shape[1] for ly in model.layers)
    assert custom["compartments"] == atoms and std["compartments"] == 2 * atoms
    assert std["deployable_on_chip"] and not custom["deployable_on_chip"]
    # the standard form's events are its own: the first sample re-run on its standard graph
    graph = vn_standard_graph(compile_vn_model(model, x[0]), frac_bits=12)
    prof = Engine(graph).run(std["stop_steps"][0])
    assert std["events_each"][0] == int(prof.events.sum()) > 0
    assert std["events_each"] != custom["events_each"]
    assert std["energy_per_sample_j"] != custom["energy_per_sample_j"]
    # fixed point in both forms: neither matches the float engine exactly (the standard form's
    # 8-bit mantissas of I - eta G cost more, mapping/vn_standard.py)
    assert 0 < custom["code_error_vs_float"] and 0 < std["code_error_vs_float"] < np.inf
    from atomspark.scenarios.compare.vn_standard_side import format_standard_form

    lines = format_standard_form(entry)
    assert "headline prices custom" in lines[0] and len(lines) == 5
    assert 0 <= custom["rel_error_at_stop"] < std["rel_error_at_stop"]


def test_rsgn_engine_agrees_with_torch_and_reference(rsgn_model, tmp_path):
    ds = hierarchical_sequences(n=8, length=12, dim=4, n_classes=3, seed=5)
    cutoffs = (0.0, 0.01, 0.3)
    report = compare(rsgn_model, ds, tmp_path, device="cpu", cutoffs=cutoffs)
    t, e = report["backends"]["torch"], report["backends"]["engine_float"]
    assert e["agreement_vs_torch"]["max_abs_error"] < RSGN_SCORE_TOL
    assert e["agreement_vs_torch"]["decision_agreement"] == 1.0
    params, config = rsgn.load_model(rsgn_model)
    expected = float(np.mean(rsgn.forward(params, config, ds.tokens).scores.argmax(1) == ds.labels))
    assert t["accuracy"] == e["accuracy"] == expected
    _check_costs(e)
    # fixed point: the integer nodes, each sample compiled and quantised on its own here
    q = report["backends"]["engine_fixed"]
    fixed_scores = []
    for tokens in ds.tokens:
        eng = Engine(quantize_rsgn_graph(compile_rsgn_tokens(params, config, tokens)))
        eng.run(config.n_steps + 1)
        st = eng.state[NODE_POPULATION]
        fixed_scores.append((st["alpha"][:, None] * st["h"]).sum(0) / 2**22)
    fixed_scores = np.stack(fixed_scores) @ params.cls_w + params.cls_b
    assert q["accuracy"] == float(np.mean(fixed_scores.argmax(1) == ds.labels))
    float_classes = rsgn.forward(params, config, ds.tokens).scores.argmax(1)
    assert q["agreement_vs_engine_float"]["decision_agreement"] == float(
        np.mean(fixed_scores.argmax(1) == float_classes)
    )
    assert q["agreement_vs_torch"]["max_abs_error"] < 0.1 * q["agreement_vs_torch"]["max_abs_score"]
    assert q["wraps"] == 0 and q["clips"] == 0
    _check_costs(q)
    assert report["gpu_fair"]["chip_backend"] == "engine_fixed"
    sweep = report["cutoff_sweep"]
    assert [r["cutoff"] for r in sweep] == list(cutoffs)
    assert all(0.0 <= r["mean_active_fraction"] <= 1.0 for r in sweep)
    assert sweep[-1]["mean_active_fraction"] <= sweep[0]["mean_active_fraction"]
    assert sweep[-1]["synops_per_sample"] <= sweep[0]["synops_per_sample"]
    assert (tmp_path / "cutoff_sweep.png").stat().st_size > 0


def test_rsgn_no_fixed_skips_the_integer_engine(rsgn_model, tmp_path):
    ds = hierarchical_sequences(n=2, length=12, dim=4, n_classes=3, seed=6)
    report = compare(rsgn_model, ds, tmp_path, device="cpu", fixed_point=False, cutoffs=None)
    assert set(report["backends"]) == {"torch", "engine_float"}
    assert report["gpu_fair"]["chip_backend"] == "engine_float"
    sides = report["gpu_fair"]["accuracy"]
    assert sides["chip"] == report["backends"]["engine_float"]["accuracy"]
    assert sides["gpu"] == report["backends"]["torch"]["accuracy"]


def test_rsgn_without_propagation_prices_no_propagation_step(tmp_path):
    cfg = {**RSGN_CFG, "epochs": 1, "model": {**RSGN_CFG["model"], "n_steps": 0}}
    model = train(cfg, tmp_path / "k0", progress=False).model_path
    ds = hierarchical_sequences(n=2, length=12, dim=4, n_classes=3, seed=6)
    report = compare(model, ds, tmp_path / "cmp", device="cpu", fixed_point=False, cutoffs=None)
    gpu = json.dumps(report["gpu_fair"])
    assert "K = 0 steps" in gpu and report["backends"]["engine_float"]["accuracy"] is not None
    # K = 0: one priced pass at most: the readout, or (readout on the host) one step
    assert report["gpu_fair"]["iterations_per_sample"] in (0.0, 1.0)


def test_data_not_matching_the_model_is_refused(vn_model, rsgn_model, tmp_path):
    with pytest.raises(AtomsparkError, match=r"expects \(samples, 6\)"):
        compare(vn_model, np.zeros((3, 5)), tmp_path, device="cpu")
    with pytest.raises(AtomsparkError, match=r"expects \(samples, length, 4\)"):
        compare(rsgn_model, np.zeros((3, 12, 7)), tmp_path, device="cpu")
    with pytest.raises(AtomsparkError, match="labels"):
        compare(rsgn_model, (np.zeros((3, 12, 4)), np.array([0, 1, 5])), tmp_path, device="cpu")


def test_missing_device_is_refused(vn_model, tmp_path):
    with pytest.raises(AtomsparkError, match="cuda:99"):
        compare(vn_model, np.zeros((2, 6)), tmp_path, device="cuda:99")
    with pytest.raises(AtomsparkError, match="not"):
        compare(vn_model, np.zeros((2, 6)), tmp_path, device="tpu")


def _tiny_chip(tmp_path) -> str:
    """Loihi 2 with one core of two compartments: no model of this file fits it."""
    data = json.loads(
        (Path(hardware_module.__file__).parent / "hardware_data/loihi2.json").read_text()
    )
    data["name"] = "tiny"
    for key, value in (("units_per_core", 2), ("cores_per_chip", 1), ("chips_per_board", 1)):
        data["limits"][key]["value"] = value
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_a_model_that_fits_no_chip_says_so_and_does_not_crash(vn_model, tmp_path, capsys):
    x = sparse_dictionary_data(n=2, dim=6, n_atoms=5, active=2, seed=7).signals
    np.savez(tmp_path / "data.npz", signals=x)
    rc = main(["compare", str(vn_model), "--data", str(tmp_path / "data.npz"), "--steps", "40",
               "--device", "cpu", "--hardware", _tiny_chip(tmp_path), "--out", str(tmp_path / "o")])  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0
    assert "does not fit the chip" in out and "no ratio" in out
    report = json.loads((tmp_path / "o" / "comparison.json").read_text())
    assert report["chip_vs_gpu"]["fits"] is False and report["chip_vs_gpu"]["batch_1"] is None
