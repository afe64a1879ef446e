"""CUBA (Brette et al. 2007): the engine (float64 and float32) vs Brian2 cpp_standalone and NEST.

All simulate the same networks (atomspark.scenarios.runs.cuba: same synapses, same initial voltages,
exact exponential integration, 0.1 ms steps): 4000 neurons at 2 % connectivity for 1 s of
biological time and 40,000 neurons at 0.2 % for 0.5 s, one thread each (Brian2's OpenMP off,
NEST local_num_threads 1). Method: set-up and compilation are reported apart (engine: Numba
compilation into an empty cache; Brian2: code generation + C++ build; NEST: building the network
in the kernel, per run), then one untimed first run each, then ROUNDS interleaved rounds in which
every peer runs once in turn. Timed is process CPU time of the simulation loop only: the
engine's run(), Brian2's own main-loop clock (last_run_info.txt, std::clock), NEST's nest.Run;
wall times are kept too. Reported: min and median per peer, peer / engine ratio of the medians
and its range over the pairs, the 1-minute load average before and after (the machine is
shared). A dense NumPy step (W @ s every step) is the trivial baseline at 4000 neurons. A
synaptic event is one spike delivered along one synapse; events per second are set beside the
single-thread memory bandwidth measured in the same run.
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
from peer_nest import nest_cuba_run  # noqa: E402

SIZES = {  # name: (config, biological seconds)
    "4000 / 2 %": (CubaConfig(), 1.0),
    "40000 / 0.2 %": (CubaConfig(n=40_000, p_conn=0.002), 0.5),
}
STORED_BYTES_PER_SYNAPSE = 12  # float64 weight + int32 target index (uniform delay: no delay)
ROUNDS = 5  # interleaved rounds: every peer runs once per round


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
                "synops": int(prof.synops.sum())}  # fmt: skip


class Brian2Peer:
    """Brian2 cpp_standalone: C++ generated and built once; each timed run executes the binary
    and takes Brian2's own main-loop CPU time (last_run_info.txt; std::clock, one thread)."""

    def __init__(self, net: CubaNetwork, steps: int) -> None:
        import brian2 as b2

        self.b2, self.net = b2, net
        self.workdir = tempfile.mkdtemp(prefix="atomspark_brian2_cuba_")
        b2.set_device("cpp_standalone", build_on_run=False, directory=self.workdir)
        b2.prefs.devices.cpp_standalone.openmp_threads = 0  # one thread
        t0 = time.perf_counter()
        network, self.mon = brian2_cuba(net, "numpy")  # the standalone device generates C++
        network.run(steps * net.config.dt * b2.second)
        b2.device.build(directory=self.workdir, compile=True, run=False)
        self.compile_s = time.perf_counter() - t0
        self.setup_s = None
        self.name = f"Brian2 {b2.__version__} cpp_standalone (1 thread)"

    def first_run(self, steps: int) -> float:
        return harness.time_once(lambda: self.timed_run(steps))[0]

    def timed_run(self, steps: int) -> dict:
        w0 = time.perf_counter()
        self.b2.device.run(directory=self.workdir, with_output=False)
        wall = time.perf_counter() - w0  # the binary: process start and file output included
        spikes = int(self.mon.num_spikes)
        out_deg = np.bincount(self.net.pre, minlength=self.net.config.n)
        synops = int(out_deg[np.asarray(self.mon.i)].sum())
        return {"cpu_s": float(self.b2.device._last_run_time), "wall_s": wall,
                "spikes": spikes, "synops": synops}  # fmt: skip

    def close(self) -> None:
        self.b2.device.reinit()
        self.b2.device.activate()
        self.b2.set_device("runtime")


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
        **_rates(net, steps, runs[-1]["spikes"], runs[-1]["synops"], med),
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
    c0, w0 = time.process_time(), time.perf_counter()
    spikes, synops = dense_numpy_run(net, steps)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return {
        "simulator": "dense NumPy step (W @ s every step, 1 thread)",
        "setup_s": None, "compile_s": None, "first_run_s": None,
        "cpu_s": [cpu], "wall_s": [wall], "cpu_min_s": cpu, "cpu_median_s": cpu,
        "wall_median_s": wall, **_rates(net, steps, spikes, synops, cpu),
    }  # fmt: skip


def make_peers(net: CubaNetwork, steps: int) -> tuple[list, list[str]]:
    """The engine in float64 and float32, Brian2 cpp_standalone and NEST (each peer that
    cannot run here is reported as missing with the reason)."""
    peers = [EnginePeer(net, "float64"), EnginePeer(net, "float32")]
    missing = []
    for make in (lambda: Brian2Peer(net, steps), lambda: NestPeer(net)):
        try:
            peers.append(make())
        except Exception as exc:  # noqa: BLE001 - say why the peer is missing, keep the rest
            missing.append(f"{type(exc).__name__}: {exc}")
            print(f"peer unavailable: {missing[-1]}")
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
    peers, missing = make_peers(net, steps)
    first = {p.name: p.first_run(steps) for p in peers}
    load_before = harness.load_average()
    runs = interleaved(peers, steps, rounds)
    load_after = harness.load_average()
    for p in peers:
        if isinstance(p, Brian2Peer):
            p.close()
    rows = [peer_row(net, steps, p, first[p.name], runs[p.name]) for p in peers]
    if cfg.n <= 4000:
        rows.append(run_dense(net, max(steps // 100, 20)))
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
            "rounds": rounds, "load_before": load_before, "load_after": load_after,
            "rows": rows, "ratios": vs, "missing_peers": missing}  # fmt: skip


def main() -> None:
    args = harness.parse_args(__doc__.splitlines()[0])
    harness.print_machine(harness.machine_info())
    rounds = 2 if args.quick else ROUNDS
    bandwidth = harness.memory_bandwidth()
    print(f"memory bandwidth (1 thread): {bandwidth}")
    results = {}
    for name, (cfg, seconds) in SIZES.items():
        results[name] = bench_size(name, cfg, seconds / 10 if args.quick else seconds, rounds)
    path = harness.write_result(
        args.out,
        "cuba",
        {
            "quick": args.quick,
            "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
            "machine_shared": "2 cores shared with other jobs; load averages before and after",
            "memory_bandwidth": bandwidth,
            "synops_per_s_at_copy_bandwidth": bandwidth["copy_GBps"]
            * 1e9
            / STORED_BYTES_PER_SYNAPSE,
            "sizes": results,
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
