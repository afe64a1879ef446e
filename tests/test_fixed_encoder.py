"""The integer reference of the RSGN encoder (mapping/fixed_encoder.py): integers only, close to
the float encoder's ignition rounded to the same formats (published: Euclidean distances; sparse:
the geodesic series, the cutoff), its tables and exp exact where they should be, a model outside
its range refused in one line, and a split bundle's stream run from it."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from atomspark.mapping.fixed_encoder import FixedEncoder, fixed_encoder
from atomspark.mapping.quantize import fixed_rsgn_state
from atomspark.networks import rsgn
from atomspark.networks.rsgn.dynamics import gelu, ignition, initial_state
from atomspark.sim.core import AtomsparkError

SPARSE = {"k_nearest": 8, "cutoff": 0.05, "ignition_sigma": 0.08}


def _model(mode: str):
    extra = SPARSE if mode == "sparse" else {}
    cfg = rsgn.RSGNConfig(mode=mode, n_nodes=40, d_hidden=8, n_classes=3, n_steps=3, **extra)
    tokens = np.random.default_rng(1).standard_normal((6, 10, cfg.d_in))
    return rsgn.init_params(cfg, seed=2), cfg, tokens


@pytest.mark.parametrize("mode", ["published", "sparse"])
def test_the_integer_encoder_is_the_float_one_to_a_few_last_bits(mode):
    params, cfg, tokens = _model(mode)
    enc = fixed_encoder(params, cfg)
    worst_alpha = worst_h = 0
    for seq in tokens:
        a0 = ignition(params, cfg, seq[None])
        host = fixed_rsgn_state(a0[0], initial_state(params, cfg, seq[None], a0)[0])
        got = enc.encode(seq)
        assert got["alpha"].dtype == np.int64 and got["h"].dtype == np.int64
        assert got["alpha"].shape == (cfg.n_nodes,) and got["h"].shape == (cfg.n_nodes, 8)
        assert got["alpha"].min() >= 0 and got["alpha"].max() <= 4096
        worst_alpha = max(worst_alpha, int(np.abs(got["alpha"] - host["alpha"]).max()))
        worst_h = max(worst_h, int(np.abs(got["h"] - host["h"]).max()))
        if mode == "sparse":  # the cutoff: at or below it a node is silent
            assert np.all((got["alpha"] == 0) | (got["alpha"] > enc.cutoff))
    assert worst_alpha <= 40 and worst_h <= 8  # Q.12 and Q.10 last bits (0.01 at most)
    assert worst_alpha > 0  # an integer encoder, not the float one rounded


def test_tables_and_exp_hold_their_values():
    params, cfg, _ = _model("published")
    enc = fixed_encoder(params, cfg)
    assert enc.gelu[enc.gelu.size // 2 + 1024] == round(gelu(np.array(1.0))[()] * 1024)
    assert enc.tanh[0] == -(1 << 14) and enc.tanh[-1] == 1 << 14
    assert enc.exp2[0] == 1 << 16 and enc.exp2[2048] == round(2**15.5)
    # a spark on a node: d^2 = 0, alpha = 1 exactly
    at_node = dataclasses.replace(enc, positions=np.zeros_like(enc.positions))
    zero = FixedEncoder._distances(at_node, np.zeros((1, cfg.dim), np.int64))
    assert np.all(zero == 0)


def test_a_sparse_model_beyond_the_series_range_is_refused():
    params, cfg, _ = _model("sparse")
    wide = dataclasses.replace(cfg, ignition_sigma=0.3)
    with pytest.raises(AtomsparkError, match=r"ignition_sigma 0.3 > 0.1") as err:
        fixed_encoder(params, wide)
    assert "\n" not in str(err.value)


def test_a_split_stream_runs_from_the_integer_encoder(tmp_path):
    from atomspark.mapping.lava.bundle import from_graph
    from atomspark.mapping.lava.split_bundle import export_split, load_split_bundle
    from atomspark.mapping.lava.split_stream import encoded_states, run_stream
    from atomspark.mapping.quantize import quantize_rsgn_graph
    from atomspark.networks.rsgn_compile import compile_rsgn_tokens

    params, cfg, tokens = _model("published")
    graph = compile_rsgn_tokens(params, cfg, tokens[0])
    fixed = quantize_rsgn_graph(graph, split_w_h=True)
    sb = load_split_bundle(export_split(from_graph(fixed), tmp_path / "b", classifier=params))
    states, _, _ = encoded_states(sb.model, params, cfg, tokens, encoder="fixed")
    enc = fixed_encoder(params, cfg)
    assert all(np.array_equal(s["alpha"], enc.encode(t)["alpha"]) for s, t in zip(states, tokens))
    run = run_stream(sb, params, cfg, tokens, encoder="fixed")
    assert run.accumulator.shape == (6, 3) and run.overflows == 0
    with pytest.raises(AtomsparkError, match="encoder: choose one of host, fixed"):
        run_stream(sb, params, cfg, tokens, encoder="chip")
    float_sb = load_split_bundle(export_split(from_graph(graph), tmp_path / "f", classifier=params))
    with pytest.raises(AtomsparkError, match="only for a fixed-point bundle"):
        run_stream(float_sb, params, cfg, tokens, encoder="fixed")
