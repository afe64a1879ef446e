"""A profile of a given activity: the counters the event engine would record when a share of each
population's units sends an event every step (the chip-vs-GPU map's points where no engine run
is made, scenarios/compare/map_points.py)."""

from __future__ import annotations

import numpy as np
from atomspark.sim.graph import Graph
from atomspark.sim.profile import Profile


def activity_profile(
    graph: Graph, steps: int, activity: float, update_share: float = 1.0
) -> Profile:
    """Counters of `steps` engine steps in which a share `update_share` of each population's units
    updates (1: every unit, every step) and a share `activity` sends one event to its whole
    fan-out (the event engine's counting: synaptic operations attributed to the sender, payload
    bits per event of its population)."""
    names = [p.name for p in graph.populations]
    sizes = np.array([p.size for p in graph.populations], dtype=np.int64)
    fan_out = np.zeros(len(names))
    for proj in graph.projections:
        fan_out[graph.index[proj.source]] += proj.n_synapses / proj.shape[1]
    bits = np.array([p.params.payload_bits for p in graph.populations], dtype=np.int64)
    events = np.round(activity * sizes).astype(np.int64)
    row = {
        "events": events,
        "synops": np.round(events * fan_out).astype(np.int64),
        "updates": np.round(update_share * sizes).astype(np.int64),
        "active": events,
        "payload_bits": events * bits,
        "wraps": np.zeros_like(sizes),
        "clips": np.zeros_like(sizes),
    }
    counters = {k: np.tile(v, (steps, 1)) for k, v in row.items()}
    units = [np.full(int(s), int(round(activity * steps)), dtype=np.int64) for s in sizes]
    return Profile(names, sizes, steps, unit_events=units, **counters)


def priced_rates(graph: Graph, profiles: list[Profile], steps: list[int]) -> dict:
    """Events and unit updates per unit and step over each profile's first `steps` steps (what
    a chip row stopped there prices; the map carries them)."""
    units, total = graph.total_units, sum(steps)
    count = lambda k: sum(int(getattr(p, k)[:s].sum()) for p, s in zip(profiles, steps))  # noqa: E731
    return {"events_per_unit_step": count("events") / (units * total),
            "updates_per_unit_step": count("updates") / (units * total)}  # fmt: skip
