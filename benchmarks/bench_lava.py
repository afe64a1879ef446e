"""Engine vs Lava's CPU simulator (Loihi2SimCfg) on the same graphs: steps per second and ratio.

Run with the Lava environment: `.venv-lava/bin/python benchmarks/bench_lava.py [--quick]`.
Graphs: (1) two populations of 200 fixed-point LIF neurons, A -> B with a random 8-bit weight
matrix (30 % dense, Lava Sparse) and A driven by biases, bit-accurate (fixed_pt); (2) a small
single-layer VN settle (K = 64 atoms, float) with the custom VNAtom process. Lava is timed
end to end (build + compile + run + stop) for two run lengths; the difference gives its
per-step cost without start-up. The engine is timed on a fresh Engine per repeat.
"""

from __future__ import annotations

import harness
import numpy as np
from atomspark.mapping.lava.bundle import from_graph
from atomspark.mapping.lava.export import run_lava
from atomspark.networks.vn_compile import compile_vn
from atomspark.sim import fixed_point as fx
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFFixedParams


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


def bench(name: str, graph: Graph, steps: tuple[int, ...], repeats: int) -> dict:
    out = {}
    t_eng = harness.time_call(
        lambda: out.__setitem__("p", Engine(graph).run(steps[0])), repeats=repeats, warmup=1
    )
    net = from_graph(graph)
    lava_times = {}
    for s in steps:
        sec, res = harness.time_once(lambda s=s: run_lava(net, s))
        lava_times[s] = sec
        if s == steps[0]:
            lava_out = res
    eng_events = int(out["p"].events.sum())
    lava_events = int(sum(np.count_nonzero(v) for v in lava_out.values()))
    eng_sps = steps[0] / t_eng.median
    lava_sps = steps[0] / lava_times[steps[0]]
    row = {
        "graph": name,
        "steps": steps[0],
        "engine_s": t_eng.median,
        "engine_steps_per_s": eng_sps,
        "lava_s_end_to_end": lava_times[steps[0]],
        "lava_steps_per_s_end_to_end": lava_sps,
        "ratio_end_to_end": eng_sps / lava_sps,
        "engine_events": eng_events,
        "lava_nonzero_outputs": lava_events,
    }
    if len(steps) > 1:
        extra = (lava_times[steps[1]] - lava_times[steps[0]]) / (steps[1] - steps[0])
        row["lava_marginal_s_per_step"] = extra
        if extra > 0:
            row["lava_marginal_steps_per_s"] = 1.0 / extra
            row["ratio_marginal"] = eng_sps * extra
    return row


def main() -> None:
    args = harness.parse_args(__doc__.splitlines()[0])
    info = harness.machine_info()
    harness.print_machine(info)
    import lava

    print(f"lava-nc {getattr(lava, '__version__', '0.10.0 (no __version__)')}")
    steps = (200,) if args.quick else (200, 1000)
    repeats = 3 if args.quick else 7
    rows = [
        bench("LIF 2x200 Sparse fixed_pt", lif_graph(), steps, repeats),
        bench("VN settle K=64 float", vn_graph(), steps, repeats),
    ]
    cols = [
        "graph",
        "steps",
        "engine_steps_per_s",
        "lava_steps_per_s_end_to_end",
        "ratio_end_to_end",
        "lava_marginal_steps_per_s",
        "ratio_marginal",
        "engine_events",
        "lava_nonzero_outputs",
    ]
    print(harness.format_table(rows, cols))
    print("target: engine >= 100x Lava's CPU simulator")
    harness.write_result(args.out, "lava", {"quick": args.quick, "rows": rows})


if __name__ == "__main__":
    main()
