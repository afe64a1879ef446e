"""Where the engine's time per step goes on the Lava comparison's LIF 2 x 200 net.

    python benchmarks/lava_step_profile.py [--out docs/results/performance] [--rounds 30]

Process CPU time, one thread, median over `--rounds` runs each: the engine's run of 0 steps (the
per-call cost), of 200 and 2000 steps (the marginal cost per step), and the same populations
without their projection (the neuron updates and the loop alone), with the events and synaptic
operations per step: the difference is what the spike delivery costs per synaptic operation.
"""

from __future__ import annotations

import statistics
import time

import harness

harness.pin_one_thread()

from atomspark.sim.engine import Engine  # noqa: E402
from atomspark.sim.graph import Graph  # noqa: E402
from bench_lava import lif_graph  # noqa: E402


def _cpu(eng: Engine, steps: int, rounds: int) -> float:
    out = []
    for _ in range(rounds):
        eng.reset()
        c0 = time.process_time()
        eng.run(steps)
        out.append(time.process_time() - c0)
    return statistics.median(out)


def main() -> None:
    def options(ap):
        ap.add_argument("--rounds", type=int, default=30, help="runs per timing (30)")

    args = harness.parse_args(__doc__.splitlines()[0], options)
    g = lif_graph()
    eng = Engine(g)
    solo = Engine(Graph(list(g.populations), []))
    eng.run(1), solo.run(1)  # compile
    load_before = harness.load_average()
    call = _cpu(eng, 0, args.rounds)
    short, long = _cpu(eng, 200, args.rounds), _cpu(eng, 2000, args.rounds)
    solo_long, solo_short = _cpu(solo, 2000, args.rounds), _cpu(solo, 200, args.rounds)
    eng.reset()
    prof = eng.run(2000)
    per_step = (long - short) / 1800
    solo_step = (solo_long - solo_short) / 1800
    synops = float(prof.synops.sum() / 2000)
    res = {
        "quick": args.quick, "rounds": args.rounds, "graph": "LIF 2x200 Sparse fixed_pt",
        "load_before": load_before, "load_after": harness.load_average(),
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "call_cpu_s": call, "per_step_cpu_s": per_step, "no_projection_per_step_cpu_s": solo_step,
        "events_per_step": float(prof.events.sum() / 2000), "synops_per_step": synops,
        "delivery_s_per_synop": (per_step - solo_step) / synops,
    }  # fmt: skip
    print(res)
    harness.write_result(args.out, "lava_profile", res)


if __name__ == "__main__":
    main()
