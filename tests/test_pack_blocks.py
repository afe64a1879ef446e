"""The block packer (mapping/pack_blocks.py) places every network exactly as the unit-by-unit
packer (mapping/pack_reference.py) does, under every cap and squeeze the spread search tries,
and pack_spread's placements equal the reference search's; the bisection of a complete graph of
equal weights is networkx's Kernighan-Lin, drawn without sweeping."""

from __future__ import annotations

import dataclasses

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from atomspark.mapping import placement
from atomspark.mapping.core_fit import core_memory, core_memory_array
from atomspark.mapping.hardware import load_hardware
from atomspark.mapping.layouts import node_layout, split_layout
from atomspark.mapping.pack_blocks import cut_pieces, pack_pieces
from atomspark.mapping.pack_reference import pack_spread_units, pack_units
from atomspark.mapping.placement import (
    SQUEEZES,
    complete_and_uniform,
    core_budget,
    pack_spread,
    shuffled_halves,
    spread_caps,
    unit_groups,
)
from atomspark.networks import rsgn
from atomspark.networks.rsgn_compile import compile_rsgn_tokens
from atomspark.networks.vn import VNModel
from atomspark.networks.vn_compile import compile_vn_model
from atomspark.scenarios.runs.cuba import CubaConfig, cuba_graph, cuba_network


def _hw(name="loihi2-pilotnet", **limits):
    hw = load_hardware(name)
    return dataclasses.replace(hw, limits=dataclasses.replace(hw.limits, **limits))


def _clustered(n=96, seed=0):
    rng = np.random.default_rng(seed)
    label = np.arange(n) % 4
    dense = rng.random((n, n)) < np.where(label[:, None] == label[None, :], 0.5, 0.02)
    np.fill_diagonal(dense, False)
    return sp.csr_matrix(dense.astype(float))


def _ring(n=256, k=24):
    rows = np.repeat(np.arange(n), k)
    cols = (rows + np.tile(np.arange(1, k + 1), n)) % n
    return sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))


def _rsgn_graph(mode="published", n=40, d=16):
    extra = {"k_nearest": 6, "cutoff": 0.2} if mode == "sparse" else {}
    cfg = rsgn.RSGNConfig(mode=mode, n_nodes=n, d_hidden=d, n_classes=3, n_steps=2, **extra)
    params = rsgn.init_params(cfg, seed=0)
    tokens = np.random.default_rng(0).standard_normal((6, cfg.d_in))
    return compile_rsgn_tokens(params, cfg, tokens), params.positions


def _scalar_case(adj, hw, strategy, synapses=None, positions=None):
    groups, adj, syn = unit_groups(adj, hw, strategy, None, synapses, positions)
    return groups, adj, syn, np.arange(adj.shape[0]), hw


def _cases():
    """(groups, adjacency, synapses, blocks, hw) of the networks the packer places."""
    adj = _clustered()
    pos = np.random.default_rng(1).normal(size=(adj.shape[0], 3))
    tight = _hw("loihi1-davies", units_per_core=16, max_fan_in_axons_per_core=40,
                synaptic_memory_bytes_per_core=600, cores_per_chip=64)  # fmt: skip
    out = {f"clustered {s}": _scalar_case(adj, tight, s, positions=pos)
           for s in ("sequential", "partition", "locality")}  # fmt: skip
    ring_hw = _hw(units_per_core=64, max_fan_out_axons_per_core=40, cores_per_chip=32)
    out["ring, output axons"] = _scalar_case(_ring(), ring_hw, "sequential",
                                             synapses=np.full(256, 24.0))  # fmt: skip
    vn = compile_vn_model(VNModel.random(32, [(48, 16), (32, 8)], seed=0), np.ones(32))
    small = _hw(synaptic_memory_bytes_per_core=2048, max_fan_in_axons_per_core=100)
    for strategy in ("sequential", "partition"):
        out[f"VN 48+32 {strategy}"] = _scalar_case(vn.unit_adjacency(), small, strategy)
    lif = cuba_graph(cuba_network(CubaConfig(n=400)))
    out["CUBA 400"] = _scalar_case(lif.unit_adjacency(), _hw(units_per_core=64), "partition")
    graph, positions = _rsgn_graph()
    rsgn_hw = _hw(units_per_core=256, max_fan_in_axons_per_core=4096)
    for name, build in (("node", node_layout), ("split", split_layout)):
        for strategy, pos in (("partition", None), ("locality", positions)):
            cmap = build(graph, rsgn_hw, strategy, None, pos)
            out[f"RSGN {name} {strategy}"] = (cmap.groups, cmap.adjacency, cmap.synapses,
                                              cmap.blocks, rsgn_hw)  # fmt: skip
    return out


CASES = _cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_block_packer_places_as_the_unit_packer_under_every_cap_and_squeeze(name):
    groups, adj, syn, blocks, hw = CASES[name]
    adj = sp.csr_matrix(adj)
    pieces = cut_pieces(groups, adj, syn, blocks)
    n = adj.shape[0]
    block_size = int(np.bincount(blocks).max())
    tried = 0
    for cap in spread_caps(n, block_size, hw):
        for squeeze in SQUEEZES:
            ref = pack_units(groups, adj, syn, hw, n, blocks, cap, squeeze)
            new = pack_pieces(pieces, core_budget(hw, cap, squeeze))
            np.testing.assert_array_equal(new, ref, err_msg=f"{name}: cap {cap}, x{squeeze}")
            tried += 1
    assert tried >= 4


@pytest.mark.parametrize("name", sorted(CASES))
def test_pack_spread_finds_the_reference_placements(name):
    groups, adj, syn, blocks, hw = CASES[name]
    new, new_problems = pack_spread(groups, adj, syn, hw, "sequential", blocks)
    ref, ref_problems = pack_spread_units(groups, adj, syn, hw, "sequential", blocks)
    assert [p.n_cores for p in new] == [p.n_cores for p in ref]
    for a, b in zip(new, ref):
        np.testing.assert_array_equal(a.unit_core, b.unit_core)
    assert bool(new_problems) == bool(ref_problems)


def test_some_case_spreads_and_some_squeezes():
    """The cases exercise what the spread search does: several placements, a squeezed one."""
    spreads = [
        len(pack_spread(g, a, s, hw, "sequential", b)[0]) for g, a, s, b, hw in CASES.values()
    ]
    assert max(spreads) >= 3
    groups, adj, syn, blocks, hw = CASES["ring, output axons"]
    placements, problems = pack_spread(groups, adj, syn, hw, "sequential", blocks)
    assert placements and any("fan_out_axons" in p for p in problems)


def test_a_block_too_big_for_any_core_is_refused_once():
    groups, adj, syn, blocks, hw = CASES["clustered sequential"]
    small = _hw("loihi1-davies", units_per_core=16, max_fan_in_axons_per_core=3)
    placements, problems = pack_spread(groups, adj, syn, small, "sequential", blocks)
    assert not placements and len(problems) == 1 and "exceeds 3" in problems[0]


def test_core_memory_array_is_core_memory():
    syn, comp, fan_in, fan_out = [10.5, 0.0, 3e5], [3, 0, 8192], [7, 0, 4096], [1, 0, 4096]
    arr = core_memory_array(np.array(syn), np.array(comp), np.array(fan_in), np.array(fan_out))
    assert arr.tolist() == [core_memory(*v) for v in zip(syn, comp, fan_in, fan_out)]


@pytest.mark.skipif(
    not placement.SHUFFLE_MATCHES_NETWORKX, reason="networkx 2.x: the packer calls networkx itself"
)
@pytest.mark.parametrize("n", [7, 40, 41, 300])
def test_shuffled_halves_is_networkx_kl_on_a_complete_graph_of_equal_weights(n):
    graph = nx.complete_graph(n)
    nx.set_edge_attributes(graph, 3.0, "weight")
    rng = np.random.default_rng(n)
    subsets = [list(range(n)), sorted(rng.choice(n, n // 2 + 1, replace=False).tolist()),
               sorted(rng.choice(n, max(2, n // 3), replace=False).tolist())]  # fmt: skip
    for (
        nodes
    ) in subsets:  # the whole graph, over half of it, under half (networkx lists those apart)
        for seed in (0, 1, 12345, 2**31 - 1):
            a, b = nx.algorithms.community.kernighan_lin_bisection(
                graph.subgraph(nodes), weight="weight", seed=seed
            )
            assert (set(a), set(b)) == shuffled_halves(nodes, n, seed)


def test_kl_groups_of_a_complete_graph_equal_networkx_s(monkeypatch):
    n = 200
    adj = sp.csr_matrix(np.ones((n, n)) - np.eye(n))
    hw = _hw(units_per_core=16)
    args = (adj, np.full(n, 2.0), np.full(n, float(n - 1)), hw, 3)
    fast = placement._kl_groups(*args)
    assert len(fast) > 8
    monkeypatch.setattr(placement, "complete_and_uniform", lambda sym: False)
    slow = placement._kl_groups(*args)
    assert [g.tolist() for g in fast] == [g.tolist() for g in slow]
    assert not complete_and_uniform(sp.csr_matrix(_clustered()))
