"""Every N-body model behind one interface, and the two evaluations (one step, rollout).

A predictor has fit(states, next_states, mass, charge, strengths, present) on ID transitions
and delta(states, mass, charge, strengths, present) -> each body's change over dt
(n, MAX_BODIES, 4). The rollout feeds a predictor its own output ROLLOUT_STEPS times.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from atomspark.scenarios.bench.nbody_data import ROLLOUT_STEPS, NBodySet, normalised_mse
from atomspark.scenarios.bench.nbody_vn import body_features, gated_vectors


class Persistence:
    """Trivial floor: nothing moves (delta = 0)."""

    def fit(self, *args) -> None:
        pass

    def delta(self, states, mass, charge, strengths, present) -> np.ndarray:
        return np.zeros_like(states)


class RidgeOnVNFeatures:
    """Ridge regression from VN's gated feature vectors to the change (closed form): shows what
    VN's front end alone buys."""

    def __init__(self, alpha: float = 1e-3):
        self.alpha = alpha

    def _x(self, states, mass, charge, strengths, present):
        return gated_vectors(body_features(states, mass, charge, present) / self.scale, strengths)

    def fit(self, states, next_states, mass, charge, strengths, present) -> None:
        phi = body_features(states, mass, charge, present)
        rms = np.sqrt(np.mean(phi[present] ** 2, axis=0))
        self.scale = np.where(rms > 0, rms, 1.0)
        x = gated_vectors(phi / self.scale, strengths)[present]
        y = (next_states - states)[present]
        gram = x.T @ x + self.alpha * x.shape[0] * np.eye(x.shape[1])
        self.w = np.linalg.solve(gram, x.T @ y)

    def delta(self, states, mass, charge, strengths, present) -> np.ndarray:
        out = np.zeros_like(states)
        out[present] = self._x(states, mass, charge, strengths, present)[present] @ self.w
        return out


@dataclass(frozen=True)
class Scores:
    one_step: float
    rollout: float
    seconds_per_sample: float  # one-step inference wall time per system


def evaluate(model, data: NBodySet) -> Scores:
    """One-step normalised MSE over every transition of the split, and the 20-step rollout's
    normalised MSE over frames 1..20 (from frame 0)."""
    now, nxt, sys = data.pairs()
    args = (data.mass[sys], data.charge[sys], data.strengths[sys], data.present[sys])
    t0 = time.perf_counter()
    pred = now + model.delta(now, *args)
    per_sample = (time.perf_counter() - t0) / now.shape[0]
    one = normalised_mse(pred, nxt, data.present[sys])
    state = data.traj[:, 0]
    frames = []
    for _ in range(ROLLOUT_STEPS):
        state = state + model.delta(state, data.mass, data.charge, data.strengths, data.present)
        state = np.where(np.isfinite(state), np.clip(state, -1e6, 1e6), 1e6)
        frames.append(state)
    roll = normalised_mse(np.stack(frames, axis=1), data.traj[:, 1:], data.present[:, None])
    return Scores(one, roll, per_sample)
