"""The split RSGN on Lava's Loihi2SimCfg (mapping/lava/split_run.py): one Lava Process per core
and kind, a Lava Sparse for every pair of cores a channel joins, and the states at each model
step equal the engine's, bit for bit in fixed point (two-part W_h, W's exponent per target node)
and to tolerance in float; on a small graph core by core in both modes and on the released
published and sparse models (its kinds merged into one Process each, the same arithmetic and
connections; the sparse one on the block search's cores, 72 at zero axon margin)."""

from __future__ import annotations

import numpy as np
import pytest
from atomspark.mapping.lava.bundle import from_graph
from atomspark.mapping.lava.rsgn_split import reference_run, split_model
from atomspark.mapping.quantize import quantize_rsgn_graph
from atomspark.mapping.split_cores import SplitBlocks, assign_cores, node_order
from atomspark.networks import rsgn
from test_export_verify_guards import trained_file  # noqa: F401  (fixture)
from test_rsgn_split_layout import (
    FLOAT_TOL,
    RELEASED,
    engine_states,
    released_graph,
    small_graph,
)
from test_split_bundle import coarse_readout_rsgn  # noqa: F401  (fixture)

pytestmark = pytest.mark.lava
TWO_PART = {"split_w_h": True, "per_target_w": True}


def _run(graph, steps: int, blocks: SplitBlocks, merged: bool, classifier=None, group: int = 1):
    """The split run on Lava (with the readout of `classifier`, `group` node cores a partial)."""
    pytest.importorskip("lava")
    from atomspark.mapping.lava.split_run import run_split_lava

    model = split_model(from_graph(graph))
    cores = assign_cores(model.n, model.d, blocks, node_order(model.w_t, model.pool))
    readout = None
    if classifier is not None:
        readout, _ = _readout(classifier, model, cores, model.arithmetic == "fixed", group)
    return run_split_lava(model, cores, steps, merged=merged, readout=readout), model, cores


@pytest.mark.parametrize(("mode", "fixed"), [("published", True), ("sparse", False)])
def test_split_on_lava_core_by_core_equals_engine(mode, fixed):
    cfg, graph = small_graph(mode, n=12, d=4)
    g = quantize_rsgn_graph(graph, **TWO_PART) if fixed else graph
    steps = cfg.n_steps + 1
    lava, model, cores = _run(g, steps, SplitBlocks(6, 2, 6), merged=False)
    assert len({c["core"] for c in cores}) == 6  # 2 node cores, 4 message-sum cores
    alpha, h, _ = engine_states(g, steps)
    ref = reference_run(model, steps)
    if fixed:
        assert np.array_equal(lava.alpha, alpha) and np.array_equal(lava.h, h)
        assert np.array_equal(lava.x, ref.x)
    else:
        np.testing.assert_allclose(lava.alpha, alpha, rtol=0, atol=FLOAT_TOL)
        np.testing.assert_allclose(lava.h, h, rtol=0, atol=FLOAT_TOL)
        np.testing.assert_allclose(lava.x, ref.x, rtol=0, atol=FLOAT_TOL)
    assert np.any(alpha[-1] > 0)


def test_released_published_model_split_on_lava_is_bit_exact():
    """States and the readout's class scores (5 node cores a partial) bit for bit."""
    from atomspark.mapping.split_readout import engine_scores

    path = "released/hierarchical-rsgn-seed42.npz"
    graph, steps = released_graph(path)
    g = quantize_rsgn_graph(graph, **TWO_PART)
    lava, model, cores = _run(g, steps, SplitBlocks(6, 3, 256), True, classifier=path, group=5)
    alpha, h, _ = engine_states(g, steps)
    assert np.array_equal(lava.alpha, alpha) and np.array_equal(lava.h, h)
    readout, groups = _readout(path, model, cores, True, 5)
    engine, over = engine_scores(readout, alpha[-1], h[-1], groups)
    assert over == 0 and len(groups) == 9 and np.array_equal(lava.scores, engine)


def test_export_layout_split_verifies_on_lava_and_its_entry_point_runs(trained_file, tmp_path):  # noqa: F811
    import json
    import subprocess
    import sys

    from atomspark.scenarios.cli.main import main

    pytest.importorskip("lava")
    out = tmp_path / "out"
    argv = ["export", str(trained_file), "--to", "lava", "--fixed", "--split-w-h", "--verify"]
    argv += ["--per-target-w", "--layout", "split", "--steps", "3", "--input", "builtin:12"]
    assert main(argv + ["--out", str(out)]) == 0
    verify = json.loads((out / "export.json").read_text())["verify"]
    assert verify["passed"] and max(verify["lava_vs_engine"].values()) == 0.0
    assert verify["processes"] == "one per core and kind"
    run = subprocess.run([sys.executable, str(out / "run_bundle.py"), "--steps", "3", "--verify"],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert "'alpha': 0.0, 'h': 0.0, 'payloads': 0.0" in run.stdout
    # a stream of samples in one Lava run: host encoding, the split network and its readout
    from atomspark.scenarios.runs.model_task import task_samples

    np.save(tmp_path / "tokens.npy", task_samples(trained_file, 3)[0])
    argv = ["--steps", "3", "--inputs", str(tmp_path / "tokens.npy"), "--model", str(trained_file)]
    run = subprocess.run([sys.executable, str(out / "run_bundle.py"), *argv, "--verify"],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert "stream of 3 samples on Lava in 1 run(s), read out by the bundle's readout" in run.stdout
    assert "per-sample reference runs: max |score error| 0 " in run.stdout


def test_run_bundle_verify_holds_a_stream_to_the_readout_on_chip(coarse_readout_rsgn, tmp_path):  # noqa: F811
    """run_bundle.py --verify of a stream fails below --min-agreement by the decisions of the
    readout on chip (a planted disagreement: coarse cls_w), in one line; --accept-disagreement
    passes, saying so; a bad --min-agreement is one line naming it."""
    import subprocess
    import sys

    from atomspark.scenarios.cli.main import main

    pytest.importorskip("lava")
    model, tokens = coarse_readout_rsgn
    out = tmp_path / "out"
    argv = ["export", str(model), "--to", "lava", "--fixed", "--split-w-h", "--layout", "split"]
    assert main(argv + ["--input", str(tokens), "--out", str(out), "--accept-disagreement"]) == 0
    cmd = [sys.executable, str(out / "run_bundle.py"), "--steps", "4", "--inputs", str(tokens),
           "--model", str(model), "--verify"]  # fmt: skip
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stderr[-2000:]
    assert "max |score error| 0 " in run.stdout
    assert "decisions of the readout on chip agree with the float engine on" in run.stdout
    assert "(below --min-agreement 95 %); FAIL" in run.stdout
    run = subprocess.run(cmd + ["--accept-disagreement"], capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert run.returncode == 0 and "accepted (--accept-disagreement)" in run.stdout
    run = subprocess.run(cmd + ["--min-agreement", "2"], capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert run.returncode == 2 and run.stderr.strip().count("\n") == 0
    assert "--min-agreement: must be a fraction in [0, 1]" in run.stderr


@pytest.mark.parametrize("fixed", [True, False])
def test_released_sparse_model_split_on_lava_on_the_searched_cores(fixed):
    """The released sparse model on the block search's own cores (the bundle's): bit-exact in
    fixed point, to tolerance in float."""
    from atomspark.mapping.hardware import load_hardware
    from atomspark.mapping.split_cores import search_blocks
    from atomspark.mapping.split_readout import engine_scores, node_cores_per_group
    from test_split_readout import close_scores

    pytest.importorskip("lava")
    from atomspark.mapping.lava.split_run import run_split_lava

    path = "sparse-threshold/target0.02-sigma0.05-k0-e50-seed43.npz"
    graph, steps = released_graph(path)
    g = quantize_rsgn_graph(graph, **TWO_PART) if fixed else graph
    model = split_model(from_graph(g))
    search = search_blocks(model, load_hardware("loihi2"))
    assert search.fits
    cores = assign_cores(model.n, model.d, search.blocks, search.order)
    group = node_cores_per_group(search.blocks.nodes_per_core, model.d, 4096)
    readout, groups = _readout(path, model, cores, fixed, group)
    lava = run_split_lava(model, cores, steps, merged=True, readout=readout)
    alpha, h, _ = engine_states(g, steps)
    engine, over = engine_scores(readout, alpha[-1], h[-1], groups)
    assert over == 0
    assert np.any(alpha[-1] > 0) and np.any(alpha[-1] == 0)  # sparse: some nodes silent
    if fixed:
        assert np.array_equal(lava.alpha, alpha) and np.array_equal(lava.h, h)
        assert np.array_equal(lava.scores, engine)
    else:
        np.testing.assert_allclose(lava.alpha, alpha, rtol=0, atol=FLOAT_TOL)
        np.testing.assert_allclose(lava.h, h, rtol=0, atol=FLOAT_TOL)
        close_scores(lava.scores, engine)


def _readout(path_or_params, model, cores, fixed: bool, group: int):
    from dataclasses import replace

    from atomspark.mapping.split_readout import quantize_readout, readout_groups

    params = path_or_params
    if isinstance(params, str):
        params = rsgn.load_model(RELEASED / params)[0]
    nb = next(c["index"].size for c in cores if c["kind"] == "norm")  # nodes per node core
    readout = quantize_readout(params, fixed, model.n, group * nb)
    readout = replace(readout, node_cores_per_group=group)
    return readout, readout_groups(cores, model.d, group)


@pytest.mark.parametrize("fixed", [True, False])
def test_readout_on_lava_core_by_core_equals_its_reference(fixed):
    """The readout's standard processes (GradedVec partials, RingBuffer accumulator and bias) on
    Lava give the reference's class scores: bit for bit in fixed point, to tolerance in float."""
    from atomspark.mapping.lava.rsgn_split import with_readout
    from atomspark.mapping.split_readout import engine_scores, readout_reference
    from test_split_readout import _graph, close_scores, small_model

    pytest.importorskip("lava")
    from atomspark.mapping.lava.split_run import run_split_lava

    params, cfg, tokens = small_model()
    g = _graph(params, cfg, tokens, fixed)
    steps = cfg.n_steps + 1
    model = split_model(from_graph(g))
    cores = assign_cores(
        model.n, model.d, SplitBlocks(10, 4, 10), node_order(model.w_t, model.pool)
    )
    readout, groups = _readout(params, model, cores, fixed, group=1)
    assert len(groups) == 2  # two node cores, a partial each
    lava = run_split_lava(model, cores, steps, merged=False, readout=readout)
    ref, over = readout_reference(
        readout, reference_run(with_readout(model, readout.shift, steps), steps).r, groups
    )
    alpha, h, _ = engine_states(g, steps)
    engine, _ = engine_scores(readout, alpha[-1], h[-1], groups)
    assert over == 0 and lava.scores.shape == (cfg.n_classes,)
    if fixed:
        assert np.array_equal(lava.scores, ref) and np.array_equal(ref, engine)
        assert np.array_equal(lava.alpha, alpha) and np.array_equal(lava.h, h)
    else:
        close_scores(lava.scores, ref)
        close_scores(ref, engine)


@pytest.mark.parametrize("fixed", [True, False])
def test_a_stream_runs_in_one_lava_run_and_equals_the_per_sample_runs(fixed, tmp_path):
    """Samples streamed in by RingBuffer sources, each loaded in the programs' reset phase, read
    out by the bundle's readout: one Lava run, core by core, gives the per-sample reference runs'
    scores (bit for bit in fixed point)."""
    from atomspark.mapping.lava.split_bundle import export_split, load_split_bundle
    from atomspark.mapping.lava.split_stream import run_stream
    from test_split_readout import _graph, close_scores, small_model

    pytest.importorskip("lava")
    params, cfg, tokens = small_model(samples=3)
    out = export_split(from_graph(_graph(params, cfg, tokens, fixed)), tmp_path / "b",
                       classifier=params)  # fmt: skip
    sb = load_split_bundle(out)
    lava = run_stream(sb, params, cfg, tokens, lava=True)
    ref = run_stream(sb, params, cfg, tokens)
    assert lava.lava_runs == 1 and ref.lava_runs == 0 and lava.accumulator.shape == (3, 3)
    if fixed:
        assert np.array_equal(lava.accumulator, ref.accumulator)
    else:
        close_scores(lava.accumulator, ref.accumulator)
    assert len(set(ref.scores.argmax(1).tolist())) >= 1 and np.any(ref.accumulator != 0)


def test_released_published_stream_in_one_lava_run(tmp_path):
    """The released published model: a stream of 3 samples in one Lava run (kinds merged),
    scores bit for bit those of the per-sample reference runs."""
    from atomspark.mapping.lava.split_bundle import export_split, load_split_bundle
    from atomspark.mapping.lava.split_stream import run_stream
    from atomspark.scenarios.runs.model_task import task_samples

    pytest.importorskip("lava")
    path = "released/hierarchical-rsgn-seed42.npz"
    graph, _ = released_graph(path)
    params, config = rsgn.load_model(RELEASED / path)
    out = export_split(from_graph(quantize_rsgn_graph(graph, **TWO_PART)), tmp_path / "b",
                       classifier=params)  # fmt: skip
    sb = load_split_bundle(out)
    tokens = task_samples(RELEASED / path, 3)[0]
    lava = run_stream(sb, params, config, tokens, lava=True)
    ref = run_stream(sb, params, config, tokens)
    assert lava.lava_runs == 1 and np.array_equal(lava.accumulator, ref.accumulator)
