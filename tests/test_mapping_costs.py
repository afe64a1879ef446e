"""Pricing a run: vector units as compartments, dense equivalent by hand, chip vs GPU per sample."""

import numpy as np
import pytest
from atomspark.mapping.costs import (
    compare_costs,
    compartment_profile,
    dense_workload,
    place_units,
    price_dense,
    unit_width,
)
from atomspark.mapping.hardware import load_hardware
from atomspark.networks import rsgn
from atomspark.networks.vn import VNModel
from atomspark.scenarios.runs.engine import run_rsgn, run_vn


@pytest.fixture(scope="module")
def small_rsgn_run():
    cfg = rsgn.RSGNConfig(
        mode="sparse",
        n_nodes=24,
        dim=2,
        d_hidden=8,
        d_in=4,
        n_classes=3,
        n_steps=3,
        k_nearest=4,
        cutoff=0.2,
        temperature=0.2,
        affinity_rank=4,
    )
    params = rsgn.init_params(cfg, seed=1)
    tokens = np.random.default_rng(2).standard_normal((2, 6, 4))
    return cfg, params, run_rsgn(params, cfg, tokens)


def test_vector_units_become_compartments(small_rsgn_run):
    cfg, _, run = small_rsgn_run
    w = unit_width(run.graph)
    assert w == cfg.d_hidden
    scalar = compartment_profile(run.graph, run.profile)
    np.testing.assert_array_equal(scalar.population_sizes, run.profile.population_sizes * w)
    np.testing.assert_array_equal(
        scalar.synops, run.profile.synops * w + run.profile.updates * w * w
    )
    np.testing.assert_array_equal(scalar.events, run.profile.events * w)


def test_compartments_of_a_node_share_a_core(small_rsgn_run):
    cfg, _, run = small_rsgn_run
    hw = load_hardware("loihi2")
    placement, adjacency = place_units(run.graph, hw)
    w = cfg.d_hidden
    cores = placement.unit_core.reshape(-1, w)
    assert np.all(cores == cores[:, :1])
    assert adjacency.shape == (cfg.n_nodes * w,) * 2
    assert adjacency.nnz == run.graph.unit_adjacency().nnz * w


def test_dense_workload_by_hand():
    model = VNModel.random(6, [(5, 3)], lam=0.1, seed=0)
    run = run_vn(model, np.ones((1, 6)), steps=10)
    work = dense_workload(run.graph, steps=10)
    macs = 5 * 5  # one lateral Gram projection
    assert work.flops == 10 * (2 * macs + 4 * 5)
    assert work.bytes_moved == 10 * (4 * macs + 12 * 5)
    assert work.launches == 10


def test_batching_amortises_launches_and_weights():
    model = VNModel.random(6, [(5, 3)], lam=0.1, seed=0)
    run = run_vn(model, np.ones((1, 6)), steps=10)
    _, one = price_dense(run.graph, 10, "h100", batch=1)
    _, many = price_dense(run.graph, 10, "h100", batch=64)
    assert many.energy_j < one.energy_j and many.time_s < one.time_s


def test_chip_cost_grows_with_activity():
    model = VNModel.random(8, [(12, 4)], lam=0.05, seed=3)
    rng = np.random.default_rng(4)
    quiet = run_vn(model, 0.01 * rng.standard_normal((2, 8)), steps=30)
    busy = run_vn(model, 3.0 * rng.standard_normal((2, 8)), steps=30)
    e = [compare_costs(r.graph, r.profile, n_samples=2).neuromorphic for r in (quiet, busy)]
    assert busy.profile.synops.sum() > quiet.profile.synops.sum()
    assert e[1].breakdown.synaptic_ops > e[0].breakdown.synaptic_ops
    synop_j = load_hardware("loihi2").energy.synop  # the default neuromorphic target
    for cost, run in zip(e, (quiet, busy)):  # synaptic energy = counted synops x energy per synop
        per_sample = run.profile.synops.sum() / 2
        assert cost.breakdown.synaptic_ops == pytest.approx(per_sample * synop_j, rel=1e-12)
    assert e[1].energy_per_sample_j > e[0].energy_per_sample_j
