"""Atomic-Hebb: equals minus the free-energy gradient (Danskin), touches only active atoms,
and learns a planted dictionary."""

from __future__ import annotations

import numpy as np
import pytest
from atomspark.networks.vn import (
    VNModel,
    atomic_hebb,
    hebb_layer_update,
    learn_dictionary,
    settle,
    unit_columns,
)
from atomspark.sim.core import AtomsparkError

SETTLE_TIGHT = dict(tol=1e-13, max_iter=200000, sweeps=20000)


def _free_energy(model, x, mask=None, h_top=None, init=None):
    """Mean over the batch of F = min_g F(g), settled to high precision (warm start `init`)."""
    result = settle(model, x, mask=mask, h_top=h_top, init=init, **SETTLE_TIGHT)
    assert result.converged.all()
    return float(np.mean(result.energy))


def _finite_difference_gradients(model, x, mask, h_top, entries, init, eps=1e-6):
    """Central differences of the mean free energy with respect to chosen (layer, name, i, j).

    Each perturbed settle starts from the unperturbed codes `init`, which are within O(eps).
    """
    grads = []
    for l, name, i, j in entries:
        values = []
        for sign in (1.0, -1.0):
            S = [layer.S.copy() for layer in model.layers]
            U = [layer.U.copy() for layer in model.layers]
            (S if name == "S" else U)[l][i, j] += sign * eps
            values.append(_free_energy(model.replace_dictionaries(S, U), x, mask, h_top, init))
        grads.append((values[0] - values[1]) / (2 * eps))
    return np.array(grads)


def test_single_layer_update_is_minus_free_energy_gradient(rng):
    """Danskin: with a top-down target and a mask, every entry of dS, dU equals -dF/dS, -dF/dU."""
    model = VNModel.random(7, [(5, 4)], lam=0.1, seed=5)
    x = rng.standard_normal((3, 7))
    h_top = rng.standard_normal((3, 4))
    mask = (rng.random((3, 7)) > 0.25).astype(float)
    result = settle(model, x, mask=mask, h_top=h_top, **SETTLE_TIGHT)
    updated = atomic_hebb(model, x, result, 1.0, 1.0, mask=mask, h_top=h_top, normalize=False)
    layer = model.layers[0]
    active = np.flatnonzero(np.any(result.codes[0] != 0, axis=0))
    assert 0 < active.size
    entries = [
        (0, n, i, j) for n, A in (("S", layer.S), ("U", layer.U)) for i, j in np.ndindex(A.shape)
    ]
    numeric = _finite_difference_gradients(model, x, mask, h_top, entries, result.codes)
    update = np.array(
        [
            (updated.layers[0].S - layer.S)[i, j]
            if n == "S"
            else (updated.layers[0].U - layer.U)[i, j]
            for _, n, i, j in entries
        ]
    )
    np.testing.assert_allclose(update, -numeric, rtol=1e-5, atol=1e-7)
    assert np.max(np.abs(update)) > 1e-2  # the check is not trivially zero


def _joint_lasso(model, x, lam):
    """Two-layer joint energy F as one lasso over [g_1; g_2] (equal lam), solved by scikit-learn.

    F = 1/2 ||x - S_1 g_1||^2 + 1/2 ||U_1 g_1 - S_2 g_2||^2 + lam (|g_1| + |g_2|)
      = 1/2 ||c - A g||^2 + lam |g|  with  A = [[S_1, 0], [U_1, -S_2]],  c = [x; 0].
    Returns (codes (B, K_1 + K_2), mean F).
    """
    from sklearn.linear_model import Lasso

    (l1, l2) = model.layers
    A = np.block([[l1.S, np.zeros((l1.input_dim, l2.n_atoms))], [l1.U, -l2.S]])
    c = np.concatenate([x, np.zeros((x.shape[0], l1.output_dim))], axis=1)
    fit = Lasso(alpha=lam / A.shape[0], fit_intercept=False, tol=1e-14, max_iter=100000)
    g = fit.fit(A, c.T).coef_.reshape(x.shape[0], -1)
    energy = 0.5 * np.sum((c - g @ A.T) ** 2, axis=1) + lam * np.sum(np.abs(g), axis=1)
    return g, float(np.mean(energy))


def test_two_layer_settle_and_update_match_the_joint_lasso(rng):
    """The interface term couples U_1 and S_2. The hierarchical settle reaches the joint minimiser
    of F, and the local updates of S_1, U_1, S_2 are -dF/d(.) (finite differences of F)."""
    lam = 0.05
    model = VNModel.random(6, [(5, 4), (3, 2)], lam=lam, seed=11)
    x = 2.0 * rng.standard_normal((2, 6))
    result = settle(model, x, tol=1e-11, max_iter=100000, sweeps=5000)
    assert result.converged.all()
    joint, F = _joint_lasso(model, x, lam)
    np.testing.assert_allclose(np.concatenate(result.codes, axis=1), joint, atol=1e-7)
    assert np.mean(result.energy) == pytest.approx(F, rel=1e-9)
    assert all(np.count_nonzero(c) > 0 for c in result.codes)

    updated = atomic_hebb(model, x, result, 1.0, 1.0, normalize=False)
    eps = 1e-6
    for l, name in ((0, "S"), (0, "U"), (1, "S")):
        A = getattr(model.layers[l], name)
        update = getattr(updated.layers[l], name) - A
        numeric = np.zeros_like(A)
        for i, j in np.ndindex(A.shape):
            values = []
            for sign in (1.0, -1.0):
                S = [layer.S.copy() for layer in model.layers]
                U = [layer.U.copy() for layer in model.layers]
                (S if name == "S" else U)[l][i, j] += sign * eps
                values.append(_joint_lasso(model.replace_dictionaries(S, U), x, lam)[1])
            numeric[i, j] = (values[0] - values[1]) / (2 * eps)
        np.testing.assert_allclose(update, -numeric, rtol=1e-5, atol=1e-7, err_msg=f"{name}_{l}")
    # the top layer has no target: its U is untouched
    np.testing.assert_array_equal(updated.layers[1].U, model.layers[1].U)


def test_zero_code_atoms_are_bit_identical_and_touched_ones_renormalised(rng):
    d, K, m = 10, 8, 5
    S = unit_columns(rng.standard_normal((d, K)))
    U = unit_columns(rng.standard_normal((m, K)))
    g = np.zeros((4, K))
    g[:, [1, 4]] = rng.standard_normal((4, 2))
    g[2, 6] = 0.3
    x, h = rng.standard_normal((4, d)), rng.standard_normal((4, m))
    S_new, U_new, touched = hebb_layer_update(S, U, x, h, g, 0.5, 0.5)
    np.testing.assert_array_equal(touched, np.isin(np.arange(K), [1, 4, 6]))
    np.testing.assert_array_equal(S_new[:, ~touched], S[:, ~touched])
    np.testing.assert_array_equal(U_new[:, ~touched], U[:, ~touched])
    assert np.all(np.abs(S_new[:, touched] - S[:, touched]).max(axis=0) > 1e-6)
    np.testing.assert_allclose(np.linalg.norm(S_new[:, touched], axis=0), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(U_new[:, touched], axis=0), 1.0, rtol=1e-12)
    # normalised update = projection of the raw gradient step back onto the unit sphere
    S_raw, _, _ = hebb_layer_update(S, U, x, h, g, 0.5, 0.5, normalize=False)
    np.testing.assert_allclose(S_new[:, touched], unit_columns(S_raw[:, touched]), rtol=1e-12)


def test_hebb_through_settle_leaves_silent_atoms_untouched(rng):
    model = VNModel.random(8, [(12, 3)], lam=0.6, seed=1)
    x = rng.standard_normal((2, 8))
    result = settle(model, x, tol=1e-8)
    silent = ~np.any(result.codes[0] != 0, axis=0)
    assert silent.any() and (~silent).any()
    new = atomic_hebb(model, x, result, rho_S=0.3)
    np.testing.assert_array_equal(new.layers[0].S[:, silent], model.layers[0].S[:, silent])
    assert not np.array_equal(new.layers[0].S[:, ~silent], model.layers[0].S[:, ~silent])


def test_learn_dictionary_recovers_planted_atoms():
    rng = np.random.default_rng(0)
    d, K, N, nonzeros = 24, 16, 400, 3
    D = unit_columns(rng.standard_normal((d, K)))
    codes = np.zeros((N, K))
    for n in range(N):
        idx = rng.choice(K, nonzeros, replace=False)
        codes[n, idx] = rng.choice([-1.0, 1.0], nonzeros) * rng.uniform(0.5, 1.5, nonzeros)
    data = codes @ D.T + 0.01 * rng.standard_normal((N, d))
    model = VNModel.random(d, [(K, 1)], lam=0.1, seed=1)
    calls = []
    out = learn_dictionary(
        model,
        data,
        epochs=30,
        batch_size=100,
        rho_S=5.0,
        settle_kwargs=dict(tol=1e-4, max_iter=300),
        progress=lambda e, b, energy: calls.append((e, b, energy)),
    )
    cosine = np.abs(D.T @ out.model.layers[0].S)
    before = np.abs(D.T @ model.layers[0].S)
    assert np.mean(cosine.max(axis=1) > 0.95) >= 0.9
    assert np.mean(before.max(axis=1) > 0.95) < 0.2  # the random start did not already have them
    assert len(calls) == 30 * 4
    assert out.epoch_energy[-1] < 0.6 * out.epoch_energy[0]


@pytest.mark.slow
def test_learn_dictionary_recovers_an_overcomplete_dictionary():
    """K = 30 atoms in d = 20 dimensions (1.5x overcomplete, so the atoms are not orthogonal
    and no basis explains the data): every planted atom is found."""
    rng = np.random.default_rng(0)
    d, K, N, nonzeros = 20, 30, 800, 3
    D = unit_columns(rng.standard_normal((d, K)))
    codes = np.zeros((N, K))
    for n in range(N):
        idx = rng.choice(K, nonzeros, replace=False)
        codes[n, idx] = rng.choice([-1.0, 1.0], nonzeros) * rng.uniform(0.5, 1.5, nonzeros)
    data = codes @ D.T + 0.01 * rng.standard_normal((N, d))
    model = VNModel.random(d, [(K, 1)], lam=0.1, seed=1)
    out = learn_dictionary(
        model, data, epochs=30, batch_size=100, rho_S=5.0,
        settle_kwargs=dict(tol=1e-4, max_iter=300),
    )  # fmt: skip
    cosine = np.abs(D.T @ out.model.layers[0].S)
    assert np.mean(cosine.max(axis=1) > 0.95) >= 0.9
    assert np.mean(np.abs(D.T @ model.layers[0].S).max(axis=1) > 0.95) < 0.2


def test_hebb_rejects_bad_inputs(rng):
    model = VNModel.random(6, [(4, 3)], seed=0)
    x = rng.standard_normal((2, 6))
    result = settle(model, x)
    with pytest.raises(AtomsparkError, match="rho_S"):
        atomic_hebb(model, x, result, rho_S=-1.0)
    with pytest.raises(AtomsparkError, match="x: expected shape"):
        atomic_hebb(model, x[:1], result, rho_S=0.1)
    with pytest.raises(AtomsparkError, match="data: expected shape"):
        learn_dictionary(model, rng.standard_normal((5, 7)))
    with pytest.raises(AtomsparkError, match="epochs"):
        learn_dictionary(model, x, epochs=0)
