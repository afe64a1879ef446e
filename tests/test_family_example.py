"""docs/architecture.md's worked example of a model family: tests/family_example declares a
mean-token readout in two files (family.py: loading, the event engine, training; sides.py: its
comparison) and, without any change elsewhere, it trains, profiles, exports and compares."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from atomspark.networks.families import family_of_config  # noqa: E402
from atomspark.networks.torch_path.config import load_config  # noqa: E402
from atomspark.networks.torch_path.training import train  # noqa: E402
from atomspark.scenarios.cli.main import main  # noqa: E402
from atomspark.scenarios.configs import builtin_config  # noqa: E402
from atomspark.scenarios.runs.engine import load_model, run_loaded  # noqa: E402
from family_example import family, sides  # noqa: E402,F401 (registers the family and its side)


def _config() -> dict:
    cfg = load_config(builtin_config("rsgn-sequence"))
    cfg["model"]["kind"] = family.KIND
    cfg["data"].update(n=40, dim=6)
    cfg.update(epochs=1, batch_size=8, device="cpu", dtype="float64")
    return cfg


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("train")
    return train(_config(), out, progress=False)


def test_the_config_names_the_new_family():
    assert family_of_config(_config()) is family.READOUT


def test_it_trains_one_epoch_and_writes_a_model_the_engine_runs(trained):
    assert trained.steps == 4  # 32 training sequences, batch 8
    assert 0.0 <= trained.final_metrics["accuracy"] <= 1.0
    loaded = load_model(trained.model_path)
    assert loaded.kind == family.KIND
    tokens = np.random.default_rng(0).standard_normal((3, 16, 6))
    run = run_loaded(loaded, tokens)
    np.testing.assert_allclose(run.outputs, loaded.model.scores(tokens), rtol=1e-12, atol=1e-12)
    assert run.profile.steps == 3 * family.STEPS and run.profile.events.sum() > 0


def test_it_profiles_exports_and_compares_through_the_cli(trained, tmp_path, capsys):
    model = str(trained.model_path)
    assert main(["profile", model, "--input", "builtin:4", "--out", str(tmp_path / "p")]) == 0
    costs = json.loads((tmp_path / "p" / "costs.json").read_text())
    assert costs["kind"] == family.KIND and costs["events_per_sample"] > 0
    assert main(["export", model, "--to", "networkx", "--out", str(tmp_path / "e")]) == 0
    assert (tmp_path / "e" / "network.graphml").stat().st_size > 0
    argv = ["compare", model, "--samples", "4", "--device", "cpu", "--out", str(tmp_path / "c")]
    assert main(argv) == 0
    report = json.loads((tmp_path / "c" / "comparison.json").read_text())
    engine = report["backends"]["engine_float"]
    assert engine["agreement_vs_torch"]["decision_agreement"] == 1.0
    assert engine["agreement_vs_torch"]["max_abs_error"] < 1e-9
    assert report["backends"]["engine_fixed"]["supported"] is False
    assert report["chip_vs_gpu"]["chip_backend"] == "engine_float"
    assert "[compare] readout_example model, 4 samples" in capsys.readouterr().out
