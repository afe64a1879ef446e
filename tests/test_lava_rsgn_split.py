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
from test_export_verify_guards import trained_file  # noqa: F401  (fixture)
from test_rsgn_split_layout import FLOAT_TOL, engine_states, released_graph, small_graph

pytestmark = pytest.mark.lava
TWO_PART = {"split_w_h": True, "per_target_w": True}


def _run(graph, steps: int, blocks: SplitBlocks, merged: bool):
    pytest.importorskip("lava")
    from atomspark.mapping.lava.split_run import run_split_lava

    model = split_model(from_graph(graph))
    cores = assign_cores(model.n, model.d, blocks, node_order(model.w_t, model.pool))
    return run_split_lava(model, cores, steps, merged=merged), model, cores


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
    graph, steps = released_graph("released/hierarchical-rsgn-seed42.npz")
    g = quantize_rsgn_graph(graph, **TWO_PART)
    lava, _, _ = _run(g, steps, SplitBlocks(6, 3, 256), merged=True)
    alpha, h, _ = engine_states(g, steps)
    assert np.array_equal(lava.alpha, alpha) and np.array_equal(lava.h, h)


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
    # a stream of samples: host encoding, the split network on Lava, host readout
    from atomspark.scenarios.runs.model_task import task_samples

    np.save(tmp_path / "tokens.npy", task_samples(trained_file, 3)[0])
    argv = ["--steps", "3", "--inputs", str(tmp_path / "tokens.npy"), "--model", str(trained_file)]
    run = subprocess.run([sys.executable, str(out / "run_bundle.py"), *argv],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert "stream of 3 samples on Lava" in run.stdout


@pytest.mark.parametrize("fixed", [True, False])
def test_released_sparse_model_split_on_lava_on_the_searched_cores(fixed):
    """The released sparse model on the block search's own cores (the bundle's): bit-exact in
    fixed point, to tolerance in float."""
    from atomspark.mapping.hardware import load_hardware
    from atomspark.mapping.split_cores import search_blocks

    pytest.importorskip("lava")
    from atomspark.mapping.lava.split_run import run_split_lava

    graph, steps = released_graph("sparse-threshold/target0.02-sigma0.05-k0-e50-seed43.npz")
    g = quantize_rsgn_graph(graph, **TWO_PART) if fixed else graph
    model = split_model(from_graph(g))
    search = search_blocks(model, load_hardware("loihi2"))
    assert search.fits
    cores = assign_cores(model.n, model.d, search.blocks, search.order)
    lava = run_split_lava(model, cores, steps, merged=True)
    alpha, h, _ = engine_states(g, steps)
    assert np.any(alpha[-1] > 0) and np.any(alpha[-1] == 0)  # sparse: some nodes silent
    if fixed:
        assert np.array_equal(lava.alpha, alpha) and np.array_equal(lava.h, h)
    else:
        np.testing.assert_allclose(lava.alpha, alpha, rtol=0, atol=FLOAT_TOL)
        np.testing.assert_allclose(lava.h, h, rtol=0, atol=FLOAT_TOL)
