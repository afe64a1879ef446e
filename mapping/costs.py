"""From an engine run to costs: place the graph, estimate neuromorphic energy/latency, and price
the dense equivalent of the same computation on a GPU or CPU for comparison.

Vector units (an RSGN node's d-wide state) are priced as a chip would hold them: d compartments
on one core, each event d graded spikes, each synaptic operation d multiply-adds, and the unit's
internal transform (`macs_per_update`, e.g. RSGN's W_h) counted as synaptic operations.

The dense equivalent is what a GPU does for the same model without events: every step, every
projection is a dense matrix-vector product (2 n_target n_source FLOPs per sample), its weights
are read from memory once per step and batch (4 bytes each in fp32), and each projection is one
kernel launch per step. Batching amortises weight traffic over `batch` samples.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp
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


def unit_width(graph: Graph) -> int:
    """Compartments per unit: the payload length of vector units (RSGN: d), else 1."""
    if not isinstance(graph, Graph):
        raise AtomsparkError(f"graph: expected an engine Graph, got {type(graph).__name__}")
    widths = {
        int(np.prod(getattr(p.params, "payload_shape", ()) or (1,))) for p in graph.populations
    }
    if len(widths) != 1:
        raise AtomsparkError(f"graph: mixed payload widths {sorted(widths)} are not priced")
    return widths.pop()


def _macs_per_update(graph: Graph) -> np.ndarray:
    return np.array([getattr(p.params, "macs_per_update", 0) for p in graph.populations])


def compartment_profile(graph: Graph, profile: Profile) -> Profile:
    """The run's counters in scalar operations (see module docstring); unchanged for width 1."""
    w, macs = unit_width(graph), _macs_per_update(graph)
    if w == 1 and not macs.any():
        return profile
    return Profile(
        profile.population_names,
        profile.population_sizes * w,
        profile.steps,
        events=profile.events * w,
        synops=profile.synops * w + profile.updates * macs[None, :],
        updates=profile.updates * w,
        active=profile.active * w,
        payload_bits=profile.payload_bits,
        wraps=profile.wraps,
        clips=profile.clips,
        unit_events=[np.repeat(u, w) for u in profile.unit_events],
    )


def dense_workload(graph: Graph, steps: int, batch: int = 1) -> DenseWorkload:
    """The dense equivalent of `steps` steps of `graph`, per sample (see module docstring)."""
    steps = require_int("steps", steps, minimum=0)
    batch = require_int("batch", batch, minimum=1)
    w = unit_width(graph)
    sizes = graph.sizes
    weights = sum(p.shape[0] * p.shape[1] for p in graph.projections)
    internal = float((_macs_per_update(graph) * sizes).sum())  # e.g. RSGN's W_h per node
    macs = weights * w + internal
    units = graph.total_units * w
    flops = steps * (2.0 * macs + 4.0 * units)  # matvecs + a few element-wise ops per unit
    weight_bytes = BYTES_PER_WEIGHT_FP32 * (
        weights
        + max((getattr(p.params, "macs_per_update", 0) for p in graph.populations), default=0)
    )
    bytes_moved = steps * (weight_bytes / batch + 3 * 4.0 * units)
    return DenseWorkload(flops, bytes_moved, steps * max(len(graph.projections), 1))


def place_units(
    graph: Graph,
    hw: NeuromorphicHardware,
    unit_events: np.ndarray | None = None,
    strategy: str = "auto",
    positions: np.ndarray | None = None,
) -> tuple[Placement, sp.csr_matrix]:
    """Place the graph's units; vector units keep their w compartments together on one core.

    Returns the compartment-level placement and adjacency (kron(A, I_w) for width w).
    strategy "auto": "locality" when unit positions are given (RSGN's hyperbolic coordinates;
    on geometric graphs it beat Kernighan-Lin in traffic and time, docs/performance.md §6),
    else "partition"."""
    if strategy == "auto":
        strategy = "locality" if positions is not None else "partition"
    adjacency = graph.unit_adjacency()
    w = unit_width(graph)
    if w == 1:
        return place(
            adjacency, hw, strategy=strategy, unit_events=unit_events, positions=positions
        ), adjacency
    if w > hw.limits.units_per_core:
        raise AtomsparkError(
            f"unit width {w} exceeds {hw.limits.units_per_core} units per core on {hw.name}"
        )
    per_node = max(_macs_per_update(graph).max(), 0)
    in_degree = np.asarray(adjacency.sum(axis=0)).ravel()
    node_hw = replace(hw, limits=replace(hw.limits, units_per_core=hw.limits.units_per_core // w))
    node_events = None if unit_events is None else unit_events.reshape(-1, w).sum(axis=1)
    nodes = place(
        adjacency,
        node_hw,
        strategy=strategy,
        unit_events=node_events,
        synapse_counts=in_degree * w + per_node,
        positions=positions,
    )
    placement = replace(nodes, unit_core=np.repeat(nodes.unit_core, w))
    return placement, sp.kron(adjacency, sp.identity(w, format="csr"), format="csr")


def _hardware(name_or_hw, kind):
    hw = load_hardware(name_or_hw) if isinstance(name_or_hw, str) else name_or_hw
    if not isinstance(hw, kind):
        raise AtomsparkError(f"hardware {getattr(hw, 'name', hw)!r}: expected a {kind.__name__}")
    return hw


def price_dense(
    graph: Graph,
    steps_per_sample: int,
    dense: str | DenseHardware = "h100",
    batch: int = 1,
    precision: str = "fp32",
) -> tuple[DenseWorkload, DenseCost]:
    """The dense equivalent of one sample, run in batches of `batch` on `dense`: energy and
    time per sample (batch time / batch: throughput, not latency)."""
    gpu = _hardware(dense, DenseHardware)
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
    return work, per_sample


def compare_costs(
    graph: Graph,
    profile: Profile,
    neuromorphic: str | NeuromorphicHardware = "loihi2",
    dense: str | DenseHardware = "h100",
    n_samples: int = 1,
    batch: int = 1,
    strategy: str = "auto",
    positions: np.ndarray | None = None,
    precision: str = "fp32",
) -> CostComparison:
    """Place `graph`, price `profile` (covering `n_samples` samples) on both devices, per sample."""
    chip = _hardware(neuromorphic, NeuromorphicHardware)
    scalar = compartment_profile(graph, profile)
    unit_events = np.concatenate(scalar.unit_events) if scalar.unit_events else None
    placement, adjacency = place_units(graph, chip, unit_events, strategy, positions)
    report = estimate_energy(scalar, placement, adjacency, chip, n_samples=n_samples)
    steps_per_sample = max(1, int(round(profile.steps / n_samples)))
    work, per_sample = price_dense(graph, steps_per_sample, dense, batch, precision)
    return CostComparison(report, placement, per_sample, work)
