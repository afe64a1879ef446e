"""The VN batch benchmark's peers on a small instance: every solver picks its stopping rule as
the loosest of one shared grid that reaches the tolerance, scikit-learn runs in both
precisions and on the Gram given once per dictionary, FISTA restarts its momentum, and every
row meets the tolerance."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sklearn")
BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import harness

    monkeypatch.setattr(harness, "pin_one_thread", lambda: None)  # this process has its threads
    import bench_vn_batch

    return bench_vn_batch


def _loosest_meeting(bench, solve, G_star, tol) -> float:
    return next(t for t in bench.TOL_GRID if bench.within(solve(t), G_star, tol).all())


def test_peers_share_one_grid_and_meet_the_tolerance(bench):
    p = bench.make_batch(128, 4, seed=1)
    S, X, lam = p["S"], p["X"], p["lam"]
    G = S.T @ S
    G_star = bench.reference(S, X, lam, G)
    tol = bench.TOL_REL * np.abs(G_star).max(axis=0)
    methods = [
        bench.engine_gauss_seidel(S, X, lam, G_star, tol, "float64"),
        bench.sklearn_lasso(S, X, lam, G_star, tol, "float64"),
        bench.sklearn_lasso(S, X, lam, G_star, tol, "float32"),
        bench.sklearn_lasso(S, X, lam, G_star, tol, "float64", gram=G, gram_s=0.25),
        bench.engine_gauss_seidel(S, X, lam, G_star, tol, "float64", working_set=True),
        bench.engine_gauss_seidel(S, X, lam, G_star, tol, "float32", working_set=True),
    ]
    methods += [m for m in (bench.dedicated_lasso(S, X, lam, G_star, tol, pkg)
                            for pkg in ("skglm", "celer")) if m is not None]  # fmt: skip
    fista = bench.fista_methods(S, X, G, lam, p["eta"], G_star, tol)
    names = [m.name for m in methods]
    assert "(float32, no Gram" in names[2] and "Gram given once per dictionary" in names[3]
    assert methods[3].setup_s == 0.25 and methods[1].setup_s is None
    assert "working-set settle (float32 Gram" in names[5]
    for m in methods:
        chosen = float(re.search(r"(?:max change |tol=)([0-9.e-]+)", m.name).group(1))
        assert chosen in bench.TOL_GRID, m.name
        m.timed()
        codes = m.last[0]
        assert codes.shape == G_star.shape and bench.within(codes, G_star, tol).all(), m.name
    for m in fista:  # adaptive-restart FISTA, NumPy (and torch where present)
        m.timed()
        assert "adaptive restart" in m.name and bench.within(m.last[0], G_star, tol).all()
    # the loosest of the grid: what the shared grid gives scikit-learn in float64
    sk = _loosest_meeting(bench, lambda t: bench.lasso(S, X, lam, t), G_star, tol)
    assert f"tol={sk:g}," in names[1]
