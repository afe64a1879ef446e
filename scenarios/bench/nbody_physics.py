"""2D N-body physics with mixed force fields, and a splitting integrator tested for energy.

Bodies carry a mass m and a charge q. Four force fields, each with one strength per system:
  * gravity (G):  F_i = G sum_j m_i m_j d_ij / (|d_ij|^2 + eps^2)^(3/2),  d_ij = r_j - r_i
                  (softened; potential -G m_i m_j / sqrt(|d|^2 + eps^2));
  * drag (gamma): F_i = -gamma v_i (linear, dissipative);
  * magnetic (B): F_i = q_i v_i x B z-hat = q_i B (v_y, -v_x), a uniform field normal to the
                  plane (Lorentz force; does no work);
  * spring (k):   F_i = k sum_j (rho_ij - L0) d_ij / rho_ij between every pair, with the
                  softened length rho = sqrt(|d|^2 + eps^2) (potential k/2 (rho - L0)^2; the
                  softening keeps the force smooth where two bodies pass through each other).

Integrator: each output step dt is `substeps` steps of a symmetric (Strang) splitting, every
part solved exactly: half drag decay, half kick by the position forces, half drift, the exact
magnetic rotation of v, half drift, half kick, half drag. It is second order; with drag off it
conserves energy to O(h^2) without drift (the kick/drift part is leapfrog and the rotation keeps
|v| exactly), tested in tests/test_bench_nbody.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from atomspark.sim.core import AtomsparkError, require_int, require_positive

FORCES = ("gravity", "drag", "magnetic", "spring")
SOFTENING = 0.3  # softening length eps of gravity and springs
REST_LENGTH = 0.5  # spring rest length L0


@dataclass(frozen=True)
class Systems:
    """A batch of B systems of n bodies: positions and velocities (B, n, 2), masses and charges
    (B, n), force strengths (B, 4) in the order of FORCES (0 = force absent)."""

    pos: np.ndarray
    vel: np.ndarray
    mass: np.ndarray
    charge: np.ndarray
    strengths: np.ndarray

    def __post_init__(self) -> None:
        B, n = self.mass.shape
        if self.pos.shape != (B, n, 2) or self.vel.shape != (B, n, 2):
            raise AtomsparkError(f"pos, vel: expected ({B}, {n}, 2), got {self.pos.shape}")
        if self.charge.shape != (B, n) or self.strengths.shape != (B, len(FORCES)):
            raise AtomsparkError("charge, strengths: shapes disagree with mass")
        if np.any(self.mass <= 0):
            raise AtomsparkError("mass: every body needs a mass > 0")


def position_forces(pos: np.ndarray, mass: np.ndarray, strengths: np.ndarray) -> np.ndarray:
    """Gravity + spring forces (B, n, 2) at positions pos (B, n, 2)."""
    d = pos[:, None, :, :] - pos[:, :, None, :]  # d[b, i, j] = r_j - r_i
    r2 = np.sum(d * d, axis=-1)
    G = strengths[:, 0, None, None]
    k = strengths[:, 3, None, None]
    grav = G * mass[:, :, None] * mass[:, None, :] / (r2 + SOFTENING**2) ** 1.5
    rho = np.sqrt(r2 + SOFTENING**2)
    spring = k * (rho - REST_LENGTH) / rho
    return np.sum((grav + spring)[..., None] * d, axis=2)  # i == j terms vanish (d = 0)


def energy(s: Systems) -> np.ndarray:
    """Total mechanical energy per system (B,): kinetic + gravity + spring potentials."""
    kinetic = 0.5 * np.sum(s.mass * np.sum(s.vel**2, axis=-1), axis=1)
    d = s.pos[:, None, :, :] - s.pos[:, :, None, :]
    rho = np.sqrt(np.sum(d * d, axis=-1) + SOFTENING**2)
    n = s.mass.shape[1]
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    G, k = s.strengths[:, 0, None, None], s.strengths[:, 3, None, None]
    mm = s.mass[:, :, None] * s.mass[:, None, :]
    pot = -G * mm / rho + 0.5 * k * (rho - REST_LENGTH) ** 2
    return kinetic + np.sum(np.where(upper, pot, 0.0), axis=(1, 2))


def _rotate(vel: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotate each body's velocity clockwise by `angle` (B, n): the exact magnetic flow."""
    c, s = np.cos(angle), np.sin(angle)
    vx, vy = vel[..., 0], vel[..., 1]
    return np.stack([c * vx + s * vy, -s * vx + c * vy], axis=-1)


def step(s: Systems, h: float) -> Systems:
    """One Strang-splitting step of length h (see module docstring)."""
    m = s.mass[..., None]
    decay = np.exp(-0.5 * h * s.strengths[:, 1, None, None] / m)
    omega = s.charge * s.strengths[:, 2, None] / s.mass  # cyclotron frequency q B / m
    vel = s.vel * decay
    vel = vel + 0.5 * h * position_forces(s.pos, s.mass, s.strengths) / m
    pos = s.pos + 0.5 * h * vel
    vel = _rotate(vel, omega * h)
    pos = pos + 0.5 * h * vel
    vel = vel + 0.5 * h * position_forces(pos, s.mass, s.strengths) / m
    vel = vel * decay
    return Systems(pos, vel, s.mass, s.charge, s.strengths)


def simulate(s: Systems, n_steps: int, dt: float, substeps: int = 20) -> np.ndarray:
    """Trajectories (B, n_steps + 1, n, 4) of [x, y, vx, vy], sampled every dt."""
    n_steps = require_int("n_steps", n_steps, minimum=1)
    substeps = require_int("substeps", substeps, minimum=1)
    h = require_positive("dt", dt) / substeps
    frames = [np.concatenate([s.pos, s.vel], axis=-1)]
    for _ in range(n_steps):
        for _ in range(substeps):
            s = step(s, h)
        frames.append(np.concatenate([s.pos, s.vel], axis=-1))
    return np.stack(frames, axis=1)


def random_systems(
    rng: np.random.Generator, n_systems: int, n_bodies: int, strengths: np.ndarray
) -> Systems:
    """Bodies placed uniformly in [-1, 1]^2 with N(0, 0.5^2) velocities, masses U[0.5, 2] and
    charges U[-1, 1]; `strengths` (n_systems, 4) is given by the caller (the split's recipe)."""
    shape = (n_systems, n_bodies)
    return Systems(
        pos=rng.uniform(-1.0, 1.0, shape + (2,)),
        vel=rng.normal(0.0, 0.5, shape + (2,)),
        mass=rng.uniform(0.5, 2.0, shape),
        charge=rng.uniform(-1.0, 1.0, shape),
        strengths=np.asarray(strengths, dtype=np.float64),
    )
