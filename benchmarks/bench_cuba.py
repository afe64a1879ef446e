"""CUBA (Brette et al. 2007): atomspark engine vs Brian2 cpp_standalone (compiled C++), one thread.

Both simulate the same networks (atomspark.scenarios.runs.cuba: same synapses, same initial voltages,
exact exponential integration, 0.1 ms steps): 4000 neurons at 2 % connectivity for 1 s of
biological time and 40,000 neurons at 0.2 % for 0.5 s. One thread each (Numba has no parallel
loops here; Brian2's OpenMP is off). Reported separately for both: setup/compilation (Brian2:
code generation + C++ build; engine: Numba compilation into an empty cache), the first run, and
the median of the timed runs. The machine is shared, so the headline compares CPU time: Brian2's
own measurement of its main simulation loop (last_run_info.txt: std::clock, i.e. process CPU
time, without OpenMP; process start, loading and writing results excluded) against the
engine's process CPU time for run(); wall times of both are given too. A synaptic event is one spike delivered along one synapse. A dense NumPy
step (W @ s every step) is the trivial baseline at 4000 neurons. Events and synaptic ops per
second are set next to the single-thread memory bandwidth measured in the same run.
"""

from __future__ import annotations

import os
import tempfile
import time

import harness

harness.pin_one_thread()
os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="atomspark_bench_numba_")  # cold compile

import numpy as np  # noqa: E402
from atomspark.scenarios.runs.cuba import (  # noqa: E402
    CubaConfig,
    CubaNetwork,
    brian2_cuba,
    cuba_graph,
    cuba_network,
)
from atomspark.sim.engine import Engine  # noqa: E402

SIZES = {  # name: (config, biological seconds)
    "4000 / 2 %": (CubaConfig(), 1.0),
    "40000 / 0.2 %": (CubaConfig(n=40_000, p_conn=0.002), 0.5),
}
STORED_BYTES_PER_SYNAPSE = 12  # float64 weight + int32 target index (uniform delay: no delay)


def _rates(net: CubaNetwork, steps: int, spikes: int, synops: int, seconds: float) -> dict:
    return {
        "spikes": spikes,
        "synaptic_events": synops,
        "rate_hz": spikes / net.config.n / (steps * net.config.dt),
        "events_per_s": spikes / seconds,
        "synops_per_s": synops / seconds,
        "headline_seconds": seconds,
    }


def run_engine(net: CubaNetwork, steps: int, repeats: int) -> dict:
    """Graph built once, run loop compiled once; each timed run starts from reset (same spikes)."""
    setup_s, graph = harness.time_once(lambda: cuba_graph(net))
    eng = Engine(graph)
    compile_s, _ = harness.time_once(lambda: eng.run(1))  # Numba compilation (empty cache)
    eng.reset()
    first_s, _ = harness.time_once(lambda: eng.run(steps))
    out = {}

    def one_run():
        eng.reset()
        out["prof"] = eng.run(steps)

    load = harness.load_average()
    t = harness.time_call(one_run, repeats=repeats, warmup=0)
    prof = out["prof"]
    return {
        "simulator": "atomspark engine (Numba, float64, 1 thread)",
        "setup_s": setup_s,
        "compile_s": compile_s,
        "first_run_s": first_s,
        "time": t.to_dict(),
        "load_average": load,
        "wall_median_s": t.median,
        **_rates(net, steps, int(prof.events.sum()), int(prof.synops.sum()), t.cpu_median),
    }


def run_brian2_standalone(net: CubaNetwork, steps: int, repeats: int) -> dict:
    """Brian2 cpp_standalone: generate and build once, then run the binary `repeats` + 1 times
    (the first run reported separately); median of Brian2's own main-loop timings."""
    import brian2 as b2

    workdir = tempfile.mkdtemp(prefix="atomspark_brian2_cuba_")
    b2.set_device("cpp_standalone", build_on_run=False, directory=workdir)
    b2.prefs.devices.cpp_standalone.openmp_threads = 0  # one thread
    try:
        t0 = time.perf_counter()
        network, mon = brian2_cuba(net, "numpy")  # the standalone device generates C++
        network.run(steps * net.config.dt * b2.second)
        b2.device.build(directory=workdir, compile=True, run=False)
        compile_s = time.perf_counter() - t0
        first_s, _ = harness.time_once(lambda: b2.device.run(directory=workdir, with_output=False))
        load = harness.load_average()
        walls, loops = [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            b2.device.run(directory=workdir, with_output=False)
            walls.append(time.perf_counter() - t0)
            loops.append(float(b2.device._last_run_time))
        spikes = int(mon.num_spikes)
        out_deg = np.bincount(net.pre, minlength=net.config.n)
        synops = int(out_deg[np.asarray(mon.i)].sum())
    finally:
        b2.device.reinit()
        b2.device.activate()
        b2.set_device("runtime")
    med = float(np.median(loops))
    return {
        "simulator": f"Brian2 {b2.__version__} cpp_standalone (1 thread)",
        "setup_s": None,
        "compile_s": compile_s,
        "first_run_s": first_s,
        "time": {"median": med, "minimum": min(loops), "maximum": max(loops), "repeats": repeats},
        "wall_median_s": float(np.median(walls)),  # the binary, process start included
        "load_average": load,
        **_rates(net, steps, spikes, synops, med),
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


def run_dense(net: CubaNetwork, steps: int) -> dict:
    res = []
    load = harness.load_average()
    t = harness.time_call(lambda: res.append(dense_numpy_run(net, steps)), 1, warmup=0)
    return {
        "simulator": "dense NumPy step (W @ s every step, 1 thread)",
        "setup_s": None,
        "compile_s": None,
        "first_run_s": None,
        "time": t.to_dict(),
        "load_average": load,
        "wall_median_s": t.median,
        **_rates(net, steps, *res[-1], t.cpu_median),
    }


def main() -> None:
    args = harness.parse_args(__doc__.splitlines()[0])
    info = harness.machine_info()
    harness.print_machine(info)
    repeats = 2 if args.quick else 5
    bandwidth = harness.memory_bandwidth()
    print(f"memory bandwidth (1 thread): {bandwidth}")
    results = {}
    for name, (cfg, seconds) in SIZES.items():
        seconds = seconds / 10 if args.quick else seconds
        steps = cfg.steps(seconds)
        net = cuba_network(cfg)
        print(f"CUBA {name}: {cfg.n} neurons, {net.n_synapses} synapses, {steps} steps")
        rows = [run_engine(net, steps, repeats)]
        try:
            rows.append(run_brian2_standalone(net, steps, repeats))
        except Exception as exc:  # noqa: BLE001 - say why the peer is missing, keep the rest
            print(f"Brian2 cpp_standalone unavailable: {type(exc).__name__}: {exc}")
        if cfg.n <= 4000:
            rows.append(run_dense(net, max(steps // 100, 20)))
        eng = rows[0]
        ceiling = bandwidth["copy_GBps"] * 1e9 / STORED_BYTES_PER_SYNAPSE
        table = [
            {
                "simulator": r["simulator"],
                "cpu_s": r["headline_seconds"],
                "wall_s": r["wall_median_s"],
                "compile_s": r["compile_s"] if r["compile_s"] is not None else "-",
                "first_run_s": r["first_run_s"] if r["first_run_s"] is not None else "-",
                "rate_Hz": r["rate_hz"],
                "synops_per_s": r["synops_per_s"],
                "engine_speedup": eng["synops_per_s"] / r["synops_per_s"],
                "load": r["load_average"][0],
            }
            for r in rows
        ]
        print(harness.format_table(table))
        summary = {
            "steps": steps,
            "n_synapses": net.n_synapses,
            "engine_synops_per_s": eng["synops_per_s"],
            "engine_events_per_s": eng["events_per_s"],
            "synops_per_s_at_copy_bandwidth": ceiling,
            "engine_fraction_of_bandwidth_ceiling": eng["synops_per_s"] / ceiling,
        }
        brian = [r for r in rows if "cpp_standalone" in r["simulator"]]
        if brian:
            summary["engine_vs_brian2_cpp_standalone"] = (
                eng["synops_per_s"] / brian[0]["synops_per_s"]
            )
            print(
                f"  engine / Brian2 cpp_standalone: "
                f"{summary['engine_vs_brian2_cpp_standalone']:.2f}x (target >= 3x)"
            )
        results[name] = {"config": cfg.__dict__, "rows": table, "details": rows, "summary": summary}
    path = harness.write_result(
        args.out,
        "cuba",
        {
            "quick": args.quick,
            "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
            "machine_shared": "2 cores shared with other jobs; load averages per row",
            "memory_bandwidth": bandwidth,
            "sizes": results,
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
