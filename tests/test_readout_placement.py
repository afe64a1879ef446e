"""The split RSGN's readout sits where its limits allow (mapping/split_cores.place_readout, the
one placement the bundle writes and the chip rows price): on the network's own cores where
every resource still fits, else on added cores; its synapses are the weights the bundle
stores."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("torch")  # the chip rows import the RSGN family's torch trainer
pytestmark = pytest.mark.torch

from atomspark.mapping.core_fit import core_limits  # noqa: E402
from atomspark.mapping.costs import chip_cost, readout_placement  # noqa: E402
from atomspark.mapping.hardware import load_hardware  # noqa: E402
from atomspark.mapping.lava.bundle import from_graph  # noqa: E402
from atomspark.mapping.lava.split_bundle import plan_split  # noqa: E402
from atomspark.mapping.quantize import fixed_rsgn_runner  # noqa: E402
from atomspark.mapping.split_cores import split_problems  # noqa: E402
from atomspark.mapping.split_readout import (  # noqa: E402
    classifier_weights,
    score_matrix,
    stored_weights,
)
from atomspark.networks import rsgn  # noqa: E402
from atomspark.networks.datasets import hierarchical_sequences  # noqa: E402
from atomspark.networks.sample_runner import rsgn_runner  # noqa: E402
from atomspark.scenarios.compare.activity_profile import activity_profile  # noqa: E402
from atomspark.scenarios.compare.rsgn_compare import rsgn_chip_fit, rsgn_event_graph  # noqa: E402


def _demo_published():
    """The demo's published RSGN (scenarios/runs/demo.py: 256 nodes, 20 classes, seed 0), its
    fixed-point graph and split fit on Loihi 2."""
    cfg = rsgn.RSGNConfig(mode="published", n_nodes=256, n_classes=20, n_steps=5)
    params = rsgn.init_params(cfg, seed=0)
    tokens = hierarchical_sequences(n=32, seed=0).tokens[16:]
    hw = load_hardware("loihi2")
    fit = rsgn_chip_fit(params, cfg, tokens, hw)
    graph = fixed_rsgn_runner(
        rsgn_runner(params, cfg, rsgn_event_graph(params, cfg, tokens[0]))
    ).graph
    return cfg, params, graph, fit, hw


def test_the_demo_published_readout_shares_the_layouts_cores():
    cfg, params, graph, fit, hw = _demo_published()
    assert fit.split is not None
    stored = classifier_weights(params, True)
    ro = readout_placement(graph, fit.split, cfg.n_classes, hw, stored)
    network = len(fit.split.costs)
    assert ro.added == 0 and not ro.problems and not split_problems(ro.cores, hw)
    assert len(ro.cores) == network and max(c.core for c in ro.pieces) < network
    assert "no core added" in ro.note()
    # priced: the network's cores only, one chip
    profile = activity_profile(graph, 2 * (cfg.n_steps + 1), 0.1)
    _, rep = chip_cost(graph, profile, hw, 2, fit=fit, classes=cfg.n_classes,
                       readout_weights=stored)  # fmt: skip
    assert rep.cores_used == network and rep.chips_used == 1
    # the bundle: the same group size, its synapses the weights it stores
    plan = plan_split(from_graph(graph), hw, params)
    assert plan.readout.node_cores_per_group == ro.group
    assert stored_weights(plan.readout) == stored
    p = len(ro.groups)
    assert [score_matrix(plan.readout, p, k).nnz for k in range(2)] == [p * s for s in stored]


def test_a_network_without_headroom_gets_added_cores():
    """A planted layout whose cores are full: every readout piece goes on an added core and the
    price holds those cores."""
    cfg = rsgn.RSGNConfig(mode="published", n_nodes=20, d_hidden=8, n_classes=3, n_steps=4)
    params = rsgn.init_params(cfg, seed=1)
    tokens = hierarchical_sequences(n=2, length=12, dim=cfg.d_in, n_classes=3, seed=1).tokens
    hw = load_hardware("loihi2")
    hw = replace(hw, limits=replace(hw.limits, max_fan_in_axons_per_core=120))  # split layout
    graph = fixed_rsgn_runner(
        rsgn_runner(params, cfg, rsgn_event_graph(params, cfg, tokens[0]))
    ).graph
    fit = rsgn_chip_fit(params, cfg, tokens, hw)
    assert fit.split is not None
    full = core_limits(hw)["compartments"]
    search = replace(fit.split, costs=[replace(c, compartments=full) for c in fit.split.costs])
    full_fit = replace(fit, split=search)
    ro = readout_placement(graph, search, cfg.n_classes, hw)
    network = len(search.costs)
    assert ro.added >= 1 and not ro.problems
    assert min(c.core for c in ro.pieces) >= network and len(ro.cores) == network + ro.added
    assert "added" in ro.note()
    profile = activity_profile(graph, 2 * (cfg.n_steps + 1), 0.2)
    _, bare = chip_cost(graph, profile, hw, 2, fit=full_fit)
    _, rep = chip_cost(graph, profile, hw, 2, fit=full_fit, classes=cfg.n_classes)
    assert rep.cores_used == bare.cores_used + ro.added
    # with headroom the same model shares its cores
    shared = readout_placement(graph, fit.split, cfg.n_classes, hw)
    assert shared.added < ro.added


def test_the_readout_counts_only_stored_weights():
    """A zero weight is not a synapse: the accumulators' synapses are the weights score_matrix
    stores (one function, split_readout.stored_weights, for the bundle and the price)."""
    from atomspark.mapping.split_cores import readout_pieces
    from atomspark.mapping.split_readout import quantize_readout

    cfg = rsgn.RSGNConfig(mode="published", n_nodes=20, d_hidden=8, n_classes=3, n_steps=4)
    params = rsgn.init_params(cfg, seed=1)
    cls_w = np.asarray(params.cls_w).copy()
    cls_w[:3] = 0.0  # three features read by no class
    params = replace(params, cls_w=cls_w)
    d, c = cfg.d_hidden, cfg.n_classes
    readout = quantize_readout(params, True, cfg.n_nodes, cfg.n_nodes)
    stored = classifier_weights(params, True)
    assert stored == stored_weights(readout) and stored[0] <= (d - 3) * c
    groups = [np.arange(4 * d), np.arange(4 * d, 8 * d)]
    _, scores = readout_pieces(d, c, stored, groups, load_hardware("loihi2"))
    held = [score_matrix(readout, len(groups), k).nnz for k in range(2)]
    assert [s.synapses for s in scores] == [held[0] + c, held[1]]
