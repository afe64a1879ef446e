"""Single-layer VN settle: event-driven engine vs dense FISTA (NumPy, torch CPU) vs sklearn Lasso.

Problem per K: S (d x K, d = K/4, unit columns), x = S g_true + noise with 2 % of the atoms active
in g_true, energy 1/2 ||x - S g||^2 + lam ||g||_1 (no top-down term). The exact minimiser g* is
found once (dense FISTA, then an exact solve on its support, checked against the optimality
conditions); every solver is run for the number of steps/iterations it needs to get within
TOL_REL * max|g*| of g* in max-norm, then timed for exactly that many. Setup (Gram matrix, graph
compilation) is shared work and timed separately. Cost model: the engine's step costs
(changed atoms x fan-out K) synaptic ops + updated atoms; a dense iteration costs K^2 (Gram form)
or 2 d K (S, S^T form) multiply-adds.
"""

from __future__ import annotations

import harness
import numpy as np
import scipy.sparse.linalg as spla
from atomspark.networks.vn_compile import compile_vn
from atomspark.sim.engine import Engine

TOL_REL = 1e-4  # max|g - g*| <= TOL_REL * max|g*|
ACTIVE_FRACTION = 0.02
NOISE = 0.01
LAM_FRACTION = 0.1  # lam = LAM_FRACTION * max|S^T x|


def make_problem(K: int, seed: int = 0) -> dict:
    """Dictionary, data with ~2 % active atoms, lam, and the shared step eta = 1/||S||^2."""
    rng = np.random.default_rng(seed)
    d = K // 4
    S = rng.standard_normal((d, K))
    S /= np.linalg.norm(S, axis=0)
    g_true = np.zeros(K)
    idx = rng.choice(K, max(1, int(ACTIVE_FRACTION * K)), replace=False)
    g_true[idx] = rng.choice([-1.0, 1.0], idx.size) * rng.uniform(0.5, 1.5, idx.size)
    x = S @ g_true + NOISE * rng.standard_normal(d)
    b = S.T @ x
    lam = LAM_FRACTION * float(np.abs(b).max())
    sigma = spla.svds(S, k=1, return_singular_vectors=False, random_state=seed)[0]
    return {"S": S, "x": x, "b": b, "lam": lam, "eta": 1.0 / (1.000001 * sigma**2), "d": d}


def soft(v, t):
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


def fista_gram(G, b, lam, eta, iters, g_ref=None, tol=None):
    """Plain FISTA with the Gram matrix; with g_ref, stops at the first iterate within tol."""
    g = np.zeros_like(b)
    y, t = g.copy(), 1.0
    for it in range(1, iters + 1):
        z = soft(y - eta * (G @ y - b), eta * lam)
        t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        y = z + ((t - 1.0) / t_next) * (z - g)
        g, t = z, t_next
        if g_ref is not None and np.abs(g - g_ref).max() <= tol:
            return g, it
    return g, iters


def fista_factored(S, b, lam, eta, iters, g_ref=None, tol=None):
    """Plain FISTA with G y computed as S^T (S y): 2 d K multiply-adds per iteration."""
    g = np.zeros_like(b)
    y, t = g.copy(), 1.0
    for it in range(1, iters + 1):
        z = soft(y - eta * (S.T @ (S @ y) - b), eta * lam)
        t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        y = z + ((t - 1.0) / t_next) * (z - g)
        g, t = z, t_next
        if g_ref is not None and np.abs(g - g_ref).max() <= tol:
            return g, it
    return g, iters


def exact_minimiser(G, b, lam, eta) -> np.ndarray:
    """g*: long FISTA, then the KKT solve G_SS g_S = b_S - lam sign(g_S) on its support."""
    g, _ = fista_gram(G, b, lam, eta, 3000)
    sup = np.flatnonzero(g)
    g_star = np.zeros_like(g)
    g_star[sup] = np.linalg.solve(G[np.ix_(sup, sup)], b[sup] - lam * np.sign(g[sup]))
    grad = b - G @ g_star
    off = np.setdiff1d(np.arange(g.size), sup)
    if np.any(np.sign(g_star[sup]) != np.sign(g[sup])) or np.abs(grad[off]).max() > lam * (
        1 + 1e-9
    ):
        raise RuntimeError(
            "exact minimiser check failed: support solve violates the KKT conditions"
        )
    return g_star


def engine_steps_needed(graph, g_star, tol, max_steps=20000) -> int:
    eng = Engine(graph)
    for step in range(1, max_steps + 1):
        eng.run(1)
        if np.abs(eng.state["vn_layer0"]["g"] - g_star).max() <= tol:
            return step
    raise RuntimeError(f"engine did not reach tolerance in {max_steps} steps")


def _row(case: dict, method: str, t, iters: int, err: float, macs=None, extra=None) -> dict:
    """One table row: the method's median time, iterations and error on `case`'s problem."""
    return {"K": case["K"], "d": case["d"], "nnz_g*": case["nnz"], "method": method,
            "median_s": t.median, "iters": iters, "max_err": err, "dense_macs": macs,
            **(extra or {})}  # fmt: skip


def _engine_row(case: dict, graph, repeats: int) -> dict:
    """The event-driven engine (synchronous ISTA) run for the steps it needs to reach tol."""
    K, g_star = case["K"], case["g_star"]
    n_steps = engine_steps_needed(graph, g_star, case["tol"])
    out = {}

    def run_engine():
        eng = Engine(graph)
        out["prof"] = eng.run(n_steps)
        out["g"] = eng.state["vn_layer0"]["g"].copy()

    t = harness.time_call(run_engine, repeats=repeats, warmup=1)
    prof = out["prof"]
    syn = int(prof.synops.sum())
    extra = {"events": int(prof.events.sum()), "synops": syn, "updates": int(prof.updates.sum()),
             "dense_ista_macs": n_steps * K * K, "synops_vs_dense_ista": syn / (n_steps * K * K)}  # fmt: skip
    err = float(np.abs(out["g"] - g_star).max())
    return _row(case, "event-driven engine (ISTA)", t, n_steps, err, None, extra)


def _fista_rows(case: dict, repeats: int) -> tuple[list[dict], int]:
    """Dense FISTA in NumPy, Gram form and factored form; also returns the Gram iterations."""
    p, G, g_star, tol = case["problem"], case["G"], case["g_star"], case["tol"]
    S, b, lam, eta, K = p["S"], p["b"], p["lam"], p["eta"], case["K"]
    res = {}
    _, it_g = fista_gram(G, b, lam, eta, 20000, g_star, tol)
    t = harness.time_call(
        lambda: res.__setitem__("g", fista_gram(G, b, lam, eta, it_g)[0]), repeats=repeats, warmup=1
    )
    rows = [_row(case, "dense FISTA NumPy (Gram)", t, it_g,
                 float(np.abs(res["g"] - g_star).max()), it_g * K * K)]  # fmt: skip
    _, it_f = fista_factored(S, b, lam, eta, 20000, g_star, tol)
    t = harness.time_call(
        lambda: res.__setitem__("g", fista_factored(S, b, lam, eta, it_f)[0]),
        repeats=repeats,
        warmup=1,
    )
    rows.append(_row(case, "dense FISTA NumPy (S^T S y)", t, it_f,
                     float(np.abs(res["g"] - g_star).max()), it_f * 2 * p["d"] * K))  # fmt: skip
    return rows, it_g


def _lasso_rows(case: dict, repeats: int) -> list[dict]:
    """scikit-learn's Lasso (coordinate descent) at the loosest tol that reaches the same
    tolerance; no row without scikit-learn."""
    try:
        from sklearn.linear_model import Lasso
    except ImportError:
        return []
    p, g_star = case["problem"], case["g_star"]
    S, x, lam = p["S"], p["x"], p["lam"]
    for sk_tol in (1e-4, 1e-6, 1e-8, 1e-10, 1e-12):
        model = Lasso(alpha=lam / p["d"], fit_intercept=False, tol=sk_tol, max_iter=100000)
        model.fit(S, x)
        if np.abs(model.coef_ - g_star).max() <= case["tol"]:
            break
    res = {}

    def run_lasso():
        m = Lasso(alpha=lam / p["d"], fit_intercept=False, tol=sk_tol, max_iter=100000)
        res["g"] = m.fit(S, x).coef_
        res["n_iter"] = m.n_iter_

    t = harness.time_call(run_lasso, repeats=repeats, warmup=1)
    err = float(np.abs(res["g"] - g_star).max())
    return [_row(case, f"sklearn Lasso CD (tol={sk_tol:g})", t, int(res["n_iter"]), err)]


def _torch_row(case: dict, iters: int, repeats: int) -> dict:
    """Dense FISTA in torch on the CPU, for the Gram form's iteration count."""
    import torch

    p, K = case["problem"], case["K"]
    eta, lam = p["eta"], p["lam"]
    Gt, bt = torch.from_numpy(case["G"]), torch.from_numpy(p["b"])
    res = {}

    def run_torch():
        g = torch.zeros_like(bt)
        y, tt = g.clone(), 1.0
        for _ in range(iters):
            v = y - eta * (Gt @ y - bt)
            z = torch.sign(v) * torch.clamp(v.abs() - eta * lam, min=0.0)
            t_next = 0.5 * (1.0 + (1.0 + 4.0 * tt * tt) ** 0.5)
            y = z + ((tt - 1.0) / t_next) * (z - g)
            g, tt = z, t_next
        res["g"] = g.numpy()

    t = harness.time_call(run_torch, repeats=repeats, warmup=1)
    method = f"dense FISTA torch CPU ({torch.get_num_threads()} threads)"
    return _row(
        case, method, t, iters, float(np.abs(res["g"] - case["g_star"]).max()), iters * K * K
    )


def bench_size(K: int, repeats: int, use_torch: bool) -> list[dict]:
    """Every method on one problem of K atoms; speedups relative to the engine's row."""
    p = make_problem(K)
    S, x, b, lam, eta = p["S"], p["x"], p["b"], p["lam"], p["eta"]
    gram_s, G = harness.time_once(lambda: S.T @ S)
    g_star = exact_minimiser(G, b, lam, eta)
    case = {"K": K, "d": p["d"], "problem": p, "G": G, "g_star": g_star,
            "tol": TOL_REL * np.abs(g_star).max(), "nnz": int(np.count_nonzero(g_star))}  # fmt: skip
    compile_s, graph = harness.time_once(
        lambda: compile_vn([S], [np.zeros((1, K))], lam, x, eta=eta)
    )
    rows = [_engine_row(case, graph, repeats)]
    fista, it_g = _fista_rows(case, repeats)
    rows += fista + _lasso_rows(case, repeats)
    if use_torch:
        rows.append(_torch_row(case, it_g, repeats))
    base = rows[0]["median_s"]
    for r in rows:
        r["engine_speedup"] = r["median_s"] / base
    rows[0]["setup_gram_s"] = gram_s
    rows[0]["setup_compile_s"] = compile_s
    return rows


def main() -> None:
    args = harness.parse_args(__doc__.splitlines()[0])
    harness.print_machine(harness.machine_info())
    sizes = (1024, 4096) if args.quick else (1024, 4096, 8192)
    repeats = 2 if args.quick else 5
    try:
        import torch  # noqa: F401

        use_torch = True
    except ImportError:
        use_torch = False
    rows = []
    for K in sizes:
        rows += bench_size(K, repeats, use_torch)
        print(
            harness.format_table(
                [r for r in rows if r["K"] == K],
                [
                    "K",
                    "d",
                    "nnz_g*",
                    "method",
                    "iters",
                    "median_s",
                    "engine_speedup",
                    "max_err",
                    "dense_macs",
                ],
            )
        )
        eng = next(r for r in rows if r["K"] == K)
        print(
            f"  engine: {eng['events']} events, {eng['synops']} synaptic ops, {eng['updates']} "
            f"atom updates; dense ISTA for the same steps: {eng['dense_ista_macs']} MACs "
            f"(ratio {eng['synops_vs_dense_ista']:.4f}); setup: Gram {eng['setup_gram_s']:.3f} s,"
            f" compile {eng['setup_compile_s']:.3f} s"
        )
    at = [r for r in rows if r["K"] == 4096]
    summary = {}
    if at:
        fista = next(r for r in at if r["method"] == "dense FISTA NumPy (Gram)")
        summary["engine_vs_dense_fista_gram_at_4096"] = fista["engine_speedup"]
        print(
            f"engine vs dense FISTA (Gram) at K=4096: {fista['engine_speedup']:.2f}x (target >= 5x)"
        )
    harness.write_result(
        args.out,
        "vn_settle",
        {"quick": args.quick, "tol_rel": TOL_REL, "rows": rows, "summary": summary},
    )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        for method in dict.fromkeys(r["method"] for r in rows):
            pts = [(r["K"], r["median_s"]) for r in rows if r["method"] == method]
            ax.loglog(*zip(*pts), marker="o", label=method)
        ax.set_xlabel("atoms K (d = K/4)")
        ax.set_ylabel(f"time to max-err <= {TOL_REL:g} max|g*| (s)")
        ax.legend(fontsize=7)
        harness.save_figure(fig, args.out, "vn_settle")
    except ImportError:
        pass


if __name__ == "__main__":
    main()
