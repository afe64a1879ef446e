"""Deployment report: what a graph needs of each neuromorphic core, against the chip's limits.

For a placement (mapping/costs.place_units: vector units keep their d compartments on one core)
it lists per core the compartments, synapses (incoming synapses of its compartments plus vector
units' internal weights, e.g. RSGN's W_h copy), synaptic memory (synapses x bytes per synapse),
fan-in axons (distinct source compartments that reach the core) and fan-out axons (distinct
(source compartment, destination core) pairs leaving it), each next to its limit. When the graph
cannot be placed at all it says which limit breaks and by how much, plus the network-wide
requirements that show why (e.g. one unit's fan-in above the per-core axon limit).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import scipy.sparse as sp
from atomspark.mapping.costs import place_units, unit_width
from atomspark.mapping.hardware import NeuromorphicHardware, load_hardware
from atomspark.sim.graph import Graph
from atomspark.sim.validation import AtomsparkError

RESOURCES = ("compartments", "synapses", "synaptic_memory_bytes", "fan_in_axons", "fan_out_axons")


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


@dataclass(frozen=True)
class DeploymentReport:
    """Per-core use against limits; `problems` says what does not fit and why (empty: fits)."""

    hardware: str
    strategy: str
    fits: bool
    limits: dict
    cores: list[CoreUse] = field(default_factory=list)
    chips: int = 0
    peak_use: dict = field(default_factory=dict)  # resource -> max over cores / limit
    network: dict = field(default_factory=dict)  # totals and worst single units
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)

    def lines(self, max_cores: int = 12) -> list[str]:
        """A printable table (the first `max_cores` cores, then the busiest one)."""
        lim = self.limits
        out = [
            f"[deploy] {self.hardware}: {'fits' if self.fits else 'DOES NOT FIT'}"
            + (
                f" on {len(self.cores)} core(s), {self.chips} chip(s) ({self.strategy})"
                if self.fits
                else ""
            )
        ]
        if self.cores:
            out.append(
                f"{'core':>6s} {'chip':>4s} {'compartments':>14s} {'synapses':>18s} "
                f"{'syn. memory B':>20s} {'fan-in axons':>14s} {'fan-out axons':>14s}"
            )
            busiest = max(self.cores, key=lambda c: c.synapses)
            shown = self.cores[:max_cores] + (
                [busiest] if busiest not in self.cores[:max_cores] else []
            )
            for c in shown:
                out.append(
                    f"{c.core:6d} {c.chip:4d} {c.compartments:6d}/{lim['compartments']:<7d} "
                    f"{c.synapses:8d}/{lim['synapses']:<9d} "
                    f"{c.synaptic_memory_bytes:9.0f}/{lim['synaptic_memory_bytes']:<10.0f} "
                    f"{c.fan_in_axons:6d}/{lim['fan_in_axons']:<7d} "
                    f"{c.fan_out_axons:6d}/{lim['fan_out_axons']:<7d}"
                )
            if len(shown) < len(self.cores):
                out.append(f"  ... {len(self.cores) - len(shown)} more cores in deployment.json")
            peak = ", ".join(f"{k} {v:.0%}" for k, v in self.peak_use.items())
            out.append(f"[deploy] peak use of a core's limit: {peak}")
        out += [f"[deploy] does not fit: {p}" for p in self.problems]
        out += [f"[deploy] note: {n}" for n in self.notes]
        return out


def _limits(hw: NeuromorphicHardware) -> dict:
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


def _unit_synapses(graph: Graph, adjacency: sp.csr_matrix) -> np.ndarray:
    """Synapses stored per compartment: incoming synapses plus internal weights (W_h) / width."""
    w = unit_width(graph)
    in_degree = np.diff(adjacency.tocsc().indptr).astype(np.int64)
    internal = np.concatenate(
        [
            np.full(p.size * w, getattr(p.params, "macs_per_update", 0) // w)
            for p in graph.populations
        ]
    )
    return in_degree + internal.astype(np.int64)


def _network_needs(graph: Graph, adjacency: sp.csr_matrix, synapses: np.ndarray) -> dict:
    w = unit_width(graph)
    fan_in = np.diff(adjacency.tocsc().indptr)
    node_syn = synapses.reshape(-1, w).sum(axis=1)
    return {
        "compartments": int(graph.total_units * w),
        "units": int(graph.total_units),
        "compartments_per_unit": w,
        "synapses": int(synapses.sum()),
        "max_fan_in_of_a_compartment": int(fan_in.max(initial=0)),
        "max_synapses_of_a_unit": int(node_syn.max(initial=0)),
        "payload_bits": sorted({int(p.params.payload_bits) for p in graph.populations}),
    }


def deployment_report(
    graph: Graph,
    hardware: str | NeuromorphicHardware = "loihi2",
    strategy: str = "auto",
    positions: np.ndarray | None = None,
) -> DeploymentReport:
    """Place `graph` on `hardware` and report each core's use against the limits (module doc)."""
    hw = load_hardware(hardware) if isinstance(hardware, str) else hardware
    if not isinstance(hw, NeuromorphicHardware):
        raise AtomsparkError(f"hardware {hw.name!r}: a deployment report needs a neuromorphic chip")
    limits = _limits(hw)
    w = unit_width(graph)
    unit_adj = graph.unit_adjacency()
    adjacency = (
        unit_adj if w == 1 else sp.kron(unit_adj, sp.identity(w, format="csr"), format="csr")
    )
    synapses = _unit_synapses(graph, adjacency)
    needs = _network_needs(graph, adjacency, synapses)
    notes = []
    bits = max(needs["payload_bits"]) // w  # per compartment: one graded spike each
    if bits > limits["max_payload_bits"]:
        notes.append(
            f"events carry {bits}-bit payloads per compartment; {hw.name} carries at most "
            f"{limits['max_payload_bits']} payload bits per spike"
        )
    if any(not p.is_fixed_point for p in graph.populations):
        notes.append(
            "float populations: a chip runs fixed point; quantise first (export --fixed) for a "
            "deployable network"
        )
    try:
        placement, adjacency = place_units(graph, hw, None, strategy, positions)
    except AtomsparkError as exc:
        return DeploymentReport(
            hw.name, strategy, False, limits, network=needs, notes=notes,
            problems=[f"placement: {exc}"] + _why(needs, limits),
        )  # fmt: skip
    cores = _core_use(placement, adjacency, synapses, hw)
    peak = {r: max((getattr(c, r) for c in cores), default=0) / limits[r] for r in RESOURCES}
    problems = _over_limit(cores, limits, w)
    return DeploymentReport(
        hardware=hw.name,
        strategy=placement.strategy,
        fits=not problems,
        problems=problems,
        limits=limits,
        cores=cores,
        chips=int(placement.n_chips),
        peak_use=peak,
        network=needs,
        notes=notes,
    )


_WHY = {
    "fan_in_axons": "every source compartment that reaches a core needs its own input axon there",
    "fan_out_axons": "every (source compartment, destination core) pair needs an output axon",
    "synapses": "the synapses of the core's compartments do not fit its synaptic memory",
    "synaptic_memory_bytes": "see synapses",
    "compartments": "more compartments than a core holds",
}


def _over_limit(cores: list[CoreUse], limits: dict, width: int) -> list[str]:
    """One line per resource that some core exceeds (the placement packs nodes, and checks
    compartment-level axons only for width 1)."""
    out = []
    for r in RESOURCES:
        over = [c for c in cores if getattr(c, r) > limits[r]]
        if not over:
            continue
        worst = max(over, key=lambda c: getattr(c, r))
        why = _WHY[r]
        if width > 1 and r.endswith("axons"):
            why += (
                f"; a vector unit's {width} compartments each exchange their own graded spike "
                f"with the matching compartment of every connected unit"
            )
        out.append(
            f"{r}: {len(over)} of {len(cores)} cores over the limit (worst: core {worst.core} "
            f"needs {getattr(worst, r):.0f} > {limits[r]:.0f}); {why}"
        )
    return out


def _why(needs: dict, limits: dict) -> list[str]:
    """Network-wide requirements that no placement can meet."""
    out = []
    if needs["max_fan_in_of_a_compartment"] > limits["fan_in_axons"]:
        out.append(
            f"a compartment receives from {needs['max_fan_in_of_a_compartment']} sources, above "
            f"the {limits['fan_in_axons']} input axons of one core"
        )
    if needs["max_synapses_of_a_unit"] > limits["synapses"]:
        out.append(
            f"one unit (its {needs['compartments_per_unit']} compartments) stores "
            f"{needs['max_synapses_of_a_unit']} synapses, above the {limits['synapses']} of a core"
        )
    capacity = limits["compartments"] * limits["cores_per_chip"] * limits["chips_per_board"]
    if needs["compartments"] > capacity:
        out.append(f"{needs['compartments']} compartments exceed the board's {capacity}")
    return out


def _core_use(placement, adjacency: sp.csr_matrix, synapses: np.ndarray, hw) -> list[CoreUse]:
    core_of = placement.unit_core
    n_cores = int(core_of.max()) + 1 if core_of.size else 0
    comp = np.bincount(core_of, minlength=n_cores)
    syn = np.bincount(core_of, weights=synapses, minlength=n_cores)
    coo = adjacency.tocoo()
    # fan-in: distinct (source, destination core); fan-out: the same pairs counted at the source
    pairs = np.unique(coo.row.astype(np.int64) * n_cores + core_of[coo.col])
    src, dst_core = pairs // n_cores, pairs % n_cores
    fan_in = np.bincount(dst_core, minlength=n_cores)
    fan_out = np.bincount(core_of[src], minlength=n_cores)
    bps = hw.limits.bytes_per_synapse
    return [
        CoreUse(
            core=c,
            chip=c // placement.cores_per_chip,
            compartments=int(comp[c]),
            synapses=int(syn[c]),
            synaptic_memory_bytes=float(syn[c] * bps),
            fan_in_axons=int(fan_in[c]),
            fan_out_axons=int(fan_out[c]),
        )
        for c in range(n_cores)
    ]
