"""LIF dense sweep vs sparse (list-driven) update: same units, same arithmetic, same spike order.

Engine(dense_fraction=0) always sweeps all units, dense_fraction=None never does; the default
switches per step. All three must give bit-identical states, counters and event logs, and the
float sweep must agree with a plain NumPy LIF."""

from __future__ import annotations

import numpy as np
import pytest
from atomspark.sim import fixed_point as fx
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFFixedParams, LIFParams

MODES = (0.0, None, 0.15)  # always dense, always sparse, switching per step (the default)


def _run(graph: Graph, steps: int, inputs: dict, dense_fraction):
    eng = Engine(graph, dense_fraction=dense_fraction)
    prof = eng.run(steps, inputs=inputs, record_events=True)
    return eng, prof


def _assert_same_runs(runs) -> None:
    (e0, p0), *rest = runs
    for eng, prof in rest:
        assert prof.to_dict() == p0.to_dict()
        for name, st in e0.state.items():
            for key, arr in st.items():
                assert eng.state[name][key].tobytes() == arr.tobytes(), (name, key)
        for name, (steps, units) in e0.event_log.items():
            assert np.array_equal(eng.event_log[name][0], steps)
            assert np.array_equal(eng.event_log[name][1], units)


def _float_graph(rng, n: int, dtype: str) -> Graph:
    """Two channels with random mixed-sign weights (summation order matters), refractoriness,
    a bias on only a third of the units, and a second population fed with mixed delays."""
    w_e = rng.uniform(0.05, 0.6, (n, n)) * (rng.random((n, n)) < 0.3)
    w_i = -rng.uniform(0.05, 0.9, (n, n)) * (rng.random((n, n)) < 0.2)
    bias = np.where(np.arange(n) % 3 == 0, rng.uniform(0.05, 0.15, n), 0.0)
    a = LIFParams(du=0.3, du2=0.15, dv=0.1, vth=1.0, bias=bias, refractory=3, dtype=dtype)
    b = LIFParams(du=0.5, dv=0.2, vth=0.7, v_reset=-0.1, dtype=dtype)
    w_ab = rng.normal(0, 0.5, (n // 2, n)) * (rng.random((n // 2, n)) < 0.4)
    delays = rng.integers(1, 4, w_ab.shape)
    return Graph(
        [Population("a", n, a), Population("b", n // 2, b)],
        [
            Projection("a", "a", w_e, channel=0),
            Projection("a", "a", w_i, channel=1, delays=2),
            Projection("a", "b", w_ab, delays=delays),
        ],
    )


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_float_dense_and_sparse_sweeps_are_bit_identical(dtype):
    rng = np.random.default_rng(11)
    n, steps = 40, 150
    graph = _float_graph(rng, n, dtype)
    drive = rng.uniform(0, 0.8, (steps, n)) * (rng.random((steps, n)) < 0.1)
    runs = [_run(graph, steps, {"a": drive}, mode) for mode in MODES]
    _assert_same_runs(runs)
    prof = runs[0][1]
    assert prof.events[:, 0].sum() > 20 and prof.events[:, 1].sum() > 5
    # the idle units were not counted as updates: fewer updates than units x steps
    assert 0 < prof.updates[:, 1].sum() < steps * (n // 2)
    # the forced modes really took their paths: a dense sweep leaves the pending list stale
    assert runs[0][0].buffers[0].pcount[1] == 1 and runs[1][0].buffers[0].pcount[1] == 0


def test_switching_between_sweeps_rebuilds_the_pending_list():
    # du = dv = 1: no memory, so a unit is pending only while its input is in u. Input to every
    # unit forces dense steps (dense_min 10 of 20); input to two units, sparse steps that must
    # first rebuild the pending list the dense sweep left stale.
    n, steps = 20, 12
    params = LIFParams(du=1.0, dv=1.0, vth=0.75)
    w = np.eye(n, k=1) * 0.5  # unit i + 1 drives unit i below threshold
    graph = Graph([Population("p", n, params)], [Projection("p", "p", w)])
    drive = np.zeros((steps, n))
    drive[0] = 0.5
    drive[3] = 1.0
    drive[4, [2, 7]] = 1.0
    drive[8] = 0.5
    runs = [_run(graph, steps, {"p": drive}, mode) for mode in (0.5, None)]
    _assert_same_runs(runs)
    eng, prof = runs[0]
    assert prof.events[:, 0].tolist() == [0, 0, 0, 20, 2, 0, 0, 0, 0, 0, 0, 0]
    assert eng.event_log["p"][1][20:].tolist() == [2, 7]
    # step 5: units 0..18 still hold u = 0.5 plus units 1, 6 hit by 2, 7; step 6: only 1 and 6
    assert prof.updates[:, 0].tolist() == [20, 20, 0, 20, 20, 19, 2, 0, 20, 20, 0, 0]
    assert prof.active[:, 0].tolist() == [20, 0, 0, 20, 19, 2, 0, 0, 20, 0, 0, 0]


def test_negative_threshold_does_not_fire_idle_units_in_a_dense_sweep():
    # v = 0 > vth: a unit at rest is not visited by the event-driven update, so it must not spike
    params = LIFParams(du=1.0, dv=1.0, vth=-0.5)
    graph = Graph([Population("p", 10, params)])
    drive = np.zeros((3, 10))
    drive[1, :6] = 0.2
    runs = [_run(graph, 3, {"p": drive}, mode) for mode in (0.0, None)]
    _assert_same_runs(runs)
    # step 2: units 0..5 are pending (u = 0.2 from step 1) and fire again at v = 0; 6..9 never
    assert runs[0][1].events[:, 0].tolist() == [0, 6, 6]
    assert runs[0][1].unit_events[0].tolist() == [2] * 6 + [0] * 4


def _numpy_lif(w, bias, ku, kv, vth, refractory, v0, steps):
    """Plain NumPy float LIF, one channel, delay 1 (same update order as the engine)."""
    n = v0.size
    u, v, refr = np.zeros(n), v0.copy(), np.zeros(n, np.int64)
    spikes = np.zeros(n)
    raster = []
    for _ in range(steps):
        u = u * ku + w @ spikes
        held = refr > 0
        refr[held] -= 1
        v = np.where(held, 0.0, v * kv + u + bias)
        fired = ~held & (v > vth)
        v[fired] = 0.0
        refr[fired] = refractory
        spikes = fired.astype(float)
        raster.append(fired.copy())
    return np.array(raster), u, v


def test_dense_float_sweep_matches_numpy_lif():
    rng = np.random.default_rng(5)
    n, steps = 50, 200
    w = rng.normal(0.0, 0.25, (n, n)) * (rng.random((n, n)) < 0.3)
    bias = rng.uniform(0.02, 0.12, n)
    v0 = rng.uniform(0, 1, n)
    params = LIFParams(du=0.2, dv=0.05, vth=1.0, bias=bias, refractory=4, v_init=v0)
    graph = Graph([Population("p", n, params)], [Projection("p", "p", w)])
    eng = Engine(graph, dense_fraction=0, exact=True)  # u after the run: no pending input in it
    prof = eng.run(steps, record_events=True)
    raster, u, v = _numpy_lif(w, bias, 0.8, 0.95, 1.0, 4, v0, steps)
    assert raster.sum() > 100
    assert np.array_equal(prof.events[:, 0], raster.sum(axis=1))
    steps_log, units_log = eng.event_log["p"]
    assert np.array_equal(np.nonzero(raster), (steps_log, units_log))
    np.testing.assert_allclose(eng.state["p"]["u"], u, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(eng.state["p"]["v"], v, rtol=1e-12, atol=1e-12)
    assert prof.updates[:, 0].tolist() == [n] * steps


def test_fixed_point_dense_and_sparse_sweeps_are_bit_identical_with_wraps_and_clips():
    rng = np.random.default_rng(8)
    n, steps = 30, 80
    w = fx.lava_dense_weights(rng.integers(-256, 256, (n, n)) * (rng.random((n, n)) < 0.5))
    params = LIFFixedParams(
        du=300,
        dv=200,
        vth=2000,
        bias_mant=np.where(np.arange(n) < 10, rng.integers(-3000, 3000, n), 0),
        bias_exp=6,
        u_init=rng.integers(-(2**23) + 1, 2**23, n) * (np.arange(n) % 2),
    )
    graph = Graph([Population("p", n, params)], [Projection("p", "p", w, weight_exp=7, delays=2)])
    drive = rng.integers(-(2**16), 2**16, (steps, n)) * (rng.random((steps, n)) < 0.05)
    runs = [_run(graph, steps, {"p": drive}, mode) for mode in MODES]
    _assert_same_runs(runs)
    prof = runs[0][1]
    assert prof.events.sum() > 0 and prof.wraps.sum() > 0 and prof.clips.sum() > 0


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan")])
def test_dense_fraction_is_validated(bad):
    graph = Graph([Population("p", 3, LIFParams(du=0.1, dv=0.1, vth=1.0))])
    with pytest.raises(AtomsparkError, match="dense_fraction"):
        Engine(graph, dense_fraction=bad)
