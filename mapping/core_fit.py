"""What one neuromorphic core holds: the single check that placement, pricing and the deployment
report share, so that a network is priced only where it fits.

A core's use of each resource, for a placement of compartments (mapping/placement.py):
compartments placed on it; synapses stored on it (given per compartment: incoming synapses plus
any internal weights, e.g. an RSGN node's W_h copy); synaptic memory (synapses x bytes per
synapse); fan-in axons (distinct source compartments that reach the core: one input axon each)
and fan-out axons (distinct (source compartment, destination core) pairs leaving it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from atomspark.mapping.hardware import NeuromorphicHardware

RESOURCES = ("compartments", "synapses", "synaptic_memory_bytes", "fan_in_axons", "fan_out_axons")

WHY = {
    "fan_in_axons": "every source compartment that reaches a core needs its own input axon there",
    "fan_out_axons": "every (source compartment, destination core) pair needs an output axon",
    "synapses": "the synapses of the core's compartments do not fit its synaptic memory",
    "synaptic_memory_bytes": "see synapses",
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


def core_limits(hw: NeuromorphicHardware) -> dict:
    """Per-core limits by resource name (RESOURCES), plus the chip and board sizes."""
    lim = hw.limits
    return {
        "compartments": lim.units_per_core,
        "synapses": lim.synapses_per_core,
        "synaptic_memory_bytes": float(lim.synaptic_memory_bytes_per_core),
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
