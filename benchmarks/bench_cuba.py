"""CUBA (Brette et al. 2007): the engine vs Brian2 cpp_standalone and NEST, float64 and float32.

    python benchmarks/bench_cuba.py [--sizes 4000 40000] [--quick] [--out docs/results/performance]

All simulate the same networks (atomspark.scenarios.runs.cuba: same synapses, same initial voltages,
exact exponential integration, 0.1 ms steps): 4000 neurons at 2 % connectivity for 1 s of
biological time and 40,000 neurons at 0.2 % for 0.5 s, one thread each (Brian2's OpenMP off,
NEST local_num_threads 1). The engine and Brian2 each run in float64 and in float32, so that
every ratio compares the same precision (NEST computes in double). Method: set-up and
compilation are reported apart (engine: Numba compilation into an empty cache; Brian2: code
generation + C++ build with its default flags, recorded; NEST: building the network in the
kernel, per run), then one untimed first run each, then ROUNDS interleaved rounds in which every
peer runs once in turn. Timed is process CPU time of the simulation loop only: the engine's
run(), Brian2's own main-loop clock (last_run_info.txt, std::clock), NEST's nest.Run; wall times
are kept too. Reported: min and median per peer, peer / engine ratio of the medians and its
range over the pairs, the 1-minute load average before and after (the machine is shared). A
dense NumPy step (W @ s every step, float64, the whole run once) is the trivial baseline at 4000
neurons. A synaptic event is one spike delivered along one synapse; events per second are set
beside the single-thread memory bandwidth measured in the same run, and the engine's neuron
sweep is also timed alone in every round (engine_floor.py), so that a run splits into its neuron
part and its spike part. --sizes runs only the named
network sizes and replaces only their entries in an existing result file.
"""

from __future__ import annotations

import json
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
    cuba_graph,
    cuba_network,
)
from atomspark.sim.engine import Engine  # noqa: E402
from dense_cuba import run_dense  # noqa: E402
from engine_floor import fanout_bytes_per_synapse, sweep_bytes_per_neuron, sweep_cpu_s  # noqa: E402
from peer_brian2 import Brian2Peer, without_step_clock  # noqa: E402
from peer_nest import nest_cuba_run  # noqa: E402

SIZES = {  # name: (config, biological seconds); --sizes picks them by neuron count
    "4000 / 2 %": (CubaConfig(), 1.0),
    "40000 / 0.2 %": (CubaConfig(n=40_000, p_conn=0.002), 0.5),
}
ROUNDS = 5  # interleaved rounds: every peer runs once per round
DENSE_MAX_N = 4000  # the dense baseline's n x n float64 weights: 128 MB and ~18 ms per step here


def _rates(net: CubaNetwork, steps: int, spikes: int, synops: int, seconds: float) -> dict:
    return {
        "spikes": spikes,
        "synaptic_events": synops,
        "rate_hz": spikes / net.config.n / (steps * net.config.dt),
        "events_per_s": spikes / seconds,
        "synops_per_s": synops / seconds,
    }


class EnginePeer:
    """The engine on one dtype: graph built and loop compiled once; each timed run starts from
    reset (the same spikes every time)."""

    def __init__(self, net: CubaNetwork, dtype: str) -> None:
        self.net, self.dtype = net, dtype
        self.setup_s, graph = harness.time_once(lambda: cuba_graph(net, dtype))
        self.engine = Engine(graph)
        self.compile_s, _ = harness.time_once(lambda: self.engine.run(1))  # cold Numba compile
        sweep_cpu_s(self.engine, 1)  # compile the sweep-only loop
        self.name = f"atomspark engine (Numba, {dtype}, 1 thread)"

    def first_run(self, steps: int) -> float:
        self.engine.reset()
        return harness.time_once(lambda: self.engine.run(steps))[0]

    def timed_run(self, steps: int) -> dict:
        self.engine.reset()
        c0, w0 = time.process_time(), time.perf_counter()
        prof = self.engine.run(steps)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        return {"cpu_s": cpu, "wall_s": wall, "spikes": int(prof.events.sum()),
                "synops": int(prof.synops.sum()),
                "sweep_cpu_s": sweep_cpu_s(self.engine, steps)}  # fmt: skip


class NestPeer:
    """NEST iaf_psc_exp (peer_nest.py): rebuilt for every run, only nest.Run timed."""

    def __init__(self, net: CubaNetwork) -> None:
        import nest  # noqa: F401 - absent: the caller reports the peer as missing

        self.net, self.builds = net, []
        self.compile_s, self.setup_s = None, None
        self.name = f"NEST {nest.__version__} iaf_psc_exp (1 thread)"

    def first_run(self, steps: int) -> float:
        r = nest_cuba_run(self.net, steps)
        self.setup_s = r["build_s"] + r["prepare_s"]
        return r["wall_s"]

    def timed_run(self, steps: int) -> dict:
        r = nest_cuba_run(self.net, steps)
        self.builds.append(r["build_s"] + r["prepare_s"])
        return r


def interleaved(peers: list, steps: int, rounds: int) -> dict[str, list[dict]]:
    """`rounds` rounds, each running every peer once in turn (so that a change of machine load
    hits all of them alike); per peer the list of its runs."""
    runs = {p.name: [] for p in peers}
    for _ in range(rounds):
        for p in peers:
            runs[p.name].append(p.timed_run(steps))
    return runs


def peer_row(net: CubaNetwork, steps: int, peer, first_s: float, runs: list[dict]) -> dict:
    cpu = [r["cpu_s"] for r in runs]
    med = float(np.median(cpu))
    return {
        "simulator": peer.name,
        "setup_s": peer.setup_s,
        "compile_s": peer.compile_s,
        "first_run_s": first_s,
        "cpu_s": cpu,
        "wall_s": [r["wall_s"] for r in runs],
        "cpu_min_s": min(cpu),
        "cpu_median_s": med,
        "wall_median_s": float(np.median([r["wall_s"] for r in runs])),
        "compile_flags": getattr(peer, "compile_flags", None),
        **_sweep_floor(runs, getattr(peer, "dtype", None)),
        **_rates(net, steps, runs[-1]["spikes"], runs[-1]["synops"], med),
    }


def _sweep_floor(runs: list[dict], dtype: str | None) -> dict:
    """The engine's neuron sweep timed alone in each round (engine_floor.py): median CPU s and
    the bytes it moves per neuron-step; nothing for the other peers."""
    sweeps = [r["sweep_cpu_s"] for r in runs if r.get("sweep_cpu_s") is not None]
    if not sweeps:
        return {}
    return {"sweep_cpu_s": sweeps, "sweep_cpu_median_s": float(np.median(sweeps)),
            "sweep_bytes_per_neuron": sweep_bytes_per_neuron(dtype)}  # fmt: skip


def dense_row(net: CubaNetwork, steps: int) -> dict:
    """The trivial baseline (dense_cuba.py) over the whole run, once (its cost does not depend
    on the spikes: two full matrix-vector products per step)."""
    r = run_dense(net, steps)
    return {
        "simulator": "dense NumPy step (W @ s every step, float64, 1 thread)",
        "setup_s": r["setup_s"], "compile_s": None, "first_run_s": None,
        "cpu_s": [r["cpu_s"]], "wall_s": [r["wall_s"]], "cpu_min_s": r["cpu_s"],
        "cpu_median_s": r["cpu_s"], "wall_median_s": r["wall_s"], "compile_flags": None,
        "steps": steps,
        **_rates(net, steps, r["spikes"], r["synops"], r["cpu_s"]),
    }  # fmt: skip


def make_peers(net: CubaNetwork, steps: int) -> tuple[list, list[str]]:
    """The engine and Brian2 cpp_standalone in float64 and float32, NEST, and each Brian2 build's
    twin without its per-step clock() call (each peer that cannot run here is reported as
    missing with the reason). The engines come first."""
    peers = [EnginePeer(net, "float64"), EnginePeer(net, "float32")]
    missing = []
    makers = [lambda: Brian2Peer(net, steps, "float64"), lambda: Brian2Peer(net, steps, "float32"),
              lambda: NestPeer(net)]  # fmt: skip
    for make in makers:
        try:
            peers.append(make())
        except Exception as exc:  # noqa: BLE001 - say why the peer is missing, keep the rest
            missing.append(f"{type(exc).__name__}: {exc}")
            print(f"peer unavailable: {missing[-1]}")
    for brian in [p for p in peers if isinstance(p, Brian2Peer)]:  # peer_brian2.py: why
        try:
            peers.append(without_step_clock(brian))
        except Exception as exc:  # noqa: BLE001 - the as-built peer stays
            missing.append(f"{brian.name} without its per-step clock: {exc}")
    return peers, missing


def ratios(eng: dict, peer: dict) -> dict:
    """Peer CPU time / engine CPU time: of the medians (headline), and the range over the
    interleaved pairs (run i of both)."""
    pairs = [p / e for e, p in zip(eng["cpu_s"], peer["cpu_s"])]
    return {"median": peer["cpu_median_s"] / eng["cpu_median_s"], "pair_min": min(pairs),
            "pair_max": max(pairs), "pairs": len(pairs)}  # fmt: skip


def bench_size(name: str, cfg: CubaConfig, seconds: float, rounds: int) -> dict:
    steps = cfg.steps(seconds)
    net = cuba_network(cfg)
    print(f"CUBA {name}: {cfg.n} neurons, {net.n_synapses} synapses, {steps} steps")
    bandwidth = harness.memory_bandwidth()
    print(f"memory bandwidth (1 thread): {bandwidth}")
    peers, missing = make_peers(net, steps)
    first = {p.name: p.first_run(steps) for p in peers}
    load_before = harness.load_average()
    runs = interleaved(peers, steps, rounds)
    load_after = harness.load_average()
    rows = [peer_row(net, steps, p, first[p.name], runs[p.name]) for p in peers]
    if cfg.n <= DENSE_MAX_N:
        rows.append(dense_row(net, steps))
    vs = {
        eng["simulator"]: {r["simulator"]: ratios(eng, r) for r in rows[2:] if len(r["cpu_s"]) > 1}
        for eng in rows[:2]
    }
    print(harness.format_table([
        {k: r[k] for k in ("simulator", "cpu_min_s", "cpu_median_s", "wall_median_s",
                           "compile_s", "first_run_s", "rate_hz")} for r in rows
    ]))  # fmt: skip
    for eng, peers_vs in vs.items():
        for peer, q in peers_vs.items():
            print(f"  {peer} / {eng}: {q['median']:.2f}x (pairs {q['pair_min']:.2f}-"
                  f"{q['pair_max']:.2f}x)")  # fmt: skip
    return {"config": cfg.__dict__, "steps": steps, "n_synapses": net.n_synapses,
            "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
            "memory_bandwidth": bandwidth,
            "bytes_per_synapse_streamed": fanout_bytes_per_synapse(peers[0].engine),
            "synops_per_s_at_copy_bandwidth": bandwidth["copy_GBps"] * 1e9
            / fanout_bytes_per_synapse(peers[0].engine),
            "rounds": rounds, "load_before": load_before, "load_after": load_after,
            "rows": rows, "ratios": vs, "missing_peers": missing}  # fmt: skip


def _sizes_option(ap) -> None:
    ap.add_argument("--sizes", type=int, nargs="+", default=None, metavar="N",
                    help=f"neuron counts to run, of {[c.n for c, _ in SIZES.values()]} (default: "
                    f"all); the other sizes' entries of an existing result file are kept")  # fmt: skip


def chosen_sizes(ns: list[int] | None) -> dict:
    """SIZES restricted to the neuron counts asked for (all when None)."""
    known = {cfg.n: name for name, (cfg, _) in SIZES.items()}
    if ns is None:
        return dict(SIZES)
    unknown = [n for n in ns if n not in known]
    if unknown:
        raise SystemExit(f"--sizes: {unknown} not among the benchmark's sizes {sorted(known)}")
    return {known[n]: SIZES[known[n]] for n in ns}


def main() -> None:
    args = harness.parse_args(__doc__.splitlines()[0], _sizes_option)
    sizes = chosen_sizes(args.sizes)
    harness.print_machine(harness.machine_info())
    rounds = 2 if args.quick else ROUNDS
    results = {}
    previous = args.out / "cuba.json"
    if args.sizes is not None and previous.is_file():
        old = json.loads(previous.read_text())
        if old.get("quick") == args.quick:
            results = {k: old["sizes"][k] for k in SIZES if k in old["sizes"]}  # keep order
    for name, (cfg, seconds) in sizes.items():
        results[name] = bench_size(name, cfg, seconds / 10 if args.quick else seconds, rounds)
    results = {k: results[k] for k in SIZES if k in results}
    path = harness.write_result(
        args.out,
        "cuba",
        {
            "quick": args.quick,
            "date_utc": max(r.get("date_utc", "") for r in results.values()),
            "machine_shared": "2 cores shared with other jobs; load averages before and after",
            "sizes": results,
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
