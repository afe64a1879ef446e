"""The direct lean LIF path (sim/kernels/lif_lean.py: delay-1 input added straight into u and u2,
weights divided by the one-step decay) against the general path.

(u + w / k) * k is u * k + w only up to rounding, and several inputs of one step are summed in
another order, so the direct path is not bit-identical. The stated tolerances: on these
networks the same spikes, step by step and unit by unit (a spike could flip only where v lands
within rounding of the threshold), and membrane voltages within 1e-9 (float64) or 1e-4 mV
(float32) of the general path's after the run; runs split in pieces equal one long run bit for
bit (the pending input lives in u and u2 between calls)."""

from __future__ import annotations

import numpy as np
import pytest
from atomspark.scenarios.runs.cuba import CubaConfig, cuba_graph, cuba_network
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFParams

V_TOL = {"float64": 1e-9, "float32": 1e-4}


def _raster(eng: Engine, steps: int, inputs=None):
    prof = eng.run(steps, inputs=inputs, record_events=True)
    return prof, eng.event_log


def _assert_close(direct: Engine, general: Engine, steps: int, dtype: str, inputs=None) -> None:
    pd, logd = _raster(direct, steps, inputs)
    pg, logg = _raster(general, steps, inputs)
    for name in logg:
        assert np.array_equal(logd[name][0], logg[name][0]), name
        assert np.array_equal(logd[name][1], logg[name][1]), name
        dv = np.abs(direct.state[name]["v"] - general.state[name]["v"]).max()
        assert dv <= V_TOL[dtype], (name, dv)
    assert pd.to_dict() == pg.to_dict()  # counters: updates, events, synaptic ops


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cuba_direct_spikes_equal_the_general_path(dtype):
    net = cuba_network(CubaConfig(n=1000, p_conn=0.08, seed=3))
    graph = cuba_graph(net, dtype)
    direct, general = Engine(graph), Engine(graph, lean=False)
    assert direct.direct[0] and not general.direct[0]
    assert [direct._fan_kind(o) for o in direct._outgoing] == ["direct", "direct"]
    fans = [direct._fan_indices(j, o) for j, o in enumerate(direct._outgoing)]
    assert all(f.dtype == np.uint16 for f in fans)  # compact rows into a lean target
    assert all(np.array_equal(f, o.indices) for f, o in zip(fans, direct._outgoing))
    _assert_close(direct, general, 4000, dtype)
    assert general.run(1).events.sum() >= 0  # engines stay usable


def _one_channel_graph(dtype: str, n: int = 45) -> Graph:
    """One channel (u2 must hold still), per-unit bias, random mixed-sign per-synapse weights,
    delay 1 from itself and from a general (unbiased) population."""
    rng = np.random.default_rng(11)
    a = LIFParams(du=0.2, dv=0.1, vth=1.0, bias=rng.uniform(0.02, 0.1, n), refractory=2,
                  dtype=dtype)  # fmt: skip
    b = LIFParams(du=0.5, dv=0.3, vth=0.6, dtype=dtype)
    w_aa = rng.normal(0.05, 0.4, (n, n)) * (rng.random((n, n)) < 0.3)
    w_ba = rng.uniform(0.1, 0.5, (n, n)) * (rng.random((n, n)) < 0.2)
    w_ab = rng.uniform(0.1, 0.5, (n, n)) * (rng.random((n, n)) < 0.2)
    return Graph(
        [Population("a", n, a), Population("b", n, b)],
        [Projection("a", "a", w_aa), Projection("b", "a", w_ba), Projection("a", "b", w_ab)],
    )


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_one_channel_external_input_and_per_synapse_weights(dtype):
    graph = _one_channel_graph(dtype)
    steps = 400
    rng = np.random.default_rng(4)
    drive = rng.uniform(0, 0.6, (steps, 45)) * (rng.random((steps, 45)) < 0.1)
    direct, general = Engine(graph), Engine(graph, lean=False)
    assert [bool(d) for d in direct.direct] == [True, False]
    _assert_close(direct, general, steps, dtype, {"a": drive, "b": drive[:, ::-1].copy()})
    assert np.all(direct.state["a"]["u2"] == 0)  # one channel: u2 holds still


def test_pieces_equal_one_long_run_bit_for_bit():
    graph = cuba_graph(cuba_network(CubaConfig(n=400, p_conn=0.1, seed=1)))
    whole, pieces = Engine(graph), Engine(graph)
    p = whole.run(900)
    counts = np.concatenate([pieces.run(k).events for k in (300, 1, 599)])
    assert np.array_equal(counts, p.events)
    for key, arr in whole.state["cuba"].items():
        assert pieces.state["cuba"][key].tobytes() == arr.tobytes(), key


def test_direct_only_where_every_input_has_delay_1_and_a_nonzero_decay():
    net = cuba_network(CubaConfig(n=64, p_conn=0.2, seed=2))
    assert not Engine(cuba_graph(net), exact=True).direct[0]  # asked for exact results
    g = cuba_graph(net)
    slow_inhibition = Projection("cuba", "cuba", g.projections[1].weights, channel=1, delays=2)
    delayed = Graph(g.populations, [g.projections[0], slow_inhibition])
    eng = Engine(delayed)
    assert eng.lean == [True] and not eng.direct[0]
    no_decay = LIFParams(du=1.0, dv=0.1, vth=1.0, bias=0.05)  # u = this step's input only
    one = Graph([Population("x", 8, no_decay)], [Projection("x", "x", np.full((8, 8), 0.1))])
    eng = Engine(one)
    assert eng.lean == [True] and not eng.direct[0]
    general = Engine(one, lean=False)
    assert eng.run(50).to_dict() == general.run(50).to_dict()


def test_exact_must_be_a_bool():
    graph = _one_channel_graph("float64", 8)
    with pytest.raises(AtomsparkError, match="exact"):
        Engine(graph, exact=1)
