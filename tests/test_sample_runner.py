"""Compile once, run many: the sample runner equals compiling a graph per sample, bit for bit,
and a sample's result does not depend on which samples ran before it."""

from __future__ import annotations

import numpy as np
import pytest
from atomspark.mapping.quantize import fixed_vn_runner, quantize_vn_graph
from atomspark.networks.rsgn import RSGNConfig, init_params
from atomspark.networks.rsgn_compile import NODE_POPULATION, compile_rsgn_tokens
from atomspark.networks.sample_runner import rsgn_runner, vn_runner
from atomspark.networks.vn import VNModel
from atomspark.networks.vn_compile import compile_vn_model
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine

STEPS = 60


def _same_profile(a, b) -> None:
    assert a.to_dict() == b.to_dict()
    assert all(np.array_equal(u, v) for u, v in zip(a.unit_events, b.unit_events))


@pytest.fixture(scope="module")
def vn():
    model = VNModel.random(16, [(24, 8), (12, 4)], lam=[0.1, 0.05], seed=3)
    x = np.random.default_rng(4).standard_normal((4, 16))
    return model, x


def test_vn_runner_equals_a_graph_per_sample(vn):
    model, x = vn
    runs = vn_runner(model).run(x, STEPS)
    for i, row in enumerate(x):
        eng = Engine(compile_vn_model(model, row))
        prof = eng.run(STEPS)
        _same_profile(runs.profiles[i], prof)
        for code, pop in zip(runs.outputs[i], eng.graph.populations):
            assert code.tobytes() == eng.state[pop.name]["g"].tobytes()


def test_fixed_vn_runner_equals_quantising_each_sample(vn):
    model, x = vn
    runs = fixed_vn_runner(vn_runner(model), frac_bits=12).run(x[:2], STEPS)
    for i, row in enumerate(x[:2]):
        eng = Engine(quantize_vn_graph(compile_vn_model(model, row), frac_bits=12))
        _same_profile(runs.profiles[i], eng.run(STEPS))
        for code, pop in zip(runs.outputs[i], eng.graph.populations):
            assert np.array_equal(code, eng.state[pop.name]["g"] * 2.0**-12)


def test_rsgn_runner_equals_a_graph_per_sequence():
    cfg = RSGNConfig(mode="sparse", n_nodes=40, dim=3, d_hidden=6, d_in=4, n_classes=3,
                     k_nearest=5, cutoff=0.2, temperature=0.3)  # fmt: skip
    params = init_params(cfg, 1)
    tokens = np.random.default_rng(2).standard_normal((3, 5, 4))
    runs = rsgn_runner(params, cfg).run(tokens, cfg.n_steps + 1)
    for i, seq in enumerate(tokens):
        eng = Engine(compile_rsgn_tokens(params, cfg, seq))
        _same_profile(runs.profiles[i], eng.run(cfg.n_steps + 1))
        alpha, h = runs.outputs[i]
        assert alpha.tobytes() == eng.state[NODE_POPULATION]["alpha"].tobytes()
        assert h.tobytes() == eng.state[NODE_POPULATION]["h"].tobytes()


def test_samples_are_independent_of_their_order(vn):
    model, x = vn
    runner = vn_runner(model)
    forward = runner.run(x, STEPS)
    backward = runner.run(x[::-1], STEPS)
    for i in range(len(x)):
        _same_profile(forward.profiles[i], backward.profiles[-1 - i])
        for a, b in zip(forward.outputs[i], backward.outputs[-1 - i]):
            assert a.tobytes() == b.tobytes()


def test_reset_accepts_only_what_a_sample_may_set(vn):
    model, _ = vn
    eng = vn_runner(model).engine
    with pytest.raises(AtomsparkError, match="a sample may set \\['drive', 'g'\\]"):
        eng.reset({"vn_layer0": {"thresh": np.zeros(24)}})
    with pytest.raises(AtomsparkError, match="expected shape \\(24,\\)"):
        eng.reset({"vn_layer0": {"drive": np.zeros(5)}})
    with pytest.raises(AtomsparkError, match="not in the graph"):
        eng.reset({"nope": {"drive": np.zeros(5)}})


def test_reset_copies_the_state_it_is_given(vn):
    model, x = vn
    eng = vn_runner(model).engine
    drive = np.ones(24)
    eng.reset({"vn_layer0": {"drive": drive, "g": drive}})
    eng.run(5)
    assert np.array_equal(drive, np.ones(24))  # the engine ran on its own copy


def test_vn_runner_with_a_mask_and_eta_equals_a_graph_per_sample(vn):
    model, x = vn
    mask = np.arange(16) % 3 != 0
    runs = vn_runner(model, mask=mask, eta=0.05).run(x[:2], STEPS)
    for i, row in enumerate(x[:2]):
        eng = Engine(compile_vn_model(model, row, mask=mask, eta=0.05))
        _same_profile(runs.profiles[i], eng.run(STEPS))
        assert runs.outputs[i][0].tobytes() == eng.state["vn_layer0"]["g"].tobytes()
