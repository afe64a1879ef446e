"""Per-unit parameters of a population: one value for all units, or one per unit."""

from __future__ import annotations

import numpy as np
from atomspark.sim.core import AtomsparkError


def per_unit(label: str, value, shape: int | tuple[int, ...], dtype=np.float64) -> np.ndarray:
    """`value` as a fresh C-contiguous array of `shape` (an int n means (n,)): a scalar is
    broadcast to every unit, an array must have exactly that shape. Callers check finiteness."""
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(shape)
    arr = np.asarray(value, dtype=dtype)
    if arr.ndim == 0:
        return np.full(shape, arr, dtype=dtype)
    if arr.shape != shape:
        raise AtomsparkError(f"{label}: expected a scalar or shape {shape}, got {arr.shape}")
    return arr.copy()
