"""CUBA (Brette et al. 2007): synaptic events per second, atomspark engine vs Brian2 vs dense NumPy.

All three simulate the same 4000-neuron network (atomspark.scenarios.cuba) for the same number of
0.1 ms steps. A synaptic event is one spike delivered along one synapse (spikes x fan-out); each
simulator's rate is (its synaptic events) / (its wall time). Brian2 is timed with every codegen
target that works here (cython needs a C compiler, numpy always works); the fastest is the peer.
"""

from __future__ import annotations

import time

import harness
import numpy as np
from atomspark.scenarios.cuba import CubaConfig, CubaNetwork, brian2_cuba, cuba_graph, cuba_network
from atomspark.sim.engine import Engine


def run_engine(net: CubaNetwork, steps: int, repeats: int) -> dict:
    """Engine timing; a fresh Engine per repeat so every repeat simulates the same spikes."""
    graph = cuba_graph(net)
    compile_s, _ = harness.time_once(lambda: Engine(graph).run(5))  # Numba JIT (or cache load)
    profiles = []

    def one_run():
        profiles.append(Engine(graph).run(steps))

    t = harness.time_call(one_run, repeats=repeats, warmup=0)
    prof = profiles[-1]
    spikes = int(prof.events.sum())
    synops = int(prof.synops.sum())
    return {
        "simulator": "atomspark engine (Numba, float64)",
        "first_call_s": compile_s,
        "time": t.to_dict(),
        "spikes": spikes,
        "synaptic_events": synops,
        "rate_hz": spikes / net.config.n / (steps * net.config.dt),
        "events_per_s": synops / t.median,
    }


def run_brian2(net: CubaNetwork, steps: int, repeats: int, target: str) -> dict:
    """Brian2 runtime mode with `target`; the first (compiling) run is timed separately and
    each timed run builds a fresh network (construction excluded, run() included)."""
    import brian2 as b2

    duration = steps * net.config.dt * b2.second
    out_deg = np.bincount(net.pre, minlength=net.config.n)
    t0 = time.perf_counter()
    network, _ = brian2_cuba(net, target)
    network.run(duration)
    first_s = time.perf_counter() - t0
    times, counts = [], []
    for _ in range(repeats):
        network, mon = brian2_cuba(net, target)
        t0 = time.perf_counter()
        network.run(duration)
        times.append(time.perf_counter() - t0)
        counts.append((int(mon.num_spikes), int(out_deg[np.asarray(mon.i)].sum())))
    med = float(np.median(times))
    spikes, synops = counts[-1]
    return {
        "simulator": f"Brian2 {b2.__version__} runtime, target={target}",
        "first_call_s": first_s,
        "time": {"median": med, "minimum": min(times), "maximum": max(times), "repeats": repeats},
        "spikes": spikes,
        "synaptic_events": synops,
        "rate_hz": spikes / net.config.n / (steps * net.config.dt),
        "events_per_s": synops / med,
    }


def dense_numpy_run(net: CubaNetwork, steps: int) -> tuple[int, int]:
    """Plain dense NumPy CUBA (same update order as the engine's LIF kernel, delay 1 step):
    every step multiplies the full weight matrices by the spike vector. Returns (spikes, synops)."""
    cfg = net.config
    n, n_exc = cfg.n, cfg.n_exc
    scale = cfg.dt / cfg.taum
    w_e = np.zeros((n, n_exc))
    w_i = np.zeros((n, n - n_exc))
    exc = net.excitatory
    w_e[net.post[exc], net.pre[exc]] = cfg.we * scale
    w_i[net.post[~exc], net.pre[~exc] - n_exc] = cfg.wi * scale
    ku, ku2, kv = np.exp(-cfg.dt / cfg.taue), np.exp(-cfg.dt / cfg.taui), np.exp(-cfg.dt / cfg.taum)
    bias = (1 - kv) * cfg.el_above_reset
    refractory = int(round(cfg.refractory / cfg.dt))
    u, u2, v = np.zeros(n), np.zeros(n), net.v0.copy()
    refr = np.zeros(n, np.int64)
    spikes = np.zeros(n)
    out_deg = np.bincount(net.pre, minlength=n)
    n_spikes = synops = 0
    for _ in range(steps):
        u = u * ku + w_e @ spikes[:n_exc]
        u2 = u2 * ku2 + w_i @ spikes[n_exc:]
        held = refr > 0
        refr[held] -= 1
        v = np.where(held, 0.0, v * kv + u + u2 + bias)
        fired = ~held & (v > cfg.threshold)
        v[fired] = 0.0
        refr[fired] = refractory
        spikes = fired.astype(np.float64)
        n_spikes += int(fired.sum())
        synops += int(out_deg[fired].sum())
    return n_spikes, synops


def run_dense(net: CubaNetwork, steps: int, repeats: int) -> dict:
    res = []
    t = harness.time_call(lambda: res.append(dense_numpy_run(net, steps)), repeats, warmup=0)
    spikes, synops = res[-1]
    return {
        "simulator": "dense NumPy step (W @ s every step)",
        "first_call_s": None,
        "time": t.to_dict(),
        "spikes": spikes,
        "synaptic_events": synops,
        "rate_hz": spikes / net.config.n / (steps * net.config.dt),
        "events_per_s": synops / t.median,
    }


def main() -> None:
    args = harness.parse_args(__doc__.splitlines()[0])
    info = harness.machine_info()
    harness.print_machine(info)
    cfg = CubaConfig()
    steps = 1000 if args.quick else 5000  # 0.1 s / 0.5 s of biological time
    dense_steps = 200 if args.quick else 1000
    repeats = 2 if args.quick else 5  # engine and Brian2 runs are short: medians of 5
    net = cuba_network(cfg)
    print(f"CUBA: {cfg.n} neurons, {net.n_synapses} synapses, {steps} steps of {cfg.dt * 1e3} ms")

    rows = [run_engine(net, steps, repeats)]
    brian = []
    # cython compiles for minutes on this machine: only the full run tries it
    for target in ("numpy",) if args.quick else ("cython", "numpy"):
        try:
            brian.append(run_brian2(net, steps, repeats, target))
        except Exception as exc:  # noqa: BLE001 - report which targets are unavailable here
            print(f"Brian2 target {target} unavailable: {type(exc).__name__}: {exc}")
    rows += brian
    rows.append(run_dense(net, dense_steps, 1 if args.quick else 2))
    eng = rows[0]["events_per_s"]
    best_brian = max(brian, key=lambda r: r["events_per_s"]) if brian else None
    table = []
    for r in rows:
        table.append(
            {
                "simulator": r["simulator"],
                "steps": dense_steps if r["simulator"].startswith("dense") else steps,
                "median_s": r["time"]["median"],
                "rate_Hz": r["rate_hz"],
                "syn_events": r["synaptic_events"],
                "syn_events_per_s": r["events_per_s"],
                "engine_speedup": eng / r["events_per_s"],
                "first_call_s": r["first_call_s"] if r["first_call_s"] is not None else "-",
            }
        )
    print(harness.format_table(table))
    summary = {"engine_vs_dense": eng / rows[-1]["events_per_s"]}
    if best_brian:
        summary["engine_vs_brian2"] = eng / best_brian["events_per_s"]
        summary["brian2_peer"] = best_brian["simulator"]
        print(
            f"engine / fastest Brian2 ({best_brian['simulator']}): "
            f"{summary['engine_vs_brian2']:.2f}x synaptic events per second (target >= 3x)"
        )
    path = harness.write_result(
        args.out,
        "cuba",
        {
            "quick": args.quick,
            "config": cfg.__dict__,
            "n_synapses": net.n_synapses,
            "rows": table,
            "details": rows,
            "summary": summary,
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
