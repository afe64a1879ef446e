"""NIR and networkx export: weights and topology survive a write/read round trip; the rest is listed."""

import numpy as np
import pytest
import scipy.sparse as sp
from atomspark.mapping.graph_export import to_networkx
from atomspark.mapping.nir_export import export_nir, projection_matrix, read_nir_weights, to_nir
from atomspark.sim.core import AtomsparkError
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFParams
from atomspark.sim.units.vn import VNParams

nir = pytest.importorskip("nir")


def _mixed_graph(rng):
    w_in = sp.random(6, 4, density=0.5, random_state=1, format="csr")
    w_rec = rng.standard_normal((6, 6)) * (rng.random((6, 6)) < 0.4)
    g_vn = rng.standard_normal((3, 3))
    pops = [
        Population("drive", 4, LIFParams(du=0.1, dv=0.2, vth=1.0, bias=0.3)),
        Population("lif", 6, LIFParams(du=0.5, dv=0.05, vth=2.0, refractory=2)),
        Population("atoms", 3, VNParams(eta=0.1, lam=0.05, drive=np.ones(3))),
    ]
    projs = [
        Projection("drive", "lif", w_in, delays=3),
        Projection("lif", "lif", w_rec),
        Projection("atoms", "atoms", g_vn),
        Projection("lif", "atoms", rng.standard_normal((3, 6))),
    ]
    return Graph(pops, projs)


def test_nir_round_trip_keeps_weights_and_topology(tmp_path, rng):
    graph = _mixed_graph(rng)
    report = export_nir(graph, tmp_path / "net.nir")
    weights = read_nir_weights(report.path)
    assert len(weights) == len(graph.projections)
    for i, proj in enumerate(graph.projections):
        key = next(k for k in weights if k.startswith(f"proj{i}."))
        np.testing.assert_array_equal(weights[key], projection_matrix(proj).toarray())
    back = nir.read(report.path)
    assert sorted(map(tuple, back.edges)) == sorted(report.edges)
    # the delay-3 projection goes through a Delay node of 2 steps
    delay = [n for k, n in back.nodes.items() if k.endswith(".delay")]
    assert len(delay) == 1 and np.all(delay[0].delay == 2.0)


def test_lif_parameters_follow_the_euler_reading(rng):
    nir_graph, _ = to_nir(_mixed_graph(rng))
    node = nir_graph.nodes["drive"]
    np.testing.assert_allclose(node.tau_syn, 10.0)
    np.testing.assert_allclose(node.tau_mem, 5.0)
    # one Euler step of tau_mem dv/dt = (v_leak - v) + r I equals v(1-dv) + I + bias
    v, current = 0.7, 0.4
    euler = v + (1 / node.tau_mem[0]) * (node.v_leak[0] - v + node.r[0] * current)
    assert euler == pytest.approx(v * (1 - 0.2) + current + 0.3)


def test_unsupported_features_are_listed_not_dropped(rng):
    _, unsupported = to_nir(_mixed_graph(rng))
    text = "\n".join(unsupported)
    assert "atoms: unit model VNParams has no NIR primitive" in text
    assert "lif: refractory period of 2 steps" in text


def test_graph_ports_name_existing_populations(rng):
    nir_graph, _ = to_nir(_mixed_graph(rng), inputs=("drive",), outputs=("lif",))
    assert ("drive.ext", "drive") in nir_graph.edges and ("lif", "lif.spikes") in nir_graph.edges
    with pytest.raises(AtomsparkError, match="'nope': not in the graph"):
        to_nir(_mixed_graph(rng), inputs=("nope",))


def test_corrupt_nir_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.nir"
    bad.write_bytes(b"not hdf5")
    with pytest.raises(AtomsparkError, match="unreadable"):
        read_nir_weights(bad)


def test_networkx_view_has_every_unit_and_synapse(rng):
    graph = _mixed_graph(rng)
    g = to_networkx(graph)
    assert g.number_of_nodes() == graph.total_units
    assert sum(d["n_synapses"] for *_, d in g.edges(data=True)) == sum(
        p.n_synapses for p in graph.projections
    )
    adj = graph.unit_adjacency()
    assert g.number_of_edges() == adj.nnz
    w = graph.projections[3]
    s, t = 2, 1
    expected = projection_matrix(w)[t, s]
    assert g[("lif", s)][("atoms", t)]["weight"] == pytest.approx(expected)
