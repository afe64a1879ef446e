"""The chip-vs-GPU rows price RSGN as the split bundle deploys it: the rows' graph is the integer
one `export --to lava --fixed` writes, and the priced cores, chip time steps per sample and
microcode per sample are the bundle's own (mapping/lava/split_bundle.py), microcode energy and
time included in the price, and the priced traffic uses the bundle's connections."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("torch")  # the chip rows import the RSGN family's torch trainer
pytestmark = pytest.mark.torch

from atomspark.mapping.costs import chip_cost  # noqa: E402
from atomspark.mapping.hardware import load_hardware  # noqa: E402
from atomspark.mapping.lava.bundle import from_graph  # noqa: E402
from atomspark.mapping.lava.split_bundle import export_split, load_split_bundle, split_bundle_costs  # noqa: E402
from atomspark.mapping.split_microcode import instruction_cost, readout_instructions  # noqa: E402
from atomspark.networks import rsgn  # noqa: E402
from atomspark.networks.datasets import hierarchical_sequences  # noqa: E402
from atomspark.scenarios.compare.chip_rows import chip_row  # noqa: E402
from atomspark.scenarios.compare.rsgn_compare import rsgn_chip_row, rsgn_chip_run  # noqa: E402
from atomspark.scenarios.runs.engine import concat_profiles  # noqa: E402

MODES = {"published": {}, "sparse": {"k_nearest": 16, "cutoff": 0.2, "temperature": 0.3}}


def narrow_loihi2():
    """Loihi 2 with 120 input axons per core, so that a 20-node RSGN of width 8 does not fit in
    the node layout (8 x 16 or more sources per node) and is priced in the split layout."""
    hw = load_hardware("loihi2")
    return replace(hw, limits=replace(hw.limits, max_fan_in_axons_per_core=120))


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_priced_rsgn_row_is_the_split_bundle(mode, tmp_path):
    cfg = rsgn.RSGNConfig(mode=mode, n_nodes=20, d_hidden=8, n_classes=3, n_steps=4,
                          **MODES[mode])  # fmt: skip
    params = rsgn.init_params(cfg, seed=1)
    tokens = hierarchical_sequences(n=3, length=12, dim=cfg.d_in, n_classes=3, seed=1).tokens
    scores, graph, profiles = rsgn_chip_run(params, cfg, tokens)
    assert graph.populations[0].is_fixed_point and scores.shape == (3, 3)
    hw = narrow_loihi2()
    row = rsgn_chip_row(graph, concat_profiles(profiles), hw, len(tokens), params.positions,
                        cfg.n_classes, params=params)  # fmt: skip
    assert row.fits and row.took.startswith("split"), row.took
    bundle = export_split(from_graph(graph), tmp_path / "b", hw, classifier=params)
    split = json.loads((bundle / "metadata.json").read_text())["split"]
    bundle_costs = split_bundle_costs(load_split_bundle(bundle), hw)
    costs, readout = bundle_costs["costs"], bundle_costs["readout_costs"]
    k = cfg.n_steps
    # cores: the network's and the readout's processes sit on exactly the cores priced (one
    # placement truth: the bundle's own core list, split_cores.place_readout), the readout's on
    # the network's cores where they fit, else on added ones
    on_chip = {p["core"] for p in split["processes"] + split["readout"]["processes"]} - {None}
    assert len(readout) == len(split["readout"]["cores"]) >= 2
    assert [c.core for c in readout] == [p["core"] for p in split["readout"]["processes"][:-1]]
    assert row.cores == bundle_costs["cores_total"] == len(on_chip) == max(on_chip) + 1
    assert row.cores == len(costs) + split["readout"]["added_cores"]
    assert "readout of 3 class scores on chip" in row.took and "encoder" in row.took
    assert row.readout_on_chip and all(p.readout_on_chip for p in row.options())
    # chip time steps of a stream: the load (the reset phase) and the ignition's emit, then the
    # bundle's schedule per model step
    per_step = split["schedule"]["chip_steps_per_model_step"]
    assert row.steps == k + 1
    assert row.report.chip_steps_per_sample == 2 + per_step * k
    # microcode: the bundle's per-core programs every model step, its load and the readout's
    # product once per sample, at its per-instruction cost
    per_model_step = sum(c.microcode_instructions for c in costs)
    per_sample = split["schedule"]["stream"]["load_instructions_per_sample"]
    per_sample += readout_instructions(cfg.n_nodes, cfg.d_hidden)
    assert per_model_step > 0 and per_sample > 0
    assert row.report.microcode_instructions == k * per_model_step + per_sample
    energy = instruction_cost(hw)["energy_j"]
    assert row.report.breakdown.microcode == pytest.approx(
        (k * per_model_step + per_sample) * energy
    )
    busiest = max(c.microcode_instructions for c in costs) * instruction_cost(hw)["time_s"]
    assert row.latency_s > k * busiest
    assert np.isclose(row.report.energy_per_sample_j, row.report.breakdown.total)
    # traffic: a model step in which every node updates and sends uses every synapse of every
    # connection the bundle writes once (pool exchange, flags and 24-bit parts included)
    first = profiles[0]
    fit, _ = chip_cost(graph, first, hw, 1)
    priced = fit.cmap.to_profile(first).synops.sum(axis=1)
    every = sum(c["synapses"] for c in split["connections"])
    n = cfg.n_nodes
    all_send = (first.events.sum(axis=1) == n) & (first.updates.sum(axis=1) == n)
    assert np.all(priced <= every) and np.all(priced[all_send] == every)
    assert all_send.any() or mode == "sparse"


@pytest.mark.parametrize("mode", sorted(MODES))
def test_compare_no_fixed_prices_the_float_split_bundle(mode, tmp_path):
    """`compare --no-fixed` prices the float engine's graph: the float split bundle's cores,
    connections (one part each, no 24-bit halves) and microcode, as the fixed rows do theirs."""
    from atomspark.scenarios.compare.rsgn_compare import _rsgn_engine

    cfg = rsgn.RSGNConfig(mode=mode, n_nodes=20, d_hidden=8, n_classes=3, n_steps=4,
                          **MODES[mode])  # fmt: skip
    params = rsgn.init_params(cfg, seed=1)
    tokens = hierarchical_sequences(n=3, length=12, dim=cfg.d_in, n_classes=3, seed=1).tokens
    _, _, profiles, graph, _ = _rsgn_engine(params, cfg, tokens)
    assert not graph.populations[0].is_fixed_point
    hw = narrow_loihi2()
    row = chip_row(graph, concat_profiles(profiles), hw, len(tokens), params.positions)
    assert row.fits and row.took.startswith("split"), row.took
    bundle = export_split(from_graph(graph), tmp_path / "b", hw)
    split = json.loads((bundle / "metadata.json").read_text())["split"]
    costs = split_bundle_costs(load_split_bundle(bundle), hw)["costs"]
    assert not any(c["name"].endswith("_lo") for c in split["connections"])
    assert row.cores == len(costs) == len({p["core"] for p in split["processes"]})
    k = cfg.n_steps
    assert (
        row.report.chip_steps_per_sample == 2 + split["schedule"]["chip_steps_per_model_step"] * k
    )
    per_sample = split["schedule"]["stream"]["load_instructions_per_sample"]
    per_sample += readout_instructions(cfg.n_nodes, cfg.d_hidden)
    per_model_step = sum(c.microcode_instructions for c in costs)
    assert row.report.microcode_instructions == k * per_model_step + per_sample
    first = profiles[0]
    fit, _ = chip_cost(graph, first, hw, 1)
    priced = fit.cmap.to_profile(first).synops.sum(axis=1)
    assert np.all(priced <= sum(c["synapses"] for c in split["connections"]))


def test_the_readout_cores_are_priced_per_sample():
    """With the readout (classes given) the split row holds the readout's cores and prices their
    work: one product per transform compartment and sample, the partials' sums into every
    accumulator, the bias every chip step, the readout compartments' updates; the schedule (chip
    steps per sample) is unchanged: the readout runs while the next sample loads."""
    from atomspark.mapping.costs import readout_placement
    from atomspark.mapping.readout_price import readout_steps

    cfg = rsgn.RSGNConfig(mode="published", n_nodes=20, d_hidden=8, n_classes=3, n_steps=4)
    params = rsgn.init_params(cfg, seed=1)
    tokens = hierarchical_sequences(n=3, length=12, dim=cfg.d_in, n_classes=3, seed=1).tokens
    _, graph, profiles = rsgn_chip_run(params, cfg, tokens)
    hw, prof = narrow_loihi2(), concat_profiles(profiles)
    fit, bare = chip_cost(graph, prof, hw, 3)
    _, full = chip_cost(graph, prof, hw, 3, fit=fit, classes=cfg.n_classes)
    n, d, c = cfg.n_nodes, cfg.d_hidden, cfg.n_classes
    ro = readout_placement(graph, fit.split, c, hw)
    groups = ro.groups
    assert full.cores_used == bare.cores_used + ro.added and ro.stored == (d * c, d * c)
    assert full.chip_steps == bare.chip_steps and full.microcode_instructions == (
        bare.microcode_instructions
    )
    synops = (n * d + 2 * len(groups) * d * c) * 3 + c * full.chip_steps  # products, sums, bias
    e = hw.energy
    assert (full.breakdown.synaptic_ops - bare.breakdown.synaptic_ops) * 3 == pytest.approx(
        synops * e.synop
    )
    spikes = (n * d + len(groups) * d) * 3
    assert (full.breakdown.spikes - bare.breakdown.spikes) * 3 >= spikes * e.spike_out
    compartments = len(groups) * d + 2 * c
    updates = (full.breakdown.updates_active + full.breakdown.updates_idle) - (
        bare.breakdown.updates_active + bare.breakdown.updates_idle
    )
    active = compartments * 3 * e.update_active
    idle = compartments * (prof.steps - 3) * e.update_idle
    assert updates * 3 == pytest.approx(active + idle)
    assert readout_steps(prof.steps, 3).tolist() == [4, 9, 14]


def test_a_node_layout_row_reads_out_on_the_host_and_says_so():
    """Where the node layout fits, its bundle holds no readout on chip: the row prices none and
    flags it, so the GPU's side leaves its readout out too (rsgn_gpu_variants' readout)."""
    cfg = rsgn.RSGNConfig(mode="published", n_nodes=20, d_hidden=8, n_classes=3, n_steps=4)
    params = rsgn.init_params(cfg, seed=1)
    tokens = hierarchical_sequences(n=2, length=12, dim=cfg.d_in, n_classes=3, seed=1).tokens
    _, graph, profiles = rsgn_chip_run(params, cfg, tokens)
    hw = load_hardware("loihi2")
    row = rsgn_chip_row(graph, concat_profiles(profiles), hw, 2, params.positions, 3)
    bare = chip_row(graph, concat_profiles(profiles), hw, 2, params.positions)
    assert row.fits and not row.took.startswith("split") and not row.readout_on_chip
    assert "on the host" in row.took and "priced on neither side" in row.took
    assert row.cores == bare.cores and row.dynamic_j == pytest.approx(bare.dynamic_j)
