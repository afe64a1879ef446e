"""VN settle on a batch: the engine's Gauss-Seidel and Jacobi settles vs scikit-learn and FISTA.

Problem: one dictionary S (d x K, d = K/4, unit columns), a batch of B signals x_b = S g_b +
noise with 2 % of the atoms active in each g_b, one lam for the batch (LAM_FRACTION times the
median of max|S^T x_b|), energy 1/2 ||x - S g||^2 + lam ||g||_1. The reference g*_b is
scikit-learn's coordinate descent at tol 1e-12, polished by an exact solve on its support and
checked against the optimality conditions. Every solver runs to the same tolerance,
max|g_b - g*_b| <= TOL_REL max|g*_b| for every sample, with the settings found beforehand:
- Gauss-Seidel settle (sim/vn_gauss_seidel.py) on the compiled graph's Gram, float64 and
  float32, at the loosest max-change stopping rule (of TOL_GRID) that reaches the tolerance;
- the working-set settle (sim/vn_working_set.py) on the same graph, float64 and float32, chosen
  the same way;
- skglm's and celer's Lasso (working sets with Anderson extrapolation; dual extrapolation), the
  dedicated Lasso solvers, one fit per sample (neither fits several targets at once), float64,
  at the loosest tol of TOL_GRID that reaches the tolerance;
- the engine's event-driven Jacobi ISTA (the chip model): graph and compiled loop built once,
  each sample a reset of the drive S^T x_b and the number of steps that sample needs;
- scikit-learn Lasso: coordinate descent over the same samples (one multi-target fit, cold
  start), at the loosest tol of the same TOL_GRID that reaches the tolerance: on S in float64
  and in float32 (each Gauss-Seidel precision is judged against its own), and in float64 on
  the Gram computed once per dictionary (passed as an array, as the Gauss-Seidel settle gets
  its Gram; precompute=True would recompute it inside every fit);
- dense FISTA with adaptive restart on the whole batch in lock-step (G @ Y, or S^T (S Y)) in
  NumPy and in torch on the CPU, for the iterations the slowest sample needs.
Timing: `--rounds` interleaved rounds, each running every method once in turn; process CPU
time, min and median per method, ratios to the Gauss-Seidel settle with their range over the
rounds, load average before and after. One thread everywhere. Set-up (the Gram S^T S, graph
building, compilation) is reported apart; the Gram is computed once per dictionary. The drives
S^T x_b are per-sample work: every timed solve computes them from X (scikit-learn does so
inside its fit).
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
from atomspark.sim.vn_gauss_seidel import GaussSeidelSettle  # noqa: E402
from atomspark.sim.vn_working_set import WorkingSetSettle  # noqa: E402

TOL_REL = 1e-4
ACTIVE_FRACTION = 0.02
NOISE = 0.01
LAM_FRACTION = 0.1
STEP_CHUNK = 5  # engine steps needed per sample are found to within this many
TOL_GRID = (1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 1e-6, 1e-7)  # loosest first


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
    """scikit-learn's coordinate descent on all columns of X; S in Fortran order (what its
    solver reads, so the fit copies nothing); precompute: False or the Gram S^T S (an array)."""
    from sklearn.linear_model import Lasso

    m = Lasso(alpha=lam / S.shape[0], fit_intercept=False, tol=tol, max_iter=100000,
              precompute=precompute)  # fmt: skip
    m.fit(np.asfortranarray(S), X)
    return np.atleast_2d(m.coef_).T.astype(np.float64)  # (K, B)


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
    """Lock-step FISTA on a batch (columns) with per-column gradient adaptive restart
    (O'Donoghue & Candes 2015): a column whose step z - g points against its gradient-map step
    y - z restarts its momentum. Plain FISTA needed 142-151 iterations to the tolerance on three
    K = 4096 batches where the restarted one needed 55-58, at the same cost per iteration.
    With g_ref, stops when every column is within tol."""
    g = zeros_like(Bm)
    y, t = g, zeros_like(Bm[0]) + 1.0
    for it in range(1, iters + 1):
        z = soft(y - eta * (matvec(y) - Bm), eta * lam)
        keep = (((y - z) * (z - g)).sum(0) <= 0) * 1.0  # 0: that column restarts
        t = keep * t + (1.0 - keep)
        t_next = 0.5 * (1.0 + (1.0 + 4.0 * t * t) ** 0.5)
        y = z + ((t - 1.0) / t_next) * (z - g)
        g, t = z, t_next
        if g_ref is not None and bool(within(np.asarray(g), g_ref, tol).all()):
            return g, it
    return g, iters


def np_soft(v, t):
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


class Method:
    """One solver of the batch: `solve()` returns (codes (K, B), iterations, counters) for the
    settings found beforehand; timed by the interleaved rounds."""

    def __init__(self, name: str, solve, setup_s: float | None = None, extra: dict | None = None):
        self.name, self.solve, self.setup_s, self.extra = name, solve, setup_s, extra or {}
        self.cpu, self.wall, self.last = [], [], None

    def timed(self) -> None:
        c0, w0 = time.process_time(), time.perf_counter()
        self.last = self.solve()
        self.cpu.append(time.process_time() - c0)
        self.wall.append(time.perf_counter() - w0)


def engine_jacobi(S, X, Bm, lam, eta, G_star, tol) -> Method:
    """The engine's event-driven (Jacobi) ISTA: graph and loop once, per-sample drive and the
    number of steps that sample needs (found beforehand, to within STEP_CHUNK)."""
    K, B = S.shape[1], X.shape[1]
    build_s, graph = harness.time_once(
        lambda: compile_vn([S], [np.zeros((1, K))], lam, X[:, 0], eta=eta)
    )
    eng = Engine(graph)
    compile_s, _ = harness.time_once(lambda: eng.run(1))
    pop = layer_name(0)
    steps = np.zeros(B, np.int64)
    for b in range(B):
        eng.reset({pop: {"drive": Bm[:, b]}})
        while np.abs(eng.state[pop]["g"] - G_star[:, b]).max() > tol[b]:
            eng.run(STEP_CHUNK)
            steps[b] += STEP_CHUNK
            if steps[b] > 50000:
                raise RuntimeError(f"engine: sample {b} not within tolerance after 50000 steps")

    def solve():
        codes, ev, syn, drives = np.zeros((K, B)), 0, 0, S.T @ X
        for b in range(B):
            eng.reset({pop: {"drive": drives[:, b]}})
            prof = eng.run(int(steps[b]))
            codes[:, b] = eng.state[pop]["g"]
            ev, syn = ev + int(prof.events.sum()), syn + int(prof.synops.sum())
        return codes, int(steps.sum()), {"events": ev, "synops": syn}

    return Method("atomspark engine, Jacobi event-driven ISTA (chip model)", solve, build_s,
                  {"compile_s": compile_s,
                   "steps_per_sample_median": float(np.median(steps))})  # fmt: skip


def engine_gauss_seidel(S, X, lam, G_star, tol, dtype: str, working_set: bool = False) -> Method:
    """The Gauss-Seidel settle on the same compiled graph (sim/vn_gauss_seidel.py), or with
    working_set its working-set variant (sim/vn_working_set.py), at the loosest stopping
    tolerance that reaches the tolerance on every sample."""
    K, B = S.shape[1], X.shape[1]
    # eta is the Jacobi step size, which the settle never reads: given, it spares compile_vn a
    # power iteration on the K x K Gram (about 3/4 of the set-up at K = 4096)
    build_s, gs = harness.time_once(
        lambda: (WorkingSetSettle if working_set else GaussSeidelSettle)(
            compile_vn([S], [np.zeros((1, K))], lam, X[:, 0], eta=1.0, dtype=dtype)
        )
    )
    compile_s, _ = harness.time_once(lambda: gs.run(max_sweeps=1))
    pop = layer_name(0)

    def solve_at(gs_tol):
        codes, ev, syn, sweeps, drives = np.zeros((K, B)), 0, 0, 0, S.T @ X
        for b in range(B):
            r = gs.run({pop: {"drive": drives[:, b]}}, tol=gs_tol)
            codes[:, b] = r.codes[pop]
            ev, syn, sweeps = ev + r.events, syn + r.synops, sweeps + r.sweeps
        return codes, sweeps, {"events": ev, "synops": syn}

    for gs_tol in TOL_GRID:
        if within(solve_at(gs_tol)[0], G_star, tol).all():
            break
    kind = "working-set settle" if working_set else "Gauss-Seidel settle"
    name = f"atomspark {kind} ({dtype} Gram, stop at max change {gs_tol:g})"
    return Method(name, lambda: solve_at(gs_tol), build_s, {"compile_s": compile_s})


def sklearn_lasso(S, X, lam, G_star, tol, dtype: str, gram=None, gram_s=None) -> Method:
    """scikit-learn's coordinate descent in `dtype` at the loosest tol of TOL_GRID that reaches
    the tolerance; gram: the Gram computed once per dictionary (float64; its set-up gram_s
    seconds), or None."""
    S_d = np.asfortranarray(S, dtype=dtype)  # per dictionary, like the engines' graphs

    def fit(sk_tol):
        return lasso(S_d, X.astype(dtype), lam, sk_tol, False if gram is None else gram)

    for sk_tol in TOL_GRID:
        if within(fit(sk_tol), G_star, tol).all():
            break
    name = "no Gram" if gram is None else "Gram given once per dictionary"
    return Method(f"scikit-learn Lasso CD ({dtype}, {name}, tol={sk_tol:g}, cold start)",
                  lambda: (fit(sk_tol), None, {}), gram_s)  # fmt: skip


def dedicated_lasso(S, X, lam, G_star, tol, package: str) -> Method | None:
    """skglm's or celer's Lasso (float64, no intercept), one fit per sample, cold start, at the
    loosest tol of TOL_GRID that reaches the tolerance; None when the package is absent."""
    try:
        mod = __import__(package)
    except ImportError:
        print(f"{package} unavailable: no {package} row")
        return None
    S_f = np.asfortranarray(S)
    K, B = S.shape[1], X.shape[1]

    def fit(t):
        codes = np.zeros((K, B))
        for b in range(B):
            m = mod.Lasso(alpha=lam / S.shape[0], fit_intercept=False, tol=t, max_iter=1000)
            codes[:, b] = m.fit(S_f, X[:, b]).coef_
        return codes

    for sk_tol in TOL_GRID:
        if within(fit(sk_tol), G_star, tol).all():
            break
    version = getattr(mod, "__version__", "?")
    return Method(f"{package} {version} Lasso (float64, tol={sk_tol:g}, cold start, per sample)",
                  lambda: (fit(sk_tol), None, {}))  # fmt: skip


def fista_methods(S, X, G, lam, eta, G_star, tol) -> list[Method]:
    """Dense FISTA on the whole batch in lock-step, NumPy and torch on the CPU, for the
    iterations the slowest sample needs (the drives S^T X computed in each timed solve)."""
    variants = {
        "NumPy G @ Y": (lambda y: G @ y, lambda: S.T @ X, np_soft, np.zeros_like, lambda g: g),
        "NumPy S^T (S Y)": (lambda y: S.T @ (S @ y), lambda: S.T @ X, np_soft, np.zeros_like,
                            lambda g: g),
    }  # fmt: skip
    try:
        import torch

        torch.set_num_threads(1)
        Gt, St, Xt = torch.from_numpy(G), torch.from_numpy(S), torch.from_numpy(X)

        def Bt():
            return St.T @ Xt

        def t_soft(v, th):
            return torch.sign(v) * torch.clamp(v.abs() - th, min=0.0)

        to_np = torch.Tensor.numpy
        variants["torch CPU G @ Y"] = (lambda y: Gt @ y, Bt, t_soft, torch.zeros_like, to_np)
        variants["torch CPU S^T (S Y)"] = (lambda y: St.T @ (St @ y), Bt, t_soft,
                                           torch.zeros_like, to_np)  # fmt: skip
    except ImportError:
        print("torch unavailable: no torch FISTA rows")
    out = []
    for name, (mv, b0, soft, zl, to_np) in variants.items():
        _, iters = fista_batch(mv, b0(), lam, eta, 20000, soft, zl, G_star, tol)

        def solve(mv=mv, b0=b0, soft=soft, zl=zl, to_np=to_np, iters=iters):
            g, _ = fista_batch(mv, b0(), lam, eta, iters, soft, zl)
            return np.asarray(to_np(g)), iters, {}

        out.append(Method(f"dense FISTA {name} (batch lock-step, adaptive restart)", solve))
    return out


def method_row(m: Method, G_star, tol, B: int) -> dict:
    codes, iters, counts = m.last
    ok = within(codes, G_star, tol)
    med = float(np.median(m.cpu))
    err = np.abs(codes - G_star).max(axis=0) / np.abs(G_star).max(axis=0)
    row = {"method": m.name, "batch_s": med, "batch_min_s": min(m.cpu), "cpu_s": m.cpu,
           "wall_s": float(np.median(m.wall)), "per_sample_ms": 1e3 * med / B, "iters": iters,
           "samples_within_tol": int(ok.sum()), "max_rel_err": float(err.max()),
           "setup_s": m.setup_s, **m.extra}  # fmt: skip
    if counts:
        row.update(counts, events_per_s=counts["events"] / med,
                   synops_per_s=counts["synops"] / med)  # fmt: skip
    return row


def main() -> None:
    def options(ap):
        ap.add_argument("--batch", type=int, default=64, help="samples in the batch (64)")
        ap.add_argument("--atoms", type=int, default=4096, help="atoms K (4096; d = K/4)")
        ap.add_argument("--rounds", type=int, default=5, help="interleaved timed rounds (5)")
        ap.add_argument("--name", default="vn_batch", help="result file name (vn_batch)")

    args = harness.parse_args(__doc__.splitlines()[0], options)
    harness.print_machine(harness.machine_info())
    K, B = (1024, 16) if args.quick else (args.atoms, args.batch)
    rounds = 2 if args.quick else args.rounds
    p = make_batch(K, B)
    S, X, lam, eta = p["S"], p["X"], p["lam"], p["eta"]
    gram_s, G = harness.time_once(lambda: S.T @ S)
    Bm = S.T @ X
    t_ref, G_star = harness.time_once(lambda: reference(S, X, lam, G))
    tol = TOL_REL * np.abs(G_star).max(axis=0)
    nnz = np.count_nonzero(G_star, axis=0)
    print(f"K={K}, d={p['d']}, batch {B}, nonzero per g*: {nnz.min()}-{nnz.max()}, "
          f"reference {t_ref:.1f} s")  # fmt: skip
    methods = [
        engine_gauss_seidel(S, X, lam, G_star, tol, "float64"),
        engine_gauss_seidel(S, X, lam, G_star, tol, "float32"),
        engine_gauss_seidel(S, X, lam, G_star, tol, "float64", working_set=True),
        engine_gauss_seidel(S, X, lam, G_star, tol, "float32", working_set=True),
        engine_jacobi(S, X, Bm, lam, eta, G_star, tol),
        sklearn_lasso(S, X, lam, G_star, tol, "float64"),
        sklearn_lasso(S, X, lam, G_star, tol, "float32"),
        sklearn_lasso(S, X, lam, G_star, tol, "float64", gram=G, gram_s=gram_s),
        *fista_methods(S, X, G, lam, eta, G_star, tol),
        *(
            m
            for m in (dedicated_lasso(S, X, lam, G_star, tol, pkg) for pkg in ("skglm", "celer"))
            if m is not None
        ),
    ]
    load_before = harness.load_average()
    for _ in range(rounds):  # interleaved: every method once per round
        for m in methods:
            m.timed()
    load_after = harness.load_average()
    rows = [method_row(m, G_star, tol, B) for m in methods]
    base = rows[0]
    for r, m in zip(rows, methods):
        r["vs_gauss_seidel"] = r["batch_s"] / base["batch_s"]
        pairs = [c / g for g, c in zip(methods[0].cpu, m.cpu)]
        r["vs_gauss_seidel_pairs"] = [min(pairs), max(pairs)]
    print(harness.format_table(rows, ["method", "batch_min_s", "batch_s", "wall_s",
                                      "per_sample_ms", "iters", "samples_within_tol",
                                      "vs_gauss_seidel"]))  # fmt: skip
    bandwidth = harness.memory_bandwidth()
    path = harness.write_result(args.out, args.name, {
        "quick": args.quick, "K": K, "d": p["d"], "batch": B, "tol_rel": TOL_REL, "lam": lam,
        "rounds": rounds, "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "machine_shared": "2 cores shared with other jobs; load averages before and after",
        "load_before": load_before, "load_after": load_after,
        "threads": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS")},
        "setup_gram_s": gram_s, "reference_s": t_ref, "memory_bandwidth": bandwidth,
        "synops_per_s_at_copy_bandwidth": bandwidth["copy_GBps"] * 1e9 / 8,  # float64 Gram
        "rows": rows,
    })  # fmt: skip
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
