"""Fixed-point RSGN nodes: the engine's integer unit against Lava's Loihi2SimCfg (fixed_pt) with
bit-accurate Sparse connections, step for step and bit for bit, in both modes; and the
quantisation's cost against the float unit (no Lava needed for that part)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from atomspark.mapping.quantize import quantize_rsgn_graph
from atomspark.networks import rsgn
from atomspark.networks.datasets import hierarchical_sequences
from atomspark.networks.rsgn_compile import NODE_POPULATION, compile_rsgn_tokens
from atomspark.sim.engine import Engine
from atomspark.sim.units_rsgn_fixed import SIGMOID_LUT, RSGNFixedParams, isqrt

MODES = {
    "published": {},
    "sparse": {"k_nearest": 6, "cutoff": 0.3, "temperature": 0.1},
}


def _graphs(mode: str, n: int = 24, d: int = 8, steps: int = 3):
    cfg = rsgn.RSGNConfig(
        mode=mode, n_nodes=n, d_hidden=d, n_classes=3, n_steps=steps, **MODES[mode]
    )
    params = rsgn.init_params(cfg, seed=1)
    tokens = hierarchical_sequences(n=1, length=16, dim=cfg.d_in, n_classes=3, seed=1).tokens[0]
    graph = compile_rsgn_tokens(params, cfg, tokens)
    return cfg, graph, quantize_rsgn_graph(graph)


def _engine_trace(graph, steps: int):
    eng = Engine(graph)
    prof = eng.run(steps, record=((NODE_POPULATION, "alpha"), (NODE_POPULATION, "h")))
    return eng.traces[(NODE_POPULATION, "alpha")], eng.traces[(NODE_POPULATION, "h")], prof


def test_integer_helpers():
    for n in (0, 1, 2, 3, 4, 15, 16, 17, 2**40 + 12345, 2**61):
        assert (
            isqrt(n) == int(np.floor(np.sqrt(float(n)))) or isqrt(n) ** 2 <= n < (isqrt(n) + 1) ** 2
        )
    assert SIGMOID_LUT[0] == 1 and SIGMOID_LUT[-1] == 4095 and np.all(np.diff(SIGMOID_LUT) >= 0)


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
@pytest.mark.parametrize("mode", list(MODES))
def test_engine_and_lava_fixed_point_are_bit_exact(mode):
    pytest.importorskip("lava")
    from atomspark.mapping.lava_procs.rsgn_fixed_nodes import RSGNFixedNodes, process_kwargs
    from lava.magma.core.run_conditions import RunSteps
    from lava.magma.core.run_configs import Loihi2SimCfg
    from lava.proc.monitor.process import Monitor
    from lava.proc.sparse.process import Sparse

    cfg, _, fixed = _graphs(mode)
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
    x_eng = ((h_eng * alpha_eng[..., None]) >> 12) * (alpha_eng > pop.params.cutoff)[..., None]
    assert np.array_equal(sent_lava[1:], x_eng[1:].reshape(steps, -1))
