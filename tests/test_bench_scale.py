"""Scale and threads benchmarks: graph construction never holds an n x n object, the scale
measurement reports its bytes per synapse, and the performance doc renders both results."""

from __future__ import annotations

import importlib.util
import sys
import tracemalloc
from pathlib import Path

import numpy as np
from atomspark.scenarios.runs.cuba import CubaConfig, cuba_graph, cuba_network

ROOT = Path(__file__).resolve().parent.parent


def _module(name):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.pop(0)
    return mod


def test_a_large_network_is_built_without_an_n_by_n_object():
    n = 60_000
    tracemalloc.start()
    net = cuba_network(CubaConfig(n=n, p_conn=0.0002))
    graph = cuba_graph(net, "float32")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # linear in the graph (bytes per synapse and per neuron), far below a boolean n x n mask
    assert peak < 100 * net.pre.size + 100 * n < n * n / 20, peak
    assert sum(p.indices.size for p in graph.projections) == net.pre.size


def test_scale_measurement_reports_bytes_per_synapse_and_identical_spikes_across_threads():
    bench = _module("bench_scale")
    import numba

    threads = sorted({1, numba.config.NUMBA_NUM_THREADS})
    res = bench.measure(12_000, 0.02, threads)
    assert res["n_synapses"] > 0 and len(res["runs"]) == len(threads)
    assert len({r["spikes"] for r in res["runs"]}) == 1
    # int32 targets per synapse, CUBA's equal weights held once, two offsets per neuron and
    # projection (8 bytes each over about 12 synapses per neuron here)
    assert 4.0 <= res["graph_bytes_per_synapse"] < 4.0 + 16 * 2 / 12 + 1
    assert res["graph_parts_bytes_per_synapse"]["weights"] < 1e-3
    assert 40 < res["engine_buffer_bytes_per_neuron"] < 400
    assert res["peak_rss_gb"] > 0


def test_threads_and_scale_sections_render_with_their_targets():
    pt = _module("perf_table")
    machine = {"logical_cores": 2, "memory_gib": 23.5, "cpu": "cpu"}
    threads = {"n": 40_000, "p_conn": 0.002, "steps": 2000, "rounds": 5, "date_utc": "d",
               "load_before": [1.0], "load_after": [1.2], "machine": machine, "rows": [
                   {"simulator": "atomspark engine (1 thread)", "threads": 1, "wall_min_s": 1.0,
                    "wall_median_s": 1.0, "cpu_median_s": 1.0, "spikes": 10},
                   {"simulator": "atomspark engine (2 threads)", "threads": 2, "wall_min_s": 0.5,
                    "wall_median_s": 0.55, "cpu_median_s": 1.1, "spikes": 10},
                   {"simulator": "Brian2 (2 threads)", "threads": 2, "wall_min_s": 1.0,
                    "wall_median_s": 1.21, "cpu_median_s": 2.0, "spikes": 10}]}  # fmt: skip
    lines = pt.threads_targets(threads)
    assert lines[0].endswith("met (1.82x >= 1.7x)")
    assert "Brian2 OpenMP at 2 threads (wall): met (2.20x >= 2x)" in lines[1]
    assert len(lines) == 2  # load under the cores: no warning
    table = "\n".join(pt.threads_section(threads))
    assert "| atomspark engine (2 threads) | 2 | 0.5 | 0.55 | 1.1 | 10 |" in table
    row = {"runs": [{"threads": 1, "wall_s": 2.0, "rate_hz": 5.0}], "n_synapses": 1000,
           "seconds": 1.0, "draw_s": 1, "graph_s": 1, "engine_s": 1, "block_split_s": 1,
           "graph_bytes_per_synapse": 12.1, "parallel_bytes_per_synapse": 4.9,
           "state_bytes_per_neuron": 40, "peak_rss_gb": 3.0, "load_before": [1],
           "load_after": [1], "peers": [{"peer": "nest", "threads": 1, "capped_s": 300}]}  # fmt: skip
    scale = {"sizes": {"1000000": row}, "machine": machine}
    (line,) = pt.scale_targets(scale)
    assert "12.10 bytes per synapse (target <= 6 at 1,000,000" in line
    assert "nest (1 thr.): over the 300 s cap" in "\n".join(pt.scale_section(scale))
    assert np.isfinite(row["peak_rss_gb"])
