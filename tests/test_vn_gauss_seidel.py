"""The Gauss-Seidel VN settle (sim/vn_gauss_seidel.py) against scikit-learn's Lasso and the
engine's Jacobi settle on the same graphs."""

from __future__ import annotations

import numpy as np
import pytest
from atomspark.networks.vn_compile import compile_vn, layer_name
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.vn_gauss_seidel import GaussSeidelSettle


def _dictionary(rng, d, k):
    S = rng.standard_normal((d, k))
    return S / np.linalg.norm(S, axis=0)


def _problem(rng, d=64, k=256, active=6):
    S = _dictionary(rng, d, k)
    g = np.zeros(k)
    g[rng.choice(k, active, replace=False)] = rng.choice([-1, 1], active) * rng.uniform(
        0.5, 1.5, active
    )
    x = S @ g + 0.01 * rng.standard_normal(d)
    lam = 0.1 * np.abs(S.T @ x).max()
    return S, x, lam


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_single_layer_matches_sklearn_lasso(seed):
    linear_model = pytest.importorskip("sklearn.linear_model")
    S, x, lam = _problem(np.random.default_rng(seed))
    d, k = S.shape
    graph = compile_vn([S], [np.zeros((1, k))], lam, x)
    res = GaussSeidelSettle(graph).run(tol=1e-10)
    ref = linear_model.Lasso(alpha=lam / d, fit_intercept=False, tol=1e-14, max_iter=200000)
    g_ref = ref.fit(S, x).coef_
    g = res.codes[layer_name(0)]
    assert res.converged and res.sweeps < 100
    assert np.array_equal(g != 0, g_ref != 0)
    assert np.abs(g - g_ref).max() <= 1e-7 * np.abs(g_ref).max()
    assert res.synops == res.events * k  # each change costs one Gram column


def test_same_codes_as_the_jacobi_engine_on_two_layers_with_far_fewer_events():
    rng = np.random.default_rng(4)
    S = [_dictionary(rng, 24, 40), _dictionary(rng, 16, 20)]
    U = [_dictionary(rng, 16, 40), _dictionary(rng, 6, 20)]
    x = S[0][:, :3] @ rng.uniform(0.5, 1.5, 3) + 0.05 * rng.standard_normal(24)
    graph = compile_vn(S, U, [0.05, 0.05], x, h_top=rng.standard_normal(6))
    eng = Engine(graph)
    prof = eng.run(4000)
    res = GaussSeidelSettle(graph).run(tol=1e-12)
    for l in range(2):
        jac, gs = eng.state[layer_name(l)]["g"], res.codes[layer_name(l)]
        assert np.array_equal(jac != 0, gs != 0), f"layer {l} active set"
        assert np.abs(jac - gs).max() <= 1e-6 * np.abs(jac).max()  # Jacobi: 4000 steps
    assert res.converged and res.events < prof.events.sum() / 5


def test_a_sample_sets_drive_and_initial_code_and_float32_stays_close():
    rng = np.random.default_rng(7)
    S, x, lam = _problem(rng, 32, 96, 4)
    S2, x2, _ = _problem(rng, 32, 96, 4)
    k = S.shape[1]
    g64 = GaussSeidelSettle(compile_vn([S], [np.zeros((1, k))], lam, x))
    g32 = GaussSeidelSettle(compile_vn([S], [np.zeros((1, k))], lam, x, dtype="float32"))
    state = {layer_name(0): {"drive": S.T @ x2}}
    a, b = g64.run(state, tol=1e-10), g32.run(state, tol=1e-5)
    fresh = GaussSeidelSettle(compile_vn([S], [np.zeros((1, k))], lam, x2)).run(tol=1e-10)
    ga, gb, gf = (r.codes[layer_name(0)] for r in (a, b, fresh))
    assert np.array_equal(ga, gf)  # the drive of the sample, not the graph's
    assert gb.dtype == np.float32 and np.abs(gb - ga).max() <= 1e-4 * np.abs(ga).max()
    warm = g64.run({layer_name(0): {"drive": S.T @ x2, "g": ga}}, tol=1e-10)
    assert warm.sweeps <= 2 and np.abs(warm.codes[layer_name(0)] - ga).max() <= 1e-9


def test_bad_inputs_are_one_line_errors():
    rng = np.random.default_rng(0)
    S, x, lam = _problem(rng, 16, 32, 2)
    graph = compile_vn([S], [np.zeros((1, 32))], lam, x)
    gs = GaussSeidelSettle(graph)
    with pytest.raises(AtomsparkError, match="may set"):
        gs.run({layer_name(0): {"c": np.zeros(32)}})
    with pytest.raises(AtomsparkError, match="expected shape"):
        gs.run({layer_name(0): {"drive": np.zeros(31)}})
    with pytest.raises(AtomsparkError, match="max_sweeps"):
        gs.run(max_sweeps=0)
    with pytest.raises(AtomsparkError, match="topk"):
        GaussSeidelSettle(compile_vn([S], [np.zeros((1, 32))], lam, x, topk=3))
    assert not gs.run(tol=0.0, max_sweeps=1).converged
