"""Placement on Loihi 1 cores: time and cross-core / cross-chip traffic vs network size, per strategy.

Network: n units at random 3-D positions, each sending to its 8 nearest neighbours plus 1 random
unit (local structure with some long-range links), in shuffled index order so that index order
carries no locality. Every unit emits one event (unit_events = 1), so traffic counts messages per
network-wide spike wave. Strategies: sequential (index order), partition (Kernighan-Lin style
groups), locality (Morton order of the positions).
"""

from __future__ import annotations

import harness
import numpy as np
import scipy.sparse as sp
from atomspark.mapping.hardware import load_hardware
from atomspark.mapping.placement import STRATEGIES, place, traffic
from scipy.spatial import cKDTree

K_LOCAL, N_RANDOM = 8, 1


def local_graph(n: int, seed: int = 0) -> tuple[sp.csr_matrix, np.ndarray]:
    rng = np.random.default_rng(seed)
    pos = rng.random((n, 3))
    _, nbr = cKDTree(pos).query(pos, k=K_LOCAL + 1)
    rows = np.repeat(np.arange(n), K_LOCAL + N_RANDOM)
    rand = rng.integers(0, n, (n, N_RANDOM))
    cols = np.concatenate([nbr[:, 1:], rand], axis=1).ravel()
    keep = rows != cols
    adj = sp.csr_matrix((np.ones(keep.sum()), (rows[keep], cols[keep])), shape=(n, n))
    adj.data[:] = 1.0
    return adj, pos


def main() -> None:
    args = harness.parse_args(__doc__.splitlines()[0])
    harness.print_machine(harness.machine_info())
    hw = load_hardware("loihi1-davies")
    sizes = (2_000, 8_000) if args.quick else (2_000, 8_000, 32_000)
    rows = []
    for n in sizes:
        adj, pos = local_graph(n)
        for strategy in STRATEGIES:
            res = {}

            def run(adj=adj, pos=pos, res=res, strategy=strategy):
                res["p"] = place(adj, hw, strategy=strategy, positions=pos, seed=0)

            try:
                t = harness.time_call(run, repeats=1 if n > 10_000 else 3, warmup=0)
            except Exception as exc:  # noqa: BLE001 - a limit the strategy cannot meet is a result
                rows.append({"units": n, "strategy": strategy, "error": str(exc)})
                print(f"{strategy} at {n} units: {exc}")
                continue
            tr = traffic(adj, res["p"], hw)
            rows.append(
                {
                    "units": n,
                    "synapses": int(adj.nnz),
                    "strategy": strategy,
                    "place_s": t.median,
                    "cores": res["p"].n_cores,
                    "chips": res["p"].n_chips,
                    "messages": tr.messages,
                    "cross_core": tr.cross_core,
                    "cross_chip": tr.cross_chip,
                    "router_hops": tr.router_hops,
                }
            )
        done = [r for r in rows if r["units"] == n and "error" not in r]
        seq = next((r for r in done if r["strategy"] == "sequential"), None)
        for r in done:
            if seq is not None:
                r["cross_core_vs_sequential"] = r["cross_core"] / max(seq["cross_core"], 1.0)
        print(harness.format_table(done))
    slopes = {}
    for strategy in STRATEGIES:
        sub = [r for r in rows if r["strategy"] == strategy and "error" not in r]
        if len(sub) < 2:
            continue
        slopes[f"{strategy}: place_s vs units"] = harness.loglog_slope(
            [r["units"] for r in sub], [r["place_s"] for r in sub]
        )
        print(
            f"  log-log slope of placement time vs units, {strategy}: "
            f"{slopes[f'{strategy}: place_s vs units']:.2f}"
        )
    harness.write_result(
        args.out,
        "placement",
        {"quick": args.quick, "hardware": "loihi1-davies", "rows": rows, "slopes": slopes},
    )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for strategy in STRATEGIES:
            sub = [r for r in rows if r["strategy"] == strategy and "error" not in r]
            axes[0].loglog(
                [r["units"] for r in sub], [r["place_s"] for r in sub], "o-", label=strategy
            )
            axes[1].loglog(
                [r["units"] for r in sub], [r["cross_core"] for r in sub], "o-", label=strategy
            )
        axes[0].set(xlabel="units", ylabel="placement time (s)")
        axes[1].set(xlabel="units", ylabel="cross-core messages per spike wave")
        for ax in axes:
            ax.legend()
        harness.save_figure(fig, args.out, "placement")
    except ImportError:
        pass


if __name__ == "__main__":
    main()
