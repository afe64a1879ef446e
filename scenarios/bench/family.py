"""What a benchmark family provides: data with named ID/OOD splits, sizes, and the models to run.

Every family solves the same two tasks on signals flattened to vectors of length d:
  * "recon":  the input is the noisy signal, every entry visible; predict the clean signal.
  * "masked": the input is the noisy signal with a family-defined part hidden (observed = 0
    there); predict the clean values of the hidden part.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace

import numpy as np
from atomspark.sim.core import AtomsparkError

TASKS = ("recon", "masked")
ID_SPLIT = "id"


@dataclass(frozen=True)
class Split:
    """One evaluation split of n samples (all arrays (n, d), float64 or bool).

    clean: the targets; noisy: clean + noise, the input of both tasks; hidden: True where the
    masked task hides the entry; meta: per-sample facts a family's plots use (e.g. bump centres).
    """

    clean: np.ndarray
    noisy: np.ndarray
    hidden: np.ndarray
    meta: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not (self.clean.shape == self.noisy.shape == self.hidden.shape):
            raise AtomsparkError(
                f"split arrays disagree: clean {self.clean.shape}, noisy {self.noisy.shape}, "
                f"hidden {self.hidden.shape}"
            )

    @property
    def n(self) -> int:
        return self.clean.shape[0]

    def task_input(self, task: str) -> tuple[np.ndarray, np.ndarray]:
        """(x, observed) of a task: observed is 1.0 on visible entries; hidden inputs are 0."""
        if task == "recon":
            return self.noisy, np.ones_like(self.noisy)
        if task == "masked":
            observed = (~self.hidden).astype(self.noisy.dtype)
            return self.noisy * observed, observed
        raise AtomsparkError(f"task {task!r}: unknown (valid: {', '.join(TASKS)})")

    def task_target(self, task: str) -> np.ndarray:
        """Entries scored by a task: everything (recon) or the hidden part (masked), (n, d) bool."""
        return np.ones_like(self.hidden) if task == "recon" else self.hidden

    def head(self, n: int) -> Split:
        """The first n samples."""
        return Split(
            self.clean[:n],
            self.noisy[:n],
            self.hidden[:n],
            {k: v[:n] for k, v in self.meta.items()},
        )


@dataclass(frozen=True)
class BenchData:
    """A family's data for one seed: clean ID training signals (N, d), the evaluation splits
    ("id" first, then each OOD split), extra probe sets scored per sample but not tabulated (e.g.
    a grid of bump positions for a heat map), the signal shape for plots, the noise level, and the
    ID validation split held out of the training signals (validation.hold_out_validation)."""

    train: np.ndarray
    splits: dict[str, Split]
    shape: tuple[int, ...]
    noise: float
    probes: dict[str, Split] = field(default_factory=dict)
    val: Split | None = None

    @property
    def dim(self) -> int:
        return self.train.shape[1]


@dataclass(frozen=True)
class Family:
    """A benchmark family (one module under scenarios/bench/ defines FAMILY = Family(...)).

    sizes(quick) -> a frozen dataclass of sizes (its fields can be overridden by name);
    make_data(sizes, seed) -> BenchData (deterministic in seed);
    models(sizes, data) -> ordered {model name: factory(device) -> BenchModel}, VN first;
    random_hidden(rng, n, sizes) -> (n, d) bool masks like the masked task's, for training
    baselines as masked denoisers; bytes_needed(sizes) -> peak memory estimate of one cell;
    plots(results, cells, out) -> paths of family-specific figures (optional);
    extra_metrics(model, data) -> {metric title: {split: value}} beyond the two tasks (optional;
    e.g. nbody's rollout error, mnist-comp's component recovery), tabulated after the tasks.
    """

    name: str
    description: str
    splits: tuple[str, ...]
    sizes: Callable[[bool], object]
    make_data: Callable[[object, int], BenchData]
    models: Callable[[object, BenchData], dict[str, Callable[[], object]]]
    random_hidden: Callable[[np.random.Generator, int, object], np.ndarray]
    bytes_needed: Callable[[object], float]
    plots: Callable[[dict, list[dict], object], list] | None = None
    extra_metrics: Callable[[object, BenchData], dict[str, dict[str, float]]] | None = None


def override_sizes(sizes, overrides: dict[str, str] | None):
    """sizes with fields replaced from {"name": "value"} (values parsed as the field's type)."""
    if not overrides:
        return sizes
    types = {f.name: type(getattr(sizes, f.name)) for f in fields(sizes)}
    changed = {}
    for key, value in overrides.items():
        if key not in types:
            raise AtomsparkError(f"size {key!r}: unknown (valid: {', '.join(sorted(types))})")
        try:
            changed[key] = types[key](value)
        except (TypeError, ValueError):
            raise AtomsparkError(
                f"size {key}={value!r}: expected a {types[key].__name__}"
            ) from None
        if isinstance(changed[key], (int, float)) and changed[key] <= 0:
            raise AtomsparkError(f"size {key}={value!r}: must be > 0")
    return replace(sizes, **changed)


def check_split_names(family: Family, names: Sequence[str]) -> None:
    """Refuse split names the family does not define, listing the valid ones."""
    bad = [n for n in names if n not in family.splits]
    if bad:
        raise AtomsparkError(
            f"split {bad[0]!r}: unknown for {family.name} (valid: {', '.join(family.splits)})"
        )
