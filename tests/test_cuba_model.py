"""The engine's CUBA network (scenarios/runs/cuba.py) is Brian2's model step for step: exact
synaptic coupling into v and Brian2's count of refractory steps, so the benchmark's peers
simulate the same thing (same spikes on a small network)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from atomspark.scenarios.runs.cuba import CubaConfig, brian2_cuba, cuba_graph, cuba_network
from atomspark.sim.engine import Engine
from scipy.linalg import expm


@pytest.mark.parametrize("tau", [5e-3, 10e-3, 20e-3, 37e-3])
def test_synaptic_scale_is_the_exact_propagator_element(tau):
    cfg = CubaConfig()
    # d(ge, v)/dt = A (ge, v) with dge/dt = -ge / tau, dv/dt = (ge - v) / taum (leak apart)
    a = np.array([[-1 / tau, 0.0], [1 / cfg.taum, -1 / cfg.taum]])
    exact = expm(a * cfg.dt)[1, 0]
    assert cfg.synaptic_scale(tau) == pytest.approx(exact, rel=1e-12)
    assert abs(cfg.dt / cfg.taum / exact - 1) > 1e-3 or tau == cfg.taum  # the rectangle rule


def test_refractory_steps_follow_brian2():
    assert CubaConfig().refractory_steps == 49  # 5 ms at 0.1 ms: v integrates again at step 50
    assert CubaConfig(refractory=0.0).refractory_steps == 0
    assert CubaConfig(refractory=1e-4).refractory_steps == 0


def _engine_raster(net, steps: int) -> set[tuple[int, int]]:
    eng = Engine(cuba_graph(net))
    eng.run(steps, record_events=True)
    st, un = eng.event_log["cuba"]
    return set(zip(st.tolist(), un.tolist()))


@pytest.mark.slow
def test_engine_spikes_equal_brian2s_on_a_small_network():
    b2 = pytest.importorskip("brian2")
    net = cuba_network(CubaConfig(n=400, p_conn=0.05, seed=3))
    t_sim = 0.3
    steps = net.config.steps(t_sim)
    b2.prefs.core.default_float_dtype = b2.float64
    network, mon = brian2_cuba(net, "numpy")
    network.run(t_sim * b2.second)
    brian = set(zip(np.rint(np.asarray(mon.t) / net.config.dt).astype(int).tolist(),
                    np.asarray(mon.i).tolist()))  # fmt: skip
    assert len(brian) > 1000
    assert _engine_raster(net, steps) == brian  # (step, neuron) of every spike
    # one refractory step more (the engine's count before this model) is noticed
    longer = dataclasses.replace(net.config, refractory=net.config.refractory + net.config.dt)
    assert _engine_raster(dataclasses.replace(net, config=longer), steps) != brian
