"""One CUBA simulation on 1 and on N threads: the engine (sim/parallel_lif.py) against Brian2
cpp_standalone with OpenMP and NEST at the same thread counts.

    python benchmarks/bench_threads.py [--n 40000] [--p-conn 0.002] [--threads 1 2]
        [--seconds 0.5] [--rounds 5] [--out docs/results/performance] [--resume]

Same network law as bench_cuba.py (atomspark.scenarios.runs.cuba), float64 everywhere (NEST
computes in double). Set-up apart (engine: graph, block split, Numba compile; Brian2: code
generation and C++ build; NEST: building the network, per run), then `--rounds` interleaved
rounds (after one untimed warm-up round) in which every simulator runs once at every thread
count. Recorded per run: wall time and process CPU time of the simulation loop (the engine's
parallel run; NEST's nest.Run; Brian2's whole binary, process start and file output included)
and, for Brian2, its own main-loop time, which is CPU time on one thread and wall time with
OpenMP (peer_brian2.py). The speed-up from 1 to N threads is judged on wall time, which is what
threads shorten, and the engine against Brian2 on the engine's run against Brian2's main loop;
on a loaded machine a thread may wait for a core, so the load average is recorded before and
after. The engine's spikes per step are the same at every thread count (asserted); its
one-thread row is the serial engine (ParallelLIF.run with one thread runs Engine.run).

Two rows take the threaded run apart, in the same rounds: the block kernel with N blocks on one
thread (its work without parallelism: the serial engine's work plus what blocking adds) and
Numba's fork and join alone, N threads, once per step, no work (fork_join.py).
--resume: leave an existing result file alone.
"""

from __future__ import annotations

import os
import statistics
import time

import harness

THREADS_MAX = 64  # NUMBA_NUM_THREADS must be set before Numba loads: the largest count asked
ANATOMY_BLOCKS = "block kernel (anatomy):"  # rows that take the threaded run apart
ANATOMY_FORK = "fork/join only, no work (anatomy):"


def main() -> None:
    def options(ap):
        ap.add_argument("--n", type=int, default=40_000, help="neurons (40000)")
        ap.add_argument("--p-conn", type=float, default=0.002, help="connectivity (0.002)")
        ap.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="counts (1 2)")
        ap.add_argument("--seconds", type=float, default=0.5, help="biological time (0.5)")
        ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (5)")
        ap.add_argument("--peers", nargs="*", default=["brian2", "nest"], help="brian2 nest")
        ap.add_argument("--name", default="threads", help="result file name (threads)")
        ap.add_argument("--resume", action="store_true", help="skip when the result exists")

    args = harness.parse_args(__doc__.splitlines()[0], options)
    if args.resume and (args.out / f"{args.name}.json").is_file():
        print(f"{args.name}.json exists: skipped (--resume)")
        return
    most = max(args.threads)
    for var in harness.THREAD_VARIABLES:  # BLAS stays at one thread; Numba gets the most asked
        os.environ[var] = "1"
    os.environ["NUMBA_NUM_THREADS"] = str(min(most, THREADS_MAX))
    run(args)


def engine_runners(graph, steps: int, threads: list[int]) -> dict:
    """name -> (threads, callable returning dict(cpu_s, wall_s, spikes, per_step)): the engine
    at each thread count and the anatomy rows."""
    from atomspark.sim.engine import Engine
    from atomspark.sim.parallel_lif import ParallelLIF
    from fork_join import timed_empty_steps

    runners = {}

    def engine_run(threads):
        par = ParallelLIF(Engine(graph))
        if threads > 1:
            par.split(threads)  # the regrouped projections are set-up, not timed
        c0, w0 = time.process_time(), time.perf_counter()
        prof = par.run(steps, threads=threads)
        return {"cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - w0,
                "spikes": int(prof.spikes.sum()), "per_step": prof.spikes}  # fmt: skip

    def blocks_on_one_thread(blocks):
        par = ParallelLIF(Engine(graph), blocks=blocks)
        par.split(blocks)
        c0, w0 = time.process_time(), time.perf_counter()
        prof = par.run(steps, threads=1)
        return {"cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - w0,
                "spikes": int(prof.spikes.sum()), "per_step": prof.spikes}  # fmt: skip

    for t in threads:
        runners[f"atomspark engine (Numba, float64, {t} thread{'s' * (t > 1)})"] = (
            t,
            lambda t=t: engine_run(t),
        )
    for t in (t for t in threads if t > 1):  # the threaded run taken apart
        runners[f"{ANATOMY_BLOCKS} {t} blocks on 1 thread"] = (
            1,
            lambda t=t: blocks_on_one_thread(t),
        )
        runners[f"{ANATOMY_FORK} {t} threads"] = (t, lambda t=t: timed_empty_steps(steps, t))
        timed_empty_steps(1, t)  # compile
    return runners


def peer_runners(runners: dict, net, steps: int, args) -> dict:
    """Add Brian2's and NEST's runs to `runners`; returns each Brian2 build's compile time."""
    extra = {}
    if "brian2" in args.peers:
        try:
            from peer_brian2 import Brian2Peer

            for t in args.threads:
                peer = Brian2Peer(net, steps, "float64", threads=t)
                extra[peer.name] = {"compile_s": peer.compile_s}
                runners[peer.name] = (t, lambda p=peer: p.timed_run(steps))
        except ImportError as exc:
            print(f"Brian2 not run: {exc}")
    if "nest" in args.peers:
        try:
            import nest  # noqa: F401
            from peer_nest import nest_cuba_run

            for t in args.threads:
                runners[f"NEST iaf_psc_exp ({t} thread{'s' * (t > 1)})"] = (
                    t,
                    lambda t=t: nest_cuba_run(net, steps, threads=t),
                )
        except ImportError as exc:
            print(f"NEST not run: {exc}")
    return extra


def run(args) -> None:
    from atomspark.scenarios.runs.cuba import CubaConfig, cuba_graph, cuba_network
    from atomspark.sim.engine import Engine
    from atomspark.sim.parallel_lif import ParallelLIF

    load_at_start = harness.load_average()  # before this benchmark's own builds load the cores
    harness.print_machine(harness.machine_info())
    n, rounds = (4000, 2) if args.quick else (args.n, args.rounds)
    p_conn = 0.02 if args.quick else args.p_conn
    net = cuba_network(CubaConfig(n=n, p_conn=p_conn))
    steps = net.config.steps(0.05 if args.quick else args.seconds)
    t0 = time.perf_counter()
    engine_par = ParallelLIF(Engine(cuba_graph(net)))
    engine_setup = time.perf_counter() - t0
    compile_s, _ = harness.time_once(  # the serial path (one thread) and the block kernel
        lambda: [engine_par.run(1, threads=t) for t in sorted({1, max(args.threads)})]
    )
    runners = engine_runners(cuba_graph(net), steps, args.threads)
    extra = peer_runners(runners, net, steps, args)
    # the builds above load the cores for a while: wait for the load to fall (not in --quick)
    load_before = harness.load_average() if args.quick else harness.settle()
    for _, fn in runners.values():  # the untimed warm-up round
        fn()
    samples = {name: [] for name in runners}
    for i in range(rounds):
        for name, (_, fn) in runners.items():
            samples[name].append(fn())
        print(f"round {i + 1}/{rounds} done", flush=True)
    load_after = harness.load_average()
    per_step = [s["per_step"] for ss in samples.values() for s in ss if "per_step" in s]
    assert all((p == per_step[0]).all() for p in per_step), "thread counts disagree"
    rows = []
    for name, (threads, _) in runners.items():
        ss = samples[name]
        rows.append({"simulator": name, "threads": threads,
                     "wall_s": [s["wall_s"] for s in ss], "cpu_s": [s["cpu_s"] for s in ss],
                     "wall_median_s": statistics.median(s["wall_s"] for s in ss),
                     "wall_min_s": min(s["wall_s"] for s in ss),
                     "cpu_median_s": statistics.median(s["cpu_s"] for s in ss),
                     "spikes": ss[-1]["spikes"], **extra.get(name, {})})  # fmt: skip
        if "loop_s" in ss[0]:  # Brian2's own main-loop time, on the clock it names
            rows[-1].update(loop_s=[s["loop_s"] for s in ss], loop_clock=ss[0]["loop_clock"],
                            loop_median_s=statistics.median(s["loop_s"] for s in ss))  # fmt: skip
    print(harness.format_table(rows, ["simulator", "threads", "wall_min_s", "wall_median_s",
                                      "cpu_median_s", "spikes"]))  # fmt: skip
    path = harness.write_result(args.out, args.name, {
        "quick": args.quick, "n": n, "p_conn": p_conn, "steps": steps, "rounds": rounds,
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "load_at_start": load_at_start, "load_before": load_before, "load_after": load_after,
        "engine_setup_s": engine_setup, "engine_compile_s": compile_s,
        "n_synapses": int(net.pre.size), "rows": rows,
    })  # fmt: skip
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
