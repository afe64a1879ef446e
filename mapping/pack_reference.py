"""The unit-by-unit core packer: the oracle mapping/pack_blocks.py is tested against (same
placements on every case both run) and timed against (tools/time_packers.py). Not on the
pricing path: a Python step per group and per block, and a per-core reset of a mask over all
units, make it slow for large networks."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from atomspark.mapping.core_fit import core_memory


def pack_units(
    groups: list[np.ndarray],
    adj: sp.csr_matrix,
    synapses,
    hw,
    n: int,
    block_of: np.ndarray,
    units_cap: int | None = None,
    squeeze: float = 1.0,
) -> np.ndarray:
    """unit_core of mapping/pack_blocks.py's rule, one unit (or block) at a time: fill cores in
    order, keeping each group on one core when it fits there or on a fresh one; a group too big
    for any core is split between its blocks. A core's memory holds its synapses, its
    compartments' state and its input axons' table entries (core_fit.py); output axons are
    checked after packing (their count depends on where the targets land)."""
    lim = hw.limits
    max_units = lim.units_per_core if units_cap is None else min(units_cap, lim.units_per_core)
    max_units = max(1, int(max_units * squeeze))
    memory = lim.synaptic_memory_bytes_per_core * squeeze
    max_axons = lim.max_fan_in_axons_per_core * squeeze
    bps = lim.bytes_per_synapse
    csc = adj.tocsc()
    csc.sum_duplicates()
    unit_core = np.full(n, -1, dtype=np.int64)
    state = {"core": 0, "units": 0, "synapses": 0.0, "axons": 0}
    presyn = np.zeros(n, dtype=bool)  # input axons already used on the current core

    def new_axons(units: np.ndarray) -> np.ndarray:
        if units.size == 1:  # one unit's sources are already distinct
            idx = csc.indices[csc.indptr[units[0]] : csc.indptr[units[0] + 1]]
        else:
            idx = np.unique(
                np.concatenate([csc.indices[csc.indptr[u] : csc.indptr[u + 1]] for u in units])
            )
        return idx[~presyn[idx]]

    def fits(units: np.ndarray, n_axons: int, empty: bool = False) -> bool:
        base = (0, 0.0, 0) if empty else (state["units"], state["synapses"], state["axons"])
        n_units, syn, axons = (
            base[0] + units.size,
            base[1] + float(synapses[units].sum()),
            base[2] + n_axons,
        )
        return (
            n_units <= max_units
            and syn <= lim.synapses_per_core
            and axons <= max_axons
            and core_memory(syn * bps, n_units, axons, 0) <= memory
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
        cuts = np.flatnonzero(np.diff(block_of[group])) + 1
        for one in np.split(group, cuts):  # too big for any core: split it block by block
            axons = new_axons(one)
            if not fits(one, axons.size):
                open_core()
                axons = new_axons(one)
            put(one, axons)
    return unit_core


def pack_spread_units(
    groups: list[np.ndarray],
    adjacency: sp.spmatrix,
    synapses: np.ndarray,
    hw,
    strategy: str,
    blocks: np.ndarray | None = None,
    max_chips: int | None = None,
    first_only: bool = False,
) -> tuple[list, list[str]]:
    """placement.pack_spread as it was before mapping/pack_blocks.py: every cap and squeeze
    checked and packed unit by unit from scratch (the reference its placements are held to)."""
    from atomspark.mapping.core_fit import core_use, over_limit
    from atomspark.mapping.placement import (
        SQUEEZES,
        Placement,
        _check_adjacency,
        _check_blocks_fit,
        spread_caps,
    )
    from atomspark.sim.core import AtomsparkError, require_int

    def pack_one(cap: int, squeeze: float) -> Placement:
        adj = _check_adjacency(adjacency)
        n = adj.shape[0]
        syn = np.asarray(synapses, dtype=float)
        block_of = np.arange(n) if blocks is None else np.asarray(blocks, dtype=np.int64)
        chips = require_int(
            "max_chips", hw.limits.chips_per_board if max_chips is None else max_chips, 1
        )
        _check_blocks_fit(adj, syn, block_of, hw)
        unit_core = pack_units(groups, adj, syn, hw, n, block_of, cap, squeeze)
        n_cores = int(unit_core.max()) + 1 if n else 0
        cpc = hw.limits.cores_per_chip
        n_chips = -(-n_cores // cpc)
        if n_chips > chips:
            raise AtomsparkError(f"network does not fit: needs {n_cores} cores")
        problems = over_limit(core_use(unit_core, adj, syn, hw), hw)
        if problems:
            raise AtomsparkError(f"network does not fit: {problems[0]}")
        return Placement(unit_core, n_cores, max(n_chips, 1), cpc, strategy)

    n = adjacency.shape[0]
    block_of = np.arange(n) if blocks is None else np.asarray(blocks, dtype=np.int64)
    block_size = int(np.bincount(block_of).max()) if n else 1
    placements, problems, seen = [], [], set()
    for cap in spread_caps(n, block_size, hw):
        for squeeze in SQUEEZES:
            try:
                placement = pack_one(cap, squeeze)
            except AtomsparkError as exc:
                problems.append(str(exc))
                continue
            if placement.n_cores not in seen:
                seen.add(placement.n_cores)
                placements.append(placement)
            break
        if first_only and placements:
            break
    return placements, problems
