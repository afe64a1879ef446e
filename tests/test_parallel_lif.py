"""One simulation on several threads (sim/parallel_lif.py): CUBA's states and spikes are
bit-identical for every thread count and to the serial engine, float64 and float32."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from atomspark.scenarios.runs.cuba import CubaConfig, cuba_graph, cuba_network
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.parallel_lif import ParallelLIF, block_bounds

STEPS = 400


def _state(eng):
    return {k: v.copy() for k, v in eng.state["cuba"].items()}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_every_thread_count_gives_the_serial_engines_states_and_spikes(dtype):
    net = cuba_network(CubaConfig(n=12_000, p_conn=0.01))  # 5 blocks, 1.4 M synapses
    serial = Engine(cuba_graph(net, dtype))
    prof = serial.run(STEPS)
    assert prof.events.sum() > 1000  # the net is active: deliveries are exercised
    results = []
    runs = [(t, None) for t in sorted({1, numba.config.NUMBA_NUM_THREADS})] + [(1, 5), (2, 3)]
    for threads, blocks in runs:  # blocks None: one per thread (1 thread: the serial engine)
        if threads > numba.config.NUMBA_NUM_THREADS:
            continue
        eng = Engine(cuba_graph(net, dtype))
        par = ParallelLIF(eng, blocks=blocks)
        out = par.run(STEPS // 2, threads=threads)
        out2 = par.run(STEPS - STEPS // 2, threads=threads)
        spikes = np.concatenate([out.spikes, out2.spikes])
        np.testing.assert_array_equal(spikes, prof.events[:, 0])
        for name, arr in _state(eng).items():
            np.testing.assert_array_equal(arr, serial.state["cuba"][name], err_msg=name)
        assert eng.t == STEPS
        results.append(_state(eng))
    more = Engine(cuba_graph(net, dtype))  # a serial run continues a parallel one exactly
    ParallelLIF(more).run(STEPS // 2, threads=1)
    more.run(STEPS - STEPS // 2)
    for name, arr in _state(more).items():
        np.testing.assert_array_equal(arr, serial.state["cuba"][name], err_msg=name)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mixed", [False, True])
def test_per_synapse_weights_are_delivered_as_the_serial_engine_does(dtype, mixed):
    # every synapse its own weight (0.5 to 1.5 times CUBA's); mixed: the inhibitory projection
    # keeps its one weight, held once, beside the per-synapse excitatory one
    from atomspark.sim.graph import Graph, Projection

    net = cuba_network(CubaConfig(n=12_000, p_conn=0.005))  # room for 5 blocks of 2048 units
    base = cuba_graph(net, dtype)
    rng = np.random.default_rng(3)
    projs = []
    for i, p in enumerate(base.projections):
        m = p.weights.tocsr(copy=True)  # (n_target, n_source)
        if not (mixed and i == 1):
            m.data = m.data * rng.uniform(0.5, 1.5, m.data.size)
        projs.append(Projection(p.source, p.target, m, channel=p.channel, dtype=dtype))
    graph = Graph(base.populations, projs)
    assert (graph.projections[1].uniform_weight is not None) == mixed
    serial = Engine(graph)
    prof = serial.run(300)
    most = numba.config.NUMBA_NUM_THREADS
    for threads, blocks in [(most, None), (1, 3), (min(2, most), 5)]:
        eng = Engine(graph)
        par = ParallelLIF(eng, blocks=blocks)
        split = par.split(blocks or threads)
        assert split.blocks.size - 1 == (blocks or threads)  # the blocking asked for is the one run
        assert np.isnan(par.uniform).sum() == (1 if mixed else 2)
        assert split.weights.size == split.indices.size
        out = par.run(300, threads=threads)
        np.testing.assert_array_equal(out.spikes, prof.events[:, 0])
        for name, arr in eng.state["cuba"].items():
            np.testing.assert_array_equal(arr, serial.state["cuba"][name], err_msg=name)


def test_blocks_cover_the_population_in_multiples_of_8():
    for n in (10, 4000, 40_000, 1_000_000):
        for want in (1, 2, 5, 16):
            b = block_bounds(n, want)
            assert b[0] == 0 and b[-1] == n and np.all(np.diff(b) > 0)
            assert np.all(b[:-1] % 8 == 0) and 1 <= b.size - 1 <= want
    assert block_bounds(1_000_000, 2).size - 1 == 2 and block_bounds(4000, 16).size - 1 == 1


def test_refusals_are_one_line_errors():
    net = cuba_network(CubaConfig(n=500, p_conn=0.02))
    par = ParallelLIF(Engine(cuba_graph(net)))
    with pytest.raises(AtomsparkError, match="threads"):
        par.run(10, threads=numba.config.NUMBA_NUM_THREADS + 1)
    with pytest.raises(AtomsparkError, match="direct lean"):
        ParallelLIF(Engine(cuba_graph(net), exact=True))
    with pytest.raises(AtomsparkError, match="engine"):
        ParallelLIF("not an engine")
    with pytest.raises(AtomsparkError, match="blocks"):
        ParallelLIF(Engine(cuba_graph(net)), blocks=0)
