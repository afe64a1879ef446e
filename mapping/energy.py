"""Energy and latency of a profiled run on a placed neuromorphic network, and of dense work.

Neuromorphic model (per step t, core c; all counts from the engine's Profile):
- synaptic ops land on the core of the target unit; a population's synops at step t are split
  over cores in proportion to where its units' targets sit (weighted by each unit's events);
- every unit placed on a core is serviced every step (as on Loihi): ``active`` units cost an
  active update, the rest of the population an idle update;
- each event costs ``spike_out`` once and one message per destination core: ``spike_local`` plus
  E-W / N-S tile hops on the mesh plus ``chip_hop`` when the destination is on another chip;
- static power for the whole run time: per core in use (``static_scope="shared"``: the fraction
  of the chip the network uses) or for every core of every chip in use (``"device"``: the whole
  chip is held, as a GPU is charged its whole idle power; the default of chip-vs-GPU pricing).
- microcode (`programs`, a ProgramLoad): the instructions a layout's own neuron programs run
  beyond the standard updates (the split RSGN's, mapping/split_microcode.py), per core and step,
  at a per-instruction energy and time.
Time per step = the slowest core's work (synops + updates + spikes out + messages sent +
microcode) + the barrier for the tiles in use (times `barriers_per_step`, the chip time steps one
model step takes: a number, or one per profile step). Hop latency is pipelined in the mesh and
is not added to the step.

Dense model (GPU/CPU): ``dense_cost`` = roofline time max(flops/peak, bytes/bandwidth) plus launch
overhead; energy = flops x E_flop + bytes x E_byte + idle power x time.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import numpy as np
import scipy.sparse as sp
from atomspark.mapping.hardware import DenseHardware, NeuromorphicHardware
from atomspark.mapping.placement import Placement, routes, tile_xy
from atomspark.sim.core import AtomsparkError, require_int, require_positive
from atomspark.sim.profile import Profile

STATIC_SCOPES = ("device", "shared")


@dataclass(frozen=True)
class EnergyBreakdown:
    """Energy per sample (J) by operation class."""

    synaptic_ops: float
    updates_active: float
    updates_idle: float
    spikes: float  # spike generation + within-tile message delivery
    routing: float  # mesh hops and chip crossings
    static: float
    microcode: float = 0.0  # the layout's own programs (ProgramLoad)

    @property
    def total(self) -> float:
        return float(sum(asdict(self).values()))


@dataclass(frozen=True)
class EnergyReport:
    """Energy and latency of one profiled run on `hardware`, normalised per sample."""

    hardware: str
    steps: int
    n_samples: int
    cores_used: int
    chips_used: int
    tiles_used: int
    energy_per_sample_j: float
    breakdown: EnergyBreakdown
    time_per_step_s: float  # mean over steps
    barrier_s: float
    time_per_sample_s: float
    edp_js: float  # energy per sample x time per sample
    static_scope: str = "shared"  # "shared": cores in use; "device": whole chips in use
    chip_steps: int = 0  # chip time steps of the whole run (barriers); 0: not recorded
    microcode_instructions: float = 0.0  # per sample, every core's programs

    @property
    def chip_steps_per_sample(self) -> float:
        return self.chip_steps / self.n_samples

    def to_dict(self) -> dict:
        out = asdict(self)
        out["breakdown"]["total"] = self.breakdown.total
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict())


@dataclass(frozen=True)
class ProgramLoad:
    """Microcode a layout's neuron programs run beyond the standard updates: instructions per
    profile step and core (steps, cores), and the energy and time of one instruction."""

    instructions: np.ndarray
    energy_j: float
    time_s: float


@dataclass(frozen=True)
class DenseCost:
    """Energy and roofline time of dense work on a GPU or CPU."""

    hardware: str
    precision: str
    energy_j: float
    time_s: float
    compute_time_s: float
    memory_time_s: float
    overhead_time_s: float
    bound: str  # "compute" or "memory"

    def to_dict(self) -> dict:
        return asdict(self)


def core_step_counts(
    profile: Profile,
    placement: Placement,
    adjacency: sp.spmatrix,
    hw: NeuromorphicHardware,
    ports: tuple[str, ...] = (),
) -> dict:
    """Per-step, per-core counts (steps, cores) of synops, active/idle updates, events, messages.

    Also returns per-step totals of E-W hops, N-S hops and chip crossings. `ports`: populations
    that are another output port of compartments counted elsewhere (their own spikes, synapses
    and routes, but no updates of their own).
    """
    r = routes(adjacency, placement, hw)
    sizes = profile.population_sizes
    n = int(sizes.sum())
    if placement.unit_core.shape != (n,):
        raise AtomsparkError(
            f"placement: covers {placement.unit_core.shape[0]} units, profile has {n}"
        )
    pop_of_unit = np.repeat(np.arange(len(sizes)), sizes)
    unit_events = np.concatenate(profile.unit_events).astype(float) if n else np.zeros(0)
    P, C = len(sizes), placement.n_cores
    # share of population p's units / events / synops on each core
    members = sp.csr_matrix((np.ones(n), (pop_of_unit, placement.unit_core)), shape=(P, C))
    unit_share = _normalise_rows(members.toarray())
    by_events = sp.csr_matrix((unit_events, (pop_of_unit, placement.unit_core)), shape=(P, C))
    event_share = _normalise_rows(by_events.toarray(), fallback=unit_share)
    pop_mat = sp.csr_matrix((np.ones(n), (pop_of_unit, np.arange(n))), shape=(P, n))
    synop_mass = (pop_mat @ sp.diags(unit_events) @ r.targets_per_core).toarray()
    fan_mass = (pop_mat @ r.targets_per_core).toarray()  # if a population never fired
    synop_share = _normalise_rows(synop_mass, fallback=_normalise_rows(fan_mass, unit_share))
    # per-event route figures of each population, weighted by unit events
    per_event = {}
    for key in ("dest_cores", "hops_east_west", "hops_north_south", "remote_chip_cores"):
        v = getattr(r, key)
        weighted = np.bincount(pop_of_unit, weights=unit_events * v, minlength=P)
        plain = np.bincount(pop_of_unit, weights=v, minlength=P) / np.maximum(sizes, 1)
        tot = np.bincount(pop_of_unit, weights=unit_events, minlength=P)
        per_event[key] = np.where(tot > 0, weighted / np.where(tot > 0, tot, 1), plain)
    events = profile.events.astype(float)
    serviced = np.array([name not in ports for name in profile.population_names])
    active = np.where(serviced, np.minimum(profile.active, sizes), 0).astype(float)
    idle = np.where(serviced, sizes - active, 0).astype(float)
    msgs_pop = events * per_event["dest_cores"]
    return {
        "synops": profile.synops.astype(float) @ synop_share,
        "active": active @ unit_share,
        "idle": idle @ unit_share,
        "events": events @ event_share,
        "messages": msgs_pop @ event_share,
        "hops_east_west": events @ per_event["hops_east_west"],
        "hops_north_south": events @ per_event["hops_north_south"],
        "chip_crossings": events @ per_event["remote_chip_cores"],
    }


def estimate_energy(
    profile: Profile,
    placement: Placement,
    adjacency: sp.spmatrix,
    hw: NeuromorphicHardware,
    n_samples: int = 1,
    static_scope: str = "shared",
    barriers_per_step: int | np.ndarray = 1,
    programs: ProgramLoad | None = None,
    ports: tuple[str, ...] = (),
) -> EnergyReport:
    """Energy per sample with its breakdown, time per step and sample, and energy-delay product
    (static_scope and barriers_per_step: module docstring; ports: core_step_counts)."""
    if static_scope not in STATIC_SCOPES:
        raise AtomsparkError(
            f"static_scope: choose one of {', '.join(STATIC_SCOPES)}, got {static_scope!r}"
        )
    if not isinstance(hw, NeuromorphicHardware):
        raise AtomsparkError(
            f"hardware {getattr(hw, 'name', hw)!r} is not neuromorphic: use dense_cost for it"
        )
    if not isinstance(profile, Profile):
        raise AtomsparkError(f"profile: expected an engine Profile, got {type(profile).__name__}")
    if not isinstance(placement, Placement):
        raise AtomsparkError(f"placement: expected a Placement, got {type(placement).__name__}")
    n_samples = require_int("n_samples", n_samples, minimum=1)
    barriers = _barriers(barriers_per_step, profile.steps)
    k = core_step_counts(profile, placement, adjacency, hw, ports)
    e, t = hw.energy, hw.time
    used = np.unique(placement.unit_core)
    tx, ty = tile_xy(used, hw)
    chips = used // placement.cores_per_chip
    tile_ids = (chips * hw.limits.mesh_height_tiles + ty) * hw.limits.mesh_width_tiles + tx
    tiles_used = int(np.unique(tile_ids).size)
    core_time = (
        k["synops"] * t.synop
        + k["active"] * t.update_active
        + k["idle"] * t.update_idle
        + k["events"] * t.spike_out
        + k["messages"] * t.spike_local
    )
    instructions = _program_instructions(programs, core_time.shape)
    if programs is not None:
        core_time = core_time + instructions * programs.time_s
    barrier = hw.barrier_time(tiles_used) * barriers
    step_time = (core_time.max(axis=1) if core_time.size else np.zeros(profile.steps)) + barrier
    run_time = float(step_time.sum()) if profile.steps else 0.0
    chips_used = int(np.unique(chips).size)
    static_cores = used.size if static_scope == "shared" else chips_used * hw.limits.cores_per_chip
    run = EnergyBreakdown(
        synaptic_ops=float(k["synops"].sum() * e.synop),
        updates_active=float(k["active"].sum() * e.update_active),
        updates_idle=float(k["idle"].sum() * e.update_idle),
        spikes=float(k["events"].sum() * e.spike_out + k["messages"].sum() * e.spike_local),
        routing=float(
            k["hops_east_west"].sum() * e.hop_east_west
            + k["hops_north_south"].sum() * e.hop_north_south
            + k["chip_crossings"].sum() * e.chip_hop
        ),
        static=float(hw.static_power_per_core_w * static_cores * run_time),
        microcode=float(instructions.sum() * programs.energy_j) if programs is not None else 0.0,
    )
    per_sample = EnergyBreakdown(**{f: v / n_samples for f, v in asdict(run).items()})
    time_per_sample = run_time / n_samples
    return EnergyReport(
        hardware=hw.name,
        steps=int(profile.steps),
        n_samples=n_samples,
        cores_used=int(used.size),
        chips_used=chips_used,
        tiles_used=tiles_used,
        energy_per_sample_j=per_sample.total,
        breakdown=per_sample,
        time_per_step_s=float(step_time.mean()) if profile.steps else 0.0,
        barrier_s=float(barrier.mean()) if profile.steps else 0.0,
        time_per_sample_s=time_per_sample,
        edp_js=per_sample.total * time_per_sample,
        static_scope=static_scope,
        chip_steps=int(barriers.sum()),
        microcode_instructions=float(instructions.sum()) / n_samples,
    )


def _barriers(barriers_per_step, steps: int) -> np.ndarray:
    """Chip time steps (barriers) of each profile step: one number for all, or one per step."""
    if np.ndim(barriers_per_step) == 0:
        return np.full(steps, require_int("barriers_per_step", barriers_per_step, minimum=1))
    out = np.asarray(barriers_per_step)
    if out.shape != (steps,) or not np.issubdtype(out.dtype, np.integer) or np.any(out < 1):
        raise AtomsparkError(f"barriers_per_step: one integer >= 1 per step ({steps})")
    return out.astype(np.int64)


def _program_instructions(programs: ProgramLoad | None, shape: tuple) -> np.ndarray:
    """A ProgramLoad's instructions as (steps, cores) of the run's core counts."""
    if programs is None:
        return np.zeros(shape)
    out = np.asarray(programs.instructions, float)
    if out.shape != shape:
        raise AtomsparkError(f"programs: instructions of shape {out.shape}, expected {shape}")
    return out


def dense_cost(
    flops: float,
    bytes_moved: float,
    hw: DenseHardware,
    precision: str = "fp32",
    n_launches: int = 1,
) -> DenseCost:
    """Roofline time and energy of dense work: max(flops/peak, bytes/bandwidth) + launches.

    Energy = flops x energy_per_flop + bytes x energy_per_byte + idle power x total time. With the
    shipped GPU figures (dynamic energies = (TDP - idle)/peak) a compute-bound kernel at peak draws
    exactly TDP; real sparse, small-batch kernels run below peak, so this is a lower bound.
    """
    if not isinstance(hw, DenseHardware):
        raise AtomsparkError(f"hardware {hw.name!r} is not a GPU/CPU: use estimate_energy for it")
    if precision not in hw.peak_flops:
        raise AtomsparkError(
            f"precision {precision!r} unknown for {hw.name}: choose one of {sorted(hw.peak_flops)}"
        )
    flops = require_positive("flops", flops, allow_zero=True)
    bytes_moved = require_positive("bytes_moved", bytes_moved, allow_zero=True)
    n_launches = require_int("n_launches", n_launches, minimum=0)
    compute = flops / hw.peak_flops[precision]
    memory = bytes_moved / hw.bandwidth_bytes_per_s
    overhead = n_launches * hw.launch_overhead_s
    time = max(compute, memory) + overhead
    energy = (
        flops * hw.energy_per_flop[precision]
        + bytes_moved * hw.energy_per_byte
        + hw.idle_power_w * time
    )
    return DenseCost(
        hardware=hw.name,
        precision=precision,
        energy_j=float(energy),
        time_s=float(time),
        compute_time_s=float(compute),
        memory_time_s=float(memory),
        overhead_time_s=float(overhead),
        bound="compute" if compute >= memory else "memory",
    )


def _normalise_rows(mass: np.ndarray, fallback: np.ndarray | None = None) -> np.ndarray:
    """Rows scaled to sum to 1; an all-zero row takes the fallback's row (or stays zero)."""
    total = mass.sum(axis=1, keepdims=True)
    out = np.divide(mass, total, out=np.zeros_like(mass, dtype=float), where=total > 0)
    if fallback is not None:
        empty = total[:, 0] == 0
        out[empty] = fallback[empty]
    return out
