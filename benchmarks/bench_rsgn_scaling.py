"""RSGN scaling: counted messages and wall time vs number of nodes N and tokens L, published vs sparse.

One token sequence (B = 1) of random tokens is run through the NumPy reference forward pass
(ignition + K propagation steps + readout); its counted messages (sum over steps of the
out-degrees of the nodes above the send gate) are the event-driven cost. The published mode is
the released code's dense all-to-all W; the sparse mode keeps the k nearest targets per node
(hyperbolic distance) with a hard cutoff. When the engine's RSGN unit is available
(networks/rsgn_compile.py), the same propagation is also timed on the engine. Fitted log-log
slopes give the empirical exponents (messages ~ N^slope).
"""

from __future__ import annotations

import harness
import numpy as np
from atomspark.networks.rsgn import RSGNConfig, forward, ignition, init_params, initial_state

K_NEAREST = 16
SEQ_LEN = 64
N_FOR_L = 512


def engine_api():
    """compile_rsgn and Engine when the RSGN engine unit is importable, else None."""
    try:
        from atomspark.networks.rsgn_compile import compile_rsgn
        from atomspark.sim.engine import Engine
    except Exception:  # noqa: BLE001 - benchmark the reference alone if the unit is absent
        return None
    return compile_rsgn, Engine


def config_for(mode: str, n: int) -> RSGNConfig:
    if mode == "published":
        return RSGNConfig(mode="published", n_nodes=n)
    return RSGNConfig(mode="sparse", n_nodes=n, k_nearest=min(K_NEAREST, n - 1))


def measure(mode: str, n: int, length: int, repeats: int, eng) -> dict:
    cfg = config_for(mode, n)
    params = init_params(cfg, seed=0)
    tokens = np.random.default_rng(1).standard_normal((1, length, cfg.d_in))
    res = {}
    t = harness.time_call(lambda: res.__setitem__("r", forward(params, cfg, tokens)), repeats, 1)
    prop = res["r"].propagation
    row = {
        "mode": mode,
        "N": n,
        "L": length,
        "K": cfg.n_steps,
        "messages": int(prop.messages.sum()),
        "mean_active": float(prop.active.mean()),
        "ignited": int(np.count_nonzero(res["r"].alpha0 > cfg.cutoff)),
        "ignition_distances": length * n,
        "dense_macs": cfg.n_steps * n * n * cfg.d_hidden,
        "reference_s": t.median,
    }
    if eng is not None:
        compile_rsgn, Engine = eng
        alpha0 = ignition(params, cfg, tokens)
        h0 = initial_state(params, cfg, tokens, alpha0)
        try:
            build_s, graph = harness.time_once(lambda: compile_rsgn(params, cfg, alpha0[0], h0[0]))
            out = {}
            te = harness.time_call(
                lambda: out.__setitem__("p", Engine(graph).run(cfg.n_steps + 1)), repeats, 1
            )
            row["engine_s"] = te.median
            row["engine_build_s"] = build_s
            # engine step t < K carries RSGN step t's messages; step K is the final emission
            row["engine_synops"] = int(out["p"].synops[: cfg.n_steps].sum())
            row["engine_matches_messages"] = row["engine_synops"] == row["messages"]
            row["reference_over_engine"] = t.median / te.median
        except Exception as exc:  # noqa: BLE001 - an engine unit still under construction
            row["engine_error"] = f"{type(exc).__name__}: {exc}"
    return row


def slopes(rows: list[dict], key_x: str, keys_y: tuple[str, ...]) -> dict:
    out = {}
    for mode in ("published", "sparse"):
        sub = [r for r in rows if r["mode"] == mode]
        for ky in keys_y:
            pts = [(r[key_x], r[ky]) for r in sub if r.get(ky)]
            if len(pts) >= 2:
                out[f"{mode}: {ky} vs {key_x}"] = harness.loglog_slope(*zip(*pts))
    return out


def main() -> None:
    args = harness.parse_args(__doc__.splitlines()[0])
    harness.print_machine(harness.machine_info())
    eng = engine_api()
    print("engine RSGN unit:", "available" if eng else "not available (reference counts only)")
    n_values = (128, 256, 512) if args.quick else (128, 256, 512, 1024, 2048)
    l_values = (16, 64, 256) if args.quick else (16, 32, 64, 128, 256, 512)
    repeats = 2 if args.quick else 3
    by_n = [measure(m, n, SEQ_LEN, repeats, eng) for m in ("published", "sparse") for n in n_values]
    by_l = [measure(m, N_FOR_L, L, repeats, eng) for m in ("published", "sparse") for L in l_values]
    cols = ["mode", "N", "L", "messages", "mean_active", "ignited", "reference_s"]
    if eng:
        cols += ["engine_s", "engine_synops", "reference_over_engine"]
    print(f"vs N (L = {SEQ_LEN}):")
    print(harness.format_table(by_n, cols))
    print(f"vs L (N = {N_FOR_L}):")
    print(harness.format_table(by_l, cols))
    fit = {
        **slopes(by_n, "N", ("messages", "reference_s", "engine_s")),
        **slopes(by_l, "L", ("messages", "reference_s", "engine_s")),
    }
    for k, v in fit.items():
        print(f"  log-log slope {k}: {v:.2f}")
    for n in n_values:
        pub = next(r for r in by_n if r["mode"] == "published" and r["N"] == n)
        spa = next(r for r in by_n if r["mode"] == "sparse" and r["N"] == n)
        print(
            f"  N={n}: published/sparse messages = {pub['messages'] / max(spa['messages'], 1):.1f}x"
        )
    harness.write_result(
        args.out,
        "rsgn_scaling",
        {"quick": args.quick, "k_nearest": K_NEAREST, "by_n": by_n, "by_l": by_l, "slopes": fit},
    )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for mode in ("published", "sparse"):
            sub = [r for r in by_n if r["mode"] == mode]
            axes[0].loglog([r["N"] for r in sub], [r["messages"] for r in sub], "o-", label=mode)
            sub = [r for r in by_l if r["mode"] == mode]
            axes[1].loglog([r["L"] for r in sub], [r["reference_s"] for r in sub], "o-", label=mode)
        axes[0].set(xlabel="nodes N", ylabel="messages per forward (K steps)")
        axes[1].set(xlabel="tokens L", ylabel="reference forward time (s)")
        for ax in axes:
            ax.legend()
        harness.save_figure(fig, args.out, "rsgn_scaling")
    except ImportError:
        pass


if __name__ == "__main__":
    main()
