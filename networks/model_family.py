"""The model-family interface: what training, profile, export, compare and the CLI need to know
of a kind of model (VN, RSGN, a baseline, ...), the way sim/unit_model.py declares unit models.

A family is declared once, as a `ModelFamily`, and registered by its name (the `kind` a model
file stores, the `model.kind` of a training config). Code above this module asks the registry
(`family_named`, `family_of_config`) instead of comparing names, so a new family is one
declaration (networks/families/ holds the built-ins) and an unknown name is one clear error.

What a family declares, by job:
- loading: `load(path)`: its model file back into a model object (None: not readable back);
- the engine: `engine` (an EngineSide): the sample runner, a batch run, the input layout;
- training: `torch_trainer()` returns its Trainer (the torch path's side, imported when asked,
  so that families load without PyTorch): build, step, evaluate, export, divergence advice;
- metrics: `metric` (what training's "accuracy" measures), `compare_metric` and `decision`
  (what compare scores and what agreement with torch means);
- layers above networks/ (mapping, scenarios) keep their own per-family tables, registered
  explicitly beside the functions they hold (e.g. scenarios/family_sides.py), not hooked onto
  this declaration.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from atomspark.sim.core import AtomsparkError


@dataclass(frozen=True)
class EngineSide:
    """How a family's models run on the event engine, sample by sample.

    runner(model) -> SampleRunner; run(model, data, steps) -> networks.engine_run.EngineRun;
    record(model, steps) -> (steps per sample, populations) of a run (steps None: its default);
    input_shape(model): the input array's shape, None for free axes; layout / dim_name: how
    messages name it ("(samples, d)", "d"); builtin_inputs(model, n, seed, label): n samples of
    the built-in data set that fits the model (memory checked, naming `label`); graph_for(model,
    sample): the graph compiled for one sample; positions(model): unit positions for placement
    (None: none); own_steps: a refusal of a step budget (the model runs its own steps), or None."""

    runner: Callable
    run: Callable
    record: Callable[[object, int | None], tuple[int, int]]
    input_shape: Callable[[object], tuple]
    layout: str
    dim_name: str
    builtin_inputs: Callable[[object, int, int, str], np.ndarray]
    graph_for: Callable
    positions: Callable[[object], np.ndarray | None] = lambda model: None
    own_steps: str | None = None


@dataclass(frozen=True)
class Trainer:
    """A family on the torch path (networks/torch_path/): what `train` calls.

    build(cfg, input_dim, extra, device, dtype) -> module (initialised from the NumPy
    reference's initialiser); expects_dim(module): the input dimension it was built for (None:
    built from the data's own shape); prepare(run): optimiser and slow-scale state (None: the
    step needs none); step(run, xb, yb) -> metrics of one step (one host sync); end_epoch(run):
    the epoch-boundary rules (structural plasticity); evaluate(module, cfg, x, y, extra, device,
    dtype) -> validation metrics; export(module, path, cfg): the final model file; advice(cfg):
    which knob to turn when the loss diverges; before_load(module, state_dict): fit the module
    to a checkpoint's tensors before they are loaded (a pruned graph's edges); forward(model, x,
    device, dtype) -> (workload, outputs as NumPy, active fraction) of the dense torch run
    compare times."""

    build: Callable
    expects_dim: Callable
    step: Callable
    evaluate: Callable
    export: Callable
    advice: Callable[[dict], str]
    prepare: Callable | None = None
    before_load: Callable = lambda module, state_dict: None
    end_epoch: Callable = lambda run: None
    forward: Callable | None = None


@dataclass(frozen=True, eq=False)
class ModelFamily:
    """Declaration of one model family.

    name: the `kind` its model files store and its training configs name ("vn", "rsgn",
    "transformer", ...); title: how reports name it ("VN"); task: the training task it learns
    ("rsgn-sequence", "vn-dictionary"); metric: what training's "accuracy" measures; loss_title:
    what its training loss is; load(path):
    its model file read back (None: its files are not read back); engine: its EngineSide (None:
    it does not run on the event engine); trainer(): its Trainer (None: not trained here);
    compare_metric: (report key, column title) of compare's task score; decision: what
    agreement with torch compares; describe(cfg): how `train` announces a run of it."""

    name: str
    title: str
    task: str
    metric: str
    loss_title: str = "loss"
    load: Callable | None = None
    engine: EngineSide | None = None
    trainer: Callable[[], Trainer] | None = None
    compare_metric: tuple[str, str] = ("accuracy", "accuracy")
    decision: str = "class"
    describe: Callable[[dict], str] = lambda cfg: cfg["task"]

    def need(self, part: str, what: str):
        """The declared `part` (e.g. "engine"), or an error saying this family has no `what`."""
        value = getattr(self, part)
        if value is None:
            raise AtomsparkError(f"model family {self.name!r} has no {what}")
        return value

    def torch_trainer(self) -> Trainer:
        """Its Trainer, imported now; a family without one is an AtomsparkError."""
        return self.need("trainer", "trainer on the torch path")()


_REGISTRY: dict[str, ModelFamily] = {}


def register_family(family: ModelFamily) -> ModelFamily:
    """Make `family` known to training, profile, export, compare and the CLI (one per name)."""
    if not isinstance(family, ModelFamily):
        raise AtomsparkError(
            f"register_family: expected a ModelFamily, got {type(family).__name__}"
        )
    known = _REGISTRY.get(family.name)
    if known is not None and known is not family:
        raise AtomsparkError(f"register_family: a model family named {family.name!r} exists")
    _REGISTRY[family.name] = family
    return family


def registered_families() -> list[ModelFamily]:
    """Every registered family, in registration order."""
    return list(_REGISTRY.values())


def family_named(name: str, what: str = "model family") -> ModelFamily:
    """The family called `name` (a model file's kind); an unknown name is an AtomsparkError."""
    family = _REGISTRY.get(name)
    if family is None:
        known = ", ".join(sorted(_REGISTRY))
        raise AtomsparkError(f"{what} {name!r}: not a registered model family (known: {known})")
    return family


def families_of_task(task: str) -> list[ModelFamily]:
    """The families that learn `task`, in registration order."""
    return [f for f in _REGISTRY.values() if f.task == task]


def task_metric(task: str) -> str:
    """What the "accuracy" metric of `task` measures (its families share it)."""
    found = families_of_task(task)
    return found[0].metric if found else "accuracy"


def task_loss_title(task: str) -> str:
    """What the training loss of `task` is (its families share it)."""
    found = families_of_task(task)
    return found[0].loss_title if found else "loss"


def family_of_config(cfg: dict) -> ModelFamily:
    """The family a training config trains: its task's only family, or among the task's
    families the one its model.kind names."""
    found = families_of_task(cfg["task"])
    if len(found) == 1:
        return found[0]
    kind = cfg.get("model", {}).get("kind")
    for family in found:
        if family.name == kind:
            return family
    known = ", ".join(f.name for f in found)
    raise AtomsparkError(
        f"config key 'model.kind' {kind!r}: not a model family of task {cfg['task']!r} "
        f"(known: {known})"
    )
