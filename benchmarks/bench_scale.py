"""CUBA at scale: build time, memory per synapse and per neuron, and run time at 250,000 and
1,000,000 neurons (0.1 % / 0.02 % connectivity, about 250 / 200 synapses per neuron).

    python benchmarks/bench_scale.py [--sizes 250000 1000000] [--seconds 1.0] [--threads 1 2]
        [--peers brian2 nest] [--peer-cap-s 1800] [--out docs/results/performance] [--resume]
        [--rounds 3] [--engine-only]

Each size runs in its own process (peak memory is per process): drawing the network
(scenarios.runs.cuba's sparse law: per-neuron binomial counts and targets drawn without
replacement, never an n x n object), building the graph and the engine, then `--seconds` of
biological time on 1 and on N threads (sim/parallel_lif.py), `--rounds` times interleaved,
process CPU and wall time (medians; every run kept). Memory:
the bytes of the graph's and the engine's arrays per synapse and per neuron, and the process's
peak resident set (ru_maxrss) against the machine's memory. Peers (Brian2 cpp_standalone with
OpenMP, NEST) run the same network in a child process each, with a wall-clock cap
(--peer-cap-s); a peer that exceeds it is recorded as capped, one killed or failing with the
reason. --resume keeps the sizes already in the result file; --engine-only measures the engine
again and keeps each size's recorded peers.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import harness
import numpy as np

SIZES = {250_000: 0.001, 1_000_000: 0.0002}


def _peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kB on Linux


def measure(n: int, seconds: float, threads: list[int], rounds: int = 3) -> dict:
    """One size, in this process (called in a child of the driver): each thread count `rounds`
    times, interleaved; the medians are the run's figures."""
    from atomspark.scenarios.runs.cuba import CubaConfig, cuba_graph, cuba_network
    from atomspark.sim.engine import Engine
    from atomspark.sim.parallel_lif import ParallelLIF

    cfg = CubaConfig(n=n, p_conn=SIZES.get(n, 250 / n))
    draw_s, net = harness.time_once(lambda: cuba_network(cfg))
    graph_s, graph = harness.time_once(lambda: cuba_graph(net))
    n_syn = int(net.pre.size)
    net = None  # the draw's pre / post lists are not needed by the engine
    engine_s, eng = harness.time_once(lambda: Engine(graph))
    par = ParallelLIF(eng)
    split_s, split = harness.time_once(lambda: par.split(max(threads)))
    parts = {  # the graph's CSR storage by part, bytes actually held (equal weights: one)
        part: sum(p.stored_bytes[key] for p in graph.projections)
        for part, key in (("offsets", "indptr"), ("indices", "indices"), ("weights", "data"))
    }
    graph_bytes = sum(parts.values())
    state_bytes = sum(a.nbytes for a in eng.state["cuba"].values())
    buffer_bytes = sum(a.nbytes for a in vars(eng.buffers[0]).values() if hasattr(a, "nbytes"))
    split_buffer_bytes = sum(a.nbytes for a in (split.flags, split.emit, split.n_spikes, split.ops))
    steps = cfg.steps(seconds)
    for t in threads:  # compile (or load from the cache) each path on this graph, untimed
        ParallelLIF(Engine(graph)).run(1, threads=t)
    samples = {t: [] for t in threads}
    for _ in range(rounds):  # interleaved: every thread count once per round
        for t in threads:
            fresh = ParallelLIF(Engine(graph))
            if t > 1:
                fresh.split(t)  # set-up (timed apart as block_split_s), not part of the run
            c0, w0 = time.process_time(), time.perf_counter()
            prof = fresh.run(steps, threads=t)
            samples[t].append((time.process_time() - c0, time.perf_counter() - w0, prof))
    runs = []
    for t, ss in samples.items():
        prof = ss[-1][2]
        assert all(np.array_equal(s[2].spikes, prof.spikes) for s in ss)
        runs.append({"threads": t, "cpu_s": statistics.median(s[0] for s in ss),
                     "wall_s": statistics.median(s[1] for s in ss),
                     "wall_all_s": [s[1] for s in ss], "cpu_all_s": [s[0] for s in ss],
                     "spikes": int(prof.spikes.sum()), "synops": int(prof.synops.sum()),
                     "rate_hz": prof.spikes.sum() / n / seconds})  # fmt: skip
    del samples
    return {
        "n": n, "p_conn": cfg.p_conn, "n_synapses": n_syn, "steps": steps, "seconds": seconds,
        "draw_s": draw_s, "graph_s": graph_s, "engine_s": engine_s, "block_split_s": split_s,
        "graph_bytes_per_synapse": graph_bytes / n_syn,
        "graph_parts_bytes_per_synapse": {k: v / n_syn for k, v in parts.items()},
        "uniform_weights": bool(np.all(~np.isnan(par.uniform))),
        "parallel_bytes_per_synapse": split.nbytes / n_syn, "blocks": split.blocks.size - 1,
        "state_bytes_per_neuron": state_bytes / n,
        "engine_buffer_bytes_per_neuron": buffer_bytes / n,
        "parallel_buffer_bytes_per_neuron": split_buffer_bytes / n,
        "peak_rss_gb": _peak_rss_gb(), "peak_rss_bytes_per_synapse": _peak_rss_gb() * 2**30 / n_syn,
        "runs": runs, "rounds": rounds,
    }  # fmt: skip


def measure_peer(peer: str, n: int, seconds: float, threads: int) -> dict:
    """A peer on the same network, in this (child) process."""
    from atomspark.scenarios.runs.cuba import CubaConfig, cuba_network

    cfg = CubaConfig(n=n, p_conn=SIZES.get(n, 250 / n))
    net = cuba_network(cfg)
    steps = cfg.steps(seconds)
    if peer == "nest":
        from peer_nest import nest_cuba_run

        out = nest_cuba_run(net, steps, threads=threads)
    else:
        from peer_brian2 import Brian2Peer

        b = Brian2Peer(net, steps, "float64", threads=threads)
        out = {"compile_s": b.compile_s, **b.timed_run(steps)}
    return {"peer": peer, "threads": threads, "peak_rss_gb": _peak_rss_gb(), **out}


def _child(argv: list[str], cap_s: float) -> dict:
    cmd = [sys.executable, __file__, *argv]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=cap_s, check=False)
    except subprocess.TimeoutExpired:
        return {"capped_s": cap_s}
    lines = [x for x in out.stdout.splitlines() if x.startswith("{")]
    if out.returncode < 0:  # SIGKILL on Linux: most often the kernel's out-of-memory killer
        why = "out of memory: killed by the kernel" if out.returncode == -9 else "killed"
        return {"failed": [f"{why} (signal {-out.returncode})"]}
    if out.returncode or not lines:
        text = (out.stderr + "\n" + out.stdout).strip().splitlines()
        errors = [x.strip() for x in text if "Error" in x or "Exception" in x]
        return {"failed": (errors or text)[-1:]}
    return json.loads(lines[-1])


def main() -> None:
    def options(ap):
        ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="neurons")
        ap.add_argument("--seconds", type=float, default=1.0, help="biological time (1.0)")
        ap.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="counts (1 2)")
        ap.add_argument("--peers", nargs="*", default=["brian2", "nest"], help="brian2 nest")
        ap.add_argument("--peer-cap-s", type=float, default=1800.0, help="cap per peer run (s)")
        ap.add_argument("--resume", action="store_true", help="keep sizes already measured")
        ap.add_argument("--rounds", type=int, default=3, help="engine runs per thread count (3)")
        ap.add_argument(
            "--engine-only",
            action="store_true",
            help="measure the engine again and keep each size's recorded peers",
        )
        ap.add_argument("--child", default=None, help=argparse_hidden())

    args = harness.parse_args(__doc__.splitlines()[0], options)
    for var in harness.THREAD_VARIABLES:
        os.environ[var] = "1"
    os.environ["NUMBA_NUM_THREADS"] = str(max(args.threads))
    if args.child:
        kind, n, t = args.child.split(":")
        res = (measure(int(n), args.seconds, args.threads, args.rounds) if kind == "engine"
               else measure_peer(kind, int(n), args.seconds, int(t)))  # fmt: skip
        print(json.dumps(res, default=str))
        return
    path = Path(args.out) / "scale.json"
    result = json.loads(path.read_text()) if args.resume and path.is_file() else {"sizes": {}}
    harness.print_machine(harness.machine_info())
    common = [
        "--seconds",
        str(args.seconds),
        "--rounds",
        str(args.rounds),
        "--threads",
        *map(str, args.threads),
    ]
    for n in args.sizes:
        old = result["sizes"].get(str(n))
        if old is not None and not args.engine_only:
            print(f"{n}: kept (--resume)")
            continue
        load_before = harness.load_average()
        row = _child(["--child", f"engine:{n}:0", *common], 4 * args.peer_cap_s)
        if args.engine_only and old is not None:  # the peers' run is older than the engine's
            row["peers"] = old.get("peers", [])
            row["peers_date_utc"] = old.get("peers_date_utc", old.get("date_utc"))
        else:
            row["peers"] = [{"peer": p, "threads": t,
                             **_child(["--child", f"{p}:{n}:{t}", *common], args.peer_cap_s)}
                            for p in args.peers for t in args.threads]  # fmt: skip
        row.update(load_before=load_before, load_after=harness.load_average(),
                   date_utc=time.strftime("%Y-%m-%d %H:%M", time.gmtime()))  # fmt: skip
        result["sizes"][str(n)] = row
        print(json.dumps(row, indent=1, default=str))
        harness.write_result(args.out, "scale", {"quick": False, **{k: v for k, v in
                             result.items() if k not in ("benchmark", "machine", "threads_used")}})  # fmt: skip


def argparse_hidden() -> str:
    return "internal: kind:n:threads of one child measurement"


if __name__ == "__main__":
    main()
