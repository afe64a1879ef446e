"""RSGN nodes exported to Lava (float): the NumPy node step against the engine's Numba kernel,
the NumPy reference of Lava's timing against the engine, the bundle round trip, named select_tag
and arithmetic mismatches, and (marked lava, Python 3.10 environment) Lava's Loihi2SimCfg run
against the engine.

Run all of it with .venv-lava/bin/python -m pytest tests/test_lava_rsgn.py.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from atomspark.mapping.lava.bundle import (
    from_graph,
    reference_run,
    to_graph,
)
from atomspark.mapping.lava.export import FLOAT_TOLERANCE, export_lava, load_bundle, run_lava
from atomspark.mapping.lava.net import alpha_record
from atomspark.networks.rsgn import RSGNConfig, init_params
from atomspark.networks.rsgn_compile import NODE_POPULATION, compile_rsgn_tokens
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFFixedParams
from atomspark.sim.units.rsgn import RSGNNodeParams, rsgn_emitted, rsgn_node_step

skip_without_lava = pytest.mark.skipif(
    importlib.util.find_spec("lava") is None, reason="needs lava-nc (Python 3.10 environment)"
)
STEPS = 7
TOL = dict(rtol=0, atol=1e-12)


def rsgn_graph(mode: str, n: int = 24, d: int = 6, seed: int = 1) -> Graph:
    """A small RSGN for one token sequence; sparse mode with varied thresholds, so nodes wake
    and fall silent during the run, and every 7th stored edge at zero weight."""
    extra = dict(k_nearest=4, cutoff=0.3, temperature=0.25) if mode == "sparse" else {}
    cfg = RSGNConfig(mode=mode, n_nodes=n, dim=3, d_hidden=d, d_in=4, n_classes=3, **extra)
    p = init_params(cfg, seed)
    rng = np.random.default_rng(seed)
    p.thresholds = rng.uniform(0.05, 0.9, n)
    if mode == "sparse":
        p.edge_affinity.data[:] = rng.uniform(0.0, 1.0, p.edge_affinity.nnz)
        p.edge_affinity.data[::7] = 0.0
    return compile_rsgn_tokens(p, cfg, rng.standard_normal((6, cfg.d_in)))


def engine_trajectory(graph: Graph, steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Engine alpha (steps, N), h (steps, N, d) and pool messages (steps,)."""
    eng = Engine(graph)
    rec = tuple((NODE_POPULATION, v) for v in ("alpha", "h", "pool_messages"))
    eng.run(steps, record=rec)
    alpha, h, pool = (eng.traces[r] for r in rec)
    return alpha, h, pool[:, 0]


def wake_graph() -> Graph:
    """Three nodes; node 0 active; node 0 reaches node 1 only through a stored ZERO weight, node
    2 through nothing. The sparse event rule wakes node 1 (it received an event) and not node 2,
    although both get the same (zero) summed input."""
    params = RSGNNodeParams(
        thresholds=0.1,
        w_h=np.array([[0.5, -0.2], [0.1, 0.4]]),
        b_h=np.array([1.0, 0.5]),
        ln_gain=np.ones(2),
        ln_bias=np.zeros(2),
        pool=sp.identity(3, format="csr"),
        temperature=0.25,
        cutoff=0.3,
        alpha_init=np.array([0.9, 0.0, 0.0]),
        h_init=np.array([[1.0, -1.0], [0.0, 0.0], [0.0, 0.0]]),
    )
    w = sp.csr_matrix((np.array([0.0]), (np.array([1]), np.array([0]))), shape=(3, 3))
    pop = Population(NODE_POPULATION, 3, params)
    return Graph([pop], [Projection(NODE_POPULATION, NODE_POPULATION, w)])


# ---------------------------------------------------------------- NumPy, no Lava needed


@pytest.mark.parametrize("mode", ["sparse", "published"])
def test_numpy_node_step_equals_engine_kernel_step_by_step(mode):
    """rsgn_node_step applied to the engine's own state and events of step t-1 gives the
    kernel's state of step t (one step at a time, so errors cannot hide in the trajectory)."""
    g = rsgn_graph(mode)
    alpha, h, pool_msgs = engine_trajectory(g, STEPS)
    params = g.populations[0].params
    w_t = sp.csr_matrix(g.projections[0].weights, dtype=np.float64)
    pattern = w_t.copy()
    pattern.data[:] = 1.0
    cut = params.cutoff
    for t in range(1, STEPS):
        sent = alpha[t - 1] > cut
        m = w_t @ rsgn_emitted(alpha[t - 1], h[t - 1], cut)
        received = pattern @ sent.astype(float) > 0
        a, hh, msgs = rsgn_node_step(
            alpha[t - 1], h[t - 1], m, received, params.kernel_arrays, params.event_rule
        )
        assert np.array_equal(a == 0, alpha[t] == 0), f"silent set differs at step {t}"
        np.testing.assert_allclose(a, alpha[t], **TOL)
        np.testing.assert_allclose(hh, h[t], **TOL)
        assert msgs == pool_msgs[t]
    if mode == "sparse":  # the run exercised waking and silencing, not a frozen active set
        active = alpha > cut
        assert np.any(active[1:] & ~active[:-1]) and np.any(~active[1:] & active[:-1])
        assert 0 < active[-1].sum() < g.populations[0].size
    else:
        assert np.all(alpha[1:] > 0)  # published: every node updates every step


@pytest.mark.parametrize("mode", ["sparse", "published"])
def test_reference_of_lava_timing_matches_engine(mode):
    """reference_run (Lava's one-step Sparse delay, ignition first) follows the engine: the
    sent payloads x = alpha h of every step and alpha, within the float tolerance."""
    g = rsgn_graph(mode)
    out = reference_run(from_graph(g), STEPS)
    alpha, h, _ = engine_trajectory(g, STEPS)
    cut = g.populations[0].params.cutoff
    x = np.where((alpha > cut)[..., None], h * alpha[..., None], 0.0).reshape(STEPS, -1)
    assert out[NODE_POPULATION].shape == (STEPS, 24 * 6)
    assert np.count_nonzero(out[NODE_POPULATION]) > 0
    np.testing.assert_allclose(out[NODE_POPULATION], x, rtol=0, atol=FLOAT_TOLERANCE)
    np.testing.assert_allclose(out[alpha_record(NODE_POPULATION)], alpha, rtol=0, atol=1e-12)


def test_zero_weight_synapse_wakes_its_target_in_the_reference():
    out = reference_run(from_graph(wake_graph()), 3)
    alpha = out[alpha_record(NODE_POPULATION)]
    assert alpha[1, 1] > 0.3 and np.all(alpha[:, 2] == 0.0)
    engine_alpha = engine_trajectory(wake_graph(), 3)[0]
    np.testing.assert_allclose(alpha, engine_alpha, **TOL)


def test_bundle_round_trip_keeps_parameters_synapses_and_dynamics(tmp_path):
    g = rsgn_graph("sparse")
    net = from_graph(g)
    out = export_lava(g, tmp_path / "bundle")
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["select_tag"] == "floating_pt"
    assert meta["populations"][0]["lava_process"] == "RSGNNodes"
    assert meta["populations"][0]["scalars"]["event_rule"] is True
    assert meta["projections"][0]["payload_width"] == 6
    loaded = load_bundle(out)
    p, q = net.populations[0], loaded.populations[0]
    assert p.scalars == q.scalars and set(p.arrays) == set(q.arrays)
    for key in p.arrays:
        assert np.array_equal(p.arrays[key], q.arrays[key]), key
    w0, w1 = net.connections[0].weights, loaded.connections[0].weights
    assert w1.nnz == w0.nnz == g.projections[0].n_synapses  # stored zero weights survive
    assert np.count_nonzero(w1.data == 0) > 0 and (w0 != w1).nnz == 0
    ref, back = reference_run(net, STEPS), reference_run(loaded, STEPS)
    assert all(np.array_equal(ref[k], back[k]) for k in ref)
    a_orig = engine_trajectory(g, STEPS)[0]
    a_back = engine_trajectory(to_graph(loaded), STEPS)[0]
    assert np.array_equal(a_orig, a_back)  # the bundle rebuilds the same engine graph


def test_select_tag_and_arithmetic_mismatches_are_named():
    net = from_graph(rsgn_graph("sparse", n=10, d=3))
    with pytest.raises(AtomsparkError, match="RSGNNodes, which has only a 'floating_pt' model"):
        run_lava(net, 3, select_tag="fixed_pt")
    lif = Population("lif", 2, LIFFixedParams(du=10, dv=10, vth=5))
    with pytest.raises(AtomsparkError, match="mix arithmetic"):
        from_graph(Graph([rsgn_graph("sparse", n=10, d=3).populations[0], lif]))


# ---------------------------------------------------------------- on Lava


@pytest.mark.lava
@skip_without_lava
@pytest.mark.parametrize("mode", ["sparse", "published"])
@pytest.mark.parametrize("n, d", [(16, 4), (24, 6)])
def test_lava_rsgn_equals_engine_within_float_tolerance(mode, n, d):
    from atomspark.mapping.lava.export import verify_lava

    g = rsgn_graph(mode, n=n, d=d)
    report = verify_lava(g, STEPS)
    assert report.arithmetic == "float" and report.passed
    keys = {NODE_POPULATION, alpha_record(NODE_POPULATION), f"{NODE_POPULATION}.events"}
    assert set(report.lava_vs_engine) == keys
    assert report.lava_vs_engine[f"{NODE_POPULATION}.events"] == 0.0
    assert max(report.lava_vs_engine.values()) <= FLOAT_TOLERANCE
    assert max(report.lava_vs_reference.values()) <= FLOAT_TOLERANCE
    prof = Engine(g).run(STEPS)
    assert report.lava_events[NODE_POPULATION] == int(prof.unit_events[0].sum()) > STEPS


@pytest.mark.lava
@skip_without_lava
def test_lava_flag_connection_wakes_node_behind_zero_weight():
    outputs = run_lava(from_graph(wake_graph()), 3)
    alpha = outputs[alpha_record(NODE_POPULATION)]
    assert alpha[1, 1] > 0.3 and np.all(alpha[:, 2] == 0.0)
    np.testing.assert_allclose(alpha, engine_trajectory(wake_graph(), 3)[0], **TOL)


@pytest.mark.lava
@skip_without_lava
def test_lava_runs_a_loaded_bundle_and_matches_engine(tmp_path):
    from atomspark.mapping.lava.export import verify_lava

    out = export_lava(rsgn_graph("sparse", n=16, d=4), tmp_path / "bundle")
    report = verify_lava(out, 5)
    assert report.passed and report.lava_events[NODE_POPULATION] > 0


@pytest.mark.lava
@skip_without_lava
def test_lava_published_configuration_full_size_equals_engine():
    """The released code's configuration (N = 256 dense, d = 128, K = 5, cutoff gate only):
    ignition + K steps on Lava agree with the engine within the float tolerance."""
    from atomspark.mapping.lava.export import verify_lava

    cfg = RSGNConfig()
    g = compile_rsgn_tokens(
        init_params(cfg, 0), cfg, np.random.default_rng(0).standard_normal((64, cfg.d_in))
    )
    report = verify_lava(g, cfg.n_steps + 1)
    assert report.passed and report.lava_vs_engine[f"{NODE_POPULATION}.events"] == 0.0
    assert max(report.lava_vs_engine.values()) <= FLOAT_TOLERANCE


@pytest.mark.lava
@skip_without_lava
def test_run_bundle_entry_point_verifies_rsgn(tmp_path):
    g = rsgn_graph("sparse", n=16, d=4)
    out = export_lava(g, tmp_path / "bundle")
    proc = subprocess.run(
        [sys.executable, str(out / "run_bundle.py"), "--steps", "5", "--verify"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    events = int(Engine(g).run(5).unit_events[0].sum())
    assert f"{NODE_POPULATION}: {events} events in 5 steps" in proc.stdout
    assert "rsgn_nodes.events': 0.0" in proc.stdout
