"""Placement of units on neuromorphic cores and chips, and the traffic a placement causes.

Units are indexed globally (populations concatenated). Three strategies share one core packer:
``sequential`` (index order), ``partition`` (recursive Kernighan-Lin bisection of the traffic
graph, networkx 2.8 and 3.x) and ``locality`` (Z-order of unit positions). The packer opens a new
core when the next group would break a per-core limit (units, synaptic memory, input axons);
`blocks` (units that must share a core, e.g. the d compartments of a vector unit) are never split.
Every placement is checked against mapping/core_fit.py, the one test of what a core holds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import networkx as nx
import numpy as np
import scipy.sparse as sp
from atomspark.mapping.core_fit import core_use, over_limit
from atomspark.mapping.hardware import NeuromorphicHardware
from atomspark.mapping.pack_blocks import CoreBudget, Pieces, cut_pieces, pack_pieces
from atomspark.sim.core import AtomsparkError, as_finite_array, require_int

STRATEGIES = ("sequential", "partition", "locality")


@dataclass(frozen=True)
class Placement:
    """unit_core[u] is the global core of unit u; core g sits on chip g // cores_per_chip."""

    unit_core: np.ndarray  # int64 (n,)
    n_cores: int
    n_chips: int
    cores_per_chip: int
    strategy: str

    @property
    def unit_chip(self) -> np.ndarray:
        return self.unit_core // self.cores_per_chip


@dataclass(frozen=True)
class Routes:
    """Per-unit routing summary: one message per (spike, destination core)."""

    targets_per_core: sp.csr_matrix  # (n, n_cores): synapses of unit u on core c
    dest_cores: np.ndarray  # messages per spike of u (distinct destination cores)
    remote_cores: np.ndarray  # destination cores other than u's own
    remote_chip_cores: np.ndarray  # destination cores on another chip
    hops_east_west: np.ndarray  # sum over destinations of E-W tile hops
    hops_north_south: np.ndarray  # sum over destinations of N-S tile hops


@dataclass(frozen=True)
class Traffic:
    """Spike traffic of a placement, weighted by per-unit event counts."""

    messages: float
    cross_core: float
    cross_chip: float
    router_hops: float

    def to_dict(self) -> dict:
        return {k: float(v) for k, v in self.__dict__.items()}


def tile_xy(core: np.ndarray, hw: NeuromorphicHardware) -> tuple[np.ndarray, np.ndarray]:
    """Mesh coordinates (x, y) of the tile holding each global core (same mesh on every chip)."""
    lim = hw.limits
    tile = (np.asarray(core) % lim.cores_per_chip) // lim.cores_per_tile
    return tile % lim.mesh_width_tiles, tile // lim.mesh_width_tiles


def place(
    adjacency: sp.spmatrix,
    hw: NeuromorphicHardware,
    strategy: str = "partition",
    unit_events: np.ndarray | None = None,
    synapse_counts: np.ndarray | None = None,
    positions: np.ndarray | None = None,
    max_chips: int | None = None,
    seed: int = 0,
) -> Placement:
    """Assign every unit to one core within `hw`'s limits (the most packed placement that keeps
    them all, pack_spread).

    adjacency: (n, n) CSR, entry (i, j) != 0 when unit i sends to unit j. unit_events: traffic
    weight per unit (default 1). synapse_counts: synapses stored with each unit (default its
    in-degree). positions: (n, d) coordinates, needed by "locality". max_chips defaults to
    ``hw.limits.chips_per_board``. Raises AtomsparkError naming the broken limit and by how much.
    """
    groups, adj, synapses = unit_groups(
        adjacency, hw, strategy, unit_events, synapse_counts, positions, seed
    )
    placements, problems = pack_spread(
        groups, adj, synapses, hw, strategy, max_chips=max_chips, first_only=True
    )
    if not placements:
        raise AtomsparkError(problems[0])
    return placements[0]


def unit_groups(
    adjacency: sp.spmatrix,
    hw: NeuromorphicHardware,
    strategy: str = "partition",
    unit_events: np.ndarray | None = None,
    synapse_counts: np.ndarray | None = None,
    positions: np.ndarray | None = None,
    seed: int = 0,
) -> tuple[list[np.ndarray], sp.csr_matrix, np.ndarray]:
    """The strategy's packing order: groups of units to keep together where they fit (with the
    checked adjacency and synapse counts)."""
    if not isinstance(hw, NeuromorphicHardware):
        raise AtomsparkError(
            f"hw: placement needs neuromorphic hardware (cores), got {type(hw).__name__}"
        )
    seed = require_int("seed", seed, minimum=0)
    adj = _check_adjacency(adjacency)
    n = adj.shape[0]
    events = _per_unit("unit_events", unit_events, n, np.ones(n))
    in_degree = np.diff(adj.tocsc().indptr).astype(np.int64)
    synapses = _per_unit("synapse_counts", synapse_counts, n, in_degree)
    if strategy == "sequential":
        groups = [np.arange(n)]
    elif strategy == "partition":
        groups = _kl_groups(adj, events, synapses, hw, seed)
    elif strategy == "locality":
        if positions is None:
            raise AtomsparkError("positions: strategy 'locality' needs unit positions (n, d)")
        pos = as_finite_array("positions", positions, ndim=2)
        if pos.shape[0] != n:
            raise AtomsparkError(f"positions: expected {n} rows, got {pos.shape[0]}")
        groups = [np.argsort(_morton_codes(pos), kind="stable")]
    else:
        raise AtomsparkError(
            f"strategy {strategy!r} unknown: choose one of {', '.join(STRATEGIES)}"
        )
    return groups, adj, synapses


def pack(
    groups: list[np.ndarray],
    adjacency: sp.spmatrix,
    synapses: np.ndarray,
    hw: NeuromorphicHardware,
    strategy: str,
    blocks: np.ndarray | None = None,
    max_chips: int | None = None,
    units_cap: int | None = None,
    squeeze: float = 1.0,
) -> Placement:
    """Pack `groups` (in order) onto cores (mapping/pack_blocks.py); `blocks[u]` names the block
    of unit u (units of one block share a core; default: every unit its own block); `units_cap`:
    at most this many units per core (spreads the network over more cores; a block larger than
    the cap gets a core of its own); `squeeze` (<= 1): fill each core's units, memory and input
    axons only to this share, leaving room for what is known only after packing (output axons
    and their table entries). The result is checked against core_fit: AtomsparkError names the
    first broken limit and by how much."""
    max_chips = _max_chips(hw, max_chips)
    net = _network(groups, adjacency, synapses, blocks, hw)
    unit_core = pack_pieces(net.pieces, core_budget(hw, units_cap, squeeze))
    return _checked(net, unit_core, hw, strategy, max_chips)


@dataclass(frozen=True)
class _Network:
    """What packing needs of a network, checked and cut into pieces once (any caps, squeezes)."""

    adj: sp.csr_matrix
    synapses: np.ndarray
    pieces: Pieces


def _max_chips(hw: NeuromorphicHardware, max_chips: int | None) -> int:
    return require_int(
        "max_chips", hw.limits.chips_per_board if max_chips is None else max_chips, 1
    )


def _network(groups, adjacency, synapses, blocks, hw: NeuromorphicHardware) -> _Network:
    adj = _check_adjacency(adjacency)
    n = adj.shape[0]
    synapses = np.asarray(synapses, dtype=float)
    block_of = np.arange(n) if blocks is None else np.asarray(blocks, dtype=np.int64)
    _check_blocks_fit(adj, synapses, block_of, hw)
    return _Network(adj, synapses, cut_pieces(groups, adj, synapses, block_of))


def core_budget(hw: NeuromorphicHardware, units_cap: int | None, squeeze: float) -> CoreBudget:
    """What the packer fills a core with: the core's limits, `units_cap` and `squeeze` applied
    (output axons are checked after packing)."""
    lim = hw.limits
    units = lim.units_per_core if units_cap is None else min(units_cap, lim.units_per_core)
    return CoreBudget(
        units=max(1, int(units * squeeze)),
        synapses=lim.synapses_per_core,
        axons=lim.max_fan_in_axons_per_core * squeeze,
        memory=lim.synaptic_memory_bytes_per_core * squeeze,
        bytes_per_synapse=lim.bytes_per_synapse,
    )


def _checked(
    net: _Network, unit_core: np.ndarray, hw: NeuromorphicHardware, strategy: str, max_chips: int
) -> Placement:
    """The placement of `unit_core` if the board holds its cores and core_fit passes them."""
    n_cores = int(unit_core.max()) + 1 if unit_core.size else 0
    cpc = hw.limits.cores_per_chip
    n_chips = -(-n_cores // cpc)
    if n_chips > max_chips:
        raise AtomsparkError(
            f"network does not fit: needs {n_cores} cores, hardware has {cpc} cores/chip x "
            f"{max_chips} chip(s) = {cpc * max_chips} cores ({strategy} placement)"
        )
    placement = Placement(unit_core, n_cores, max(n_chips, 1), cpc, strategy)
    problems = over_limit(core_use(unit_core, net.adj, net.synapses, hw), hw)
    if problems:
        raise AtomsparkError(f"network does not fit: {problems[0]}")
    return placement


SQUEEZES = (1.0, 0.9, 0.75, 0.5)  # share of a core's budgets the packer fills (pack's squeeze)


def spread_caps(n_units: int, block_size: int, hw: NeuromorphicHardware) -> list[int]:
    """Units-per-core caps from packed to spread: the core's own limit, then halving down to one
    block per core (each cap a candidate placement of the same network on more cores)."""
    cap = min(hw.limits.units_per_core, max(int(n_units), 1))
    caps = [hw.limits.units_per_core]
    while cap > block_size:
        cap = max(block_size, cap // 2)
        caps.append(cap)
    return caps


def pack_spread(
    groups: list[np.ndarray],
    adjacency: sp.spmatrix,
    synapses: np.ndarray,
    hw: NeuromorphicHardware,
    strategy: str,
    blocks: np.ndarray | None = None,
    max_chips: int | None = None,
    first_only: bool = False,
) -> tuple[list[Placement], list[str]]:
    """Every distinct placement from packed to spread (spread_caps) that keeps all per-core
    limits, most packed first, and why the others did not fit: a network that breaks a limit
    packed (e.g. too many output axons on one core) is squeezed (SQUEEZES: each core filled
    less) and spread over more cores, not refused. `first_only`: stop at the most packed.

    The network is checked and cut into pieces once. A cap at or above the most units any core
    took under the same squeeze changes no packing decision (every limit the packer checks
    grows with what a core takes), so that packing is reused, not repeated."""
    try:
        max_chips = _max_chips(hw, max_chips)
        net = _network(groups, adjacency, synapses, blocks, hw)
    except AtomsparkError as exc:
        return [], [str(exc)]
    n = net.adj.shape[0]
    block_of = np.arange(n) if blocks is None else np.asarray(blocks, dtype=np.int64)
    block_size = int(np.bincount(block_of).max()) if n else 1
    placements, problems, seen = [], [], set()
    done: dict[float, tuple[int, Placement | str]] = {}  # squeeze -> (most units, outcome)
    for cap in spread_caps(n, block_size, hw):
        for squeeze in SQUEEZES:
            budget = core_budget(hw, cap, squeeze)
            if squeeze in done and budget.units >= done[squeeze][0]:
                outcome = done[squeeze][1]
            else:
                unit_core = pack_pieces(net.pieces, budget)
                try:
                    outcome = _checked(net, unit_core, hw, strategy, max_chips)
                except AtomsparkError as exc:
                    outcome = str(exc)
                most = int(np.bincount(unit_core).max()) if unit_core.size else 0
                done[squeeze] = (most, outcome)
            if isinstance(outcome, str):
                problems.append(outcome)
                continue
            if outcome.n_cores not in seen:
                seen.add(outcome.n_cores)
                placements.append(outcome)
            break
        if first_only and placements:
            break
    return placements, problems


def routes(adjacency: sp.spmatrix, placement: Placement, hw: NeuromorphicHardware) -> Routes:
    """Destination cores, chip crossings and mesh hops of each unit's spikes."""
    adj = _check_adjacency(adjacency)
    n = adj.shape[0]
    if placement.unit_core.shape != (n,):
        raise AtomsparkError(
            f"placement: covers {placement.unit_core.shape[0]} units, graph has {n}"
        )
    core = placement.unit_core
    coo = adj.tocoo()
    per_core = sp.csr_matrix(
        (np.ones(coo.nnz), (coo.row, core[coo.col])), shape=(n, placement.n_cores)
    )
    per_core.sum_duplicates()
    dest = per_core.tocoo()
    src_core, dst_core = core[dest.row], dest.col
    remote = src_core != dst_core
    cross_chip = (src_core // placement.cores_per_chip) != (dst_core // placement.cores_per_chip)
    sx, sy = tile_xy(src_core, hw)
    dx, dy = tile_xy(dst_core, hw)

    def per_unit(values: np.ndarray) -> np.ndarray:
        return np.bincount(dest.row, weights=values.astype(float), minlength=n)

    return Routes(
        targets_per_core=per_core,
        dest_cores=per_unit(np.ones(dest.nnz)),
        remote_cores=per_unit(remote),
        remote_chip_cores=per_unit(cross_chip),
        hops_east_west=per_unit(np.abs(sx - dx)),
        hops_north_south=per_unit(np.abs(sy - dy)),
    )


def traffic(
    adjacency: sp.spmatrix,
    placement: Placement,
    hw: NeuromorphicHardware,
    unit_events: np.ndarray | None = None,
) -> Traffic:
    """Spikes crossing cores and chips and router hops, weighted by each unit's events."""
    r = routes(adjacency, placement, hw)
    n = placement.unit_core.shape[0]
    e = _per_unit("unit_events", unit_events, n, np.ones(n))
    return Traffic(
        messages=float(e @ r.dest_cores),
        cross_core=float(e @ r.remote_cores),
        cross_chip=float(e @ r.remote_chip_cores),
        router_hops=float(e @ (r.hops_east_west + r.hops_north_south)),
    )


# --- checks -------------------------------------------------------------------------------


def _check_adjacency(adjacency) -> sp.csr_matrix:
    if not sp.issparse(adjacency):
        raise AtomsparkError("adjacency: expected a scipy sparse (CSR) matrix")
    adj = sp.csr_matrix(adjacency)
    if adj.shape[0] != adj.shape[1]:
        raise AtomsparkError(f"adjacency: must be square (n x n), got {adj.shape}")
    adj.eliminate_zeros()
    return adj


def _per_unit(name: str, value, n: int, default: np.ndarray) -> np.ndarray:
    if value is None:
        return np.asarray(default, dtype=float)
    arr = as_finite_array(name, value, ndim=1)
    if arr.shape != (n,):
        raise AtomsparkError(f"{name}: expected shape ({n},), got {arr.shape}")
    if np.any(arr < 0):
        raise AtomsparkError(f"{name}: must be >= 0")
    return arr


def distinct_sources(adj: sp.spmatrix, group_of: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group (of target units): how many distinct source units reach it (input axons)."""
    n = adj.shape[0]
    member = sp.csr_matrix((np.ones(n), (group_of, np.arange(n))), shape=(n_groups, n))
    reach = (member @ sp.csr_matrix(adj).T).tocsr()
    reach.eliminate_zeros()
    return np.diff(reach.indptr)


def _check_blocks_fit(
    adj: sp.csr_matrix, synapses: np.ndarray, block_of: np.ndarray, hw: NeuromorphicHardware
) -> None:
    """Every block (a unit, or units that must share a core) must fit an empty core."""
    n_blocks = int(block_of.max()) + 1 if block_of.size else 0
    problem = block_problem(
        distinct_sources(adj, block_of, n_blocks),
        np.bincount(block_of, weights=synapses, minlength=n_blocks),
        np.bincount(block_of, minlength=n_blocks),
        "unit" if n_blocks == adj.shape[0] else "block",
        hw,
    )
    if problem:
        raise AtomsparkError(problem)


def block_problem(
    fan_in: np.ndarray, synapses: np.ndarray, size: np.ndarray, what: str, hw: NeuromorphicHardware
) -> str | None:
    """Why some block does not fit an empty core (the first of input axons, synapses,
    compartments), given each block's distinct sources, synapses and compartments; None: all
    fit."""
    lim = hw.limits
    if fan_in.size and fan_in.max() > lim.max_fan_in_axons_per_core:
        b = int(fan_in.argmax())
        return (
            f"{what} {b} fan-in {int(fan_in[b])} exceeds {lim.max_fan_in_axons_per_core} "
            f"(input axons per core on {hw.name}) by {int(fan_in[b]) - lim.max_fan_in_axons_per_core}"
        )
    if synapses.size and synapses.max() > lim.synapses_per_core:
        b = int(synapses.argmax())
        return (
            f"{what} {b} needs {int(synapses[b])} synapses, a core holds {lim.synapses_per_core} "
            f"({lim.synaptic_memory_bytes_per_core} B / {lim.bytes_per_synapse} B per synapse)"
        )
    if size.size and size.max() > lim.units_per_core:
        b = int(size.argmax())
        return f"{what} {b} has {int(size[b])} compartments, a core holds {lim.units_per_core}"
    return None


# --- packing ------------------------------------------------------------------------------


def _kl_groups(adj, events, synapses, hw, seed: int) -> list[np.ndarray]:
    """Recursive Kernighan-Lin bisection of the traffic graph down to core-sized parts.

    Edge weight between i and j = spikes they exchange (events_i [i->j] + events_j [j->i]), so
    cutting heavy edges is what the bisection avoids. Parts are listed in recursion order, so
    neighbouring parts land on neighbouring cores. A complete graph of equal weights (a dense
    VN sending evenly) has nothing to cut: every balanced bisection cuts the same weight, so
    Kernighan-Lin keeps its random first split, which `shuffled_halves` draws directly (the same
    split, without building the graph or sweeping it; tested against networkx).
    """
    lim = hw.limits
    n = adj.shape[0]
    mean_syn = float(synapses.mean()) if n else 0.0
    by_memory = lim.synapses_per_core / mean_syn if mean_syn > 0 else lim.units_per_core
    target = max(1, int(min(lim.units_per_core, by_memory)))
    n_parts = max(1, -(-n // target))
    target = max(1, -(-n // n_parts))  # balance the parts
    coo = adj.tocoo()
    w = events[coo.row]
    sym = sp.coo_matrix(
        (np.concatenate([w, w]), (np.r_[coo.row, coo.col], np.r_[coo.col, coo.row])), shape=(n, n)
    ).tocsr()
    sym.setdiag(0)
    sym.eliminate_zeros()
    uniform = SHUFFLE_MATCHES_NETWORKX and n_parts > 1 and complete_and_uniform(sym)
    graph = None if uniform or n_parts == 1 else _weighted_graph(sym)
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []

    def split(nodes: list[int]) -> None:
        if len(nodes) <= target:
            out.append(np.array(sorted(nodes), dtype=np.int64))
            return
        draw = int(rng.integers(2**31))
        if uniform:
            a, b = shuffled_halves(nodes, n, draw)
        else:
            sub = graph.subgraph(nodes)
            a, b = nx.algorithms.community.kernighan_lin_bisection(sub, weight="weight", seed=draw)
        split(sorted(a))
        split(sorted(b))

    split(list(range(n)))
    return out


def _weighted_graph(sym: sp.csr_matrix) -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from(range(sym.shape[0]))
    s = sym.tocoo()
    keep = s.row < s.col
    graph.add_weighted_edges_from(
        zip(s.row[keep].tolist(), s.col[keep].tolist(), s.data[keep].tolist())
    )
    return graph


# shuffled_halves reproduces networkx 3's kernighan_lin_bisection (its node order); with 2.x
# the packer calls networkx itself, so placements never depend on the shortcut.
SHUFFLE_MATCHES_NETWORKX = int(nx.__version__.split(".")[0]) >= 3


def complete_and_uniform(sym: sp.csr_matrix) -> bool:
    """Is every pair of distinct units joined, all by the same weight?"""
    n = sym.shape[0]
    return sym.nnz == n * (n - 1) and bool(sym.nnz == 0 or sym.data.min() == sym.data.max())


def shuffled_halves(nodes: list[int], n_total: int, seed: int) -> tuple[set, set]:
    """networkx's kernighan_lin_bisection of the subgraph on `nodes` (of a graph on range(n_total))
    when it is complete with equal weights: its first split, which no sweep improves. That split
    shuffles the subgraph's nodes in networkx's order (a subgraph under half the graph lists them
    as the set built from `nodes` iterates) with random.Random(seed) and cuts in the middle; the
    halves come back in its order (the second half first)."""
    inside = set(v for v in nodes)  # built as networkx builds its node filter
    order = list(inside) if 2 * len(inside) < n_total else sorted(inside)
    random.Random(seed).shuffle(order)
    mid = len(order) // 2
    return set(order[mid:]), set(order[:mid])


def _morton_codes(pos: np.ndarray) -> np.ndarray:
    """Z-order (Morton) code of each row: neighbours in space get nearby codes."""
    bits = max(1, min(10, 62 // max(pos.shape[1], 1)))  # the code must fit in int64
    lo, hi = pos.min(axis=0), pos.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    q = np.minimum(((pos - lo) / span * (2**bits)).astype(np.int64), 2**bits - 1)
    d = pos.shape[1]
    code = np.zeros(pos.shape[0], dtype=np.int64)
    for bit in range(bits - 1, -1, -1):  # loop over bits, not units
        for dim in range(d):
            code = (code << 1) | ((q[:, dim] >> bit) & 1)
    return code
