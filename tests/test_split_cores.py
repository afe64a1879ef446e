"""Split RSGN cores (mapping/split_cores.py): the per-core costs equal a count over the layout's
every connection (mapping/lava/rsgn_split.channels) on small graphs; the search finds block sizes
that fit the released published model on Loihi 2, counting every stored copy of W_h, and says
plainly when nothing fits."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from atomspark.mapping.hardware import load_hardware
from atomspark.mapping.lava.bundle import from_graph
from atomspark.mapping.lava.rsgn_split import KINDS, channels, kind_sizes, split_model
from atomspark.mapping.quantize import quantize_rsgn_graph
from atomspark.mapping.split_cores import (
    AXON_ENTRY_BYTES,
    STATE_WORD_BYTES,
    SplitBlocks,
    assign_cores,
    node_order,
    search_blocks,
    split_core_costs,
    split_margins,
)
from test_rsgn_split_layout import released_graph, small_graph

HW = load_hardware("loihi2")


def brute_force(model, cores):
    """Synapses, input and output axons per core, counted entry by entry over every channel."""
    core_of = {k: np.zeros(s, np.int64) for k, s in kind_sizes(model).items()}
    for c in cores:
        core_of[c["kind"]][c["index"]] = c["core"]
    n_cores = 1 + max(c["core"] for c in cores)
    syn = np.zeros(n_cores, np.int64)
    fan_in, fan_out = set(), set()
    for ch in channels(model):
        coo = ch.weights.tocoo()
        tgt_core = core_of[ch.target][coo.row]
        src_core = core_of[ch.source][coo.col]
        syn += np.bincount(tgt_core, minlength=n_cores)
        port = (ch.source, ch.source_port)
        fan_in |= {(port, int(s), int(t)) for s, t in zip(coo.col, tgt_core)}
        fan_out |= {
            (port, int(s), int(sc), int(t)) for s, sc, t in zip(coo.col, src_core, tgt_core)
        }
    fi = np.bincount([t for _, _, t in fan_in], minlength=n_cores)
    fo = np.bincount([sc for _, _, sc, _ in fan_out], minlength=n_cores)
    return syn, fi, fo


@pytest.mark.parametrize("unit", [None, {}, {"split_w_h": True}])
@pytest.mark.parametrize("mode", ["published", "sparse"])
def test_costs_count_every_connection(mode, unit):
    _, graph = small_graph(mode, n=20, d=8)
    g = graph if unit is None else quantize_rsgn_graph(graph, **unit)
    model = split_model(from_graph(g))
    order = node_order(model.w_t, model.pool)
    for blocks in (SplitBlocks(6, 3, 7), SplitBlocks(20, 8, 20), SplitBlocks(1, 1, 1)):
        cores = assign_cores(model.n, model.d, blocks, order)
        costs = split_core_costs(model, blocks, order, HW)
        syn, fi, fo = brute_force(model, cores)
        assert [c.core for c in costs] == list(range(len(costs)))
        assert np.array_equal([c.synapses for c in costs], syn)
        assert np.array_equal([c.fan_in_axons for c in costs], fi)
        assert np.array_equal([c.fan_out_axons for c in costs], fo)
        sizes = {c["core"]: 0 for c in cores}
        for c in cores:
            sizes[c["core"]] += c["index"].size
        assert [c.compartments for c in costs] == [sizes[k] for k in sorted(sizes)]
        for c in costs:
            assert c.memory_bytes == c.synapses * HW.limits.bytes_per_synapse + (
                c.state_words * STATE_WORD_BYTES
                + (c.fan_in_axons + c.fan_out_axons) * AXON_ENTRY_BYTES
            )
    assert set(KINDS) == {"sum", "transform", "norm"}


def test_search_fits_the_released_model_with_every_copy_of_w_h():
    graph, _ = released_graph("released/hierarchical-rsgn-seed42.npz")
    one = split_model(from_graph(quantize_rsgn_graph(graph, per_target_w=True)))
    two = split_model(from_graph(quantize_rsgn_graph(graph, split_w_h=True, per_target_w=True)))
    found = {}
    for name, model in (("8-bit", one), ("two-part", two)):
        s = search_blocks(model, HW)
        assert s.fits and not s.problems
        assert min(split_margins(s.costs, HW).values()) >= 0.0
        node = [c for c in s.costs if c.kind == "node"]
        d = model.d
        wh_copies = 2 if name == "two-part" else 1
        # every node's copy of W_h (both parts) is stored on its node core
        assert all(c.synapses >= wh_copies * c.nodes * d * d for c in node)
        found[name] = s
    two_node = max(c.memory_bytes for c in found["two-part"].costs if c.kind == "node")
    one_node = max(c.memory_bytes for c in found["8-bit"].costs if c.kind == "node")
    assert two_node > one_node + found["two-part"].blocks.nodes_per_core * 128 * 128 * 0.99


def test_search_says_when_nothing_fits():
    _, graph = small_graph("published", n=20, d=8)
    model = split_model(from_graph(graph))
    tiny = dataclasses.replace(
        HW, limits=dataclasses.replace(HW.limits, max_fan_in_axons_per_core=8)
    )
    s = search_blocks(model, tiny)
    assert not s.fits and s.blocks is None and any("fan_in_axons" in p for p in s.problems)


def test_deployment_report_shows_the_split_cores_the_search_counts():
    from atomspark.mapping.deployment import deployment_report

    graph, _ = released_graph("released/hierarchical-rsgn-seed42.npz")
    g = quantize_rsgn_graph(graph, split_w_h=True, per_target_w=True)
    rep = deployment_report(g, "loihi2")
    search = search_blocks(split_model(from_graph(g)), HW)
    assert rep.fits and rep.layout == "split" and len(rep.cores) == len(search.costs)
    assert [c.synaptic_memory_bytes for c in rep.cores] == [c.memory_bytes for c in search.costs]
    assert any(n.startswith("split layout microcode:") for n in rep.notes)
