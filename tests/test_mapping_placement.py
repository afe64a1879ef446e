"""Placement: limits respected, every unit placed once, partitioning beats naive fill."""

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from atomspark.mapping.core_fit import core_memory, core_use, over_limit
from atomspark.mapping.hardware import load_hardware
from atomspark.mapping.placement import pack, pack_spread, place, traffic
from atomspark.sim.core import AtomsparkError


def small_hw(units_per_core=16, cores_per_chip=8, fan_in=4096, memory=131072):
    """Loihi 1 with shrunken limits so that tiny graphs span several cores and chips."""
    hw = load_hardware("loihi1-davies")
    lim = dataclasses.replace(
        hw.limits,
        units_per_core=units_per_core,
        cores_per_chip=cores_per_chip,
        cores_per_tile=2,
        mesh_width_tiles=2,
        mesh_height_tiles=2,
        chips_per_board=4,
        max_fan_in_axons_per_core=fan_in,
        synaptic_memory_bytes_per_core=memory,
    )
    return dataclasses.replace(hw, limits=lim)


def clustered_graph(n_clusters=4, size=16, p_in=0.5, p_out=0.01, seed=0):
    """Dense clusters, sparse links between them; units of a cluster are interleaved by index."""
    rng = np.random.default_rng(seed)
    n = n_clusters * size
    label = np.arange(n) % n_clusters  # interleaved: sequential fill mixes the clusters
    same = label[:, None] == label[None, :]
    dense = rng.random((n, n)) < np.where(same, p_in, p_out)
    np.fill_diagonal(dense, False)
    return sp.csr_matrix(dense.astype(float)), label


@pytest.mark.parametrize("strategy", ["sequential", "partition", "locality"])
def test_every_unit_placed_once_within_limits(strategy):
    adj, label = clustered_graph()
    hw = small_hw()
    pos = np.random.default_rng(1).normal(size=(adj.shape[0], 3))
    pl = place(adj, hw, strategy=strategy, positions=pos)
    assert pl.unit_core.shape == (adj.shape[0],)
    assert pl.unit_core.min() >= 0
    counts = np.bincount(pl.unit_core)
    assert counts.max() <= hw.limits.units_per_core
    assert pl.n_cores == counts.size and np.all(counts > 0)


def test_partition_cuts_cross_core_traffic_on_clustered_graph():
    adj, _ = clustered_graph()
    hw = small_hw()
    events = np.full(adj.shape[0], 3.0)
    naive = traffic(adj, place(adj, hw, "sequential"), hw, events)
    parted = traffic(adj, place(adj, hw, "partition", unit_events=events, seed=0), hw, events)
    assert parted.cross_core < 0.5 * naive.cross_core
    # a spike's messages: same total whatever the placement on one core per cluster
    assert parted.messages <= naive.messages


def test_locality_placement_follows_positions():
    rng = np.random.default_rng(2)
    centres = np.array([[0, 0], [5, 0], [0, 5], [5, 5]], float)
    label = np.arange(64) % 4
    pos = centres[label] + 0.1 * rng.normal(size=(64, 2))
    adj = sp.csr_matrix((label[:, None] == label[None, :]).astype(float) - np.eye(64))
    hw = small_hw()
    pl = place(adj, hw, "locality", positions=pos)
    for c in range(4):  # each spatial cluster lands on exactly one core
        assert np.unique(pl.unit_core[label == c]).size == 1
    assert traffic(adj, pl, hw).cross_core == 0


def test_traffic_counts_on_hand_built_placement():
    # 0 -> 1 (same core), 0 -> 2 (next core, other tile), 2 -> 3 (other chip)
    adj = sp.csr_matrix(([1.0, 1.0, 1.0], ([0, 0, 2], [1, 2, 3])), shape=(4, 4))
    hw = small_hw(units_per_core=2, cores_per_chip=8)
    pl = place(adj, hw, "sequential")
    np.testing.assert_array_equal(pl.unit_core, [0, 0, 1, 1])
    tr = traffic(adj, pl, hw, np.array([2.0, 0, 5.0, 0]))
    assert tr.messages == 2 * 2 + 5 * 1  # unit 0 reaches cores {0, 1}; unit 2 reaches core 1
    assert tr.cross_core == 2 * 1
    assert tr.cross_chip == 0
    assert tr.router_hops == 0  # cores 0 and 1 share tile 0 (2 cores per tile)


def test_too_many_cores_error_says_by_how_much():
    adj, _ = clustered_graph(n_clusters=4, size=40)
    hw = small_hw(units_per_core=4, cores_per_chip=8)
    with pytest.raises(AtomsparkError, match=r"needs 40 cores.*8 cores/chip x 1 chip"):
        place(adj, hw, "sequential", max_chips=1)


def test_fan_in_error_names_limit():
    n = 50
    adj = sp.csr_matrix(np.ones((n, n)) - np.eye(n))
    with pytest.raises(AtomsparkError, match="fan-in 49 exceeds 10"):
        place(adj, small_hw(fan_in=10), "sequential")


def test_core_memory_limits_units_per_core():
    """Synapses, compartment state and axon tables share a core's memory (core_fit.py)."""
    adj, _ = clustered_graph()
    indeg = np.diff(adj.tocsc().indptr)
    hw = small_hw(memory=400)  # 2 B/synapse
    syn = np.minimum(indeg, 20)
    pl = place(adj, hw, "sequential", synapse_counts=syn)
    cores = core_use(pl.unit_core, adj, syn, hw)
    assert max(c.memory_bytes for c in cores) <= 400
    # synapses alone would have allowed more per core: state and axon tables took the rest
    assert max(c.synaptic_memory_bytes for c in cores) < 400 - 8 * max(
        c.compartments for c in cores
    )
    for c in cores:
        assert c.memory_bytes == core_memory(
            c.synaptic_memory_bytes, c.compartments, c.fan_in_axons, c.fan_out_axons
        )


def test_unknown_strategy_and_missing_positions():
    adj, _ = clustered_graph()
    with pytest.raises(AtomsparkError, match="strategy 'magic' unknown"):
        place(adj, small_hw(), "magic")
    with pytest.raises(AtomsparkError, match="needs unit positions"):
        place(adj, small_hw(), "locality")


def test_a_network_needing_more_output_axons_is_spread_not_refused():
    """Planted: a ring where every unit sends to its next 24 units. Packed 64 to a core, a core
    needs ~88 output axons against a limit of 40; spread over more cores it keeps every limit."""
    n, k = 256, 24
    rows = np.repeat(np.arange(n), k)
    cols = (rows + np.tile(np.arange(1, k + 1), n)) % n
    adj = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
    hw = small_hw(units_per_core=64, cores_per_chip=32)
    hw = dataclasses.replace(
        hw, limits=dataclasses.replace(hw.limits, max_fan_out_axons_per_core=40)
    )
    groups = [np.arange(n)]
    with pytest.raises(AtomsparkError, match="fan_out_axons"):
        pack(groups, adj, np.full(n, float(k)), hw, "sequential")
    placements, problems = pack_spread(groups, adj, np.full(n, float(k)), hw, "sequential")
    assert placements and any("fan_out_axons" in p for p in problems)
    pl = place(adj, hw, "sequential")
    assert pl.n_cores == placements[0].n_cores > n // 64
    assert max(c.fan_out_axons for c in core_use(pl.unit_core, adj, np.full(n, k), hw)) <= 40
    # every fitting placement, packed to spread, keeps the limits
    assert [p.n_cores for p in placements] == sorted(p.n_cores for p in placements)
    for p in placements:
        assert not over_limit(core_use(p.unit_core, adj, np.full(n, k), hw), hw)
