"""RSGN forward dynamics: weights, ignition, one step against a plain per-node loop, the event
rule, message counts that scale with active nodes, and the published model's all-active caveat."""

import numpy as np
import pytest
from atomspark.networks.rsgn import RSGNConfig, init_params
from atomspark.networks.rsgn.dynamics import (
    connection_weights,
    forward,
    ignition,
    initial_state,
    propagate,
    spark_points,
)
from atomspark.networks.rsgn.geometry import poincare_distance
from atomspark.sim.core import AtomsparkError
from scipy.special import expit

SMALL = dict(n_nodes=20, dim=3, d_hidden=6, d_in=4, n_classes=3, n_steps=3)


def _tokens(b=3, l=5, d_in=4, seed=0):
    return np.random.default_rng(seed).standard_normal((b, l, d_in))


def test_published_weights_follow_formula():
    cfg = RSGNConfig(**SMALL)
    p = init_params(cfg, 0)
    w = connection_weights(p, cfg)
    assert np.all(np.diag(w) == 0)
    for i, j in [(0, 1), (3, 17), (19, 2)]:
        aff = 1 / (1 + np.exp(-p.affinity_u[i] @ p.affinity_v[j]))
        dist = poincare_distance(p.positions[i], p.positions[j])
        level = np.log1p(np.exp(p.levels[i] - p.levels[j] + 1))
        assert w[i, j] == pytest.approx(aff * np.exp(-dist / cfg.tau) * level, rel=1e-12)


def test_sparse_weights_follow_formula_on_edges_only():
    cfg = RSGNConfig(mode="sparse", k_nearest=4, **SMALL)
    p = init_params(cfg, 1)
    p.edge_affinity.data[:] = np.linspace(0.1, 0.9, p.edge_affinity.nnz)
    w = connection_weights(p, cfg)
    assert np.array_equal(w.indptr, p.edge_affinity.indptr)
    assert np.array_equal(w.indices, p.edge_affinity.indices)
    a = p.edge_affinity.toarray()
    for i, j in zip(*p.edge_affinity.nonzero()):
        dist = poincare_distance(p.positions[i], p.positions[j])
        level = np.log1p(np.exp(p.levels[i] - p.levels[j] + 1))
        assert w[i, j] == pytest.approx(a[i, j] * np.exp(-dist) * level, rel=1e-12)


def test_ignition_is_gaussian_of_nearest_spark():
    cfg = RSGNConfig(**SMALL)
    p = init_params(cfg, 2)
    x = _tokens()
    sparks = spark_points(p, cfg, x)
    alpha = ignition(p, cfg, x)
    d2 = ((sparks[:, :, None, :] - p.positions[None, None]) ** 2).sum(-1).min(1)
    assert np.allclose(alpha, np.exp(-d2 / (2 * 0.4**2)))
    # one token per call: the joint ignition is the max over tokens
    per_token = np.stack([ignition(p, cfg, x[:, t : t + 1]) for t in range(x.shape[1])])
    assert np.allclose(alpha, per_token.max(0))
    # sparse: hyperbolic distance, exactly zero below the cutoff
    scfg = RSGNConfig(mode="sparse", k_nearest=3, cutoff=0.2, **SMALL)
    a = ignition(p, scfg, x)
    sp_sparks = spark_points(p, scfg, x)
    dh = poincare_distance(sp_sparks[:, :, None, :], p.positions[None, None]).min(1)
    g = np.exp(-(dh**2) / (2 * 0.4**2))
    assert np.allclose(a, np.where(g > 0.2, g, 0.0))


def _one_step_loop(p, cfg, alpha, h):
    """One published step written per node, independently of the vectorised code."""
    w = connection_weights(p, cfg)
    n = cfg.n_nodes
    new_alpha, new_h = np.zeros(n), np.zeros_like(h)
    for j in range(n):
        m = sum(w[i, j] * h[i] * alpha[i] for i in range(n) if alpha[i] > cfg.cutoff)
        hn = m @ p.w_h + p.b_h
        new_alpha[j] = expit(
            (alpha[j] + 0.1 * np.linalg.norm(hn) - p.thresholds[j]) / cfg.temperature
        )
        z = hn + h[j]
        new_h[j] = (z - z.mean()) / np.sqrt(z.var() + 1e-5) * p.ln_gain + p.ln_bias
    new_h *= new_alpha[:, None]
    out = np.zeros(n)
    for i in range(n):
        nb = [j for j in range(n) if np.linalg.norm(p.positions[i] - p.positions[j]) < 0.3]
        out[i] = min(max(new_alpha[i] * len(nb) / (sum(new_alpha[nb]) + 1e-6), 0.0), 1.0)
    return out, new_h


def test_published_step_matches_per_node_loop():
    cfg = RSGNConfig(**SMALL)
    p = init_params(cfg, 3)
    p.thresholds = np.linspace(0.2, 0.9, cfg.n_nodes)
    p.levels = np.random.default_rng(1).uniform(0, 1, cfg.n_nodes)  # directional weights
    x = _tokens(b=2)
    a0 = ignition(p, cfg, x)
    a0[:, ::4] = 0.005  # below the send gate
    h0 = initial_state(p, cfg, x, a0)
    res = propagate(p, cfg, a0, h0, n_steps=1)
    for b in range(2):
        a_ref, h_ref = _one_step_loop(p, cfg, a0[b], h0[b])
        assert np.allclose(res.alpha[b], a_ref, rtol=1e-10)
        assert np.allclose(res.h[b], h_ref, rtol=1e-10, atol=1e-12)


def test_batch_rows_are_independent_and_readout_is_linear():
    cfg = RSGNConfig(mode="sparse", k_nearest=4, cutoff=0.2, temperature=0.2, **SMALL)
    p = init_params(cfg, 4)
    x = _tokens(b=4)
    full = forward(p, cfg, x)
    for b in range(4):
        one = forward(p, cfg, x[b : b + 1])
        assert np.allclose(one.scores[0], full.scores[b])
        assert np.array_equal(one.propagation.messages[:, 0], full.propagation.messages[:, b])
    feats = np.einsum("bn,bnd->bd", full.propagation.alpha, full.propagation.h)
    assert np.allclose(full.scores, feats @ p.cls_w + p.cls_b)


def test_sparse_event_rule_keeps_silent_nodes_exactly_zero():
    cfg = RSGNConfig(mode="sparse", k_nearest=3, cutoff=0.3, temperature=0.1, **SMALL)
    p = init_params(cfg, 5)
    x = _tokens(b=3)
    a0 = np.zeros((3, cfg.n_nodes))
    a0[:, 0] = 0.9  # one active node per sequence
    h0 = initial_state(p, cfg, x, a0)
    res = propagate(p, cfg, a0, h0, n_steps=1)
    reachable = np.zeros(cfg.n_nodes, dtype=bool)
    reachable[0] = True
    reachable[p.edge_affinity.indices[p.edge_affinity.indptr[0] : p.edge_affinity.indptr[1]]] = True
    assert np.all(res.alpha[:, ~reachable] == 0)
    assert np.all(res.h[:, ~reachable] == 0)
    silent = res.alpha == 0
    assert np.all(res.h[silent] == 0)
    assert np.all((res.alpha == 0) | (res.alpha > cfg.cutoff))
    assert np.array_equal(res.messages[0], [3, 3, 3])  # one sender with out-degree 3


def test_message_count_is_active_out_degree():
    cfg = RSGNConfig(mode="sparse", radius=1.2, cutoff=0.3, temperature=0.2, **SMALL)
    p = init_params(cfg, 6)
    res = forward(p, cfg, _tokens(b=3))
    deg = np.diff(p.edge_affinity.indptr)
    a0 = ignition(p, cfg, _tokens(b=3))
    assert np.array_equal(res.propagation.messages[0], (a0 > cfg.cutoff) @ deg)
    # later steps: never more messages than active nodes times the largest out-degree
    assert np.all(res.propagation.messages[1:] <= res.propagation.active[:-1] * deg.max())


@pytest.mark.parametrize("mode", ["published", "sparse"])
def test_messages_grow_with_active_nodes_not_n(mode):
    """Fixed number of active nodes, N x4: sparse (k nearest) cost is unchanged, dense grows."""
    counts = []
    for n in (32, 128):
        cfg = RSGNConfig(
            mode=mode,
            k_nearest=6 if mode == "sparse" else None,
            **{**SMALL, "n_nodes": n},
        )
        p = init_params(cfg, 7)
        alpha = np.zeros((1, n))
        alpha[0, :5] = 0.8
        h = np.ones((1, n, cfg.d_hidden)) * alpha[:, :, None]
        counts.append(propagate(p, cfg, alpha, h, n_steps=1).messages[0, 0])
    if mode == "sparse":
        assert counts == [5 * 6, 5 * 6]
    else:
        assert counts == [5 * 31, 5 * 127]


@pytest.mark.parametrize("mode", ["published", "sparse"])
def test_messages_per_active_node_do_not_grow_with_n_under_the_models_own_activity(mode):
    """The same token sequences through networks of N and 4N nodes, activity as the model's own
    dynamics make it (ignition, propagation, pools, cutoff): in the sparse mode the messages per
    sending node stay bounded by the k-nearest degree, in the published mode they are N - 1."""
    per_sender, activity = [], []
    for n in (48, 192):
        extra = dict(k_nearest=6, cutoff=0.3, temperature=0.25) if mode == "sparse" else {}
        cfg = RSGNConfig(mode=mode, **{**SMALL, "n_nodes": n}, **extra)
        p = init_params(cfg, 7)
        x = _tokens(b=3)
        prop = forward(p, cfg, x).propagation
        a0 = ignition(p, cfg, x)
        senders = np.concatenate([[(a0 > cfg.cutoff).sum(axis=1)], prop.active[:-1]])
        per_sender.append(prop.messages.sum() / senders.sum())
        activity.append(prop.active.mean() / n)
    if mode == "sparse":
        assert 0.0 < min(activity) and max(activity) < 0.5  # sparse by the model's own dynamics
        assert per_sender[1] < 1.5 * per_sender[0]  # not 4x: cost follows activity, not N
    else:
        assert per_sender == [47.0, 191.0]  # all-to-all


def test_published_dynamics_keep_every_node_active():
    """The released model's caveat: with T = 1 and thresholds <= 0.99 every activation is at least
    sigmoid(-0.99) after one step, so all nodes pass the 0.01 gate (activity 1.0)."""
    cfg = RSGNConfig(**SMALL)
    p = init_params(cfg, 8)
    p.thresholds[:] = 0.99
    res = forward(p, cfg, _tokens(b=4, seed=3))
    assert np.all(res.propagation.alpha >= expit(-0.99) - 1e-12)
    assert np.all(res.propagation.active == cfg.n_nodes)


def test_bad_inputs_rejected():
    cfg = RSGNConfig(**SMALL)
    p = init_params(cfg, 0)
    with pytest.raises(AtomsparkError, match="tokens: expected 3"):
        forward(p, cfg, np.zeros((5, 4)))
    with pytest.raises(AtomsparkError, match="tokens: expected shape"):
        forward(p, cfg, np.zeros((2, 5, 7)))
    with pytest.raises(AtomsparkError, match="tokens: contains 1 NaN"):
        x = _tokens()
        x[0, 0, 0] = np.nan
        forward(p, cfg, x)
    with pytest.raises(AtomsparkError, match="n_steps"):
        forward(p, cfg, _tokens(), n_steps=-1)
    with pytest.raises(AtomsparkError, match="alpha: activations must lie in"):
        propagate(p, cfg, np.full((1, 20), 1.5), np.zeros((1, 20, 6)))
    with pytest.raises(AtomsparkError, match="h: expected shape"):
        propagate(p, cfg, np.zeros((1, 20)), np.zeros((2, 20, 6)))


def test_resting_subtracted_threshold_silences_an_empty_message():
    """The released sigmoid is left bit for bit; the resting-subtracted rule is 0 for a node
    whose summed message is zero (drive = gain ||b_h||), rises with the drive, stays below 1."""
    import dataclasses

    from atomspark.networks.rsgn import RSGNConfig, init_params, soft_threshold
    from scipy.special import expit

    cfg = RSGNConfig(n_nodes=8, d_hidden=6, d_in=3, n_classes=2, affinity_rank=2, temperature=0.5)
    p = init_params(cfg, seed=0)
    p.thresholds = np.linspace(-0.5, 1.5, 8)
    drive = np.linspace(0.0, 3.0, 8 * 5).reshape(5, 8)
    assert np.array_equal(soft_threshold(drive, p, cfg), expit((drive - p.thresholds) / 0.5))
    rest = dataclasses.replace(cfg, threshold_rule="resting-subtracted")
    at_rest = np.full((1, 8), cfg.signal_gain * np.linalg.norm(p.b_h))
    np.testing.assert_allclose(soft_threshold(at_rest, p, rest), 0.0, atol=1e-15)
    a = soft_threshold(drive, p, rest)
    assert np.all(a >= 0) and np.all(a < 1) and np.all(np.diff(a, axis=0) >= 0)
    assert np.all(a[-1] > 0.5)
    with pytest.raises(AtomsparkError, match="threshold_rule"):
        RSGNConfig(threshold_rule="hard")
