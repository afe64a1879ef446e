"""Bundle writing/reading and export checks that need no Lava (run in both environments)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from atomspark.mapping.lava.bundle import from_graph, reference_run
from atomspark.mapping.lava.export import export_lava, load_bundle
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFFixedParams, LIFParams


def lif_fixed_graph(rng, weights=None) -> Graph:
    a = Population(
        "a",
        6,
        LIFFixedParams(du=300, dv=500, vth=40, bias_mant=rng.integers(0, 800, 6), bias_exp=2),
    )
    b = Population("b", 5, LIFFixedParams(du=1000, dv=200, vth=60))
    w = rng.integers(-60, 60, (5, 6)) * 2 if weights is None else weights
    rec = rng.integers(-20, 20, (5, 5)) * 2
    return Graph(
        [a, b],
        [Projection("a", "b", w, weight_exp=3), Projection("b", "b", rec, weight_exp=1)],
    )


def test_reference_run_matches_engine_spikes_bit_exactly(rng):
    """The NumPy reference with Lava's timing is the engine's delay-1 dynamics."""
    g = lif_fixed_graph(rng)
    steps = 40
    out = reference_run(from_graph(g), steps)
    prof = Engine(g).run(steps)
    for i, name in enumerate(("a", "b")):
        assert np.count_nonzero(out[name]) > 10
        assert np.array_equal(np.count_nonzero(out[name], axis=1), prof.events[:, i])
        assert np.array_equal(np.count_nonzero(out[name], axis=0), prof.unit_events[i])


def test_bundle_round_trip(tmp_path, rng):
    g = lif_fixed_graph(rng)
    out = export_lava(g, tmp_path / "bundle")
    assert {p.name for p in out.iterdir()} >= {"weights.npz", "metadata.json", "run_bundle.py"}
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["arithmetic"] == "fixed" and meta["select_tag"] == "fixed_pt"
    assert [p["name"] for p in meta["populations"]] == ["a", "b"]
    assert meta["projections"][0]["weight_exp"] == 3
    net, loaded = from_graph(g), load_bundle(out)
    for p, q in zip(net.populations, loaded.populations):
        assert p.scalars == q.scalars
        for key in p.arrays:
            assert np.array_equal(p.arrays[key], q.arrays[key])
    for c, d in zip(net.connections, loaded.connections):
        assert (c.weights != d.weights).nnz == 0 and c.weight_exp == d.weight_exp
    ref, back = reference_run(net, 25), reference_run(loaded, 25)
    assert all(np.array_equal(ref[k], back[k]) for k in ref)


def test_corrupt_or_incomplete_bundle_is_rejected(tmp_path, rng):
    out = export_lava(lif_fixed_graph(rng), tmp_path / "b")
    data = bytearray((out / "weights.npz").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (out / "weights.npz").write_bytes(bytes(data))
    with pytest.raises(AtomsparkError, match="corrupt"):
        load_bundle(out)

    out2 = export_lava(lif_fixed_graph(rng), tmp_path / "c")
    (out2 / "run_bundle.py").unlink()
    with pytest.raises(AtomsparkError, match="run_bundle.py is missing"):
        load_bundle(out2)

    out3 = export_lava(lif_fixed_graph(rng), tmp_path / "d")
    meta = json.loads((out3 / "metadata.json").read_text())
    del meta["populations"][0]["scalars"]
    (out3 / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(AtomsparkError, match="incomplete"):
        load_bundle(out3)

    (out3 / "metadata.json").write_text("{not json")
    with pytest.raises(AtomsparkError, match="not valid JSON"):
        load_bundle(out3)


def test_weights_that_do_not_fit_loihi_are_rejected(rng):
    too_big = np.full((5, 6), 300)
    with pytest.raises(AtomsparkError, match="8-bit"):
        from_graph(lif_fixed_graph(rng, weights=too_big))
    odd_mixed = np.array([[3, -4, 0, 0, 0, 0]] * 5)  # Lava would truncate 3 to 2
    with pytest.raises(AtomsparkError, match="even numbers"):
        from_graph(lif_fixed_graph(rng, weights=odd_mixed))


def test_unsupported_engine_features_are_named(rng):
    a = Population("a", 3, LIFParams(du=0.1, dv=0.1, vth=1.0))
    with pytest.raises(AtomsparkError, match="delay"):
        from_graph(Graph([a], [Projection("a", "a", np.eye(3), delays=2)]))
    r = Population("r", 3, LIFParams(du=0.1, dv=0.1, vth=1.0, refractory=2))
    with pytest.raises(AtomsparkError, match="refractory"):
        from_graph(Graph([r]))
