"""An imported NIR graph on Lava: its closed graph (networks/nir_closed.py) as a LavaNet whose
inputs are spike sources, in float or Loihi fixed point, with the quantisation report and the
check on Lava.

* Float: every neuron population is lava.proc.lif's LIF with the engine's parameters, every
  projection a Sparse, every source (the NIR Inputs and the biases' `drives`) a RingBuffer that
  streams its spike train.
* Fixed point: `quantize_lif_graph` at one scale for the whole graph (weight units per float
  unit: 254 / the largest |weight|, so the largest weight keeps 8 bits); a unit that never fires
  (NIR LI and Integrator, the voltage readouts) gets Loihi's largest threshold; initial voltages
  are scaled as the threshold is (2**6 * scale); the relays become the integer relay.
* `quantization_report`: float and fixed-point engine runs on the same input, per NIR neuron
  node on the producer's clock: spikes of each, the entries that differ, and for readouts the
  largest voltage difference relative to the float readout's largest |v|.
* `verify_on_lava`: the bundle run on Lava's Loihi2SimCfg against the engine running the same
  closed graph (float or fixed point) and against the NumPy reference of Lava's timing: the
  spike rasters of every population, entry by entry.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from atomspark.mapping.lava.bundle import from_graph, reference_run
from atomspark.mapping.lava.net import LavaNet
from atomspark.mapping.lava.units.source import FIXED_RELAY, source_population
from atomspark.mapping.quantize import quantize_lif_graph
from atomspark.networks.nir_closed import ClosedNir
from atomspark.networks.nir_conventions import NEVER
from atomspark.sim import fixed_point as fx
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population

LIF_VTH_MAX = fx.BIT_RANGES["vth"][1]


@dataclass(frozen=True)
class NirLava:
    """The LavaNet of a closed NIR graph and the engine graph it equals (float or fixed)."""

    closed: ClosedNir
    graph: Graph
    net: LavaNet
    scale: float | None  # fixed point: integer weight units per float unit


def require_lava_lif(closed: ClosedNir) -> None:
    """One line naming the NIR node whose neurons Lava's LIF cannot run."""
    nodes = {pop: node for node, pop in closed.nir.neurons.items()}
    for p in closed.graph.populations:
        if p.name in nodes and (p.params.v_reset != 0 or p.params.refractory):
            raise AtomsparkError(
                f"NIR node {nodes[p.name]!r}: v_reset = {p.params.v_reset:g}; Lava's LIF resets "
                "v to 0 (a Lava export needs v_reset 0)"
            )


def nir_lava(closed: ClosedNir, fixed: bool) -> NirLava:
    """The Lava form of `closed` (float, or fixed point at quantisation_scale)."""
    require_lava_lif(closed)
    scale = None
    graph = closed.graph
    if fixed:
        scale = quantization_scale(graph)
        graph = _fixed_graph(closed, scale)
    net = from_graph(graph)
    arithmetic = "fixed" if fixed else "float"
    pops = [source_population(p.name, closed.sources[p.name], arithmetic)
            if p.name in closed.sources else p for p in net.populations]  # fmt: skip
    return NirLava(closed, graph, LavaNet(pops, net.connections), scale)


def quantization_scale(graph: Graph) -> float:
    """Integer weight units per float unit: the largest |weight| becomes 254."""
    wmax = max((float(np.abs(p.data).max(initial=0)) for p in graph.projections), default=0.0)
    return 254.0 / wmax if wmax > 0 else 1.0


def _fixed_graph(closed: ClosedNir, scale: float) -> Graph:
    g = closed.graph
    pops = []
    for p in g.populations:  # sources become FIXED_RELAY below; readouts never fire
        if p.name in closed.sources:
            p = Population(p.name, p.size, replace(p.params, dv=0.0))
        elif p.params.vth >= NEVER:
            p = Population(p.name, p.size, replace(p.params, vth=LIF_VTH_MAX / scale))
        pops.append(p)
    q = quantize_lif_graph(Graph(pops, g.projections), scale)
    pops = []
    for p, fl in zip(q.populations, g.populations):
        if p.name in closed.sources:
            pops.append(Population(p.name, p.size, FIXED_RELAY))
            continue
        v0 = np.asarray(fl.params.init_state(p.size)["v"], np.float64)
        v_init = np.round(v0 * scale * 2**fx.VTH_SHIFT).astype(np.int64)
        if np.abs(v_init).max(initial=0) > fx.V_LIMIT:
            raise AtomsparkError(f"population {p.name!r}: its initial v does not fit 24 bits")
        pops.append(Population(p.name, p.size, replace(p.params, v_init=v_init)))
    return Graph(pops, q.projections)


def _run(closed: ClosedNir, graph: Graph) -> tuple[dict, dict]:
    eng = Engine(graph)
    record = tuple((pop, "v") for pop in closed.nir.neurons.values())
    eng.run(closed.total, inputs=closed.sources, record=record, record_events=True)
    spikes, v = {}, {}
    for node, pop in closed.nir.neurons.items():
        o = closed.nir.offsets[pop]
        r = np.zeros((closed.total, graph.population(pop).size))
        t, u = eng.event_log[pop]
        r[t, u] = 1.0
        spikes[node] = r[o : o + closed.steps]
        v[node] = np.asarray(eng.traces[(pop, "v")][o : o + closed.steps], np.float64)
    return spikes, v


def quantization_report(nl: NirLava) -> dict:
    """Float vs fixed-point engine on the same input, per NIR neuron node (module doc)."""
    if nl.scale is None:
        raise AtomsparkError("quantization_report: the export is not fixed point")
    s_float, v_float = _run(nl.closed, nl.closed.graph)
    s_fixed, v_fixed = _run(nl.closed, nl.graph)
    nodes = {}
    total = same = 0
    for node, pop in nl.closed.nir.neurons.items():
        fires = nl.closed.nir.fires[pop]
        differ = int(np.count_nonzero(s_float[node] != s_fixed[node]))
        row = {"population": pop, "fires": fires, "spikes_float": int(s_float[node].sum()),
               "spikes_fixed": int(s_fixed[node].sum()), "spikes_differ": differ,
               "entries": int(s_float[node].size)}  # fmt: skip
        if fires:
            total += s_float[node].size
            same += s_float[node].size - differ
        else:
            v_back = v_fixed[node] / (nl.scale * 2**fx.VTH_SHIFT)
            ref = max(float(np.abs(v_float[node]).max(initial=0)), 1e-300)
            row["v_max_rel_error"] = float(np.abs(v_back - v_float[node]).max(initial=0) / ref)
        nodes[node] = row
    weights = {}
    for pf, pq in zip(nl.closed.graph.projections, nl.graph.projections):
        w = np.abs(pf.data).max(initial=0)
        back = _dense(pq) * 2.0**pq.weight_exp / nl.scale
        err = float(np.abs(back - _dense(pf)).max(initial=0))
        weights[f"{pf.source}->{pf.target}"] = {
            "weight_exp": int(pq.weight_exp), "max_rel_error": err / w if w else 0.0,
        }  # fmt: skip
    return {
        "scale": nl.scale,
        "steps": nl.closed.steps,
        "nodes": nodes,
        "projections": weights,
        "spike_agreement": same / total if total else 1.0,
    }


def _dense(proj) -> np.ndarray:
    import scipy.sparse as sp

    n_tgt, n_src = proj.shape
    return sp.csr_matrix((proj.data, proj.indices, proj.indptr), shape=(n_src, n_tgt)).toarray()


def verify_on_lava(nl: NirLava, lava: dict[str, np.ndarray] | None = None) -> dict:
    """Lava (run here unless its outputs are given) against the engine and the NumPy reference
    of Lava's timing: per population, the spike entries that differ (0 passes)."""
    from atomspark.mapping.lava.export import run_lava

    steps = nl.closed.total
    if lava is None:
        lava = run_lava(nl.net, steps)
    engine = nl.closed.run(nl.graph)
    reference = reference_run(nl.net, steps)
    vs_engine, vs_reference, spikes = {}, {}, {}
    for p in nl.net.populations:
        got = lava[p.name] != 0
        vs_engine[p.name] = int(np.count_nonzero(got != (engine[p.name] != 0)))
        vs_reference[p.name] = int(np.count_nonzero(got != (reference[p.name] != 0)))
        spikes[p.name] = int(got.sum())
    passed = not any(vs_engine.values()) and not any(vs_reference.values())
    return {
        "arithmetic": nl.net.arithmetic,
        "steps": steps,
        "passed": passed,
        "lava_spikes": spikes,
        "lava_vs_engine_differ": vs_engine,
        "lava_vs_reference_differ": vs_reference,
        "lava_outputs": lava,
    }


def producer_clock(nl: NirLava, rasters: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Population rasters (e.g. Lava's) as NIR neuron nodes on the producer's clock."""
    return nl.closed.producer_clock({k: np.asarray(v) != 0 for k, v in rasters.items()})
