"""Placement of units on neuromorphic cores and chips, and the traffic a placement causes.

Units are indexed globally (populations concatenated). Three strategies share one core packer:
``sequential`` (index order), ``partition`` (recursive Kernighan-Lin bisection of the traffic
graph, networkx 2.8 and 3.x) and ``locality`` (Z-order of unit positions). The packer opens a new
core when the next group would break a per-core limit (units, synaptic memory, input axons).
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np
import scipy.sparse as sp
from atomspark.mapping.hardware import NeuromorphicHardware
from atomspark.sim.validation import AtomsparkError, as_finite_array, require_int

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
    """Assign every unit to one core within `hw`'s limits.

    adjacency: (n, n) CSR, entry (i, j) != 0 when unit i sends to unit j. unit_events: traffic
    weight per unit (default 1). synapse_counts: synapses stored with each unit (default its
    in-degree). positions: (n, d) coordinates, needed by "locality". max_chips defaults to
    ``hw.limits.chips_per_board``. Raises AtomsparkError naming the broken limit and by how much.
    """
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
    max_chips = require_int(
        "max_chips", hw.limits.chips_per_board if max_chips is None else max_chips, 1
    )
    _check_units_fit(in_degree, synapses, hw)
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
    unit_core = _pack(groups, adj, synapses, hw, n)
    n_cores = int(unit_core.max()) + 1 if n else 0
    cpc = hw.limits.cores_per_chip
    n_chips = -(-n_cores // cpc)
    if n_chips > max_chips:
        raise AtomsparkError(
            f"network does not fit: needs {n_cores} cores, hardware has {cpc} cores/chip x "
            f"{max_chips} chip(s) = {cpc * max_chips} cores ({strategy} placement)"
        )
    placement = Placement(unit_core, n_cores, max(n_chips, 1), cpc, strategy)
    _check_fan_out(adj, placement, hw)
    return placement


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


def _check_units_fit(in_degree: np.ndarray, synapses: np.ndarray, hw: NeuromorphicHardware) -> None:
    lim = hw.limits
    if in_degree.size and in_degree.max() > lim.max_fan_in_axons_per_core:
        u = int(in_degree.argmax())
        raise AtomsparkError(
            f"unit {u} fan-in {int(in_degree[u])} exceeds {lim.max_fan_in_axons_per_core} "
            f"(input axons per core on {hw.name}) by {int(in_degree[u]) - lim.max_fan_in_axons_per_core}"
        )
    if synapses.size and synapses.max() > lim.synapses_per_core:
        u = int(synapses.argmax())
        raise AtomsparkError(
            f"unit {u} needs {int(synapses[u])} synapses, a core holds {lim.synapses_per_core} "
            f"({lim.synaptic_memory_bytes_per_core} B / {lim.bytes_per_synapse} B per synapse)"
        )


def _check_fan_out(adj: sp.csr_matrix, placement: Placement, hw: NeuromorphicHardware) -> None:
    """Each (unit, destination core) pair uses one output axon of the unit's core."""
    if adj.nnz == 0:
        return
    coo = adj.tocoo()
    pairs = np.unique(coo.row * np.int64(placement.n_cores) + placement.unit_core[coo.col])
    per_core = np.bincount(
        placement.unit_core[pairs // placement.n_cores], minlength=placement.n_cores
    )
    limit = hw.limits.max_fan_out_axons_per_core
    if per_core.max() > limit:
        c = int(per_core.argmax())
        raise AtomsparkError(
            f"core {c} needs {int(per_core[c])} output axons, exceeds fan-out limit {limit} "
            f"by {int(per_core[c]) - limit}"
        )


# --- packing ------------------------------------------------------------------------------


def _pack(groups: list[np.ndarray], adj: sp.csr_matrix, synapses, hw, n: int) -> np.ndarray:
    """Fill cores in order, keeping each group on one core when it fits there or on a fresh one."""
    lim = hw.limits
    csc = adj.tocsc()
    unit_core = np.full(n, -1, dtype=np.int64)
    state = {"core": 0, "units": 0, "synapses": 0.0, "axons": 0}
    presyn = np.zeros(n, dtype=bool)  # input axons already used on the current core

    def new_axons(units: np.ndarray) -> np.ndarray:
        idx = np.unique(
            np.concatenate([csc.indices[csc.indptr[u] : csc.indptr[u + 1]] for u in units])
        )
        return idx[~presyn[idx]]

    def fits(units: np.ndarray, n_axons: int, empty: bool = False) -> bool:
        base = (0, 0.0, 0) if empty else (state["units"], state["synapses"], state["axons"])
        return (
            base[0] + units.size <= lim.units_per_core
            and base[1] + float(synapses[units].sum()) <= lim.synapses_per_core
            and base[2] + n_axons <= lim.max_fan_in_axons_per_core
        )

    def open_core() -> None:
        state.update(core=state["core"] + 1, units=0, synapses=0.0, axons=0)
        presyn[:] = False

    def put(units: np.ndarray, axons: np.ndarray) -> None:
        unit_core[units] = state["core"]
        state["units"] += units.size
        state["synapses"] += float(synapses[units].sum())
        state["axons"] += axons.size
        presyn[axons] = True

    for group in groups:
        group = np.asarray(group, dtype=np.int64)
        if group.size == 0:
            continue
        axons = new_axons(group)
        if fits(group, axons.size):
            put(group, axons)
            continue
        all_axons = np.unique(
            np.concatenate([csc.indices[csc.indptr[u] : csc.indptr[u + 1]] for u in group])
        )
        if fits(group, all_axons.size, empty=True):
            open_core()
            put(group, all_axons)
            continue
        for u in group:  # too big for any core: split it unit by unit
            one = np.array([u], dtype=np.int64)
            axons = new_axons(one)
            if not fits(one, axons.size):
                open_core()
                axons = new_axons(one)
            put(one, axons)
    return unit_core


def _kl_groups(adj, events, synapses, hw, seed: int) -> list[np.ndarray]:
    """Recursive Kernighan-Lin bisection of the traffic graph down to core-sized parts.

    Edge weight between i and j = spikes they exchange (events_i [i->j] + events_j [j->i]), so
    cutting heavy edges is what the bisection avoids. Parts are listed in recursion order, so
    neighbouring parts land on neighbouring cores.
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
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    s = sym.tocoo()
    keep = s.row < s.col
    graph.add_weighted_edges_from(
        zip(s.row[keep].tolist(), s.col[keep].tolist(), s.data[keep].tolist())
    )
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []

    def split(nodes: list[int]) -> None:
        if len(nodes) <= target:
            out.append(np.array(sorted(nodes), dtype=np.int64))
            return
        sub = graph.subgraph(nodes)
        a, b = nx.algorithms.community.kernighan_lin_bisection(
            sub, weight="weight", seed=int(rng.integers(2**31))
        )
        split(sorted(a))
        split(sorted(b))

    split(list(range(n)))
    return out


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
