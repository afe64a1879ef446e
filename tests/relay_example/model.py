"""A complete unit model in one module: the worked example of docs/architecture.md.

A relay unit multiplies what it received this step by `gain` and sends the product on as a
graded event (nothing is sent for zero input). It has one state entry, `last` (its last
output), and no pending units: it works only when an event arrives.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from atomspark.sim.core import require_positive
from atomspark.sim.unit_model import UnitModel, UnitParams, register
from numba import njit


@dataclass(frozen=True)
class RelayParams(UnitParams):
    """gain: factor applied to the input before it is sent on."""

    gain: float

    is_fixed_point = False
    n_channels = 1
    dtype = "float64"
    payload_bits = 64

    def check_size(self, name: str, size: int) -> None:
        require_positive(f"{name}.gain", self.gain)

    def init_state(self, size: int) -> dict[str, np.ndarray]:
        return {"last": np.zeros(size)}


def relay_reference_step(a_in: np.ndarray, gain: float) -> np.ndarray:
    """The relay's rule in plain NumPy: what each unit sends this step (0 = no event)."""
    return a_in * gain


@njit(cache=True)
def relay_update(slot, buf, args):
    """Visit the units touched in this slot; returns (updates, events, active, wraps, clips)."""
    ring, tflag, tidx, tcount, pend, pcount, work, emit_idx, emit_val = buf
    last, gain = args
    n_emit = 0
    n = tcount[slot]
    for j in range(n):
        i = tidx[slot, j]
        x = ring[0, slot, i] * gain
        ring[0, slot, i] = 0.0
        tflag[slot, i] = 0
        last[i] = x
        if x != 0.0:
            emit_idx[n_emit] = i
            emit_val[n_emit] = x
            n_emit += 1
    tcount[slot] = 0
    return n, n_emit, n_emit, 0, 0


RELAY = register(
    UnitModel(
        name="relay_example",
        params_type=RelayParams,
        update=relay_update,
        kernel_args=lambda par, state, counter, dense_min: (state["last"], float(par.gain)),
        initially_pending=lambda par, state: np.zeros(state["last"].size, bool),
        sample_state=("last",),
        graded=True,
    )
)
