"""Deep networks compile in a time that does not grow with their depth (issue 42: a crafted netx
chain of 40 layers took over four minutes to import, one of 100 did not finish).

The engine runs graphs of more than UNROLLED_MAX_POPULATIONS populations with the grouped loop
(sim/run_loop_grouped.py): its source, and so its compiled code, is the same for a chain of any
length. Bit-identity with the per-population loop is tested on every graph kind in
tests/test_engine_equivalence.py; here, on CUBA's lean and direct kernels and on a netx chain.
"""

from __future__ import annotations

import resource

import numpy as np
import pytest
from atomspark.scenarios.runs.cuba import CubaConfig, cuba_graph, cuba_network
from atomspark.sim import engine as engine_module
from atomspark.sim.engine import Engine
from test_untrusted_models import run_cli

h5py = pytest.importorskip("h5py")
LIF = {"type": np.bytes_("CUBA"), "iDecay": 4096, "vDecay": 0, "vThMant": 1}
IMPORT_BUDGET_CPU_S = 120.0  # a 100-layer chain; before the grouped loop, 40 layers took 329 s


def chain_net(path, depth: int, width: int = 4):
    """A netx input layer of 2 x 2 units and `depth` dense layers of `width` units, every other
    unit biased so that every layer spikes."""
    with h5py.File(path, "w") as f:
        g = f.create_group("layer/0")
        g["type"], g["shape"] = np.bytes_("input"), [1, 2, 2]
        for k, v in LIF.items():
            g[f"neuron/{k}"] = v
        prev = 4
        for i in range(1, depth + 1):
            g = f.create_group(f"layer/{i}")
            g["type"], g["shape"] = np.bytes_("dense"), [width]
            g["weight"], g["bias"] = np.ones((width, prev)), np.arange(width) % 2
            for k, v in LIF.items():
                g[f"neuron/{k}"] = v
            prev = width
    return path


def _chain_graph(tmp_path, depth):
    from atomspark.networks.netx_file import read_netx
    from atomspark.networks.netx_graph import netx_graph

    return netx_graph(read_netx(chain_net(tmp_path / f"chain{depth}.net", depth))).graph


def _run(graph, unrolled_max, monkeypatch, steps=30, **engine_options):
    monkeypatch.setattr(engine_module, "UNROLLED_MAX_POPULATIONS", unrolled_max)
    eng = Engine(graph, **engine_options)
    inputs = {}
    first = graph.populations[0]
    if engine_module.model_of(first.params).accepts_input:
        rng = np.random.default_rng(5)
        x = rng.uniform(0, 20, (steps, first.size)) * (rng.random((steps, first.size)) < 0.2)
        inputs[first.name] = np.round(x) if first.is_fixed_point else x
    record = [(first.name, "v")]
    prof = eng.run(steps, inputs=inputs, record=record, record_events=True)
    return eng, prof


def _assert_same(a, b):
    (ea, pa), (eb, pb) = a, b
    assert pa.to_dict() == pb.to_dict()
    for name, state in ea.state.items():
        for key, arr in state.items():
            assert arr.tobytes() == eb.state[name][key].tobytes(), (name, key)
    for key, arr in ea.traces.items():
        assert arr.tobytes() == eb.traces[key].tobytes()
    for name, (steps, units) in ea.event_log.items():
        assert np.array_equal(steps, eb.event_log[name][0])
        assert np.array_equal(units, eb.event_log[name][1])
    assert pa.events.sum() > 0


@pytest.mark.parametrize("exact", [False, True])  # direct kernels, then lean ones
def test_grouped_loop_equals_the_unrolled_loop_on_cuba(monkeypatch, exact):
    graph = cuba_graph(cuba_network(CubaConfig(n=400)), "float32")
    unrolled = _run(graph, 10**9, monkeypatch, exact=exact)
    grouped = _run(graph, 0, monkeypatch, exact=exact)
    assert unrolled[0].lean == [True]
    _assert_same(unrolled, grouped)


def test_grouped_loop_equals_the_unrolled_loop_on_a_netx_chain(tmp_path, monkeypatch):
    graph = _chain_graph(tmp_path, 6)
    _assert_same(_run(graph, 10**9, monkeypatch), _run(graph, 0, monkeypatch))


def test_one_compiled_loop_serves_every_depth(tmp_path):
    """Chains of 6 and 60 layers run the same compiled function with one Numba signature: the
    deeper chain compiles nothing new."""
    from atomspark.sim import run_loop

    for depth in (6, 60):
        graph = _chain_graph(tmp_path, depth)
        assert len(graph.populations) > engine_module.UNROLLED_MAX_POPULATIONS
        Engine(graph).run(4)
        if depth == 6:
            compiled = set(run_loop._COMPILED)
            loop = run_loop._COMPILED[max(compiled, key=list(run_loop._COMPILED).index)]
    assert set(run_loop._COMPILED) == compiled
    assert len(loop.signatures) == 1


def test_a_deep_network_imports_within_its_budget(tmp_path):
    """`atomspark import` of a 100-layer chain, as a user runs it, in under IMPORT_BUDGET_CPU_S
    seconds of CPU time (its kernels may still be compiling on a fresh cache)."""
    net = chain_net(tmp_path / "deep.net", 100)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = run_cli(["import", str(net), "--out", str(tmp_path / "out")], timeout=900)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0, done.stderr[-2000:]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert cpu < IMPORT_BUDGET_CPU_S, f"import of 100 layers took {cpu:.0f} s of CPU time"
    assert (tmp_path / "out" / "import.json").is_file()
