"""Graph storage: bytes per synapse of the engine's projections, and peak memory of large graphs.

Bytes per synapse = Projection.stored_bytes (indptr + indices + weights + delays actually held;
a projection with one delay for all synapses stores it as a scalar) / synapses, for float32 and
float64 graphs. Peak memory: each case is built in a fresh subprocess (one LIF population of that
dtype, one random projection with a fixed fan-in and delay 1; the input matrix is made directly in
the storage layout and freed after the build), stepped 3 times; reported are the peak resident set
(ru_maxrss) and the resident set after the run, both minus the interpreter + imports baseline.
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
from atomspark.sim.units.lif import LIFParams

def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize()

n, fan_in, dtype = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
rng = np.random.default_rng(0)
t0 = time.perf_counter()
nnz = n * fan_in
cols = rng.integers(0, n, nnz, dtype=np.int32)
# per-synapse weights (equal ones would be held once: one number per projection)
w = sp.csr_matrix((rng.uniform(0.005, 0.015, nnz).astype(dtype), cols,
                   np.arange(0, nnz + 1, fan_in, dtype=np.int32)), shape=(n, n))
del cols
proj = Projection("p", "p", w, delays=1, dtype=dtype)
del w
params = LIFParams(du=0.1, dv=0.1, vth=1.0, v_init=rng.uniform(0.0, 1.2, n), dtype=dtype)
graph = Graph([Population("p", n, params)], [proj])
del proj
build_s = time.perf_counter() - t0
stored = graph.projections[0].stored_bytes
t0 = time.perf_counter()
prof = Engine(graph).run(3)
run_s = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"units": n, "synapses": graph.projections[0].n_synapses, "stored_bytes": stored,
                  "baseline_rss": base, "peak_rss": peak, "final_rss": rss(), "build_s": build_s,
                  "run3_s": run_s, "synops": int(prof.synops.sum())}))
"""


def measure(n: int, fan_in: int, dtype: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(n), str(fan_in), dtype],
        capture_output=True,
        text=True,
        check=True,
    )
    res = json.loads(out.stdout.strip().splitlines()[-1])
    syn = res["synapses"]
    stored = sum(res["stored_bytes"].values())
    return {
        "dtype": dtype,
        "units": n,
        "synapses": syn,
        "bytes_per_synapse": stored / syn,
        "stored_MiB": stored / 2**20,
        "peak_rss_MiB": res["peak_rss"] / 2**20,
        "peak_minus_baseline_MiB": (res["peak_rss"] - res["baseline_rss"]) / 2**20,
        "peak_bytes_per_synapse": (res["peak_rss"] - res["baseline_rss"]) / syn,
        "resident_after_run_MiB": (res["final_rss"] - res["baseline_rss"]) / 2**20,
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
        for dtype in ("float32", "float64"):
            need = n * fan_in * (40 if dtype == "float64" else 32)  # build's transient peak
            if need > 0.8 * available_bytes():
                skipped.append(
                    {"units": n, "synapses": n * fan_in, "dtype": dtype, "reason": "free memory"}
                )
                print(f"skip {n} units x {fan_in} ({dtype}): needs ~{need / 2**30:.1f} GiB")
                continue
            rows.append(measure(n, fan_in, dtype))
            print(harness.format_table(rows[-1:], [k for k in rows[-1] if k != "stored_breakdown"]))
    for r in rows[-2:]:
        print(f"stored per synapse ({r['dtype']}): {r['stored_breakdown']} (target <= 10 B)")
    harness.write_result(
        args.out, "memory", {"quick": args.quick, "rows": rows, "skipped": skipped}
    )


if __name__ == "__main__":
    main()
