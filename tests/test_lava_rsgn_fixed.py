"""Fixed-point RSGN nodes: the engine's integer unit against Lava's Loihi2SimCfg (fixed_pt) with
bit-accurate Sparse connections, step for step and bit for bit, in both modes; the quantisation's
cost against the float unit; and the integer RSGN in a Lava bundle: its NumPy reference run and
the engine on the bundle's graph equal the engine's integer run bit for bit (no Lava needed), and
(marked lava) the bundle run on Lava equals both."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from atomspark.mapping.lava.bundle import from_graph, reference_run, to_graph
from atomspark.mapping.lava.export import export_lava, load_bundle
from atomspark.mapping.lava.net import alpha_record
from atomspark.mapping.quantize import quantize_rsgn_graph
from atomspark.networks import rsgn
from atomspark.networks.datasets import hierarchical_sequences
from atomspark.networks.rsgn_compile import NODE_POPULATION, compile_rsgn_tokens
from atomspark.sim.engine import Engine
from atomspark.sim.units.rsgn_fixed import SIGMOID_LUT, RSGNFixedParams, emitted_payloads, isqrt

MODES = {
    "published": {},
    "sparse": {"k_nearest": 6, "cutoff": 0.3, "temperature": 0.1},
}


# the integer variants: quantize_rsgn_graph's options (split W_h; W's exponent per target node)
UNITS = {
    "rsgn_fixed": {},
    "rsgn_fixed_split": {"split_w_h": True},
    "split-per-target-w": {"split_w_h": True, "per_target_w": True},
}


def _graphs(mode: str, n: int = 24, d: int = 8, steps: int = 3, unit: str = "rsgn_fixed"):
    cfg = rsgn.RSGNConfig(
        mode=mode, n_nodes=n, d_hidden=d, n_classes=3, n_steps=steps, **MODES[mode]
    )
    params = rsgn.init_params(cfg, seed=1)
    tokens = hierarchical_sequences(n=1, length=16, dim=cfg.d_in, n_classes=3, seed=1).tokens[0]
    graph = compile_rsgn_tokens(params, cfg, tokens)
    return cfg, graph, quantize_rsgn_graph(graph, **UNITS[unit])


def _engine_trace(graph, steps: int):
    eng = Engine(graph)
    prof = eng.run(steps, record=((NODE_POPULATION, "alpha"), (NODE_POPULATION, "h")))
    return eng.traces[(NODE_POPULATION, "alpha")], eng.traces[(NODE_POPULATION, "h")], prof


def test_integer_helpers():
    for n in (0, 1, 2, 3, 4, 15, 16, 17, 2**40 + 12345, 2**61):
        assert (
            isqrt(n) == int(np.floor(np.sqrt(float(n)))) or isqrt(n) ** 2 <= n < (isqrt(n) + 1) ** 2
        )
    sig = SIGMOID_LUT[:1024]
    assert sig[0] == 5670 and sig[-1] == 2**24 - 5670 and np.all(np.diff(sig) >= 0)


@pytest.mark.parametrize("mode", list(MODES))
def test_fixed_point_tracks_the_float_unit(mode):
    cfg, graph, fixed = _graphs(mode)
    steps = cfg.n_steps + 1
    a_f, h_f, _ = _engine_trace(graph, steps)
    a_q, h_q, prof = _engine_trace(fixed, steps)
    assert isinstance(fixed.populations[0].params, RSGNFixedParams)
    assert np.abs(a_q / 4096 - a_f).max() < 0.05
    assert np.abs(h_q / 1024 - h_f).max() < 0.1 * np.abs(h_f).max()
    assert prof.wraps.sum() == 0 and prof.clips.sum() == 0


@pytest.mark.lava
@pytest.mark.parametrize("unit", list(UNITS))
@pytest.mark.parametrize("mode", list(MODES))
def test_engine_and_lava_fixed_point_are_bit_exact(mode, unit):
    pytest.importorskip("lava")
    from atomspark.mapping.lava.procs.rsgn_fixed_nodes import RSGNFixedNodes, process_kwargs
    from lava.magma.core.run_conditions import RunSteps
    from lava.magma.core.run_configs import Loihi2SimCfg
    from lava.proc.monitor.process import Monitor
    from lava.proc.sparse.process import Sparse

    cfg, _, fixed = _graphs(mode, unit=unit)
    steps = cfg.n_steps + 1
    pop, proj = fixed.populations[0], fixed.projections[0]
    d = pop.params.width
    nodes = RSGNFixedNodes(**process_kwargs(pop.params, pop.size))
    w = sp.csr_matrix(proj.weights)  # (target, source) mantissas, stored zeros included
    payload = Sparse(weights=sp.kron(w, sp.identity(d, dtype=np.int64), format="csr"),
                     num_message_bits=24, weight_exp=0)  # fmt: skip
    pattern = sp.csr_matrix((np.ones(w.nnz, np.int64), w.indices, w.indptr), shape=w.shape)
    flags = Sparse(weights=pattern, num_message_bits=0)
    nodes.s_out.connect(payload.s_in)
    payload.a_out.connect(nodes.a_in)
    nodes.flag_out.connect(flags.s_in)
    flags.a_out.connect(nodes.flag_in)
    mon_a, mon_s = Monitor(), Monitor()
    mon_a.probe(nodes.alpha_out, steps + 1)
    mon_s.probe(nodes.s_out, steps + 1)
    try:
        nodes.run(
            condition=RunSteps(num_steps=steps + 1), run_cfg=Loihi2SimCfg(select_tag="fixed_pt")
        )
        alpha_lava = np.asarray(mon_a.get_data()[nodes.name]["alpha_out"]).reshape(steps + 1, -1)
        sent_lava = np.asarray(mon_s.get_data()[nodes.name]["s_out"]).reshape(steps + 1, -1)
    finally:
        nodes.stop()
    alpha_eng, h_eng, prof = _engine_trace(fixed, steps + 1)
    # Lava step t = engine step t (step 0: ignition, nothing updates)
    assert np.array_equal(alpha_lava[1:], alpha_eng[1:])
    assert np.any(alpha_eng[-1] > 0) and np.any(h_eng[-1] != h_eng[1])  # it moves
    x_eng = np.stack(  # the payloads the engine's states send (the unit's rounding)
        [emitted_payloads(a, h, pop.params.cutoff) for a, h in zip(alpha_eng, h_eng)]
    )
    assert np.array_equal(sent_lava[1:], x_eng[1:].reshape(steps, -1))


# ---------------------------------------------------------------- bundles (export --to lava --fixed)

BUNDLE_STEPS = 6


def _bundle_graph(mode: str, unit: str = "rsgn_fixed"):
    """A quantised RSGN with nodes that wake and fall silent (varied thresholds, sparse mode) and
    stored synapses whose mantissa is 0 (they still wake their target under the event rule)."""
    cfg = rsgn.RSGNConfig(mode=mode, n_nodes=16, d_hidden=4, d_in=4, n_classes=3, **MODES[mode])
    params = rsgn.init_params(cfg, seed=2)
    rng = np.random.default_rng(2)
    params.thresholds = rng.uniform(0.05, 0.9, cfg.n_nodes)
    if mode == "sparse":
        params.edge_affinity.data[::5] = 0.0
    graph = compile_rsgn_tokens(params, cfg, rng.standard_normal((6, 4)))
    return quantize_rsgn_graph(graph, **UNITS[unit])


@pytest.mark.parametrize("unit", list(UNITS))
@pytest.mark.parametrize("mode", list(MODES))
def test_bundle_reference_and_graph_equal_the_engine_integer_run(mode, unit, tmp_path):
    fixed = _bundle_graph(mode, unit)
    out = export_lava(fixed, tmp_path / "bundle")
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["select_tag"] == "fixed_pt"
    assert meta["populations"][0]["lava_process"] == "RSGNFixedNodes"
    assert meta["hardware_run"]["host_processes"] == ["RSGNFixedNodes"]
    net = load_bundle(out)
    w = net.connections[0].weights
    assert w.nnz == fixed.projections[0].n_synapses  # zero mantissas stay synapses (flags)
    if mode == "sparse":
        assert np.count_nonzero(w.data == 0) > 0
    ref = reference_run(net, BUNDLE_STEPS)
    alpha, h, prof = _engine_trace(fixed, BUNDLE_STEPS)
    cutoff = fixed.populations[0].params.cutoff
    sent = np.stack([emitted_payloads(a, hh, cutoff) for a, hh in zip(alpha, h)])
    assert ref[NODE_POPULATION].dtype == np.int64
    assert np.array_equal(ref[alpha_record(NODE_POPULATION)], alpha)
    assert np.array_equal(ref[NODE_POPULATION], sent.reshape(BUNDLE_STEPS, -1))
    assert np.count_nonzero(sent[-1]) > 0
    if mode == "sparse":  # the run wakes and silences nodes, so the event rule is exercised
        on = alpha > cutoff
        assert np.any(on[1:] & ~on[:-1]) and np.any(~on[1:] & on[:-1])
    back_graph = to_graph(net)
    assert type(back_graph.populations[0].params) is type(fixed.populations[0].params)
    back, _, _ = _engine_trace(back_graph, BUNDLE_STEPS)
    assert np.array_equal(back, alpha)  # the bundle rebuilds the same integer engine graph
    assert from_graph(fixed).populations[0].scalars == net.populations[0].scalars


@pytest.mark.lava
@pytest.mark.parametrize("unit", list(UNITS))
@pytest.mark.parametrize("mode", list(MODES))
def test_fixed_point_bundle_on_lava_equals_reference_and_engine_bit_for_bit(mode, unit, tmp_path):
    pytest.importorskip("lava")
    from atomspark.mapping.lava.export import verify_lava

    out = export_lava(_bundle_graph(mode, unit), tmp_path / "bundle")
    report = verify_lava(out, BUNDLE_STEPS)
    assert report.arithmetic == "fixed" and report.tolerance == 0.0 and report.passed
    assert set(report.lava_vs_engine) == {
        NODE_POPULATION, alpha_record(NODE_POPULATION), f"{NODE_POPULATION}.events"
    }  # fmt: skip
    assert max(report.lava_vs_reference.values()) == 0.0
    assert max(report.lava_vs_engine.values()) == 0.0
    assert report.lava_events[NODE_POPULATION] > BUNDLE_STEPS


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("suppressed", ["all", "half"])
@pytest.mark.parametrize("unit", list(UNITS))
def test_float_and_fixed_agree_on_which_nodes_are_silent(mode, suppressed, unit):
    """Thresholds of 50 put a node's soft threshold at sigmoid(-50 / T) ~ 1e-22: in float such
    nodes stay silent after the ignition. The integer unit must silence the same nodes at every
    step (it once floored the activation at one Q.12 LSB with a one-LSB pool epsilon, which
    normalised a pool of suppressed nodes to alpha ~ 1: every node fired every step). Both
    integer variants."""
    cfg = rsgn.RSGNConfig(mode=mode, n_nodes=24, d_hidden=8, n_classes=3, n_steps=3, **MODES[mode])
    params = rsgn.init_params(cfg, seed=1)
    high = np.arange(cfg.n_nodes) % 2 == 0 if suppressed == "half" else np.ones(cfg.n_nodes, bool)
    params.thresholds = np.where(high, 50.0, params.thresholds)
    tokens = hierarchical_sequences(n=1, length=16, dim=cfg.d_in, n_classes=3, seed=1).tokens[0]
    graph = compile_rsgn_tokens(params, cfg, tokens)
    a_f, _, prof_f = _engine_trace(graph, cfg.n_steps + 1)
    a_q, _, prof_q = _engine_trace(quantize_rsgn_graph(graph, **UNITS[unit]), cfg.n_steps + 1)
    on_f, on_q = a_f[1:] > cfg.cutoff, a_q[1:] > int(np.floor(cfg.cutoff * 4096))
    assert not np.any(on_f[:, high])  # the float model silences them ...
    assert np.array_equal(on_f, on_q)  # ... and so does the integer one, step by step
    assert np.array_equal(prof_f.events, prof_q.events)
    if suppressed == "half" and mode == "published":
        assert np.any(on_q)  # the others still fire
