"""The CUBA benchmark's trivial baseline simulates the same network as the engine (same spikes,
step by step), and its --sizes option refuses unknown sizes in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from atomspark.scenarios.runs.cuba import CubaConfig, cuba_graph, cuba_network
from atomspark.sim.engine import Engine

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCH))

from dense_cuba import dense_run, dense_weights  # noqa: E402


def test_dense_baseline_spikes_equal_the_engines_step_by_step():
    net = cuba_network(CubaConfig(n=600, p_conn=0.1, seed=3))
    steps = 1500  # past the first refractory periods and the initial transient
    counts, synops = dense_run(net, *dense_weights(net), steps)
    prof = Engine(cuba_graph(net)).run(steps)
    assert counts.sum() > 100  # the network fires
    np.testing.assert_array_equal(counts, prof.events[:, 0])
    assert synops == int(prof.synops.sum())


def test_unknown_size_is_refused_in_one_line():
    done = subprocess.run(
        [sys.executable, str(BENCH / "bench_cuba.py"), "--sizes", "123", "--out", "/nonexistent"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        "--sizes: [123] not among the benchmark's sizes [4000, 40000]"
    ]


def test_the_bandwidth_floor_counts_the_bytes_the_engine_reads_per_synapse():
    from engine_floor import fanout_bytes_per_synapse

    net = cuba_network(CubaConfig(n=300, p_conn=0.1, seed=1))
    # CUBA's weights are one scalar per projection, its targets uint16 (<= 65,536 neurons)
    assert fanout_bytes_per_synapse(Engine(cuba_graph(net))) == 2
    # the general path reads int32 indices and per-synapse float64 weights
    assert fanout_bytes_per_synapse(Engine(cuba_graph(net), lean=False)) == 12
