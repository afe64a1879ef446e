"""Run a saved or in-memory model on the event engine, sample by sample (one compiled engine per
model: networks/sample_runner.py), and collect what the cost model needs: the graph of the last sample, one Profile covering all samples in time order,
and the model's outputs (VN codes, RSGN class scores)."""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass

import numpy as np
from atomspark.networks import rsgn
from atomspark.networks.model_io import check_file_format, load_arrays, not_a_model
from atomspark.networks.sample_runner import SampleRunner, rsgn_runner, rsgn_scores, vn_runner
from atomspark.networks.vn import VNModel
from atomspark.sim.core import AtomsparkError, as_finite_array, require_int
from atomspark.sim.graph import Graph
from atomspark.sim.memory import require_memory, run_record_bytes
from atomspark.sim.profile import COUNTER_FIELDS, Profile

VN_DEFAULT_STEPS = 1000


@dataclass
class LoadedModel:
    """A model read from disk: kind "vn" (model = VNModel) or "rsgn" (model = (params, config))."""

    kind: str
    model: object


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


def model_kind(path: str | os.PathLike) -> str:
    """The `kind` stored in an atomspark model file ("vn" or "rsgn")."""
    path = check_file_format(path, "model file", "npz")
    try:
        with np.load(path, allow_pickle=False) as data:
            names = data.files
            raw = data["__atomspark_meta__"] if "__atomspark_meta__" in names else None
            meta = None if raw is None else json.loads(raw.tobytes().decode("utf-8"))
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        detail = "holds Python objects" if "pickle" in str(exc) else str(exc)
        raise AtomsparkError(
            f"model file {path}: not a readable atomspark model ({detail})"
        ) from None
    if meta is None:
        raise not_a_model(path, names)
    return str(meta.get("kind"))


def load_model(path: str | os.PathLike) -> LoadedModel:
    """Load a VN or RSGN model file, whichever it holds."""
    kind = model_kind(path)
    if kind == "vn":
        return LoadedModel("vn", VNModel.load(path))
    if kind == "rsgn":
        return LoadedModel("rsgn", rsgn.load_model(path))
    load_arrays(path, "vn")  # raises the standard "holds a ... model" error
    raise AtomsparkError(f"model file {path}: unknown model kind {kind!r}")


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


def runner_for(loaded: LoadedModel) -> SampleRunner:
    """The sample runner of a loaded model (VN: drives; RSGN: token sequences)."""
    if loaded.kind == "vn":
        return vn_runner(loaded.model)
    return rsgn_runner(*loaded.model)


def require_run_memory(loaded: LoadedModel, n_samples: int, steps: int | None, arg: str) -> None:
    """Refuse, before any output is written, an engine run of `n_samples` samples whose records
    would not fit in memory; `arg` names the user's step argument (e.g. "--steps")."""
    if loaded.kind == "vn":
        steps, n_pop = steps or VN_DEFAULT_STEPS, len(loaded.model.layers)
    else:
        steps, n_pop = loaded.model[1].n_steps + 1, 1
    require_memory(
        f"{arg} {steps} x {n_samples} sample(s)",
        run_record_bytes(steps, n_pop, n_samples),
        f"use a smaller {arg} (or fewer samples)",
    )


def run_loaded(loaded: LoadedModel, data, steps: int | None = None) -> EngineRun:
    """Dispatch on the model kind: VN data (B, d), RSGN tokens (B, L, d_in)."""
    if loaded.kind == "vn":
        return run_vn(loaded.model, data, steps or VN_DEFAULT_STEPS)
    params, config = loaded.model
    return run_rsgn(params, config, data)
