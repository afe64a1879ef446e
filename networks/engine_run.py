"""A batch of samples on the event engine, one compiled engine per model
(networks/sample_runner.py): the graph of the last sample, one Profile covering all samples in
time order, and the model's outputs (VN codes, RSGN class scores)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from atomspark.networks import rsgn
from atomspark.networks.sample_runner import rsgn_runner, rsgn_scores, vn_runner
from atomspark.networks.vn import VNModel
from atomspark.sim.core import AtomsparkError, as_finite_array, require_int
from atomspark.sim.graph import Graph
from atomspark.sim.profile import COUNTER_FIELDS, Profile

VN_DEFAULT_STEPS = 1000


@dataclass
class EngineRun:
    """Engine run over a batch: graph of the last sample, profile of all samples back to back,
    outputs (VN: list of (B, K_l) codes; RSGN: (B, n_classes) scores), node positions (RSGN)."""

    kind: str
    graph: Graph
    profile: Profile
    outputs: object
    n_samples: int
    positions: np.ndarray | None = None


def concat_profiles(profiles: list[Profile]) -> Profile:
    """Profiles of samples run one after another on graphs of the same shape, as one profile."""
    if not profiles:
        raise AtomsparkError("profiles: need at least one")
    first = profiles[0]
    counters = {k: np.concatenate([getattr(p, k) for p in profiles]) for k in COUNTER_FIELDS}
    units = [sum(p.unit_events[i] for p in profiles) for i in range(len(first.population_names))]
    return Profile(
        first.population_names,
        first.population_sizes,
        sum(p.steps for p in profiles),
        unit_events=units,
        **counters,
    )


def run_vn(model: VNModel, x, steps: int = VN_DEFAULT_STEPS, mask=None) -> EngineRun:
    """Settle each row of x (B, d) on the engine for `steps` steps (a fixed budget, as on chip)."""
    x = as_finite_array("x", x, ndim=(1, 2))
    x = x[None] if x.ndim == 1 else x
    if x.shape[1] != model.input_dim:
        raise AtomsparkError(f"x: model expects {model.input_dim} features, got {x.shape[1]}")
    steps = require_int("steps", steps, minimum=1)
    runner = vn_runner(model, mask=mask)
    runs = runner.run(x, steps)
    codes = [np.stack([out[l] for out in runs.outputs]) for l in range(len(model.layers))]
    return EngineRun("vn", runner.graph, concat_profiles(runs.profiles), codes, x.shape[0])


def run_rsgn(params, config, tokens) -> EngineRun:
    """Ignite and propagate each sequence of tokens (B, L, d_in) on the engine; read out scores."""
    x = rsgn.dynamics.check_tokens(tokens, config)
    runner = rsgn_runner(params, config)
    runs = runner.run(x, config.n_steps + 1)
    return EngineRun(
        "rsgn",
        runner.graph,
        concat_profiles(runs.profiles),
        rsgn_scores(params, runs.outputs),
        x.shape[0],
        positions=params.positions,
    )
