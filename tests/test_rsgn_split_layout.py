"""The split RSGN (mapping/lava/rsgn_split.py): its NumPy reference of the chip schedule (message
sums, W_h transform, norm and pool programs, every connection with Lava's one-step delay and
32-bit sums) equals the engine's integer unit bit for bit and its float unit to tolerance, on
small graphs in both modes (suppressed nodes included) and on the released models."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from atomspark.mapping.lava.bundle import from_graph
from atomspark.mapping.lava.rsgn_split import (
    PERIOD,
    chip_steps,
    phase_of,
    reference_run,
    split_model,
)
from atomspark.mapping.quantize import quantize_rsgn_graph
from atomspark.networks import rsgn
from atomspark.networks.datasets import hierarchical_sequences
from atomspark.networks.rsgn_compile import NODE_POPULATION, compile_rsgn_tokens
from atomspark.sim.engine import Engine

MODES = {"published": {}, "sparse": {"k_nearest": 6, "cutoff": 0.2, "temperature": 0.3}}
UNITS = {
    "float": None,
    "8-bit W_h": {},
    "two-part W_h": {"split_w_h": True},
    "two-part W_h, per-target W": {"split_w_h": True, "per_target_w": True},
}
RELEASED = Path(__file__).resolve().parents[1] / "docs/results/rsgn/models"
FLOAT_TOL = 1e-9


def small_graph(mode: str, seed: int = 1, n: int = 20, d: int = 8):
    cfg = rsgn.RSGNConfig(mode=mode, n_nodes=n, d_hidden=d, n_classes=3, n_steps=4, **MODES[mode])
    params = rsgn.init_params(cfg, seed=seed)
    params.thresholds = np.random.default_rng(seed).uniform(0.0, 1.5, n)
    params.thresholds[::4] = 50.0  # suppressed: the activation's exp tail, silent nodes
    tokens = hierarchical_sequences(n=1, length=12, dim=cfg.d_in, n_classes=3, seed=seed)
    return cfg, compile_rsgn_tokens(params, cfg, tokens.tokens[0])


def engine_states(graph, steps: int):
    eng = Engine(graph)
    prof = eng.run(steps, record=((NODE_POPULATION, "alpha"), (NODE_POPULATION, "h")))
    return eng.traces[(NODE_POPULATION, "alpha")], eng.traces[(NODE_POPULATION, "h")], prof


def assert_split_equals_engine(graph, steps: int, fixed: bool):
    alpha, h, prof = engine_states(graph, steps)
    run = reference_run(split_model(from_graph(graph)), steps)
    assert run.alpha.shape == alpha.shape and run.h.shape == h.shape
    if fixed:
        assert np.array_equal(run.alpha, alpha) and np.array_equal(run.h, h)
        assert run.wraps == int(prof.wraps.sum()) and run.clips == int(prof.clips.sum())
    else:
        np.testing.assert_allclose(run.alpha, alpha, rtol=0, atol=FLOAT_TOL)
        np.testing.assert_allclose(run.h, h, rtol=0, atol=FLOAT_TOL)
    assert np.any(alpha[-1] > 0) and np.any(h[-1] != h[1])  # it moves
    return run


def released_graph(model: str, samples: int = 1):
    """A released model's engine graph on its first validation sample; the sparse sigmoid
    models were trained without propagation (K = 0), so they run K = 5 steps here."""
    from atomspark.scenarios.runs.engine import LoadedModel, load_model
    from atomspark.scenarios.runs.export import graph_for_first_input
    from atomspark.scenarios.runs.profile import read_inputs

    loaded = load_model(RELEASED / model)
    params, config = loaded.model
    if config.n_steps == 0:
        config = dataclasses.replace(config, n_steps=5)
        loaded = LoadedModel(loaded.kind, (params, config))
    inputs = read_inputs(f"builtin:{samples}", loaded, model_path=RELEASED / model,
                         log=lambda s: None)  # fmt: skip
    return graph_for_first_input(loaded, inputs), config.n_steps + 1


def test_schedule_has_one_phase_per_program_step():
    assert PERIOD == 5 and [phase_of(t) for t in range(1, 7)] == [
        "emit", "sum", "transform", "norm", "pool", "emit"]  # fmt: skip
    assert chip_steps(1) == 1 and chip_steps(6) == 26


@pytest.mark.parametrize("unit", list(UNITS))
@pytest.mark.parametrize("mode", list(MODES))
def test_split_schedule_equals_the_engine(mode, unit):
    cfg, graph = small_graph(mode)
    opts = UNITS[unit]
    g = graph if opts is None else quantize_rsgn_graph(graph, **opts)
    assert_split_equals_engine(g, cfg.n_steps + 1, opts is not None)


@pytest.mark.parametrize(
    "model",
    [
        "released/hierarchical-rsgn-seed42.npz",
        "sparse-threshold/target0.02-sigma0.05-k0-e50-seed43.npz",
    ],
)
def test_split_schedule_equals_the_engine_on_released_models(model):
    graph, steps = released_graph(model)
    for opts in (None, {"split_w_h": True, "per_target_w": True}):
        g = graph if opts is None else quantize_rsgn_graph(graph, **opts)
        run = assert_split_equals_engine(g, steps, opts is not None)
        assert run.wraps == 0 and run.clips == 0
