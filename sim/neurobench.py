"""NeuroBench's metrics from an engine run, with NeuroBench's definitions (neurobench 2.3,
`neurobench.metrics`), so atomspark profiles sit beside published NeuroBench results.

- activation_sparsity (workload): zero activations / all activations over every neuron layer,
  step and sample: 1 - events / (units x steps) over the counted populations.
- synaptic_operations (workload), per sample: `effective_acs` (binary spikes) and
  `effective_macs` (graded events) count one operation per (nonzero input, nonzero weight) pair,
  i.e. each event times its source unit's nonzero outgoing weights; `dense` counts every
  connection every step (all inputs and weights taken as nonzero). NeuroBench's bias
  operations are excluded there too.
- connection_sparsity (static): zero weights / all weights of the connection layers. The
  engine's weights are its stored synapses; for an unrolled convolution that is every kernel
  tap at every output position, which differs from NeuroBench's count over the kernel tensor
  only where padding cuts taps off.
- footprint_bytes (static): NeuroBench counts a torch model's parameter and buffer bytes; the
  engine's equivalent is what it stores per synapse (indices, weights, delays), reported as is.
"""

from __future__ import annotations

import numpy as np
from atomspark.sim.core import AtomsparkError, require_int
from atomspark.sim.graph import Graph
from atomspark.sim.profile import Profile


def nonzero_fan_out(proj) -> np.ndarray:
    """Nonzero outgoing weights of each source unit of a projection."""
    counts = np.diff(proj.indptr)
    src = np.repeat(np.arange(counts.size), counts)
    return np.bincount(src, weights=(proj.data != 0), minlength=counts.size)


def neurobench_metrics(
    graph: Graph, profile: Profile, n_samples: int, populations: list[str] | None = None
) -> dict:
    """NeuroBench metrics of one engine run over `n_samples` samples. populations: the neuron
    layers counted for activation sparsity (default: all; leave out pure input relays)."""
    n_samples = require_int("n_samples", n_samples, minimum=1)
    names = list(profile.population_names)
    if names != [p.name for p in graph.populations]:
        raise AtomsparkError("profile: its populations are not the graph's")
    counted = names if populations is None else list(populations)
    unknown = [n for n in counted if n not in names]
    if unknown:
        raise AtomsparkError(f"populations: {unknown} are not in the graph")
    idx = [names.index(n) for n in counted]
    sizes = profile.population_sizes[idx]
    events = profile.events[:, idx].sum()
    activations = float(sizes.sum() * profile.steps)
    acs = macs = 0.0
    dense = zeros = total = stored = 0
    for proj in graph.projections:
        i = names.index(proj.source)
        ops = float(profile.unit_events[i] @ nonzero_fan_out(proj))
        if graph.populations[i].params.payload_bits:
            macs += ops
        else:
            acs += ops
        dense += proj.n_synapses * profile.steps
        zeros += int(np.count_nonzero(proj.data == 0))
        total += proj.n_synapses
        stored += sum(proj.stored_bytes.values())
    return {
        "activation_sparsity": 1.0 - events / activations if activations else 0.0,
        "synaptic_operations": {
            "effective_acs": acs / n_samples,
            "effective_macs": macs / n_samples,
            "dense": dense / n_samples,
        },
        "connection_sparsity": zeros / total if total else 0.0,
        "footprint_bytes": stored,
        "parameter_count": total,
    }


def format_neurobench(m: dict) -> str:
    """One log line."""
    s = m["synaptic_operations"]
    return (
        f"activation sparsity {m['activation_sparsity']:.4f}, synaptic ops/sample "
        f"{s['effective_acs']:.4g} ACs + {s['effective_macs']:.4g} MACs (dense "
        f"{s['dense']:.4g}), connection sparsity {m['connection_sparsity']:.4f}, footprint "
        f"{m['footprint_bytes']:,} B"
    )
