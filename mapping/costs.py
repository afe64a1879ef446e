"""From an engine run to costs: place the graph, estimate neuromorphic energy/latency, and price
the dense equivalent of the same computation on a GPU or CPU for comparison.

The chip side is priced only on a layout that fits (mapping/layouts.py: vector units such as
RSGN nodes as d compartments on one core, or split into feature-sliced message sums and
node-major transforms); each event of a width-d unit is d graded spikes, each synaptic operation
d multiply-adds, and the unit's internal transform (`macs_per_update`, RSGN's W_h) counts as
synaptic operations. No layout fits: no chip energy.

The dense equivalent is what a GPU does for the same model without events: every step, every
projection is a dense matrix-vector product (2 n_target n_source FLOPs per sample), its weights
are read from memory once per step and batch (4 bytes each in fp32), and each projection is one
kernel launch per step. Batching amortises weight traffic over `batch` samples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from atomspark.mapping.energy import (
    DenseCost,
    EnergyReport,
    ProgramLoad,
    dense_cost,
    estimate_energy,
)
from atomspark.mapping.hardware import DenseHardware, NeuromorphicHardware, load_hardware
from atomspark.mapping.layouts import Fit, fit_graph, macs_per_update, unit_width
from atomspark.mapping.placement import Placement
from atomspark.mapping.readout_price import PORTS, with_readout
from atomspark.sim.core import AtomsparkError, require_int
from atomspark.sim.graph import Graph
from atomspark.sim.profile import Profile

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
    """One run priced on a neuromorphic chip and on a dense device, per sample. When no layout
    fits the chip, `neuromorphic` and `placement` are None: an infeasible mapping is not priced."""

    neuromorphic: EnergyReport | None
    placement: Placement | None
    dense: DenseCost
    workload: DenseWorkload
    fit: Fit | None = None

    @property
    def fits(self) -> bool:
        return self.neuromorphic is not None

    @property
    def energy_ratio(self) -> float | None:
        """Dense energy / neuromorphic energy (> 1: the chip is cheaper); None: does not fit."""
        if self.neuromorphic is None:
            return None
        return self.dense.energy_j / max(self.neuromorphic.energy_per_sample_j, 1e-300)

    def to_dict(self) -> dict:
        placed = self.placement is not None
        return {
            "fits": self.fits,
            "neuromorphic": self.neuromorphic.to_dict() if placed else None,
            "placement": {
                "strategy": self.placement.strategy if placed else None,
                # the priced cores: the layout's and, for a split RSGN, its readout's
                "cores": self.neuromorphic.cores_used if self.fits else None,
                "chips": self.neuromorphic.chips_used if self.fits else None,
                **(self.fit.summary() if self.fit is not None else {}),
            },
            "dense": self.dense.to_dict(),
            "dense_workload": self.workload.to_dict(),
            "energy_ratio_dense_over_neuromorphic": self.energy_ratio,
        }


def compartment_profile(graph: Graph, profile: Profile) -> Profile:
    """The run's counters in scalar operations of the node layout (mapping/layouts.py)."""
    w, macs = unit_width(graph), macs_per_update(graph)
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
    internal = float((macs_per_update(graph) * sizes).sum())  # e.g. RSGN's W_h per node
    macs = weights * w + internal
    units = graph.total_units * w
    flops = steps * (2.0 * macs + 4.0 * units)  # matvecs + a few element-wise ops per unit
    weight_bytes = BYTES_PER_WEIGHT_FP32 * (
        weights + max((p.params.macs_per_update for p in graph.populations), default=0)
    )
    bytes_moved = steps * (weight_bytes / batch + 3 * 4.0 * units)
    return DenseWorkload(flops, bytes_moved, steps * max(len(graph.projections), 1))


def place_units(
    graph: Graph,
    hw: NeuromorphicHardware,
    unit_events: np.ndarray | None = None,
    strategy: str = "auto",
    positions: np.ndarray | None = None,
    layout: str = "auto",
) -> tuple[Placement, sp.csr_matrix]:
    """The compartment placement and adjacency of the first layout that fits
    (mapping/layouts.fit_graph); AtomsparkError saying why when none does."""
    fit = fit_graph(graph, hw, layout, unit_events, strategy, positions)
    if not fit.fits:
        raise AtomsparkError("network does not fit: " + "; ".join(fit.problems))
    return fit.placement, fit.cmap.adjacency


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


def chip_cost(
    graph: Graph,
    profile: Profile,
    chip: NeuromorphicHardware,
    n_samples: int = 1,
    strategy: str = "auto",
    positions: np.ndarray | None = None,
    static_scope: str = "device",
    layout: str = "auto",
    fit: Fit | None = None,
    classes: int = 0,
    readout_weights: tuple[int, ...] | None = None,
) -> tuple[Fit, EnergyReport | None]:
    """Fit the graph (mapping/layouts.py; or reuse `fit`) and price `profile` on the layout
    that fits; no energy (None) when none does. `classes` > 0: the graph's nodes are read out
    into that many class scores; a split layout prices its readout's cores as the split bundle
    holds them (mapping/readout_price.py; `readout_weights`: the stored weights per accumulator,
    split_readout.classifier_weights, None: all); the node layout's bundle reads out on the host."""
    if fit is None:
        node_scalar = compartment_profile(graph, profile)
        unit_events = np.concatenate(node_scalar.unit_events) if node_scalar.unit_events else None
        fit = fit_graph(graph, chip, layout, unit_events, strategy, positions)
    if not fit.fits:
        return fit, None
    scalar = fit.cmap.to_profile(profile)
    barriers, programs, ports = fit.cmap.barriers_per_step, None, ()
    placement, adjacency = fit.placement, fit.cmap.adjacency
    if fit.split is not None:
        barriers, programs = split_schedule(fit.split, profile.steps, n_samples, chip)
        if require_int("classes", classes, minimum=0):
            scalar, placement, adjacency, programs = _with_readout(
                graph, fit.split, scalar, placement, adjacency, programs, classes, n_samples,
                barriers, chip, readout_weights,
            )  # fmt: skip
            ports = PORTS
    report = estimate_energy(
        scalar, placement, adjacency, chip, n_samples=n_samples, static_scope=static_scope,
        barriers_per_step=barriers, programs=programs, ports=ports,
    )  # fmt: skip
    return fit, report


def readout_placement(graph, search, classes: int, chip, stored: tuple[int, ...] | None = None):
    """Where the split bundle of `search` holds the readout of `classes` class scores
    (mapping/split_cores.place_readout, the one export_split writes): `stored` the synapses per
    partial of each accumulator (split_readout.stored_weights; None: every weight stored)."""
    from atomspark.mapping.split_cores import place_readout
    from atomspark.mapping.split_readout import readout_parts

    n, d = graph.total_units, unit_width(graph)
    parts = readout_parts(graph.populations[0].is_fixed_point)
    stored = tuple(stored) if stored is not None else (d * classes,) * parts
    if len(stored) != parts:
        raise AtomsparkError(f"readout weights: {parts} part(s) expected, got {len(stored)}")
    return place_readout(n, d, search.blocks, search.order, search.costs, classes, stored, chip,
                         composed=parts == 1)  # fmt: skip


def _with_readout(graph, search, scalar, placement, adjacency, programs, classes, n_samples,
                  barriers, chip, stored):  # fmt: skip
    """readout_price.with_readout on the readout placement the split bundle of `search` holds."""
    ro = readout_placement(graph, search, classes, chip, stored)
    n, d = graph.total_units, unit_width(graph)
    return with_readout(scalar, placement, adjacency, programs, ro, n, d, n_samples, barriers)


def split_schedule(
    search, steps: int, n_samples: int, chip: NeuromorphicHardware
) -> tuple[np.ndarray, ProgramLoad]:
    """What the split bundle runs per profile step as a stream of samples in one run
    (mapping/lava/rsgn_split.py): each sample's first engine step is its load (the reset phase,
    microcode LOAD_IGNITION on every node core) and the ignition's emit, two chip steps; every
    later one a model step of PERIOD chip steps in which each core runs its programs' microcode
    (the block search's per-core instruction counts, mapping/split_cores.split_core_costs, the
    bundle report's), the last one also the readout's product on every node core
    (READOUT_PRODUCT, mapping/split_readout.py). The readout's own cores (standard processes)
    are added by chip_cost when it is given the classes (mapping/readout_price.py)."""
    from atomspark.mapping.lava.rsgn_split import PERIOD, stream_period
    from atomspark.mapping.split_microcode import LOAD_IGNITION, READOUT_PRODUCT, instruction_cost

    per_sample = steps // n_samples if steps % n_samples == 0 else 0
    model_step = np.ones(steps, bool)
    if per_sample:
        model_step[::per_sample] = False  # each sample's load and ignition
    per_core = np.array([c.microcode_instructions for c in search.costs], float)
    load = np.zeros_like(per_core)
    product = np.zeros_like(per_core)
    for i, c in enumerate(search.costs):
        if c.kind == "node" and c.nodes:
            width = c.compartments // c.nodes - 1  # d transform compartments and a norm per node
            load[i] = c.nodes * (width * LOAD_IGNITION["transform"].instructions
                                 + LOAD_IGNITION["norm"].instructions)  # fmt: skip
            product[i] = c.nodes * width * READOUT_PRODUCT.instructions
    instructions = model_step[:, None] * per_core[None, :]
    if per_sample:
        instructions[::per_sample] += load
        instructions[per_sample - 1 :: per_sample] += product
    cost = instruction_cost(chip)
    barriers = np.where(model_step, PERIOD, stream_period(1)).astype(np.int64)
    return barriers, ProgramLoad(instructions, cost["energy_j"], cost["time_s"])


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
    static_scope: str = "device",
    layout: str = "auto",
    classes: int = 0,
    readout_weights: tuple[int, ...] | None = None,
) -> CostComparison:
    """Place `graph`, price `profile` (covering `n_samples` samples) on both devices, per sample.
    static_scope "device" (default): the whole chip's static power while the run holds it;
    classes: chip_cost's (the chip's readout)."""
    chip = _hardware(neuromorphic, NeuromorphicHardware)
    fit, report = chip_cost(
        graph, profile, chip, n_samples, strategy, positions, static_scope, layout,
        classes=classes, readout_weights=readout_weights,
    )  # fmt: skip
    steps_per_sample = max(1, int(round(profile.steps / n_samples)))
    work, per_sample = price_dense(graph, steps_per_sample, dense, batch, precision)
    return CostComparison(report, fit.placement, per_sample, work, fit)
