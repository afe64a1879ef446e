"""RSGN nodes on the event-driven engine against the NumPy reference (networks/rsgn/dynamics.py):
step-by-step equality of alpha and h, message counts, the event rule, cost that follows the
active nodes, the published (dense) configuration, determinism and input validation."""

from __future__ import annotations

import numpy as np
import pytest
from atomspark.networks.rsgn import RSGNConfig, forward, init_params, readout
from atomspark.networks.rsgn.dynamics import (
    ignition,
    inhibition_neighbourhood,
    initial_state,
    out_degrees,
    propagate,
)
from atomspark.networks.rsgn_compile import (
    NODE_POPULATION,
    compile_rsgn,
    compile_rsgn_tokens,
    node_params,
)
from atomspark.networks.sample_runner import propagate_on_engine
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFParams
from atomspark.sim.units.rsgn import RSGNNodeParams

TOL = dict(rtol=1e-12, atol=1e-12)
CASES = [  # (n_nodes, d_hidden, connectivity, seed)
    (30, 6, dict(k_nearest=4), 0),
    (60, 5, dict(radius=1.0), 1),
    (45, 8, dict(k_nearest=6, radius=1.5), 2),
]


def _model(n, d, conn, seed, mode="sparse", n_steps=5):
    """A small model with varied thresholds, levels and affinities (some edges at zero)."""
    extra = dict(conn, cutoff=0.3, temperature=0.25) if mode == "sparse" else {}
    cfg = RSGNConfig(
        mode=mode, n_nodes=n, dim=3, d_hidden=d, d_in=4, n_classes=3, n_steps=n_steps, **extra
    )
    p = init_params(cfg, seed)
    rng = np.random.default_rng(seed)
    p.thresholds = rng.uniform(0.05, 0.9, n)
    p.levels = rng.uniform(0.0, 1.0, n)
    if mode == "sparse":
        p.edge_affinity.data[:] = rng.uniform(0.0, 1.0, p.edge_affinity.nnz)
        p.edge_affinity.data[::7] = 0.0  # stored edges with zero weight still carry messages
    return p, cfg


def _ignite(p, cfg, b=2, seed=0):
    x = np.random.default_rng(100 + seed).standard_normal((b, 6, cfg.d_in))
    a0 = ignition(p, cfg, x)
    return a0, initial_state(p, cfg, x, a0)


def _reference_trajectory(p, cfg, a, h, k_steps):
    """Reference states after each step, and its per-step message and active counts."""
    alphas, hs, msgs, act = [], [], [], []
    for _ in range(k_steps):
        r = propagate(p, cfg, a, h, n_steps=1)
        a, h = r.alpha, r.h
        alphas.append(a)
        hs.append(h)
        msgs.append(r.messages[0])
        act.append(r.active[0])
    return np.array(alphas), np.array(hs), np.array(msgs), np.array(act)


@pytest.mark.parametrize("n, d, conn, seed", CASES)
def test_sparse_engine_equals_reference_step_by_step(n, d, conn, seed):
    p, cfg = _model(n, d, conn, seed)
    a0, h0 = _ignite(p, cfg, seed=seed)
    eng = propagate_on_engine(p, cfg, a0, h0)
    ra, rh, rmsg, ract = _reference_trajectory(p, cfg, a0, h0, cfg.n_steps)
    for k in range(cfg.n_steps):
        assert np.array_equal(eng.alpha[k] == 0, ra[k] == 0), f"silent set differs at step {k}"
        np.testing.assert_allclose(eng.alpha[k], ra[k], **TOL, err_msg=f"alpha, step {k}")
        np.testing.assert_allclose(eng.h[k], rh[k], **TOL, err_msg=f"h, step {k}")
    assert np.array_equal(eng.messages, rmsg)
    assert np.array_equal(eng.active, ract)
    # the trajectory is not trivial: nodes switch on and off over the steps
    on = np.concatenate([a0[None] > 0, ra > 0])
    assert np.any(~on[:-1] & on[1:]) and np.any(on[:-1] & ~on[1:])


def test_messages_are_out_degrees_of_nodes_above_cutoff_and_events_only_from_them():
    p, cfg = _model(*CASES[1])
    a0, h0 = _ignite(p, cfg, b=1, seed=1)
    degree = out_degrees(p, cfg)
    engine = Engine(compile_rsgn(p, cfg, a0[0], h0[0]))
    st, buf = engine.state[NODE_POPULATION], engine.buffers[0]
    for k in range(cfg.n_steps):
        # engine step 0 sends the ignition; step k >= 1 updates, then sends the new outputs
        prof = engine.run(1)
        alpha, h = st["alpha"], st["h"]
        above = np.flatnonzero(alpha > cfg.cutoff)
        sent = np.sort(buf.emit_idx[: buf.n_emit])
        assert np.array_equal(sent, above), f"emitters at engine step {k}"
        order = np.argsort(buf.emit_idx[: buf.n_emit])
        payload = buf.emit_val[: buf.n_emit][order]
        np.testing.assert_array_equal(payload, h[above] * alpha[above, None])
        assert prof.synops[0, 0] == degree[above].sum()
        assert prof.events[0, 0] == above.size
        assert prof.payload_bits[0, 0] == above.size * 64 * cfg.d_hidden
        # exact silence: every node is either off (alpha = 0, h = 0) or above the cutoff
        assert np.all((alpha == 0) | (alpha > cfg.cutoff))
        assert np.all(h[alpha == 0] == 0)


def test_updates_follow_active_nodes_and_their_targets():
    p, cfg = _model(*CASES[0])
    a0, h0 = _ignite(p, cfg, b=1)
    engine = Engine(compile_rsgn(p, cfg, a0[0], h0[0]))
    engine.run(1)  # ignition
    w = p.edge_affinity
    for _ in range(3):
        alpha = engine.state[NODE_POPULATION]["alpha"].copy()
        gated = alpha > cfg.cutoff
        received = np.zeros(cfg.n_nodes, bool)
        for i in np.flatnonzero(gated):
            received[w.indices[w.indptr[i] : w.indptr[i + 1]]] = True
        prof = engine.run(1)
        assert prof.updates[0, 0] == np.count_nonzero(gated | received)


@pytest.mark.parametrize("mode", ["sparse", "published"])
def test_engine_cost_grows_with_active_nodes_not_n(mode):
    """Five active nodes; N x4. Sparse (k nearest): same synops and a bounded number of updates;
    published: every node has N-1 synapses and every node updates."""
    synops, updates = [], []
    for n in (32, 128):
        cfg = RSGNConfig(
            mode=mode,
            n_nodes=n,
            dim=3,
            d_hidden=4,
            d_in=4,
            n_classes=3,
            k_nearest=6 if mode == "sparse" else None,
        )
        p = init_params(cfg, 7)
        alpha = np.zeros(n)
        alpha[:5] = 0.8
        h = np.ones((n, cfg.d_hidden)) * alpha[:, None]
        prof = Engine(compile_rsgn(p, cfg, alpha, h)).run(2)
        synops.append(int(prof.synops[0, 0]))
        updates.append(int(prof.updates[1, 0]))
    if mode == "sparse":
        assert synops == [5 * 6, 5 * 6]
        assert all(5 <= u <= 5 + 5 * 6 for u in updates)
    else:
        assert synops == [5 * 31, 5 * 127]
        assert updates == [32, 128]


def test_published_engine_equals_reference_and_is_effectively_dense():
    p, cfg = _model(24, 5, {}, 3, mode="published", n_steps=4)
    a0, h0 = _ignite(p, cfg, seed=3)
    eng = propagate_on_engine(p, cfg, a0, h0)
    ra, rh, rmsg, ract = _reference_trajectory(p, cfg, a0, h0, cfg.n_steps)
    np.testing.assert_allclose(eng.alpha, ra, **TOL)
    np.testing.assert_allclose(eng.h, rh, **TOL)
    assert np.array_equal(eng.messages, rmsg)
    assert np.array_equal(eng.active, ract)
    n = cfg.n_nodes
    # after the first step every node passes the 0.01 gate: every node emits to all N-1 others
    assert np.all(eng.events[1:] == n)
    assert np.all(eng.messages[1:] == n * (n - 1))
    assert np.all(eng.updates == n)
    pools = inhibition_neighbourhood(p, cfg)
    assert np.all(eng.pool_messages == int(pools.sum()))  # every node reaches all its pools


def test_tokens_to_scores_match_reference_forward():
    p, cfg = _model(*CASES[2])
    x = np.random.default_rng(9).standard_normal((6, cfg.d_in))
    engine = Engine(compile_rsgn_tokens(p, cfg, x))
    engine.run(cfg.n_steps + 1)
    st = engine.state[NODE_POPULATION]
    scores, _ = readout(p, st["alpha"][None], st["h"][None])
    ref = forward(p, cfg, x[None])
    np.testing.assert_allclose(scores, ref.scores, **TOL)


def test_split_runs_and_repeated_runs_are_identical():
    p, cfg = _model(*CASES[1])
    a0, h0 = _ignite(p, cfg, b=1, seed=4)
    graph = compile_rsgn(p, cfg, a0[0], h0[0])
    whole = Engine(graph)
    prof = whole.run(6)
    parts = Engine(graph)
    p1, p2 = parts.run(2), parts.run(4)
    for var in ("alpha", "h"):
        assert np.array_equal(whole.state[NODE_POPULATION][var], parts.state[NODE_POPULATION][var])
    assert np.array_equal(prof.synops, np.concatenate([p1.synops, p2.synops]))
    again = propagate_on_engine(p, cfg, a0, h0)
    first = propagate_on_engine(p, cfg, a0, h0)
    assert np.array_equal(again.alpha, first.alpha) and np.array_equal(again.h, first.h)
    assert np.array_equal(again.messages, first.messages)


def test_nodes_below_cutoff_with_state_are_silenced_like_the_reference():
    """Initial activations at or below the cutoff are not gated; unless they receive a message
    the reference zeroes them, and so must the engine (they are pending on the first update)."""
    p, cfg = _model(*CASES[0])
    a0, h0 = _ignite(p, cfg, b=1)
    rng = np.random.default_rng(5)
    low = rng.choice(cfg.n_nodes, 8, replace=False)
    a0[0, low] = cfg.cutoff * rng.uniform(0.2, 1.0, 8)
    h0[0, low] = rng.standard_normal((8, cfg.d_hidden))
    eng = propagate_on_engine(p, cfg, a0, h0, n_steps=2)
    ra, rh, rmsg, _ = _reference_trajectory(p, cfg, a0, h0, 2)
    np.testing.assert_allclose(eng.alpha, ra, **TOL)
    np.testing.assert_allclose(eng.h, rh, **TOL)
    assert np.array_equal(eng.messages, rmsg)


def _unit(n=4, d=3, **kw):
    base = dict(
        thresholds=0.5,
        w_h=np.eye(d),
        b_h=np.zeros(d),
        ln_gain=np.ones(d),
        ln_bias=np.zeros(d),
        pool=np.eye(n),
    )
    base.update(kw)
    return Population("rsgn", n, RSGNNodeParams(**base))


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(w_h=np.ones((3, 2))), "rsgn.w_h: expected a square"),
        (dict(b_h=np.zeros(2)), r"rsgn.b_h: expected shape \(3,\)"),
        (dict(thresholds=np.zeros(5)), "rsgn.thresholds: expected a scalar or shape"),
        (dict(pool=np.full((4, 4), 0.5)), "rsgn.pool: entries must be 0 or 1"),
        (dict(pool=np.eye(3)), r"rsgn.pool: expected shape \(4, 4\)"),
        (dict(alpha_init=np.full(4, 1.5)), "rsgn.alpha_init: activations must lie in"),
        (dict(h_init=np.zeros((4, 2))), r"rsgn.h_init: expected a scalar or shape \(4, 3\)"),
        (dict(cutoff=1.0), "rsgn.cutoff: must lie in"),
        (dict(temperature=0.0), "rsgn.temperature"),
        (dict(event_rule="yes"), "rsgn.event_rule"),
        (dict(w_h=np.full((3, 3), np.nan)), "rsgn.w_h: contains 9 NaN"),
    ],
)
def test_bad_unit_parameters_are_named(kw, match):
    with pytest.raises(AtomsparkError, match=match):
        _unit(**kw)


def test_bad_graphs_runs_and_compiler_inputs_are_rejected():
    pop = _unit()
    lif = Population("lif", 4, LIFParams(du=0.1, dv=0.1, vth=1.0))
    with pytest.raises(AtomsparkError, match=r"lif->rsgn: source events carry payload shape"):
        Graph([pop, lif], [Projection("lif", "rsgn", np.eye(4))])
    engine = Engine(Graph([pop]))
    with pytest.raises(AtomsparkError, match="rsgn units take no external input"):
        engine.run(1, inputs={"rsgn": np.ones((1, 4))})
    p, cfg = _model(*CASES[0])
    a0, h0 = _ignite(p, cfg, b=1)
    with pytest.raises(AtomsparkError, match="alpha0: expected 1"):
        node_params(p, cfg, a0, h0[0])
    with pytest.raises(AtomsparkError, match="h: expected shape"):
        compile_rsgn(p, cfg, a0[0], h0[0, :5])
    with pytest.raises(AtomsparkError, match="alpha: activations must lie in"):
        compile_rsgn(p, cfg, a0[0] + 2.0, h0[0])
    with pytest.raises(AtomsparkError, match="n_steps"):
        propagate_on_engine(p, cfg, a0, h0, n_steps=0)


@pytest.mark.parametrize("mode", ["sparse", "published"])
def test_resting_subtracted_threshold_on_the_engine_equals_the_reference(mode):
    """threshold_rule "resting-subtracted": the engine's node update subtracts the same per-node
    resting value as the reference, step by step; some nodes stay active, others fall silent."""
    import dataclasses

    p, cfg = _model(*CASES[0]) if mode == "sparse" else _model(24, 5, {}, 3, mode="published")
    cfg = dataclasses.replace(cfg, threshold_rule="resting-subtracted", temperature=0.25)
    p.thresholds[:] = np.random.default_rng(5).uniform(-0.2, 0.4, cfg.n_nodes)
    a0, h0 = _ignite(p, cfg, seed=0)
    eng = propagate_on_engine(p, cfg, a0, h0)
    ra, rh, rmsg, _ = _reference_trajectory(p, cfg, a0, h0, cfg.n_steps)
    np.testing.assert_allclose(eng.alpha, ra, **TOL)
    np.testing.assert_allclose(eng.h, rh, **TOL)
    assert np.array_equal(eng.messages, rmsg)
    last = ra[-1]
    assert np.any(last > cfg.cutoff)
    if mode == "sparse":  # the event rule: some reached nodes fall silent
        assert np.any(last <= cfg.cutoff)


def test_integer_and_lava_paths_refuse_the_resting_subtracted_threshold():
    import dataclasses

    from atomspark.mapping.quantize import quantize_rsgn_graph

    p, cfg = _model(*CASES[0])
    cfg = dataclasses.replace(cfg, threshold_rule="resting-subtracted")
    a0, h0 = _ignite(p, cfg, b=1)
    graph = compile_rsgn(p, cfg, a0[0], h0[0])
    with pytest.raises(AtomsparkError, match="threshold_rule 'resting-subtracted'"):
        quantize_rsgn_graph(graph)
