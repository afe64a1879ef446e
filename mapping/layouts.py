"""How a graph's units become compartments on a chip, and which of these layouts fits.

Scalar units (VN atoms, LIF) are one compartment each. A vector unit of width d (an RSGN node:
state h of length d, internal transform W_h of d x d) has two layouts:

* ``node``: the node's d compartments sit on one core and keep their own copy of W_h there
  (d^2 synapses); compartment k receives compartment k of every in-neighbour, so a core with
  nodes J needs d x |sources of J| input axons.
* ``split``: three kinds of compartments. A[j, k] sums the messages of feature k into node j
  (m_j[k] = sum_i W_ij x_i[k]); the A compartments are packed feature-major, so one core holds
  feature k of many nodes and needs one input axon per source node and feature it holds.
  B[j, :] (node-major, with the node's copy of W_h: d synapses each) computes h_new = W_h m_j;
  R[j] gathers the terms of B[j, :] for the node's norm (alpha and LayerNorm need ||h_new||
  and its moments), exchanges its activation with its inhibition pool and sends the result back
  to B[j, :]. One model step takes PERIOD (5) chip time steps (emit, sum, transform, norm, pool:
  mapping/lava/rsgn_split.py, the layout the Lava export writes), so five barriers per step.
  Traffic is the export's channels (rsgn_split.channels): per update each A compartment sends
  m to its node's d B compartments through every W_h part; each B compartment sends the norm's
  terms to R (h_new^2, z, z^2; fixed point in 24-bit parts); R sends its control values to its
  d B compartments and its activation (two parts in fixed point) to its pool's members; each
  sending node's R sends its flag along W beside the d payloads of its B compartments. The three
  programs' microcode is priced per core and model step, and a sample's ignition takes one chip
  step (mapping/costs.split_schedule). Its cores are the block search's of
  mapping/split_cores.py (every connection, every stored W_h copy, neuron state and axon tables
  counted), not the packer's; `Fit.split` keeps that search (per-core costs, microcode).

`fit_graph` tries the layouts in order (node first, then split) and returns the first that
fits, with what it took, every core's use (mapping/core_fit.py) and why the others did not fit.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp
from atomspark.mapping.core_fit import CoreUse, core_use, over_limit
from atomspark.mapping.hardware import NeuromorphicHardware
from atomspark.mapping.lava.rsgn_split import CONTROL, PERIOD, part_channels
from atomspark.mapping.placement import (
    Placement,
    block_problem,
    distinct_sources,
    pack_spread,
    unit_groups,
)
from atomspark.sim.core import AtomsparkError
from atomspark.sim.graph import Graph
from atomspark.sim.profile import Profile

LAYOUTS = ("node", "split")


@dataclass(frozen=True)
class CompartmentMap:
    """Compartment-level network of one layout: what the packer places and the energy model
    prices. blocks[c]: compartments with the same block share a core. groups: packing order."""

    layout: str
    width: int
    adjacency: sp.csr_matrix
    synapses: np.ndarray
    blocks: np.ndarray
    groups: list[np.ndarray]
    barriers_per_step: int
    took: str
    to_profile: object = field(repr=False)  # (node Profile) -> compartment Profile


@dataclass(frozen=True)
class Fit:
    """The chosen layout's placement and per-core use, or why no layout fits."""

    fits: bool
    layout: str | None
    took: str
    placement: Placement | None
    cmap: CompartmentMap | None
    cores: list[CoreUse]
    problems: list[str]
    tried: list[dict]
    split: object = None  # mapping/split_cores.SplitSearch of the split layout
    candidates: tuple = ()  # every placement that fits, packed to spread (placement.pack_spread)

    def summary(self) -> dict:
        """JSON-ready: fits, cores, chips, layout, what it took, why others failed."""
        return {
            "fits": self.fits,
            "layout": self.layout,
            "cores": len(self.cores) if self.fits else None,
            "chips": int(self.placement.n_chips) if self.fits else None,
            "took": self.took,
            "problems": self.problems,
            "tried": self.tried,
        }


def unit_width(graph: Graph) -> int:
    """Compartments per unit in the node layout: the payload length of vector units, else 1."""
    if not isinstance(graph, Graph):
        raise AtomsparkError(f"graph: expected an engine Graph, got {type(graph).__name__}")
    widths = {int(np.prod(p.params.payload_shape or (1,))) for p in graph.populations}
    if len(widths) != 1:
        raise AtomsparkError(f"graph: mixed payload widths {sorted(widths)} are not priced")
    return widths.pop()


def macs_per_update(graph: Graph) -> np.ndarray:
    """Internal multiply-adds of one update of each population's units (RSGN: d^2 for W_h)."""
    return np.array([p.params.macs_per_update for p in graph.populations])


def _node_profile_sums(profile: Profile) -> dict:
    return {k: getattr(profile, k).sum(axis=1) for k in ("events", "synops", "updates", "active")}


def _profile(names, sizes, steps, counters: dict, unit_events: list) -> Profile:
    zero = np.zeros((steps, len(names)), dtype=np.int64)
    cols = {k: np.stack(v, axis=1).astype(np.int64) for k, v in counters.items()}
    return Profile(
        list(names), np.asarray(sizes), steps,
        events=cols["events"], synops=cols["synops"], updates=cols["updates"],
        active=cols["active"], payload_bits=zero, wraps=zero, clips=zero, unit_events=unit_events,
    )  # fmt: skip


def node_layout(graph: Graph, hw: NeuromorphicHardware, strategy: str, unit_events, positions):
    """Each unit's compartments on one core, with internal weights (module docstring)."""
    w, macs = unit_width(graph), macs_per_update(graph)
    node_adj = graph.unit_adjacency()
    in_degree = np.diff(node_adj.tocsc().indptr).astype(np.int64)
    per_node = np.repeat(macs, graph.sizes)
    _refuse_blocks_beyond_a_core(node_adj, w, in_degree + per_node // w, hw)
    node_hw = replace(
        hw, limits=replace(hw.limits, units_per_core=max(hw.limits.units_per_core // w, 1))
    )
    node_events = None if unit_events is None else np.asarray(unit_events).reshape(-1, w).sum(1)
    groups, _, _ = unit_groups(
        node_adj, node_hw, strategy, node_events, in_degree * w + per_node, positions
    )
    expand = np.arange(w)
    comp_groups = [(np.asarray(g)[:, None] * w + expand).ravel() for g in groups]
    adjacency = (
        node_adj if w == 1 else sp.kron(node_adj, sp.identity(w, format="csr"), format="csr")
    )
    synapses = np.repeat(in_degree + per_node // w, w).astype(float)

    def to_profile(profile: Profile) -> Profile:
        if w == 1 and not macs.any():
            return profile
        return Profile(
            profile.population_names, profile.population_sizes * w, profile.steps,
            events=profile.events * w, synops=profile.synops * w + profile.updates * macs[None, :],
            updates=profile.updates * w, active=profile.active * w,
            payload_bits=profile.payload_bits, wraps=profile.wraps, clips=profile.clips,
            unit_events=[np.repeat(u, w) for u in profile.unit_events],
        )  # fmt: skip

    took = (
        "one compartment per unit"
        if w == 1
        else f"each node's {w} compartments on one core with its own copy of W_h ({w * w} synapses)"
    )
    blocks = np.repeat(np.arange(graph.total_units), w)
    return CompartmentMap("node", w, adjacency, synapses, blocks, comp_groups, 1, took, to_profile)


def _refuse_blocks_beyond_a_core(node_adj, w: int, synapses_per_compartment, hw) -> None:
    """The packer's first check (placement._check_blocks_fit: each node's w compartments fit an
    empty core), made on the node graph before the compartment graph (w times larger) and the
    packing groups are built: node j's block has w x (distinct in-neighbours of j) sources,
    w x its compartment's synapses and w compartments. The same verdict and words."""
    adj = sp.csr_matrix(node_adj)
    adj.eliminate_zeros()
    n = adj.shape[0]
    problem = block_problem(
        w * distinct_sources(adj, np.arange(n), n),
        w * np.asarray(synapses_per_compartment, dtype=float),
        np.full(n, w),
        "unit" if w == 1 else "block",
        hw,
    )
    if problem:
        raise AtomsparkError(problem)


def split_layout(graph: Graph, hw: NeuromorphicHardware, strategy: str, unit_events, positions):
    """Feature-sliced message sums (A), node-major transforms (B) and norms (R): module doc."""
    _require_transform(graph)
    w = unit_width(graph)
    node_adj = sp.csr_matrix(graph.unit_adjacency())
    n = graph.total_units
    a0, b0, r0 = 0, n * w, 2 * n * w
    k, j = np.arange(w), np.arange(n)
    coo = node_adj.tocoo()
    blocks_e = []  # (rows, cols) of each kind of edge
    # B[i, k] -> A[j, k] for every node edge i -> j and feature k
    blocks_e.append(
        ((b0 + coo.row[:, None] * w + k).ravel(), (a0 + k * n + coo.col[:, None]).ravel())
    )
    # A[j, k] -> B[j, k'] (W_h), B[j, k] -> R[j], R[j] -> B[j, k]
    jj, kk, kp = np.meshgrid(j, k, k, indexing="ij")
    blocks_e.append(((a0 + kk * n + jj).ravel(), (b0 + jj * w + kp).ravel()))
    jb, kb = np.meshgrid(j, k, indexing="ij")
    blocks_e.append(((b0 + jb * w + kb).ravel(), np.repeat(r0 + j, w)))
    blocks_e.append((np.repeat(r0 + j, w), (b0 + jb * w + kb).ravel()))
    # R[i] -> R[j]: the sender flag along W, and the pool exchange (member i of j's pool)
    split = split_cost_model(graph)
    pool = split.pool.tocoo()  # row j: the members whose activation enters j's pool sum
    blocks_e.append((r0 + coo.row, r0 + coo.col))
    blocks_e.append((r0 + pool.col, r0 + pool.row))
    rows = np.concatenate([r for r, _ in blocks_e])
    cols = np.concatenate([c for _, c in blocks_e])
    size = 2 * n * w + n
    adjacency = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(size, size))
    synapses = np.diff(adjacency.tocsc().indptr).astype(float)
    node_hw = replace(
        hw, limits=replace(hw.limits, units_per_core=max(hw.limits.units_per_core // (w + 1), 1))
    )
    node_events = None if unit_events is None else np.asarray(unit_events).reshape(-1, w).sum(1)
    node_groups, _, _ = unit_groups(
        node_adj, node_hw, strategy, node_events, np.full(n, w * w + 2.0 * w), positions
    )
    a_order = np.arange(n * w)  # feature-major: feature 0 of every node, then feature 1, ...
    b_groups = [
        np.concatenate([np.r_[b0 + u * w + k, r0 + u] for u in np.asarray(g)]) for g in node_groups
    ]
    blocks = np.concatenate([np.arange(n * w), n * w + np.repeat(j, w), n * w + j])

    ch = {key: len(v) for key, v in part_channels(split).items()}  # values sent per channel
    terms, per_node_pool = ch["hn2"] + ch["z"] + ch["z2"], pool.nnz / max(n, 1)
    to_r = len(CONTROL) + ch["pool"]  # per update: control to B, pool exchange

    def to_profile(profile: Profile) -> Profile:
        s, T = _node_profile_sums(profile), profile.steps
        ev = np.concatenate(profile.unit_events) if profile.unit_events else np.zeros(n)
        upd = s["updates"]
        counters = {
            "events": [upd * w, s["events"] * w + upd * w * terms, upd * to_r + s["events"]],
            "synops": [
                upd * w * w * ch["wh"],
                s["synops"] * w + upd * w * terms,
                upd * w * len(CONTROL) + np.rint(upd * per_node_pool) * ch["pool"] + s["synops"],
            ],
            "updates": [s["updates"] * w, s["updates"] * w, s["updates"]],
            "active": [s["active"] * w, s["active"] * w, s["active"]],
        }
        a_events = np.tile(ev, w)  # feature-major: A[j, k] at k * n + j
        units = [a_events, np.repeat(ev, w) * 2, ev]
        return _profile(("A", "B", "R"), (n * w, n * w, n), T, counters, units)

    took = (
        f"split: feature k of many nodes per core for the message sums ({n * w} compartments), "
        f"each node's W_h transform ({w} compartments, {w * w} synapses per W_h part) and norm "
        f"(1) on a node core; {PERIOD} chip time steps per model step; the programs' microcode "
        "priced per core (mapping/split_microcode.py)"
    )
    return CompartmentMap(
        "split", w, adjacency, synapses, blocks, [a_order, *b_groups], PERIOD, took, to_profile
    )


def _require_transform(graph: Graph) -> None:
    w, macs = unit_width(graph), macs_per_update(graph)
    if w == 1 or np.any(macs != w * w):
        raise AtomsparkError("split layout: needs vector units with a d x d internal transform")


def split_cost_model(graph: Graph):
    """The SplitModel (mapping/lava/rsgn_split.py) that costing needs: W's synapse pattern, the
    pools, the arithmetic and whether W_h has two parts (no node parameters)."""
    from atomspark.mapping.lava.rsgn_split import SplitModel

    (pop,) = graph.populations
    par = pop.params
    n, w = graph.total_units, unit_width(graph)
    adj = sp.csr_matrix(graph.unit_adjacency())
    w_t = sp.csr_matrix(adj.T)
    w_t.data = np.ones_like(w_t.data)
    pool = sp.csr_matrix(par.pool)
    node = {"wh_lo": True} if hasattr(par, "w_h_lo_mant") else {}
    arithmetic = "fixed" if pop.is_fixed_point else "float"
    return SplitModel(arithmetic, n, w, w_t, pool, bool(par.event_rule), node)


def split_placement(search, n: int, w: int, hw: NeuromorphicHardware) -> Placement:
    """The split layout's compartments (A, then B, then R as in split_layout) on the cores of a
    block search's assignment (mapping/split_cores.assign_cores)."""
    from atomspark.mapping.split_cores import assign_cores

    offset = {"sum": 0, "transform": n * w, "norm": 2 * n * w}
    unit_core = np.empty(2 * n * w + n, np.int64)
    for c in assign_cores(n, w, search.blocks, search.order):
        unit_core[offset[c["kind"]] + c["index"]] = c["core"]
    n_cores = int(unit_core.max()) + 1
    cpc = hw.limits.cores_per_chip
    return Placement(unit_core, n_cores, max(-(-n_cores // cpc), 1), cpc, "split-search")


def _split_fit(graph: Graph, hw: NeuromorphicHardware):
    """The split layout's block search (mapping/split_cores.py): its placement and search, or an
    AtomsparkError saying plainly why no block size fits."""
    from atomspark.mapping.split_cores import search_blocks

    search = search_blocks(split_cost_model(graph), hw)
    if not search.fits:
        raise AtomsparkError("no block size fits: " + "; ".join(search.problems))
    placement = split_placement(search, graph.total_units, unit_width(graph), hw)
    if placement.n_chips > hw.limits.chips_per_board:
        raise AtomsparkError(
            f"needs {placement.n_cores} cores, more than {hw.limits.chips_per_board} chips hold"
        )
    return placement, search


def fit_graph(
    graph: Graph,
    hw: NeuromorphicHardware,
    layout: str = "auto",
    unit_events: np.ndarray | None = None,
    strategy: str = "auto",
    positions: np.ndarray | None = None,
) -> Fit:
    """Place `graph` on `hw` in the first layout that fits ("auto": node, then split for vector
    units with a transform); `unit_events`: node-layout compartment events (traffic weights)."""
    if layout != "auto" and layout not in LAYOUTS:
        raise AtomsparkError(
            f"layout {layout!r} unknown: choose auto or one of {', '.join(LAYOUTS)}"
        )
    if strategy == "auto":
        strategy = "locality" if positions is not None else "partition"
    w = unit_width(graph)
    transform = w > 1 and bool(np.all(macs_per_update(graph) == w * w))
    order = [layout] if layout != "auto" else (["node", "split"] if transform else ["node"])
    tried = []
    for name in order:
        search = None
        try:
            if name == "split":  # the block search first: it may refuse before the graph is built
                _require_transform(graph)
                placement, search = _split_fit(graph, hw)
                placements = [placement]
                cmap = split_layout(graph, hw, strategy, unit_events, positions)
            else:
                cmap = node_layout(graph, hw, strategy, unit_events, positions)
                placements, spread = pack_spread(
                    cmap.groups, cmap.adjacency, cmap.synapses, hw, strategy, cmap.blocks
                )
                if not placements:
                    raise AtomsparkError(spread[0])
                placement = placements[0]
        except AtomsparkError as exc:
            tried.append({"layout": name, "fits": False, "problem": str(exc)})
            continue
        cores = core_use(placement.unit_core, cmap.adjacency, cmap.synapses, hw)
        problems = over_limit(cores, hw)
        tried.append({"layout": name, "fits": not problems, "cores": len(cores)})
        if not problems:
            return Fit(
                True, name, cmap.took, placement, cmap, cores, [], tried, search, tuple(placements)
            )
    problems = [f"{t['layout']} layout: {t.get('problem', 'over a core limit')}" for t in tried]
    return Fit(False, None, "no layout fits", None, None, [], problems, tried)
