"""The command line end to end on tiny models: profile, export, errors, and the demo."""

import importlib.util
import json

import numpy as np
import pytest
from atomspark.mapping.hardware import DEFAULT_CHIP, load_hardware
from atomspark.networks import rsgn
from atomspark.networks.vn import VNModel
from atomspark.scenarios.cli.main import main
from atomspark.sim.core import AtomsparkError


@pytest.fixture
def vn_file(tmp_path):
    path = tmp_path / "vn.npz"
    VNModel.random(12, [(16, 4)], lam=0.2, seed=0).save(path)
    return path


@pytest.fixture
def rsgn_file(tmp_path):
    cfg = rsgn.RSGNConfig(
        mode="sparse",
        n_nodes=24,
        dim=2,
        d_hidden=8,
        d_in=6,
        n_classes=3,
        n_steps=3,
        k_nearest=4,
        cutoff=0.2,
        affinity_rank=4,
    )
    path = tmp_path / "rsgn.npz"
    rsgn.save_model(path, rsgn.init_params(cfg, seed=0), cfg)
    return path


@pytest.mark.parametrize("model", ["vn_file", "rsgn_file"])
def test_profile_writes_costs_and_plots(model, request, tmp_path, capsys):
    out = tmp_path / "prof"
    path = request.getfixturevalue(model)
    steps = ["--steps", "60"] if model == "vn_file" else []  # an RSGN runs its own K + 1 steps
    assert main(["profile", str(path), "--input", "builtin:3", "--out", str(out)] + steps) == 0
    stages = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("[profile] step ")]
    n = 4 if importlib.util.find_spec("torch") else 3  # progress: one line per long stage
    assert [ln.split(":")[0] for ln in stages] == [
        f"[profile] step {i}/{n}" for i in range(1, n + 1)
    ]
    costs = json.loads((out / "costs.json").read_text())
    assert costs["samples"] == 3 and costs["events_per_sample"] > 0
    chip = costs["costs"]["neuromorphic"]
    # the counted synaptic ops, priced (RSGN adds its nodes' internal W_h multiply-adds)
    counted = costs["synops_per_sample"] * load_hardware(DEFAULT_CHIP).energy.synop
    if model == "vn_file":
        assert chip["breakdown"]["synaptic_ops"] == pytest.approx(counted, rel=1e-12)
    else:
        assert chip["breakdown"]["synaptic_ops"] > counted
    for png in ("activity.png", "raster.png", "costs.png"):
        assert (out / png).stat().st_size > 1000
    nb = costs["neurobench"]  # NeuroBench's metrics of the same run
    assert 0 <= nb["activation_sparsity"] < 1 and nb["parameter_count"] > 0
    ops = nb["synaptic_operations"]
    assert ops["effective_acs"] + ops["effective_macs"] <= costs["synops_per_sample"] + 1e-9
    assert ops["dense"] >= ops["effective_acs"] + ops["effective_macs"]
    if importlib.util.find_spec("torch"):  # compare's headline and range on the same samples
        r = costs["chip_vs_gpu"]
        assert r["fits"] and r["chip"]["stop_rule"] in ("held-out budget", "fixed steps")
        assert r["batch_1"]["ratio_min"] <= r["batch_1"]["ratio"] <= r["batch_1"]["ratio_max"]
        assert (out / "chip_vs_gpu.png").stat().st_size > 1000
    else:
        assert costs["chip_vs_gpu"] is None  # no GPU figure, never the dense equivalent


@pytest.mark.torch
def test_builtin_inputs_come_from_the_models_stored_task(tmp_path, capsys):
    pytest.importorskip("torch")
    from atomspark.networks.model_io import read_task
    from atomspark.networks.torch_path.config import validate_config
    from atomspark.networks.torch_path.training import build_data
    from atomspark.scenarios.runs.engine import load_model
    from atomspark.scenarios.runs.profile import read_inputs

    task = validate_config({"task": "vn-dictionary", "data": {"n": 40, "dim": 12, "n_atoms": 6}})
    path = tmp_path / "vn.npz"
    VNModel.random(12, [(16, 4)], lam=0.2, seed=0).save(path, task=task)
    assert read_task(path) == json.loads(json.dumps(task))
    x = read_inputs("builtin:3", load_model(path), model_path=path)
    assert np.array_equal(x, build_data(task)[2][:3])  # the task's validation split
    assert "model's own task (vn-dictionary" in capsys.readouterr().out
    with pytest.raises(AtomsparkError, match="validation samples"):
        read_inputs("builtin:500", load_model(path), model_path=path)


def test_profile_reads_npy_inputs_and_rejects_bad_ones(vn_file, tmp_path, capsys):
    good = tmp_path / "x.npy"
    np.save(good, np.ones((2, 12)))
    assert (
        main(
            [
                "profile",
                str(vn_file),
                "--input",
                str(good),
                "--steps",
                "20",
                "--out",
                str(tmp_path / "p"),
            ]
        )
        == 0
    )
    bad = tmp_path / "bad.npy"
    np.save(bad, np.ones((2, 5)))
    assert main(["profile", str(vn_file), "--input", str(bad), "--out", str(tmp_path / "q")]) == 2
    assert "takes (samples, d) with d = 12" in capsys.readouterr().err


def test_export_nir_and_networkx(vn_file, tmp_path):
    assert main(["export", str(vn_file), "--to", "nir", "--out", str(tmp_path / "n")]) == 0
    meta = json.loads((tmp_path / "n" / "export.json").read_text())
    assert any("no NIR primitive" in u for u in meta["unsupported"])
    assert main(["export", str(vn_file), "--to", "networkx", "--out", str(tmp_path / "g")]) == 0
    import networkx as nx

    g = nx.read_graphml(tmp_path / "g" / "network.graphml")
    assert g.number_of_nodes() == 16


def test_export_errors_are_named(vn_file, tmp_path, capsys):
    assert (
        main(["export", str(vn_file), "--to", "nir", "--verify", "--out", str(tmp_path / "y")]) == 2
    )
    assert "only the Lava export is verified" in capsys.readouterr().err
    assert main(["profile", str(tmp_path / "missing.npz")]) == 2
    assert "missing.npz: does not exist" in capsys.readouterr().err


def test_export_rsgn_fixed_point_bundle_equals_the_integer_engine(rsgn_file, tmp_path, capsys):
    """--fixed on an RSGN: the quantisation report in one line, and the bundle's NumPy reference
    run equals the integer engine running the first sample, bit for bit."""
    from atomspark.mapping.lava.bundle import reference_run
    from atomspark.mapping.lava.export import load_bundle
    from atomspark.mapping.lava.net import alpha_record
    from atomspark.mapping.quantize import fixed_rsgn_runner
    from atomspark.networks.rsgn_compile import NODE_POPULATION
    from atomspark.networks.sample_runner import rsgn_runner

    tokens = np.random.default_rng(3).standard_normal((3, 10, 6))
    np.save(tmp_path / "tokens.npy", tokens)
    out = tmp_path / "bundle"
    argv = ["export", str(rsgn_file), "--to", "lava", "--fixed", "--input"]
    assert main(argv + [str(tmp_path / "tokens.npy"), "--out", str(out)]) == 0
    line = next(s for s in capsys.readouterr().out.splitlines() if "quantised" in s)
    assert "on 3 sample(s) x 4 steps: same class" in line and "wraps 0, clips 0" in line
    q = json.loads((out / "export.json").read_text())["quantization"]
    assert q["samples"] == 3 and q["steps"] == 4 and 0.0 <= q["decision_agreement"] <= 1.0
    assert q["alpha_max_abs_error"] < 0.05 and q["h_max_abs_error"] < 0.1 * q["h_max_abs"]
    assert q["events_fixed"] > 0
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["arithmetic"] == "fixed" and meta["select_tag"] == "fixed_pt"
    assert meta["populations"][0]["lava_process"] == "RSGNFixedNodes"
    params, cfg = rsgn.load_model(rsgn_file)
    runner = fixed_rsgn_runner(rsgn_runner(params, cfg))
    run = runner.run(tokens[:1], 6, record=((NODE_POPULATION, "alpha"),))
    engine_alpha = run.traces[0][(NODE_POPULATION, "alpha")]
    ref = reference_run(load_bundle(out), 6)[alpha_record(NODE_POPULATION)]
    assert ref.dtype == np.int64 and np.any(ref[-1] > 0)
    assert np.array_equal(ref, engine_alpha)


@pytest.mark.lava
def test_export_lava_rsgn_fixed_point_verifies_bit_exact(rsgn_file, tmp_path):
    pytest.importorskip("lava")
    out = tmp_path / "bundle"
    argv = ["export", str(rsgn_file), "--to", "lava", "--fixed", "--verify", "--steps", "5"]
    assert main(argv + ["--out", str(out)]) == 0
    verify = json.loads((out / "export.json").read_text())["verify"]
    assert verify["passed"] and verify["tolerance"] == 0.0
    assert max(verify["lava_vs_engine"].values()) == 0.0
    assert max(verify["lava_vs_reference"].values()) == 0.0


@pytest.mark.skipif(importlib.util.find_spec("lava") is not None, reason="Lava is installed")
def test_verify_without_lava_says_where_to_run(vn_file, tmp_path, capsys):
    assert (
        main(["export", str(vn_file), "--to", "lava", "--verify", "--out", str(tmp_path / "z")])
        == 2
    )
    err = capsys.readouterr().err
    assert ".venv-lava/bin/atomspark" in err and "tools/setup.sh" in err
    assert not (tmp_path / "z").exists()  # refused before the bundle was written


@pytest.mark.lava
def test_export_lava_fixed_point_verifies_bit_exact(vn_file, tmp_path):
    pytest.importorskip("lava")
    out = tmp_path / "bundle"
    assert (
        main(
            [
                "export",
                str(vn_file),
                "--to",
                "lava",
                "--fixed",
                "--verify",
                "--steps",
                "40",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    meta = json.loads((out / "export.json").read_text())
    assert meta["verify"]["passed"] and max(meta["verify"]["lava_vs_engine"].values()) == 0


@pytest.mark.slow
def test_demo_runs_end_to_end(tmp_path):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["vn"]["engine_vs_reference_max_rel_error"] < 0.1
    assert summary["rsgn"]["sparse"]["engine_vs_reference_max_score_error"] < 1e-9
    assert summary["rsgn"]["published"]["active_fraction_per_step"][-1] == 1.0
    for png in ("vn_activity.png", "costs.png", "chip_vs_gpu.png", "tornado.png"):
        assert (out / png).is_file()
    for name, r in summary["chip_vs_gpu"].items():
        assert r["fits"], name  # every demo workload has a layout that fits Loihi 2
        assert r["ratio_min"] <= r["ratio"] <= r["ratio_max"]
        assert r["chip"]["static_scope"] == "device" and r["chip"]["energy_uJ"] > 0


TINY_RSGN = """
task = "rsgn-sequence"
epochs = 1
batch_size = 16
checkpoint_every = 2
dtype = "float64"
[data]
n = 48
length = 8
dim = 4
n_classes = 2
[model]
n_nodes = 12
d_hidden = 4
n_steps = 2
affinity_rank = 2
"""


@pytest.mark.torch
def test_train_resume_and_compare(tmp_path, capsys):
    pytest.importorskip("torch")
    config = tmp_path / "tiny.toml"
    config.write_text(TINY_RSGN)
    out = tmp_path / "run"
    assert main(["train", str(config), "--out", str(out)]) == 0
    assert main(["train", str(config), "--out", str(out), "--resume"]) == 0
    assert (out / "model.npz").is_file() and (out / "metrics.png").is_file()
    cmp = tmp_path / "cmp"
    assert (
        main(
            [
                "compare",
                str(out / "model.npz"),
                "--samples",
                "4",
                "--out",
                str(cmp),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "engine_float" in text and "cutoff 0.3" in text
    assert "samples of the model's own task (rsgn-sequence" in text  # stored by train
    assert "GPU/chip energy" in text and "assumptions:" in text
    report = json.loads((cmp / "comparison.json").read_text())
    rows = report["gpu_fair"]["rows"]
    assert [(r["batch"] == 1, r["launches"]) for r in rows] == [
        (True, "graph"), (False, "graph"), (True, "per-iteration"), (False, "per-iteration"),
        (True, "per-op"), (False, "per-op"),
    ]  # fmt: skip
    ratios = report["chip_vs_gpu"]
    assert ratios["fits"] and ratios["ratio_min"] <= ratios["ratio"] <= ratios["ratio_max"]
    assert ratios["chip"]["static_scope"] == "device" == ratios["gpu"][0]["static_scope"]
    assert (cmp / "tornado.png").stat().st_size > 0
    assert (cmp / "chip_vs_gpu.png").stat().st_size > 0
    assert report["backends"]["engine_float"]["agreement_vs_torch"]["decision_agreement"] == 1.0


def test_unknown_builtin_config_is_named(capsys):
    assert main(["train", "no-such-task"]) == 2
    err = capsys.readouterr().err
    assert "no such file and not a built-in" in err
    assert all(name in err for name in ("rsgn-sequence", "rsgn-sparse", "vn-dictionary"))


@pytest.mark.lava
def test_export_lava_rsgn_float_verifies(rsgn_file, tmp_path):
    pytest.importorskip("lava")
    out = tmp_path / "rsgn_bundle"
    assert (
        main(
            [
                "export",
                str(rsgn_file),
                "--to",
                "lava",
                "--verify",
                "--steps",
                "4",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    meta = json.loads((out / "export.json").read_text())
    assert meta["verify"]["passed"]
    assert max(meta["verify"]["lava_vs_engine"].values()) <= meta["verify"]["tolerance"]
