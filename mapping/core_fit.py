"""What one neuromorphic core holds: the single check that placement, pricing and the deployment
report share, so that a network is priced only where it fits.

A core's use of each resource, for a placement of compartments (mapping/placement.py):
compartments placed on it; synapses stored on it (given per compartment: incoming synapses plus
any internal weights, e.g. an RSGN node's W_h copy); synaptic memory (synapses x bytes per
synapse); fan-in axons (distinct source compartments that reach the core: one input axon each)
and fan-out axons (distinct (source compartment, destination core) pairs leaving it); and the
core's memory as a whole, which holds the synapses, every compartment's state and both axon
tables (Loihi 2's 192 KB per core are flexibly partitioned between them, so synapses alone may
not take all of it). Every stored copy of a weight counts as a synapse (the layouts give the
synapse counts, an internal transform's copy included).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from atomspark.mapping.hardware import NeuromorphicHardware

RESOURCES = (
    "compartments", "synapses", "synaptic_memory_bytes", "memory_bytes", "fan_in_axons",
    "fan_out_axons",
)  # fmt: skip
# ESTIMATES (Intel publishes no per-entry sizes for Loihi 2): a compartment's state is two 32-bit
# words (current and voltage; a graded-spike unit's state fits the same words); an axon table
# entry (input or output) is one 32-bit word (destination core and axon index, or axon to
# synapse-list pointer).
STATE_BYTES_PER_COMPARTMENT = 8
BYTES_PER_AXON_ENTRY = 4


def core_memory(synapse_bytes: float, compartments: int, fan_in: int, fan_out: int) -> float:
    """Bytes of a core's memory in use: synapses, compartment state and both axon tables."""
    return (
        float(synapse_bytes)
        + compartments * STATE_BYTES_PER_COMPARTMENT
        + (fan_in + fan_out) * BYTES_PER_AXON_ENTRY
    )


def core_memory_array(synapse_bytes, compartments, fan_in, fan_out) -> np.ndarray:
    """core_memory over arrays of cores (the same sum in the same order, so the same values)."""
    return (
        np.asarray(synapse_bytes, dtype=float)
        + np.asarray(compartments) * STATE_BYTES_PER_COMPARTMENT
        + (np.asarray(fan_in) + fan_out) * BYTES_PER_AXON_ENTRY
    )


WHY = {
    "fan_in_axons": "every source compartment that reaches a core needs its own input axon there",
    "fan_out_axons": "every (source compartment, destination core) pair needs an output axon",
    "synapses": "the synapses of the core's compartments do not fit its synaptic memory",
    "synaptic_memory_bytes": "see synapses",
    "memory_bytes": "synapses, compartment state and axon tables share the core's memory "
    f"(state {STATE_BYTES_PER_COMPARTMENT} B per compartment and {BYTES_PER_AXON_ENTRY} B per "
    "axon entry: estimates)",
    "compartments": "more compartments than a core holds",
}


@dataclass(frozen=True)
class CoreUse:
    """One core's use of each resource."""

    core: int
    chip: int
    compartments: int
    synapses: int
    synaptic_memory_bytes: float
    fan_in_axons: int
    fan_out_axons: int
    memory_bytes: float = 0.0  # synapses + compartment state + axon tables (core_memory)


def core_limits(hw: NeuromorphicHardware) -> dict:
    """Per-core limits by resource name (RESOURCES), plus the chip and board sizes."""
    lim = hw.limits
    return {
        "compartments": lim.units_per_core,
        "synapses": lim.synapses_per_core,
        "synaptic_memory_bytes": float(lim.synaptic_memory_bytes_per_core),
        "memory_bytes": float(lim.synaptic_memory_bytes_per_core),
        "fan_in_axons": lim.max_fan_in_axons_per_core,
        "fan_out_axons": lim.max_fan_out_axons_per_core,
        "cores_per_chip": lim.cores_per_chip,
        "chips_per_board": lim.chips_per_board,
        "max_payload_bits": lim.max_payload_bits,
    }


def core_use(
    unit_core: np.ndarray,
    adjacency: sp.spmatrix,
    synapses: np.ndarray,
    hw: NeuromorphicHardware,
) -> list[CoreUse]:
    """Each core's use of every resource (module docstring) for compartments placed by unit_core."""
    core_of = np.asarray(unit_core, dtype=np.int64)
    n_cores = int(core_of.max()) + 1 if core_of.size else 0
    comp = np.bincount(core_of, minlength=n_cores)
    syn = np.bincount(core_of, weights=np.asarray(synapses, dtype=float), minlength=n_cores)
    n = core_of.size
    in_core = sp.csr_matrix((np.ones(n), (np.arange(n), core_of)), shape=(n, n_cores))
    reach = (sp.csr_matrix(adjacency) @ in_core).tocoo()  # (source, destination core) pairs
    reach.eliminate_zeros()
    fan_in = np.bincount(reach.col, minlength=n_cores)
    fan_out = np.bincount(core_of[reach.row], minlength=n_cores)
    bps = hw.limits.bytes_per_synapse
    cpc = hw.limits.cores_per_chip
    return [
        CoreUse(
            core=c,
            chip=c // cpc,
            compartments=int(comp[c]),
            synapses=int(round(syn[c])),
            synaptic_memory_bytes=float(syn[c] * bps),
            fan_in_axons=int(fan_in[c]),
            fan_out_axons=int(fan_out[c]),
            memory_bytes=core_memory(syn[c] * bps, int(comp[c]), int(fan_in[c]), int(fan_out[c])),
        )
        for c in range(n_cores)
    ]


def over_limit(cores: list[CoreUse], hw: NeuromorphicHardware, note: str = "") -> list[str]:
    """One line per resource that some core exceeds (empty: every core fits); `note` is added
    to the axon lines (e.g. why a vector unit needs so many)."""
    limits = core_limits(hw)
    out = []
    for r in RESOURCES:
        over = [c for c in cores if getattr(c, r) > limits[r]]
        if not over:
            continue
        worst = max(over, key=lambda c: getattr(c, r))
        why = WHY[r] + (f"; {note}" if note and r.endswith("axons") else "")
        out.append(
            f"{r}: {len(over)} of {len(cores)} cores over the limit (worst: core {worst.core} "
            f"needs {getattr(worst, r):.0f} > {limits[r]:.0f}); {why}"
        )
    return out
