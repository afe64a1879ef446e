"""Run an imported NIR graph on the event engine and read it back on the producer's clock.

The engine runs `steps + latency` steps (nir_graph.NirGraph.offsets: population n's producer
step t is the engine's step t + offset[n]); the input spikes enter the relay populations at
their own step, the producer's biases enter each target's current from its step 0 on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from atomspark.networks.nir_graph import NirGraph
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.profile import Profile


@dataclass(frozen=True)
class NirRun:
    """Per NIR neuron node, on the producer's clock: spikes and voltage, (steps, n) each."""

    spikes: dict[str, np.ndarray]
    v: dict[str, np.ndarray]
    profile: Profile


def engine_inputs(ng: NirGraph, spikes: dict[str, np.ndarray], steps: int) -> dict:
    """The engine's external inputs for `steps` producer steps: relay spikes and drives."""
    total = steps + ng.latency
    ext: dict[str, np.ndarray] = {}
    for node, pop in ng.inputs.items():
        if node not in spikes:
            raise AtomsparkError(f"input {node!r}: no spikes given (inputs: {sorted(ng.inputs)})")
        x = np.asarray(spikes[node], dtype=np.float64).reshape(steps, -1)
        size = ng.graph.population(pop).size
        if x.shape[1] != size:
            raise AtomsparkError(f"input {node!r}: {x.shape[1]} values per step, needs {size}")
        if np.any((x != 0) & (x != 1)):
            raise AtomsparkError(f"input {node!r}: the engine's inputs are spikes (0 or 1)")
        ext[pop] = np.zeros((total, size))
        ext[pop][:steps] = x
    for d in ng.drives:
        arr = ext.setdefault(
            d.population, np.zeros((total, ng.graph.population(d.population).size))
        )
        arr[d.onset :] += d.value
    return ext


def run_nir(
    ng: NirGraph, spikes: dict[str, np.ndarray], steps: int, engine: Engine | None = None
) -> NirRun:
    """Run from rest for `steps` producer steps; traces of every neuron node."""
    eng = engine if engine is not None else Engine(ng.graph)
    if engine is not None:
        eng.reset()
    total = steps + ng.latency
    record = tuple((pop, "v") for pop in ng.neurons.values())
    prof = eng.run(total, inputs=engine_inputs(ng, spikes, steps), record=record,
                   record_events=True)  # fmt: skip
    out_s, out_v = {}, {}
    for node, pop in ng.neurons.items():
        o = ng.offsets[pop]
        size = ng.graph.population(pop).size
        raster = np.zeros((total, size))
        t, u = eng.event_log[pop]
        raster[t, u] = 1.0
        out_s[node] = raster[o : o + steps]
        out_v[node] = eng.traces[(pop, "v")][o : o + steps]
    return NirRun(out_s, out_v, prof)
