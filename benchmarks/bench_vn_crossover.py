"""Where the working-set settle stops paying: it against the full Gauss-Seidel settle as the
codes get denser (lam from 30 % down to 0.1 % of max|S^T x|).

    python benchmarks/bench_vn_crossover.py [--atoms 4096] [--batch 16] [--rounds 5]
        [--out docs/results/performance]

Same dictionary and signals as bench_vn_batch.py (K atoms, d = K/4, 2 % active), one graph per
lam (float64), both settles at the same max-change rule (1e-4) on every sample of the batch in
interleaved rounds; process CPU time per sample (median), non-zeros per code, final working-set
size and the ratio full / working set; `slower_at` lists the lams where the full settle is the
faster (ratio below 1).
"""

from __future__ import annotations

import statistics
import time

import harness

harness.pin_one_thread()

import numpy as np  # noqa: E402
from atomspark.networks.vn_compile import compile_vn, layer_name  # noqa: E402
from atomspark.sim.vn_gauss_seidel import GaussSeidelSettle  # noqa: E402
from atomspark.sim.vn_working_set import WorkingSetSettle  # noqa: E402
from bench_vn_batch import make_batch  # noqa: E402

LAM_FRACTIONS = (0.3, 0.1, 0.03, 0.01, 0.003, 0.001)
TOL = 1e-4


def main() -> None:
    def options(ap):
        ap.add_argument("--atoms", type=int, default=4096, help="atoms K (4096)")
        ap.add_argument("--batch", type=int, default=16, help="samples (16)")
        ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (5)")

    args = harness.parse_args(__doc__.splitlines()[0], options)
    K, B = (512, 4) if args.quick else (args.atoms, args.batch)
    p = make_batch(K, B)
    S, X = p["S"], p["X"]
    D = S.T @ X
    top = float(np.median(np.abs(D).max(axis=0)))
    pop = layer_name(0)
    load_before = harness.load_average()
    rows = []
    for frac in LAM_FRACTIONS:
        graph = compile_vn([S], [np.zeros((1, K))], frac * top, X[:, 0], eta=1.0)
        full, ws = GaussSeidelSettle(graph), WorkingSetSettle(graph)
        full.run(max_sweeps=1), ws.run(max_sweeps=1)
        times = {"full": [], "ws": []}
        last = {}
        for _ in range(2 if args.quick else args.rounds):
            for name, solver in (("full", full), ("ws", ws)):
                c0 = time.process_time()
                last[name] = [solver.run({pop: {"drive": D[:, b]}}, tol=TOL) for b in range(B)]
                times[name].append(time.process_time() - c0)
        a = np.array([r.codes[pop] for r in last["full"]])
        b = np.array([r.codes[pop] for r in last["ws"]])
        full_ms = 1e3 * statistics.median(times["full"]) / B
        ws_ms = 1e3 * statistics.median(times["ws"]) / B
        rows.append({"lam_fraction": frac, "nonzero_mean": float((a != 0).sum(1).mean()),
                     "working_set_mean": float(np.mean([r.working_set for r in last["ws"]])),
                     "full_ms_per_sample": full_ms, "ws_ms_per_sample": ws_ms,
                     "full_over_ws": full_ms / ws_ms,
                     "max_rel_diff": float(np.abs(a - b).max() / np.abs(a).max())})  # fmt: skip
        print(rows[-1], flush=True)
    slower = [r["lam_fraction"] for r in rows if r["full_over_ws"] < 1]
    harness.write_result(args.out, "vn_crossover", {
        "quick": args.quick, "K": K, "d": p["d"], "batch": B, "tol": TOL,
        "rounds": 2 if args.quick else args.rounds, "load_before": load_before,
        "load_after": harness.load_average(),
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "slower_at": slower, "rows": rows,
    })  # fmt: skip


if __name__ == "__main__":
    main()
