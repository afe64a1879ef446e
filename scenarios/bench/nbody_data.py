"""N-body benchmark data: seeded trajectories with named ID and OOD splits, and the metric.

ID: one force field at a time (gravity, drag, magnetic or spring, chosen uniformly), 3 or 4
bodies. OOD, each its own split:
  * "combined":        two to four forces at once, 3 or 4 bodies;
  * "fewer":           one force, 2 bodies;
  * "more":            one force, 5 or 6 bodies;
  * "combined_count":  two to four forces with 2, 5 or 6 bodies.
Every OOD split differs from ID in the number of active forces or in the body count, so no OOD
system can occur in ID (tests/test_bench_nbody.py checks it). Strengths are drawn from the same
ranges in every split, so the shift is the composition, not the magnitudes.

Systems are padded to MAX_BODIES with a presence mask. Each trajectory holds T + 1 = 21 frames,
dt apart: the one-step task predicts frame t + 1 from frame t; the rollout task predicts frames
1..20 from frame 0 by feeding a model its own predictions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from atomspark.scenarios.bench.nbody_physics import FORCES, random_systems, simulate
from atomspark.sim.core import AtomsparkError, require_int

MAX_BODIES = 6
ROLLOUT_STEPS = 20
DT = 0.1
STRENGTH_RANGES = {
    "gravity": (0.5, 1.5),
    "drag": (0.5, 1.5),
    "magnetic": (1.0, 3.0),
    "spring": (1.0, 3.0),
}
# split name -> (allowed numbers of active forces, allowed body counts)
SPLITS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "id": ((1,), (3, 4)),
    "combined": ((2, 3, 4), (3, 4)),
    "fewer": ((1,), (2,)),
    "more": ((1,), (5, 6)),
    "combined_count": ((2, 3, 4), (2, 5, 6)),
}


@dataclass(frozen=True)
class NBodySet:
    """n systems padded to MAX_BODIES: trajectories (n, T+1, MAX_BODIES, 4) of [x, y, vx, vy],
    masses and charges (n, MAX_BODIES) (padding: mass 1, charge 0), strengths (n, 4), present
    (n, MAX_BODIES) bool."""

    traj: np.ndarray
    mass: np.ndarray
    charge: np.ndarray
    strengths: np.ndarray
    present: np.ndarray

    @property
    def n(self) -> int:
        return self.traj.shape[0]

    @property
    def n_bodies(self) -> np.ndarray:
        return self.present.sum(axis=1)

    @property
    def n_forces(self) -> np.ndarray:
        return (self.strengths > 0).sum(axis=1)

    def pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """All one-step transitions: (states_t, states_t+1) (n*T, MAX_BODIES, 4) and the system
        index (n*T,) of each."""
        T = self.traj.shape[1] - 1
        now = self.traj[:, :-1].reshape(-1, MAX_BODIES, 4)
        nxt = self.traj[:, 1:].reshape(-1, MAX_BODIES, 4)
        return now, nxt, np.repeat(np.arange(self.n), T)

    def head(self, n: int) -> NBodySet:
        return NBodySet(
            *(a[:n] for a in (self.traj, self.mass, self.charge, self.strengths, self.present))
        )


def draw_strengths(rng: np.random.Generator, n: int, n_forces: tuple[int, ...]) -> np.ndarray:
    """(n, 4) strengths: a uniform choice of how many forces, then which, then their values."""
    out = np.zeros((n, len(FORCES)))
    counts = rng.choice(n_forces, size=n)
    for i, c in enumerate(counts):
        for f in rng.choice(len(FORCES), size=c, replace=False):
            lo, hi = STRENGTH_RANGES[FORCES[f]]
            out[i, f] = rng.uniform(lo, hi)
    return out


def make_split(name: str, n: int, seed: int, stream: int = 0, substeps: int = 20) -> NBodySet:
    """n systems of split `name`, simulated for ROLLOUT_STEPS steps of DT, deterministic in
    (seed, stream) (the training set and the test splits use different streams)."""
    if name not in SPLITS:
        raise AtomsparkError(f"split {name!r}: unknown (valid: {', '.join(SPLITS)})")
    n = require_int("n", n, minimum=1)
    n_forces, counts = SPLITS[name]
    rng = np.random.default_rng(
        [
            require_int("seed", seed, minimum=0),
            require_int("stream", stream, minimum=0),
            list(SPLITS).index(name),
        ]
    )
    strengths = draw_strengths(rng, n, n_forces)
    bodies = rng.choice(counts, size=n)
    traj = np.zeros((n, ROLLOUT_STEPS + 1, MAX_BODIES, 4))
    mass = np.ones((n, MAX_BODIES))
    charge = np.zeros((n, MAX_BODIES))
    present = np.zeros((n, MAX_BODIES), dtype=bool)
    for c in np.unique(bodies):
        idx = np.flatnonzero(bodies == c)
        systems = random_systems(rng, idx.size, int(c), strengths[idx])
        traj[idx, :, :c] = simulate(systems, ROLLOUT_STEPS, DT, substeps)
        mass[idx, :c], charge[idx, :c], present[idx, :c] = systems.mass, systems.charge, True
    return NBodySet(traj, mass, charge, strengths, present)
