"""Run a saved or in-memory model on the event engine, sample by sample (one compiled engine per
model: networks/sample_runner.py), and collect what the cost model needs: the graph of the last
sample, one Profile covering all samples in time order, and the model's outputs (VN codes, RSGN
class scores). How each family runs is its EngineSide (networks/families/); the runs themselves
are networks/engine_run.py, named here too."""

from __future__ import annotations

import os
from dataclasses import dataclass

from atomspark.networks.engine_run import (  # noqa: F401 (named here too)
    VN_DEFAULT_STEPS,
    EngineRun,
    concat_profiles,
    run_rsgn,
    run_vn,
)
from atomspark.networks.families import family_named, registered_families
from atomspark.networks.model_family import EngineSide
from atomspark.networks.model_io import load_arrays, not_a_model, read_meta
from atomspark.networks.sample_runner import SampleRunner
from atomspark.sim.core import AtomsparkError
from atomspark.sim.memory import require_memory, run_record_bytes


@dataclass
class LoadedModel:
    """A model read from disk: its family's name (kind) and the model its family's load returned
    (VN: a VNModel; RSGN: (params, config))."""

    kind: str
    model: object


def model_kind(path: str | os.PathLike) -> str:
    """The `kind` stored in an atomspark model file (its family's name: "vn", "rsgn", ...)."""
    meta, names = read_meta(path)
    if meta is None:
        raise not_a_model(path, names)
    return str(meta.get("kind"))


def load_model(path: str | os.PathLike) -> LoadedModel:
    """Load a model file of any registered family that reads its files back."""
    kind = model_kind(path)
    family = next((f for f in registered_families() if f.name == kind and f.load), None)
    if family is None:
        load_arrays(path, "vn")  # raises the standard "holds a ... model" error
        raise AtomsparkError(f"model file {path}: unknown model kind {kind!r}")
    return LoadedModel(kind, family.load(path))


def engine_side(loaded: LoadedModel) -> EngineSide:
    """How the loaded model's family runs on the event engine."""
    return family_named(loaded.kind).need("engine", "event-engine side")


def runner_for(loaded: LoadedModel) -> SampleRunner:
    """The sample runner of a loaded model (VN: drives; RSGN: token sequences)."""
    return engine_side(loaded).runner(loaded.model)


def require_run_memory(loaded: LoadedModel, n_samples: int, steps: int | None, arg: str) -> None:
    """Refuse, before any output is written, an engine run of `n_samples` samples whose records
    would not fit in memory; `arg` names the user's step argument (e.g. "--steps")."""
    steps, n_pop = engine_side(loaded).record(loaded.model, steps)
    require_memory(
        f"{arg} {steps} x {n_samples} sample(s)",
        run_record_bytes(steps, n_pop, n_samples),
        f"use a smaller {arg} (or fewer samples)",
    )


def run_loaded(loaded: LoadedModel, data, steps: int | None = None) -> EngineRun:
    """The model's family runs it: VN data (B, d), RSGN tokens (B, L, d_in)."""
    return engine_side(loaded).run(loaded.model, data, steps)
