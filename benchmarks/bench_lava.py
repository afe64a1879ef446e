"""Engine vs Lava's CPU simulator (Loihi2SimCfg) on the same graphs: cost per step and ratio.

Run with the Lava environment: `.venv-lava/bin/python benchmarks/bench_lava.py [--quick]`.
Graphs: (1) two populations of 200 fixed-point LIF neurons, A -> B with a random 8-bit weight
matrix (30 % dense, Lava Sparse) and A driven by biases, bit-accurate (fixed_pt); (2) a small
single-layer VN settle (K = 64 atoms, float) with the custom VNAtom process. Method: the engine
is built and compiled once (both reported apart), then ROUNDS interleaved rounds of: the
engine's run (process CPU time), Lava end to end for 200 and for 2000 steps (wall time, and
CPU time of this process plus the process models it starts). Lava's cost per step once running
is the difference of its two runs in the same round divided by 1800; the headline ratio is that
cost over the engine's CPU time per step (the issue's "per step on CPU time"), with its range
over the rounds; end to end (Lava's build, compile and start-up included) is reported beside it.
"""

from __future__ import annotations

import resource
import time

import harness
import numpy as np
from atomspark.mapping.lava.bundle import from_graph
from atomspark.mapping.lava.export import run_lava
from atomspark.networks.vn_compile import compile_vn
from atomspark.sim import fixed_point as fx
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFFixedParams

ROUNDS = 5
TARGET = 100.0  # engine >= 100x Lava's CPU simulator per step (issue 26)


def lif_graph(n: int = 200, seed: int = 0) -> Graph:
    rng = np.random.default_rng(seed)
    raw = rng.integers(-120, 256, (n, n)) * (rng.random((n, n)) < 0.3)
    w = fx.lava_dense_weights(raw)
    drive = LIFFixedParams(
        du=400, dv=300, vth=2000, bias_mant=rng.integers(1000, 4000, n), bias_exp=6
    )
    target = LIFFixedParams(du=400, dv=300, vth=4000)
    return Graph(
        [Population("A", n, drive), Population("B", n, target)],
        [Projection("A", "B", w, weight_exp=6)],
    )


def vn_graph(k: int = 64, seed: int = 0) -> Graph:
    rng = np.random.default_rng(seed)
    S = rng.standard_normal((k // 2, k))
    S /= np.linalg.norm(S, axis=0)
    g = np.zeros(k)
    g[rng.choice(k, 4, replace=False)] = 1.0
    return compile_vn([S], [np.zeros((1, k))], 0.05, S @ g)


def _lava_run(net, steps: int) -> tuple[float, float, dict]:
    """One end-to-end Lava run (build, compile, start, run, stop): wall seconds, CPU seconds of
    this process and of the process models it started (they are children, joined at stop), and
    the recorded outputs."""
    c0, w0 = _cpu_with_children(), time.perf_counter()
    out = run_lava(net, steps)
    return time.perf_counter() - w0, _cpu_with_children() - c0, out


def _cpu_with_children() -> float:
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def bench(name: str, graph: Graph, steps: tuple[int, int], rounds: int) -> dict:
    """ROUNDS interleaved rounds of: the engine's run (process CPU time, the Engine built and
    compiled once, outside the timing), Lava for steps[0] and for steps[1] steps. Lava's cost
    per step once running is (T(steps[1]) - T(steps[0])) / (steps[1] - steps[0]) within each round
    (wall and CPU); its end-to-end time is T(steps[0])."""
    short, long_ = steps
    build_s, engine = harness.time_once(lambda: Engine(graph))
    compile_s, _ = harness.time_once(lambda: engine.run(1))
    net = from_graph(graph)
    load_before = harness.load_average()
    per_round = []
    for _ in range(rounds):
        engine.reset()
        c0 = time.process_time()
        prof = engine.run(short)
        engine_cpu = time.process_time() - c0
        w_short, c_short, lava_out = _lava_run(net, short)
        w_long, c_long, _ = _lava_run(net, long_)
        per_round.append({
            "engine_cpu_s": engine_cpu, "lava_wall_s": w_short, "lava_cpu_s": c_short,
            "lava_wall_long_s": w_long, "lava_cpu_long_s": c_long,
            "lava_marginal_wall_s_per_step": (w_long - w_short) / (long_ - short),
            "lava_marginal_cpu_s_per_step": (c_long - c_short) / (long_ - short),
        })  # fmt: skip
    engine_per_step = np.array([r["engine_cpu_s"] for r in per_round]) / short
    marginal_cpu = np.array([r["lava_marginal_cpu_s_per_step"] for r in per_round])
    marginal_wall = np.array([r["lava_marginal_wall_s_per_step"] for r in per_round])
    end_to_end_cpu = np.array([r["lava_cpu_s"] for r in per_round]) / short
    ratio = {
        "per_step_cpu": marginal_cpu / engine_per_step,
        "per_step_wall": marginal_wall / engine_per_step,
        "end_to_end_cpu": end_to_end_cpu / engine_per_step,
    }
    return {
        "graph": name,
        "steps": list(steps),
        "rounds": per_round,
        "engine_build_s": build_s,
        "engine_compile_s": compile_s,
        "engine_cpu_s_per_step": {"min": float(engine_per_step.min()),
                                  "median": float(np.median(engine_per_step))},
        "lava_marginal_cpu_s_per_step_median": float(np.median(marginal_cpu)),
        "lava_marginal_wall_s_per_step_median": float(np.median(marginal_wall)),
        "ratios": {k: {"median": float(np.median(v)), "pair_min": float(v.min()),
                       "pair_max": float(v.max())} for k, v in ratio.items()},
        "engine_events": int(prof.events.sum()),
        "lava_nonzero_outputs": int(sum(np.count_nonzero(v) for v in lava_out.values())),
        "load_before": load_before,
        "load_after": harness.load_average(),
    }  # fmt: skip


def main() -> None:
    args = harness.parse_args(__doc__.splitlines()[0])
    info = harness.machine_info()
    harness.print_machine(info)
    import lava

    version = getattr(lava, "__version__", "0.10.0 (no __version__)")
    print(f"lava-nc {version}")
    steps, rounds = ((50, 550), 2) if args.quick else ((200, 2000), ROUNDS)
    rows = [
        bench("LIF 2x200 Sparse fixed_pt", lif_graph(), steps, rounds),
        bench("VN settle K=64 float", vn_graph(), steps, rounds),
    ]
    for r in rows:
        q = r["ratios"]
        print(f"{r['graph']}: engine {r['engine_cpu_s_per_step']['median'] * 1e6:.1f} us/step CPU; "
              f"Lava per step (CPU) / engine {q['per_step_cpu']['median']:.0f}x "
              f"(pairs {q['per_step_cpu']['pair_min']:.0f}-{q['per_step_cpu']['pair_max']:.0f}x), "
              f"wall {q['per_step_wall']['median']:.0f}x, end to end (CPU) "
              f"{q['end_to_end_cpu']['median']:.0f}x; events {r['engine_events']} vs Lava "
              f"{r['lava_nonzero_outputs']}")  # fmt: skip
    print(f"target: engine >= {TARGET:g}x Lava's CPU simulator per step (CPU time)")
    path = harness.write_result(
        args.out, "lava", {"quick": args.quick, "lava": version, "target": TARGET, "rows": rows}
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
