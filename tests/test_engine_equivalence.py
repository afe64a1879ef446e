"""The compiled whole-run engine against the engine it replaced, bit for bit.

tests/legacy_engine.py is the engine as it was before runs moved into compiled code: a Python
loop over steps calling the same kernels. Every counter, every state entry, every recorded trace
and every event must be identical on LIF (float, two channels, refractoriness, mixed delays,
external input; and fixed point), VN (float with top-k and send-on-delta; fixed point) and RSGN
(sparse and published) graphs, also when a run is split into several calls, with the loop of
one block per population and with the grouped loop of deep graphs alike.
"""

from __future__ import annotations

import numpy as np
import pytest
from atomspark.mapping.quantize import quantize_lif_graph, quantize_vn_graph
from atomspark.networks.rsgn import RSGNConfig, init_params
from atomspark.networks.rsgn.dynamics import ignition, initial_state
from atomspark.networks.rsgn_compile import compile_rsgn
from atomspark.networks.vn_compile import compile_vn
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFParams
from legacy_engine import Engine as LegacyEngine


def _lif_graph(rng, n=60) -> Graph:
    w_e = rng.uniform(0.05, 0.6, (n, n)) * (rng.random((n, n)) < 0.3)
    w_i = -rng.uniform(0.05, 0.9, (n, n)) * (rng.random((n, n)) < 0.2)
    bias = np.where(np.arange(n) % 3 == 0, rng.uniform(0.05, 0.15, n), 0.0)
    a = LIFParams(du=0.3, du2=0.15, dv=0.1, vth=1.0, bias=bias, refractory=3)
    b = LIFParams(du=0.5, dv=0.2, vth=0.7, v_reset=-0.1)
    w_ab = rng.normal(0, 0.5, (n // 2, n)) * (rng.random((n // 2, n)) < 0.4)
    return Graph(
        [Population("a", n, a), Population("b", n // 2, b)],
        [
            Projection("a", "a", w_e, channel=0),
            Projection("a", "a", w_i, channel=1, delays=2),
            Projection("a", "b", w_ab, delays=rng.integers(1, 4, w_ab.shape)),
        ],
    )


def _lif_fixed_graph(rng) -> Graph:
    n = 50
    w = rng.uniform(0.0, 0.5, (n, n)) * (rng.random((n, n)) < 0.3)
    p = LIFParams(du=0.25, dv=0.125, vth=1.0, bias=rng.uniform(0, 0.12, n))
    weak = Projection("p", "p", 0.03 * w, delays=2)  # small weights: a negative weight_exp
    graph = quantize_lif_graph(Graph([Population("p", n, p)], [Projection("p", "p", w), weak]))
    assert graph.projections[1].weight_exp < 0
    return graph


def _vn_graph(rng, **kw) -> Graph:
    S = [rng.standard_normal((12, 30)), rng.standard_normal((8, 20))]
    S = [s / np.linalg.norm(s, axis=0) for s in S]
    U = [0.3 * rng.standard_normal((8, 30)), np.zeros((1, 20))]
    return compile_vn(S, U, [0.1, 0.05], rng.standard_normal(12), **kw)


def _rsgn_graph(mode: str) -> Graph:
    extra = dict(k_nearest=5, cutoff=0.3, temperature=0.25) if mode == "sparse" else {}
    cfg = RSGNConfig(mode=mode, n_nodes=40, dim=3, d_hidden=6, d_in=4, n_classes=3, **extra)
    p = init_params(cfg, 3)
    p.thresholds = np.random.default_rng(3).uniform(0.05, 0.9, 40)
    x = np.random.default_rng(4).standard_normal((1, 6, cfg.d_in))
    a0 = ignition(p, cfg, x)
    h0 = initial_state(p, cfg, x, a0)
    return compile_rsgn(p, cfg, a0[0], h0[0])


GRAPHS = {
    "lif": lambda rng: _lif_graph(rng),
    "lif_fixed": _lif_fixed_graph,
    "vn": lambda rng: _vn_graph(rng),
    "vn_topk_send_on_delta": lambda rng: _vn_graph(rng, topk=6, event_threshold=1e-3),
    "vn_float32": lambda rng: _vn_graph(rng, dtype="float32"),
    "vn_fixed": lambda rng: quantize_vn_graph(_vn_graph(rng)),
    "rsgn_sparse": lambda rng: _rsgn_graph("sparse"),
    "rsgn_published": lambda rng: _rsgn_graph("published"),
}


def _inputs(graph: Graph, steps: int, rng) -> dict:
    pops = [p for p in graph.populations if type(p.params).__name__.startswith("LIF")]
    out = {}
    for p in pops[:1]:
        x = rng.uniform(0, 1.5, (steps, p.size)) * (rng.random((steps, p.size)) < 0.1)
        out[p.name] = np.round(x * 40) if p.is_fixed_point else x
    return out


def _assert_same(new: Engine, old: LegacyEngine, pn, po) -> None:
    assert pn.to_dict() == po.to_dict()
    assert [u.tolist() for u in pn.unit_events] == [u.tolist() for u in po.unit_events]
    for name, st in old.state.items():
        for key, arr in st.items():
            assert new.state[name][key].tobytes() == arr.tobytes(), (name, key)
    assert new.traces.keys() == old.traces.keys()
    for key, arr in old.traces.items():
        assert new.traces[key].tobytes() == arr.tobytes(), key
    for name, (steps, units) in old.event_log.items():
        assert np.array_equal(new.event_log[name][0], steps), name
        assert np.array_equal(new.event_log[name][1], units), name


@pytest.fixture(params=["unrolled", "grouped"])
def loop(request, monkeypatch):
    """Each test runs with the per-population loop and with the grouped loop (run_loop_grouped.py,
    which the engine takes above UNROLLED_MAX_POPULATIONS populations)."""
    import atomspark.sim.engine as engine_module

    if request.param == "grouped":
        monkeypatch.setattr(engine_module, "UNROLLED_MAX_POPULATIONS", 0)
    return request.param


@pytest.mark.parametrize("kind", sorted(GRAPHS))
def test_compiled_runs_equal_the_stepped_engine_bit_for_bit(kind, loop):
    graph = GRAPHS[kind](np.random.default_rng(7))
    steps = 40
    inputs = _inputs(graph, steps, np.random.default_rng(8))
    var = {"LIFParams": "v", "LIFFixedParams": "v", "RSGNNodeParams": "h"}
    record = tuple((p.name, var.get(type(p.params).__name__, "g")) for p in graph.populations)
    new, old = Engine(graph), LegacyEngine(graph)
    for lo, hi in ((0, 25), (25, steps)):  # two calls: state and ring buffers carry over
        part = {k: v[lo:hi] for k, v in inputs.items()}
        pn = new.run(hi - lo, inputs=part, record=record, record_events=True)
        po = old.run(hi - lo, inputs=part, record=record, record_events=True)
        _assert_same(new, old, pn, po)
    assert pn.events.sum() > 0  # the graphs are not silent


def test_event_log_grows_past_its_first_capacity(monkeypatch, loop):
    import atomspark.sim.engine as engine_module

    monkeypatch.setattr(engine_module, "_LOG_START", 8)
    graph = _lif_graph(np.random.default_rng(1))
    inputs = _inputs(graph, 30, np.random.default_rng(2))
    new, old = Engine(graph), LegacyEngine(graph)
    pn = new.run(30, inputs=inputs, record_events=True)
    po = old.run(30, inputs=inputs, record_events=True)
    assert new.event_log["a"][0].size > 8
    _assert_same(new, old, pn, po)


def test_the_compiled_loop_is_rebuilt_when_a_kernel_module_changes():
    """The generated loop's file carries a digest of the sim package's sources: Numba's cache
    checks only that file, so without it a changed kernel would run its stale compiled copy."""
    import os
    import tempfile
    from pathlib import Path

    from atomspark.sim import run_loop
    from atomspark.sim.units.lif import LIFParams

    pops = [Population(n, 3, LIFParams(du=0.1, dv=0.1, vth=0.5, bias=0.2)) for n in "ab"]
    Engine(Graph(pops, [Projection("a", "b", np.full((3, 3), 0.3))])).run(3)
    folder = Path(os.environ.get("NUMBA_CACHE_DIR") or tempfile.gettempdir()) / "atomspark_loops"
    digest = run_loop.kernel_sources_digest()
    assert len(digest) == 16
    assert any(f"# kernels: {digest}" in p.read_text() for p in folder.glob("*.py"))
