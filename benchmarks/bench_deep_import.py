"""Compile and run time of a netx chain against its depth: the per-population loop (run_loop.py,
which the engine runs up to UNROLLED_MAX_POPULATIONS populations) vs the grouped loop
(run_loop_grouped.py, which it runs above), in the same tree and on the same files.

    python benchmarks/bench_deep_import.py [--depths 5 20 40 80] [--limit 400]
                                           [--out docs/results/security]

A chain is an input layer of 2 x 2 units and DEPTH dense layers of 4 fixed-point LIF units
(every other unit biased, so every layer spikes), as crafted probes of issue 42 build it. Each
(loop, depth) runs in its own process with its own Numba cache folder, copied from one warmed
by a 1-layer chain, so the kernels are compiled already and the run loop is not: compile is the
first run's CPU time less a warm run's, as a user's first import of that network pays it; run is
the least of 5 warm runs of 16 steps (process CPU time). A case still compiling after --limit
seconds is stopped and recorded as such. The 1-minute load average is kept beside each case (the
machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness

harness.pin_one_thread()

CASE = r"""
import json, sys, time
import numpy as np, h5py
from atomspark.networks.netx_file import read_netx
from atomspark.networks.netx_graph import netx_graph
from atomspark.sim import engine

depth, loop, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
engine.UNROLLED_MAX_POPULATIONS = 10**9 if loop == "unrolled" else 0
lif = {"type": np.bytes_("CUBA"), "iDecay": 4096, "vDecay": 0, "vThMant": 1}
with h5py.File(path, "w") as f:
    g = f.create_group("layer/0")
    g["type"], g["shape"] = np.bytes_("input"), [1, 2, 2]
    for k, v in lif.items():
        g[f"neuron/{k}"] = v
    for i in range(1, depth + 1):
        g = f.create_group(f"layer/{i}")
        g["type"], g["shape"] = np.bytes_("dense"), [4]
        g["weight"], g["bias"] = np.ones((4, 4)), np.arange(4) % 2
        for k, v in lif.items():
            g[f"neuron/{k}"] = v
graph = netx_graph(read_netx(path)).graph
eng = engine.Engine(graph)
c0 = time.process_time()
eng.run(16)
first = time.process_time() - c0
runs = []
for _ in range(5):
    eng.reset()
    c0 = time.process_time()
    prof = eng.run(16)
    runs.append(time.process_time() - c0)
print(json.dumps({"compile_s": first - min(runs), "run_s": min(runs),
                  "populations": len(graph.populations), "events": int(prof.events.sum())}))
"""


def run_case(depth: int, loop: str, cache: Path, limit: float, work: Path) -> dict:
    """One (loop, depth) in a fresh process; its result, or how long it ran before stopped."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    load = os.getloadavg()[0]
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-c", CASE, str(depth), loop, str(work / f"chain{depth}.net")],
            env=env, capture_output=True, text=True, timeout=limit, check=True,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"depth": depth, "loop": loop, "stopped_after_s": limit, "load_1min": load}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    wall = time.perf_counter() - start
    return {"depth": depth, "loop": loop, **result, "wall_s": wall, "load_1min": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", type=int, nargs="+", default=[5, 20, 40, 80])
    parser.add_argument("--limit", type=float, default=400.0, help="seconds per case")
    parser.add_argument("--out", type=Path, default=Path("docs/results/security"))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="atomspark_deep_"))
    warm = work / "warm"
    for loop in ("unrolled", "grouped"):  # kernels of both loops compiled once, then copied
        run_case(1, loop, warm, 3600.0, work)
    cases, stopped = [], set()
    for depth in args.depths:
        for loop in ("unrolled", "grouped"):
            if loop in stopped:  # deeper than a case already stopped: not run
                cases.append({"depth": depth, "loop": loop, "not_run": True})
                continue
            cache = work / f"{loop}{depth}"
            shutil.copytree(warm, cache)
            case = run_case(depth, loop, cache, args.limit, work)
            print(json.dumps(case), flush=True)
            cases.append(case)
            if "stopped_after_s" in case:
                stopped.add(loop)
    shutil.rmtree(work, ignore_errors=True)
    result = {
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "limit_s": args.limit,
        "cases": cases,
    }
    harness.write_result(args.out, "deep_import", result)


if __name__ == "__main__":
    main()
