"""Graph storage: bytes per synapse of the engine's projections, and peak memory of large graphs.

Bytes per synapse = (indptr + indices + data + delay).nbytes / synapses of a built Projection,
as stored today (sim/graph.py), next to the size a compact layout would need (int32 indices,
float32 weights, uint8 delays). Peak memory: each size is built in a fresh subprocess (one LIF
population, one random projection with a fixed fan-in), stepped a few times, and its peak resident
set (resource.getrusage ru_maxrss) reported, minus the interpreter + imports baseline.
"""

from __future__ import annotations

import json
import subprocess
import sys

import harness

CHILD = r"""
import json, resource, sys, time
import numpy as np, scipy.sparse as sp
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units_lif import LIFParams
n, fan_in = int(sys.argv[1]), int(sys.argv[2])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
rng = np.random.default_rng(0)
t0 = time.perf_counter()
nnz = n * fan_in
cols = rng.integers(0, n, nnz, dtype=np.int32)
w = sp.csr_matrix((np.full(nnz, 0.01), cols, np.arange(0, nnz + 1, fan_in, dtype=np.int64)),
                  shape=(n, n))
del cols
proj = Projection("p", "p", w, delays=1)
del w
params = LIFParams(du=0.1, dv=0.1, vth=1.0, v_init=rng.uniform(0.0, 1.2, n))
graph = Graph([Population("p", n, params)], [proj])
build_s = time.perf_counter() - t0
stored = {k: int(getattr(proj, k).nbytes) for k in ("indptr", "indices", "data", "delay")}
t0 = time.perf_counter()
prof = Engine(graph).run(3)
run_s = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"units": n, "synapses": proj.n_synapses, "stored_bytes": stored,
                  "baseline_rss": base, "peak_rss": peak, "build_s": build_s, "run3_s": run_s,
                  "synops": int(prof.synops.sum())}))
"""


def measure(n: int, fan_in: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(n), str(fan_in)],
        capture_output=True,
        text=True,
        check=True,
    )
    res = json.loads(out.stdout.strip().splitlines()[-1])
    syn = res["synapses"]
    stored = sum(res["stored_bytes"].values())
    compact = syn * (4 + 4 + 1) + (n + 1) * 8
    return {
        "units": n,
        "synapses": syn,
        "bytes_per_synapse": stored / syn,
        "compact_bytes_per_synapse": compact / syn,
        "stored_MiB": stored / 2**20,
        "peak_rss_MiB": res["peak_rss"] / 2**20,
        "peak_minus_baseline_MiB": (res["peak_rss"] - res["baseline_rss"]) / 2**20,
        "peak_bytes_per_synapse": (res["peak_rss"] - res["baseline_rss"]) / syn,
        "build_s": res["build_s"],
        "engine_3_steps_s": res["run3_s"],
        "synops_3_steps": res["synops"],
        "stored_breakdown": res["stored_bytes"],
    }


def available_bytes() -> int:
    with open("/proc/meminfo", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("MemAvailable"):
                return int(line.split()[1]) * 1024
    return 0


def main() -> None:
    args = harness.parse_args(__doc__.splitlines()[0])
    harness.print_machine(harness.machine_info())
    sizes = (
        [(10_000, 100), (100_000, 100)]
        if args.quick
        else [(10_000, 100), (100_000, 100), (1_000_000, 10), (1_000_000, 30), (1_000_000, 100)]
    )
    rows, skipped = [], []
    for n, fan_in in sizes:
        need = n * fan_in * 100  # generous estimate of the build's transient peak
        if need > 0.6 * available_bytes():
            skipped.append({"units": n, "synapses": n * fan_in, "reason": "not enough free memory"})
            print(f"skip {n} units x {fan_in}: needs ~{need / 2**30:.1f} GiB")
            continue
        rows.append(measure(n, fan_in))
        print(harness.format_table(rows[-1:], [k for k in rows[-1] if k != "stored_breakdown"]))
    print(f"stored per synapse: {rows[-1]['stored_breakdown']} (target <= 10 bytes/synapse)")
    harness.write_result(
        args.out, "memory", {"quick": args.quick, "rows": rows, "skipped": skipped}
    )


if __name__ == "__main__":
    main()
