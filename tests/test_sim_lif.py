"""LIF units: Loihi fixed point (hand values, NumPy reference, Lava), float CUBA vs Brian2."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from atomspark.scenarios.runs.cuba import CubaConfig, brian2_cuba, cuba_graph, cuba_network
from atomspark.sim import fixed_point as fx
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFFixedParams, LIFParams


def _one_step(params, inputs=None, size=1):
    eng = Engine(Graph([Population("p", size, params)]))
    ext = None if inputs is None else {"p": np.atleast_2d(inputs)}
    prof = eng.run(1, inputs=ext)
    return eng.state["p"], prof


def test_current_wraps_at_24_bits_by_hand():
    u0 = 2**23 - 10
    st, prof = _one_step(LIFFixedParams(du=0, dv=0, vth=131071, u_init=u0), [[200]])
    decayed = (u0 * 4095) >> 12  # du + 1 = 1: |u| * (4096 - 1) >> 12
    assert decayed == 8386550
    assert st["u"][0] == decayed + (200 << 6) - 2**24 == -8377866
    assert prof.wraps[0, 0] == 1 and prof.clips[0, 0] == 0


def test_negative_current_decay_truncates_toward_zero_and_wraps():
    u0 = -(2**23 - 5)
    st, prof = _one_step(LIFFixedParams(du=4094, dv=0, vth=0, u_init=u0), [[-(2**17)]])
    decayed = -((-u0 * 1) >> 12)  # effective du 4095: factor 1, sign restored after the shift
    raw = decayed - (2**17 << 6)
    assert raw <= -(2**23)
    assert st["u"][0] == raw + 2**24
    assert prof.wraps[0, 0] == 1


def test_voltage_clips_at_minus_limit_and_spike_is_strict():
    v0 = -(2**23 - 100)
    st, prof = _one_step(LIFFixedParams(du=0, dv=0, vth=10, bias_mant=-4096, bias_exp=7, v_init=v0))
    assert st["v"][0] == -(2**23 - 1)
    assert prof.clips[0, 0] == 1 and prof.events[0, 0] == 0
    # v == vth << 6 exactly does not spike; one more unit does, and resets v to 0.
    st, prof = _one_step(LIFFixedParams(du=4095, dv=4095, vth=10, bias_mant=640, bias_exp=0))
    assert st["v"][0] == 640 and prof.events[0, 0] == 0
    st, prof = _one_step(LIFFixedParams(du=4095, dv=4095, vth=10, bias_mant=641, bias_exp=0))
    assert st["v"][0] == 0 and prof.events[0, 0] == 1


def test_fixed_kernel_matches_numpy_reference_with_wraps_and_clips():
    rng = np.random.default_rng(2)
    n, steps = 12, 60
    w = fx.lava_dense_weights(rng.integers(-256, 256, (n, n)))
    params = LIFFixedParams(
        du=300,
        dv=200,
        vth=2000,
        bias_mant=rng.integers(-4096, 4096, n),
        bias_exp=rng.integers(0, 8, n),
    )
    eng = Engine(Graph([Population("p", n, params)], [Projection("p", "p", w, weight_exp=7)]))
    prof = eng.run(steps, record=(("p", "u"), ("p", "v")))
    u, v = np.zeros(n, np.int64), np.zeros(n, np.int64)
    bias = params.init_state(n)["bias"]
    a_in = np.zeros(n, np.int64)
    wraps = clips = 0
    for t in range(steps):
        u, v, s, nw, nc = fx.lif_fixed_reference_step(u, v, a_in, 300, 200, 2000, bias)
        a_in = (w[:, s].sum(axis=1)) << 7
        wraps, clips = wraps + nw, clips + nc
        assert np.array_equal(eng.traces[("p", "u")][t], u) and np.array_equal(
            eng.traces[("p", "v")][t], v
        )
        assert prof.events[t, 0] == s.sum()
    assert prof.wraps.sum() == wraps > 0
    assert prof.clips.sum() == clips


def test_lava_dense_weight_scaling():
    assert fx.lava_dense_weights(np.array([[255, -3, 7]])).tolist() == [[254, -4, 6]]
    assert fx.lava_dense_weights(np.array([[300, 7]])).tolist() == [[255, 7]]
    assert fx.lava_dense_weights(np.array([[13, 6]]), num_weight_bits=6).tolist() == [[12, 4]]
    assert fx.lava_dense_weights(np.array([[-13, -300]])).tolist() == [[-13, -255]]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(du=4096, dv=0, vth=1), "du"),
        (dict(du=0, dv=-1, vth=1), "dv"),
        (dict(du=0, dv=0, vth=2**17), "vth"),
        (dict(du=0, dv=0, vth=1, bias_mant=5000), "bias_mant"),
        (dict(du=0, dv=0, vth=1, bias_exp=8), "bias_exp"),
        (dict(du=0.5, dv=0, vth=1), "du"),
    ],
)
def test_fixed_bit_widths_are_validated(kwargs, match):
    with pytest.raises(AtomsparkError, match=match):
        Population("p", 3, LIFFixedParams(**kwargs))


def test_bad_graph_inputs_are_named():
    pop = Population("a", 3, LIFParams(du=0.1, dv=0.1, vth=1.0))
    with pytest.raises(AtomsparkError, match="NaN"):
        Projection("a", "a", np.array([[np.nan, 0, 0]] * 3))
    with pytest.raises(AtomsparkError, match="expected shape"):
        Graph([pop], [Projection("a", "a", np.ones((2, 3)))])
    with pytest.raises(AtomsparkError, match="delays"):
        Projection("a", "a", np.ones((3, 3)), delays=0)
    with pytest.raises(AtomsparkError, match="ring buffer"):
        Graph([pop], [Projection("a", "a", np.ones((3, 3)), delays=5)], ring_length=4)
    with pytest.raises(AtomsparkError, match="unknown population"):
        Graph([pop], [Projection("a", "b", np.ones((3, 3)))])
    with pytest.raises(AtomsparkError, match="channel"):
        Graph([pop], [Projection("a", "a", np.ones((3, 3)), channel=1)])
    with pytest.raises(AtomsparkError, match="dv"):
        Population("b", 2, LIFParams(du=0.1, dv=1.5, vth=1.0))
    with pytest.raises(AtomsparkError, match="inputs"):
        Engine(Graph([pop])).run(2, inputs={"a": np.ones((3, 3))})


def test_delays_and_synops_counted_by_hand():
    # Unit 0 of "src" gets one input pulse at step 0 and spikes then only (du = dv = 1: no
    # memory); it fans out to 3 targets with delays 1, 2, 3: one event, 3 synops at step 0, and
    # each target receives its input exactly `delay` steps later.
    src = Population("src", 2, LIFParams(du=1.0, dv=1.0, vth=0.5))
    tgt = Population("tgt", 3, LIFParams(du=1.0, dv=1.0, vth=10.0))
    w = np.zeros((3, 2))
    w[:, 0] = [1.0, 2.0, 3.0]
    d = np.ones((3, 2), int)
    d[:, 0] = [1, 2, 3]
    eng = Engine(Graph([src, tgt], [Projection("src", "tgt", w, delays=d)]))
    pulse = np.zeros((5, 2))
    pulse[0, 0] = 1.0
    prof = eng.run(5, inputs={"src": pulse}, record=(("tgt", "u"),))
    assert prof.events[:, 0].tolist() == [1, 0, 0, 0, 0]
    assert prof.synops[:, 0].tolist() == [3, 0, 0, 0, 0]
    u = eng.traces[("tgt", "u")]
    assert u[1].tolist() == [1.0, 0.0, 0.0]
    assert u[2].tolist() == [0.0, 2.0, 0.0]
    assert u[3].tolist() == [0.0, 0.0, 3.0]
    # a target is updated when its input arrives and once more while its state decays to 0
    assert prof.updates[:, 1].tolist() == [0, 1, 2, 2, 1]
    assert prof.unit_events[0].tolist() == [1, 0]


def test_profile_round_trip_and_determinism(tmp_path):
    from atomspark.sim.profile import Profile

    rng = np.random.default_rng(4)
    w = rng.normal(0, 0.3, (30, 30)) * (rng.random((30, 30)) < 0.2)
    params = LIFParams(du=0.2, dv=0.1, vth=1.0, bias=rng.uniform(0, 0.2, 30), refractory=2)
    runs = []
    for _ in range(2):
        eng = Engine(Graph([Population("p", 30, params)], [Projection("p", "p", w, delays=2)]))
        runs.append((eng.run(100), eng.state["p"]["v"].tobytes()))
    assert runs[0][1] == runs[1][1]
    assert runs[0][0].to_dict() == runs[1][0].to_dict()
    prof = runs[0][0]
    assert prof.events.sum() > 0
    prof.to_json(tmp_path / "p.json")
    back = Profile.from_json(tmp_path / "p.json")
    assert back.to_dict() == prof.to_dict()
    assert back.summary()["total_events"] == int(prof.events.sum())
    adj = eng.graph.unit_adjacency()
    assert adj.shape == (30, 30) and adj.nnz == np.count_nonzero(w)
    assert np.array_equal(adj.toarray() != 0, w.T != 0)


CUBA_RATE_TOL = 0.02  # the issue's target; the graph is Brian2's model (tests/test_cuba_model.py)


@pytest.mark.slow
def test_cuba_rate_matches_brian2():
    b2 = pytest.importorskip("brian2")
    t_sim = 0.5
    net = cuba_network(CubaConfig())
    network, mon = brian2_cuba(net, target="numpy")
    network.run(t_sim * b2.second)
    n = net.config.n
    brian_rate = mon.num_spikes / n / t_sim

    prof = Engine(cuba_graph(net)).run(net.config.steps(t_sim))
    rate = prof.events.sum() / n / t_sim
    assert brian_rate > 1.0
    assert abs(rate - brian_rate) / brian_rate < CUBA_RATE_TOL, (rate, brian_rate)
    # the tolerance is tight enough to notice a model error: without the 5 ms refractory
    # period the engine's rate is ~8 % higher and fails it
    no_refr = dataclasses.replace(net, config=dataclasses.replace(net.config, refractory=0.0))
    wrong = Engine(cuba_graph(no_refr)).run(net.config.steps(t_sim)).events.sum() / n / t_sim
    assert abs(wrong - brian_rate) / brian_rate > CUBA_RATE_TOL, (wrong, brian_rate)
    assert prof.synops.sum() == sum(
        int(c) * d for c, d in zip(prof.unit_events[0], np.bincount(net.pre, minlength=n))
    )
