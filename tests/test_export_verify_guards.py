"""`export --verify` refuses what the chip would: weight exponents outside Loihi's [-8, 7],
projections quantised to nothing, integer models that do not keep the float model's decisions;
and it works for trained models where torch is missing (the Lava environment)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from atomspark.mapping.lava.bundle import from_graph
from atomspark.mapping.lava.export import export_lava, load_bundle
from atomspark.mapping.quantize import quantize_lif_graph
from atomspark.networks import rsgn
from atomspark.scenarios.cli.main import main
from atomspark.sim.core import AtomsparkError
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFFixedParams, LIFParams


def _fixed_lif_graph(weight_exp: int, weights=None) -> Graph:
    pops = [Population(n, 4, LIFFixedParams(du=100, dv=100, vth=10)) for n in ("a", "b")]
    w = np.full((4, 4), 6) if weights is None else weights
    return Graph(pops, [Projection("a", "b", w, weight_exp=weight_exp)])


@pytest.mark.parametrize("exp", [-9, 8, 10])
def test_weight_exponent_outside_loihi_range_is_refused(exp):
    with pytest.raises(AtomsparkError) as err:
        from_graph(_fixed_lif_graph(exp))
    msg = str(err.value)
    assert "\n" not in msg and "a->b weight_exp" in msg and "[-8, 7]" in msg


@pytest.mark.parametrize("exp", [-8, 0, 7])
def test_weight_exponent_inside_loihi_range_exports(exp):
    assert from_graph(_fixed_lif_graph(exp)).connections[0].weight_exp == exp


def test_a_bundle_with_an_edited_weight_exponent_is_refused(tmp_path):
    out = export_lava(_fixed_lif_graph(3), tmp_path / "b")
    meta = json.loads((out / "metadata.json").read_text())
    meta["projections"][0]["weight_exp"] = 8
    (out / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(AtomsparkError, match=r"weight_exp: 8 is outside"):
        load_bundle(out)


def test_all_zero_mantissas_are_refused():
    with pytest.raises(AtomsparkError, match="every weight mantissa is 0"):
        from_graph(_fixed_lif_graph(0, np.zeros((4, 4), np.int64)))


def test_a_projection_that_quantises_to_nothing_is_refused():
    """quantize_lif_graph scales to the largest weight; a projection 1e6 times weaker rounds to
    all-zero mantissas even at the smallest exponent, -8."""
    pops = [Population(n, 3, LIFParams(du=0.1, dv=0.1, vth=1.0)) for n in ("a", "b", "c")]
    strong = Projection("a", "b", np.full((3, 3), 0.5))
    weak = Projection("b", "c", sp.csr_matrix(np.full((3, 3), 5e-7)))
    with pytest.raises(AtomsparkError, match=r"projection b->c: every weight quantises to 0"):
        quantize_lif_graph(Graph(pops, [strong, weak]))
    fixed = quantize_lif_graph(Graph(pops, [strong, Projection("b", "c", np.full((3, 3), 0.05))]))
    assert np.any(fixed.projections[1].data)


@pytest.fixture
def sub_resolution_rsgn(tmp_path):
    """An RSGN whose states lie below the integer unit's Q.10 resolution (LayerNorm gain 1e-4,
    which is 0 in Q.12): the integer model scores every sample 0, the float one does not."""
    cfg = rsgn.RSGNConfig(
        mode="published", n_nodes=24, dim=2, d_hidden=8, d_in=6, n_classes=3, n_steps=3
    )
    params = rsgn.init_params(cfg, seed=0)
    params.ln_gain = np.full(cfg.d_hidden, 1e-4)
    params.cls_b = np.zeros_like(params.cls_b)
    path = tmp_path / "rsgn.npz"
    rsgn.save_model(path, params, cfg)
    np.save(tmp_path / "tokens.npy", np.random.default_rng(3).standard_normal((20, 10, 6)))
    return path, tmp_path / "tokens.npy"


@pytest.mark.lava
def test_verify_fails_when_fixed_point_decisions_diverge(sub_resolution_rsgn, tmp_path, capsys):
    """--verify needs Lava (without it the command is refused before the check, see
    test_cli); with it, the agreement check runs first and fails in one line."""
    pytest.importorskip("lava")
    model, tokens = sub_resolution_rsgn
    out = tmp_path / "out"
    argv = ["export", str(model), "--to", "lava", "--fixed", "--verify", "--input", str(tokens)]
    assert main(argv + ["--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "decisions agree with float on" in err
    assert "of 20 sample(s) (below --min-agreement 95 %)" in err
    verify = json.loads((out / "export.json").read_text())["verify"]
    assert not verify["passed"] and verify["agreement"] < 0.95 and verify["min_agreement"] == 0.95
    # the threshold is the user's: at 0 the agreement check passes (Lava then runs, if present)
    rc = main(argv + ["--out", str(tmp_path / "o2"), "--min-agreement", "0"])
    text = capsys.readouterr()
    assert "(at least --min-agreement 0 %)" in text.out
    assert rc == 0 or ".venv-lava/bin/atomspark" in text.err
    assert main(argv + ["--out", str(tmp_path / "o3"), "--min-agreement", "1.5"]) == 2
    assert "--min-agreement: must be a fraction in [0, 1]" in capsys.readouterr().err


TINY_TASK = {
    "task": "rsgn-sequence",
    "seed": 0,
    "data": {"n": 60, "length": 8, "dim": 4, "n_classes": 2},
    "model": {"n_nodes": 12, "d_hidden": 4, "n_steps": 2, "affinity_rank": 2},
}


@pytest.fixture
def trained_file(tmp_path):
    """A model file as `train` writes it: the parameters with the task config they came from."""
    from atomspark.networks.torch_path.config import model_config, validate_config

    task = validate_config(TINY_TASK)
    cfg = model_config(task, d_in=4, n_classes=2)
    path = tmp_path / "model.npz"
    rsgn.save_model(path, rsgn.init_params(cfg, seed=0), cfg, task=task)
    return path


def test_a_trained_models_inputs_are_built_without_torch(trained_file):
    """The Lava environment has no torch: the model's own task data must not need it."""
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from atomspark.scenarios.runs.model_task import task_samples\n"
        f"x, y, what = task_samples({str(trained_file)!r}, 5)\n"
        "print(x.shape, y.shape)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "(5, 8, 4) (5,)"


def test_export_split_w_h_writes_the_split_unit(trained_file, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["export", str(trained_file), "--to", "lava", "--fixed", "--split-w-h"]
    argv += ["--accept-disagreement"]  # an untrained model: too few decisions kept
    assert main(argv + ["--input", "builtin:4", "--out", str(out)]) == 0
    assert "W_h in two 8-bit parts" in capsys.readouterr().out
    pop = json.loads((out / "metadata.json").read_text())["populations"][0]
    assert pop["scalars"]["unit_model"] == "rsgn_fixed_split" and "w_h_lo_mant" in pop["arrays"]
    argv = ["export", str(trained_file), "--to", "lava", "--split-w-h"]
    assert main(argv + ["--out", str(tmp_path / "o2")]) == 2
    assert "--split-w-h: only with --fixed" in capsys.readouterr().err


def test_export_per_target_w_gives_each_node_its_shift(trained_file, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["export", str(trained_file), "--to", "lava", "--fixed", "--split-w-h"]
    argv += ["--accept-disagreement"]  # an untrained model: too few decisions kept
    assert main(argv + ["--per-target-w", "--input", "builtin:4", "--out", str(out)]) == 0
    assert "W's exponent per target node" in capsys.readouterr().out
    pop = json.loads((out / "metadata.json").read_text())["populations"][0]
    assert pop["scalars"]["unit_model"] == "rsgn_fixed_split" and "m_shift" in pop["arrays"]
    argv = ["export", str(trained_file), "--to", "lava", "--per-target-w"]
    assert main(argv + ["--out", str(tmp_path / "o2")]) == 2
    assert "--per-target-w: only with --fixed" in capsys.readouterr().err
    assert not (tmp_path / "o2").exists()  # a refused command leaves nothing


@pytest.mark.lava
@pytest.mark.parametrize(
    "split",
    [[], ["--split-w-h"], ["--split-w-h", "--per-target-w"]],
    ids=["rsgn_fixed", "rsgn_fixed_split", "split-per-target-w"],
)
def test_lava_environment_verifies_a_trained_model(trained_file, tmp_path, split):
    pytest.importorskip("lava")
    out = tmp_path / "out"
    argv = ["export", str(trained_file), "--to", "lava", "--fixed", "--verify", "--steps", "4"]
    assert main(argv + split + ["--input", "builtin:12", "--out", str(out)]) == 0
    verify = json.loads((out / "export.json").read_text())["verify"]
    assert verify["passed"] and verify["agreement"] >= 0.95
    assert max(verify["lava_vs_engine"].values()) == 0.0
