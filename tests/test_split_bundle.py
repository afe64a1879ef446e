"""The split RSGN bundle (mapping/lava/split_bundle.py): `export --layout split` writes the
processes with their cores, connections, schedule and microcode; the report is computed from
the bundle read back and equals what the bundle recorded; a tampered split section is refused
in one line; `--layout` is refused where it has no meaning, leaving nothing behind."""

from __future__ import annotations

import json

import numpy as np
import pytest
from atomspark.mapping.lava.bundle import from_graph
from atomspark.mapping.lava.split_bundle import (
    export_split,
    is_split_bundle,
    load_split_bundle,
    report_lines,
    split_bundle_costs,
)
from atomspark.mapping.quantize import quantize_rsgn_graph
from atomspark.scenarios.cli.main import main
from atomspark.sim.core import AtomsparkError
from test_export_verify_guards import sub_resolution_rsgn, trained_file  # noqa: F401  (fixtures)
from test_rsgn_split_layout import small_graph


def _bundle(tmp_path, fixed=True):
    _, graph = small_graph("published", n=20, d=8)
    g = quantize_rsgn_graph(graph, split_w_h=True) if fixed else graph
    return export_split(from_graph(g), tmp_path / "b")


def test_split_bundle_records_cores_and_report_is_the_bundles(tmp_path):
    out = _bundle(tmp_path)
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["layout"] == "split" and is_split_bundle(out)
    split = meta["split"]
    kinds = {p["lava_process"] for p in split["processes"]}
    assert kinds == {"RSGNMessageSum", "RSGNTransform", "RSGNNorm"}
    assert all(isinstance(p["core"], int) for p in split["processes"])
    names = {c["name"] for c in split["connections"]}
    assert {"payload", "flag", "wh", "wh_lo", "hn2", "hn2_lo", "z", "pool", "pool_lo"} <= names
    assert split["schedule"]["chip_steps_per_model_step"] == 5
    assert split["microcode"]["norm"]["instructions_per_compartment"] > 100
    assert split["instruction_cost"]["estimate"] is True
    costs = split_bundle_costs(load_split_bundle(out))
    assert [c.to_dict() for c in costs["costs"]] == split["cores"]
    assert not costs["problems"] and min(costs["margins"].values()) >= 0
    lines = report_lines(costs)
    assert "split layout fits" in lines[0] and any("RSGNNorm" in ln for ln in lines)
    run = meta["hardware_run"]
    assert run["deployable_on_chip"] is False
    assert {r["lava_process"] for r in run["processes"] if not r["standard_lava_process"]} == kinds
    assert all(
        r["standard_lava_process"] for r in run["processes"] if r["lava_process"] == "Sparse"
    )


def test_a_tampered_split_section_is_refused(tmp_path):
    out = _bundle(tmp_path, fixed=False)
    meta = json.loads((out / "metadata.json").read_text())
    order = meta["split"]["node_order"]
    meta["split"]["node_order"] = [order[0], order[0], *order[2:]]
    (out / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(AtomsparkError, match="node_order is not a permutation"):
        load_split_bundle(out)
    del meta["split"]["blocks"]
    (out / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(AtomsparkError, match="split section incomplete"):
        load_split_bundle(out)


def test_export_layout_split_writes_and_reports_from_the_bundle(trained_file, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "out"
    argv = ["export", str(trained_file), "--to", "lava", "--fixed", "--split-w-h", "--report"]
    argv += ["--layout", "split", "--input", "builtin:2", "--out", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    # builtin:2 is widened to the task's 12 validation samples (at least 32 where it has them)
    assert "agreement measured over builtin:12" in text and "of 12 sample(s)" in text
    assert "split layout) written" in text and "microcode RSGNNorm" in text
    assert "[export] readout on chip: " in text and "[deploy] readout on chip: " in text
    dep = json.loads((out / "deployment.json").read_text())
    assert dep["layout"] == "split" and dep["fits"] and dep["readout_costs"]
    assert dep["cores"] == dep["cores_total"] >= len(dep["costs"])
    assert json.loads((out / "export.json").read_text())["readout"]["score_exp"] < 0
    assert dep["costs"] == json.loads((out / "metadata.json").read_text())["split"]["cores"]
    argv = ["export", str(trained_file), "--to", "nir", "--layout", "split"]
    assert main(argv + ["--out", str(tmp_path / "o2")]) == 2
    assert "--layout: only for --to lava" in capsys.readouterr().err
    assert not (tmp_path / "o2").exists()


def test_a_quantisation_that_loses_decisions_is_refused(sub_resolution_rsgn, tmp_path, capsys):  # noqa: F811
    model, tokens = sub_resolution_rsgn
    out = tmp_path / "out"
    argv = ["export", str(model), "--to", "lava", "--fixed", "--input", str(tokens)]
    assert main(argv + ["--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "of 20 sample(s) (below --min-agreement 95 %)" in err
    assert "--accept-disagreement exports anyway" in err and not out.exists()
    assert main(argv + ["--out", str(out), "--accept-disagreement"]) == 0
    agreement = json.loads((out / "export.json").read_text())["agreement"]
    assert not agreement["passed"] and agreement["agreement"] < 0.95


def test_a_stream_of_samples_runs_through_the_split_bundle(trained_file, tmp_path):  # noqa: F811
    """The exported bundle's readout reads a stream out: its scores are the engine-side integer
    counterpart's from the integer engine's final states, bit for bit, and its decisions are
    measured against the float engine's."""
    from atomspark.mapping.lava.split_stream import run_stream
    from atomspark.mapping.quantize import fixed_rsgn_runner
    from atomspark.mapping.split_readout import engine_scores
    from atomspark.networks import rsgn
    from atomspark.networks.sample_runner import rsgn_runner
    from atomspark.scenarios.runs.model_task import task_samples

    out = tmp_path / "out"
    argv = ["export", str(trained_file), "--to", "lava", "--fixed", "--split-w-h"]
    assert main(argv + ["--layout", "split", "--out", str(out), "--accept-disagreement"]) == 0
    params, config = rsgn.load_model(trained_file)
    tokens = task_samples(trained_file, 12)[0]
    sb = load_split_bundle(out)
    result = run_stream(sb, params, config, tokens)
    runner = fixed_rsgn_runner(rsgn_runner(params, config), split_w_h=True)
    for acc, (alpha, h) in zip(result.accumulator, runner.run(tokens, config.n_steps + 1).outputs):
        ints = np.round(alpha * 2.0**12).astype(np.int64), np.round(h * 2.0**10).astype(np.int64)
        assert np.array_equal(acc, engine_scores(sb.readout, *ints, sb.readout_groups())[0])
    agree = np.mean(result.scores.argmax(1) == result.float_scores.argmax(1))
    assert result.decision_agreement == agree and result.overflows == 0


@pytest.fixture
def coarse_readout_rsgn(tmp_path):
    """An RSGN whose classifier adds 1e4 x feature 0 to every class: the float decisions are
    unchanged (the same term in every score), and so are the integer engine's with the float
    classifier, but the readout on chip holds cls_w in two 8-bit parts under one exponent, so
    every other weight falls below its resolution and its decisions are lost: a planted
    disagreement only the readout on chip shows."""
    from atomspark.networks import rsgn

    cfg = rsgn.RSGNConfig(
        mode="published", n_nodes=24, dim=2, d_hidden=8, d_in=6, n_classes=3, n_steps=3
    )
    params = rsgn.init_params(cfg, seed=0)
    params.cls_w = params.cls_w + np.where(np.arange(cfg.d_hidden) == 0, 1e4, 0.0)[:, None]
    path = tmp_path / "coarse.npz"
    rsgn.save_model(path, params, cfg)
    np.save(tmp_path / "tokens.npy", np.random.default_rng(3).standard_normal((20, 10, 6)))
    return path, tmp_path / "tokens.npy"


def test_the_export_is_held_to_the_readout_on_chip(coarse_readout_rsgn, tmp_path, capsys):
    """A split export with a readout on chip is refused below --min-agreement by the decisions
    of that readout's integer scores over the samples (not the host readout's), leaving
    nothing written; the node layout (host readout) keeps them and is written."""
    from atomspark.mapping.lava.split_bundle import stream_agreement
    from atomspark.mapping.lava.split_stream import run_stream
    from atomspark.networks import rsgn

    model, tokens = coarse_readout_rsgn
    argv = ["export", str(model), "--to", "lava", "--fixed", "--split-w-h", "--input", str(tokens)]
    out = tmp_path / "out"
    assert main(argv + ["--layout", "split", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "readout on chip: its integer scores' decisions agree" in err
    assert "of 20 sample(s) (below --min-agreement 95 %)" in err and not out.exists()
    assert main(argv + ["--layout", "node", "--out", str(tmp_path / "node")]) == 0
    assert "decisions agree with float on 100.0 % of 20" in capsys.readouterr().out
    assert main(argv + ["--layout", "split", "--out", str(out), "--accept-disagreement"]) == 0
    result = json.loads((out / "export.json").read_text())
    chip = result["quantization"]["chip_readout"]
    assert result["quantization"]["decision_agreement"] == 1.0  # the host readout's
    assert not result["agreement"]["passed"] and result["agreement"]["agreement"] < 0.95
    assert chip["decision_agreement"] == result["agreement"]["agreement"] and chip["samples"] == 20
    # the bundle written holds that readout: its stream's decisions are the ones measured
    params, config = rsgn.load_model(model)
    stream = run_stream(load_split_bundle(out), params, config, np.load(tokens))
    assert stream.decisions.tolist() == chip["decisions"]
    assert stream.decisions.tolist() == stream.accumulator.argmax(1).tolist()
    refused = stream_agreement(stream, 0.95)
    assert not refused["passed"] and "the readout on chip" in refused["message"]
    assert stream_agreement(stream, 0.95, accept=True)["passed"]
