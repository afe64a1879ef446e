"""Export a simulator Graph to NIR (Pedersen et al., Nat. Commun. 15:8122, 2024) and read it back.

What NIR can express is exported exactly; the rest is listed in the report, never dropped silently:
- float LIF populations become nir.CubaLIF with the forward-Euler reading of Lava's discrete LIF
  (dt = 1 step): tau_syn = dt/du, tau_mem = dt/dv, w_in = 1/du, r = 1/dv, v_leak = bias/dv, so one
  Euler step of the NIR ODE is exactly the engine's update;
- every projection becomes a nir.Linear (weight n_target x n_source); a uniform delay d > 1 adds a
  nir.Delay of (d - 1) steps in series (the first step is the discretisation itself);
- populations whose unit model has no NIR primitive (VN atoms: soft threshold; RSGN nodes: sigmoid
  and divisive normalisation; fixed-point LIF) become boundary nodes: `<pop>.output` (nir.Input:
  their events enter the graph) and `<pop>.input` (nir.Output: their drive leaves it), so the
  weights and topology around them survive.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from atomspark.sim.core import AtomsparkError
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.unit_model import model_named, model_of
from atomspark.sim.units.lif import LIFParams

if TYPE_CHECKING:  # nir is optional: imported where it is used
    import nir


@dataclass
class NIRExportReport:
    """What was written where, and every feature NIR could not express."""

    path: str | None
    nodes: list[str]
    edges: list[tuple[str, str]]
    unsupported: list[str] = field(default_factory=list)


def projection_name(proj: Projection, index: int) -> str:
    """NIR node name of the index-th projection (unique even for parallel projections)."""
    return f"proj{index}.{proj.source}->{proj.target}"


def projection_matrix(proj: Projection) -> sp.csr_matrix:
    """The projection's weights as (n_target x n_source), the y = W x convention."""
    n_target, n_source = proj.shape
    fan_out = sp.csr_matrix((proj.data, proj.indices, proj.indptr), shape=(n_source, n_target))
    return fan_out.T.tocsr()


def _lif_node(pop: Population, unsupported: list[str]):
    import nir

    p: LIFParams = pop.params
    n = pop.size
    if p.refractory:
        unsupported.append(
            f"{pop.name}: refractory period of {p.refractory} steps (NIR LIF has none)"
        )
    if p.du2 is not None:
        unsupported.append(
            f"{pop.name}: second current channel (du2={p.du2}); exported channel 0 only"
        )
    if p.du == 0 or p.dv == 0:
        unsupported.append(f"{pop.name}: du or dv = 0 is a perfect integrator; not a CubaLIF")
        return None
    bias = np.broadcast_to(np.asarray(p.bias, dtype=np.float64), (n,))
    return nir.CubaLIF(
        tau_syn=np.full(n, 1.0 / p.du),
        tau_mem=np.full(n, 1.0 / p.dv),
        r=np.full(n, 1.0 / p.dv),
        v_leak=bias / p.dv,
        v_threshold=np.full(n, float(p.vth)),
        v_reset=np.full(n, float(p.v_reset)),
        w_in=np.full(n, 1.0 / p.du),
        metadata={"atomspark_population": pop.name, "dt_steps": 1.0},
    )


# unit model name -> its NIR node (the other models leave as boundary nodes)
_NIR_NODES: dict[str, Callable] = {"lif": _lif_node}


def register_nir_node(model_name: str, to_node: Callable) -> None:
    """Export populations of the unit model `model_name` as the NIR node `to_node(population,
    unsupported)` returns (None: a boundary node); the model must be registered."""
    model_named(model_name)  # one-line error for an unknown model
    _NIR_NODES[model_name] = to_node


def to_nir(
    graph: Graph, inputs: tuple[str, ...] = (), outputs: tuple[str, ...] = ()
) -> tuple[nir.NIRGraph, list[str]]:
    """Build the nir.NIRGraph of `graph` and the list of what it could not express.

    inputs: populations whose external input (Engine.run's `inputs`, added to the synaptic
    current of the same step) becomes a graph input `<pop>.ext` (nir.Input); outputs:
    populations whose spikes become a graph output `<pop>.spikes` (nir.Output). NIR consumers
    such as nirtorch need both to run a graph."""
    import nir

    if not isinstance(graph, Graph):
        raise AtomsparkError(f"graph: expected a Graph, got {type(graph).__name__}")
    for name in (*inputs, *outputs):
        graph.population(name)  # one-line error for an unknown name
    nodes: dict = {}
    edges: list[tuple[str, str]] = []
    unsupported: list[str] = []
    src_of: dict[str, str] = {}  # population -> node its events leave from
    dst_of: dict[str, str] = {}  # population -> node its input goes to
    for pop in graph.populations:
        to_node = _NIR_NODES.get(model_of(pop.params).name)
        node = to_node(pop, unsupported) if to_node is not None else None
        if node is not None:
            nodes[pop.name] = node
            src_of[pop.name] = dst_of[pop.name] = pop.name
            continue
        kind = type(pop.params).__name__
        if to_node is None:
            unsupported.append(
                f"{pop.name}: unit model {kind} has no NIR primitive; exported as boundary nodes"
            )
        shape = np.array([pop.size])
        out_name, in_name = f"{pop.name}.output", f"{pop.name}.input"
        meta = {"atomspark_population": pop.name, "atomspark_unit_model": kind}
        nodes[out_name] = nir.Input(input_type={"input": shape}, metadata=meta)
        nodes[in_name] = nir.Output(output_type={"output": shape}, metadata=meta)
        src_of[pop.name], dst_of[pop.name] = out_name, in_name
    for i, proj in enumerate(graph.projections):
        name = projection_name(proj, i)
        nodes[name] = nir.Linear(
            weight=projection_matrix(proj).toarray(),
            metadata={"channel": int(proj.channel), "weight_exp": int(proj.weight_exp)},
        )
        edges.append((src_of[proj.source], name))
        delays = np.unique(proj.delay) if proj.delay.size else np.array([1])
        if delays.size > 1:
            unsupported.append(
                f"{name}: heterogeneous delays {delays.min()}..{delays.max()} "
                "(NIR Delay is per neuron); exported without delay"
            )
        if delays.size == 1 and delays[0] > 1:
            delay_name = f"{name}.delay"
            nodes[delay_name] = nir.Delay(delay=np.full(proj.shape[0], float(delays[0] - 1)))
            edges += [(name, delay_name), (delay_name, dst_of[proj.target])]
        else:
            edges.append((name, dst_of[proj.target]))
        if proj.channel != 0:
            unsupported.append(f"{name}: targets input channel {proj.channel}; NIR has one channel")
    for name in inputs:
        shape = np.array([graph.population(name).size])
        nodes[f"{name}.ext"] = nir.Input(input_type={"input": shape})
        edges.append((f"{name}.ext", dst_of[name]))
    for name in outputs:
        shape = np.array([graph.population(name).size])
        nodes[f"{name}.spikes"] = nir.Output(output_type={"output": shape})
        edges.append((src_of[name], f"{name}.spikes"))
    meta = {"atomspark_unsupported": "\n".join(unsupported), "dt_steps": 1.0}
    return nir.NIRGraph(nodes=nodes, edges=edges, metadata=meta), unsupported


def export_nir(
    graph: Graph,
    path: str | os.PathLike,
    inputs: tuple[str, ...] = (),
    outputs: tuple[str, ...] = (),
) -> NIRExportReport:
    """Write `graph` as a NIR (HDF5) file; the report lists what NIR could not express.
    inputs/outputs: graph input and output ports, as in `to_nir`."""
    import nir

    nir_graph, unsupported = to_nir(graph, inputs, outputs)
    path = os.fspath(path)
    tmp = f"{path}.tmp"
    nir.write(tmp, nir_graph)
    os.replace(tmp, path)
    return NIRExportReport(path, sorted(nir_graph.nodes), list(nir_graph.edges), unsupported)


def read_nir_weights(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Read a NIR file back and return {projection node name: weight matrix}."""
    import nir

    try:
        g = nir.read(os.fspath(path))
    except Exception as exc:  # h5py/nir raise many types for a broken file
        raise AtomsparkError(f"NIR file {path}: unreadable ({exc})") from exc
    return {k: np.asarray(v.weight) for k, v in g.nodes.items() if isinstance(v, nir.Linear)}
