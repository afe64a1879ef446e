"""CUBA on the engine of two commits, in interleaved pairs: does a change of the run loop cost
speed? (The grouped loop of deep graphs left CUBA's loop as it was; this checks it.)

    python benchmarks/bench_loop_pairs.py --before COMMIT [--after COMMIT] [--pairs 5]
                                          [--out docs/results/security]

Each commit is extracted with `git archive` into a temporary folder and imported as `atomspark`
from there, with its own warmed Numba cache. Each pair runs the before engine, then the after
engine, each in a fresh process: build the CUBA network (4000 neurons, 2 %, float64, 1 s of
biological time), one untimed run (loading the compiled loop), then 5 timed runs from a fresh
state, of which the least process CPU time of `Engine.run` alone is the pair's entry. Reported: every pair, min and median per commit, the 1-minute load
average before each pair (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness

harness.pin_one_thread()

REPO = Path(__file__).resolve().parent.parent
CASE = r"""
import json, time
from atomspark.scenarios.runs.cuba import CubaConfig, cuba_graph, cuba_network
from atomspark.sim.engine import Engine
cfg = CubaConfig()
graph = cuba_graph(cuba_network(cfg))
steps = cfg.steps(1.0)
eng = Engine(graph)
eng.run(steps)
cpu = []
for _ in range(5):
    eng.reset()
    c0 = time.process_time()
    prof = eng.run(steps)
    cpu.append(time.process_time() - c0)
print(json.dumps({"cpu_s": min(cpu), "spikes": int(prof.events.sum())}))
"""


def extract(commit: str, work: Path) -> dict:
    """The commit's tree as an importable `atomspark` (a folder linking to it) and its cache."""
    tree = work / commit
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], check=True,
                             capture_output=True).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    shim = work / f"{commit}-shim"
    shim.mkdir()
    (shim / "atomspark").symlink_to(tree)
    return {**os.environ, "PYTHONPATH": str(shim), "NUMBA_CACHE_DIR": str(work / f"{commit}-nc")}


def run(env: dict) -> dict:
    done = subprocess.run([sys.executable, "-c", CASE], env=env, capture_output=True, text=True,
                          check=True)  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", default="HEAD")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("docs/results/security"))
    args = parser.parse_args()
    commits = {
        side: subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", ref], check=True,
                             capture_output=True, text=True).stdout.strip()
        for side, ref in (("before", args.before), ("after", args.after))
    }  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix="atomspark_pairs_"))
    envs = {side: extract(commit, work) for side, commit in commits.items()}
    for env in envs.values():
        run(env)  # compile into the cache: not timed
    pairs = []
    for _ in range(args.pairs):
        load = os.getloadavg()[0]
        pair = {side: run(env) for side, env in envs.items()}
        pairs.append({"load_1min": load, **{s: r["cpu_s"] for s, r in pair.items()}})
        assert pair["before"]["spikes"] == pair["after"]["spikes"]
        print(json.dumps(pairs[-1]), flush=True)
    shutil.rmtree(work, ignore_errors=True)
    summary = {
        side: {"min_s": min(p[side] for p in pairs),
               "median_s": statistics.median(p[side] for p in pairs)}
        for side in envs
    }  # fmt: skip
    result = {
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "case": "CUBA 4000 / 2 %, float64, 1 s (10000 steps), Engine.run process CPU time",
        "commits": commits,
        "pairs": pairs,
        "summary": summary,
        "after_over_before_median": summary["after"]["median_s"] / summary["before"]["median_s"],
    }
    harness.write_result(args.out, "cuba_pairs", result)


if __name__ == "__main__":
    main()
