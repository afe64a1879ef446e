"""The map at the issue's sizes: what is refused before it is built says what the placer would
say (VN atoms beyond a core's input axons; RSGN nodes beyond a core; split layouts beyond the
board), and a refused point is recorded as not fitting, with nothing priced."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from atomspark.mapping.hardware import DEFAULT_CHIP, load_hardware
from atomspark.mapping.layouts import fit_graph, split_cost_model
from atomspark.mapping.placement import pack_spread
from atomspark.mapping.quantize import fixed_vn_runner
from atomspark.mapping.split_cores import search_blocks
from atomspark.networks import rsgn
from atomspark.networks.rsgn_compile import compile_rsgn_tokens
from atomspark.networks.sample_runner import vn_runner
from atomspark.scenarios.compare.activity_profile import activity_profile
from atomspark.scenarios.compare.chip_gpu_map import price_point
from atomspark.scenarios.compare.chip_rows import HEADLINE_STOP, chip_row
from atomspark.scenarios.compare.map_points import (
    VN_LARGEST,
    _vn_model,
    map_families,
)

pytest.importorskip("torch")  # the RSGN points import the family's torch trainer
pytestmark = pytest.mark.torch


def _hw(**limits):
    hw = load_hardware(DEFAULT_CHIP)
    return dataclasses.replace(hw, limits=dataclasses.replace(hw.limits, **limits))


def _vn_graph(layers, fixed=True):
    runner = vn_runner(_vn_model(layers))
    return fixed_vn_runner(runner, frac_bits=12).graph if fixed else runner.graph


def test_a_vn_beyond_a_core_is_refused_by_the_node_layouts_first_check():
    """Fixed point zeroes small weights, so the fan-in is the built graph's (below the dense
    count), and the refusal comes before the packing groups are drawn."""
    hw = _hw(max_fan_in_axons_per_core=60)
    graph = _vn_graph([96, 64])
    adj = graph.unit_adjacency()
    fan_in = np.diff(adj.tocsc().indptr)
    assert 60 < fan_in.min() < 160  # fewer than every atom: rounded-away weights
    row = chip_row(graph, activity_profile(graph, 4, 0.1), hw, 1, None, HEADLINE_STOP)
    assert not row.fits
    assert f"unit {int(fan_in.argmax())} fan-in {fan_in.max()} exceeds 60" in row.took


def test_a_refused_point_is_recorded_as_not_fitting():
    family = next(f for f in map_families() if f.name == "RSGN published")
    tight = _hw(cores_per_chip=1, chips_per_board=1, max_fan_in_axons_per_core=1000)
    point = {"n_nodes": 48, "d_hidden": 32, "activity": 1.0}
    rec = price_point(family, point, {}, tight, load_hardware("h100"), None)
    assert rec["fits"] is False and rec["took"].startswith("does not fit: ") and len(rec) == 2


def test_fista_ops_per_iteration_need_no_eigensolve():
    import torch
    from atomspark.networks.torch_path.vn_torch import proximal_descent
    from atomspark.scenarios.compare.gpu_side import _fista_ops_per_iteration, count_ops

    h = torch.from_numpy(np.random.default_rng(0).standard_normal((30, 30)))
    h = h @ h.T
    b = torch.ones(1, 30, dtype=h.dtype)
    for topk in (None, 3):
        runs = [count_ops(lambda n=n, k=topk: proximal_descent(h, b, 0.1, torch.zeros_like(b),
                                                               "fista", -1.0, n, k))
                for n in (3, 2)]  # fmt: skip
        assert _fista_ops_per_iteration(h, topk) == runs[0] - runs[1]


def _rsgn(mode="published", n=40, d=16):
    extra = {"k_nearest": 6, "cutoff": 0.2} if mode == "sparse" else {}
    cfg = rsgn.RSGNConfig(mode=mode, n_nodes=n, d_hidden=d, n_classes=3, n_steps=2, **extra)
    params = rsgn.init_params(cfg, seed=0)
    tokens = np.random.default_rng(0).standard_normal((6, cfg.d_in))
    return compile_rsgn_tokens(params, cfg, tokens)


def test_rsgn_node_layout_refused_on_the_node_graph_in_the_packers_words():
    graph = _rsgn(n=300)  # a node's 16 compartments hear 16 x 299 sources: over 4,096
    hw = load_hardware(DEFAULT_CHIP)
    fit = fit_graph(graph, hw, layout="node")
    (tried,) = fit.tried
    assert not fit.fits
    # the packer on the compartment graph (what the node layout built before) says the same
    w = 16
    node_adj = sp.csr_matrix(graph.unit_adjacency())
    in_degree = np.diff(node_adj.tocsc().indptr)
    comp_adj = sp.kron(node_adj, sp.identity(w, format="csr"), format="csr")
    syn = np.repeat(in_degree + w, w).astype(float)
    blocks = np.repeat(np.arange(graph.total_units), w)
    groups = [np.arange(comp_adj.shape[0])]
    _, problems = pack_spread(groups, comp_adj, syn, hw, "sequential", blocks)
    assert tried["problem"] == problems[0] and "fan-in" in problems[0]


def test_split_search_says_at_once_when_the_board_cannot_hold_it():
    model = split_cost_model(_rsgn(n=40, d=16))
    roomy = search_blocks(model, load_hardware(DEFAULT_CHIP))
    assert roomy.fits
    tight = _hw(cores_per_chip=1, chips_per_board=1)  # the fewest it needs: 2 cores
    small = search_blocks(model, tight)
    assert not small.fits and "needs at least 2 cores" in small.problems[0]
    assert "more than the board's 1 cores" in small.problems[0]
    fit = fit_graph(_rsgn(n=40, d=16), tight, layout="split")
    assert not fit.fits and "needs at least" in fit.problems[0]


def test_rsgn_point_fitted_before_its_run_prices_as_the_demo_path():
    from atomspark.networks.datasets import hierarchical_sequences
    from atomspark.scenarios.compare.map_points import RSGN_SEQUENCES, rsgn_config, rsgn_price
    from atomspark.scenarios.runs.demo import rsgn_workload
    from atomspark.scenarios.runs.engine import run_rsgn

    point = {"n_nodes": 48, "d_hidden": 32, "activity": 1.0}
    hw = load_hardware(DEFAULT_CHIP)
    chip, variants = rsgn_price("published")(point, {}, hw)
    test = hierarchical_sequences(n=2 * RSGN_SEQUENCES, seed=0).tokens[RSGN_SEQUENCES:]
    cfg = rsgn_config("published", point)
    params = rsgn.init_params(cfg, seed=0)
    ref, ref_variants = rsgn_workload(params, cfg, test, run_rsgn(params, cfg, test), hw)
    assert chip.fits and variants and len(variants) == len(ref_variants)
    for mine, theirs in zip(chip.options(), ref.options()):
        assert mine.cores == theirs.cores and mine.latency_s == theirs.latency_s
        assert mine.energy("device") == theirs.energy("device")


def test_rsgn_point_that_fits_no_layout_is_not_run(monkeypatch):
    from atomspark.scenarios.compare.map_points import rsgn_price

    def never(*args, **kwargs):
        raise AssertionError("a point that fits no layout was run")

    monkeypatch.setattr("atomspark.scenarios.runs.engine.run_rsgn", never)
    tight = _hw(cores_per_chip=1, chips_per_board=1, max_fan_in_axons_per_core=1000)
    chip, variants = rsgn_price("published")({"n_nodes": 48, "d_hidden": 32, "activity": 1.0},
                                             {}, tight)  # fmt: skip
    assert not chip.fits and variants == [] and chip.took.startswith("does not fit: ")
    assert "needs at least" in chip.took


def test_the_full_grid_reaches_the_issues_sizes():
    families = {f.name: f for f in map_families()}
    vn = families["VN settle"].grid("full", {"activity": 0.1})
    assert min(p["size"] for p in vn) == 64 and max(p["size"] for p in vn) == VN_LARGEST == 8192
    for mode in ("published", "sparse"):
        shapes = {(p["n_nodes"], p["d_hidden"]) for p in families[f"RSGN {mode}"].grid("full")}
        assert {(64, 32), (4096, 32), (4096, 128)} <= shapes
