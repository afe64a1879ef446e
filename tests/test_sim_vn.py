"""Event-driven VN settle against dense references: ISTA, scikit-learn Lasso, the VN settle."""

from __future__ import annotations

import numpy as np
import pytest
from atomspark.networks.vn_compile import compile_vn, compile_vn_model, layer_name
from atomspark.sim.engine import Engine


def _dictionary(rng, d, k):
    S = rng.standard_normal((d, k))
    return S / np.linalg.norm(S, axis=0)


def _settle(graph, steps):
    eng = Engine(graph)
    prof = eng.run(steps)
    codes = [eng.state[p.name]["g"].copy() for p in graph.populations]
    return codes, prof


def _rel(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)


def _joint_grad(S, U, x, m, h_top, g):
    """Gradient of the joint energy J written term by term (independent of the compiler)."""
    L = len(S)
    grads = [np.zeros_like(gl) for gl in g]
    r0 = m * (x - S[0] @ g[0])
    grads[0] -= S[0].T @ (m * r0)
    for l in range(L - 1):
        r = U[l] @ g[l] - S[l + 1] @ g[l + 1]
        grads[l] += U[l].T @ r
        grads[l + 1] -= S[l + 1].T @ r
    if h_top is not None:
        grads[-1] -= U[-1].T @ (h_top - U[-1] @ g[-1])
    return grads


def _dense_ista(S, U, lams, x, m, h_top, eta, iters, topk=None):
    g = [np.zeros(s.shape[1]) for s in S]
    for _ in range(iters):
        grads = _joint_grad(S, U, x, m, h_top, g)
        new = []
        for l, (gl, dl) in enumerate(zip(g, grads)):
            z = gl - eta * dl
            z = np.sign(z) * np.maximum(np.abs(z) - eta * lams[l], 0.0)
            if topk is not None and l == len(S) - 1 and np.count_nonzero(z) > topk:
                drop = np.argsort(-np.abs(z), kind="stable")[topk:]
                z[drop] = 0.0
            new.append(z)
        g = new
    return g


def test_single_layer_matches_sklearn_lasso_and_dense_ista():
    sklearn = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(1)
    d, k, lam = 24, 40, 0.15
    S = _dictionary(rng, d, k)
    x = S[:, :4] @ rng.uniform(0.5, 1.5, 4) + 0.05 * rng.standard_normal(d)
    graph = compile_vn([S], [np.zeros((1, k))], lam, x)
    (g,), _ = _settle(graph, 3000)
    lasso = sklearn.Lasso(alpha=lam / d, fit_intercept=False, tol=1e-14, max_iter=200000)
    ref = lasso.fit(S, x).coef_
    assert np.array_equal(g != 0, ref != 0)
    assert _rel(g, ref) < 1e-6
    eta = graph.populations[0].params.eta
    (dense,) = _dense_ista([S], [np.zeros((1, k))], [lam], x, np.ones(d), None, eta, 3000)
    assert _rel(g, dense) < 1e-10


def test_three_layers_with_mask_match_reference_settle():
    from atomspark.networks.vn.model import VNModel
    from atomspark.networks.vn.settle import settle

    model = VNModel.random(16, [(12, 12), (10, 10), (6, 6)], lam=[0.1, 0.1, 0.1], seed=3)
    rng = np.random.default_rng(3)
    x = rng.standard_normal(16)
    mask = (rng.random(16) < 0.75).astype(float)
    graph = compile_vn_model(model, x, mask=mask)
    codes, _ = _settle(graph, 3000)
    ref = settle(model, x, mask=mask, method="fista", tol=1e-13, max_iter=20000, sweeps=2000)
    S = [ly.S for ly in model.layers]
    U = [ly.U for ly in model.layers]
    eta = graph.populations[0].params.eta
    dense = _dense_ista(S, U, [ly.lam for ly in model.layers], x, mask, None, eta, 3000)
    for l in range(3):
        assert np.array_equal(codes[l] != 0, ref.codes[l][0] != 0), f"layer {l} active set"
        assert _rel(codes[l], ref.codes[l][0]) < 1e-6
        assert _rel(codes[l], dense[l]) < 1e-10


def test_top_k_and_top_down_target_match_dense_iteration():
    rng = np.random.default_rng(5)
    S = [_dictionary(rng, 12, 16), _dictionary(rng, 8, 10)]
    U = [_dictionary(rng, 8, 16), _dictionary(rng, 5, 10)]
    x, h_top = rng.standard_normal(12), rng.standard_normal(5)
    graph = compile_vn(S, U, [0.05, 0.05], x, h_top=h_top, topk=3)
    codes, prof = _settle(graph, 1500)
    eta = graph.populations[0].params.eta
    dense = _dense_ista(S, U, [0.05, 0.05], x, np.ones(12), h_top, eta, 1500, topk=3)
    assert np.count_nonzero(codes[1]) <= 3
    for l in range(2):
        assert np.array_equal(codes[l] != 0, dense[l] != 0)
        assert _rel(codes[l], dense[l]) < 1e-9
    assert prof.active[-1, 1] == np.count_nonzero(codes[1])
    assert prof.updates[:, 1].min() == 10  # a top-k layer is updated as a whole


def test_synops_equal_out_degree_of_emitters_each_step():
    rng = np.random.default_rng(7)
    S = [_dictionary(rng, 10, 12), _dictionary(rng, 6, 7)]
    U = [_dictionary(rng, 6, 12), _dictionary(rng, 4, 7)]
    graph = compile_vn(S, U, [0.1, 0.1], rng.standard_normal(10))
    eng = Engine(graph)
    out_deg = {p.name: np.zeros(p.size, np.int64) for p in graph.populations}
    for proj in graph.projections:
        out_deg[proj.source] += proj.out_degree()
    before = [np.zeros(p.size, np.int64) for p in graph.populations]
    for _ in range(30):
        prof = eng.run(1)
        for p, pop in enumerate(graph.populations):
            emitted = prof.unit_events[p] - before[p]
            assert set(np.unique(emitted)) <= {0, 1}
            assert prof.events[0, p] == emitted.sum()
            assert prof.synops[0, p] == (emitted * out_deg[pop.name]).sum()
            assert prof.payload_bits[0, p] == 64 * emitted.sum()
            before[p] = prof.unit_events[p].copy()


def test_hand_counted_two_atom_network():
    # Two orthogonal atoms: G = I, no coupling. Step 0: both update (drive != 0) and each emits
    # its code once (1 synapse each); step 1: each receives its own event, code unchanged -> no
    # events; step 2 on: nothing pending, nothing updated.
    S = np.eye(2)
    graph = compile_vn([S], [np.zeros((1, 2))], 0.1, np.array([1.0, -0.5]), eta=1.0)
    codes, prof = _settle(graph, 4)
    assert np.allclose(codes[0], [0.9, -0.4])
    assert prof.events[:, 0].tolist() == [2, 0, 0, 0]
    assert prof.synops[:, 0].tolist() == [2, 0, 0, 0]
    assert prof.updates[:, 0].tolist() == [2, 2, 0, 0]
    assert prof.active[:, 0].tolist() == [2, 2, 2, 2]


def test_event_threshold_reduces_events_with_bounded_error():
    rng = np.random.default_rng(9)
    S = _dictionary(rng, 20, 30)
    x = rng.standard_normal(20)
    exact, p0 = _settle(compile_vn([S], [np.zeros((1, 30))], 0.1, x), 1500)
    approx, p1 = _settle(compile_vn([S], [np.zeros((1, 30))], 0.1, x, event_threshold=1e-3), 1500)
    assert p1.events.sum() < p0.events.sum()
    assert np.abs(approx[0] - exact[0]).max() < 0.05


def test_float32_close_to_float64_and_runs_are_bit_identical():
    rng = np.random.default_rng(11)
    S = _dictionary(rng, 12, 18)
    x = rng.standard_normal(12)
    g64, _ = _settle(compile_vn([S], [np.zeros((1, 18))], 0.1, x), 800)
    g32, _ = _settle(compile_vn([S], [np.zeros((1, 18))], 0.1, x, dtype="float32"), 800)
    assert g32[0].dtype == np.float32
    assert _rel(g32[0].astype(float), g64[0]) < 1e-4
    a, pa = _settle(compile_vn([S], [np.zeros((1, 18))], 0.1, x), 300)
    b, pb = _settle(compile_vn([S], [np.zeros((1, 18))], 0.1, x), 300)
    assert a[0].tobytes() == b[0].tobytes()
    assert pa.to_dict() == pb.to_dict()
    assert layer_name(0) == graph_name_of(compile_vn([S], [np.zeros((1, 18))], 0.1, x))


def graph_name_of(graph):
    return graph.populations[0].name
