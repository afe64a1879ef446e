"""From a sim Graph to a LavaNet and back, and the plain NumPy reference run of a LavaNet.

Outputs per population and step: spikes (LIF), code changes dg (VN), and for vector-payload
units (RSGN nodes) two records: the sent payloads x_j = alpha_j h_j flattened to (N * d,) under
the population's name, and the activations alpha (N,) under `alpha_record(name)`; in fixed point
these are the integer unit's Q.10 payloads and Q.12 activations (sim/units/rsgn_fixed.py). Every
model-specific step is its LavaUnit's (mapping/lava/units/).

The reference run follows Lava's LoihiProtocol timing exactly: a connection sends at step t what
it accumulated from its source's output at step t-1, which is the engine's delay-1 projection.
In fixed point each connection's output wraps to 32 bits (Lava's int32 port), as the engine's
per-channel accumulators of an integer VN population do (integer RSGN nodes wrap their summed
message themselves).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from atomspark.mapping.lava.net import LavaConnection, LavaNet, LavaPopulation
from atomspark.mapping.lava.units import lava_unit, lava_unit_of_params
from atomspark.sim.core import AtomsparkError
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.unit_model import model_of
from atomspark.sim.units.vn_fixed import lava_sparse_accumulate, lava_weight_mantissas


def from_graph(graph: Graph) -> LavaNet:
    """Translate a sim Graph; raises an AtomsparkError for anything Lava cannot run identically."""
    if not isinstance(graph, Graph):
        raise AtomsparkError(f"graph: expected an atomspark.sim.graph.Graph, got {type(graph)}")
    pops = [lava_unit_of_params(p.params).describe(p.name, p.size, p.params)
            for p in graph.populations]  # fmt: skip
    conns = [_connection(graph, proj) for proj in graph.projections]
    net = LavaNet(pops, conns)
    _ = net.arithmetic
    return net


def _connection(graph: Graph, proj: Projection) -> LavaConnection:
    label = f"projection {proj.source}->{proj.target}"
    if proj.delay.size and np.any(proj.delay != 1):
        raise AtomsparkError(
            f"{label} delays: Lava's Sparse delivers after exactly one step; only delay 1 is "
            f"exported, got delays in [{proj.delay.min()}, {proj.delay.max()}]"
        )
    tgt = graph.population(proj.target)
    target_unit = lava_unit_of_params(tgt.params)
    if proj.channel != 0 and not target_unit.multi_channel:
        raise AtomsparkError(
            f"{label} channel: {target_unit.process} has one input current (channel 0)"
        )
    n_tgt, n_src = proj.shape
    fan_out = sp.csr_matrix((proj.data, proj.indices, proj.indptr), shape=(n_src, n_tgt))
    weights = sp.csr_matrix(fan_out.T)
    weights.sort_indices()
    if tgt.is_fixed_point:
        weights.data = lava_weight_mantissas(label, weights.data).astype(np.float64)
        if not np.any(weights.data):
            raise AtomsparkError(
                f"{label}: every weight mantissa is 0 (or none is stored), so it would deliver "
                "nothing on the chip; rescale the model before quantising or drop the projection"
            )
        if not target_unit.vector_payload:  # vector units keep stored zeros: they carry flags
            weights.eliminate_zeros()
    graded = model_of(graph.population(proj.source).params).graded
    return LavaConnection(proj.source, proj.target, weights, int(proj.weight_exp), graded)


def output_records(p: LavaPopulation) -> dict[str, int]:
    """The per-step records a population produces on Lava and in reference_run: name -> size."""
    return {name: size for name, (size, _, _) in lava_unit(p).records(p).items()}


def event_counts(net: LavaNet, outputs: dict[str, np.ndarray]) -> dict[str, int]:
    """Events each population sent over a run (a vector event counts once, whatever its payload)."""
    return {p.name: int(np.count_nonzero(lava_unit(p).sent(p, outputs))) for p in net.populations}


def reference_run(net: LavaNet, steps: int) -> dict[str, np.ndarray]:
    """Run `net` in plain NumPy with Lava's timing; returns each record per step, (steps, size):
    spikes (0/1) for LIF, sent code changes dg for VN (the first event of an atom carries its
    whole initial code, so g_sent = cumsum(dg) as in the engine); RSGN: sent payloads
    (steps, N * d) and alpha (steps, N) (see output_records). A vector-payload population's first
    step emits its ignition and updates nothing, as the engine's step 0 and its Process do."""
    units = {p.name: lava_unit(p) for p in net.populations}
    state = {p.name: units[p.name].init_state(p) for p in net.populations}
    dtype = {p.name: np.int64 if p.arithmetic == "fixed" else np.float64 for p in net.populations}
    out = {key: np.zeros((steps, size), dtype[p.name])
           for p in net.populations for key, size in output_records(p).items()}  # fmt: skip
    prev = {p.name: np.zeros(p.output_size, dtype[p.name]) for p in net.populations}
    for t in range(steps):
        a_in = {p.name: np.zeros(p.output_size, dtype[p.name]) for p in net.populations}
        received = {p.name: np.zeros(p.size) for p in net.populations}
        for conn in net.connections:
            src, tgt = net.population(conn.source), net.population(conn.target)
            if units[src.name].vector_payload:
                a_in[tgt.name] += _vector_input(conn, src, tgt, prev[src.name])
                received[tgt.name] += _pattern(conn.weights) @ state[src.name]["sent"]
            elif tgt.arithmetic == "fixed":
                w = conn.weights.astype(np.int64)
                a_in[tgt.name] += lava_sparse_accumulate(w, prev[src.name], conn.weight_exp)[0]
            else:
                a_in[tgt.name] += conn.weights @ prev[src.name]
        for p in net.populations:
            prev[p.name] = units[p.name].step(p, state[p.name], a_in[p.name], received[p.name])
            for key, (_, _, state_key) in units[p.name].records(p).items():
                out[key][t] = prev[p.name] if state_key is None else state[p.name][state_key]
    return out


def _vector_input(conn: LavaConnection, src: LavaPopulation, tgt: LavaPopulation, sent):
    """Per-component sum of the source's d-wide payloads through the per-node weights
    (Lava: a graded Sparse with kron(W^T, I_d))."""
    w = conn.weights.astype(np.int64) if tgt.arithmetic == "fixed" else conn.weights
    return (w @ sent.reshape(src.size, -1)).ravel()


def _pattern(weights: sp.csr_matrix) -> sp.csr_matrix:
    """1 at every stored synapse (zero weights included): who receives an event from whom."""
    return sp.csr_matrix(
        (np.ones(weights.indices.size), weights.indices, weights.indptr), shape=weights.shape
    )


def to_graph(net: LavaNet) -> Graph:
    """The engine Graph that runs `net` (the inverse of from_graph), so that a LavaNet or a
    bundle can be checked against the engine too. Multi-channel targets (integer VN) get one
    channel per connection."""
    pops = []
    for p in net.populations:
        n_inputs = sum(c.target == p.name for c in net.connections)
        pops.append(Population(p.name, p.size, lava_unit(p).to_params(p, n_inputs)))
    next_channel: dict[str, int] = {}
    projs = []
    for c in net.connections:
        ch = 0
        if lava_unit(net.population(c.target)).multi_channel:
            ch = next_channel.get(c.target, 0)
            next_channel[c.target] = ch + 1
        projs.append(Projection(c.source, c.target, c.weights, weight_exp=c.weight_exp, channel=ch))
    return Graph(pops, projs)
