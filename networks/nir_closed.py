"""An imported NIR graph closed over one input: every external input becomes a spike source.

The engine graph of a NIR import (nir_graph.NirGraph) takes two external inputs: the spikes of
each NIR Input node (into its relay population) and the producers' biases (a constant current
into a target's channel 0 from its step `onset` on). A chip, or Lava, runs a network whose only
inputs are spike streams, so the closed form adds one source population, `drives`, with one unit
per bias: unit k spikes at every step from onset_k - 1 on, and a projection (one column per bias,
weights = the bias values, delay 1) delivers the same current at the same steps. Every source
population (the input relays and `drives`) then runs on the engine as a relay fed its spike
train, and on Lava as a spike source process.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from atomspark.networks.nir_graph import RELAY, NirGraph
from atomspark.networks.nir_run import engine_inputs
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection

DRIVES = "drives"


@dataclass(frozen=True)
class ClosedNir:
    """The closed engine graph, each source population's spike train (total steps, size), and
    the import it came from; `steps` producer steps, `total` engine steps (steps + latency)."""

    nir: NirGraph
    graph: Graph
    sources: dict[str, np.ndarray]
    steps: int

    @property
    def total(self) -> int:
        return self.steps + self.nir.latency

    def run(self, graph: Graph | None = None) -> dict[str, np.ndarray]:
        """Each population's spike raster (total, size) on the engine (`graph`: another form of
        the same graph, e.g. its fixed-point one; its sources take 1 per spike)."""
        eng = Engine(graph if graph is not None else self.graph)
        eng.run(self.total, inputs=self.sources, record_events=True)
        rasters = {}
        for p in eng.graph.populations:
            r = np.zeros((self.total, p.size))
            t, u = eng.event_log[p.name]
            r[t, u] = 1.0
            rasters[p.name] = r
        for name, train in self.sources.items():
            if not np.array_equal(rasters[name], train != 0):
                raise AtomsparkError(f"source {name!r}: its relay did not spike as fed")
        return rasters

    def producer_clock(self, rasters: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Rasters of the NIR neuron nodes on the producer's clock, (steps, n) each."""
        out = {}
        for node, pop in self.nir.neurons.items():
            o = self.nir.offsets[pop]
            out[node] = rasters[pop][o : o + self.steps]
        return out


def closed_graph(ng: NirGraph, spikes: dict[str, np.ndarray], steps: int) -> ClosedNir:
    """`ng` with its biases as a `drives` source population, fed `spikes` for `steps` producer
    steps (checked as nir_run.engine_inputs checks them)."""
    ext = engine_inputs(ng, spikes, steps)
    total = steps + ng.latency
    sources = {pop: ext[pop] for pop in ng.inputs.values()}
    g = ng.graph
    pops, projs = list(g.populations), list(g.projections)
    if ng.drives:
        name = DRIVES
        while name in g.index:
            name = "_" + name
        n = len(ng.drives)
        train = np.zeros((total, n))
        for k, d in enumerate(ng.drives):
            train[d.onset - 1 :, k] = 1.0
        pops.append(Population(name, n, RELAY))
        sources[name] = train
        for target in dict.fromkeys(d.population for d in ng.drives):
            size = g.population(target).size
            cols = [k for k, d in enumerate(ng.drives) if d.population == target]
            w = sp.lil_matrix((size, n))
            for k in cols:
                w[:, k] = ng.drives[k].value.reshape(-1, 1)
            projs.append(Projection(name, target, sp.csr_matrix(w), delays=1))
    return ClosedNir(ng, Graph(pops, projs), sources, steps)
