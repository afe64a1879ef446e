"""Deployment report: what a graph needs of each neuromorphic core, against the chip's limits.

The graph is fitted by mapping/layouts.fit_graph, the same fit that pricing uses (so a report
and a price never disagree on whether a network fits). Per core it lists the compartments,
synapses (incoming synapses of its compartments plus vector units' internal weights, e.g. RSGN's
W_h copy), synaptic memory (synapses x bytes per synapse), fan-in axons (distinct source
compartments that reach the core) and fan-out axons (distinct (source compartment, destination
core) pairs leaving it), each next to its limit (mapping/core_fit.py). When no layout fits it
says which limit breaks in each and by how much, plus the network-wide requirements that show
why (e.g. one unit's fan-in above the per-core axon limit).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
from atomspark.mapping.core_fit import RESOURCES, CoreUse, core_limits
from atomspark.mapping.hardware import NeuromorphicHardware, load_hardware
from atomspark.mapping.layouts import fit_graph, macs_per_update, unit_width
from atomspark.sim.core import AtomsparkError
from atomspark.sim.graph import Graph

__all__ = ["RESOURCES", "CoreUse", "DeploymentReport", "deployment_report", "process_rows"]


@dataclass(frozen=True)
class DeploymentReport:
    """Per-core use against limits; `problems` says what does not fit and why (empty: fits)."""

    hardware: str
    strategy: str
    fits: bool
    limits: dict
    layout: str | None = None  # mapping/layouts.py: "node" or "split"
    took: str = ""
    cores: list[CoreUse] = field(default_factory=list)
    chips: int = 0
    peak_use: dict = field(default_factory=dict)  # resource -> max over cores / limit
    network: dict = field(default_factory=dict)  # totals and worst single units
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    processes: list[dict] = field(default_factory=list)  # process_rows: standard Lava or not
    deployable_on_chip: bool = False  # fits, fixed point, and every process standard

    def to_dict(self) -> dict:
        return asdict(self)

    def lines(self, max_cores: int = 12) -> list[str]:
        """A printable table (the first `max_cores` cores, then the busiest one)."""
        lim = self.limits
        out = [
            f"[deploy] {self.hardware}: {'fits' if self.fits else 'DOES NOT FIT'}"
            + (
                f" on {len(self.cores)} core(s), {self.chips} chip(s) ({self.strategy}); "
                f"{self.took}"
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
        custom = [r["name"] for r in self.processes if not r["standard_lava_process"]]
        out.append(
            f"[deploy] Lava processes: {len(self.processes) - len(custom)} standard, "
            f"{len(custom)} with atomspark neuron code"
            + (f" ({', '.join(custom)})" if custom else "")
            + f"; deployable on chip: {'yes' if self.deployable_on_chip else 'no'}"
        )
        out += [f"[deploy] does not fit: {p}" for p in self.problems]
        out += [f"[deploy] note: {n}" for n in self.notes]
        return out


def _unit_synapses(graph: Graph) -> np.ndarray:
    """Synapses stored per unit in the node layout: incoming synapses x width plus internal
    weights (W_h)."""
    w = unit_width(graph)
    in_degree = np.diff(graph.unit_adjacency().tocsc().indptr).astype(np.int64)
    return in_degree * w + np.repeat(macs_per_update(graph), graph.sizes)


def _network_needs(graph: Graph, node_synapses: np.ndarray) -> dict:
    w = unit_width(graph)
    fan_in = np.diff(graph.unit_adjacency().tocsc().indptr)
    return {
        "compartments": int(graph.total_units * w),
        "units": int(graph.total_units),
        "compartments_per_unit": w,
        "synapses": int(node_synapses.sum()),
        "max_fan_in_of_a_compartment": int(fan_in.max(initial=0)),
        "max_synapses_of_a_unit": int(node_synapses.max(initial=0)),
        "payload_bits": sorted({int(p.params.payload_bits) for p in graph.populations}),
    }


def process_rows(graph: Graph) -> list[dict]:
    """Per population (then per projection, a Lava Sparse) of `graph`: the Lava Process that
    would run it and whether that is a standard Lava process (lava-nc's own Process and
    ProcessModels, which Intel's toolchain compiles for a chip) or one with atomspark's Python
    neuron code (a model without a Lava export counts as not standard)."""
    from atomspark.mapping.lava.units import lava_unit, lava_unit_of_params

    rows = []
    for p in graph.populations:
        unit = process = None
        try:
            unit = lava_unit_of_params(p.params)
            described = unit.describe(p.name, p.size, p.params)
            process = lava_unit(described).process_name(described)
        except AtomsparkError:
            unit = None
        rows.append({"name": p.name, "lava_process": process,
                     "standard_lava_process": bool(unit is not None and unit.standard)})  # fmt: skip
    rows += [{"name": f"{j.source}->{j.target}", "lava_process": "Sparse",
              "standard_lava_process": True} for j in graph.projections]  # fmt: skip
    return rows


def deployment_report(
    graph: Graph,
    hardware: str | NeuromorphicHardware = "loihi2",
    strategy: str = "auto",
    positions: np.ndarray | None = None,
    layout: str = "auto",
) -> DeploymentReport:
    """Fit `graph` on `hardware` (mapping/layouts.fit_graph, the fit pricing uses) and report
    each core's use against the limits (module doc)."""
    hw = load_hardware(hardware) if isinstance(hardware, str) else hardware
    if not isinstance(hw, NeuromorphicHardware):
        raise AtomsparkError(f"hardware {hw.name!r}: a deployment report needs a neuromorphic chip")
    limits = core_limits(hw)
    w = unit_width(graph)
    needs = _network_needs(graph, _unit_synapses(graph))
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
    processes = process_rows(graph)
    custom = sorted({r["lava_process"] or r["name"] for r in processes
                     if not r["standard_lava_process"]})  # fmt: skip
    if custom:
        notes.append(
            f"{', '.join(custom)}: atomspark's own Python neuron code, which no Loihi toolchain "
            "compiles; on a chip it would run on the host"
        )
    standard = all(p.is_fixed_point for p in graph.populations) and not custom
    fit = fit_graph(graph, hw, layout, None, strategy, positions)
    if fit.layout == "split":
        notes.append(
            "split layout: the cores of the block search (mapping/split_cores.py); export --to "
            "lava writes this layout core by core (mapping/lava/split_bundle.py)"
        )
    if not fit.fits:
        return DeploymentReport(
            hw.name, strategy, False, limits, network=needs, notes=notes,
            problems=[f"placement: {p}" for p in fit.problems] + _why(needs, limits),
            processes=processes,
        )  # fmt: skip
    cores = fit.cores if fit.split is None else _split_cores(fit.split, hw, notes)
    peak = {r: max((getattr(c, r) for c in cores), default=0) / limits[r] for r in RESOURCES}
    return DeploymentReport(
        hardware=hw.name,
        strategy=fit.placement.strategy,
        fits=True,
        limits=limits,
        layout=fit.layout,
        took=fit.took,
        cores=cores,
        chips=int(fit.placement.n_chips),
        peak_use=peak,
        network=needs,
        notes=notes,
        processes=processes,
        deployable_on_chip=standard,
    )


def _split_cores(search, hw: NeuromorphicHardware, notes: list[str]) -> list[CoreUse]:
    """The split layout's cores as its block search counts them (every stored W_h copy, state
    and axon tables in the memory column), and a note on the microcode its programs need."""
    from atomspark.mapping.split_cores import MEMORY_NOTE
    from atomspark.mapping.split_microcode import instruction_cost

    cpc = hw.limits.cores_per_chip
    total = sum(c.microcode_instructions for c in search.costs)
    cost = instruction_cost(hw)
    notes.append(f"split layout memory: {MEMORY_NOTE}")
    notes.append(
        f"split layout microcode: {total} instructions per model step, "
        f"{total * cost['energy_j']:.3g} J ({cost['derivation']})"
    )
    return [CoreUse(c.core, c.core // cpc, c.compartments, c.synapses, c.memory_bytes,
                    c.fan_in_axons, c.fan_out_axons) for c in search.costs]  # fmt: skip


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
