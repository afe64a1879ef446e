"""Per-step, per-population activity counters of an engine run (the input of the energy models)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import numpy as np
from atomspark.sim.core import AtomsparkError, atomic_write_text

COUNTER_FIELDS = ("events", "synops", "updates", "active", "payload_bits", "wraps", "clips")


@dataclass
class Profile:
    """Counters of one run: each counter array has shape (steps, populations).

    events: events emitted by population p at step t; synops: synaptic operations delivered from
    events of p (attributed to the source); updates: unit updates performed in p; active: units of
    p with nonzero state/output after the step; payload_bits: graded-payload bits sent; wraps /
    clips: fixed-point overflows that wrapped / saturated. unit_events: total events per unit.
    """

    population_names: list[str]
    population_sizes: np.ndarray
    steps: int
    events: np.ndarray
    synops: np.ndarray
    updates: np.ndarray
    active: np.ndarray
    payload_bits: np.ndarray
    wraps: np.ndarray
    clips: np.ndarray
    unit_events: list[np.ndarray] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.population_sizes = np.asarray(self.population_sizes, dtype=np.int64)
        n_pop = len(self.population_names)
        if self.population_sizes.shape != (n_pop,):
            raise AtomsparkError(
                f"population_sizes: expected shape ({n_pop},), got {self.population_sizes.shape}"
            )
        for name in COUNTER_FIELDS:
            arr = np.asarray(getattr(self, name), dtype=np.int64)
            if arr.shape != (self.steps, n_pop):
                raise AtomsparkError(
                    f"{name}: expected shape ({self.steps}, {n_pop}), got {arr.shape}"
                )
            setattr(self, name, arr)
        self.unit_events = [np.asarray(u, dtype=np.int64) for u in self.unit_events]
        if len(self.unit_events) != n_pop or any(
            u.shape != (int(s),) for u, s in zip(self.unit_events, self.population_sizes)
        ):
            raise AtomsparkError("unit_events: need one array per population, sized like it")

    @classmethod
    def empty(cls, names: list[str], sizes: np.ndarray, steps: int) -> Profile:
        """All-zero profile for `steps` steps."""
        zeros = {k: np.zeros((steps, len(names)), np.int64) for k in COUNTER_FIELDS}
        units = [np.zeros(int(s), np.int64) for s in sizes]
        return cls(list(names), np.asarray(sizes, np.int64), steps, unit_events=units, **zeros)

    def to_dict(self) -> dict:
        """JSON-ready dict (lists of ints)."""
        out = {
            "population_names": list(self.population_names),
            "population_sizes": self.population_sizes.tolist(),
            "steps": int(self.steps),
            "unit_events": [u.tolist() for u in self.unit_events],
        }
        out.update({k: getattr(self, k).tolist() for k in COUNTER_FIELDS})
        return out

    @classmethod
    def from_dict(cls, data: dict) -> Profile:
        """Inverse of to_dict; a missing key is an error that names it."""
        missing = [
            k
            for k in ("population_names", "population_sizes", "steps", "unit_events")
            + COUNTER_FIELDS
            if k not in data
        ]
        if missing:
            raise AtomsparkError(f"profile dict: missing key(s) {missing}")
        n_pop = len(data["population_names"])
        steps = int(data["steps"])
        counters = {
            k: np.asarray(data[k], dtype=np.int64).reshape(steps, n_pop) for k in COUNTER_FIELDS
        }
        return cls(
            list(data["population_names"]),
            np.asarray(data["population_sizes"], np.int64),
            steps,
            unit_events=[np.asarray(u, np.int64) for u in data["unit_events"]],
            **counters,
        )

    def to_json(self, path: str | os.PathLike) -> None:
        """Write the profile as JSON, atomically."""
        atomic_write_text(path, json.dumps(self.to_dict()))

    @classmethod
    def from_json(cls, path: str | os.PathLike) -> Profile:
        """Read a profile written by to_json."""
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, json.JSONDecodeError) as exc:
            raise AtomsparkError(f"profile file {path}: unreadable ({exc})") from exc
        return cls.from_dict(data)

    def summary(self) -> dict:
        """Totals per counter and per population, and mean active fraction per population."""
        sizes = np.maximum(self.population_sizes, 1)
        frac = self.active.mean(axis=0) / sizes if self.steps else np.zeros(len(sizes))
        out: dict = {"steps": int(self.steps)}
        for k in COUNTER_FIELDS:
            per_pop = getattr(self, k).sum(axis=0)
            out[f"total_{k}"] = int(per_pop.sum())
            out[f"{k}_per_population"] = dict(zip(self.population_names, per_pop.tolist()))
        out["mean_active_fraction"] = dict(zip(self.population_names, frac.tolist()))
        return out
