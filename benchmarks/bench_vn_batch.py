"""VN settle on a batch: event engine (graph built once) vs scikit-learn Lasso and dense FISTA.

Problem: one dictionary S (d x K, d = K/4, unit columns), a batch of B signals x_b = S g_b +
noise with 2 % of the atoms active in each g_b, one lam for the batch (LAM_FRACTION times the
median of max|S^T x_b|), energy 1/2 ||x - S g||^2 + lam ||g||_1. The reference g*_b is
scikit-learn's coordinate descent at tol 1e-12, polished by an exact solve on its support and
checked against the optimality conditions. Every solver runs to the same tolerance,
max|g_b - g*_b| <= TOL_REL max|g*_b| for every sample, then is timed for exactly that work:
- engine: event-driven ISTA, graph (Gram, eta) and compiled loop built once, each sample a
  reset of the drive S^T x_b and the number of steps that sample needs (found beforehand);
- scikit-learn Lasso: coordinate descent over the same samples (one multi-target fit, cold
  start, not warm-started), at the loosest tol that reaches the tolerance on every sample, with
  and without a precomputed Gram (the faster is the peer);
- dense FISTA on the whole batch in lock-step (G @ Y, or S^T (S Y)) in NumPy and in torch on
  the CPU, for the iterations the slowest sample needs.
Everything runs on one thread. Setup (Gram, graph, compilation) is reported separately. The
machine is shared: the headline compares process CPU time (wall time is given too).
"""

from __future__ import annotations

import os
import time

import harness

harness.pin_one_thread()

import numpy as np  # noqa: E402
import scipy.sparse.linalg as spla  # noqa: E402
from atomspark.networks.vn_compile import compile_vn, layer_name  # noqa: E402
from atomspark.sim.engine import Engine  # noqa: E402

TOL_REL = 1e-4
ACTIVE_FRACTION = 0.02
NOISE = 0.01
LAM_FRACTION = 0.1
STEP_CHUNK = 5  # engine steps needed per sample are found to within this many


def make_batch(K: int, B: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    d = K // 4
    S = rng.standard_normal((d, K))
    S /= np.linalg.norm(S, axis=0)
    G_true = np.zeros((K, B))
    n_act = max(1, int(ACTIVE_FRACTION * K))
    for b in range(B):
        idx = rng.choice(K, n_act, replace=False)
        G_true[idx, b] = rng.choice([-1.0, 1.0], n_act) * rng.uniform(0.5, 1.5, n_act)
    X = S @ G_true + NOISE * rng.standard_normal((d, B))
    lam = LAM_FRACTION * float(np.median(np.abs(S.T @ X).max(axis=0)))
    sigma = spla.svds(S, k=1, return_singular_vectors=False, random_state=seed)[0]
    return {"S": S, "X": X, "lam": lam, "eta": 1.0 / (1.000001 * sigma**2), "d": d}


def lasso(S, X, lam, tol, precompute=False):
    from sklearn.linear_model import Lasso

    m = Lasso(alpha=lam / S.shape[0], fit_intercept=False, tol=tol, max_iter=100000,
              precompute=precompute)  # fmt: skip
    m.fit(S, X)
    return np.atleast_2d(m.coef_).T  # (K, B)


def reference(S, X, lam, G) -> np.ndarray:
    """g*_b: tight coordinate descent, exact solve on the support, optimality checked."""
    coarse = lasso(S, X, lam, 1e-12)
    out = np.zeros_like(coarse)
    B = S.T @ X
    for b in range(X.shape[1]):
        sup = np.flatnonzero(coarse[:, b])
        sgn = np.sign(coarse[sup, b])
        out[sup, b] = np.linalg.solve(G[np.ix_(sup, sup)], B[sup, b] - lam * sgn)
        grad = B[:, b] - G @ out[:, b]
        off = np.setdiff1d(np.arange(G.shape[0]), sup)
        if np.any(np.sign(out[sup, b]) != sgn) or np.abs(grad[off]).max(initial=0) > lam * (
            1 + 1e-8
        ):
            raise RuntimeError(f"sample {b}: reference fails the optimality conditions")
    return out


def within(Gc, G_star, tol) -> np.ndarray:
    return np.abs(Gc - G_star).max(axis=0) <= tol


def fista_batch(matvec, Bm, lam, eta, iters, soft, zeros_like, g_ref=None, tol=None):
    """Lock-step FISTA on a batch (columns); with g_ref, stops when every column is within tol."""
    g = zeros_like(Bm)
    y, t = g, 1.0
    for it in range(1, iters + 1):
        z = soft(y - eta * (matvec(y) - Bm), eta * lam)
        t_next = 0.5 * (1.0 + (1.0 + 4.0 * t * t) ** 0.5)
        y = z + ((t - 1.0) / t_next) * (z - g)
        g, t = z, t_next
        if g_ref is not None and bool(within(np.asarray(g), g_ref, tol).all()):
            return g, it
    return g, iters


def time_result(repeats: int, fn, *args):
    """(timing, result of the last call) of fn(*args)."""
    box = []
    t = harness.time_call(lambda: box.append(fn(*args)), repeats=repeats, warmup=0)
    return t, box[-1]


def np_soft(v, t):
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


def main() -> None:
    def options(ap):
        ap.add_argument("--batch", type=int, default=256, help="samples in the batch (256)")
        ap.add_argument("--atoms", type=int, default=4096, help="atoms K (4096; d = K/4)")

    args = harness.parse_args(__doc__.splitlines()[0], options)
    info = harness.machine_info()
    harness.print_machine(info)
    K, B = (1024, 16) if args.quick else (args.atoms, args.batch)
    repeats = 1 if args.quick else 3
    p = make_batch(K, B)
    S, X, lam, eta = p["S"], p["X"], p["lam"], p["eta"]
    gram_s, G = harness.time_once(lambda: S.T @ S)
    Bm = S.T @ X
    t_ref, G_star = harness.time_once(lambda: reference(S, X, lam, G))
    tol = TOL_REL * np.abs(G_star).max(axis=0)
    nnz = np.count_nonzero(G_star, axis=0)
    print(f"K={K}, d={p['d']}, batch {B}, nonzero per g*: {nnz.min()}-{nnz.max()}, "
          f"reference {t_ref:.1f} s")  # fmt: skip
    rows = []

    def row(method, timing, iters, G_out, extra=None):
        ok = within(G_out, G_star, tol)
        seconds = timing.cpu_median
        rows.append({
            "method": method, "batch_s": seconds, "wall_s": timing.median,
            "per_sample_ms": 1e3 * seconds / B,
            "iters": iters, "samples_within_tol": int(ok.sum()),
            "max_rel_err": float((np.abs(G_out - G_star).max(axis=0) / np.abs(G_star).max(axis=0)).max()),
            "load": harness.load_average()[0], **(extra or {}),
        })  # fmt: skip

    # --- event engine: graph and compiled loop once, per-sample drive and step count
    build_s, graph = harness.time_once(
        lambda: compile_vn([S], [np.zeros((1, K))], lam, X[:, 0], eta=eta)
    )
    eng = Engine(graph)
    compile_s, _ = harness.time_once(lambda: eng.run(1))
    pop = layer_name(0)
    steps = np.zeros(B, np.int64)
    for b in range(B):
        eng.reset({pop: {"drive": Bm[:, b]}})
        while True:
            eng.run(STEP_CHUNK)
            steps[b] += STEP_CHUNK
            if np.abs(eng.state[pop]["g"] - G_star[:, b]).max() <= tol[b]:
                break
            if steps[b] > 50000:
                raise RuntimeError(f"engine: sample {b} not within tolerance after 50000 steps")
    out = {}

    def run_engine():
        codes = np.zeros((K, B))
        ev = syn = 0
        for b in range(B):
            eng.reset({pop: {"drive": Bm[:, b]}})
            prof = eng.run(int(steps[b]))
            codes[:, b] = eng.state[pop]["g"]
            ev += int(prof.events.sum())
            syn += int(prof.synops.sum())
        out.update(codes=codes, events=ev, synops=syn)

    t = harness.time_call(run_engine, repeats=repeats, warmup=0)
    row("atomspark engine (event-driven ISTA)", t, int(steps.sum()), out["codes"], {
        "events_per_s": out["events"] / t.cpu_median, "synops_per_s": out["synops"] / t.cpu_median,
        "setup_gram_graph_s": build_s, "compile_s": compile_s,
        "steps_per_sample_median": float(np.median(steps)),
    })  # fmt: skip

    # --- scikit-learn Lasso (coordinate descent), loosest tol that reaches the tolerance
    for pre in (False, True):
        for sk_tol in (1e-4, 1e-5, 1e-6, 1e-8, 1e-10, 1e-12):
            if within(lasso(S, X, lam, sk_tol, pre), G_star, tol).all():
                break
        t, g = time_result(repeats, lasso, S, X, lam, sk_tol, pre)
        name = "precomputed Gram" if pre else "no Gram"
        row(f"scikit-learn Lasso CD ({name}, tol={sk_tol:g}, cold start)", t, None, g)

    # --- dense FISTA, lock-step on the batch, NumPy and torch CPU
    variants = {
        "NumPy G @ Y": (lambda y: G @ y, Bm, np_soft, np.zeros_like, lambda g: g),
        "NumPy S^T (S Y)": (lambda y: S.T @ (S @ y), Bm, np_soft, np.zeros_like, lambda g: g),
    }
    try:
        import torch

        torch.set_num_threads(1)
        Gt, St, Bt = torch.from_numpy(G), torch.from_numpy(S), torch.from_numpy(Bm)

        def t_soft(v, th):
            return torch.sign(v) * torch.clamp(v.abs() - th, min=0.0)

        variants["torch CPU G @ Y"] = (
            lambda y: Gt @ y,
            Bt,
            t_soft,
            torch.zeros_like,
            torch.Tensor.numpy,
        )
        variants["torch CPU S^T (S Y)"] = (lambda y: St.T @ (St @ y), Bt, t_soft, torch.zeros_like,
                                           torch.Tensor.numpy)  # fmt: skip
    except ImportError:
        print("torch unavailable: no torch FISTA rows")
    for name, (mv, b0, soft, zl, to_np) in variants.items():
        _, iters = fista_batch(mv, b0, lam, eta, 20000, soft, zl, G_star, tol)
        t, (g, _) = time_result(repeats, fista_batch, mv, b0, lam, eta, iters, soft, zl)
        row(f"dense FISTA {name} (batch lock-step)", t, iters, np.asarray(to_np(g)))

    base = rows[0]["batch_s"]
    for r in rows:
        r["engine_speedup"] = r["batch_s"] / base
    print(harness.format_table(rows, ["method", "batch_s", "wall_s", "per_sample_ms", "iters",
                                      "samples_within_tol", "engine_speedup", "load"]))  # fmt: skip
    best_sk = min((r for r in rows if "scikit" in r["method"]), key=lambda r: r["batch_s"])
    best_np = min((r for r in rows if "FISTA NumPy" in r["method"]), key=lambda r: r["batch_s"])
    torch_rows = [r for r in rows if "FISTA torch" in r["method"]]
    summary = {
        "engine_vs_sklearn": best_sk["engine_speedup"],
        "sklearn_peer": best_sk["method"],
        "engine_vs_fista_numpy": best_np["engine_speedup"],
        "fista_numpy_peer": best_np["method"],
    }
    if torch_rows:
        best_t = min(torch_rows, key=lambda r: r["batch_s"])
        summary.update(
            engine_vs_fista_torch=best_t["engine_speedup"], fista_torch_peer=best_t["method"]
        )
    bandwidth = harness.memory_bandwidth()
    summary["memory_bandwidth"] = bandwidth
    summary["synops_per_s_at_copy_bandwidth"] = bandwidth["copy_GBps"] * 1e9 / 8  # float64 Gram
    print(summary)
    path = harness.write_result(args.out, "vn_batch", {
        "quick": args.quick, "K": K, "d": p["d"], "batch": B, "tol_rel": TOL_REL, "lam": lam,
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "machine_shared": "2 cores shared with other jobs; 1-minute load average per row",
        "threads": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS")},
        "setup_gram_s": gram_s, "rows": rows, "summary": summary,
    })  # fmt: skip
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
