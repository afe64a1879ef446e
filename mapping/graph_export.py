"""A simulator Graph as a networkx DiGraph of units, for inspection and graph algorithms."""

from __future__ import annotations

import networkx as nx
import numpy as np
from atomspark.sim.core import AtomsparkError
from atomspark.sim.graph import Graph


def to_networkx(graph: Graph) -> nx.DiGraph:
    """One node per unit (key `(population, index)`, attributes population, index, unit_model,
    global_index) and one edge per synapse (attributes weight, delay, channel, projection).
    Parallel synapses between the same two units (from two projections) are summed in `weight`
    and counted in `n_synapses`."""
    if not isinstance(graph, Graph):
        raise AtomsparkError(f"graph: expected a Graph, got {type(graph).__name__}")
    g = nx.DiGraph(name="atomspark graph")
    for pop, offset in zip(graph.populations, graph.offsets):
        model = type(pop.params).__name__
        g.add_nodes_from(
            (
                (pop.name, i),
                {
                    "population": pop.name,
                    "index": i,
                    "unit_model": model,
                    "global_index": int(offset + i),
                },
            )
            for i in range(pop.size)
        )
    for k, proj in enumerate(graph.projections):
        src = np.repeat(np.arange(len(proj.indptr) - 1), np.diff(proj.indptr))
        for s, t, w, d in zip(src, proj.indices, proj.data, proj.delay):
            a, b = (proj.source, int(s)), (proj.target, int(t))
            if g.has_edge(a, b):
                g[a][b]["weight"] += float(w)
                g[a][b]["n_synapses"] += 1
            else:
                g.add_edge(
                    a,
                    b,
                    weight=float(w),
                    delay=int(d),
                    channel=int(proj.channel),
                    projection=k,
                    n_synapses=1,
                )
    return g
