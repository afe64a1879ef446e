"""VN inference: energy pieces, single-layer solve against scikit-learn, hierarchical settle."""

from __future__ import annotations

import numpy as np
import pytest
from atomspark.networks.vn import (
    VNModel,
    drive,
    gram,
    keep_top_k,
    layer_energy,
    predict_masked,
    settle,
    solve_layer,
    step_size,
    unit_columns,
)
from atomspark.sim.core import AtomsparkError


def _layer_problem(rng, d=10, K=6, m=4, B=3):
    S = unit_columns(rng.standard_normal((d, K)))
    U = unit_columns(rng.standard_normal((m, K)))
    x = rng.standard_normal((B, d))
    h = rng.standard_normal((B, m))
    mask = (rng.random((B, d)) > 0.3).astype(float)
    return S, U, x, h, mask


def _layer_energy_by_hand(S, U, x, h, lam, g, mask) -> np.ndarray:
    """E(g) per sample written out term by term, one sample at a time (independent of
    networks/vn/energy.py): 1/2 |m * (x - S g)|^2 + 1/2 |h - U g|^2 + lam |g|_1."""
    out = []
    for b in range(g.shape[0]):
        rx = mask[b] * (x[b] - S @ g[b])
        rh = h[b] - U @ g[b]
        out.append(0.5 * rx @ rx + 0.5 * rh @ rh + lam * np.abs(g[b]).sum())
    return np.array(out)


def test_drive_and_gram_give_the_energy_gradient(rng):
    """grad E_smooth(g) = G g - b, checked against central differences of the energy."""
    S, U, x, h, mask = _layer_problem(rng)
    g = rng.standard_normal((3, 6))
    G, b = gram(S, U, mask), drive(S, U, x, h, mask)
    analytic = np.einsum("bk,bkj->bj", g, G) - b
    eps = 1e-6
    numeric = np.zeros_like(g)
    for k in range(g.shape[1]):
        e = np.zeros_like(g)
        e[:, k] = eps
        up = layer_energy(S, U, x, h, 0.0, g + e, mask)
        down = layer_energy(S, U, x, h, 0.0, g - e, mask)
        numeric[:, k] = (up - down) / (2 * eps)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-7)


def test_step_size_is_inverse_largest_eigenvalue(rng):
    S, U, _, _, mask = _layer_problem(rng)
    G = gram(S, U)
    v = rng.standard_normal(G.shape[0])
    for _ in range(500):  # power iteration, independent of eigvalsh
        v = G @ v
        v /= np.linalg.norm(v)
    assert step_size(G) == pytest.approx(1.0 / (v @ G @ v), rel=1e-9)
    per_sample = step_size(gram(S, U, mask))
    assert per_sample.shape == (3,)
    assert np.all(per_sample >= step_size(G) - 1e-15)  # masking can only shrink L


def test_keep_top_k_keeps_largest_magnitudes():
    v = np.array([[0.5, -3.0, 1.0, 2.0, -0.1], [1.0, 0.0, -4.0, 0.2, 0.3]])
    out = keep_top_k(v, 2)
    np.testing.assert_array_equal(out, [[0.0, -3.0, 0.0, 2.0, 0.0], [1.0, 0.0, -4.0, 0.0, 0.0]])


@pytest.mark.parametrize("method", ["fista", "ista"])
def test_single_layer_matches_sklearn_lasso(rng, method):
    from sklearn.linear_model import Lasso

    d, K, lam = 30, 12, 0.3
    S = unit_columns(rng.standard_normal((d, K)))
    g_true = np.zeros(K)
    g_true[[1, 4, 9]] = [1.5, -2.0, 1.0]
    x = S @ g_true + 0.05 * rng.standard_normal(d)
    model = VNModel.from_arrays([S], [np.zeros((1, K))], lam)
    result = settle(model, x, method=method, tol=1e-13, max_iter=100000)
    lasso = Lasso(alpha=lam / d, fit_intercept=False, tol=1e-12, max_iter=100000).fit(S, x)
    assert result.converged.all()
    ours = result.codes[0][0]
    assert np.count_nonzero(ours) >= 3
    np.testing.assert_allclose(ours, lasso.coef_, rtol=1e-6, atol=1e-9)
    assert np.array_equal(ours != 0, lasso.coef_ != 0)


def test_ista_energy_never_increases_with_top_down_term_and_mask(rng):
    for trial in range(5):
        S, U, x, h, mask = _layer_problem(rng, d=12, K=9, m=5, B=4)
        lam = 0.05 + 0.1 * trial
        g = rng.standard_normal((4, 9))
        energy = layer_energy(S, U, x, h, lam, g, mask)
        for _ in range(60):
            step = solve_layer(S, U, x, h, lam, mask, method="ista", max_iter=1, g0=g)
            assert np.all(step.energy <= energy + 1e-12)
            by_hand = _layer_energy_by_hand(S, U, x, h, lam, step.codes, mask)
            np.testing.assert_allclose(step.energy, by_hand, rtol=1e-12)
            g, energy = step.codes, step.energy
        assert np.any(g == 0)  # the l1 prox produced exact zeros


def test_ista_with_top_k_is_monotone_and_k_sparse(rng):
    S, U, x, h, _ = _layer_problem(rng, d=12, K=9, m=5, B=4)
    g = np.zeros((4, 9))
    energy = layer_energy(S, U, x, h, 0.01, g)
    for _ in range(40):
        step = solve_layer(S, U, x, h, 0.01, method="ista", max_iter=1, g0=g, topk=2)
        assert np.all(np.count_nonzero(step.codes, axis=1) <= 2)
        assert np.all(step.energy <= energy + 1e-12)
        g, energy = step.codes, step.energy


def test_fista_and_ista_reach_the_same_fixed_point(rng):
    S, U, x, h, mask = _layer_problem(rng, d=16, K=10, m=6, B=5)
    kw = dict(tol=1e-12, max_iter=200000)
    a = solve_layer(S, U, x, h, 0.1, mask, method="fista", **kw)
    b = solve_layer(S, U, x, h, 0.1, mask, method="ista", **kw)
    assert a.converged.all() and b.converged.all()
    np.testing.assert_allclose(a.codes, b.codes, atol=1e-9)
    assert a.iterations.sum() < b.iterations.sum()
    # the fixed point satisfies the lasso optimality conditions: |grad| <= lam off the support
    G, bias = gram(S, U, mask), drive(S, U, x, h, mask)
    grad = np.einsum("bk,bkj->bj", a.codes, G) - bias
    on = a.codes != 0
    np.testing.assert_allclose(grad[on], -0.1 * np.sign(a.codes[on]), atol=1e-8)
    assert np.all(np.abs(grad[~on]) <= 0.1 + 1e-8)


def test_three_layer_settle_converges_and_energy_decreases(rng):
    model = VNModel.random(16, [(12, 8), (10, 6), (6, 4)], lam=[0.05, 0.05, 0.02], seed=2)
    x = rng.standard_normal((4, 16))
    result = settle(model, x, tol=1e-7, sweeps=400)
    assert result.converged.all()
    trace = result.energy_trace
    assert np.all(np.diff(trace, axis=0) <= 1e-12)
    assert np.all(trace[-1] < trace[1])  # sweeps after the first still lowered F
    # F written out: each layer's input is the layer below's reconstruction U_l g_l
    inputs = [x] + [g @ layer.U.T for g, layer in zip(result.codes[:-1], model.layers[:-1])]
    by_hand = sum(
        0.5 * np.sum((xl - g @ layer.S.T) ** 2, axis=1) + layer.lam * np.abs(g).sum(axis=1)
        for xl, g, layer in zip(inputs, result.codes, model.layers)
    )
    np.testing.assert_allclose(result.energy, by_hand, rtol=1e-12)
    assert result.layer_energies.shape == (4, 3)
    assert all(np.count_nonzero(c) > 0 for c in result.codes)
    # at the fixed point every block is optimal given its neighbours: one more block solve
    # (with the other layers' messages fixed) does not move layer 2's codes
    mid = model.layers[1]
    x2 = result.codes[0] @ model.layers[0].U.T
    h2 = result.codes[2] @ model.layers[2].S.T
    again = solve_layer(mid.S, mid.U, x2, h2, mid.lam, g0=result.codes[1], tol=1e-12)
    np.testing.assert_allclose(again.codes, result.codes[1], atol=1e-5)


def test_two_layer_settle_with_h_top_and_top_k(rng):
    model = VNModel.random(10, [(8, 6), (7, 3)], lam=0.02, seed=4, topk=2)
    x = rng.standard_normal((3, 10))
    h_top = rng.standard_normal((3, 3))
    result = settle(model, x, h_top=h_top, tol=1e-8, sweeps=300)
    assert np.all(np.count_nonzero(result.codes[1], axis=1) <= 2)
    assert np.all(np.diff(result.energy_trace, axis=0) <= 1e-12)
    without = settle(model, x, tol=1e-8, sweeps=300)
    assert not np.allclose(without.codes[1], result.codes[1])  # h_top pulls the top layer


def test_masked_prediction_ignores_hidden_entries_and_recovers_them(rng):
    d, K = 20, 8
    S = unit_columns(rng.standard_normal((d, K)))
    g_true = np.zeros((2, K))
    g_true[0, [0, 3]] = [2.0, -1.5]
    g_true[1, [5, 6]] = [1.0, 2.5]
    x = g_true @ S.T
    mask = np.ones(d)
    mask[:5] = 0
    model = VNModel.from_arrays([S], [np.zeros((1, K))], lam=1e-3)
    corrupted = x.copy()
    corrupted[:, :5] = 100.0  # hidden values must not matter
    pred = predict_masked(model, corrupted, mask, tol=1e-12, max_iter=50000)
    same = predict_masked(model, x, mask, tol=1e-12, max_iter=50000)
    np.testing.assert_array_equal(pred, same)
    np.testing.assert_allclose(pred[:, :5], x[:, :5], atol=0.02)


def test_settle_rejects_bad_inputs(rng):
    model = VNModel.random(6, [(4, 3)], seed=0)
    x = rng.standard_normal((2, 6))
    with pytest.raises(AtomsparkError, match="x: expected shape"):
        settle(model, rng.standard_normal((2, 5)))
    with pytest.raises(AtomsparkError, match="x: contains 2 NaN"):
        settle(model, np.where(np.eye(2, 6) > 0, np.nan, x))
    with pytest.raises(AtomsparkError, match="mask: entries must be 0/1"):
        settle(model, x, mask=np.full(6, 0.5))
    with pytest.raises(AtomsparkError, match="mask: expected shape"):
        settle(model, x, mask=np.ones((3, 6)))
    with pytest.raises(AtomsparkError, match="h_top: expected shape"):
        settle(model, x, h_top=np.ones((2, 4)))
    with pytest.raises(AtomsparkError, match="method"):
        settle(model, x, method="newton")
    with pytest.raises(AtomsparkError, match="tol"):
        settle(model, x, tol=-1.0)
    with pytest.raises(AtomsparkError, match="max_iter"):
        settle(model, x, max_iter=0)
    with pytest.raises(AtomsparkError, match="init"):
        settle(model, x, init=[np.zeros((2, 4)), np.zeros((2, 4))])
    with pytest.raises(AtomsparkError, match="model"):
        settle("not a model", x)
    S, U = model.layers[0].S, model.layers[0].U
    with pytest.raises(AtomsparkError, match="U: required"):
        solve_layer(S, None, x, np.ones((2, 3)), 0.1)
    with pytest.raises(AtomsparkError, match="topk"):
        solve_layer(S, U, x, None, 0.1, topk=5)
    with pytest.raises(AtomsparkError, match="lam"):
        solve_layer(S, U, x, None, -0.1)


def test_one_sample_input_and_float32_model(rng):
    model64 = VNModel.random(8, [(6, 3)], lam=0.05, seed=9)
    x = rng.standard_normal(8)
    one = settle(model64, x, tol=1e-10)
    batch = settle(model64, np.stack([x, x]), tol=1e-10)
    assert one.codes[0].shape == (1, 6)
    # same problem per row; BLAS may round a batch differently from a single row
    np.testing.assert_allclose(batch.codes[0], np.repeat(one.codes[0], 2, axis=0), atol=1e-9)
    assert predict_masked(model64, x, np.ones(8)).shape == (8,)
    layer = model64.layers[0]
    model32 = VNModel.from_arrays([layer.S], [layer.U], 0.05, dtype=np.float32)
    r32 = settle(model32, x, tol=1e-6, max_iter=20000)
    assert r32.codes[0].dtype == np.float32 and r32.energy.dtype == np.float32
    np.testing.assert_allclose(r32.codes[0], one.codes[0], atol=2e-3)
