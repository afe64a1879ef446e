"""The working-set VN settle (sim/vn_working_set.py): the same codes as scikit-learn's Lasso and
the full Gauss-Seidel settle on random, masked and correlated problems, lam over three decades,
float64 and float32, one and two layers."""

from __future__ import annotations

import numpy as np
import pytest
from atomspark.networks.vn_compile import compile_vn, layer_name
from atomspark.sim import vn_working_set as vws
from atomspark.sim.core import AtomsparkError
from atomspark.sim.vn_gauss_seidel import GaussSeidelSettle
from atomspark.sim.vn_working_set import WorkingSetSettle

POP = layer_name(0)


def _problem(rng, d, k, active, correlated=False):
    S = rng.standard_normal((d, k))
    if correlated:  # neighbouring atoms share most of their direction (correlation ~0.9)
        S = S + 2.0 * np.roll(S, 1, axis=1) + 2.0 * np.roll(S, -1, axis=1)
    S /= np.linalg.norm(S, axis=0)
    g = np.zeros(k)
    g[rng.choice(k, active, replace=False)] = rng.choice([-1, 1], active) * rng.uniform(
        0.5, 1.5, active
    )
    x = S @ g + 0.01 * rng.standard_normal(d)
    return S, x


def _lasso(S, x, lam, mask=None):
    linear_model = pytest.importorskip("sklearn.linear_model")
    if mask is not None:
        S, x = S[mask], x[mask]
    m = linear_model.Lasso(alpha=lam / S.shape[0], fit_intercept=False, tol=1e-13,
                           max_iter=1_000_000)  # fmt: skip
    return m.fit(S, x).coef_


CASES = [(seed, frac, kind) for seed in (0, 1) for frac in (0.003, 0.03, 0.3)
         for kind in ("random", "masked", "correlated")]  # fmt: skip


@pytest.mark.parametrize("seed,lam_fraction,kind", CASES)
def test_same_codes_as_sklearn_lasso_over_three_decades_of_lam(seed, lam_fraction, kind):
    rng = np.random.default_rng(seed)
    d, k = 48, 160
    S, x = _problem(rng, d, k, 5, correlated=kind == "correlated")
    mask = rng.random(d) < 0.7 if kind == "masked" else None
    b = S.T @ (x * mask) if mask is not None else S.T @ x
    lam = lam_fraction * np.abs(b).max()
    ref = _lasso(S, x, lam, mask)
    graph = compile_vn([S], [np.zeros((1, k))], lam, x, mask=mask, eta=1.0)
    res = WorkingSetSettle(graph).run(tol=1e-11, max_sweeps=200_000)
    g = res.codes[POP]
    assert res.converged and res.checks >= 1
    scale = np.abs(ref).max()
    assert np.abs(g - ref).max() <= 1e-6 * scale, (np.abs(g - ref).max(), scale)
    assert np.array_equal(np.abs(g) > 1e-6 * scale, np.abs(ref) > 1e-6 * scale)
    if lam_fraction >= 0.03:  # a sparse code: the working set stays well below K
        assert res.working_set < k


@pytest.mark.parametrize("dtype,tol,close", [("float64", 1e-4, 3e-4), ("float32", 1e-4, 3e-4)])
def test_same_tolerance_as_the_full_gauss_seidel_settle_in_both_precisions(dtype, tol, close):
    rng = np.random.default_rng(5)
    S, x = _problem(rng, 256, 1024, 20)
    lam = 0.1 * np.abs(S.T @ x).max()
    graph = compile_vn([S], [np.zeros((1, 1024))], lam, x, eta=1.0, dtype=dtype)
    full, ws = GaussSeidelSettle(graph), WorkingSetSettle(graph)
    for state in (None, {POP: {"drive": S.T @ (x + 0.05 * rng.standard_normal(256))}}):
        a, b = full.run(state, tol=tol), ws.run(state, tol=tol)
        ga, gb = a.codes[POP], b.codes[POP]
        assert gb.dtype == np.dtype(dtype) and b.converged
        assert np.abs(ga - gb).max() <= close * np.abs(ga).max()
        assert b.synops < a.synops / 3  # far fewer entries of H read
    assert ws.symmetric


def test_two_layers_and_a_warm_start_match_the_full_settle():
    rng = np.random.default_rng(4)
    S = [rng.standard_normal((24, 40)), rng.standard_normal((16, 20))]
    U = [rng.standard_normal((16, 40)), rng.standard_normal((6, 20))]
    S = [s / np.linalg.norm(s, axis=0) for s in S]
    U = [u / np.linalg.norm(u, axis=0) for u in U]
    x = S[0][:, :3] @ rng.uniform(0.5, 1.5, 3) + 0.05 * rng.standard_normal(24)
    graph = compile_vn(S, U, [0.05, 0.05], x, h_top=rng.standard_normal(6))
    full = GaussSeidelSettle(graph).run(tol=1e-12)
    ws = WorkingSetSettle(graph)
    res = ws.run(tol=1e-12)
    for layer in range(2):
        a, b = full.codes[layer_name(layer)], res.codes[layer_name(layer)]
        assert np.abs(a - b).max() <= 1e-9 * np.abs(a).max()
    warm = ws.run({name: {"g": g} for name, g in res.codes.items()}, tol=1e-12)
    assert warm.converged and warm.checks == 1 and warm.sweeps <= 2


def test_symmetry_check_and_both_block_fills_agree():
    rng = np.random.default_rng(1)
    S, x = _problem(rng, 48, 160, 5)
    graph = compile_vn([S], [np.zeros((1, 160))], 0.05, x, eta=1.0)
    ws = WorkingSetSettle(graph)
    assert ws.symmetric
    sp = pytest.importorskip("scipy.sparse")
    H = sp.random(50, 50, density=0.2, random_state=3, format="csr")
    H = (H + H.T).tocsr()
    H.sort_indices()
    args = (H.indptr.astype(np.int64), H.indices.astype(np.int64), H.data)
    assert vws.is_symmetric(*args)
    H2 = H.copy()
    H2.data[0] += 1.0
    assert not vws.is_symmetric(H2.indptr.astype(np.int64), H2.indices.astype(np.int64), H2.data)
    state = {POP: {"drive": S.T @ x}}
    a = ws.run(state, tol=1e-10)
    ws.symmetric = False  # the general fill (searches old columns for new rows)
    b = ws.run(state, tol=1e-10)
    assert np.array_equal(a.codes[POP], b.codes[POP]) and a.events == b.events


def test_bad_inputs_are_one_line_errors():
    rng = np.random.default_rng(0)
    S, x = _problem(rng, 16, 32, 2)
    ws = WorkingSetSettle(compile_vn([S], [np.zeros((1, 32))], 0.1, x))
    for kwargs, word in (({"tol": -1.0}, "tol"), ({"max_sweeps": 0}, "max_sweeps")):
        with pytest.raises(AtomsparkError, match=word):
            ws.run(**kwargs)
    with pytest.raises(AtomsparkError, match="drive"):
        ws.run({POP: {"drive": np.zeros(5)}})
