"""The neuron part of the engine's CUBA step, timed alone: `steps` calls of the direct lean
sweep (sim/kernels/lif_lean.py `sweep_direct`) on a copy of the population's state, with no
spike listing and no fan-out. The sweep is branch-free, so its cost does not depend on which
neurons fire; the rest of a run's time is spike listing, fan-out and the loop itself.

Bytes one sweep moves per neuron (read from the kernel's code, not measured): u, u2 and v read
and written in the state dtype, the int32 refractory counter read and written, one uint8 spike
flag written.
"""

from __future__ import annotations

import time

import numpy as np
from atomspark.sim.engine import Engine
from atomspark.sim.kernels.lif_lean import sweep_direct
from numba import njit


def sweep_bytes_per_neuron(dtype: str) -> int:
    """Bytes the direct sweep reads and writes per neuron and step."""
    return 3 * 2 * np.dtype(dtype).itemsize + 2 * 4 + 1


def fanout_bytes_per_synapse(engine: Engine) -> int:
    """Bytes the engine reads per synaptic event from its fan-out rows, the most over its
    projections: the target index (uint16 into a lean target of <= 65,536 units) plus the
    weight (none when a projection's weights are one scalar, as in CUBA)."""
    sizes = []
    for j, o in enumerate(engine._outgoing):
        w = engine._fan_weights(j, o)
        sizes.append(
            engine._fan_indices(j, o).itemsize + (np.asarray(w).itemsize if np.ndim(w) else 0)
        )
    return max(sizes)


@njit
def _sweeps(steps, u, u2, v, refr, bias, consts, refractory, flags):
    fired = 0
    for _ in range(steps):
        fired += sweep_direct(u, u2, v, refr, bias, consts, refractory, flags)
    return fired


def sweep_cpu_s(engine: Engine, steps: int) -> float | None:
    """CPU seconds of `steps` direct sweeps of the engine's first population (None when it does
    not run the direct lean path)."""
    if not engine.direct[0]:
        return None
    a = engine._args[0]
    arrays = [a.u.copy(), a.u2.copy(), a.v.copy(), a.refr.copy()]
    c0 = time.process_time()
    _sweeps(steps, *arrays, a.bias, a.consts, a.refractory, a.flags.copy())
    return time.process_time() - c0
