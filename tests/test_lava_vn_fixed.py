"""The engine's fixed-point VN atom against the plain NumPy integer step (no Lava needed).

The NumPy step (sim/units/vn_fixed.vn_fixed_step) is what Lava's PyVNAtomModelFixed runs; the
engine's Numba kernel must reproduce it bit for bit, overflow counts included.
"""

from __future__ import annotations

import numpy as np
import pytest
from atomspark.mapping.lava.bundle import from_graph, reference_run, to_graph
from atomspark.mapping.quantize import quantize_vn_graph, vn_quantization_report
from atomspark.networks.vn.model import VNModel
from atomspark.networks.vn_compile import compile_vn_model
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.vn import VNParams
from atomspark.sim.units.vn_fixed import (
    CODE_LIMIT,
    VNFixedParams,
    lava_sparse_accumulate,
    vn_fixed_step,
    wrap_signed,
)

L = CODE_LIMIT  # 2**23 - 1


@pytest.fixture(scope="module")
def float_graph():
    model = VNModel.random(8, [(10, 6), (6, 3)], lam=0.05, seed=4)
    return compile_vn_model(model, np.random.default_rng(2).standard_normal(8))


@pytest.fixture(scope="module")
def fixed_graph(float_graph):
    return quantize_vn_graph(float_graph, 12)


def _dense(proj: Projection) -> np.ndarray:
    out = np.zeros(proj.shape, np.int64)
    rows = np.repeat(np.arange(proj.shape[1]), np.diff(proj.indptr))
    out[proj.indices, rows] = proj.data.astype(np.int64)
    return out


def numpy_run(graph: Graph, steps: int):
    """Dense run of every atom with vn_fixed_step and Lava's per-connection 32-bit wrap."""
    st = {p.name: p.params.init_state(p.size) for p in graph.populations}
    prev = {p.name: np.zeros(p.size, np.int64) for p in graph.populations}
    traces = {(p.name, v): [] for p in graph.populations for v in ("g", "g_sent", "c")}
    events, wraps, clips = np.zeros((steps, len(graph.populations)), np.int64), 0, 0
    for t in range(steps):
        a_in = {p.name: np.zeros(p.size, np.int64) for p in graph.populations}
        for proj in graph.projections:
            acc, n_wrap = lava_sparse_accumulate(_dense(proj), prev[proj.source], proj.weight_exp)
            a_in[proj.target] += acc
            wraps += n_wrap
        for i, p in enumerate(graph.populations):
            s, par = st[p.name], p.params
            res = vn_fixed_step(
                s["g"], s["g_sent"], s["c"], a_in[p.name], s["drive"], s["thresh"],
                par.eta_mant, par.eta_shift,
            )  # fmt: skip
            s["g"], s["g_sent"], s["c"] = res.g, res.g_sent, res.c
            prev[p.name] = res.dg
            events[t, i] = np.count_nonzero(res.dg)
            wraps, clips = wraps + res.wraps, clips + res.clips
            for v in ("g", "g_sent", "c"):
                traces[(p.name, v)].append(s[v].copy())
    return {k: np.array(v) for k, v in traces.items()}, events, wraps, clips


def test_engine_equals_numpy_integer_step_bit_exactly(fixed_graph):
    steps = 80
    ref, ref_events, ref_wraps, ref_clips = numpy_run(fixed_graph, steps)
    eng = Engine(fixed_graph)
    record = tuple(ref)
    prof = eng.run(steps, record=record)
    for key in record:
        assert eng.traces[key].dtype == np.int64
        assert np.array_equal(eng.traces[key], ref[key]), key
    assert np.array_equal(prof.events, ref_events)
    assert ref_events.sum() > 50  # the settle did real work
    assert prof.wraps.sum() == ref_wraps == 0 and prof.clips.sum() == ref_clips == 0
    # event-driven: settled atoms are skipped, yet the result is the dense one
    assert prof.updates.sum() < steps * fixed_graph.total_units
    assert np.all(prof.payload_bits == 24 * prof.events)
    final = [np.count_nonzero(eng.state[p.name]["g"]) for p in fixed_graph.populations]
    assert prof.active[-1].tolist() == final


def test_lava_reference_run_and_to_graph_agree_with_engine(fixed_graph):
    steps = 40
    net = from_graph(fixed_graph)
    assert net.arithmetic == "fixed" and all(c.graded for c in net.connections)
    out = reference_run(net, steps)
    for graph in (fixed_graph, to_graph(net)):
        eng = Engine(graph)
        eng.run(steps, record=tuple((p.name, "g_sent") for p in graph.populations))
        for p in graph.populations:
            sent = eng.traces[(p.name, "g_sent")]
            dg = np.diff(sent, axis=0, prepend=np.zeros((1, p.size), np.int64))
            assert np.array_equal(out[p.name], dg)


def _one_atom_graph(**kw) -> Graph:
    params = dict(frac_bits=0, eta_mant=4095, eta_shift=0, drive=0, thresh=0)
    params.update(kw)
    return Graph([Population("a", 1, VNFixedParams(**params))])


def test_overflows_are_counted_and_match_the_numpy_step():
    """External inputs force every overflow: the 32-bit input wrap, the 24-bit c wrap, the g
    saturation and the payload saturation (whose remainder is sent one step later)."""
    inputs = np.array([[L], [-2 * L], [0], [L], [L + 3], [2**31 + 5], [0], [0]], np.int64)
    steps = inputs.shape[0]
    eng = Engine(_one_atom_graph())
    prof = eng.run(steps, inputs={"a": inputs}, record=(("a", "g"), ("a", "g_sent"), ("a", "c")))
    g, g_sent, c = np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64)
    for t in range(steps):
        a = wrap_signed(inputs[t], 32)
        res = vn_fixed_step(g, g_sent, c, a, 0, 0, 4095, 0)
        g, g_sent, c = res.g, res.g_sent, res.c
        assert eng.traces[("a", "g")][t].tolist() == g.tolist()
        assert eng.traces[("a", "g_sent")][t].tolist() == g_sent.tolist()
        assert eng.traces[("a", "c")][t].tolist() == c.tolist()
        if prof.updates[t, 0]:  # the engine counts overflows in the atoms it updates
            assert prof.wraps[t, 0] == res.wraps + int(a[0] != inputs[t, 0])
            assert prof.clips[t, 0] == res.clips
        else:  # skipped: no input and a settled code, so the dense step changed nothing
            assert inputs[t, 0] == 0 and prof.wraps[t, 0] == prof.clips[t, 0] == 0
    # hand-checked steps: 0: c = L, g saturates at -L; 1: c = -L, g saturates at +L and the
    # change 2L is clipped to L (g_sent 0); 2: the remaining L is sent
    assert eng.traces[("a", "g")][:3, 0].tolist() == [-L, L, L]
    assert eng.traces[("a", "g_sent")][:3, 0].tolist() == [-L, 0, L]
    assert prof.clips[:3, 0].tolist() == [1, 2, 1]
    assert prof.events[:3, 0].tolist() == [1, 1, 1]
    assert eng.traces[("a", "c")][4, 0] == wrap_signed(L + 3, 24)  # c: 0 + L + 3 wraps
    assert prof.wraps[5, 0] >= 1  # 2**31 + 5 wraps in the 32-bit accumulator
    assert prof.wraps.sum() >= 2 and prof.clips.sum() >= 5


def test_a_saturated_atom_settles_and_stops_updating():
    prof = Engine(_one_atom_graph(drive=L)).run(4)
    assert prof.clips[:, 0].tolist() == [1, 1, 0, 0]  # x = 4096 L saturates at L, twice
    assert prof.updates[:, 0].tolist() == [1, 1, 0, 0]
    assert prof.events[:, 0].tolist() == [1, 0, 0, 0]


def test_inputs_wrap_per_connection_and_c_is_unaffected():
    """Two connections of 200 L each fit int32 but their sum does not. Lava adds its Sparse
    outputs in int64, so per-connection channels count no input wrap, one shared channel
    counts one; c is the same either way (2**32 is a multiple of 2**24) and wraps itself."""
    src = Population("s", 1, VNFixedParams(0, 4095, 0, drive=2**21, thresh=0))
    tgt = Population("t", 1, VNFixedParams(0, 1, 63, drive=0, thresh=0, n_inputs=2))
    w = np.array([[200]])
    assert 200 * L < 2**31 < 400 * L
    for channels, input_wraps in (((0, 1), 0), ((0, 0), 1)):
        projs = [Projection("s", "t", w, channel=ch) for ch in channels]
        eng = Engine(Graph([src, tgt], projs))
        prof = eng.run(2, record=(("t", "c"),))
        assert eng.traces[("t", "c")][1, 0] == wrap_signed(400 * L, 24)
        assert prof.wraps[1, 1] == input_wraps + 1  # + the 24-bit wrap of c
        assert prof.clips[0, 0] == 1  # the source saturated at L
        out = reference_run(from_graph(Graph([src, tgt], projs)), 2)
        assert out["s"][0, 0] == L


def test_graph_rejects_weights_lava_would_change():
    pop = Population("a", 2, VNFixedParams(8, 2048, 12, 1, 0))
    with pytest.raises(AtomsparkError, match="8-bit"):
        Graph([pop], [Projection("a", "a", np.array([[300, 0], [0, 2]]))])
    with pytest.raises(AtomsparkError, match="even numbers"):
        Graph([pop], [Projection("a", "a", np.array([[3, -4], [0, 2]]))])
    with pytest.raises(AtomsparkError, match="integers"):
        Graph([pop], [Projection("a", "a", np.array([[0.5, 0], [0, 2]]))])


def _dequantised(fixed: Graph) -> Graph:
    """The float graph whose parameters are exactly the integer graph's values."""
    pops = []
    for p in fixed.populations:
        par, unit = p.params, 2.0**p.params.frac_bits
        lam = par.thresh / unit / par.eta
        drive = par.drive / unit / 2.0**par.c_shift
        pops.append(Population(p.name, p.size, VNParams(eta=par.eta, lam=lam, drive=drive)))
    projs = [
        Projection(
            pr.source,
            pr.target,
            _dense(pr) * 2.0 ** (pr.weight_exp - fixed.population(pr.target).params.c_shift),
        )
        for pr in fixed.projections
    ]
    return Graph(pops, projs)


def test_quantization_report_against_the_float_engine(float_graph, fixed_graph):
    steps = 80
    rep = vn_quantization_report(float_graph, fixed_graph, steps)
    assert rep.wraps == 0 and rep.clips == 0
    assert rep.active_set_agreement == 1.0
    assert rep.events_fixed > 0 and rep.synops_fixed > 0
    eng, fixed = Engine(float_graph), Engine(fixed_graph)
    eng.run(steps)
    fixed.run(steps)
    errs = [
        np.abs(eng.state[p.name]["g"] - fixed.state[p.name]["g"] / 2.0**12).max()
        for p in float_graph.populations
    ]
    assert rep.code_max_abs_error == pytest.approx(max(errs))
    half_steps = [  # mixed-sign mantissas are even: a step is 2 units of 2**(exp - c_shift)
        2.0 ** (pr.weight_exp - fixed_graph.population(pr.target).params.c_shift)
        for pr in fixed_graph.projections
    ]
    assert 0 < rep.weight_max_abs_error <= max(half_steps)
    # Most of the code error comes from the 8-bit Gram weights: against the float engine on
    # the dequantised graph (same weights, drive, threshold, eta) only the integer rounding is
    # left, and it stays within 2**-6 over these steps.
    arith = vn_quantization_report(_dequantised(fixed_graph), fixed_graph, steps)
    assert arith.code_max_abs_error < 2.0**-6 < rep.code_max_abs_error


def test_values_that_do_not_fit_are_rejected(float_graph):
    with pytest.raises(AtomsparkError, match="24-bit"):
        quantize_vn_graph(float_graph, 22)
    with pytest.raises(AtomsparkError, match="24-bit"):
        Population("a", 2, VNFixedParams(8, 2048, 12, 0, 0, g_init=np.array([0, 2**23])))
    with pytest.raises(AtomsparkError, match=r"shape \(3,\)"):
        Population("a", 3, VNFixedParams(8, 2048, 12, np.array([1, 2]), 0))
    with pytest.raises(AtomsparkError, match="channel"):
        Graph(
            [Population("a", 1, VNFixedParams(8, 2048, 12, 1, 0))],
            [Projection("a", "a", [[2]], channel=1)],
        )
