"""From an engine run to costs: place the graph, estimate neuromorphic energy/latency, and price
the dense equivalent of the same computation on a GPU or CPU for comparison.

The dense equivalent is what a GPU does for the same model without events: every step, every
projection is a dense matrix-vector product (2 n_target n_source FLOPs per sample), its weights
are read from memory once per step and batch (4 bytes each in fp32), and each projection is one
kernel launch per step. Batching amortises weight traffic over `batch` samples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from atomspark.mapping.energy import DenseCost, EnergyReport, dense_cost, estimate_energy
from atomspark.mapping.hardware import DenseHardware, NeuromorphicHardware, load_hardware
from atomspark.mapping.placement import Placement, place
from atomspark.sim.graph import Graph
from atomspark.sim.profile import Profile
from atomspark.sim.validation import AtomsparkError, require_int

BYTES_PER_WEIGHT_FP32 = 4


@dataclass(frozen=True)
class DenseWorkload:
    """FLOPs, bytes moved and kernel launches of the dense equivalent, per sample."""

    flops: float
    bytes_moved: float
    launches: int

    def to_dict(self) -> dict:
        return {"flops": self.flops, "bytes_moved": self.bytes_moved, "launches": self.launches}


@dataclass(frozen=True)
class CostComparison:
    """One run priced on a neuromorphic chip and on a dense device, per sample."""

    neuromorphic: EnergyReport
    placement: Placement
    dense: DenseCost
    workload: DenseWorkload

    @property
    def energy_ratio(self) -> float:
        """Dense energy / neuromorphic energy (> 1: the chip is cheaper)."""
        return self.dense.energy_j / max(self.neuromorphic.energy_per_sample_j, 1e-300)

    def to_dict(self) -> dict:
        return {
            "neuromorphic": self.neuromorphic.to_dict(),
            "placement": {
                "strategy": self.placement.strategy,
                "cores": int(np.unique(self.placement.unit_core).size),
                "chips": int(np.unique(self.placement.unit_chip).size),
            },
            "dense": self.dense.to_dict(),
            "dense_workload": self.workload.to_dict(),
            "energy_ratio_dense_over_neuromorphic": self.energy_ratio,
        }


def dense_workload(graph: Graph, steps: int, batch: int = 1) -> DenseWorkload:
    """The dense equivalent of `steps` steps of `graph`, per sample (see module docstring)."""
    steps = require_int("steps", steps, minimum=0)
    batch = require_int("batch", batch, minimum=1)
    macs = sum(p.shape[0] * p.shape[1] for p in graph.projections)
    units = graph.total_units
    flops = steps * (2.0 * macs + 4.0 * units)  # matvecs + a few element-wise ops per unit
    bytes_moved = steps * (BYTES_PER_WEIGHT_FP32 * macs / batch + 3 * 4.0 * units)
    return DenseWorkload(flops, bytes_moved, steps * max(len(graph.projections), 1))


def _hardware(name_or_hw, kind):
    hw = load_hardware(name_or_hw) if isinstance(name_or_hw, str) else name_or_hw
    if not isinstance(hw, kind):
        raise AtomsparkError(f"hardware {hw.name!r}: expected a {kind.__name__}")
    return hw


def compare_costs(
    graph: Graph,
    profile: Profile,
    neuromorphic: str | NeuromorphicHardware = "loihi2",
    dense: str | DenseHardware = "h100",
    n_samples: int = 1,
    batch: int = 1,
    strategy: str = "partition",
    positions: np.ndarray | None = None,
    precision: str = "fp32",
) -> CostComparison:
    """Place `graph`, price `profile` (covering `n_samples` samples) on both devices, per sample."""
    chip = _hardware(neuromorphic, NeuromorphicHardware)
    gpu = _hardware(dense, DenseHardware)
    adjacency = graph.unit_adjacency()
    unit_events = np.concatenate(profile.unit_events) if profile.unit_events else None
    placement = place(
        adjacency, chip, strategy=strategy, unit_events=unit_events, positions=positions
    )
    report = estimate_energy(profile, placement, adjacency, chip, n_samples=n_samples)
    steps_per_sample = max(1, int(round(profile.steps / n_samples)))
    work = dense_workload(graph, steps_per_sample, batch=batch)
    cost = dense_cost(
        work.flops * batch,
        work.bytes_moved * batch,
        gpu,
        precision=precision,
        n_launches=work.launches,
    )
    per_sample = DenseCost(
        **{**cost.to_dict(), "energy_j": cost.energy_j / batch, "time_s": cost.time_s / batch}
    )
    return CostComparison(report, placement, per_sample, work)
